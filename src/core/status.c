/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const messages[] = {
#define STATUS_MSG(name, msg) [name] = msg,
	STATUS_LIST(STATUS_MSG)
#undef STATUS_MSG
};

static const char *const names[] = {
#define STATUS_NAME(name, msg) [name] = #name,
	STATUS_LIST(STATUS_NAME)
#undef STATUS_NAME
};

static _Thread_local char last_msg[4096];
static _Thread_local enum status last_code;
static void (*fatal_hook)(void);

const char *
status_str(enum status code)
{
	if ((unsigned)code >= STATUS_COUNT)
		return "unknown status";
	return messages[code];
}

const char *
status_name(enum status code)
{
	if ((unsigned)code >= STATUS_COUNT)
		return "ERR_UNKNOWN";
	return names[code];
}

enum status
verror(enum status code, const char *fmt, va_list ap)
{
	vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
	last_code = code;
	return code;
}

enum status
error(enum status code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(code, fmt, ap);
	va_end(ap);
	return code;
}

enum status
error_prefix(enum status code, const char *fmt, ...)
{
	char prefix[1024], old[sizeof(last_msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	snprintf(old, sizeof(old), "%s", error_msg());
	{
		size_t n = strlen(prefix);

		if (n > sizeof(last_msg) - 3)
			n = sizeof(last_msg) - 3;
		memcpy(last_msg, prefix, n);
		memcpy(last_msg + n, ": ", 2);
		n += 2;
		snprintf(last_msg + n, sizeof(last_msg) - n, "%.*s",
			 (int)(sizeof(last_msg) - n - 1), old);
	}
	last_code = code;
	return code;
}

const char *
error_msg(void)
{
	if (!last_msg[0])
		return status_str(last_code);
	return last_msg;
}

void
error_clear(void)
{
	last_msg[0] = '\0';
	last_code = OK;
}

void
set_fatal_hook(void (*hook)(void))
{
	fatal_hook = hook;
}

void
run_fatal_hook(void)
{
	void (*hook)(void) = fatal_hook;

	fatal_hook = NULL; /* never twice, never recursively */
	if (hook)
		hook();
}

void
bug_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	run_fatal_hook();
	fprintf(stderr, "BUG: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}
