/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/paths.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"

static char *builtin_srcdir;
static char *builtin_builddir;
static char *builtin_sharedir;

char *
path_join(const char *a, const char *b)
{
	size_t n = strlen(a);

	if (!n)
		return xstrdup(b);
	while (*b == '/')
		b++;
	if (!*b)
		return xstrdup(a);
	if (a[n - 1] == '/')
		return xasprintf("%s%s", a, b);
	return xasprintf("%s/%s", a, b);
}

static char *
xdg_dir(const char *env, const char *fallback)
{
	const char *v = getenv(env);
	const char *home;

	if (v && v[0] == '/')
		return path_join(v, "fswb");
	home = getenv("HOME");
	if (!home || !*home)
		home = "/";
	return xasprintf("%s/%s/fswb", strcmp(home, "/") ? home : "", fallback);
}

char *
fswb_dir(enum fswb_dir which)
{
	static const char *const sub[] = { "config", "cache", "data" };
	const char *home = getenv("FSWB_HOME");
	const char *cache = getenv("FSWB_CACHE_DIR");

	if (which == DIR_CACHE && cache && *cache)
		return xstrdup(cache);
	if (home && *home)
		return path_join(home, sub[which]);
	switch (which) {
	case DIR_CONFIG:
		return xdg_dir("XDG_CONFIG_HOME", ".config");
	case DIR_CACHE:
		return xdg_dir("XDG_CACHE_HOME", ".cache");
	case DIR_DATA:
		return xdg_dir("XDG_DATA_HOME", ".local/share");
	}
	BUG("bad fswb_dir %d", (int)which);
}

enum status
fswb_dir_make(enum fswb_dir which, const char *sub, char **out)
{
	char *base = fswb_dir(which);
	char *p = sub && *sub ? path_join(base, sub) : xstrdup(base);
	enum status rc;

	/* the data directory holds what guests sent back: the user's alone */
	rc = which == DIR_DATA ? mkdir_p(base, 0700) : OK;
	if (rc == OK && which == DIR_DATA && chmod(base, 0700) < 0)
		rc = error(ERR_IO, "cannot make '%s' private (0700): %s", base, strerror(errno));
	free(base);
	if (rc == OK)
		rc = mkdir_p(p, 0755);
	if (rc != OK) {
		free(p);
		return rc;
	}
	*out = p;
	return OK;
}

void
paths_set_builtin(const char *srcdir, const char *builddir, const char *sharedir)
{
	free(builtin_srcdir);
	free(builtin_builddir);
	free(builtin_sharedir);
	builtin_srcdir = srcdir ? xstrdup(srcdir) : NULL;
	builtin_builddir = builddir ? xstrdup(builddir) : NULL;
	builtin_sharedir = sharedir ? xstrdup(sharedir) : NULL;
}

static bool
has_profiles(const char *dir)
{
	char *p = path_join(dir, "profiles/fs");
	bool ok = path_is_dir(p);

	free(p);
	return ok;
}

bool
path_below(const char *path, const char *dir)
{
	char *rp = realpath(path, NULL), *rd = realpath(dir, NULL);
	size_t n = rd ? strlen(rd) : 0;
	bool below = rp && rd && !strncmp(rp, rd, n) && (rp[n] == '/' || (n == 1 && rd[0] == '/'));

	free(rp);
	free(rd);
	return below;
}

char *
datadir_for(const char *exe)
{
	char *real = exe ? realpath(exe, NULL) : NULL;
	char *slash, *dir = NULL;

	if (builtin_srcdir && builtin_builddir && real && path_below(real, builtin_builddir) &&
	    has_profiles(builtin_srcdir)) {
		free(real);
		return xstrdup(builtin_srcdir);
	}
	/* PREFIX/bin/fswb reads PREFIX/share/fswb, wherever PREFIX is now */
	if (real && (slash = strrchr(real, '/'))) {
		*slash = '\0';
		slash = strrchr(real, '/');
		if (slash) {
			*slash = '\0';
			dir = xasprintf("%s/share/fswb", real);
			if (!has_profiles(dir)) {
				free(dir);
				dir = NULL;
			}
		}
	}
	free(real);
	if (dir)
		return dir;
	if (builtin_sharedir)
		return xstrdup(builtin_sharedir);
	return xstrdup("/usr/local/share/fswb");
}

char *
fswb_datadir(void)
{
	/* found once, at the first call (main's): a fswb rebuilt or upgraded
	 * while it runs leaves /proc/self/exe pointing at a deleted file */
	static char *found;
	const char *env = getenv("FSWB_DATADIR");

	if (env && *env)
		return xstrdup(env);
	if (!found)
		found = datadir_for("/proc/self/exe");
	return xstrdup(found);
}

bool
path_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

bool
path_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *
which_in(const char *prog, const char *dirs_text)
{
	struct strvec dirs = STRVEC_INIT;
	char *found = NULL;

	strvec_split(&dirs, dirs_text, ":");
	for (size_t i = 0; !found && i < dirs.n; i++) {
		char *p = path_join(dirs.v[i], prog);

		if (!access(p, X_OK) && !path_is_dir(p))
			found = p;
		else
			free(p);
	}
	strvec_clear(&dirs);
	return found;
}

