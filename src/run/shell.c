/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The shell in the guest on this terminal: see shell.h.
 */
#include "run/shell.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "agent/agent_proto.h"
#include "core/util.h"

#define SHELL_ESCAPE 0x1d /* Ctrl-] */

struct relay {
	struct engine *e;
	struct loop *loop;
	int fd;
	bool active, raw;
	struct termios saved;
	struct strbuf window; /* the last bytes from the guest, to spot AGENT_SHELL_END */
};

static void
relay_end(struct relay *r)
{
	if (!r->active)
		return;
	r->active = false;
	loop_del_fd(r->loop, r->fd);
	loop_del_fd(r->loop, STDIN_FILENO);
	if (r->raw)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &r->saved);
	strbuf_release(&r->window);
	printf("\r\nfswb: leaving the guest's shell; powering it off\n");
	fflush(stdout);
	engine_shell_end(r->e);
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
	struct relay *r = data;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));
	size_t keep = sizeof(AGENT_SHELL_END);

	if (n <= 0) {
		if (n < 0 && errno == EINTR)
			return;
		relay_end(r);
		return;
	}
	write_all_fd(STDOUT_FILENO, buf, (size_t)n);
	strbuf_add(&r->window, buf, (size_t)n);
	if (strstr(r->window.buf, AGENT_SHELL_END)) {
		relay_end(r);
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
	struct relay *r = data;
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
		relay_end(r);
}

void
shell_relay(struct loop *loop, struct engine *e)
{
	struct relay relay = { 0 }, *r = &relay;

	r->e = e;
	r->loop = loop;
	r->fd = engine_shell_fd(e);
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
	while (r->active && !engine_done(e)) {
		loop_run_once(loop, 1000);
		if (r->active && engine_shell_fd(e) < 0)
			relay_end(r); /* the guest went away */
	}
	relay_end(r);
}
