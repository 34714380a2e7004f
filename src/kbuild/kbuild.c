/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Configuring and building kernel trees; make's output; object estimates. See kbuild.h. */
#include "kbuild/kbuild.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/lockfile.h"
#include "core/paths.h"
#include "core/job.h"
#include "core/spawn.h"

/* ---- small helpers ---- */

static bool
cfg_is(const struct kconfig_values *cfg, const char *name, const char *value)
{
	const char *v = cfg ? kconfig_value(cfg, name) : NULL;

	return v && !strcmp(v, value);
}

static bool
cfg_on(const struct kconfig_values *cfg, const char *name)
{
	return cfg_is(cfg, name, "y") || cfg_is(cfg, name, "m");
}

/* Replace *dst with s, which the caller hands over. */
static void
set_str_free(char **dst, char *s)
{
	free(*dst);
	*dst = s;
}

static void
progress(struct event_bus *bus, const char *detail, double fraction)
{
	if (bus)
		emit_stage(bus, EV_STAGE_PROGRESS, "kernel", detail, fraction);
}

/* ---- the tree ---- */

/* ---- tools ---- */

static bool
header_exists(const char *rel)
{
	static const char *const dirs[] = { "/usr/include", "/usr/local/include",
					    "/usr/include/x86_64-linux-gnu",
					    "/usr/include/aarch64-linux-gnu" };

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		char *p = path_join(dirs[i], rel);
		bool there = path_exists(p);

		free(p);
		if (there)
			return true;
	}
	return false;
}

static const char *
host_machine(void)
{
	static struct utsname u;

	return uname(&u) == 0 ? u.machine : "x86_64";
}

/* The CROSS_COMPILE prefix for arch on this host ("" when native). */
static const char *
cross_prefix(const struct kernel_arch *a)
{
	const char *env = getenv("CROSS_COMPILE");

	if (env && *env)
		return env;
	return strcmp(host_machine(), a->machine) ? a->cross : "";
}

static void
need_program(struct strvec *missing, struct strvec *pkgs, const char *prog, const char *pkg,
	     const char *why)
{
	if (path_has_program(prog))
		return;
	strvec_pushf(missing, "'%s' (%s)", prog, why);
	if (!strvec_contains(pkgs, pkg))
		strvec_push(pkgs, pkg);
}

enum status
kbuild_tools_check(const struct kernel_arch *a, const struct kconfig_values *cfg)
{
	struct strvec missing = STRVEC_INIT, pkgs = STRVEC_INIT;
	const char *cross = cross_prefix(a);
	char *cc = xasprintf("%sgcc", cross), *ld = xasprintf("%sld", cross);
	bool crossing = *cross != '\0';
	enum status rc = OK;

	need_program(&missing, &pkgs, "make", "make", "runs the build");
	need_program(&missing, &pkgs, crossing ? cc : "gcc",
		     crossing ? (strcmp(a->name, "arm64") ? "gcc" : "gcc-aarch64-linux-gnu")
			      : "gcc",
		     crossing ? "the cross compiler" : "the C compiler");
	if (crossing)
		need_program(&missing, &pkgs, "gcc", "gcc", "builds the host tools");
	need_program(&missing, &pkgs, "flex", "flex", "kbuild's config tool needs it");
	need_program(&missing, &pkgs, "bison", "bison", "kbuild's config tool needs it");
	if (cfg) {
		need_program(&missing, &pkgs, ld,
			     crossing ? (strcmp(a->name, "arm64") ? "binutils"
								  : "binutils-aarch64-linux-gnu")
				      : "binutils",
			     "the linker");
		need_program(&missing, &pkgs, "bc", "bc", "computes kernel/time constants");
		need_program(&missing, &pkgs, "perl", "perl", "some build scripts are perl");
		if ((cfg_on(cfg, "OBJTOOL") || cfg_on(cfg, "STACK_VALIDATION") ||
		     cfg_on(cfg, "UNWINDER_ORC") || !strcmp(a->name, "x86_64")) &&
		    !header_exists("gelf.h")) {
			strvec_push(&missing, "libelf's headers (objtool needs gelf.h)");
			strvec_push(&pkgs, "libelf-dev");
		}
		if ((cfg_on(cfg, "MODULE_SIG") || cfg_on(cfg, "SYSTEM_TRUSTED_KEYRING")) &&
		    !header_exists("openssl/opensslv.h")) {
			strvec_push(&missing, "openssl's headers (module signing and trusted keys "
					      "need them)");
			strvec_push(&pkgs, "libssl-dev");
		}
		if (cfg_on(cfg, "DEBUG_INFO_BTF"))
			need_program(&missing, &pkgs, "pahole", "dwarves",
				     "CONFIG_DEBUG_INFO_BTF needs it");
		{
			static const struct {
				const char *opt, *prog, *pkg;
			} comp[] = {
				{ "KERNEL_GZIP", "gzip", "gzip" },
				{ "KERNEL_XZ", "xz", "xz-utils" },
				{ "KERNEL_ZSTD", "zstd", "zstd" },
				{ "KERNEL_LZ4", "lz4", "lz4" },
				{ "KERNEL_LZO", "lzop", "lzop" },
				{ "KERNEL_BZIP2", "bzip2", "bzip2" },
				{ "KERNEL_LZMA", "lzma", "xz-utils" },
			};

			for (size_t i = 0; i < ARRAY_SIZE(comp); i++)
				if (cfg_on(cfg, comp[i].opt))
					need_program(&missing, &pkgs, comp[i].prog, comp[i].pkg,
						     "compresses the kernel image");
		}
	}
	if (missing.n) {
		char *what = strvec_join(&missing, ", "), *inst = strvec_join(&pkgs, " ");

		rc = error(ERR_NOTFOUND,
			   "cannot build a kernel: missing %s; install them (Debian: apt install "
			   "%s) and try again",
			   what, inst);
		free(what);
		free(inst);
	}
	strvec_clear(&missing);
	strvec_clear(&pkgs);
	free(cc);
	free(ld);
	return rc;
}