char *
path_which(const char *prog, const char *path, const char *extra)
{
	char *found;

	if (strchr(prog, '/'))
		return !access(prog, X_OK) && !path_is_dir(prog) ? xstrdup(prog) : NULL;
	if (!path)
		path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	found = which_in(prog, path);
	if (!found && extra && *extra)
		found = which_in(prog, extra);
	return found;
}

bool
path_has_program(const char *prog)
{
	char *p = path_which(prog, NULL, NULL);

	free(p);
	return p != NULL;
}

enum status
mkdir_p(const char *path, mode_t mode)
{
	char *p = xstrdup(path);
	enum status rc = OK;

	for (char *s = p + 1;; s++) {
		if (*s == '/' || !*s) {
			char c = *s;

			*s = '\0';
			if (mkdir(p, mode) < 0 && errno != EEXIST) {
				rc = error(ERR_IO, "cannot create directory '%s': %s", p,
					   strerror(errno));
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	if (rc == OK && !path_is_dir(path))
		rc = error(ERR_IO, "'%s' exists and is not a directory", path);
	free(p);
	return rc;
}

static enum status
remove_at(int parent, const char *name, dev_t dev)
{
	struct stat st;
	enum status rc = OK;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT
			       ? OK
			       : error(ERR_IO, "cannot stat '%s': %s", name, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		int fd;
		DIR *d;
		struct dirent *de;

		if (st.st_dev != dev)
			return error(ERR_IO, "'%s' is a mount point; not removing it", name);
		fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return error(ERR_IO, "cannot open '%s': %s", name, strerror(errno));
		d = fdopendir(fd);
		if (!d) {
			close(fd);
			return error(ERR_IO, "cannot read '%s': %s", name, strerror(errno));
		}
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (remove_at(dirfd(d), de->d_name, dev) != OK)
				rc = ERR_IO;
		}
		closedir(d);
		if (rc == OK && unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
			rc = error(ERR_IO, "cannot remove '%s': %s", name, strerror(errno));
		return rc;
	}
	if (unlinkat(parent, name, 0) < 0 && errno != ENOENT)
		return error(ERR_IO, "cannot remove '%s': %s", name, strerror(errno));
	return OK;
}

enum status
remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT
			       ? OK
			       : error(ERR_IO, "cannot stat '%s': %s", path, strerror(errno));
	return remove_at(AT_FDCWD, path, st.st_dev);
}

/* The PID of a NAME.tmp.PID name, or 0. */
static pid_t
tmp_owner(const char *name)
{
	const char *t = strstr(name, ".tmp."), *next;
	long pid;
	char *end;

	if (!t)
		return 0;
	while ((next = strstr(t + 1, ".tmp.")))
		t = next;
	t += 5;
	if (*t < '1' || *t > '9')
		return 0;
	errno = 0;
	pid = strtol(t, &end, 10);
	if (*end || errno || pid <= 0 || (pid_t)pid != pid)
		return 0;
	return (pid_t)pid;
}

unsigned
reap_stale_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct strvec gone = STRVEC_INIT;
	unsigned n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		pid_t pid = tmp_owner(de->d_name);

		if (pid && pid != getpid() && kill(pid, 0) < 0 && errno == ESRCH)
			strvec_push(&gone, de->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < gone.n; i++) {
		char *p = path_join(dir, gone.v[i]);

		if (remove_tree(p) == OK)
			n++;
		else
			error_clear();
		free(p);
	}
	strvec_clear(&gone);
	return n;
}

/* reap_stale_tmp() of every directory below dir (one level), and of dir. */
static unsigned
reap_below(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct strvec subs = STRVEC_INIT;
	unsigned n = reap_stale_tmp(dir);

	while (d && (de = readdir(d))) {
		struct stat st;
		char *p;

		if (de->d_name[0] == '.')
			continue;
		p = path_join(dir, de->d_name);
		if (!lstat(p, &st) && S_ISDIR(st.st_mode))
			strvec_push(&subs, p);
		free(p);
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < subs.n; i++)
		n += reap_stale_tmp(subs.v[i]);
	strvec_clear(&subs);
	return n;
}

unsigned
paths_reap_stale(void)
{
	/* where fswb writes NAME.tmp.PID; the appliances reap their own, under their locks */
	static const struct {
		enum fswb_dir which;
		const char *sub;
		bool below;
	} places[] = {
		{ DIR_CONFIG, "", false },	  { DIR_DATA, "", false },
		{ DIR_DATA, "leases", false },	  { DIR_DATA, "runs", true },
		{ DIR_CACHE, "", false },	  { DIR_CACHE, "fstests-git", false },
		{ DIR_CACHE, "initramfs", true }, { DIR_CACHE, "kernels", true },
		{ DIR_CACHE, "qemu", false },	  { DIR_CACHE, "import", false },
	};
	unsigned n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(places); i++) {
		char *base = fswb_dir(places[i].which);
		char *dir = path_join(base, places[i].sub);

		n += places[i].below ? reap_below(dir) : reap_stale_tmp(dir);
		free(dir);
		free(base);
	}
	return n;
}

