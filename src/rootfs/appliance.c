/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The test appliance: the entry points (resolve, ensure), the packages it
 * holds, the guest agent it carries. See appliance.h; the builder's files
 * are listed in appliance_int.h.
 */
#include <jansson.h>
#include <signal.h>
#include <string.h>

#include "core/paths.h"
#include "rootfs/appliance.h"
#include "rootfs/appliance_int.h"

const char *const appliance_packages[] = {
	/* building fstests */
	"autoconf", "automake", "gcc", "make", "libtool", "libtool-bin", "pkg-config",
	"libacl1-dev", "libaio-dev", "libattr1-dev", "libbtrfsutil-dev", "libcap-dev",
	"libgdbm-dev", "libgdbm-compat-dev", "liburing-dev", "uuid-dev", "xfslibs-dev",
	/* filesystem tools */
	"xfsprogs", "xfsdump", "e2fsprogs", "btrfs-progs", "f2fs-tools", "exfatprogs", "udftools",
	"dosfstools", "dump", "quota", "attr", "acl", "duperemove", "thin-provisioning-tools",
	/* what check and the tests run */
	"bc", "bsdextrautils", "dbench", "dmsetup", "fio", "gawk", "indent", "keyutils", "kmod",
	"libcap2-bin", "lvm2", "lz4", "openssl", "parted", "perl", "procps", "psmisc", "python3",
	"sqlite3", "udev", "util-linux", "mount", "uuid-runtime", "xxd", "xz-utils", "fsverity",
	/* nfs/loopback: the guest serves its own disks (nfsd's tools, mount.nfs, and
	 * nfs4_getfacl for the nfs ACL tests) */
	"nfs-kernel-server", "nfs-common", "rpcbind", "nfs4-acl-tools",
	/* ip: fswb-init brings the loopback interface up, which NFS mounts over */
	"iproute2",
	/* on a Compute Engine instance fswb-init gets an address by DHCP and
	 * talks to the metadata server and the bucket */
	"isc-dhcp-client", "curl", "ca-certificates", NULL
};

/* ---- the agent ---- */

char *
rootfs_agent_dir(void)
{
	char *datadir = fswb_datadir();
	const char *subs[] = { "agent", "src/agent" };
	char *found = NULL;

	for (size_t i = 0; !found && i < ARRAY_SIZE(subs); i++) {
		char *dir = path_join(datadir, subs[i]);
		char *a = path_join(dir, "fswb-agent");
		char *b = path_join(dir, "fswb-init");

		if (path_exists(a) && path_exists(b))
			found = dir;
		else
			free(dir);
		free(a);
		free(b);
	}
	free(datadir);
	return found;
}

static void
fill_resolved(const struct inputs *in, const char *cache, struct appliance *a)
{
	memset(a, 0, sizeof(*a));
	a->key = xstrdup(in->key);
	a->id = xstrndup(in->key, 12);
	a->dir = path_join(cache, in->key);
	a->image = path_join(a->dir, "root.img");
	a->release = xstrdup(in->release);
	a->mirror = xstrdup(in->mirror);
	a->fstests_src = xstrdup(in->src);
	a->fstests_rev = xstrdup(in->rev);
	a->tool = xstrdup(in->tools.tool == TOOL_DEBOOTSTRAP ? "debootstrap" : "mmdebstrap");
	a->arch = xstrdup(in->arch);
	a->packages = (unsigned)in->packages.n;
}

enum status
appliance_resolve(struct loop *loop, struct event_bus *bus, const struct appliance_opts *opts,
		  struct appliance *out, bool *cached)
{
	struct runner r = { .loop = loop, .bus = bus, .cancel = opts->cancel, .logfd = -1 };
	struct inputs in;
	char *cache = NULL;
	enum status rc;

	memset(out, 0, sizeof(*out));
	strvec_init(&r.tail);
	*cached = false;
	rc = ap_resolve_inputs(&r, opts, &in);
	if (rc == OK)
		rc = ap_cache_dir(&cache);
	if (rc == OK) {
		fill_resolved(&in, cache, out);
		*cached = ap_complete(out->dir);
	}
	ap_inputs_release(&in);
	ap_runner_release(&r);
	free(cache);
	return rc;
}

static void
stage_end(struct event_bus *bus, enum status rc, const char *detail)
{
	struct event ev = { .type = EV_STAGE_END };

	if (!bus)
		return;
	ev.u.stage.stage = STAGE;
	ev.u.stage.detail = detail;
	ev.u.stage.fraction = rc == OK ? 1.0 : -1;
	ev.u.stage.code = rc;
	ev.u.stage.message = rc == OK ? NULL : error_msg();
	event_emit(bus, &ev);
}

enum status
appliance_ensure(struct loop *loop, struct event_bus *bus, const struct appliance_opts *opts,
		 struct appliance *out)
{
	struct runner r = { .loop = loop, .bus = bus, .cancel = opts->cancel, .logfd = -1 };
	struct inputs in;
	char *cache = NULL, *dir = NULL;
	int lockfd = -1;
	enum status rc;

	memset(out, 0, sizeof(*out));
	strvec_init(&r.tail);
	r.fraction = -1;
	if (bus)
		emit_stage(bus, EV_STAGE_BEGIN, STAGE, "appliance", -1);
	rc = ap_resolve_inputs(&r, opts, &in);
	if (rc == OK)
		rc = ap_cache_dir(&cache);
	if (rc != OK)
		goto out;
	dir = path_join(cache, in.key);
	if (!opts->force && ap_complete(dir) && ap_meta_read(dir, out) == OK) {
		out->reused = true;
		goto reused;
	}
	error_clear();
	rc = ap_lock_key(&r, cache, in.key, &lockfd, true);
	if (rc != OK)
		goto out;
	/* another fswb may have built it while we waited */
	if (!opts->force && ap_complete(dir) && ap_meta_read(dir, out) == OK) {
		out->reused = true;
		goto reused;
	}
	error_clear();
	ap_remove_stale(&r, &in.tools, cache, in.key);
	if (path_exists(dir) && !ap_complete(dir))
		remove_tree(dir);
	rc = ap_build(&r, &in, cache, out);
	goto out;
reused : {
	char detail[64];

	snprintf(detail, sizeof(detail), "reusing %s", out->id);
	ap_progress(&r, detail, 1.0);
}
out:
	if (lockfd >= 0)
		close(lockfd);
	stage_end(bus, rc, rc == OK && out->reused ? "reused" : "appliance");
	ap_inputs_release(&in);
	ap_runner_release(&r);
	free(cache);
	free(dir);
	return rc;
}