/* ---- the build directory ---- */

static void
hash_add(uint64_t *h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		*h ^= p[i];
		*h *= 1099511628211ull;
	}
	*h ^= 0xff; /* a separator, so "ab"+"c" differs from "a"+"bc" */
	*h *= 1099511628211ull;
}

enum status
kbuild_build_dir(const char *tree, const struct kernel_arch *a, const struct kernel_needs *needs,
		 char **out)
{
	uint64_t h = 1469598103934665603ull;
	const char *base = strrchr(tree, '/');
	struct strbuf sub = STRBUF_INIT;
	enum status rc;

	*out = NULL;
	hash_add(&h, tree, strlen(tree));
	hash_add(&h, a->name, strlen(a->name));
	for (size_t i = 0; needs && i < needs->fragments.n; i++) {
		char *text = NULL;
		size_t len = 0;

		hash_add(&h, needs->names.v[i], strlen(needs->names.v[i]));
		if (read_file(needs->fragments.v[i], 1u << 20, &text, &len) != OK) {
			rc = error_prefix(ERR_IO, "config fragment");
			return rc;
		}
		hash_add(&h, text, len);
		free(text);
	}
	base = base && base[1] ? base + 1 : "linux";
	strbuf_adds(&sub, "kernels/");
	for (const char *p = base; *p && sub.len < 48; p++)
		strbuf_addch(&sub, isalnum((unsigned char)*p) || strchr("._-", *p) ? *p : '_');
	strbuf_addf(&sub, "-%s-%016llx", a->name, (unsigned long long)h);
	rc = fswb_dir_make(DIR_CACHE, sub.buf, out);
	strbuf_release(&sub);
	return rc;
}

/* ---- running make ---- */

struct make_run {
	struct kbuild_progress *prog;
	struct event_bus *bus;
	int log_fd;
	uint64_t last_emit;
	double last_fraction;
	bool quiet; /* no progress events */
};

static void
make_emit(struct make_run *m, bool force)
{
	uint64_t now = loop_now_ms();
	double f = kbuild_progress_fraction(m->prog);
	char detail[320];

	if (m->quiet || !m->bus)
		return;
	if (!force && now - m->last_emit < 250 && (f < 0 || f - m->last_fraction < 0.01))
		return;
	if (m->prog->estimate)
		snprintf(detail, sizeof(detail), "%s (%zu of ~%zu)", m->prog->current,
			 m->prog->objects, m->prog->estimate);
	else
		snprintf(detail, sizeof(detail), "%s (%zu compiled)", m->prog->current,
			 m->prog->objects);
	progress(m->bus, detail, f);
	m->last_emit = now;
	m->last_fraction = f;
}

static void
make_output(void *data, const char *buf, size_t len)
{
	struct make_run *m = data;

	if (m->log_fd >= 0 && write(m->log_fd, buf, len) != (ssize_t)len) {
		close(m->log_fd); /* a full disk: keep building, stop logging */
		m->log_fd = -1;
	}
	kbuild_progress_feed(m->prog, buf, len);
	make_emit(m, false);
}

/*
 * Run argv (make) with its output to log_fd and the parser, as a job waited
 * for. *ex gets how it ended. ERR_INTERRUPTED when *cancel was set or the
 * loop was told to quit (make gets SIGTERM, then SIGKILL after 10 s).
 */
static enum status
run_make(struct loop *loop, const char *const *argv, int log_fd, struct kbuild_progress *prog,
	 struct event_bus *bus, bool quiet, const bool *cancel, struct child_exit *ex)
{
	static const char *const env[] = { "LC_ALL=C", "LANG", "LANGUAGE", NULL };
	struct job_opts o = JOB_OPTS_INIT;
	struct make_run m = { 0 };
	struct job *job;
	enum status rc;

	m.prog = prog;
	m.bus = bus;
	m.log_fd = log_fd;
	m.quiet = quiet;
	m.last_fraction = -1;
	o.argv = argv;
	o.env = env;
	o.kill_grace_ms = 10000;
	o.on_bytes = make_output;
	o.data = &m;
	rc = job_start(loop, &o, &job);
	if (rc != OK)
		return rc;
	rc = job_wait(job, cancel);
	if (rc == OK && job_result(job)->cancelled)
		rc = error(ERR_INTERRUPTED, "the kernel build was interrupted");
	if (rc == OK) {
		*ex = job_result(job)->exit;
		make_emit(&m, true);
	}
	job_free(job);
	return rc;
}

static void
make_argv(struct strvec *av, const struct kbuild_opts *o, const struct kernel *k,
	  const struct kernel_arch *a)
{
	const char *cross = cross_prefix(a);

	if (o->nice) {
		strvec_push(av, "nice");
		strvec_push(av, "-n");
		strvec_pushf(av, "%d", o->nice);
	}
	strvec_push(av, "make");
	strvec_push(av, "-C");
	strvec_push(av, k->tree);
	if (!k->own_config)
		strvec_pushf(av, "O=%s", k->build_dir);
	strvec_pushf(av, "ARCH=%s", a->make_arch);
	if (*cross)
		strvec_pushf(av, "CROSS_COMPILE=%s", cross);
}

