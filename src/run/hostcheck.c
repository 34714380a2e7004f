/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host checks for `fswb doctor` and the welcome screen: see hostcheck.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "run/hostcheck.h"
#include "backends/backend.h"
#include "core/paths.h"
#include "core/spawn.h"
#include "kbuild/kernel.h"
#include "rootfs/appliance.h"

#define OS_RELEASE_MAX (64u << 10)
#define OUTPUT_MAX     (64u << 10)
#define PROGRAM_MS     5000
#define SBIN_DEFAULT   "/usr/sbin:/sbin"

const char *
hc_group_title(const char *group)
{
	const struct backend_ops *ops;

	if (!strcmp(group, HC_HOST))
		return "the kernel, disk and tools on this machine";
	ops = backend_find(group);
	return ops ? ops->description : "?";
}

const char *
hc_state_str(enum hc_state s)
{
	switch (s) {
	case HC_OK:
		return "ok";
	case HC_WARN:
		return "WARN";
	case HC_MISSING:
		return "MISSING";
	}
	return "?";
}

/* ---- distributions ---- */

void
hc_os_release(struct hc_os *os)
{
	free(os->id);
	free(os->pretty);
	memset(os, 0, sizeof(*os));
}

static enum hc_family
family_of(const char *word)
{
	static const char *const debian[] = { "debian", "ubuntu", "linuxmint", "pop", "raspbian" };
	static const char *const fedora[] = { "fedora", "rhel", "centos", "rocky", "almalinux" };

	for (size_t i = 0; i < ARRAY_SIZE(debian); i++)
		if (!strcmp(word, debian[i]))
			return HC_FAMILY_DEBIAN;
	for (size_t i = 0; i < ARRAY_SIZE(fedora); i++)
		if (!strcmp(word, fedora[i]))
			return HC_FAMILY_FEDORA;
	return HC_FAMILY_UNKNOWN;
}

enum status
hostcheck_os(const char *os_release, struct hc_os *out)
{
	const char *path = os_release ? os_release : "/etc/os-release";
	char *text = NULL, *like;
	enum status rc;

	memset(out, 0, sizeof(*out));
	if (!path_exists(path))
		return OK;
	rc = read_file(path, OS_RELEASE_MAX, &text, NULL);
	if (rc != OK)
		return error_prefix(rc, "cannot read '%s'", path);
	out->id = os_release_value(text, "ID");
	out->pretty = os_release_value(text, "PRETTY_NAME");
	if (out->id)
		out->family = family_of(out->id);
	like = os_release_value(text, "ID_LIKE");
	if (out->family == HC_FAMILY_UNKNOWN && like) {
		struct strvec words = STRVEC_INIT;

		strvec_split(&words, like, " \t");
		for (size_t i = 0; out->family == HC_FAMILY_UNKNOWN && i < words.n; i++)
			out->family = family_of(words.v[i]);
		strvec_clear(&words);
	}
	free(like);
	free(text);
	return OK;
}

struct package {
	const char *prog, *deb, *rpm;
};

static const struct package packages[] = {
	{ "qemu-system-x86_64", "qemu-system-x86", "qemu-system-x86" },
	{ "qemu-system-aarch64", "qemu-system-arm", "qemu-system-aarch64" },
	{ "qemu-img", "qemu-utils", "qemu-img" },
	{ "mkfs.ext4", "e2fsprogs", "e2fsprogs" },
	{ "mkfs.xfs", "xfsprogs", "xfsprogs" },
	{ "mkfs.btrfs", "btrfs-progs", "btrfs-progs" },
	{ "mkfs.f2fs", "f2fs-tools", "f2fs-tools" },
	{ "mkfs.exfat", "exfatprogs", "exfatprogs" },
	{ "mkfs.vfat", "dosfstools", "dosfstools" },
	{ "mkfs.udf", "udftools", "udftools" },
	{ "mmdebstrap", "mmdebstrap", "mmdebstrap" },
	{ "debootstrap", "debootstrap", "debootstrap" },
	{ "newuidmap", "uidmap", "shadow-utils" },
	{ "libvirtd", "libvirt-daemon-system", "libvirt" },
	{ "ssh", "openssh-client", "openssh-clients" },
	{ "ssh-keygen", "openssh-client", "openssh-clients" },
	{ "adb", "adb", "android-tools" },
	{ "gcloud", "google-cloud-cli", "google-cloud-cli" },
	{ "kernel", "linux-image-cloud-amd64", "kernel-core" },
};

const char *
hostcheck_package(enum hc_family family, const char *prog)
{
	for (size_t i = 0; i < ARRAY_SIZE(packages); i++) {
		if (strcmp(packages[i].prog, prog))
			continue;
		return family == HC_FAMILY_FEDORA ? packages[i].rpm : packages[i].deb;
	}
	return NULL;
}

