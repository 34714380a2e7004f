/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The only caller of the backend table, and the leases. */
#include "backends/backend.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/paths.h"
#include "core/spawn.h"

static const struct backend_ops *const all[] = { &qemu_backend, &libvirt_backend, &gce_backend,
						 &ssh_backend,	&adb_backend,	  &stdio_backend,
						 NULL };

static const struct arch_info arches[] = {
	{ "x86_64", "x86_64", "ttyS0" },
	{ "arm64", "aarch64", "ttyAMA0" },
};

struct session {
	const struct backend_ops *ops;
	void *priv;
	struct lease *lease;
};

struct backend_run {
	const struct backend_ops *ops;
	void *priv;
	struct lease *lease;
};

struct lease {
	char *path; /* the lease file */
	char *backend;
	struct strvec items; /* "pid N START", "path P" */
};

const struct arch_info *
arch_find(const char *name)
{
	struct utsname u;

	if (!name) {
		if (uname(&u))
			return &arches[0];
		for (size_t i = 0; i < ARRAY_SIZE(arches); i++)
			if (!strcmp(arches[i].machine, u.machine))
				return &arches[i];
		return &arches[0];
	}
	for (size_t i = 0; i < ARRAY_SIZE(arches); i++)
		if (!strcmp(arches[i].name, name))
			return &arches[i];
	return NULL;
}

/* ---- leases ---- */

/* The start time of process pid (field 22 of /proc/PID/stat), or 0 when it is gone. */
static unsigned long long
proc_start(pid_t pid)
{
	char path[64], *text = NULL, *p;
	size_t len;
	unsigned long long start = 0;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (read_file(path, 4096, &text, &len) != OK) {
		error_clear();
		return 0;
	}
	p = strrchr(text, ')'); /* the command name may hold spaces */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		start = strtoull(p + 1, NULL, 10);
	free(text);
	return start;
}

static char *
leases_dir(void)
{
	char *dir = NULL;

	if (fswb_dir_make(DIR_DATA, "leases", &dir) != OK) {
		error_clear();
		return NULL;
	}
	return dir;
}

static enum status
lease_write(struct lease *l)
{
	struct strbuf sb = STRBUF_INIT;
	enum status rc;

	strbuf_addf(&sb, "backend %s\nowner %ld %llu\n", l->backend, (long)getpid(),
		    proc_start(getpid()));
	for (size_t i = 0; i < l->items.n; i++)
		strbuf_addf(&sb, "%s\n", l->items.v[i]);
	rc = write_file_atomic(l->path, sb.buf, sb.len, 0600);
	strbuf_release(&sb);
	return rc;
}

static struct lease *
lease_new(const char *backend)
{
	static unsigned serial;
	struct lease *l;
	char *dir = leases_dir();

	if (!dir)
		return NULL;
	l = xcalloc(1, sizeof(*l));
	l->backend = xstrdup(backend);
	strvec_init(&l->items);
	l->path = xasprintf("%s/%s-%ld-%u", dir, backend, (long)getpid(), ++serial);
	free(dir);
	if (lease_write(l) != OK) {
		error_clear();
		free(l->path);
		l->path = NULL;
	}
	return l;
}

/* Everything of the lease is gone: drop the file. */
static void
lease_drop(struct lease *l)
{
	if (!l)
		return;
	if (l->path)
		unlink(l->path);
	free(l->path);
	free(l->backend);
	strvec_clear(&l->items);
	free(l);
}

/* A path a lease may hold: absolute, no "..", inside fswb's data or cache directory. */
static bool
lease_path_ok(const char *path)
{
	enum fswb_dir dirs[] = { DIR_DATA, DIR_CACHE };
	bool ok = false;

	if (path[0] != '/' || strstr(path, "/../") || str_endswith(path, "/..") ||
	    strchr(path, '\n'))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(dirs) && !ok; i++) {
		char *d = fswb_dir(dirs[i]);

		ok = d && str_startswith(path, d) && path[strlen(d)] == '/';
		free(d);
	}
	return ok;
}

enum status
lease_add_pid(struct lease *l, pid_t pid)
{
	if (!l || !l->path)
		return OK;
	strvec_pushf(&l->items, "pid %ld %llu", (long)pid, proc_start(pid));
	return lease_write(l);
}

enum status
lease_add_item(struct lease *l, const char *what)
{
	if (!*what || strchr(what, '\n'))
		BUG("lease of an item '%s'", what);
	if (!l || !l->path)
		return OK;
	strvec_pushf(&l->items, "item %s", what);
	return lease_write(l);
}

