/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Building the appliance: its steps, the bootstrap, the image.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

#include "core/paths.h"
#include "rootfs/appliance_int.h"

/* Files dpkg leaves out: the appliance is read by scripts, not people. */
static const char *const dpkg_excludes[] = {
	"path-exclude=/usr/share/man/*",
	"path-exclude=/usr/share/doc/*",
	"path-include=/usr/share/doc/*/copyright",
	"path-exclude=/usr/share/info/*",
	"path-exclude=/usr/share/locale/*",
	"path-include=/usr/share/locale/locale.alias",
	NULL,
};

enum step_kind {
	STEP_RUN,	 /* args: a command run in the root filesystem */
	STEP_RUN_NOBODY, /* the same as the unprivileged user nobody (fstests' make) */
	STEP_SYNC_IN,	 /* args: SRC DST: the contents of SRC into DST */
	STEP_COPY_IN,	 /* args: FILE... DST: the files into directory DST */
};

#define NOBODY "65534" /* nobody and nogroup in Debian's base-passwd */

struct step {
	enum step_kind kind;
	const char *label;
	struct strvec args;
	bool builds; /* fstests' make: most of the steps' time */
};

struct steps {
	struct step *v;
	size_t n, alloc;
};

static void
step_add(struct steps *s, enum step_kind kind, const char *label, const char *const *args)
{
	struct step *st;

	ALLOC_GROW(s->v, s->n + 1, s->alloc);
	st = &s->v[s->n++];
	st->kind = kind;
	st->label = label;
	st->builds = false;
	strvec_init(&st->args);
	strvec_pushv(&st->args, args);
}

/*
 * Where step i starts on the progress bar: the steps share 0.70 to 0.90,
 * and fstests' make takes three quarters of that.
 */
static double
steps_fraction(const struct steps *s, size_t i)
{
	double before = 0, total = 0;

	for (size_t j = 0; j < s->n; j++) {
		double w = s->v[j].builds ? 3.0 * (double)(s->n > 1 ? s->n - 1 : 1) : 1.0;

		total += w;
		if (j < i)
			before += w;
	}
	return 0.70 + 0.20 * (total > 0 ? before / total : 0);
}

/* The next step begins (mmdebstrap's hook, or debootstrap's own loop). */
static void
begin_step(struct runner *r)
{
	size_t i = r->hook++;

	r->build_done = 0;
	if (r->steps && i < r->steps->n)
		ap_progress(r, r->steps->v[i].label, steps_fraction(r->steps, i));
	else
		ap_progress(r, "customizing", 0.90);
}

/* A line of the step running now: fstests' build moves within its share. */
static void
step_line(struct runner *r, const char *line)
{
	size_t i = r->hook - 1;
	double lo, hi, f;

	if (!r->steps || !r->hook || i >= r->steps->n || !r->steps->v[i].builds ||
	    !r->build_units || !appliance_build_line(line))
		return;
	lo = steps_fraction(r->steps, i);
	hi = steps_fraction(r->steps, i + 1);
	f = (double)++r->build_done / (double)r->build_units;
	ap_progress(r, r->steps->v[i].label, lo + (hi - lo) * (f > 1 ? 1 : f));
}

