/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The appliance cache: metadata, locks, stale builds, list and remove.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>

#include "core/paths.h"
#include "rootfs/appliance_int.h"

/* ---- the cache ---- */

enum status
ap_cache_dir(char **out)
{
	return fswb_dir_make(DIR_CACHE, "appliances", out);
}

void
appliance_release(struct appliance *a)
{
	free(a->key);
	free(a->id);
	free(a->dir);
	free(a->image);
	free(a->release);
	free(a->mirror);
	free(a->fstests_src);
	free(a->fstests_rev);
	free(a->tool);
	free(a->arch);
	memset(a, 0, sizeof(*a));
}

static char *
json_str_dup(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? xstrdup(s) : NULL;
}

/* Read DIR/appliance.json into *a. */
enum status
ap_meta_read(const char *dir, struct appliance *a)
{
	char *path = path_join(dir, "appliance.json");
	char *text = NULL;
	json_t *root = NULL, *f;
	json_error_t jerr;
	enum status rc;

	memset(a, 0, sizeof(*a));
	rc = read_file(path, MAX_META, &text, NULL);
	if (rc != OK)
		goto out;
	root = json_loads(text, 0, &jerr);
	if (!root || !json_is_object(root)) {
		rc = error(ERR_PARSE, "'%s' line %d: %s", path, jerr.line, jerr.text);
		goto out;
	}
	a->key = json_str_dup(root, "key");
	if (!a->key || !ap_is_hex(a->key, 64)) {
		rc = error(ERR_PARSE, "'%s' has no key", path);
		goto out;
	}
	a->id = xstrndup(a->key, 12);
	a->dir = xstrdup(dir);
	a->image = path_join(dir, "root.img");
	a->release = json_str_dup(root, "release");
	a->mirror = json_str_dup(root, "mirror");
	a->tool = json_str_dup(root, "tool");
	a->arch = json_str_dup(root, "arch"); /* NULL in an appliance made before it was kept */
	f = json_object_get(root, "fstests");
	if (json_is_object(f)) {
		a->fstests_src = json_str_dup(f, "source");
		a->fstests_rev = json_str_dup(f, "revision");
	}
	a->image_size = (uint64_t)json_integer_value(json_object_get(root, "image_size"));
	a->image_used = (uint64_t)json_integer_value(json_object_get(root, "image_used"));
	a->build_seconds = json_number_value(json_object_get(root, "build_seconds"));
	a->built = (int64_t)json_integer_value(json_object_get(root, "built"));
	a->packages = (unsigned)json_array_size(json_object_get(root, "packages"));
out:
	if (rc != OK)
		appliance_release(a);
	json_decref(root);
	free(text);
	free(path);
	return rc;
}

enum status
ap_meta_write(const char *dir, const struct inputs *in, double seconds, uint64_t size,
	      uint64_t used)
{
	json_t *o = json_object(), *pk = json_array(), *f = json_object();
	char *path = path_join(dir, "appliance.json");
	char *text;
	enum status rc;

	for (size_t i = 0; i < in->packages.n; i++)
		json_array_append_new(pk, json_string(in->packages.v[i]));
	json_object_set_new(o, "format", json_integer(APPLIANCE_FORMAT));
	json_object_set_new(o, "key", json_string(in->key));
	json_object_set_new(o, "release", json_string(in->release));
	json_object_set_new(o, "mirror", json_string(in->mirror));
	json_object_set_new(o, "arch", json_string(in->arch));
	json_object_set_new(
		o, "tool",
		json_string(in->tools.tool == TOOL_DEBOOTSTRAP ? "debootstrap" : "mmdebstrap"));
	json_object_set_new(o, "mode",
			    json_string(in->tools.tool == TOOL_DEBOOTSTRAP ? "root"
					: in->tools.unshare		   ? "unshare"
									   : "root"));
	json_object_set_new(o, "packages", pk);
	json_object_set_new(f, "source", json_string(in->src));
	json_object_set_new(f, "revision", json_string(in->rev));
	json_object_set_new(f, "built", json_boolean(in->build_fstests));
	json_object_set_new(o, "fstests", f);
	json_object_set_new(o, "agent", json_string(in->agent_digest));
	json_object_set_new(o, "built", json_integer((json_int_t)time(NULL)));
	json_object_set_new(o, "build_seconds", json_real(seconds));
	json_object_set_new(o, "image", json_string("root.img"));
	json_object_set_new(o, "image_size", json_integer((json_int_t)size));
	json_object_set_new(o, "image_used", json_integer((json_int_t)used));
	text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!text)
		BUG("cannot encode appliance.json");
	{
		size_t len = strlen(text);
		char *withnl = xasprintf("%s\n", text);

		rc = write_file_atomic(path, withnl, len + 1, 0644);
		free(withnl);
	}
	free(text);
	free(path);
	return rc;
}

bool
ap_complete(const char *dir)
{
	char *img = path_join(dir, "root.img");
	char *meta = path_join(dir, "appliance.json");
	bool ok = path_exists(img) && path_exists(meta);

	free(img);
	free(meta);
	return ok;
}