char *
hostcheck_install_cmd(const struct hc_os *os, const char *prog)
{
	const char *pkg = hostcheck_package(os->family, prog);

	if (!pkg)
		return NULL;
	if (!strcmp(prog, "kernel") && os->id && !strcmp(os->id, "ubuntu"))
		pkg = "linux-image-generic";
	switch (os->family) {
	case HC_FAMILY_DEBIAN:
		return xasprintf("sudo apt-get install %s", pkg);
	case HC_FAMILY_FEDORA:
		return xasprintf("sudo dnf install %s", pkg);
	case HC_FAMILY_UNKNOWN:
		break;
	}
	return xasprintf("install %s (Debian's name for it) with your package manager", pkg);
}

/* ---- the pieces ---- */

char *
hostcheck_version(const char *text)
{
	const char *p = text;

	while (p && *p) {
		const char *w = p, *d;
		size_t len = 0;

		if (*w == 'v' || *w == 'V')
			w++;
		d = w;
		while ((d[len] >= '0' && d[len] <= '9') || d[len] == '.')
			len++;
		/* a version starts a word, has a dot, and starts and ends with digits */
		if (len >= 3 && d[0] != '.' && d[len - 1] != '.' && memchr(d, '.', len) &&
		    (p == text || strchr(" \t\n(,", p[-1])))
			return xstrndup(d, len);
		p += strcspn(p, " \t\n(,");
		p += strspn(p, " \t\n(,");
	}
	return NULL;
}

