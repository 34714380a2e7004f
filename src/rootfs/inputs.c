/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The appliance's inputs and their cache key.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>
#include <sys/utsname.h>

#include "core/paths.h"
#include "core/sha.h"
#include "rootfs/appliance_int.h"

static void
sha_of(const char *text, char out[65])
{
	struct sha s;

	sha_init(&s);
	sha_adds(&s, text);
	sha_hex(&s, out);
}

/* ---- git ---- */

bool
ap_is_hex(const char *s, size_t min)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!strchr("0123456789abcdef", s[n]))
			return false;
	return n >= min;
}

/* rev-parse in the clone; NULL when it does not have it. */
static char *
git_rev(struct runner *r, const struct inputs *in, const char *what)
{
	char *spec = xasprintf("%s^{commit}", what);
	struct strbuf out = STRBUF_INIT;
	char *rev = NULL;

	if (ap_run_capture(r,
			   (const char *const[]){ in->tools.git, "--git-dir", in->clone,
						  "rev-parse", "--verify", "--quiet",
						  "--end-of-options", spec, NULL },
			   &out) == OK) {
		char *t = str_trim(out.buf);

		if (ap_is_hex(t, 40))
			rev = xstrdup(t);
	}
	error_clear();
	free(spec);
	strbuf_release(&out);
	return rev;
}

static enum status
resolve_url(struct runner *r, struct inputs *in)
{
	char *cache = NULL, *tmp = NULL;
	char hash[65];
	struct strbuf out = STRBUF_INIT;
	char *remote = NULL;
	const char *ref = in->ref ? in->ref : "HEAD";
	enum status rc;

	if (!in->tools.git)
		return error(ERR_NOTFOUND,
			     "fstests source '%s' is a git URL, but git is missing: "
			     "install git, or give a directory",
			     in->src);
	sha_of(in->url, hash);
	hash[16] = '\0';
	rc = fswb_dir_make(DIR_CACHE, "fstests-git", &cache);
	if (rc != OK)
		return rc;
	in->clone = xasprintf("%s/%s.git", cache, hash);
	if (!path_is_dir(in->clone)) {
		ap_progress(r, "fetching fstests", 0);
		tmp = xasprintf("%s.tmp.%ld", in->clone, (long)getpid());
		remove_tree(tmp);
		rc = ap_run_capture(r,
				    (const char *const[]){ in->tools.git, "clone", "--bare",
							   "--quiet", "--", in->url, tmp, NULL },
				    &out);
		if (rc == OK && rename(tmp, in->clone) < 0 && !path_is_dir(in->clone))
			rc = error(ERR_IO, "cannot rename '%s': %s", tmp, strerror(errno));
		remove_tree(tmp);
		if (rc != OK) {
			rc = error_prefix(rc,
					  "cannot clone fstests from '%s' (offline? give a local "
					  "copy with --fstests-src DIR)",
					  in->url);
			goto out;
		}
	}
	if (ap_is_hex(ref, 40))
		in->rev = git_rev(r, in, ref);
	if (!in->rev) {
		/* what the remote's REF is now */
		rc = ap_run_capture(r,
				    (const char *const[]){ in->tools.git, "ls-remote", "--",
							   in->url, ref, NULL },
				    &out);
		if (rc == OK) {
			char *tab = strchr(out.buf, '\t');

			if (tab && tab - out.buf == 40) {
				*tab = '\0';
				remote = xstrdup(out.buf);
			}
		}
		if (rc != OK || !remote) {
			in->rev = git_rev(r, in, ref);
			if (!in->rev) {
				rc = error(
					ERR_NOTFOUND,
					"cannot resolve '%s' of fstests at '%s' (is the URL right "
					"and reachable?)",
					ref, in->url);
				goto out;
			}
			if (r->bus)
				emit_warning(
					r->bus,
					"cannot reach '%s'; using fstests %.12s fetched before",
					in->url, in->rev);
			rc = OK;
			goto out;
		}
		in->rev = git_rev(r, in, remote);
		if (!in->rev) {
			ap_progress(r, "fetching fstests", 0);
			rc = ap_run_capture(
				r,
				(const char *const[]){ in->tools.git, "--git-dir", in->clone,
						       "fetch", "--quiet", "--force", "--", in->url,
						       "+refs/heads/*:refs/heads/*",
						       "+refs/tags/*:refs/tags/*", NULL },
				&out);
			in->rev = git_rev(r, in, remote);
			if (!in->rev) {
				rc = ap_run_capture(r,
						    (const char *const[]){ in->tools.git,
									   "--git-dir", in->clone,
									   "fetch", "--quiet", "--",
									   in->url, remote, NULL },
						    &out);
				in->rev = git_rev(r, in, remote);
			}
			if (!in->rev) {
				rc = error(ERR_CHILD, "cannot fetch fstests %s from '%s'", remote,
					   in->url);
				goto out;
			}
		}
	}
	rc = OK;
	if (!in->rev)
		rc = error(ERR_NOTFOUND, "fstests at '%s' has no '%s'", in->url, ref);
out:
	free(cache);
	free(tmp);
	free(remote);
	strbuf_release(&out);
	return rc;
}