/* Lock KEY.lock; waits (in the loop) while another process holds it. */
enum status
ap_lock_key(struct runner *r, const char *cache, const char *key, int *fd_out, bool wait)
{
	char *path = xasprintf("%s/%s.lock", cache, key);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	bool said = false;

	*fd_out = -1;
	if (fd < 0) {
		enum status rc = error(ERR_IO, "cannot open '%s': %s", path, strerror(errno));

		free(path);
		return rc;
	}
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno != EWOULDBLOCK && errno != EINTR) {
			enum status rc =
				error(ERR_IO, "cannot lock '%s': %s", path, strerror(errno));

			close(fd);
			free(path);
			return rc;
		}
		if (!wait) {
			close(fd);
			free(path);
			return error(ERR_BUSY, "appliance %.12s is being built by another fswb",
				     key);
		}
		if (!said && r) {
			ap_progress(r, "waiting for another fswb building this appliance", -1);
			said = true;
		}
		if (r && ap_cancelled(r)) {
			close(fd);
			free(path);
			return error(ERR_INTERRUPTED, "interrupted while waiting for another fswb");
		}
		if (r && !loop_dispatching(r->loop)) /* a worker's or a command's own wait */
			loop_run_once(r->loop, LOCK_POLL_MS);
		else
			usleep(LOCK_POLL_MS * 1000);
	}
	free(path);
	*fd_out = fd;
	return OK;
}

/* The mount points below dir, deepest first (from /proc/self/mounts). */
static void
mounts_below(const char *dir, struct strvec *out)
{
	char *text = NULL;
	struct strvec lines = STRVEC_INIT;
	char *prefix = xasprintf("%s/", dir);

	if (read_file("/proc/self/mounts", MAX_SOURCES, &text, NULL) != OK) {
		error_clear();
		free(prefix);
		return;
	}
	strvec_split(&lines, text, "\n");
	for (size_t i = lines.n; i-- > 0;) {
		struct strvec w = STRVEC_INIT;

		strvec_split(&w, lines.v[i], " ");
		if (w.n >= 2 && (str_startswith(w.v[1], prefix) || !strcmp(w.v[1], dir)))
			strvec_push(out, w.v[1]);
		strvec_clear(&w);
	}
	strvec_clear(&lines);
	free(text);
	free(prefix);
}

/* Remove a build directory: unmount what a killed mmdebstrap left, then rm. */
enum status
ap_remove_build(struct runner *r, const struct tools *t, const char *dir)
{
	struct strvec mounts = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	enum status rc;
	bool saved = r->interrupted;
	const bool *saved_cancel = r->cancel;

	if (!path_exists(dir))
		return OK;
	/* cleaning up must run even when cancelled */
	r->interrupted = false;
	r->cancel = NULL;
	mounts_below(dir, &mounts);
	for (size_t i = 0; i < mounts.n && geteuid() == 0; i++)
		ap_run_capture(r, (const char *const[]){ "umount", "-l", mounts.v[i], NULL }, &out);
	strvec_clear(&mounts);
	if (t->tool == TOOL_MMDEBSTRAP && t->unshare) {
		rc = ap_run_capture(r,
				    (const char *const[]){ t->bootstrap, "--unshare-helper", "rm",
							   "-rf", "--one-file-system", dir, NULL },
				    &out);
		error_clear();
	}
	rc = remove_tree(dir);
	if (rc != OK)
		rc = error_prefix(rc, "cannot remove the unfinished build '%s'", dir);
	r->interrupted = saved;
	r->cancel = saved_cancel;
	strbuf_release(&out);
	return rc;
}

/*
 * Build leftovers: every KEY.tmp.* of key (stale, since we hold its lock),
 * and those of other keys whose process is gone and whose lock is free (a
 * fswb that was killed outright).
 */
void
ap_remove_stale(struct runner *r, const struct tools *t, const char *cache, const char *key)
{
	DIR *d = opendir(cache);
	struct dirent *de;
	struct strvec stale = STRVEC_INIT;

	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *tmp = strstr(de->d_name, ".tmp.");
		char *end;
		long pid;

		if (!tmp || tmp - de->d_name != 64 || strspn(de->d_name, "0123456789abcdef") != 64)
			continue;
		if (!strncmp(de->d_name, key, 64)) {
			strvec_push(&stale, de->d_name);
			continue;
		}
		errno = 0;
		pid = strtol(tmp + 5, &end, 10);
		if (*end || pid <= 0 || (kill((pid_t)pid, 0) < 0 && errno == ESRCH))
			strvec_push(&stale, de->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < stale.n; i++) {
		char *p = path_join(cache, stale.v[i]);
		char *k = xstrndup(stale.v[i], 64);
		int fd = -1;

		if (!strcmp(k, key) || ap_lock_key(NULL, cache, k, &fd, false) == OK) {
			if (ap_remove_build(r, t, p) != OK)
				error_clear();
		}
		error_clear();
		if (fd >= 0)
			close(fd);
		free(k);
		free(p);
	}
	strvec_clear(&stale);
}

