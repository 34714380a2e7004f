/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Kernels: architectures, needs, resolving, checking and discovery. See kernel.h. */
#include "kbuild/kernel.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/lockfile.h"
#include "core/paths.h"
#include "core/spawn.h"
#include "kbuild/image.h"

/* ---- kernel trees ---- */

/* The value of "NAME = value" in a Makefile's text, or NULL. */
static char *
makefile_var(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *q = p;
		const char *end;

		if (strncmp(q, name, n))
			continue;
		q += n;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q != '=')
			continue;
		q++;
		while (*q == ' ' || *q == '\t')
			q++;
		end = strchr(q, '\n');
		if (!end)
			end = q + strlen(q);
		while (end > q && isspace((unsigned char)end[-1]))
			end--;
		return xstrndup(q, (size_t)(end - q));
	}
	return NULL;
}

enum status
kernel_tree_check(const char *path, char **version)
{
	char *mk = path_join(path, "Makefile"), *kc = path_join(path, "Kconfig");
	char *ar = path_join(path, "arch"), *text = NULL;
	char *ver = NULL, *pl = NULL, *sub = NULL, *extra = NULL;
	struct strvec missing = STRVEC_INIT;
	enum status rc = OK;

	if (version)
		*version = NULL;
	if (!path_is_dir(path)) {
		rc = error(path_exists(path) ? ERR_INVALID : ERR_NOTFOUND,
			   "'%s' is not a kernel tree: %s", path,
			   path_exists(path) ? "it is not a directory" : "it does not exist");
		goto out;
	}
	if (read_file(mk, 4u << 20, &text, NULL) != OK) {
		strvec_push(&missing, "no Makefile");
	} else {
		ver = makefile_var(text, "VERSION");
		pl = makefile_var(text, "PATCHLEVEL");
		sub = makefile_var(text, "SUBLEVEL");
		extra = makefile_var(text, "EXTRAVERSION");
		if (!ver || !pl || !*ver || !*pl)
			strvec_push(&missing, "its Makefile has no VERSION and PATCHLEVEL lines");
	}
	error_clear();
	if (!path_exists(kc))
		strvec_push(&missing, "no Kconfig");
	if (!path_is_dir(ar))
		strvec_push(&missing, "no arch/ directory");
	if (missing.n) {
		char *why = strvec_join(&missing, ", ");

		rc = error(ERR_INVALID,
			   "'%s' is not a kernel tree (%s); give the top directory of a Linux "
			   "source tree, the one with MAINTAINERS, Kconfig and arch/",
			   path, why);
		free(why);
		goto out;
	}
	if (version)
		*version = xasprintf("%s.%s%s%s%s", ver, pl, sub && *sub ? "." : "", sub ? sub : "",
				     extra ? extra : "");
out:
	strvec_clear(&missing);
	free(mk);
	free(kc);
	free(ar);
	free(text);
	free(ver);
	free(pl);
	free(sub);
	free(extra);
	return rc;
}

/* ---- architectures ---- */

static const struct kernel_arch arches[] = {
	{ "x86_64", "x86_64", "x86", "arch/x86/configs/x86_64_defconfig", "arch/x86/boot/bzImage",
	  "x86_64", "x86_64-linux-gnu-" },
	{ "arm64", "arm64", "arm64", "arch/arm64/configs/defconfig", "arch/arm64/boot/Image",
	  "aarch64", "aarch64-linux-gnu-" },
};

const struct kernel_arch *
kernel_arch_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(arches); i++)
		if (!strcmp(arches[i].name, name))
			return &arches[i];
	return NULL;
}

const char *
kernel_arch_names(void)
{
	return "x86_64, arm64";
}

/* The plan's name of the architecture this machine runs, or its uname -m. */
static const char *
host_arch(void)
{
	static struct utsname u;

	if (uname(&u) < 0)
		return "x86_64";
	for (size_t i = 0; i < ARRAY_SIZE(arches); i++)
		if (!strcmp(arches[i].machine, u.machine))
			return arches[i].name;
	return u.machine;
}