/* ---- resolving ---- */

void
ap_inputs_release(struct inputs *in)
{
	free(in->release);
	free(in->mirror);
	free(in->arch);
	free(in->src);
	free(in->url);
	free(in->ref);
	free(in->rev);
	free(in->clone);
	free(in->agent_dir);
	strvec_clear(&in->files);
	strvec_clear(&in->packages);
	ap_tools_release(&in->tools);
	memset(in, 0, sizeof(*in));
}

enum status
ap_resolve_inputs(struct runner *r, const struct appliance_opts *o, struct inputs *in)
{
	char *cfg_release = NULL, *cfg_mirror = NULL;
	const char *src =
		o->fstests_src && *o->fstests_src ? o->fstests_src : APPLIANCE_FSTESTS_URL;
	struct sha sha;
	enum status rc;

	memset(in, 0, sizeof(*in));
	strvec_init(&in->files);
	strvec_init(&in->packages);
	rc = ap_tools_probe(&in->tools, NULL);
	if (rc != OK)
		return rc;
	{
		const char *here = ap_debian_arch(NULL), *want = ap_debian_arch(o->arch);

		if (!here || !want)
			return error(ERR_UNSUPPORTED,
				     "fswb builds appliances for x86_64 and arm64, "
				     "not %s",
				     o->arch ? o->arch : "this host's architecture");
		in->arch = xstrdup(want);
		in->foreign = strcmp(here, want) != 0;
		if (in->foreign && in->tools.tool == TOOL_DEBOOTSTRAP)
			return error(ERR_UNSUPPORTED,
				     "an appliance for %s on this %s host needs mmdebstrap "
				     "(debootstrap builds for this host only): install mmdebstrap",
				     want, here);
		if (in->foreign && (rc = ap_binfmt_check(want)) != OK)
			return rc;
	}
	rc = appliance_config_read(NULL, &cfg_release, &cfg_mirror);
	if (rc != OK)
		goto out;
	if (o->release && *o->release)
		in->release = xstrdup(o->release);
	else if (cfg_release)
		in->release = xstrdup(cfg_release);
	else if ((rc = appliance_host_release(NULL, &in->release)) != OK)
		goto out;
	for (const char *p = in->release; *p; p++)
		if (!(p[0] >= 'a' && p[0] <= 'z') && !(p[0] >= '0' && p[0] <= '9') && *p != '-') {
			rc = error(ERR_INVALID,
				   "release '%s' is not a release name like 'bookworm'",
				   in->release);
			goto out;
		}
	if (o->mirror && *o->mirror)
		in->mirror = xstrdup(o->mirror);
	else if (cfg_mirror)
		in->mirror = xstrdup(cfg_mirror);
	else if ((rc = appliance_host_mirror(NULL, in->release, &in->mirror)) != OK)
		goto out;
	if (!ap_mirror_scheme_ok(in->mirror)) {
		rc = error(ERR_INVALID,
			   "mirror '%s' is not an http://, https://, ftp:// or file:/ URL",
			   in->mirror);
		goto out;
	}

	for (const char *const *p = o->packages ? o->packages : appliance_packages; *p; p++) {
		if (!**p || strpbrk(*p, ", \t\n'\"")) {
			rc = error(ERR_INVALID, "package name '%s' is not valid", *p);
			goto out;
		}
		strvec_push(&in->packages, *p);
	}
	in->jobs = o->jobs ? o->jobs : (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	if (!in->jobs)
		in->jobs = 1;

	in->is_url = appliance_src_is_url(src);
	if (in->is_url) {
		const char *hash = strrchr(src, '#');

		in->src = xstrdup(src);
		in->url = hash ? xstrndup(src, (size_t)(hash - src)) : xstrdup(src);
		in->ref = hash && hash[1] ? xstrdup(hash + 1) : NULL;
		rc = resolve_url(r, in);
		if (rc != OK)
			goto out;
		in->build_fstests = true; /* checked again once it is unpacked */
	} else {
		char real[PATH_MAX];

		if (!realpath(src, real)) {
			rc = error(ERR_NOTFOUND,
				   "fstests source '%s': %s; give a directory or a git URL", src,
				   strerror(errno));
			goto out;
		}
		in->src = xstrdup(real);
		rc = appliance_fstests_files(r->loop, in->src, &in->files, in->src_digest);
		if (rc != OK)
			goto out;
		if (!strvec_contains(&in->files, "check")) {
			rc = error(ERR_INVALID,
				   "'%s' does not look like fstests: it has no 'check' script",
				   in->src);
			goto out;
		}
		in->rev = xasprintf("dir:%.16s", in->src_digest);
		in->build_fstests = appliance_has_default_target(in->src);
	}

	in->agent_dir = rootfs_agent_dir();
	if (!in->agent_dir) {
		char *datadir = fswb_datadir();

		rc = error(
			ERR_NOTFOUND,
			"the guest agent (fswb-agent, fswb-init) is neither in '%s/agent' nor in "
			"'%s/src/agent': reinstall fswb or set FSWB_DATADIR",
			datadir, datadir);
		free(datadir);
		goto out;
	}
	sha_init(&sha);
	for (const char *const *f = (const char *const[]){ "fswb-agent", "fswb-init", NULL }; *f;
	     f++) {
		char *p = path_join(in->agent_dir, *f), *text = NULL;
		size_t len = 0;

		rc = read_file(p, MAX_AGENT, &text, &len);
		free(p);
		if (rc != OK) {
			char dummy[65];

			sha_hex(&sha, dummy);
			goto out;
		}
		sha_adds(&sha, *f);
		sha_add(&sha, text, len);
		free(text);
	}
	sha_hex(&sha, in->agent_digest);

	sha_init(&sha);
	sha_addf(&sha, "fswb-appliance %d", APPLIANCE_FORMAT);
	sha_addf(&sha, "tool %s",
		 in->tools.tool == TOOL_DEBOOTSTRAP ? "debootstrap" : "mmdebstrap");
	sha_addf(&sha, "release %s", in->release);
	if (in->foreign) /* this host's appliances keep the keys they had */
		sha_addf(&sha, "arch %s", in->arch);
	sha_addf(&sha, "mirror %s", in->mirror);
	sha_addf(&sha, "packages %zu", in->packages.n);
	for (size_t i = 0; i < in->packages.n; i++)
		sha_adds(&sha, in->packages.v[i]);
	sha_addf(&sha, "fstests %s %s", in->is_url ? in->url : "dir", in->rev);
	if (!in->is_url)
		sha_adds(&sha, in->src_digest);
	sha_addf(&sha, "agent %s", in->agent_digest);
	sha_hex(&sha, in->key);
out:
	free(cfg_release);
	free(cfg_mirror);
	return rc;
}

const char *
ap_debian_arch(const char *arch)
{
	struct utsname u;

	if (!arch) {
		if (uname(&u))
			return NULL;
		arch = !strcmp(u.machine, "aarch64") ? "arm64" : u.machine;
	}
	if (!strcmp(arch, "x86_64"))
		return "amd64";
	if (!strcmp(arch, "arm64"))
		return "arm64";
	return NULL;
}

enum status
ap_binfmt_check(const char *debarch)
{
	const char *qemu = !strcmp(debarch, "arm64") ? "aarch64" : "x86_64";

	if (binfmt_runs(qemu))
		return OK;
	return error(
		ERR_UNSUPPORTED,
		"an appliance for %s runs %s programs while it is built, through "
		"qemu-user-static, and binfmt_misc has no qemu-%s here: apt-get install "
		"qemu-user-static binfmt-support arch-test, then update-binfmts --enable qemu-%s "
		"(without systemd, as root: mount -t binfmt_misc binfmt_misc "
		"/proc/sys/fs/binfmt_misc first)",
		debarch, debarch, qemu, qemu);
}