enum status
hostcheck_free_space(const char *dir, uint64_t *bytes)
{
	char *p = xstrdup(dir);
	struct statvfs st;

	for (;;) {
		char *slash;

		if (!statvfs(p, &st))
			break;
		if (errno != ENOENT || !strcmp(p, "/") || !(slash = strrchr(p, '/'))) {
			enum status rc = error(ERR_IO, "cannot see the free space of '%s': %s", dir,
					       strerror(errno));

			free(p);
			return rc;
		}
		if (slash == p)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	*bytes = (uint64_t)st.f_bavail * (uint64_t)st.f_frsize;
	free(p);
	return OK;
}

static struct hc_finding *
add(struct hostcheck *hc, const char *g, enum hc_state s, bool required, const char *name,
    char *detail, char *fix)
{
	struct hc_finding *f;

	ALLOC_GROW(hc->v, hc->n + 1, hc->alloc);
	f = &hc->v[hc->n++];
	f->group = g;
	f->state = s;
	f->required = required;
	f->shown = false;
	f->name = xstrdup(name);
	f->detail = detail ? detail : xstrdup("");
	f->fix = fix;
	return f;
}

struct ctx {
	struct loop *loop;
	const struct hostcheck_opts *o;
	struct hostcheck *hc;
	const char *sbin;
};

/*
 * Run argv (stdout and stderr together into *out) for at most the programs'
 * time limit; *timed_out when it was still running (it is killed then).
 */
static enum status
run_timed(struct ctx *c, const char *const *argv, struct strbuf *out, struct child_exit *ex,
	  bool *timed_out)
{
	static const char *const env[] = { "LC_ALL=C", NULL };
	struct spawn_run r = { .argv = argv,
			       .env = env,
			       .err_to_out = true,
			       .new_pgrp = true,
			       .max_out = OUTPUT_MAX,
			       .timeout_ms =
				       (int)(c->o->timeout_ms ? c->o->timeout_ms : PROGRAM_MS) };

	return spawn_run_opts(c->loop, &r, out, ex, timed_out);
}

/* The version a program prints, or NULL. */
static char *
program_version(struct ctx *c, const char *path, const char *flag)
{
	const char *argv[] = { path, flag, NULL };
	struct strbuf out = STRBUF_INIT;
	char *v = NULL;

	if (!c->o->run_programs)
		return NULL;
	if (run_timed(c, argv, &out, NULL, NULL) == OK)
		v = hostcheck_version(out.buf);
	error_clear();
	strbuf_release(&out);
	return v;
}

/* A program finding: ok with its version (or path), or missing with the install command. */
static char *
check_program(struct ctx *c, const char *g, bool required, const char *prog, const char *flag,
	      const char *why_needed)
{
	char *path = path_which(prog, c->o->path, c->sbin);

	if (path) {
		char *v = flag ? program_version(c, path, flag) : NULL;

		add(c->hc, g, HC_OK, required, prog,
		    v ? xasprintf("%s (%s)", v, path) : xstrdup(path), NULL);
		free(v);
		return path;
	}
	add(c->hc, g, HC_MISSING, required, prog,
	    why_needed ? xasprintf("(%s)", why_needed) : xstrdup("(not installed)"),
	    hostcheck_install_cmd(&c->hc->os, prog));
	return NULL;
}

static void
check_kernel(struct ctx *c)
{
	struct kernel_list l = { 0 };
	char cwd[4096];
	const char *here = c->o->cwd;

	if (!here && getcwd(cwd, sizeof(cwd)))
		here = cwd;
	if (here && kernel_is_tree(here)) {
		add(c->hc, HC_HOST, HC_OK, true, "kernel",
		    xasprintf("the kernel tree in %s (fswb builds it)", here), NULL);
		return;
	}
	if (kernel_list_installed(&l) != OK) {
		add(c->hc, HC_HOST, HC_MISSING, true, "kernel",
		    xasprintf("cannot list the installed kernels: %s", error_msg()), NULL);
		error_clear();
		return;
	}
	if (l.n) {
		const struct kernel *k = &l.v[l.auto_index < l.n ? l.auto_index : 0];

		if (access(k->image, R_OK))
			add(c->hc, HC_HOST, HC_MISSING, true, "kernel",
			    xasprintf("%s is not readable by this user (QEMU must read it)",
				      k->image),
			    xasprintf("sudo chmod 0644 %s", k->image));
		else {
			add(c->hc, HC_HOST, HC_OK, true, "kernel",
			    xasprintf("%s (%s)", k->version ? k->version : "installed", k->image),
			    NULL);
			c->hc->kernel = xstrdup(k->image);
		}
	} else {
		char *boot = kernel_boot_dir();

		add(c->hc, HC_HOST, HC_MISSING, true, "kernel",
		    xasprintf("no installed kernel in %s, and no kernel tree in the current "
			      "directory",
			      boot),
		    hostcheck_install_cmd(&c->hc->os, "kernel"));
		free(boot);
	}
	kernel_list_release(&l);
}

static void
check_disk(struct ctx *c)
{
	char *dir = c->o->cache_dir ? xstrdup(c->o->cache_dir) : fswb_dir(DIR_CACHE);
	uint64_t bytes = 0;
	char size[32];

	if (hostcheck_free_space(dir, &bytes) != OK) {
		add(c->hc, HC_HOST, HC_MISSING, true, "cache disk", xstrdup(error_msg()), NULL);
		error_clear();
	} else if (bytes < HOSTCHECK_DISK_MIN) {
		add(c->hc, HC_HOST, HC_MISSING, true, "cache disk",
		    xasprintf("only %s free in %s; the appliance and the test devices need at "
			      "least 4 GiB",
			      format_size(bytes, size, sizeof(size)), dir),
		    xstrdup("free space there, or set FSWB_CACHE_DIR to a directory on a larger "
			    "disk"));
	} else if (bytes < HOSTCHECK_DISK_WARN) {
		add(c->hc, HC_HOST, HC_WARN, true, "cache disk",
		    xasprintf("%s free in %s (10 GiB or more is comfortable: kernel builds and "
			      "several appliances)",
			      format_size(bytes, size, sizeof(size)), dir),
		    xstrdup("free space there, or set FSWB_CACHE_DIR to a directory on a larger "
			    "disk"));
	} else {
		add(c->hc, HC_HOST, HC_OK, true, "cache disk",
		    xasprintf("%s free in %s", format_size(bytes, size, sizeof(size)), dir), NULL);
	}
	free(dir);
}

static void
check_mkfs(struct ctx *c)
{
	static const char *const defaults[] = { "ext4", "xfs", "btrfs", "f2fs" };
	struct strvec fs = STRVEC_INIT;

	strvec_push(&fs, "ext4"); /* the appliance image is ext4, whatever is tested */
	if (c->o->profiles) {
		for (size_t i = 0; i < c->o->profiles->nconfigs; i++) {
			const struct fs_config *cfg = &c->o->profiles->configs[i];
			const char *made = cfg->base ? cfg->base : cfg->fstyp; /* overlay: base */

			if (!cfg->devices && /* tmpfs: no mkfs */ !strvec_contains(&fs, made))
				strvec_push(&fs, made);
		}
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(defaults); i++)
			if (!strvec_contains(&fs, defaults[i]))
				strvec_push(&fs, defaults[i]);
	}
	for (size_t i = 0; i < fs.n; i++) {
		bool ext4 = !strcmp(fs.v[i], "ext4");
		char *prog = xasprintf("mkfs.%s", fs.v[i]);
		char *why = ext4 ? xstrdup("the appliance image and ext4 configurations need it")
				 : xasprintf("%s configurations need it", fs.v[i]);
		const char *flag = "-V";

		if (!strcmp(fs.v[i], "btrfs"))
			flag = "--version";
		else if (!strcmp(fs.v[i], "vfat") || !strcmp(fs.v[i], "udf"))
			flag = NULL; /* no version option: the path is shown */
		free(check_program(c, HC_HOST, ext4, prog, flag, why));
		free(why);
		free(prog);
	}
	strvec_clear(&fs);
}

