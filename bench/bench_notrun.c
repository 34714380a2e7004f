/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_notrun: how many of an fstests tree's _notrun messages the not-run
 * explainer gives a specific cause.
 *
 *	build/bench/bench_notrun [-v] [-n TOP] [FSTESTS_SRC]
 *
 * The tree is the argument, else $FSTESTS_SRC. Every `_notrun WORDS` in
 * tests/DIR/NNN and common/ is read as the shell would join its words
 * (quotes removed, variables left as they stand: "$FSTYP does not support
 * ..."). A message counts once for each test that calls it: directly, or
 * through the common/ functions it calls (the functions those call, and
 * so on), or through the top-level code of a common/ file it sources. The
 * messages are ranked by that count; messages that are nothing but
 * variables ("$1", "$msg": the words come from the caller) are left out.
 *
 * A message has a specific cause when notrun_explain() knows it and its
 * rule is not a catch-all (notrun_explanation.generic: "the test requires
 * WORDS", "read the .full"). It prints the share for the TOP (100)
 * most frequent and for all messages; -v lists the TOP messages with their
 * count and rule. The real tree is not in CI: this is never part of make
 * check, and nothing it reads is kept. It exits 1 only when it could not
 * measure (no tree, no message found).
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/paths.h"
#include "core/util.h"
#include "fstests/catalogue.h"
#include "fstests/notrun.h"

/* A unit of shell: a test file, a common/ function, or a common/ file's top-level code. */
struct unit {
	char *name;	      /* the function's name; "common/NAME" for a file's top level */
	struct strvec msgs;   /* the messages of its own _notrun calls */
	struct strvec refs;   /* the words it uses that may name functions or sourced files */
	int state;	      /* closure: 0 not yet, 1 in progress, 2 done */
	unsigned char *reach; /* bitset over the messages */
};

struct tree {
	struct unit *units; /* common/ functions and top levels, sorted by name once read */
	size_t n, alloc;
	struct strvec msgs; /* every distinct message, sorted once read */
	size_t nvars;	    /* calls left out: their message is only variables */
};

static bool
is_word_char(int c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Read one shell word at *p (quotes removed) into sb; false at the end of the command. */
static bool
shell_word(const char **pp, struct strbuf *sb)
{
	const char *p = *pp;
	bool any = false;

	while (*p == ' ' || *p == '\t' || (*p == '\\' && p[1] == '\n'))
		p += *p == '\\' ? 2 : 1;
	while (*p && !strchr(" \t\n;&|)<>", *p)) {
		if (*p == '\\' && p[1] == '\n') {
			p += 2;
		} else if (*p == '\\' && p[1]) {
			strbuf_addch(sb, p[1]);
			p += 2;
		} else if (*p == '\'') {
			const char *e = strchr(p + 1, '\'');

			if (!e)
				break;
			strbuf_add(sb, p + 1, (size_t)(e - p - 1));
			p = e + 1;
		} else if (*p == '"') {
			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
					p++;
				strbuf_addch(sb, *p);
			}
			if (*p)
				p++;
		} else {
			strbuf_addch(sb, *p++);
		}
		any = true;
	}
	*pp = p;
	return any;
}

/* Whether a message is only variable expansions ("$1", "${msg}", "$a $b"). */
static bool
only_variables(const char *m)
{
	for (const char *p = m; *p;) {
		if (isspace((unsigned char)*p)) {
			p++;
		} else if (*p == '$' && p[1] == '{') {
			const char *e = strchr(p, '}');

			if (!e)
				return false;
			p = e + 1;
		} else if (*p == '$' && is_word_char(p[1])) {
			for (p++; is_word_char(*p); p++)
				;
		} else if (*p == '$' && p[1] && strchr("@*#?", p[1])) {
			p += 2;
		} else {
			return false;
		}
	}
	return true;
}

/* A function header at the start of a line: "NAME()" or "function NAME"; its length. */
static size_t
function_header(const char *line, char **name)
{
	const char *p = line, *s;

	if (str_startswith(p, "function "))
		p += 9;
	s = p;
	while (is_word_char(*p) || *p == '-' || *p == '.')
		p++;
	if (p == s || isdigit((unsigned char)*s))
		return 0;
	if (p[0] == '(' && p[1] == ')') {
		*name = xstrndup(s, (size_t)(p - s));
		return (size_t)(p + 2 - line);
	}
	if (line != s && (*p == ' ' || *p == '{' || *p == '\n')) {
		*name = xstrndup(s, (size_t)(p - s));
		return (size_t)(p - line);
	}
	return 0;
}

/*
 * Scan shell text. Each top-level function becomes a unit of its own when
 * split (common/ files); everything else goes to top.
 */
static void
scan(struct tree *t, const char *text, struct unit *top, bool split)
{
	struct unit *cur = top;
	size_t cur_idx = 0;
	bool in_function = false, line_start = true;

	for (const char *p = text; *p;) {
		if (line_start) {
			const char *q = p;
			char *name = NULL;
			size_t n;

			line_start = false;
			if (split && in_function && *p == '}') {
				in_function = false;
				cur = top;
			} else if (split && !in_function && (n = function_header(p, &name))) {
				ALLOC_GROW(t->units, t->n + 1, t->alloc);
				cur_idx = t->n++;
				memset(&t->units[cur_idx], 0, sizeof(t->units[cur_idx]));
				t->units[cur_idx].name = name;
				strvec_init(&t->units[cur_idx].msgs);
				strvec_init(&t->units[cur_idx].refs);
				/* top may live in t->units too: take pointers after the growth */
				cur = &t->units[cur_idx];
				in_function = true;
				p += n;
				continue;
			}
			/* ". ./common/NAME" or "source common/NAME" */
			while (*q == ' ' || *q == '\t')
				q++;
			if ((q[0] == '.' && (q[1] == ' ' || q[1] == '\t')) ||
			    str_startswith(q, "source ")) {
				const char *e = q + strcspn(q, "\n;"), *c = NULL;

				for (const char *s = q; s < e; s++)
					if (str_startswith(s, "common/"))
						c = s;
				if (c) {
					char *ref = xstrndup(c, strcspn(c, " \t\n;\"'"));

					strvec_push(&cur->refs, ref);
					free(ref);
				}
			}
		}
		if (*p == '\n') {
			line_start = true;
			p++;
		} else if (*p == '#' && (p == text || strchr(" \t\n;", p[-1]))) {
			p += strcspn(p, "\n");
		} else if (*p == '\'') {
			const char *e = strchr(p + 1, '\'');

			p = e ? e + 1 : p + strlen(p);
		} else if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (*p)
				p++;
		} else if (*p == '\\' && p[1]) {
			p += 2;
		} else if (is_word_char(*p) &&
			   (p == text || (!is_word_char(p[-1]) && p[-1] != '$' && p[-1] != '{' &&
					  p[-1] != '-'))) {
			const char *s = p;
			char *word;

			while (is_word_char(*p))
				p++;
			word = xstrndup(s, (size_t)(p - s));
			if (!strcmp(word, "_notrun") && !strchr("=(", *p)) {
				struct strbuf msg = STRBUF_INIT, w = STRBUF_INIT;

				while (shell_word(&p, &w)) {
					if (msg.len)
						strbuf_addch(&msg, ' ');
					strbuf_add(&msg, w.buf, w.len);
					strbuf_reset(&w);
				}
				if (msg.len && only_variables(msg.buf))
					t->nvars++;
				else if (msg.len && !strvec_contains(&cur->msgs, msg.buf))
					strvec_push(&cur->msgs, msg.buf);
				strbuf_release(&msg);
				strbuf_release(&w);
			} else if (word[0] == '_' && !strvec_contains(&cur->refs, word)) {
				strvec_push(&cur->refs, word);
			}
			free(word);
		} else {
			p++;
		}
	}
}

static int
cmp_unit(const void *a, const void *b)
{
	return strcmp(((const struct unit *)a)->name, ((const struct unit *)b)->name);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t
msg_index(const struct tree *t, const char *m)
{
	char *const *hit = bsearch(&m, t->msgs.v, t->msgs.n, sizeof(char *), cmp_str);

	return (size_t)(hit - t->msgs.v);
}

/* Units named name: [*first, *first + returned) in the sorted units. */
static size_t
find_units(const struct tree *t, const char *name, size_t *first)
{
	size_t lo = 0, hi = t->n, n = 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (strcmp(t->units[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	while (lo + n < t->n && !strcmp(t->units[lo + n].name, name))
		n++;
	return n;
}

static void reach_refs(struct tree *t, const struct strvec *refs, unsigned char *into);

static void
closure(struct tree *t, struct unit *u)
{
	if (u->state)
		return;
	u->state = 1;
	u->reach = xcalloc(t->msgs.n / 8 + 1, 1);
	for (size_t i = 0; i < u->msgs.n; i++) {
		size_t k = msg_index(t, u->msgs.v[i]);

		u->reach[k / 8] |= (unsigned char)(1u << (k % 8));
	}
	reach_refs(t, &u->refs, u->reach);
	u->state = 2;
}

static void
reach_refs(struct tree *t, const struct strvec *refs, unsigned char *into)
{
	for (size_t i = 0; i < refs->n; i++) {
		size_t first, n = find_units(t, refs->v[i], &first);

		for (size_t k = first; k < first + n; k++) {
			struct unit *c = &t->units[k];

			closure(t, c);
			for (size_t b = 0; b < t->msgs.n / 8 + 1; b++)
				into[b] |= c->reach[b];
		}
	}
}

static void
collect(struct tree *t, const struct unit *u)
{
	for (size_t i = 0; i < u->msgs.n; i++)
		if (!strvec_contains(&t->msgs, u->msgs.v[i]))
			strvec_push(&t->msgs, u->msgs.v[i]);
}

static void
unit_release(struct unit *u)
{
	free(u->name);
	strvec_clear(&u->msgs);
	strvec_clear(&u->refs);
	free(u->reach);
}

struct ranked {
	const char *msg;
	unsigned tests, direct;
};

static int
cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->tests != y->tests)
		return x->tests > y->tests ? -1 : 1;
	return strcmp(x->msg, y->msg);
}

/* Whether the explainer gives m a specific cause; its rule in *id. */
static bool
specific(const char *m, const char **id)
{
	struct notrun_explanation e;
	bool known = notrun_explain(m, NULL, &e), ok = known && !e.generic;

	*id = known ? e.id : "(none)";
	notrun_explanation_release(&e);
	return ok;
}

int
main(int argc, char **argv)
{
	const char *src = getenv("FSTESTS_SRC");
	struct tree t = { 0 };
	struct catalogue cat;
	struct unit *tests;
	struct ranked *r;
	size_t top = 100, hits_top = 0, hits_all = 0, ntop, nmsgs;
	bool verbose = false;
	int c;
	DIR *d;
	struct dirent *de;
	char *common;

	while ((c = getopt(argc, argv, "vn:")) != -1) {
		if (c == 'v')
			verbose = true;
		else if (c == 'n')
			top = strtoul(optarg, NULL, 10);
		else
			return fprintf(stderr, "usage: bench_notrun [-v] [-n TOP] [FSTESTS_SRC]\n"),
			       1;
	}
	if (optind < argc)
		src = argv[optind];
	if (!src || !*src) {
		printf("bench_notrun: give an fstests tree (argument or FSTESTS_SRC); nothing "
		       "measured\n");
		return 1;
	}
	if (catalogue_load(src, &cat) != OK) {
		printf("bench_notrun: %s\n", error_msg());
		return 1;
	}
	strvec_init(&t.msgs);

	/* common/: functions and top levels */
	common = path_join(src, "common");
	d = opendir(common);
	while (d && (de = readdir(d))) {
		char *path = path_join(common, de->d_name), *text = NULL;
		size_t len, top_idx;

		if (de->d_name[0] == '.' || path_is_dir(path) ||
		    read_file(path, 16u << 20, &text, &len) != OK) {
			free(path);
			continue;
		}
		ALLOC_GROW(t.units, t.n + 1, t.alloc);
		top_idx = t.n++;
		memset(&t.units[top_idx], 0, sizeof(t.units[top_idx]));
		t.units[top_idx].name = xasprintf("common/%s", de->d_name);
		strvec_init(&t.units[top_idx].msgs);
		strvec_init(&t.units[top_idx].refs);
		{
			/* scan() may grow t.units: hand it a copy of the top level */
			struct unit tl = t.units[top_idx];

			scan(&t, text, &tl, true);
			t.units[top_idx] = tl;
		}
		free(text);
		free(path);
	}
	if (d)
		closedir(d);
	free(common);

	/* the tests */
	tests = xcalloc(cat.ntests ? cat.ntests : 1, sizeof(*tests));
	for (size_t i = 0; i < cat.ntests; i++) {
		char *rel = xasprintf("tests/%s", cat.tests[i].name), *path = path_join(src, rel);
		char *text = NULL;
		size_t len;

		tests[i].name = xstrdup(cat.tests[i].name);
		strvec_init(&tests[i].msgs);
		strvec_init(&tests[i].refs);
		if (read_file(path, 16u << 20, &text, &len) == OK)
			scan(&t, text, &tests[i], false);
		free(text);
		free(path);
		free(rel);
	}

	for (size_t i = 0; i < t.n; i++)
		collect(&t, &t.units[i]);
	for (size_t i = 0; i < cat.ntests; i++)
		collect(&t, &tests[i]);
	qsort(t.msgs.v, t.msgs.n, sizeof(char *), cmp_str);
	qsort(t.units, t.n, sizeof(*t.units), cmp_unit);

	r = xcalloc(t.msgs.n ? t.msgs.n : 1, sizeof(*r));
	for (size_t k = 0; k < t.msgs.n; k++)
		r[k].msg = t.msgs.v[k];
	for (size_t i = 0; i < cat.ntests; i++) {
		unsigned char *set = xcalloc(t.msgs.n / 8 + 1, 1);

		reach_refs(&t, &tests[i].refs, set);
		for (size_t m = 0; m < tests[i].msgs.n; m++) {
			size_t k = msg_index(&t, tests[i].msgs.v[m]);

			set[k / 8] |= (unsigned char)(1u << (k % 8));
			r[k].direct++;
		}
		for (size_t k = 0; k < t.msgs.n; k++)
			if (set[k / 8] & (1u << (k % 8)))
				r[k].tests++;
		free(set);
	}
	qsort(r, t.msgs.n, sizeof(*r), cmp_ranked);

	ntop = top < t.msgs.n ? top : t.msgs.n;
	for (size_t k = 0; k < t.msgs.n; k++) {
		const char *id;
		bool ok = specific(r[k].msg, &id);

		hits_all += ok;
		if (k < ntop) {
			hits_top += ok;
			if (verbose)
				printf("%3zu %4u %4u %-3s %-15s %s\n", k + 1, r[k].tests,
				       r[k].direct, ok ? "" : "NO", id, r[k].msg);
		}
	}
	printf("fstests tree: %s (%zu tests, %zu common/ functions and files)\n", src, cat.ntests,
	       t.n);
	printf("distinct _notrun messages: %zu (%zu calls of only variables left out)\n", t.msgs.n,
	       t.nvars);
	printf("the %zu most frequent (by tests calling them): %zu with a specific cause "
	       "(%.0f%%)\n",
	       ntop, hits_top, ntop ? 100.0 * (double)hits_top / (double)ntop : 0.0);
	printf("all %zu: %zu with a specific cause (%.0f%%)\n", t.msgs.n, hits_all,
	       t.msgs.n ? 100.0 * (double)hits_all / (double)t.msgs.n : 0.0);

	for (size_t i = 0; i < t.n; i++)
		unit_release(&t.units[i]);
	for (size_t i = 0; i < cat.ntests; i++)
		unit_release(&tests[i]);
	free(t.units);
	free(tests);
	free(r);
	nmsgs = t.msgs.n;
	strvec_clear(&t.msgs);
	catalogue_release(&cat);
	return nmsgs ? 0 : 1;
}