/* The last lines of a file, for a message when no error line was recognised. */
static char *
tail_lines(const char *path, size_t nlines)
{
	char *text = NULL;
	size_t len = 0, n = 0;
	const char *p;

	if (read_file(path, 64u << 20, &text, &len) != OK) {
		error_clear();
		return xstrdup("");
	}
	while (len && text[len - 1] == '\n')
		text[--len] = '\0';
	for (p = text + len; p > text; p--)
		if (p[-1] == '\n' && ++n == nlines)
			break;
	{
		struct strbuf sb = STRBUF_INIT;

		for (const char *q = p; *q;) {
			const char *nl = strchr(q, '\n');
			size_t l = nl ? (size_t)(nl - q) : strlen(q);

			strbuf_addf(&sb, "  %.*s\n", (int)l, q);
			q += l + (nl ? 1 : 0);
		}
		free(text);
		return strbuf_detach(&sb);
	}
}

/* ---- configuring ---- */

static enum status
check_clean(const struct kernel *k, const struct kernel_arch *a)
{
	const char *marks[3] = { ".config", "include/config", NULL };
	char *gen = xasprintf("arch/%s/include/generated", a->srcarch);
	enum status rc = OK;

	marks[2] = gen;
	for (size_t i = 0; i < ARRAY_SIZE(marks) && rc == OK; i++) {
		char *p = path_join(k->tree, marks[i]);

		if (path_exists(p))
			rc = error(
				ERR_INVALID,
				"kernel tree '%s' was configured or built in place (it has '%s'), "
				"and make refuses to build such a tree out of tree; fswb does not "
				"write your tree, so either build it in place with its own config "
				"(--own-config), or clean it yourself with 'make -C %s mrproper' "
				"(which deletes its .config and everything built there)",
				k->tree, marks[i], k->tree);
		free(p);
	}
	free(gen);
	return rc;
}

/* The .config is for arch (CONFIG_X86_64=y or CONFIG_ARM64=y)? */
static enum status
check_config_arch(const char *path, const struct kernel_arch *a)
{
	struct kconfig_values *v = kconfig_values_new();
	const char *mark = !strcmp(a->name, "x86_64") ? "X86_64" : "ARM64";
	enum status rc = kconfig_values_load(v, path);

	if (rc == OK && !cfg_is(v, mark, "y"))
		rc = error(ERR_INVALID,
			   "'%s' is not a config for %s (it has no CONFIG_%s=y); configure the "
			   "tree for %s (make ARCH=%s menuconfig) or give --arch",
			   path, a->name, mark, a->name, a->make_arch);
	kconfig_values_free(v);
	return rc;
}

static enum status
merge_config(const struct kernel *k, const struct kernel_arch *a, const struct kernel_needs *n,
	     struct strbuf *out)
{
	struct kconfig_values *v = kconfig_values_new();
	char *def = path_join(k->tree, a->defconfig);
	char *kvm = NULL;
	static const char *const kvm_places[] = { "kernel/configs/kvm_guest.config",
						  "arch/%s/configs/kvm_guest.config" };
	struct strbuf names = STRBUF_INIT;
	enum status rc;

	rc = kconfig_values_load(v, def);
	if (rc == ERR_NOTFOUND)
		rc = error(ERR_NOTFOUND, "kernel tree '%s' has no '%s' for %s", k->tree,
			   a->defconfig, a->name);
	strbuf_adds(&names, strrchr(a->defconfig, '/') + 1);
	for (size_t i = 0; rc == OK && i < ARRAY_SIZE(kvm_places) && !kvm; i++) {
		char *rel = xasprintf(kvm_places[i], a->srcarch);
		char *p = path_join(k->tree, rel);

		free(rel);
		if (path_exists(p))
			kvm = p;
		else
			free(p);
	}
	if (rc == OK && kvm) {
		rc = kconfig_values_load(v, kvm);
		strbuf_adds(&names, " + kvm_guest.config");
	}
	for (size_t i = 0; rc == OK && i < n->fragments.n; i++) {
		rc = kconfig_values_load(v, n->fragments.v[i]);
		strbuf_addf(&names, " + %s", n->names.v[i]);
	}
	if (rc == OK) {
		strbuf_addf(out, "# made by fswb for %s: %s\n", a->name, names.buf);
		kconfig_values_format(v, out);
	}
	strbuf_release(&names);
	kconfig_values_free(v);
	free(def);
	free(kvm);
	return rc;
}

static void
say_waiting(void *data)
{
	progress(data, "waiting for another fswb building this kernel tree", -1);
}

/*
 * One fswb at a time configures or builds a tree (its build directories,
 * its own .config): two at once would write the same files. The lock is
 * kernels/tree-HASH.lock in the cache, HASH of the tree's path.
 */
static enum status
tree_lock(struct loop *loop, struct event_bus *bus, const struct kbuild_opts *o,
	  const struct kernel *k, int *fd)
{
	uint64_t h = 1469598103934665603ull;
	char sub[64], *dir = NULL, *path;
	enum status rc;

	*fd = -1;
	if (!k->tree)
		return OK;
	hash_add(&h, k->tree, strlen(k->tree));
	rc = fswb_dir_make(DIR_CACHE, "kernels", &dir);
	if (rc != OK)
		return rc;
	snprintf(sub, sizeof(sub), "tree-%016llx.lock", (unsigned long long)h);
	path = path_join(dir, sub);
	rc = lockfile_take(loop, path, o->cancel, say_waiting, bus, fd);
	free(path);
	free(dir);
	return rc;
}

static enum status configure(struct loop *loop, const struct kbuild_opts *o, struct kernel *k);

enum status
kbuild_configure(struct loop *loop, const struct kbuild_opts *o, struct kernel *k)
{
	int fd;
	enum status rc = tree_lock(loop, NULL, o, k, &fd);

	if (rc == OK)
		rc = configure(loop, o, k);
	lockfile_release(fd);
	return rc;
}

