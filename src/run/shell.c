/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The shell in the guest on this terminal: see shell.h.
 */
#include "run/shell.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "agent/agent_proto.h"
#include "core/util.h"

#define SHELL_ESCAPE 0x1d /* Ctrl-] */

#define WATCH_MS 1000

struct shell_relay {
	struct engine *e;
	struct loop *loop;
	int fd;
	bool active, raw;
	struct termios saved;
	struct strbuf window; /* the last bytes from the guest, to spot AGENT_SHELL_END */
	uint64_t watch;	      /* the guest going away is seen by this timer */
	void (*on_end)(void *data);
	void *data;
	bool look; /* a look into a guest whose tests go on */
};

/* The terminal back, the guest powered off, then on_end (call = false: not). */
static void
relay_end(struct shell_relay *r, bool call)
{
	if (!r->active)
		return;
	r->active = false;
	loop_del_timer(r->loop, r->watch);
	loop_del_fd(r->loop, r->fd);
	loop_del_fd(r->loop, STDIN_FILENO);
	if (r->raw)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &r->saved);
	strbuf_release(&r->window);
	printf(r->look ? "\r\nfswb: leaving the look into the guest; its tests go on\n"
		       : "\r\nfswb: leaving the guest's shell; powering it off\n");
	fflush(stdout);
	engine_shell_end(r->e);
	if (call && r->on_end)
		r->on_end(r->data);
}

static void
write_all_fd(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static void
on_guest_shell(struct loop *loop, int fd, short revents, void *data)
{
	struct shell_relay *r = data;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));
	size_t keep = sizeof(AGENT_SHELL_END);

	if (n <= 0) {
		if (n < 0 && errno == EINTR)
			return;
		relay_end(r, true);
		return;
	}
	write_all_fd(STDOUT_FILENO, buf, (size_t)n);
	strbuf_add(&r->window, buf, (size_t)n);
	if (strstr(r->window.buf, AGENT_SHELL_END)) {
		relay_end(r, true);
		return;
	}
	if (r->window.len > keep) {
		memmove(r->window.buf, r->window.buf + r->window.len - keep, keep);
		strbuf_setlen(&r->window, keep);
	}
}

static void
on_user_input(struct loop *loop, int fd, short revents, void *data)
{
	struct shell_relay *r = data;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));
	char *esc;

	if (n <= 0) {
		if (n < 0 && errno == EINTR)
			return;
		/* no more input: the commands sent still run; the shell's end ends it */
		loop_del_fd(loop, fd);
		return;
	}
	esc = r->raw ? memchr(buf, SHELL_ESCAPE, (size_t)n) : NULL;
	write_all_fd(r->fd, buf, esc ? (size_t)(esc - buf) : (size_t)n);
	if (esc)
		relay_end(r, true);
}

static void
on_watch(struct loop *loop, void *data)
{
	struct shell_relay *r = data;

	if (engine_done(r->e) || engine_shell_fd(r->e) < 0)
		relay_end(r, true); /* the guest went away */
}

struct shell_relay *
shell_relay_start(struct loop *loop, struct engine *e, bool look, void (*on_end)(void *data),
		  void *data)
{
	struct shell_relay *r = xcalloc(1, sizeof(*r));

	r->e = e;
	r->look = look;
	r->loop = loop;
	r->fd = engine_shell_fd(e);
	r->on_end = on_end;
	r->data = data;
	r->active = true;
	strbuf_init(&r->window);
	fflush(stdout);
	if (isatty(STDIN_FILENO) && !tcgetattr(STDIN_FILENO, &r->saved)) {
		struct termios raw = r->saved;

		cfmakeraw(&raw);
		r->raw = !tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
	}
	loop_add_fd(loop, r->fd, POLLIN, on_guest_shell, r);
	loop_add_fd(loop, STDIN_FILENO, POLLIN, on_user_input, r);
	r->watch = loop_add_timer(loop, WATCH_MS, true, on_watch, r);
	return r;
}

bool
shell_relay_ended(const struct shell_relay *r)
{
	return !r->active;
}

void
shell_relay_free(struct shell_relay *r)
{
	if (!r)
		return;
	relay_end(r, false);
	free(r);
}