static enum status
find_arch(const char *name, const struct kernel_arch **out)
{
	*out = kernel_arch_find(name ? name : "x86_64");
	if (!*out)
		return error(ERR_INVALID, "unknown architecture '%s'; fswb knows %s", name,
			     kernel_arch_names());
	return OK;
}

/* ---- needs ---- */

enum status
kernel_needs_init(struct kernel_needs *n, const struct profiles *p, const struct strvec *configs,
		  const struct strvec *debug)
{
	struct strvec fstypes = STRVEC_INIT;
	enum status rc = OK;
	char *path;

	memset(n, 0, sizeof(*n));
	strvec_init(&n->fragments);
	strvec_init(&n->names);
	strvec_init(&n->configs);
	kconfig_requests_init(&n->req);
	for (size_t i = 0; configs && i < configs->n; i++) {
		const struct fs_config *c = profiles_config(p, configs->v[i]);

		if (!c) {
			rc = error(ERR_NOTFOUND,
				   "unknown filesystem configuration '%s'; see 'fswb profiles'",
				   configs->v[i]);
			goto out;
		}
		strvec_push(&n->configs, c->name);
		if (!strvec_contains(&fstypes, c->fstyp))
			strvec_push(&fstypes, c->fstyp);
		if (c->base &&
		    !strvec_contains(&fstypes,
				     c->base)) /* under an overlay, or exported over nfs */
			strvec_push(&fstypes, c->base);
	}
	path = xasprintf("%s/kconfig/fstests.config", p->dir);
	if (path_exists(path)) {
		strvec_push(&n->fragments, path);
		strvec_push(&n->names, "fstests.config");
	}
	free(path);
	for (size_t i = 0; i < fstypes.n; i++) {
		path = xasprintf("%s/kconfig/%s.config", p->dir, fstypes.v[i]);
		if (path_exists(path)) {
			strvec_push(&n->fragments, path);
			strvec_pushf(&n->names, "%s.config", fstypes.v[i]);
		}
		free(path);
	}
	for (size_t i = 0; i < n->fragments.n; i++) {
		char *display = xasprintf("kconfig/%s", n->names.v[i]);

		rc = kconfig_requests_add_fragment(&n->req, n->fragments.v[i], display,
						   KCONFIG_WANT);
		free(display);
		if (rc != OK)
			goto out;
	}
	for (size_t i = 0; debug && i < debug->n; i++) {
		char *display = xasprintf("kconfig/debug-%s.config", debug->v[i]);
		char *who = xasprintf("--debug %s", debug->v[i]);
		size_t before = n->req.n;
		struct kconfig_requests frag;

		path = xasprintf("%s/%s", p->dir, display);
		if (!path_exists(path)) {
			rc = error(ERR_NOTFOUND,
				   "no debug fragment '%s' in '%s'; the debug options are kasan, "
				   "lockdep and kmemleak",
				   display, p->dir);
		} else {
			strvec_push(&n->fragments, path);
			strvec_pushf(&n->names, "debug-%s.config", debug->v[i]);
			kconfig_requests_init(&frag);
			rc = kconfig_requests_add_fragment(&frag, path, display, KCONFIG_NEED);
			for (size_t j = 0; rc == OK && j < frag.n; j++) {
				kconfig_requests_set(&n->req, frag.v[j].name, frag.v[j].value,
						     frag.v[j].source, KCONFIG_NEED);
				kconfig_requests_need(&n->req, frag.v[j].name, who);
			}
			kconfig_requests_release(&frag);
		}
		(void)before;
		free(path);
		free(display);
		free(who);
		if (rc != OK)
			goto out;
	}
	for (size_t i = 0; i < n->configs.n; i++) {
		const struct fs_config *c = profiles_config(p, n->configs.v[i]);

		for (size_t j = 0; j < c->kconfig.n; j++)
			kconfig_requests_need(&n->req, c->kconfig.v[j], c->name);
	}
out:
	strvec_clear(&fstypes);
	if (rc != OK)
		kernel_needs_release(n);
	return rc;
}

void
kernel_needs_release(struct kernel_needs *n)
{
	strvec_clear(&n->fragments);
	strvec_clear(&n->names);
	strvec_clear(&n->configs);
	kconfig_requests_release(&n->req);
}

/* ---- struct kernel ---- */