static void
steps_release(struct steps *s)
{
	for (size_t i = 0; i < s->n; i++)
		strvec_clear(&s->v[i].args);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* What is done in the root filesystem once the packages are in. */
static void
make_steps(const struct inputs *in, const char *stage, const char *fstests, struct steps *s)
{
	char jobs[16];
	char *agent = path_join(in->agent_dir, "fswb-agent");
	char *init = path_join(in->agent_dir, "fswb-init");
	char *hostname = path_join(stage, "hostname");
	char *hosts = path_join(stage, "hosts");
	char *info = path_join(stage, "fswb-appliance");

	snprintf(jobs, sizeof(jobs), "%u", in->jobs);
	step_add(s, STEP_RUN, "build fstests",
		 (const char *const[]){ "mkdir", "-p", "/opt/fstests", NULL });
	step_add(s, STEP_SYNC_IN, "build fstests",
		 (const char *const[]){ fstests, "/opt/fstests", NULL });
	/*
	 * fstests' make runs code from the tree (a URL's, maybe anyone's): as
	 * nobody, never as the host's root, who builds the root filesystem.
	 */
	/* a root filesystem's top is 0755 (a private temporary directory's is not) */
	step_add(s, STEP_RUN, "build fstests", (const char *const[]){ "chmod", "0755", "/", NULL });
	if (in->build_fstests) {
		step_add(s, STEP_RUN, "build fstests",
			 (const char *const[]){ "chown", "-R", NOBODY ":" NOBODY, "/opt/fstests",
						NULL });
		step_add(s, STEP_RUN_NOBODY, "build fstests",
			 (const char *const[]){ "make", "-C", "/opt/fstests", "-j", jobs, NULL });
		s->v[s->n - 1].builds = true;
	}
	step_add(s, STEP_RUN, "build fstests",
		 (const char *const[]){ "chown", "-R", "0:0", "/opt/fstests", NULL });
	step_add(s, STEP_RUN, "users",
		 (const char *const[]){ "useradd", "-m", "-U", "fsgqa", NULL });
	step_add(s, STEP_RUN, "users",
		 (const char *const[]){ "useradd", "-m", "-U", "fsgqa2", NULL });
	step_add(s, STEP_RUN, "users",
		 (const char *const[]){ "useradd", "-U", "123456-fsgqa", NULL });
	step_add(s, STEP_COPY_IN, "agent",
		 (const char *const[]){ agent, init, "/usr/local/sbin", NULL });
	step_add(s, STEP_RUN, "agent",
		 (const char *const[]){ "chown", "0:0", "/usr/local/sbin/fswb-agent",
					"/usr/local/sbin/fswb-init", NULL });
	step_add(s, STEP_RUN, "agent",
		 (const char *const[]){ "chmod", "0755", "/usr/local/sbin/fswb-agent",
					"/usr/local/sbin/fswb-init", NULL });
	step_add(s, STEP_COPY_IN, "agent",
		 (const char *const[]){ hostname, hosts, info, "/etc", NULL });
	step_add(s, STEP_RUN, "agent",
		 (const char *const[]){ "chown", "0:0", "/etc/hostname", "/etc/hosts",
					"/etc/fswb-appliance", NULL });
	step_add(s, STEP_RUN, "agent",
		 (const char *const[]){ "mkdir", "-p", "/lib/modules", NULL });
	free(agent);
	free(init);
	free(hostname);
	free(hosts);
	free(info);
}

static void
hook_text(const struct step *st, struct strbuf *sb)
{
	strbuf_reset(sb);
	switch (st->kind) {
	case STEP_RUN:
	case STEP_RUN_NOBODY:
		strbuf_adds(sb, st->kind == STEP_RUN ? "chroot \"$1\" "
						     : "chroot --userspec=" NOBODY ":" NOBODY
						       " \"$1\" ");
		sq_quote_argv(sb, (const char *const *)st->args.v);
		break;
	case STEP_SYNC_IN:
	case STEP_COPY_IN:
		strbuf_adds(sb, st->kind == STEP_SYNC_IN ? "sync-in" : "copy-in");
		for (size_t i = 0; i < st->args.n; i++) {
			strbuf_addch(sb, ' ');
			sq_quote(sb, st->args.v[i]);
		}
		break;
	}
}

/* mmdebstrap's lines, as progress. */
static void
on_mmdebstrap_line(struct runner *r, const char *line)
{
	unsigned a, b;

	if (str_startswith(line, "I: running apt-get update")) {
		ap_progress(r, "bootstrap", 0.02);
	} else if (str_startswith(line, "I: downloading packages")) {
		ap_progress(r, "bootstrap", 0.04);
	} else if (str_startswith(line, "I: extracting archives")) {
		ap_progress(r, "bootstrap", 0.08);
	} else if (str_startswith(line, "I: installing essential packages")) {
		r->phase = 1;
		r->done = 0;
		ap_progress(r, "bootstrap", 0.10);
	} else if (str_startswith(line, "I: installing remaining packages")) {
		r->phase = 2;
		r->done = 0;
		r->total = 0;
		ap_progress(r, "packages", 0.25);
	} else if (str_startswith(line, "I: running --customize-hook") ||
		   str_startswith(line, "I: running special hook")) {
		r->phase = 3;
		begin_step(r);
	} else if (str_startswith(line, "I: cleaning package lists")) {
		r->phase = 4;
		ap_progress(r, "cleaning up", 0.90);
	} else if (sscanf(line, "%u upgraded, %u newly installed", &a, &b) == 2) {
		r->total = b;
	} else if (r->phase == 1 || r->phase == 2) {
		bool counted = str_startswith(line, "Unpacking ") ||
			       str_startswith(line, "Setting up ") ||
			       (r->phase == 2 && str_startswith(line, "Get:"));

		if (counted && r->total) {
			double per = r->phase == 1 ? 2.0 : 3.0;
			double lo = r->phase == 1 ? 0.10 : 0.25, span = r->phase == 1 ? 0.15 : 0.45;
			double f = (double)++r->done / (per * r->total);

			ap_progress(r, r->phase == 1 ? "bootstrap" : "packages",
				    lo + span * (f > 1 ? 1 : f));
		}
	} else if (r->phase == 3) {
		step_line(r, line);
	}
}

static void
on_plain_line(struct runner *r, const char *line)
{
	step_line(r, line);
}

/* debootstrap's "I: ..." lines, as progress. */
static void
on_debootstrap_line(struct runner *r, const char *line)
{
	static const struct {
		const char *prefix, *detail;
		double fraction;
	} steps[] = {
		{ "I: Retrieving Release", "bootstrap", 0.02 },
		{ "I: Retrieving Packages", "bootstrap", 0.04 },
		{ "I: Retrieving ", "bootstrap", 0.06 },
		{ "I: Extracting ", "bootstrap", 0.20 },
		{ "I: Installing core packages", "bootstrap", 0.25 },
		{ "I: Unpacking the base system", "packages", 0.35 },
		{ "I: Configuring the base system", "packages", 0.55 },
		{ "I: Base system installed", "packages", 0.65 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
		if (str_startswith(line, steps[i].prefix)) {
			ap_progress(r, steps[i].detail, steps[i].fraction);
			return;
		}
}

/* Copy src (a file, link or directory) to dst, recursively. */
static enum status
copy_one(const char *src, const char *dst)
{
	struct stat st;
	enum status rc = OK;

	if (lstat(src, &st) < 0)
		return error(ERR_IO, "cannot read '%s': %s", src, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		DIR *d;
		struct dirent *de;

		if (mkdir(dst, st.st_mode & 07777) < 0 && errno != EEXIST)
			return error(ERR_IO, "cannot create '%s': %s", dst, strerror(errno));
		d = opendir(src);
		if (!d)
			return error(ERR_IO, "cannot read '%s': %s", src, strerror(errno));
		while (rc == OK && (de = readdir(d))) {
			char *s, *t;

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			s = path_join(src, de->d_name);
			t = path_join(dst, de->d_name);
			rc = copy_one(s, t);
			free(s);
			free(t);
		}
		closedir(d);
		return rc;
	}
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(src, target, sizeof(target) - 1);

		if (n < 0)
			return error(ERR_IO, "cannot read link '%s': %s", src, strerror(errno));
		target[n] = '\0';
		unlink(dst);
		if (symlink(target, dst) < 0)
			return error(ERR_IO, "cannot create '%s': %s", dst, strerror(errno));
		return OK;
	}
	if (S_ISREG(st.st_mode)) {
		int in = open(src, O_RDONLY | O_CLOEXEC);
		int out;
		char buf[65536];
		ssize_t n;

		if (in < 0)
			return error(ERR_IO, "cannot read '%s': %s", src, strerror(errno));
		unlink(dst);
		out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 07777);
		if (out < 0) {
			close(in);
			return error(ERR_IO, "cannot create '%s': %s", dst, strerror(errno));
		}
		while (rc == OK && (n = read(in, buf, sizeof(buf))) != 0) {
			if (n < 0) {
				if (errno == EINTR)
					continue;
				rc = error(ERR_IO, "cannot read '%s': %s", src, strerror(errno));
				break;
			}
			for (ssize_t off = 0; rc == OK && off < n;) {
				ssize_t w = write(out, buf + off, (size_t)(n - off));

				if (w < 0 && errno == EINTR)
					continue;
				if (w <= 0)
					rc = error(ERR_IO, "cannot write '%s': %s", dst,
						   w < 0 ? strerror(errno) : "short write");
				else
					off += w;
			}
		}
		fchmod(out, st.st_mode & 07777);
		futimens(out, (struct timespec[]){ st.st_atim, st.st_mtim });
		close(in);
		if (close(out) < 0 && rc == OK)
			rc = error(ERR_IO, "cannot write '%s': %s", dst, strerror(errno));
		return rc;
	}
	return OK; /* sockets, fifos, devices: not part of a source tree */
}

/* Copy the listed files of a directory source into dst. */
static enum status
copy_listed(const char *src, const struct strvec *files, const char *dst)
{
	enum status rc = mkdir_p(dst, 0755);

	for (size_t i = 0; rc == OK && i < files->n; i++) {
		char *s = path_join(src, files->v[i]);
		char *t = path_join(dst, files->v[i]);
		struct stat st;

		if (lstat(s, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (mkdir(t, (st.st_mode & 07777) | 0700) < 0 && errno != EEXIST)
				rc = error(ERR_IO, "cannot create '%s': %s", t, strerror(errno));
		} else {
			rc = copy_one(s, t);
		}
		free(s);
		free(t);
	}
	return rc;
}

static enum status
stage_fstests(struct runner *r, const struct inputs *in, const char *tmp, const char *dst)
{
	struct strbuf out = STRBUF_INIT;
	enum status rc;

	ap_progress(r, "preparing fstests", 0);
	if (!in->is_url)
		return copy_listed(in->src, &in->files, dst);
	{
		char *tar = path_join(tmp, "fstests.tar");

		rc = mkdir_p(dst, 0755);
		if (rc == OK)
			rc = ap_run_capture(
				r,
				(const char *const[]){ in->tools.git, "-c", "tar.umask=0022",
						       "--git-dir", in->clone, "archive",
						       "--format=tar", "-o", tar, in->rev, NULL },
				&out);
		if (rc == OK)
			rc = ap_run_capture(r,
					    (const char *const[]){ in->tools.tar, "-x", "-f", tar,
								   "-C", dst, NULL },
					    &out);
		unlink(tar);
		free(tar);
	}
	strbuf_release(&out);
	return rc;
}

static enum status
write_stage_files(const struct inputs *in, const char *stage)
{
	struct strbuf info = STRBUF_INIT;
	char *p;
	enum status rc;

	rc = mkdir_p(stage, 0755);
	if (rc != OK)
		return rc;
	p = path_join(stage, "hostname");
	rc = write_file_atomic(p, "fswb\n", 5, 0644);
	free(p);
	if (rc == OK) {
		static const char hosts[] = "127.0.0.1\tlocalhost\n127.0.1.1\tfswb\n"
					    "::1\tlocalhost ip6-localhost ip6-loopback\n";

		p = path_join(stage, "hosts");
		rc = write_file_atomic(p, hosts, sizeof(hosts) - 1, 0644);
		free(p);
	}
	if (rc == OK) {
		strbuf_addf(&info,
			    "# fswb's test appliance\n"
			    "FSWB_APPLIANCE_FORMAT=%d\n"
			    "FSWB_APPLIANCE_KEY=%s\n"
			    "FSWB_APPLIANCE_RELEASE=%s\n"
			    "FSWB_FSTESTS_REVISION=%s\n",
			    APPLIANCE_FORMAT, in->key, in->release, in->rev);
		p = path_join(stage, "fswb-appliance");
		rc = write_file_atomic(p, info.buf, info.len, 0644);
		free(p);
	}
	strbuf_release(&info);
	return rc;
}

static enum status
bootstrap_mmdebstrap(struct runner *r, const struct inputs *in, const struct steps *steps,
		     const char *root)
{
	struct strvec argv = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	enum status rc;

	strvec_push(&argv, in->tools.bootstrap);
	strvec_push(&argv, in->tools.unshare ? "--mode=unshare" : "--mode=root");
	strvec_pushv(&argv, (const char *const[]){ "--variant=apt", "--format=directory",
						   "--verbose", NULL });
	if (in->foreign)
		strvec_pushf(&argv, "--architectures=%s", in->arch);
	if (in->packages.n) {
		char *list = strvec_join(&in->packages, ",");

		strvec_pushf(&argv, "--include=%s", list);
		free(list);
	}
	for (const char *const *x = dpkg_excludes; *x; x++)
		strvec_pushf(&argv, "--dpkgopt=%s", *x);
	for (size_t i = 0; i < steps->n; i++) {
		hook_text(&steps->v[i], &sb);
		strvec_pushf(&argv, "--customize-hook=%s", sb.buf);
	}
	strvec_pushv(&argv, (const char *const[]){ in->release, root, in->mirror, NULL });
	r->on_line = on_mmdebstrap_line;
	r->steps = steps;
	r->hook = 0;
	r->phase = 0;
	ap_progress(r, "bootstrap", 0.01);
	rc = ap_run(r, (const char *const *)argv.v, (const char *const[]){ "LC_ALL=C", NULL });
	r->on_line = on_plain_line;
	r->steps = NULL;
	strvec_clear(&argv);
	strbuf_release(&sb);
	return rc;
}

static enum status
bootstrap_debootstrap(struct runner *r, const struct inputs *in, const struct steps *steps,
		      const char *root)
{
	struct strvec argv = STRVEC_INIT;
	enum status rc;

	strvec_push(&argv, in->tools.bootstrap);
	strvec_pushv(&argv,
		     (const char *const[]){ "--variant=minbase", "--components=main", NULL });
	if (in->packages.n) {
		char *list = strvec_join(&in->packages, ",");

		strvec_pushf(&argv, "--include=%s", list);
		free(list);
	}
	strvec_pushv(&argv, (const char *const[]){ in->release, root, in->mirror, NULL });
	r->on_line = on_debootstrap_line;
	ap_progress(r, "bootstrap", 0.01);
	rc = ap_run(r, (const char *const *)argv.v, (const char *const[]){ "LC_ALL=C", NULL });
	r->on_line = on_plain_line;
	r->steps = steps;
	r->hook = 0;
	strvec_clear(&argv);
	for (size_t i = 0; rc == OK && i < steps->n; i++) {
		const struct step *st = &steps->v[i];
		struct strvec cmd = STRVEC_INIT;
		const char *dst;
		char *target;

		begin_step(r);
		switch (st->kind) {
		case STEP_RUN:
		case STEP_RUN_NOBODY:
			strvec_push(&cmd, "chroot");
			if (st->kind == STEP_RUN_NOBODY)
				strvec_push(&cmd, "--userspec=" NOBODY ":" NOBODY);
			strvec_push(&cmd, root);
			strvec_pushv(&cmd, (const char *const *)st->args.v);
			rc = ap_run(r, (const char *const *)cmd.v,
				    (const char *const[]){ "LC_ALL=C", NULL });
			break;
		case STEP_SYNC_IN:
			target = path_join(root, st->args.v[1]);
			rc = copy_one(st->args.v[0], target);
			free(target);
			break;
		case STEP_COPY_IN:
			dst = st->args.v[st->args.n - 1];
			for (size_t j = 0; rc == OK && j + 1 < st->args.n; j++) {
				const char *base = strrchr(st->args.v[j], '/');
				char *d = path_join(root, dst);

				target = path_join(d, base ? base + 1 : st->args.v[j]);
				rc = copy_one(st->args.v[j], target);
				free(target);
				free(d);
			}
			break;
		}
		strvec_clear(&cmd);
	}
	if (rc == OK) {
		struct strvec cmd = STRVEC_INIT;

		strvec_pushv(&cmd,
			     (const char *const[]){ "chroot", root, "apt-get", "clean", NULL });
		rc = ap_run(r, (const char *const *)cmd.v, NULL);
		strvec_clear(&cmd);
	}
	if (rc == OK) {
		/* what mmdebstrap's cleanup does: no package lists in the image */
		char *lists = path_join(root, "var/lib/apt/lists");
		DIR *d = opendir(lists);
		struct dirent *de;

		while (d && rc == OK && (de = readdir(d))) {
			char *p;

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
			    !strcmp(de->d_name, "partial") || !strcmp(de->d_name, "lock"))
				continue;
			p = path_join(lists, de->d_name);
			rc = remove_tree(p);
			free(p);
		}
		if (d)
			closedir(d);
		free(lists);
	}
	r->steps = NULL;
	return rc;
}

/* mkfs.ext4 -d of root into image, sized from what root uses. */
static enum status
make_image(struct runner *r, const struct tools *t, const char *root, const char *image)
{
	struct strvec argv = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	unsigned long long kib = 0, mib;
	char size[32];
	enum status rc;

	ap_progress(r, "image", 0.92);
	if (t->unshare)
		strvec_pushv(&argv,
			     (const char *const[]){ t->bootstrap, "--unshare-helper", NULL });
	strvec_pushv(&argv, (const char *const[]){ t->du, "-s", "-x", "-k", root, NULL });
	rc = ap_run_capture(r, (const char *const *)argv.v, &out);
	strvec_clear(&argv);
	if (rc == OK && sscanf(out.buf, "%llu", &kib) != 1)
		rc = error(ERR_PARSE, "cannot read du's output '%s'", out.buf);
	if (rc != OK)
		goto out;
	mib = kib * 3 / 2 / 1024 + HEADROOM_MIB;
	snprintf(size, sizeof(size), "%lluM", mib);
	if (t->unshare)
		strvec_pushv(&argv,
			     (const char *const[]){ t->bootstrap, "--unshare-helper", NULL });
	strvec_pushv(&argv, (const char *const[]){ t->mkfs, "-q", "-F", "-T", "default", "-b",
						   "4096", "-m", "0", "-L", APPLIANCE_LABEL, "-d",
						   root, image, size, NULL });
	rc = ap_run_capture(r, (const char *const *)argv.v, &out);
	strvec_clear(&argv);
	if (rc != OK)
		rc = error_prefix(rc, "making the image");
	else
		ap_progress(r, "image", 0.99);
out:
	strbuf_release(&out);
	return rc;
}

enum status
ap_build(struct runner *r, struct inputs *in, const char *cache, struct appliance *out)
{
	char *final = path_join(cache, in->key);
	char *tmp = xasprintf("%s/%s.tmp.%ld", cache, in->key, (long)getpid());
	char *root = path_join(tmp, "root"), *stage = path_join(tmp, "stage");
	char *fstests = path_join(tmp, "fstests"), *image = path_join(tmp, "root.img");
	char *log = path_join(tmp, "build.log");
	char *failed_log = xasprintf("%s/%s.failed.log", cache, in->key);
	struct steps steps = { 0 };
	uint64_t start = loop_now_ms();
	struct stat st;
	enum status rc;

	rc = mkdir_p(tmp, 0755);
	if (rc != OK)
		goto out;
	r->logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_APPEND, 0644);
	rc = write_stage_files(in, stage);
	if (rc == OK)
		rc = stage_fstests(r, in, tmp, fstests);
	if (rc != OK)
		goto fail;
	if (in->is_url) {
		/* now that it is unpacked: is there something to build? */
		in->build_fstests = appliance_has_default_target(fstests);
	}
	make_steps(in, stage, fstests, &steps);
	r->build_units = in->build_fstests ? appliance_build_units(fstests) : 0;
	if (in->tools.tool == TOOL_DEBOOTSTRAP)
		rc = bootstrap_debootstrap(r, in, &steps, root);
	else
		rc = bootstrap_mmdebstrap(r, in, &steps, root);
	if (rc != OK)
		goto fail;
	rc = make_image(r, &in->tools, root, image);
	if (rc != OK)
		goto fail;
	rc = ap_remove_build(r, &in->tools, root);
	if (rc == OK)
		rc = remove_tree(stage);
	if (rc == OK)
		rc = remove_tree(fstests);
	if (rc != OK)
		goto fail;
	if (stat(image, &st) < 0) {
		rc = error(ERR_IO, "cannot stat '%s': %s", image, strerror(errno));
		goto fail;
	}
	rc = ap_meta_write(tmp, in, (double)(loop_now_ms() - start) / 1000.0, (uint64_t)st.st_size,
			   (uint64_t)st.st_blocks * 512);
	if (rc != OK)
		goto fail;
	if (path_exists(final)) {
		/* --force: the new build replaces the old one */
		char *old = xasprintf("%s.old.%ld", final, (long)getpid());

		if (rename(final, old) == 0)
			remove_tree(old);
		free(old);
	}
	if (rename(tmp, final) < 0) {
		rc = error(ERR_IO, "cannot rename '%s' to '%s': %s", tmp, final, strerror(errno));
		goto fail;
	}
	unlink(failed_log);
	rc = ap_meta_read(final, out);
	goto out;
fail : {
	enum status code = rc;
	char *msg = xstrdup(error_msg());

	if (r->logfd >= 0) {
		close(r->logfd);
		r->logfd = -1;
	}
	if (code == ERR_INTERRUPTED || r->interrupted) {
		unlink(failed_log);
		ap_remove_build(r, &in->tools, tmp);
		rc = error(ERR_INTERRUPTED,
			   "the appliance build was interrupted; nothing of it was kept");
	} else {
		bool kept = rename(log, failed_log) == 0;

		ap_remove_build(r, &in->tools, tmp);
		rc = error(code, "building the appliance failed: %s%s%s", msg,
			   kept ? "\nthe whole log: " : "", kept ? failed_log : "");
	}
	free(msg);
}
out:
	steps_release(&steps);
	free(final);
	free(tmp);
	free(root);
	free(stage);
	free(fstests);
	free(image);
	free(log);
	free(failed_log);
	return rc;
}