/* ---- list and remove ---- */

static int
cmp_built_desc(const void *a, const void *b)
{
	const struct appliance *x = a, *y = b;

	if (x->built != y->built)
		return x->built < y->built ? 1 : -1;
	return strcmp(x->key, y->key);
}

enum status
appliance_list(struct appliance **out, size_t *n)
{
	char *cache = NULL;
	DIR *d;
	struct dirent *de;
	struct appliance *v = NULL;
	size_t alloc = 0;
	enum status rc;

	*out = NULL;
	*n = 0;
	rc = ap_cache_dir(&cache);
	if (rc != OK)
		return rc;
	d = opendir(cache);
	if (!d) {
		rc = error(ERR_IO, "cannot read '%s': %s", cache, strerror(errno));
		free(cache);
		return rc;
	}
	while ((de = readdir(d))) {
		char *dir;
		struct appliance a;

		if (strlen(de->d_name) != 64 || !ap_is_hex(de->d_name, 64))
			continue;
		dir = path_join(cache, de->d_name);
		if (ap_complete(dir) && ap_meta_read(dir, &a) == OK) {
			ALLOC_GROW(v, *n + 1, alloc);
			v[(*n)++] = a;
		}
		error_clear();
		free(dir);
	}
	closedir(d);
	if (*n > 1)
		qsort(v, *n, sizeof(*v), cmp_built_desc);
	*out = v;
	free(cache);
	return OK;
}

void
appliance_list_free(struct appliance *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		appliance_release(&v[i]);
	free(v);
}

static enum status
remove_key(const char *cache, const char *key)
{
	char *dir = path_join(cache, key);
	char *failed = xasprintf("%s/%s.failed.log", cache, key);
	int fd;
	enum status rc = ap_lock_key(NULL, cache, key, &fd, false);

	if (rc == OK) {
		rc = remove_tree(dir);
		unlink(failed);
		close(fd);
	}
	free(dir);
	free(failed);
	return rc;
}

enum status
appliance_remove(const char *id)
{
	char *cache = NULL;
	DIR *d;
	struct dirent *de;
	struct strvec match = STRVEC_INIT;
	enum status rc;

	if (!id || strlen(id) < 4 || !ap_is_hex(id, 4) || strlen(id) > 64)
		return error(ERR_INVALID,
			     "'%s' is not an appliance id (4 to 64 hex digits, as 'fswb appliance "
			     "list' shows)",
			     id ? id : "");
	rc = ap_cache_dir(&cache);
	if (rc != OK)
		return rc;
	d = opendir(cache);
	if (d) {
		while ((de = readdir(d)))
			if (strlen(de->d_name) == 64 && ap_is_hex(de->d_name, 64) &&
			    str_startswith(de->d_name, id))
				strvec_push(&match, de->d_name);
		closedir(d);
	}
	if (!match.n)
		rc = error(ERR_NOTFOUND, "no appliance '%s' in '%s'; see 'fswb appliance list'", id,
			   cache);
	else if (match.n > 1)
		rc = error(ERR_INVALID, "'%s' names %zu appliances; give more of its id", id,
			   match.n);
	else
		rc = remove_key(cache, match.v[0]);
	strvec_clear(&match);
	free(cache);
	return rc;
}

enum status
appliance_remove_all(unsigned *removed)
{
	char *cache = NULL;
	DIR *d;
	struct dirent *de;
	struct strvec names = STRVEC_INIT;
	enum status rc, first = OK;
	char msg[1024] = "";

	*removed = 0;
	rc = ap_cache_dir(&cache);
	if (rc != OK)
		return rc;
	d = opendir(cache);
	if (d) {
		while ((de = readdir(d)))
			if (de->d_name[0] != '.')
				strvec_push(&names, de->d_name);
		closedir(d);
	}
	for (size_t i = 0; i < names.n; i++) {
		const char *name = names.v[i];
		char *p = path_join(cache, name);

		if (strlen(name) == 64 && ap_is_hex(name, 64)) {
			rc = remove_key(cache, name);
			if (rc == OK)
				(*removed)++;
		} else if (str_endswith(name, ".failed.log")) {
			rc = unlink(p) == 0 ? OK : error(ERR_IO, "cannot remove '%s'", p);
		} else if (strstr(name, ".tmp.") || strstr(name, ".old.")) {
			/* a leftover, unless its build is still running */
			char *key = xstrndup(name, strcspn(name, "."));
			int fd;

			rc = ap_lock_key(NULL, cache, key, &fd, false);
			if (rc == OK) {
				rc = remove_tree(p);
				close(fd);
			}
			free(key);
		} else {
			rc = OK;
		}
		if (rc != OK && first == OK) {
			first = rc;
			snprintf(msg, sizeof(msg), "%s", error_msg());
		}
		free(p);
	}
	strvec_clear(&names);
	free(cache);
	if (first != OK)
		return error(first, "%s", msg);
	return OK;
}