static enum status
configure(struct loop *loop, const struct kbuild_opts *o, struct kernel *k)
{
	const struct kernel_arch *a;
	struct strbuf merged = STRBUF_INIT;
	char *merged_path = NULL, *config = NULL, *old = NULL, *logp = NULL;
	struct strvec av = STRVEC_INIT;
	enum status rc;

	if (k->kind != KERNEL_TREE || !k->tree)
		return error(ERR_INVALID, "only a kernel tree can be configured");
	a = kernel_arch_find(k->arch ? k->arch : "x86_64");
	if (!a)
		return error(ERR_INVALID, "unknown architecture '%s'; fswb knows %s", k->arch,
			     kernel_arch_names());
	if (k->own_config) {
		free(k->build_dir);
		k->build_dir = xstrdup(k->tree);
		free(k->config);
		k->config = path_join(k->tree, ".config");
		k->config_source = KCONF_TREE;
		if (!path_exists(k->config)) {
			rc = error(ERR_NOTFOUND,
				   "kernel tree '%s' has no .config of its own to build with "
				   "(--own-config); configure it first (make menuconfig), or leave "
				   "out --own-config to let fswb make one",
				   k->tree);
			free(k->config);
			k->config = NULL;
			return rc;
		}
		rc = check_config_arch(k->config, a);
		if (rc != OK)
			return rc;
		return kernel_check(loop, k, o->needs);
	}
	rc = check_clean(k, a);
	if (rc == OK)
		rc = kbuild_tools_check(a, NULL);
	if (rc != OK)
		return rc;
	free(k->build_dir);
	k->build_dir = NULL;
	rc = kbuild_build_dir(k->tree, a, o->needs, &k->build_dir);
	if (rc != OK)
		return rc;
	rc = merge_config(k, a, o->needs, &merged);
	if (rc != OK)
		goto out;
	merged_path = path_join(k->build_dir, "fswb-merged.config");
	config = path_join(k->build_dir, ".config");
	logp = path_join(k->build_dir, "fswb-config.log");
	if (!(path_exists(config) && read_file(merged_path, 16u << 20, &old, NULL) == OK &&
	      !strcmp(old, merged.buf))) {
		struct strbuf out = STRBUF_INIT;
		struct child_exit ex = { 0 };

		error_clear();
		unlink(merged_path);
		rc = write_file_atomic(config, merged.buf, merged.len, 0644);
		if (rc != OK)
			goto out;
		make_argv(&av, o, k, a);
		strvec_push(&av, "olddefconfig");
		rc = spawn_run(loop, (const char *const *)av.v,
			       (const char *const[]){ "LC_ALL=C", NULL }, true, 8u << 20, &out,
			       &ex);
		if (rc == OK)
			rc = write_file_atomic(logp, out.buf, out.len, 0644);
		if (rc == OK && !(ex.exited && ex.code == 0)) {
			char how[96], *tail = tail_lines(logp, 8);

			rc = error(ERR_CHILD,
				   "make olddefconfig failed for '%s' (%s):\n%sthe full log: %s",
				   k->tree, child_exit_str(&ex, how, sizeof(how)), tail, logp);
			free(tail);
		}
		if (rc == OK)
			rc = write_file_atomic(merged_path, merged.buf, merged.len, 0644);
		strbuf_release(&out);
		if (rc != OK)
			goto out;
	}
	free(k->config);
	k->config = config;
	config = NULL;
	k->config_source = KCONF_TREE;
	rc = kernel_check(loop, k, o->needs);
out:
	strvec_clear(&av);
	strbuf_release(&merged);
	free(merged_path);
	free(config);
	free(old);
	free(logp);
	return rc;
}

/* ---- building ---- */

static bool
config_has_modules(const struct kconfig_values *cfg)
{
	if (!cfg_is(cfg, "MODULES", "y"))
		return false;
	for (size_t i = 0; i < kconfig_values_count(cfg); i++) {
		const char *name, *value;

		kconfig_values_at(cfg, i, &name, &value);
		if (!strcmp(value, "m"))
			return true;
	}
	return false;
}

static enum status
write_stamp(const struct kernel *k, const char *path)
{
	json_t *o = json_object();
	char *text;
	enum status rc;
	char when[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(o, "tree", json_string(k->tree));
	json_object_set_new(o, "arch", json_string(k->arch));
	json_object_set_new(o, "version", k->version ? json_string(k->version) : json_null());
	json_object_set_new(o, "image", json_string(k->image));
	json_object_set_new(o, "modules", k->modules ? json_string(k->modules) : json_null());
	json_object_set_new(o, "config", json_string(k->config));
	json_object_set_new(o, "built", json_string(when));
	text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	rc = write_file_atomic(path, text, strlen(text), 0644);
	free(text);
	json_decref(o);
	return rc;
}

static char *
dropped_needs(const struct kconfig_report *r)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < r->n; i++) {
		const struct kconfig_result *x = &r->v[i];

		if (kconfig_result_ok(x) || x->need != KCONFIG_NEED)
			continue;
		strbuf_addf(&sb, "\n  CONFIG_%s=%s (needed by %s): %s", x->name, x->wanted,
			    x->needed_by ? x->needed_by : "fswb", x->why ? x->why : "dropped");
	}
	return strbuf_detach(&sb);
}

