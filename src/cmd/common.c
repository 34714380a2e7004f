/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What every command shares: the fatal path and option errors. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/status.h"
#include "core/util.h"

_Noreturn void
die(const char *fmt, ...)
{
	va_list ap;
	char *msg;

	run_fatal_hook();
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	term_fprintf(stderr, "fswb: error: %s\n", msg ? msg : fmt);
	exit(2);
}

int
cmd_fail(const char *cmd)
{
	term_fprintf(stderr, "fswb %s: error: %s\n", cmd, error_msg());
	return 2;
}

_Noreturn void
cmd_bad_option(const char *cmd, const char *arg, const struct option *opts)
{
	const char *names[64];
	size_t n = 0;
	const char *close;
	char *word = NULL;

	/* getopt also ends up here for a known option that lacks its value */
	for (size_t i = 0; arg && opts[i].name; i++)
		if (opts[i].has_arg == required_argument &&
		    ((arg[0] == '-' && arg[1] == opts[i].val && !arg[2]) ||
		     (str_startswith(arg, "--") && !strcmp(arg + 2, opts[i].name))))
			die("fswb %s: option '%s' needs a value; see 'fswb --help'", cmd, arg);
	if (arg && str_startswith(arg, "--")) {
		const char *eq = strchr(arg, '=');

		word = xstrndup(arg + 2, eq ? (size_t)(eq - arg - 2) : strlen(arg + 2));
		for (; opts[n].name && n < ARRAY_SIZE(names); n++)
			names[n] = opts[n].name;
		close = closest_match(word, names, n);
		if (close)
			die("fswb %s: unknown option '--%s' (did you mean '--%s'?); see 'fswb "
			    "--help'",
			    cmd, word, close);
		die("fswb %s: unknown option '--%s'; see 'fswb --help'", cmd, word);
	}
	die("fswb %s: unknown option '%s'; see 'fswb --help'", cmd, arg ? arg : "?");
}