static void
check_appliance(struct ctx *c)
{
	struct strbuf why = STRBUF_INIT;
	char *fix = NULL;

	if (appliance_probe(&why) == OK) {
		add(c->hc, HC_HOST, HC_OK, true, "appliance build", strbuf_detach(&why), NULL);
		return;
	}
	error_clear();
	{
		char *mkfs = path_which("mkfs.ext4", c->o->path, c->sbin);
		char *mm = path_which("mmdebstrap", c->o->path, c->sbin);
		char *deb = path_which("debootstrap", c->o->path, c->sbin);
		char *uidmap = path_which("newuidmap", c->o->path, c->sbin);

		if (!mkfs)
			fix = hostcheck_install_cmd(&c->hc->os, "mkfs.ext4");
		else if (!mm && (!deb || geteuid() != 0))
			fix = hostcheck_install_cmd(&c->hc->os, "mmdebstrap");
		else if (mm && !uidmap && geteuid() != 0)
			fix = hostcheck_install_cmd(&c->hc->os, "newuidmap");
		free(mkfs);
		free(mm);
		free(deb);
		free(uidmap);
	}
	add(c->hc, HC_HOST, HC_MISSING, true, "appliance build", strbuf_detach(&why), fix);
}

/* A backend's programs, then its own findings (KVM), in the group of its name. */
static void
check_backend(struct ctx *c, const struct backend_ops *ops)
{
	const struct backend_doctor_opts bo = { .path = c->o->path,
						.kvm_dev = c->o->kvm_dev,
						.kernel = c->hc->kernel,
						.run_programs = c->o->run_programs,
						.trial_ms = c->o->kvm_boot_ms,
						.plan = c->o->plan };
	static const enum hc_state states[] = {
		[FINDING_OK] = HC_OK, [FINDING_WARN] = HC_WARN, [FINDING_MISSING] = HC_MISSING
	};
	struct backend_finding f[8];
	size_t n;

	for (const struct backend_program *p = ops->programs; p && p->name; p++)
		free(check_program(c, ops->name, p->required, p->name, p->version_flag, p->why));
	n = backend_doctor(ops, c->loop, &bo, f, ARRAY_SIZE(f));
	for (size_t i = 0; i < n; i++) {
		/* the welcome screen shows the default backend's own (KVM) and what is wrong */
		add(c->hc, ops->name, states[f[i].state], false, f[i].name, f[i].detail, f[i].fix)
			->shown = f[i].state != FINDING_OK || !strcmp(ops->name, "qemu");
		c->hc->slow |= f[i].slow;
		c->hc->untried |= f[i].untried;
	}
}

enum status
hostcheck_run(struct loop *loop, const struct hostcheck_opts *opts, struct hostcheck *out)
{
	struct ctx c = { loop, opts, out, NULL };
	enum status rc;

	memset(out, 0, sizeof(*out));
	c.sbin = opts->sbin ? opts->sbin : SBIN_DEFAULT;
	rc = hostcheck_os(opts->os_release, &out->os);
	if (rc != OK)
		goto out;

	check_kernel(&c);
	check_disk(&c);
	check_mkfs(&c);
	check_appliance(&c);
	for (const char *const *name = backend_names(); *name; name++)
		check_backend(&c, backend_find(*name));

	out->ready = true;
	for (size_t i = 0; i < out->n; i++)
		if (out->v[i].required && out->v[i].state == HC_MISSING)
			out->ready = false;
	if (!out->ready)
		out->slow = false;
out:
	return rc;
}

void
hostcheck_release(struct hostcheck *hc)
{
	for (size_t i = 0; i < hc->n; i++) {
		free(hc->v[i].name);
		free(hc->v[i].detail);
		free(hc->v[i].fix);
	}
	free(hc->v);
	hc_os_release(&hc->os);
	free(hc->kernel);
	memset(hc, 0, sizeof(*hc));
}

size_t
hostcheck_group(const struct hostcheck *hc, const char *g, const struct hc_finding **first)
{
	size_t n = 0;

	*first = NULL;
	for (size_t i = 0; i < hc->n; i++) {
		if (strcmp(hc->v[i].group, g))
			continue;
		if (!n)
			*first = &hc->v[i];
		n++;
	}
	return n;
}