enum status
kbuild_build(struct loop *loop, struct event_bus *bus, const struct kbuild_opts *o,
	     struct kernel *k)
{
	const struct kernel_arch *a;
	struct kconfig_values *cfg = NULL;
	struct kbuild_progress prog;
	struct strvec av = STRVEC_INIT;
	struct child_exit ex = { 0 };
	char *stamp = NULL, *modroot = NULL, *release = NULL, *img = NULL;
	const char *logp = NULL;
	size_t estimate = 0;
	unsigned jobs = o->jobs;
	int log_fd = -1, lockfd = -1;
	enum status rc;

	kbuild_progress_init(&prog, 0);
	rc = tree_lock(loop, bus, o, k, &lockfd);
	if (rc != OK)
		goto out;
	progress(bus, "configuring", -1);
	rc = configure(loop, o, k);
	if (rc != OK)
		goto out;
	a = kernel_arch_find(k->arch);
	if (k->report.nneeded && !o->force) {
		char *list = dropped_needs(&k->report);

		rc = error(ERR_INVALID,
			   "the kernel config made for '%s' lacks what the chosen configurations "
			   "need:%s\nfix the tree or the fragments, or build anyway with --force",
			   k->tree, list);
		free(list);
		goto out;
	}
	cfg = kconfig_values_new();
	rc = kconfig_values_load(cfg, k->config);
	if (rc == OK)
		rc = kbuild_tools_check(a, cfg);
	if (rc != OK)
		goto out;
	stamp = path_join(k->build_dir, "fswb-kernel.json");
	if (!k->own_config && !path_exists(stamp) &&
	    kbuild_estimate(k->tree, a->srcarch, cfg, NULL, &estimate) != OK) {
		estimate = 0;
		error_clear();
	}
	kbuild_progress_release(&prog);
	kbuild_progress_init(&prog, estimate);
	if (k->own_config) {
		char sub[64];
		uint64_t h = 1469598103934665603ull;
		char *dir = NULL;

		hash_add(&h, k->tree, strlen(k->tree));
		snprintf(sub, sizeof(sub), "kernels/own-%016llx", (unsigned long long)h);
		rc = fswb_dir_make(DIR_CACHE, sub, &dir);
		if (rc != OK)
			goto out;
		set_str_free(&k->log, path_join(dir, "fswb-build.log"));
		modroot = path_join(dir, "fswb-modules");
		free(dir);
	} else {
		set_str_free(&k->log, path_join(k->build_dir, "fswb-build.log"));
		modroot = path_join(k->build_dir, "fswb-modules");
	}
	logp = k->log;
	log_fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (log_fd < 0) {
		rc = error(ERR_IO, "cannot create the build log '%s': %s", logp, strerror(errno));
		goto out;
	}
	if (!jobs) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		jobs = n > 0 ? (unsigned)n : 1;
	}
	make_argv(&av, o, k, a);
	strvec_pushf(&av, "-j%u", jobs);
	progress(bus, "building", estimate ? 0 : -1);
	rc = run_make(loop, (const char *const *)av.v, log_fd, &prog, bus, false, o->cancel, &ex);
	if (rc != OK)
		goto out;
	if (!(ex.exited && ex.code == 0)) {
		char how[96], *errs = kbuild_progress_errors(&prog);

		if (!*errs) {
			free(errs);
			errs = tail_lines(logp, 10);
		}
		rc = error(ERR_CHILD,
			   "the kernel build failed (make %s); the first errors:\n%sthe "
			   "full log: %s",
			   child_exit_str(&ex, how, sizeof(how)), errs, logp);
		free(errs);
		goto out;
	}
	img = path_join(k->build_dir, a->image);
	if (!path_exists(img)) {
		rc = error(ERR_CHILD, "make finished but there is no '%s'; see the log: %s", img,
			   logp);
		goto out;
	}
	{
		char *rel = path_join(k->build_dir, "include/config/kernel.release");

		if (read_file(rel, 4096, &release, NULL) == OK) {
			str_trim(release);
			set_str_free(&k->version, xstrdup(release));
		}
		error_clear();
		free(rel);
	}
	free(k->modules);
	k->modules = NULL;
	if (config_has_modules(cfg)) {
		struct kbuild_progress mp;

		progress(bus, "installing modules", -1);
		remove_tree(modroot);
		strvec_clear(&av);
		make_argv(&av, o, k, a);
		strvec_pushf(&av, "INSTALL_MOD_PATH=%s", modroot);
		strvec_push(&av, "INSTALL_MOD_STRIP=1");
		strvec_push(&av, "modules_install");
		kbuild_progress_init(&mp, 0);
		rc = run_make(loop, (const char *const *)av.v, log_fd, &mp, bus, true, o->cancel,
			      &ex);
		if (rc == OK && !(ex.exited && ex.code == 0)) {
			char how[96], *errs = kbuild_progress_errors(&mp);

			rc = error(ERR_CHILD,
				   "make modules_install failed (%s):\n%sthe full log: %s",
				   child_exit_str(&ex, how, sizeof(how)), errs, logp);
			free(errs);
		}
		kbuild_progress_release(&mp);
		if (rc != OK)
			goto out;
		k->modules = xasprintf("%s/lib/modules/%s", modroot, k->version ? k->version : "");
		if (!path_is_dir(k->modules)) {
			rc = error(ERR_CHILD, "make modules_install left no '%s'; see the log: %s",
				   k->modules, logp);
			goto out;
		}
	}
	set_str_free(&k->image, img);
	img = NULL;
	k->built = true;
	k->modular = cfg_is(cfg, "MODULES", "y");
	if (!k->own_config)
		rc = write_stamp(k, stamp);
	progress(bus, "built", 1.0);
out:
	if (log_fd >= 0)
		close(log_fd);
	lockfile_release(lockfd);
	kbuild_progress_release(&prog);
	kconfig_values_free(cfg);
	strvec_clear(&av);
	free(stamp);
	free(modroot);
	free(release);
	free(img);
	return rc;
}

