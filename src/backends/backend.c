/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The only caller of the backend table. */
#include "backends/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct backend_ops *const all[] = { &qemu_backend, NULL };

struct session {
	const struct backend_ops *ops;
	void *priv;
};

const char *const *
backend_names(void)
{
	static const char *names[ARRAY_SIZE(all)];

	for (size_t i = 0; all[i]; i++)
		names[i] = all[i]->name;
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

void
backend_probe_release(struct backend_probe *p)
{
	free(p->summary);
	free(p->why);
	free(p->fix);
	memset(p, 0, sizeof(*p));
}

enum status
backend_probe(const struct backend_ops *ops, const struct plan *plan, struct backend_probe *out)
{
	memset(out, 0, sizeof(*out));
	return ops->probe(plan, out);
}

enum status
session_start(const struct backend_ops *ops, struct loop *loop, const struct session_spec *spec,
	      const struct session_callbacks *cb, void *data, struct session **out)
{
	struct session *s = xcalloc(1, sizeof(*s));
	enum status rc;

	s->ops = ops;
	rc = ops->start(loop, spec, cb, data, &s->priv);
	if (rc != OK) {
		free(s);
		return rc;
	}
	*out = s;
	return OK;
}

enum status
session_send(struct session *s, const void *buf, size_t len)
{
	return s->ops->send(s->priv, buf, len);
}

void
session_cancel(struct session *s)
{
	s->ops->cancel(s->priv);
}

char *
session_disk_path(struct session *s, size_t index)
{
	char buf[32];

	if (s->ops->disk_path)
		return s->ops->disk_path(s->priv, index);
	if (index > 24)
		BUG("disk index %zu out of range", index);
	snprintf(buf, sizeof(buf), "/dev/vd%c", (char)('b' + index));
	return xstrdup(buf);
}

enum status
session_shell(struct session *s, int *fd)
{
	if (!s->ops->shell)
		return error(ERR_UNSUPPORTED, "the '%s' backend gives no shell", s->ops->name);
	return s->ops->shell(s->priv, fd);
}

unsigned
session_silence_limit(struct session *s)
{
	return s->ops->silence_limit ? s->ops->silence_limit(s->priv) : 60;
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
	free(s);
}