bool
write_fd_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ENOSPC;
			return false;
		}
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* Read fd (closed here) whole; path names it in messages. */
static enum status
read_fd(int fd, const char *path, size_t max, char **out, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;
	enum status rc = OK;

	for (;;) {
		ssize_t n;

		strbuf_grow(&sb, 65536);
		n = read(fd, sb.buf + sb.len, sb.alloc - sb.len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = error(ERR_IO, "cannot read '%s': %s", path, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		sb.len += (size_t)n;
		sb.buf[sb.len] = '\0';
		if (sb.len > max) {
			rc = error(ERR_LIMIT, "'%s' is larger than %zu bytes", path, max);
			break;
		}
	}
	close(fd);
	if (rc != OK) {
		strbuf_release(&sb);
		return rc;
	}
	if (len)
		*len = sb.len;
	*out = strbuf_detach(&sb);
	return OK;
}

enum status
read_file(const char *path, size_t max, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return error(errno == ENOENT ? ERR_NOTFOUND : ERR_IO, "cannot open '%s': %s", path,
			     strerror(errno));
	return read_fd(fd, path, max, out, len);
}

/* rel is relative, without empty, "." or ".." components. */
static bool
rel_path_ok(const char *rel)
{
	const char *p = rel;

	if (!*rel || *rel == '/')
		return false;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (!n || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p == '/' && !*++p)
			return false;
	}
	return true;
}

int
openat_beneath(int dirfd, const char *rel, int flags, mode_t mode, bool make_dirs)
{
	char *copy, *comp, *slash;
	int fd = dirfd, next;

	if (!rel_path_ok(rel)) {
		errno = EINVAL;
		return -1;
	}
	copy = xstrdup(rel);
	comp = copy;
	while ((slash = strchr(comp, '/'))) {
		*slash = '\0';
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && make_dirs &&
		    (!mkdirat(fd, comp, 0755) || errno == EEXIST))
			next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd != dirfd) {
			int saved = errno;

			close(fd);
			errno = saved;
		}
		if (next < 0) {
			free(copy);
			return -1;
		}
		fd = next;
		comp = slash + 1;
	}
	if (make_dirs && (flags & O_DIRECTORY) && mkdirat(fd, comp, 0755) && errno != EEXIST)
		next = -1;
	else
		next = openat(fd, comp, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd != dirfd) {
		int saved = errno;

		close(fd);
		errno = saved;
	}
	free(copy);
	return next;
}

int
open_beneath(const char *dir, const char *rel, int flags, mode_t mode)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
	int saved;

	if (dfd < 0)
		return -1;
	fd = openat_beneath(dfd, rel, flags, mode, false);
	saved = errno;
	close(dfd);
	errno = saved;
	return fd;
}

enum status
read_file_beneath(const char *dir, const char *rel, size_t max, char **out, size_t *len)
{
	int fd = open_beneath(dir, rel, O_RDONLY | O_NONBLOCK, 0);
	struct stat st;

	if (fd < 0)
		return error(errno == ENOENT ? ERR_NOTFOUND : ERR_IO, "cannot open '%s/%s': %s%s",
			     dir, rel, strerror(errno),
			     errno == ELOOP || errno == ENOTDIR ? " (a symlink is not followed)"
								: "");
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return error(ERR_INVALID, "'%s/%s' is not a regular file: left out", dir, rel);
	}
	return read_fd(fd, rel, max, out, len);
}

bool
file_beneath(const char *dir, const char *rel)
{
	int fd = open_beneath(dir, rel, O_PATH, 0);
	struct stat st;
	bool reg;

	if (fd < 0)
		return false;
	reg = !fstat(fd, &st) && S_ISREG(st.st_mode);
	close(fd);
	return reg;
}

bool
dir_beneath(const char *dir, const char *rel)
{
	int fd = open_beneath(dir, rel, O_PATH | O_DIRECTORY, 0);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static enum status
fsync_dir_of(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	int fd;

	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return OK; /* best effort: the rename itself is done */
	fsync(fd);
	close(fd);
	return OK;
}

enum status
write_file_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	const char *p = data;
	int fd;
	enum status rc = OK;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		rc = error(ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
		free(tmp);
		return rc;
	}
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = error(ERR_IO, "cannot write '%s': %s", path, strerror(errno));
			goto out;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) < 0) {
		rc = error(ERR_IO, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		rc = error(ERR_IO, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		rc = error(ERR_IO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
		goto out;
	}
	fsync_dir_of(path);
out:
	if (fd >= 0)
		close(fd);
	if (rc != OK)
		unlink(tmp);
	free(tmp);
	return rc;
}

bool
binfmt_runs(const char *machine)
{
	char *path = xasprintf("/proc/sys/fs/binfmt_misc/qemu-%s", machine), *text = NULL;
	size_t len;
	bool on = read_file(path, 4096, &text, &len) == OK && !strncmp(text, "enabled", 7);

	error_clear();
	free(text);
	free(path);
	return on;
}