/* ---- make's output ---- */

void
kbuild_progress_init(struct kbuild_progress *p, size_t estimate)
{
	memset(p, 0, sizeof(*p));
	p->estimate = estimate;
	strvec_init(&p->errors);
	strvec_init(&p->make_errors);
	line_asm_init(&p->partial, 4096, false);
}

void
kbuild_progress_release(struct kbuild_progress *p)
{
	strvec_clear(&p->errors);
	strvec_clear(&p->make_errors);
	line_asm_release(&p->partial);
}

static bool
is_error_line(const char *s)
{
	return strstr(s, ": error: ") || strstr(s, ": fatal error: ") ||
	       strstr(s, "undefined reference to") || strstr(s, ": Error: ") ||
	       strstr(s, ": undefined symbol") || str_startswith(s, "ERROR: ") ||
	       str_startswith(s, "error: ") || str_startswith(s, "***");
}

bool
kbuild_progress_line(struct kbuild_progress *p, const char *line)
{
	const char *s = line, *tag, *target;
	size_t taglen;
	bool module = false, object = false;

	p->lines++;
	if (s[0] == ' ' && s[1] == ' ' && isupper((unsigned char)s[2])) {
		tag = s + 2;
		for (s = tag; isupper((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_';
		     s++)
			;
		taglen = (size_t)(s - tag);
		if (!strncmp(s, " [M]", 4)) {
			module = true;
			s += 4;
		}
		if (*s == ' ' || *s == '\t') {
			while (*s == ' ' || *s == '\t')
				s++;
			target = s;
			if (*target) {
				size_t tl = strlen(target);

				object = ((taglen == 2 && !strncmp(tag, "CC", 2)) ||
					  (taglen == 2 && !strncmp(tag, "AS", 2))) &&
					 str_endswith(target, ".o") &&
					 !str_endswith(target, ".mod.o");
				snprintf(p->current, sizeof(p->current), "%.*s%s %.*s", (int)taglen,
					 tag, module ? " [M]" : "", (int)(tl > 200 ? 200 : tl),
					 target);
				if (object)
					p->objects++;
				return object;
			}
		}
	}
	if (str_startswith(line, "make") && strstr(line, "*** ")) {
		if (p->make_errors.n < KBUILD_MAX_ERRORS)
			strvec_push(&p->make_errors, line);
	} else if (is_error_line(line)) {
		if (p->errors.n < KBUILD_MAX_ERRORS)
			strvec_push(&p->errors, line);
	}
	return false;
}

static void
progress_line(void *data, char *line, size_t len, bool cut)
{
	if (len && line[len - 1] == '\r')
		line[len - 1] = '\0';
	kbuild_progress_line(data, line);
}

void
kbuild_progress_feed(struct kbuild_progress *p, const char *data, size_t len)
{
	line_asm_feed(&p->partial, data, len, progress_line, p);
}

double
kbuild_progress_fraction(const struct kbuild_progress *p)
{
	double f;

	if (!p->estimate)
		return -1;
	f = (double)p->objects / (double)p->estimate;
	return f > 0.99 ? 0.99 : f;
}

char *
kbuild_progress_errors(const struct kbuild_progress *p)
{
	struct strbuf sb = STRBUF_INIT;
	const struct strvec *v = p->errors.n ? &p->errors : &p->make_errors;

	for (size_t i = 0; i < v->n; i++)
		strbuf_addf(&sb, "  %s\n", v->v[i]);
	return strbuf_detach(&sb);
}

/* ---- estimating the objects ---- */

#define EST_MAX_DEPTH 32
#define EST_MAX_DIRS  20000

struct composite {
	char *name;
	struct strvec parts;
};

struct est {
	const char *tree, *srcarch;
	const struct kconfig_values *cfg;
	struct strvec visited;
	size_t count;
};

/* The value of CONFIG_X in "$(CONFIG_X)" (or inside $(subst ...)): 1 on, 0 off, -1 not a CONFIG_. */
static int
config_ref(const struct est *e, const char *s, size_t len)
{
	const char *p = memmem(s, len, "CONFIG_", 7);
	char name[128];
	size_t n = 0;

	if (!p)
		return -1;
	p += 7;
	while ((size_t)(p - s) < len && (isalnum((unsigned char)*p) || *p == '_') &&
	       n < sizeof(name) - 1)
		name[n++] = *p++;
	name[n] = '\0';
	return cfg_on(e->cfg, name) ? 1 : 0;
}

static bool
suffix_on(const struct est *e, const char *suffix)
{
	if (!strcmp(suffix, "y") || !strcmp(suffix, "m") || !strcmp(suffix, "objs"))
		return true;
	return config_ref(e, suffix, strlen(suffix)) == 1;
}

/* A variable name: no white space or ':' outside $(...) (so not a rule). */
static bool
plain_lhs(const char *lhs)
{
	int depth = 0;

	for (const char *p = lhs; *p; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		else if (!depth && (*p == ' ' || *p == '\t' || *p == ':'))
			return false;
	}
	return *lhs != '\0';
}

/* Split "obj-$(CONFIG_X)" at its last '-' outside $(...). */
static bool
split_lhs(const char *lhs, char **prefix, char **suffix)
{
	int depth = 0;
	const char *dash = NULL;

	for (const char *p = lhs; *p; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		else if (*p == '-' && !depth)
			dash = p;
	}
	if (!dash || dash == lhs || !dash[1])
		return false;
	*prefix = xstrndup(lhs, (size_t)(dash - lhs));
	*suffix = xstrdup(dash + 1);
	return true;
}

static char *
expand_word(const struct est *e, const char *w)
{
	const char *v = strstr(w, "$(SRCARCH)");

	if (v)
		return xasprintf("%.*s%s%s", (int)(v - w), w, e->srcarch, v + 10);
	return xstrdup(w);
}

/* Read a Kbuild/Makefile's logical lines: continuations joined, comments cut. */
static void
logical_lines(const char *text, struct strvec *out)
{
	struct strbuf sb = STRBUF_INIT;

	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		bool cont = len && p[len - 1] == '\\';

		strbuf_add(&sb, p, cont ? len - 1 : len);
		if (cont) {
			strbuf_addch(&sb, ' ');
		} else {
			char *hash = strchr(sb.buf, '#');

			if (hash && (hash == sb.buf || hash[-1] != '\\'))
				strbuf_setlen(&sb, (size_t)(hash - sb.buf));
			strvec_push(out, sb.buf);
			strbuf_reset(&sb);
		}
		p += len;
		if (*p == '\n')
			p++;
	}
	if (sb.len)
		strvec_push(out, sb.buf);
	strbuf_release(&sb);
}

/* Evaluate "(A,B)" of ifeq/ifneq: 1 equal, 0 not, -1 cannot tell. */
static int
ifeq_args(const struct est *e, const char *s)
{
	char *args, *comma, *a, *b, *end;
	int r = -1;
	char va[128], vb[128];
	const char *sides[2];
	char *bufs[2] = { va, vb };

	while (*s == ' ')
		s++;
	if (*s != '(')
		return -1;
	args = xstrdup(s + 1);
	end = strrchr(args, ')');
	comma = strchr(args, ',');
	if (!end || !comma || comma > end) {
		free(args);
		return -1;
	}
	*end = '\0';
	*comma = '\0';
	a = str_trim(args);
	b = str_trim(comma + 1);
	sides[0] = a;
	sides[1] = b;
	for (int i = 0; i < 2; i++) {
		const char *x = sides[i];

		if (str_startswith(x, "$(CONFIG_") && x[strlen(x) - 1] == ')' &&
		    !strchr(x + 2, '(')) {
			char name[128];
			const char *v;

			snprintf(name, sizeof(name), "%.*s", (int)(strlen(x) - 10), x + 9);
			v = kconfig_value(e->cfg, name);
			snprintf(bufs[i], 128, "%s", v && strcmp(v, "n") ? v : "");
			sides[i] = bufs[i];
		} else if (strchr(x, '$')) {
			free(args);
			return -1;
		}
	}
	r = !strcmp(sides[0], sides[1]);
	free(args);
	return r;
}

struct cond {
	int known; /* 1 value is right, 0 cannot tell */
	bool value, in_else;
};

static bool
cond_active(const struct cond *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].known && c[i].value == c[i].in_else)
			return false;
	return true;
}