enum status
lease_drop_item(struct lease *l, const char *what)
{
	char *line;

	if (!l || !l->path)
		return OK;
	line = xasprintf("item %s", what);
	for (size_t i = 0; i < l->items.n; i++)
		if (!strcmp(l->items.v[i], line)) {
			free(l->items.v[i]);
			memmove(&l->items.v[i], &l->items.v[i + 1],
				(l->items.n - i) * sizeof(*l->items.v));
			l->items.n--;
			break;
		}
	free(line);
	return lease_write(l);
}

enum status
lease_add_path(struct lease *l, const char *path)
{
	if (!lease_path_ok(path))
		BUG("lease of '%s', outside fswb's directories", path);
	if (!l || !l->path)
		return OK;
	strvec_pushf(&l->items, "path %s", path);
	return lease_write(l);
}

/* One lease file: its lines, whether its owner still runs, and a summary line. */
static bool
lease_read(const char *file, struct strvec *lines, bool *alive, struct strbuf *summary)
{
	char *text = NULL;
	size_t len;
	long pid;
	unsigned long long start;

	if (read_file(file, 1u << 16, &text, &len) != OK) {
		error_clear();
		return false;
	}
	strvec_split(lines, text, "\n");
	free(text);
	if (lines->n < 2 || !str_startswith(lines->v[0], "backend ") ||
	    sscanf(lines->v[1], "owner %ld %llu", &pid, &start) != 2)
		return false;
	*alive = pid > 0 && start && proc_start((pid_t)pid) == start;
	strbuf_addf(summary, "%s: %s (pid %ld)", lines->v[0] + 8,
		    *alive ? "held by a running fswb" : "left by an fswb that is gone", pid);
	for (size_t i = 2; i < lines->n; i++)
		strbuf_addf(summary, ", %s", lines->v[i]);
	return true;
}

/* What leases hold: LIST (a line each), REAP (those of a gone fswb removed), HELD (items). */
enum walk { WALK_LIST, WALK_REAP, WALK_HELD };

static void
leases_walk(struct strvec *out, enum walk how, const char *backend)
{
	char *dir = leases_dir();
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *de;

	while (d && (de = readdir(d))) {
		struct strvec lines = STRVEC_INIT;
		struct strbuf sum = STRBUF_INIT;
		char *file;
		bool alive = false, ok;

		if (de->d_name[0] == '.')
			continue;
		file = path_join(dir, de->d_name);
		ok = lease_read(file, &lines, &alive, &sum);
		if (ok && how == WALK_LIST)
			strvec_push(out, sum.buf);
		if (ok && how == WALK_HELD && alive && !strcmp(lines.v[0] + 8, backend))
			for (size_t i = 2; i < lines.n; i++)
				if (str_startswith(lines.v[i], "item "))
					strvec_push(out, lines.v[i] + 5);
		if (ok && how == WALK_REAP && !alive) {
			const struct backend_ops *ops = backend_find(lines.v[0] + 8);

			for (size_t i = 2; i < lines.n; i++) {
				long pid;
				unsigned long long start;

				if (sscanf(lines.v[i], "pid %ld %llu", &pid, &start) == 2 &&
				    pid > 1 && (pid_t)pid != getpid() && start &&
				    proc_start((pid_t)pid) == start)
					kill((pid_t)pid, SIGKILL);
				else if (str_startswith(lines.v[i], "path ") &&
					 lease_path_ok(lines.v[i] + 5))
					remove_tree(lines.v[i] + 5);
				else if (str_startswith(lines.v[i], "item ") && ops && ops->reap)
					ops->reap(lines.v[i] + 5);
				error_clear();
			}
			unlink(file);
			strvec_push(out, sum.buf);
		}
		strvec_clear(&lines);
		strbuf_release(&sum);
		free(file);
	}
	if (d)
		closedir(d);
	free(dir);
}

void
backend_leases_reap(struct strvec *done)
{
	leases_walk(done, WALK_REAP, NULL);
}

void
backend_leases_list(struct strvec *out)
{
	leases_walk(out, WALK_LIST, NULL);
}

void
backend_leases_held(const char *backend, struct strvec *items)
{
	leases_walk(items, WALK_HELD, backend);
}

/* ---- the table ---- */

enum status
backends_init(void)
{
	for (size_t i = 0; all[i]; i++)
		if (all[i]->init && all[i]->init() != OK)
			return ERR_INVALID;
	return OK;
}

void
backends_cleanup(void)
{
	for (size_t i = 0; all[i]; i++)
		if (all[i]->cleanup)
			all[i]->cleanup();
}

const char *const *
backend_names(void)
{
	static const char *names[ARRAY_SIZE(all)];
	size_t n = 0;

	for (size_t i = 0; all[i]; i++)
		if (!all[i]->internal)
			names[n++] = all[i]->name;
	return names;
}