const char *
kernel_config_source_str(enum kernel_config_source s)
{
	switch (s) {
	case KCONF_TREE:
		return "tree";
	case KCONF_BOOT:
		return "boot";
	case KCONF_EMBEDDED:
		return "embedded";
	default:
		return "none";
	}
}

void
kernel_init(struct kernel *k)
{
	memset(k, 0, sizeof(*k));
	k->kind = KERNEL_INSTALLED;
}

void
kernel_release(struct kernel *k)
{
	free(k->version);
	free(k->arch);
	free(k->image);
	free(k->modules);
	free(k->initrd);
	free(k->config);
	free(k->config_note);
	free(k->tree);
	free(k->build_dir);
	free(k->log);
	kconfig_report_release(&k->report);
	kernel_init(k);
}

static void
set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? xstrdup(s) : NULL;
}

/* Whether the config at path has CONFIG_MODULES=y. */
static bool
config_modular(const char *path)
{
	struct kconfig_values *v = kconfig_values_new();
	bool yes = false;

	if (path && kconfig_values_load(v, path) == OK) {
		const char *m = kconfig_value(v, "MODULES");

		yes = m && !strcmp(m, "y");
	}
	error_clear();
	kconfig_values_free(v);
	return yes;
}

/* A hash of a file's identity (path, size, mtime) for cache keys. */
static uint64_t
file_key(const char *path)
{
	struct stat st;
	uint64_t h = 1469598103934665603ull;
	char buf[64];

	for (const char *s = path; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	if (stat(path, &st) == 0) {
		snprintf(buf, sizeof(buf), ":%lld:%lld.%ld", (long long)st.st_size,
			 (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
		for (const char *s = buf; *s; s++) {
			h ^= (unsigned char)*s;
			h *= 1099511628211ull;
		}
	}
	return h;
}

/* kernels/image-HASH in the cache, created. */
static enum status
image_cache_dir(const char *image, char **out)
{
	char sub[64];

	snprintf(sub, sizeof(sub), "kernels/image-%016llx", (unsigned long long)file_key(image));
	return fswb_dir_make(DIR_CACHE, sub, out);
}

/* ---- installed kernels ---- */

static char *
env_dir(const char *name, const char *fallback)
{
	const char *v = getenv(name);

	return xstrdup(v && *v ? v : fallback);
}

char *
kernel_boot_dir(void)
{
	return env_dir("FSWB_BOOT_DIR", "/boot");
}

char *
kernel_modules_root(void)
{
	return env_dir("FSWB_MODULES_DIR", "/lib/modules");
}

static char *
first_existing(const char *dir, const char *const *fmts, const char *version)
{
	for (size_t i = 0; fmts[i]; i++) {
		char *name = xasprintf(fmts[i], version);
		char *p = path_join(dir, name);

		free(name);
		if (path_exists(p))
			return p;
		free(p);
	}
	return NULL;
}

static void
installed_entry(const char *boot, const char *modroot, const char *version, struct kernel *k)
{
	static const char *const initrds[] = { "initrd.img-%s", "initramfs-%s.img", "initrd-%s",
					       "initrd-%s.img", NULL };
	static const char *const configs[] = { "config-%s", NULL };
	char *name = xasprintf("vmlinuz-%s", version);
	char *mod = path_join(modroot, version);
	struct kimage_info info;

	kernel_init(k);
	k->kind = KERNEL_INSTALLED;
	k->version = xstrdup(version);
	k->image = path_join(boot, name);
	free(name);
	if (path_is_dir(mod))
		k->modules = mod;
	else
		free(mod);
	k->initrd = first_existing(boot, initrds, version);
	k->config = first_existing(boot, configs, version);
	if (k->config) {
		k->config_source = KCONF_BOOT;
		k->modular = config_modular(k->config);
	}
	if (kimage_probe(k->image, &info) == OK && info.arch) {
		k->arch = xstrdup(info.arch);
	} else {
		/* unreadable (some distributions make /boot/vmlinuz-* root's only) */
		k->arch = xstrdup(host_arch());
	}
	error_clear();
	kimage_info_release(&info);
}

static int
cmp_newest(const void *a, const void *b)
{
	const struct kernel *x = a, *y = b;

	return strverscmp(y->version, x->version);
}

static void
list_push(struct kernel_list *l, struct kernel *k)
{
	ALLOC_GROW(l->v, l->n + 1, l->alloc);
	l->v[l->n++] = *k;
	kernel_init(k);
}

void
kernel_list_release(struct kernel_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		kernel_release(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
	l->auto_index = (size_t)-1;
}

enum status
kernel_list_installed(struct kernel_list *out)
{
	char *boot = kernel_boot_dir(), *modroot = kernel_modules_root();
	DIR *d;
	struct dirent *de;

	memset(out, 0, sizeof(*out));
	out->auto_index = (size_t)-1;
	d = opendir(boot);
	if (!d) {
		free(boot);
		free(modroot);
		return OK; /* no /boot: no installed kernels */
	}
	while ((de = readdir(d))) {
		const char *v;
		struct kernel k;

		if (!str_startswith(de->d_name, "vmlinuz-"))
			continue;
		v = de->d_name + strlen("vmlinuz-");
		if (!*v || str_endswith(v, ".old") || strstr(v, ".dpkg-") ||
		    str_endswith(v, ".bak") || str_startswith(v, "rescue-"))
			continue;
		installed_entry(boot, modroot, v, &k);
		list_push(out, &k);
	}
	closedir(d);
	qsort(out->v, out->n, sizeof(*out->v), cmp_newest);
	free(boot);
	free(modroot);
	return OK;
}

/* The index resolve picks for an unnamed installed kernel: the running one, else the newest. */
static size_t
default_installed(const struct kernel_list *l)
{
	struct utsname u;

	if (!l->n)
		return (size_t)-1;
	if (uname(&u) == 0)
		for (size_t i = 0; i < l->n; i++)
			if (!strcmp(l->v[i].version, u.release))
				return i;
	return 0;
}

static enum status
resolve_installed(const char *spec, struct kernel *out)
{
	struct kernel_list l;
	size_t pick = (size_t)-1;
	enum status rc = kernel_list_installed(&l);

	if (rc != OK)
		return rc;
	if (!spec) {
		pick = default_installed(&l);
	} else {
		for (size_t i = 0; i < l.n && pick == (size_t)-1; i++)
			if (!strcmp(l.v[i].version, spec))
				pick = i;
	}
	if (pick == (size_t)-1) {
		char *boot = kernel_boot_dir();

		if (!l.n) {
			rc = error(
				ERR_NOTFOUND,
				"no installed kernel: '%s' has no vmlinuz-VERSION; give a kernel "
				"tree or a bzImage with --kernel",
				boot);
		} else {
			struct strbuf sb = STRBUF_INIT;

			for (size_t i = 0; i < l.n; i++)
				strbuf_addf(&sb, "%s%s", i ? ", " : "", l.v[i].version);
			rc = error(ERR_NOTFOUND,
				   "no installed kernel '%s' (no '%s/vmlinuz-%s'); installed: %s",
				   spec, boot, spec, sb.buf);
			strbuf_release(&sb);
		}
		free(boot);
		kernel_list_release(&l);
		return rc;
	}
	kernel_release(out);
	*out = l.v[pick];
	kernel_init(&l.v[pick]);
	kernel_list_release(&l);
	return OK;
}

/* ---- trees ---- */

bool
kernel_is_tree(const char *path)
{
	bool ok = kernel_tree_check(path, NULL) == OK;

	error_clear();
	return ok;
}

static enum status
resolve_tree(const char *path, bool own_config, const struct kernel_arch *a, struct kernel *out)
{
	char real[PATH_MAX];
	char *version = NULL, *cfg, *img;
	enum status rc;

	if (!realpath(path, real))
		return error(errno == ENOENT ? ERR_NOTFOUND : ERR_IO,
			     "kernel tree '%s' cannot be used: %s", path, strerror(errno));
	rc = kernel_tree_check(real, &version);
	if (rc != OK)
		return rc;
	out->kind = KERNEL_TREE;
	out->tree = xstrdup(real);
	out->version = version;
	set_str(&out->arch, a->name);
	out->own_config = own_config;
	cfg = path_join(real, ".config");
	img = path_join(real, a->image);
	if (own_config) {
		out->build_dir = xstrdup(real);
		if (path_exists(cfg)) {
			out->config = cfg;
			cfg = NULL;
			out->config_source = KCONF_TREE;
			out->modular = config_modular(out->config);
		} else {
			set_str(&out->config_note, "the tree has no .config");
		}
		if (path_exists(img)) {
			out->image = img;
			img = NULL;
		}
	}
	free(cfg);
	free(img);
	return OK;
}

/* ---- images and their modules ---- */

static bool
is_modules_dir(const char *dir)
{
	static const char *const marks[] = { "modules.dep", "modules.order", "modules.builtin",
					     "kernel" };

	for (size_t i = 0; i < ARRAY_SIZE(marks); i++) {
		char *p = path_join(dir, marks[i]);
		bool there = path_exists(p);

		free(p);
		if (there)
			return true;
	}
	return false;
}

/* dir is /lib/modules/V, or holds lib/modules/V; the V directory into *out. */
static enum status
find_modules_dir(const char *dir, const char *what, const char *version, char **out)
{
	char *lm;
	DIR *d;
	struct dirent *de;
	struct strvec found = STRVEC_INIT;
	enum status rc = OK;

	*out = NULL;
	if (is_modules_dir(dir)) {
		const char *base = strrchr(dir, '/');

		base = base ? base + 1 : dir;
		if (version && strcmp(base, version) && path_is_dir(dir) && *base &&
		    strchr(base, '.') && isdigit((unsigned char)base[0]))
			return error(
				ERR_INVALID,
				"the modules in %s are for kernel %s but the image is %s; give "
				"the modules built with that image",
				what, base, version);
		*out = xstrdup(dir);
		return OK;
	}
	lm = path_join(dir, "lib/modules");
	d = opendir(lm);
	if (!d) {
		free(lm);
		return error(ERR_INVALID,
			     "%s holds no kernel modules (no modules.dep, no lib/modules/VERSION); "
			     "give a /lib/modules/VERSION directory, a directory with "
			     "lib/modules/VERSION in it, or a tarball of either",
			     what);
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			char *p = path_join(lm, de->d_name);

			if (path_is_dir(p))
				strvec_push(&found, de->d_name);
			free(p);
		}
	closedir(d);
	if (version && strvec_contains(&found, version)) {
		*out = path_join(lm, version);
	} else if (found.n == 1 && !version) {
		*out = path_join(lm, found.v[0]);
	} else if (found.n == 1) {
		rc = error(ERR_INVALID,
			   "the modules in %s are for kernel %s but the image is %s; give the "
			   "modules built with that image",
			   what, found.v[0], version);
	} else if (!found.n) {
		rc = error(ERR_INVALID, "%s has an empty lib/modules", what);
	} else {
		char *all = strvec_join(&found, ", ");

		rc = error(ERR_INVALID, "%s has modules for several kernels (%s), none for %s",
			   what, all, version ? version : "the image");
		free(all);
	}
	strvec_clear(&found);
	free(lm);
	return rc;
}

/*
 * Lock DIR.lock, beside a directory of the cache that fswb processes fill
 * (unpacked modules, an image's config), as appliance builds lock theirs.
 */
static enum status
cache_lock(struct loop *loop, const char *dir, int *fd)
{
	char *path = xasprintf("%s.lock", dir);
	enum status rc = lockfile_take(loop, path, NULL, NULL, NULL, fd);

	free(path);
	return rc;
}

static enum status
unpack_modules(struct loop *loop, const char *tarball, char **root)
{
	char sub[64], *dir = NULL, *tmp, *stamp;
	const char *argv[] = { "tar", "-xf", tarball, "-C", NULL, NULL };
	struct strbuf out = STRBUF_INIT;
	struct child_exit ex = { 0 };
	enum status rc;
	int lockfd = -1;

	snprintf(sub, sizeof(sub), "kernels/modules-%016llx",
		 (unsigned long long)file_key(tarball));
	rc = fswb_dir_make(DIR_CACHE, sub, &dir);
	if (rc != OK)
		return rc;
	/* another fswb unpacking the same tarball: wait for it, then use its work */
	rc = cache_lock(loop, dir, &lockfd);
	if (rc != OK) {
		free(dir);
		return rc;
	}
	stamp = path_join(dir, ".fswb-unpacked");
	*root = path_join(dir, "root");
	if (path_exists(stamp)) {
		lockfile_release(lockfd);
		free(stamp);
		free(dir);
		return OK;
	}
	tmp = path_join(dir, "root.tmp");
	remove_tree(tmp);
	remove_tree(*root);
	rc = mkdir_p(tmp, 0755);
	argv[4] = tmp;
	if (rc == OK)
		rc = spawn_run(loop, argv, NULL, true, 64 * 1024, &out, &ex);
	if (rc == OK && !(ex.exited && ex.code == 0)) {
		char buf[96];

		str_trim(out.buf);
		rc = error(ERR_CHILD, "cannot unpack the modules tarball '%s': tar %s%s%s", tarball,
			   child_exit_str(&ex, buf, sizeof(buf)), out.len ? ": " : "", out.buf);
	}
	if (rc == OK && rename(tmp, *root) < 0)
		rc = error(ERR_IO, "cannot rename '%s': %s", tmp, strerror(errno));
	if (rc == OK)
		rc = write_file_atomic(stamp, "", 0, 0644);
	if (rc != OK) {
		remove_tree(tmp);
		free(*root);
		*root = NULL;
	}
	lockfile_release(lockfd);
	strbuf_release(&out);
	free(tmp);
	free(stamp);
	free(dir);
	return rc;
}

static enum status
resolve_modules(struct loop *loop, const char *spec, const char *version, char **out)
{
	char real[PATH_MAX];
	char *what, *root = NULL;
	enum status rc;

	*out = NULL;
	if (!realpath(spec, real))
		return error(ERR_NOTFOUND, "modules '%s' cannot be used: %s", spec,
			     strerror(errno));
	what = xasprintf("'%s'", spec);
	if (path_is_dir(real)) {
		rc = find_modules_dir(real, what, version, out);
	} else {
		rc = unpack_modules(loop, real, &root);
		if (rc == OK)
			rc = find_modules_dir(root, what, version, out);
		free(root);
	}
	free(what);
	return rc;
}

static enum status
resolve_image(struct loop *loop, const struct plan_kernel *pk, const struct kernel_arch *a,
	      struct kernel *out)
{
	char real[PATH_MAX];
	struct kimage_info info;
	enum status rc;

	if (!realpath(pk->spec, real))
		return error(errno == ENOENT ? ERR_NOTFOUND : ERR_IO,
			     "kernel image '%s' cannot be used: %s", pk->spec, strerror(errno));
	rc = kimage_probe(real, &info);
	if (rc != OK)
		return rc;
	out->kind = KERNEL_IMAGE;
	out->image = xstrdup(real);
	if (!info.arch || !info.version) {
		/* a compressed Image.gz, or a header without a version: look inside */
		char *dir = NULL, *vmlinux = NULL;
		struct kimage_info inner;
		int lockfd = -1;

		if (image_cache_dir(real, &dir) == OK && cache_lock(loop, dir, &lockfd) == OK) {
			vmlinux = path_join(dir, "vmlinux.tmp");
			if (kimage_decompress(loop, real, vmlinux) == OK) {
				if (!info.arch && kimage_probe(vmlinux, &inner) == OK) {
					set_str(&info.arch, inner.arch);
					kimage_info_release(&inner);
				}
				if (!info.version)
					kimage_find_version(vmlinux, &info.version);
			}
			unlink(vmlinux);
			lockfile_release(lockfd);
		}
		error_clear();
		free(vmlinux);
		free(dir);
	}
	if (info.arch && strcmp(info.arch, a->name)) {
		rc = error(ERR_INVALID,
			   "'%s' is a kernel for %s, but the architecture asked for is %s; give "
			   "--arch %s, or a kernel built for %s",
			   pk->spec, info.arch, a->name, info.arch, a->name);
		kimage_info_release(&info);
		return rc;
	}
	set_str(&out->arch, info.arch ? info.arch : a->name);
	out->version = info.version;
	info.version = NULL;
	kimage_info_release(&info);
	if (pk->modules) {
		rc = resolve_modules(loop, pk->modules, out->version, &out->modules);
		if (rc != OK)
			return rc;
	}
	return OK;
}

enum status
kernel_resolve(struct loop *loop, const struct plan_kernel *pk, struct kernel *out)
{
	const struct kernel_arch *a;
	enum status rc;
	char cwd[PATH_MAX];

	kernel_init(out);
	rc = find_arch(pk->arch, &a);
	if (rc != OK)
		return rc;
	switch (pk->kind) {
	case KERNEL_AUTO:
		if (getcwd(cwd, sizeof(cwd)) && kernel_is_tree(cwd))
			return resolve_tree(cwd, pk->own_config, a, out);
		rc = resolve_installed(NULL, out);
		break;
	case KERNEL_TREE:
		if (!pk->spec)
			return error(ERR_INVALID, "kernel: a tree needs its path");
		return resolve_tree(pk->spec, pk->own_config, a, out);
	case KERNEL_IMAGE:
		if (!pk->spec)
			return error(ERR_INVALID, "kernel: an image needs its path");
		return resolve_image(loop, pk, a, out);
	case KERNEL_INSTALLED:
		rc = resolve_installed(pk->spec, out);
		break;
	}
	if (rc == OK && out->arch && strcmp(out->arch, a->name))
		rc = error(ERR_INVALID,
			   "the installed kernel %s is for %s, but the architecture asked for is "
			   "%s; give --arch %s, or a kernel tree or image for %s",
			   out->version, out->arch, a->name, out->arch, a->name);
	return rc;
}

/* ---- checking ---- */

enum status
kernel_check(struct loop *loop, struct kernel *k, const struct kernel_needs *needs)
{
	struct kconfig_tree *tree = NULL;
	unsigned flags = 0;
	enum status rc;

	kconfig_report_release(&k->report);
	k->checked = false;
	if (!k->config && k->image && (k->kind == KERNEL_IMAGE || k->kind == KERNEL_INSTALLED)) {
		char *dir = NULL, *cfg, *tmp;
		int lockfd = -1;
		bool have;

		rc = image_cache_dir(k->image, &dir);
		if (rc == OK)
			rc = cache_lock(loop, dir, &lockfd);
		if (rc != OK) {
			free(dir);
			return rc;
		}
		cfg = path_join(dir, "config");
		tmp = path_join(dir, "config.tmp");
		/* written whole, then renamed: a killed fswb leaves no half config */
		have = path_exists(cfg) ||
		       (kimage_config(loop, k->image, dir, tmp) == OK &&
			(rename(tmp, cfg) == 0 ||
			 error(ERR_IO, "cannot rename '%s': %s", tmp, strerror(errno)) == OK));
		unlink(tmp);
		free(tmp);
		lockfile_release(lockfd);
		if (have) {
			k->config = cfg;
			k->config_source = KCONF_EMBEDDED;
		} else {
			free(k->config_note);
			if (k->kind == KERNEL_INSTALLED)
				k->config_note =
					xasprintf("there is no config-%s beside it, and %s",
						  k->version ? k->version : "VERSION", error_msg());
			else
				k->config_note = xstrdup(error_msg());
			error_clear();
			free(cfg);
		}
		free(dir);
	}
	if (!k->config)
		return OK;
	if (k->kind == KERNEL_TREE && k->tree) {
		const struct kernel_arch *a = kernel_arch_find(k->arch ? k->arch : "x86_64");

		rc = kconfig_tree_load(k->tree, a ? a->srcarch : "x86", &tree);
		if (rc != OK)
			return error_prefix(rc, "reading the Kconfig files of '%s'", k->tree);
		if (!k->own_config)
			flags |= KCONFIG_MERGED;
	}
	if (k->modules)
		flags |= KCONFIG_MODULES_OK;
	rc = kconfig_check(k->config, tree, &needs->req, flags, &k->report);
	kconfig_tree_free(tree);
	if (rc != OK)
		return rc;
	k->checked = true;
	k->modular = config_modular(k->config);
	return OK;
}

/* ---- discovery ---- */

static bool
list_has_tree(const struct kernel_list *l, const char *tree)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].kind == KERNEL_TREE && l->v[i].tree && !strcmp(l->v[i].tree, tree) &&
		    !l->v[i].built)
			return true;
	return false;
}

static void
add_tree(struct kernel_list *l, const char *path, const struct kernel_arch *a)
{
	struct kernel k;
	char *cfg;
	bool own;

	if (!kernel_is_tree(path))
		return;
	cfg = path_join(path, ".config");
	own = path_exists(cfg);
	free(cfg);
	kernel_init(&k);
	if (resolve_tree(path, own, a, &k) == OK && !list_has_tree(l, k.tree))
		list_push(l, &k);
	error_clear();
	kernel_release(&k);
}

static const char *
json_str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The trees built before: kbuild's stamps under the cache's kernels/. */
static void
add_built(struct kernel_list *l, const char *arch)
{
	char *base = fswb_dir(DIR_CACHE), *kdir = path_join(base, "kernels");
	DIR *d = opendir(kdir);
	struct dirent *de;
	size_t first = l->n;

	free(base);
	if (!d) {
		free(kdir);
		return;
	}
	while ((de = readdir(d))) {
		char *dir, *stamp;
		json_t *j;
		struct kernel k;

		if (de->d_name[0] == '.')
			continue;
		dir = path_join(kdir, de->d_name);
		stamp = path_join(dir, "fswb-kernel.json");
		j = json_load_file(stamp, 0, NULL);
		if (j && json_str(j, "image") && path_exists(json_str(j, "image")) &&
		    (!arch || !json_str(j, "arch") || !strcmp(json_str(j, "arch"), arch))) {
			char *cfg = path_join(dir, ".config");

			kernel_init(&k);
			k.kind = KERNEL_TREE;
			set_str(&k.tree, json_str(j, "tree"));
			set_str(&k.version, json_str(j, "version"));
			set_str(&k.arch, json_str(j, "arch"));
			set_str(&k.image, json_str(j, "image"));
			if (json_str(j, "modules") && path_is_dir(json_str(j, "modules")))
				set_str(&k.modules, json_str(j, "modules"));
			k.build_dir = xstrdup(dir);
			k.built = true;
			if (path_exists(cfg)) {
				k.config = cfg;
				cfg = NULL;
				k.config_source = KCONF_TREE;
				k.modular = config_modular(k.config);
			}
			free(cfg);
			list_push(l, &k);
		}
		json_decref(j);
		free(stamp);
		free(dir);
	}
	closedir(d);
	free(kdir);
	/* newest version first among them, for a stable order */
	if (l->n - first > 1)
		qsort(l->v + first, l->n - first, sizeof(*l->v), cmp_newest);
}

enum status
kernel_list(struct loop *loop, const char *arch, struct kernel_list *out)
{
	const struct kernel_arch *a;
	struct kernel_list inst;
	char cwd[PATH_MAX];
	const char *home = getenv("HOME");
	bool cwd_tree = false;
	enum status rc;
	size_t first_installed;

	memset(out, 0, sizeof(*out));
	out->auto_index = (size_t)-1;
	rc = find_arch(arch, &a);
	if (rc != OK)
		return rc;
	if (getcwd(cwd, sizeof(cwd)) && kernel_is_tree(cwd)) {
		add_tree(out, cwd, a);
		cwd_tree = out->n > 0;
	}
	if (home && *home) {
		char *linux_dir = path_join(home, "linux");

		add_tree(out, linux_dir, a);
		free(linux_dir);
	}
	add_built(out, a->name);
	rc = kernel_list_installed(&inst);
	if (rc != OK) {
		kernel_list_release(out);
		return rc;
	}
	first_installed = out->n;
	{
		size_t def = default_installed(&inst);

		for (size_t i = 0; i < inst.n; i++) {
			if (i == def && !cwd_tree)
				out->auto_index = out->n;
			list_push(out, &inst.v[i]);
		}
	}
	(void)first_installed;
	kernel_list_release(&inst);
	if (cwd_tree)
		out->auto_index = 0;
	(void)loop;
	return OK;
}