static size_t
count_parts(const struct composite *cs, size_t ncs, const char *obj, int depth)
{
	char *base = xstrndup(obj, strlen(obj) - 2);
	size_t n = 1;

	for (size_t i = 0; i < ncs && depth < 4; i++)
		if (!strcmp(cs[i].name, base)) {
			n = 0;
			for (size_t j = 0; j < cs[i].parts.n; j++)
				n += count_parts(cs, ncs, cs[i].parts.v[j], depth + 1);
			break;
		}
	free(base);
	return n;
}

static void scan_dir(struct est *e, const char *dir, int depth);

/* Scan one directory's Kbuild (or Makefile); top: also core-y/drivers-y/libs-y lists. */
static void
scan_file(struct est *e, const char *dir, const char *file, bool lists_only, int depth)
{
	char *text = NULL;
	struct strvec lines = STRVEC_INIT, objs = STRVEC_INIT, subdirs = STRVEC_INIT;
	struct composite *cs = NULL;
	size_t ncs = 0, acs = 0;
	struct cond conds[32];
	size_t nconds = 0;

	if (read_file(file, 4u << 20, &text, NULL) != OK) {
		error_clear();
		return;
	}
	logical_lines(text, &lines);
	free(text);
	for (size_t i = 0; i < lines.n; i++) {
		char *line = str_trim(lines.v[i]);
		char *op, *lhs, *rhs, *prefix = NULL, *suffix = NULL;
		struct strvec words = STRVEC_INIT;
		bool on, top_list;

		if (str_startswith(line, "ifdef ") || str_startswith(line, "ifndef ")) {
			const char *v = line + (line[2] == 'd' ? 6 : 7);
			int r = str_startswith(str_trim((char *)v), "CONFIG_")
					? (int)cfg_on(e->cfg, str_trim((char *)v) + 7)
					: -1;

			if (nconds < ARRAY_SIZE(conds)) {
				conds[nconds].known = r >= 0;
				conds[nconds].value = line[2] == 'd' ? r == 1 : r == 0;
				conds[nconds].in_else = false;
			}
			nconds++;
			continue;
		}
		if (str_startswith(line, "ifeq") || str_startswith(line, "ifneq")) {
			bool neq = line[2] == 'n';
			int r = ifeq_args(e, line + (neq ? 5 : 4));

			if (nconds < ARRAY_SIZE(conds)) {
				conds[nconds].known = r >= 0;
				conds[nconds].value = neq ? r == 0 : r == 1;
				conds[nconds].in_else = false;
			}
			nconds++;
			continue;
		}
		if (str_startswith(line, "else")) {
			if (nconds && nconds <= ARRAY_SIZE(conds)) {
				conds[nconds - 1].in_else = true;
				if (line[4]) /* else ifeq ...: cannot tell */
					conds[nconds - 1].known = 0;
			}
			continue;
		}
		if (!strcmp(line, "endif") || str_startswith(line, "endif ")) {
			if (nconds)
				nconds--;
			continue;
		}
		if (!cond_active(conds, nconds < ARRAY_SIZE(conds) ? nconds : ARRAY_SIZE(conds)))
			continue;
		op = strstr(line, "=");
		if (!op || op == line)
			continue;
		lhs = xstrndup(line, (size_t)(op - line));
		if (strchr(":+?", lhs[strlen(lhs) - 1]))
			lhs[strlen(lhs) - 1] = '\0';
		str_trim(lhs);
		rhs = op + 1;
		if (!plain_lhs(lhs) || !split_lhs(lhs, &prefix, &suffix)) {
			free(lhs);
			continue;
		}
		free(lhs);
		on = suffix_on(e, suffix);
		top_list = !strcmp(prefix, "core") || !strcmp(prefix, "drivers") ||
			   !strcmp(prefix, "libs") || !strcmp(prefix, "net") ||
			   !strcmp(prefix, "virt") || !strcmp(prefix, "init");
		strvec_split(&words, rhs, " \t");
		if (!on) {
			/* off */
		} else if (lists_only) {
			if (top_list)
				for (size_t j = 0; j < words.n; j++) {
					char *w = expand_word(e, words.v[j]);

					if (str_endswith(w, "/") && !strchr(w, '$'))
						strvec_push(&subdirs, w);
					free(w);
				}
		} else if (!strcmp(prefix, "obj") || !strcmp(prefix, "lib") ||
			   !strcmp(prefix, "extra")) {
			for (size_t j = 0; j < words.n; j++) {
				char *w = expand_word(e, words.v[j]);

				if (strchr(w, '$') || strstr(w, "..")) {
					/* a variable or a path outside: not followed */
				} else if (str_endswith(w, "/")) {
					if (strcmp(prefix, "extra"))
						strvec_push(&subdirs, w);
				} else if (str_endswith(w, ".o") && !strvec_contains(&objs, w)) {
					strvec_push(&objs, w);
				}
				free(w);
			}
		} else if (!strstr(prefix, "flags") && !strstr(prefix, "FLAGS") &&
			   strcmp(prefix, "subdir") && strcmp(prefix, "hostprogs") &&
			   strcmp(prefix, "always") && strcmp(prefix, "targets") &&
			   strcmp(prefix, "userprogs") && strcmp(prefix, "clean") && !top_list) {
			struct composite *c = NULL;

			for (size_t j = 0; j < ncs && !c; j++)
				if (!strcmp(cs[j].name, prefix))
					c = &cs[j];
			if (!c) {
				ALLOC_GROW(cs, ncs + 1, acs);
				c = &cs[ncs++];
				c->name = xstrdup(prefix);
				strvec_init(&c->parts);
			}
			for (size_t j = 0; j < words.n; j++)
				if (str_endswith(words.v[j], ".o") && !strchr(words.v[j], '$') &&
				    !strvec_contains(&c->parts, words.v[j]))
					strvec_push(&c->parts, words.v[j]);
		}
		strvec_clear(&words);
		free(prefix);
		free(suffix);
	}
	for (size_t i = 0; i < objs.n; i++)
		e->count += count_parts(cs, ncs, objs.v[i], 0);
	for (size_t i = 0; i < subdirs.n; i++) {
		char *sub = lists_only ? xstrdup(subdirs.v[i])
				       : (*dir ? xasprintf("%s/%s", dir, subdirs.v[i])
					       : xstrdup(subdirs.v[i]));
		size_t l = strlen(sub);

		while (l > 1 && sub[l - 1] == '/')
			sub[--l] = '\0';
		scan_dir(e, sub, depth + 1);
		free(sub);
	}
	for (size_t i = 0; i < ncs; i++) {
		free(cs[i].name);
		strvec_clear(&cs[i].parts);
	}
	free(cs);
	strvec_clear(&lines);
	strvec_clear(&objs);
	strvec_clear(&subdirs);
}