const struct backend_ops *
backend_find(const char *name)
{
	for (size_t i = 0; all[i]; i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

bool
backend_own_machine(const char *name)
{
	const struct backend_ops *ops = name ? backend_find(name) : NULL;

	return ops && !(ops->caps & (BACKEND_BOOTS_KERNEL | BACKEND_APPLIANCE)) && !ops->internal;
}

enum status
backend_check_options(const struct plan *plan)
{
	const struct backend_ops *ops = plan->backend ? backend_find(plan->backend) : NULL;

	if (!ops)
		return error(ERR_INVALID, "backend.name: no backend '%s'; use 'qemu'",
			     plan->backend ? plan->backend : "");
	for (size_t i = 0; i < plan->backend_opts.n; i++) {
		const char *kv = plan->backend_opts.v[i], *eq = strchr(kv, '=');
		size_t klen = eq ? (size_t)(eq - kv) : strlen(kv);
		const struct backend_option *o = ops->options;
		struct strbuf keys = STRBUF_INIT;
		enum status rc;

		while (o && o->key && (strlen(o->key) != klen || strncmp(o->key, kv, klen)))
			o++;
		if (o && o->key) {
			char *why;

			if (!o->check || o->check(eq + 1) == OK)
				continue;
			why = xstrdup(error_msg());
			rc = error(ERR_INVALID, "-o %.*s='%s': %s", (int)klen, kv, eq + 1, why);
			free(why);
			return rc;
		}
		for (o = ops->options; o && o->key; o++)
			strbuf_addf(&keys, "%s%s=%s", keys.len ? ", " : "", o->key, o->value);
		rc = error(ERR_INVALID, "-o %.*s: the '%s' backend takes no option '%.*s'%s%s",
			   (int)klen, kv, ops->name, (int)klen, kv,
			   keys.len ? "; it takes " : " (it takes none)", keys.len ? keys.buf : "");
		strbuf_release(&keys);
		return rc;
	}
	return OK;
}

enum status
backend_check_plan(const struct plan *plan)
{
	enum status rc = backend_check_options(plan);
	const struct backend_ops *ops = rc == OK ? backend_find(plan->backend) : NULL;

	return ops && ops->check_plan ? ops->check_plan(plan) : rc;
}

void
backend_probe_release(struct backend_probe *p)
{
	free(p->summary);
	free(p->why);
	free(p->fix);
	free(p->confirm);
	free(p->confirm_opt);
	free(p->kept);
	memset(p, 0, sizeof(*p));
}

enum status
backend_probe(const struct backend_ops *ops, const struct plan *plan, struct backend_probe *out)
{
	memset(out, 0, sizeof(*out));
	return ops->probe(plan, out);
}

void
backend_finding_add(struct backend_finding *out, size_t max, size_t *n, enum finding_state state,
		    const char *name, char *detail, char *fix)
{
	if (*n >= max) {
		free(detail);
		free(fix);
		return;
	}
	out[(*n)++] = (struct backend_finding){
		.state = state, .name = name, .detail = detail, .fix = fix
	};
}

enum status
backend_forget(const struct backend_ops *ops, const struct plan *plan, char **said)
{
	*said = NULL;
	if (!ops->forget)
		return error(ERR_UNSUPPORTED, "the %s backend keeps nothing on its machines",
			     ops->name);
	return ops->forget(plan, said);
}

size_t
backend_doctor(const struct backend_ops *ops, struct loop *loop,
	       const struct backend_doctor_opts *o, struct backend_finding *out, size_t max)
{
	return ops->doctor ? ops->doctor(loop, o, out, max) : 0;
}

enum status
backend_prepare(const struct backend_ops *ops, struct loop *loop, const struct plan *plan,
		struct backend_run **out)
{
	struct backend_run *r = xcalloc(1, sizeof(*r));
	enum status rc = OK;

	r->ops = ops;
	if (ops->prepare) {
		r->lease = lease_new(ops->name);
		rc = ops->prepare(loop, plan, r->lease, &r->priv);
	}
	if (rc != OK) {
		lease_drop(r->lease);
		free(r);
		return rc;
	}
	*out = r;
	return OK;
}

void
backend_discard(struct backend_run *r)
{
	if (!r)
		return;
	if (r->ops->discard)
		r->ops->discard(r->priv);
	lease_drop(r->lease);
	free(r);
}

char *
backend_cost(const struct backend_ops *ops, const struct plan *plan, unsigned machines,
	     double seconds)
{
	if (!(ops->caps & BACKEND_COSTS))
		return NULL;
	if (!ops->cost)
		BUG("backend '%s' costs money and says not how much", ops->name);
	return ops->cost(plan, machines, seconds);
}

enum status
backend_option_seconds(const char *value)
{
	char *end;
	unsigned long n = strtoul(value, &end, 10);

	if (!*value || *end || !n || n > 86400)
		return error(ERR_INVALID, "give seconds, 1 to 86400");
	return OK;
}

enum status
backend_option_tcg(const char *value)
{
	if (strcmp(value, "tcg"))
		return error(ERR_INVALID, "the only choice is 'tcg' (never try KVM); leave it out "
					  "to use KVM when it works");
	return OK;
}

enum status
backend_make_overlay(struct loop *loop, const char *appliance, const char *overlay)
{
	const char *argv[] = { "qemu-img", "create", "-q",	"-f",	 "qcow2", "-F",
			       "raw",	   "-b",     appliance, overlay, NULL };
	struct strbuf out = STRBUF_INIT;
	struct child_exit ex;
	enum status rc;

	rc = spawn_run(loop, argv, NULL, true, 8192, &out, &ex);
	if (rc == OK && (!ex.exited || ex.code)) {
		str_trim(out.buf);
		rc = error(ERR_CHILD, "qemu-img cannot make the overlay '%s': %s", overlay,
			   out.buf);
	}
	strbuf_release(&out);
	return rc;
}

enum status
backend_make_disk(const char *path, uint64_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	if (fd < 0)
		return error(ERR_IO, "cannot create '%s': %s", path, strerror(errno));
	if (ftruncate(fd, (off_t)size)) {
		close(fd);
		return error(ERR_IO, "cannot size '%s' to %llu bytes: %s", path,
			     (unsigned long long)size, strerror(errno));
	}
	close(fd);
	return OK;
}

const char *
session_spec_opt(const struct session_spec *spec, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; spec->options && spec->options[i]; i++)
		if (!strncmp(spec->options[i], key, klen) && spec->options[i][klen] == '=')
			return spec->options[i] + klen + 1;
	return NULL;
}

unsigned
session_spec_seconds(const struct session_spec *spec, const char *key, unsigned dflt)
{
	const char *v = session_spec_opt(spec, key);

	return v ? (unsigned)strtoul(v, NULL, 10) : dflt;
}

enum status
session_start(const struct backend_ops *ops, struct loop *loop, struct backend_run *run,
	      const struct session_spec *spec, const struct session_callbacks *cb, void *data,
	      struct session **out)
{
	struct session *s = xcalloc(1, sizeof(*s));
	enum status rc;

	s->ops = ops;
	s->lease = lease_new(ops->name);
	rc = ops->start(loop, run ? run->priv : NULL, spec, cb, data, s->lease, &s->priv);
	if (rc != OK) {
		lease_drop(s->lease);
		free(s);
		return rc;
	}
	*out = s;
	return OK;
}

const struct backend_ops *
session_ops(const struct session *s)
{
	return s->ops;
}

enum status
session_send(struct session *s, const void *buf, size_t len)
{
	return s->ops->send(s->priv, buf, len);
}

char *
session_detach(struct session *s)
{
	if (!s->ops->detach)
		BUG("session_detach on '%s'", s->ops->name);
	return s->ops->detach(s->priv, s->lease);
}

void
session_cancel(struct session *s)
{
	s->ops->cancel(s->priv);
}

char *
session_disk_path(struct session *s, size_t index)
{
	return s->ops->disk_path(s->priv, index);
}

struct session_layout
session_layout(struct session *s)
{
	struct session_layout l = { 0 };

	if (s->ops->layout)
		l = *s->ops->layout(s->priv);
	if (!l.mnt_dir)
		l.mnt_dir = "/mnt";
	return l;
}

enum status
session_shell_open(struct session *s)
{
	if (!s->ops->shell_open)
		return error(ERR_UNSUPPORTED, "the '%s' backend gives no shell", s->ops->name);
	return s->ops->shell_open(s->priv);
}

enum status
session_shell_send(struct session *s, const void *buf, size_t len)
{
	if (!s->ops->shell_send)
		return error(ERR_UNSUPPORTED, "the '%s' backend gives no shell", s->ops->name);
	return s->ops->shell_send(s->priv, buf, len);
}

unsigned
session_boot_limit(struct session *s)
{
	return s->ops->boot_limit(s->priv);
}

unsigned
session_silence_limit(struct session *s)
{
	return s->ops->silence_limit(s->priv);
}

const char *
session_notice(struct session *s)
{
	return s->ops->notice ? s->ops->notice(s->priv) : NULL;
}

bool
session_slow(struct session *s)
{
	return s->ops->slow && s->ops->slow(s->priv);
}

void
session_release(struct session *s)
{
	if (!s)
		return;
	s->ops->release(s->priv);
	lease_drop(s->lease);
	free(s);
}