static void
scan_dir(struct est *e, const char *dir, int depth)
{
	char *base, *kb, *mk;

	if (depth > EST_MAX_DEPTH || e->visited.n >= EST_MAX_DIRS ||
	    strvec_contains(&e->visited, dir))
		return;
	strvec_push(&e->visited, dir);
	base = *dir ? path_join(e->tree, dir) : xstrdup(e->tree);
	kb = path_join(base, "Kbuild");
	mk = path_join(base, "Makefile");
	scan_file(e, dir, path_exists(kb) ? kb : mk, false, depth);
	free(base);
	free(kb);
	free(mk);
}

enum status
kbuild_estimate(const char *srctree, const char *srcarch, const struct kconfig_values *cfg,
		const char *subdir, size_t *objects)
{
	struct est e = { srctree, srcarch, cfg, STRVEC_INIT, 0 };
	char *top_mk, *arch_mk, *top_kb;

	*objects = 0;
	if (!path_is_dir(srctree))
		return error(ERR_NOTFOUND, "kernel tree '%s' does not exist", srctree);
	if (subdir) {
		scan_dir(&e, subdir, 0);
	} else {
		top_kb = path_join(srctree, "Kbuild");
		top_mk = path_join(srctree, "Makefile");
		arch_mk = xasprintf("%s/arch/%s/Makefile", srctree, srcarch);
		strvec_push(&e.visited, "");
		if (path_exists(top_kb))
			scan_file(&e, "", top_kb, false, 0);
		scan_file(&e, "", top_mk, true, 0);
		scan_file(&e, "", arch_mk, true, 0);
		free(top_kb);
		free(top_mk);
		free(arch_mk);
	}
	*objects = e.count;
	strvec_clear(&e.visited);
	return OK;
}
