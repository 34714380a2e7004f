/* SPDX-License-Identifier: GPL-2.0-or-later */
/* .config files, fragments, the Kconfig reader and the survival check: see kconfig.h. */
#include "kbuild/kconfig.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"

#define MAX_FILES	 20000
#define MAX_FILE_SIZE	 (8u << 20)
#define MAX_SOURCE_DEPTH 32
#define MAX_BLOCK_DEPTH	 64
#define MAX_EXPR_DEPTH	 256
#define MAX_LINE	 65536
#define MAX_WARN_LINES	 20
#define MAX_CHAIN	 3

/* ---- a string-keyed hash map (keys are not owned) ---- */

struct kc_map {
	const char **keys;
	void **vals;
	size_t cap, n;
};

static uint64_t
hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

static void *
map_get(const struct kc_map *m, const char *key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = hash_str(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (!strcmp(m->keys[i], key))
			return m->vals[i];
	return NULL;
}

static void map_put(struct kc_map *m, const char *key, void *val);

static void
map_grow(struct kc_map *m)
{
	struct kc_map bigger = { 0 };

	bigger.cap = m->cap ? m->cap * 2 : 64;
	bigger.keys = xcalloc(bigger.cap, sizeof(*bigger.keys));
	bigger.vals = xcalloc(bigger.cap, sizeof(*bigger.vals));
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			map_put(&bigger, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = bigger;
}

static void
map_put(struct kc_map *m, const char *key, void *val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap)
		map_grow(m);
	for (i = hash_str(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (!strcmp(m->keys[i], key)) {
			m->vals[i] = val;
			return;
		}
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
}

static void
map_free(struct kc_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- .config values ---- */

struct kc_opt {
	char *name;
	char *value;
};

struct kconfig_values {
	struct kc_opt *v;
	size_t n, alloc;
	struct kc_map map; /* name -> index + 1 */
};

struct kconfig_values *
kconfig_values_new(void)
{
	return xcalloc(1, sizeof(struct kconfig_values));
}

void
kconfig_values_free(struct kconfig_values *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		free(v->v[i].name);
		free(v->v[i].value);
	}
	free(v->v);
	map_free(&v->map);
	free(v);
}

void
kconfig_values_set(struct kconfig_values *v, const char *name, const char *value)
{
	uintptr_t idx = (uintptr_t)map_get(&v->map, name);

	if (idx) {
		free(v->v[idx - 1].value);
		v->v[idx - 1].value = xstrdup(value);
		return;
	}
	ALLOC_GROW(v->v, v->n + 1, v->alloc);
	v->v[v->n].name = xstrdup(name);
	v->v[v->n].value = xstrdup(value);
	v->n++;
	/* the names are separate allocations: the map's keys survive the array moving */
	map_put(&v->map, v->v[v->n - 1].name, (void *)(uintptr_t)v->n);
}

const char *
kconfig_value(const struct kconfig_values *v, const char *name)
{
	uintptr_t idx = v ? (uintptr_t)map_get(&v->map, name) : 0;

	return idx ? v->v[idx - 1].value : NULL;
}

size_t
kconfig_values_count(const struct kconfig_values *v)
{
	return v->n;
}

void
kconfig_values_at(const struct kconfig_values *v, size_t i, const char **name, const char **value)
{
	*name = v->v[i].name;
	*value = v->v[i].value;
}

void
kconfig_values_format(const struct kconfig_values *v, struct strbuf *out)
{
	for (size_t i = 0; i < v->n; i++) {
		if (!strcmp(v->v[i].value, "n"))
			strbuf_addf(out, "# CONFIG_%s is not set\n", v->v[i].name);
		else
			strbuf_addf(out, "CONFIG_%s=%s\n", v->v[i].name, v->v[i].value);
	}
}

static bool
is_sym_char(int c)
{
	return isalnum(c) || c == '_';
}

/*
 * Parse one line of a .config; name and value point into line (modified).
 * 0: nothing there, 1: an option, -1: a malformed line.
 */
static int
parse_config_line(char *line, char **name, char **value)
{
	char *s = str_trim(line);
	size_t len;

	if (!*s)
		return 0;
	if (*s == '#') {
		const char *suffix = " is not set";

		s++;
		while (*s == ' ')
			s++;
		len = strlen(s);
		if (str_startswith(s, "CONFIG_") && str_endswith(s, suffix)) {
			char *n = s + strlen("CONFIG_");
			char *end = s + len - strlen(suffix);

			*end = '\0';
			for (char *p = n; *p; p++)
				if (!is_sym_char((unsigned char)*p))
					return 0; /* just a comment */
			if (!*n)
				return 0;
			*name = n;
			*value = "n";
			return 1;
		}
		return 0;
	}
	if (!str_startswith(s, "CONFIG_"))
		return -1;
	s += strlen("CONFIG_");
	*name = s;
	while (is_sym_char((unsigned char)*s))
		s++;
	if (s == *name || *s != '=')
		return -1;
	*s++ = '\0';
	if (!*s)
		return -1;
	*value = s;
	return 1;
}

enum status
kconfig_values_parse(struct kconfig_values *v, const char *text, const char *source)
{
	const char *p = text;
	unsigned lineno = 0;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, len);
		char *name, *value;
		int r;

		lineno++;
		r = parse_config_line(line, &name, &value);
		if (r < 0) {
			char *shown = str_trim(line);
			enum status rc;

			if (strlen(shown) > 60)
				shown[60] = '\0';
			rc = error(ERR_PARSE,
				   "%s:%u: '%s' is not an option line; write CONFIG_NAME=VALUE or "
				   "'# CONFIG_NAME is not set'",
				   source, lineno, shown);
			free(line);
			return rc;
		}
		if (r > 0)
			kconfig_values_set(v, name, value);
		free(line);
		p += len;
		if (*p == '\n')
			p++;
	}
	return OK;
}

enum status
kconfig_values_load(struct kconfig_values *v, const char *path)
{
	char *text;
	enum status rc = read_file(path, 16u << 20, &text, NULL);

	if (rc != OK)
		return rc;
	rc = kconfig_values_parse(v, text, path);
	free(text);
	return rc;
}

/* ---- requests ---- */

void
kconfig_requests_init(struct kconfig_requests *r)
{
	memset(r, 0, sizeof(*r));
}

void
kconfig_requests_release(struct kconfig_requests *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].value);
		free(r->v[i].source);
		free(r->v[i].needed_by);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static struct kconfig_request *
find_request(const struct kconfig_requests *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].name, name))
			return &r->v[i];
	return NULL;
}

const struct kconfig_request *
kconfig_requests_find(const struct kconfig_requests *r, const char *name)
{
	return find_request(r, name);
}

void
kconfig_requests_set(struct kconfig_requests *r, const char *name, const char *value,
		     const char *source, enum kconfig_need need)
{
	struct kconfig_request *q = find_request(r, name);

	if (!q) {
		ALLOC_GROW(r->v, r->n + 1, r->alloc);
		q = &r->v[r->n++];
		memset(q, 0, sizeof(*q));
		q->name = xstrdup(name);
		q->need = need;
	}
	free(q->value);
	free(q->source);
	q->value = xstrdup(value);
	q->source = xstrdup(source ? source : "");
	if (need > q->need)
		q->need = need;
}

enum status
kconfig_requests_add_fragment(struct kconfig_requests *r, const char *path, const char *display,
			      enum kconfig_need need)
{
	char *text;
	const char *p;
	unsigned lineno = 0;
	enum status rc = read_file(path, 1u << 20, &text, NULL);

	if (rc != OK)
		return error_prefix(rc, "config fragment '%s'", display);
	for (p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, len);
		char *name, *value;
		int k;

		lineno++;
		k = parse_config_line(line, &name, &value);
		if (k < 0) {
			char *shown = str_trim(line);

			if (strlen(shown) > 60)
				shown[60] = '\0';
			rc = error(ERR_PARSE,
				   "%s:%u: '%s' is not an option line; write CONFIG_NAME=VALUE or "
				   "'# CONFIG_NAME is not set'",
				   display, lineno, shown);
			free(line);
			break;
		}
		if (k > 0) {
			char *src = xasprintf("%s:%u", display, lineno);

			kconfig_requests_set(r, name, value, src, need);
			free(src);
		}
		free(line);
		p += len;
		if (*p == '\n')
			p++;
	}
	free(text);
	return rc;
}

void
kconfig_requests_need(struct kconfig_requests *r, const char *name, const char *who)
{
	struct kconfig_request *q = find_request(r, name);

	if (!q) {
		kconfig_requests_set(r, name, "y", who, KCONFIG_NEED);
		q = find_request(r, name);
	}
	q->need = KCONFIG_NEED;
	if (!who)
		return;
	if (!q->needed_by) {
		q->needed_by = xstrdup(who);
	} else {
		struct strvec words = STRVEC_INIT;

		strvec_split(&words, q->needed_by, " ");
		if (!strvec_contains(&words, who)) {
			char *joined = xasprintf("%s %s", q->needed_by, who);

			free(q->needed_by);
			q->needed_by = joined;
		}
		strvec_clear(&words);
	}
}

/* ---- the tree: arena, symbols, expressions ---- */

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	_Alignas(16) char data[];
};

struct arena {
	struct arena_block *head;
};

static void *
arena_alloc(struct arena *a, size_t n)
{
	struct arena_block *b = a->head;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (!b || b->size - b->used < n) {
		size_t size = n > 65536 ? n : 65536;

		b = xmalloc(sizeof(*b) + size);
		b->next = a->head;
		b->used = 0;
		b->size = size;
		a->head = b;
	}
	p = b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

static char *
arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static char *
arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

static void
arena_free(struct arena *a)
{
	while (a->head) {
		struct arena_block *next = a->head->next;

		free(a->head);
		a->head = next;
	}
}

enum kc_type { KT_UNKNOWN, KT_BOOL, KT_TRISTATE, KT_STRING, KT_INT, KT_HEX };

enum eop { E_SYM, E_MACRO, E_NOT, E_AND, E_OR, E_EQ, E_NE, E_LT, E_LE, E_GT, E_GE };

struct kexpr {
	enum eop op;
	struct kexpr *l, *r;
	const char *name; /* E_SYM: a symbol or constant; E_MACRO: the macro text */
	bool quoted;	  /* E_SYM: a "string" constant */
};

struct ksym;

struct kdef {
	const char *file;
	unsigned line;
	struct kexpr *dep;     /* own depends on AND the enclosing blocks'; NULL: none */
	bool prompt;	       /* has a prompt */
	struct kexpr *visible; /* the prompt's if AND menus' visible if; NULL: always */
	int choice;	       /* index into tree->choices, or -1 */
	struct kexpr *range_lo, *range_hi; /* range LO HI, or NULL */
	struct kdef *next;
};

struct kselect {
	struct ksym *by;
	struct kexpr *cond; /* select X if COND */
	struct kexpr *dep;  /* the selecting entry's dependencies */
	struct kselect *next;
};

struct ksym {
	const char *name;
	enum kc_type type;
	struct kdef *defs, *last_def;
	struct kselect *selected_by;
	size_t nselectors;
};

struct kchoice {
	const char *file;
	unsigned line;
	struct ksym **members;
	size_t n, alloc;
};

struct kconfig_tree {
	struct arena arena;
	struct kc_map syms;
	const char **names;
	size_t nnames, anames;
	struct kchoice *choices;
	size_t nchoices, achoices;
	size_t nfiles, nwarnings;
	struct strvec warning_lines;
	char *srctree, *srcarch;
};

static struct ksym *
sym_lookup(const struct kconfig_tree *t, const char *name)
{
	return map_get(&t->syms, name);
}

static struct ksym *
sym_get(struct kconfig_tree *t, const char *name)
{
	struct ksym *s = sym_lookup(t, name);

	if (s)
		return s;
	s = arena_alloc(&t->arena, sizeof(*s));
	s->name = arena_strdup(&t->arena, name);
	map_put(&t->syms, s->name, s);
	ALLOC_GROW(t->names, t->nnames + 1, t->anames);
	t->names[t->nnames++] = s->name;
	return s;
}

static struct kexpr *
mk_expr(struct kconfig_tree *t, enum eop op, struct kexpr *l, struct kexpr *r)
{
	struct kexpr *e = arena_alloc(&t->arena, sizeof(*e));

	e->op = op;
	e->l = l;
	e->r = r;
	return e;
}

static struct kexpr *
mk_and(struct kconfig_tree *t, struct kexpr *a, struct kexpr *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return mk_expr(t, E_AND, a, b);
}

/* ---- the lexer: one logical line ---- */

enum tok {
	T_EOL,
	T_WORD,
	T_STRING,
	T_MACRO,
	T_NOT,
	T_AND,
	T_OR,
	T_EQ,
	T_NE,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_OPEN,
	T_CLOSE,
	T_BAD,
};

struct lexer {
	const char *p;
	enum tok tok;
	struct strbuf text;
};

static bool
is_word_char(int c)
{
	return isalnum(c) || c == '_' || c == '-';
}

static void
lex_next(struct lexer *lx)
{
	const char *p = lx->p;

	strbuf_reset(&lx->text);
	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	if (!*p || *p == '#') {
		lx->tok = T_EOL;
		lx->p = p;
		return;
	}
	if (*p == '"' || *p == '\'') {
		char q = *p++;

		while (*p && *p != q) {
			if (*p == '\\' && p[1])
				p++;
			strbuf_addch(&lx->text, *p++);
		}
		if (*p != q) {
			lx->tok = T_BAD;
			lx->p = p;
			return;
		}
		lx->p = p + 1;
		lx->tok = T_STRING;
		return;
	}
	if (p[0] == '$' && p[1] == '(') {
		int depth = 0;
		const char *s = p++;

		do {
			if (*p == '(')
				depth++;
			else if (*p == ')')
				depth--;
			p++;
		} while (*p && depth > 0);
		if (depth) {
			lx->tok = T_BAD;
			lx->p = p;
			return;
		}
		/* a macro glued to a word ($(X)_FOO) stays one term */
		while (is_word_char((unsigned char)*p) || *p == '$')
			p++;
		strbuf_add(&lx->text, s, (size_t)(p - s));
		lx->p = p;
		lx->tok = T_MACRO;
		return;
	}
	if (is_word_char((unsigned char)*p)) {
		const char *s = p;

		while (is_word_char((unsigned char)*p))
			p++;
		strbuf_add(&lx->text, s, (size_t)(p - s));
		lx->p = p;
		lx->tok = T_WORD;
		return;
	}
	lx->tok = T_BAD;
	switch (*p) {
	case '!':
		lx->tok = p[1] == '=' ? T_NE : T_NOT;
		p += p[1] == '=' ? 2 : 1;
		break;
	case '&':
		if (p[1] == '&') {
			lx->tok = T_AND;
			p += 2;
		}
		break;
	case '|':
		if (p[1] == '|') {
			lx->tok = T_OR;
			p += 2;
		}
		break;
	case '=':
		lx->tok = T_EQ;
		p++;
		break;
	case '<':
		lx->tok = p[1] == '=' ? T_LE : T_LT;
		p += p[1] == '=' ? 2 : 1;
		break;
	case '>':
		lx->tok = p[1] == '=' ? T_GE : T_GT;
		p += p[1] == '=' ? 2 : 1;
		break;
	case '(':
		lx->tok = T_OPEN;
		p++;
		break;
	case ')':
		lx->tok = T_CLOSE;
		p++;
		break;
	}
	lx->p = p;
}

/* ---- the parser ---- */

enum frame_kind { F_IF, F_MENU, F_CHOICE };

struct frame {
	enum frame_kind kind;
	struct kexpr *dep;
	struct kexpr *visible;
	int choice;
	const char *file;
	unsigned line;
};

enum entry_kind { EN_NONE, EN_CONFIG, EN_CHOICE, EN_MENU, EN_COMMENT };

struct pending_select {
	struct ksym *target;
	struct kexpr *cond;
};

struct entry {
	enum entry_kind kind;
	struct ksym *sym;
	const char *file;
	unsigned line;
	enum kc_type type;
	struct kexpr *dep;
	bool prompt;
	struct kexpr *prompt_if;
	struct kexpr *range_lo, *range_hi;
	struct pending_select *sel;
	size_t nsel, asel;
};

struct parser {
	struct kconfig_tree *t;
	struct frame stack[MAX_BLOCK_DEPTH];
	int depth;
	struct entry en;
	const char *open_files[MAX_SOURCE_DEPTH + 1];
	int nopen;
	/* the line being parsed */
	const char *file;
	unsigned line;
	struct lexer lx;
	int edepth;
	int floor; /* the block depth where the current file started */
	bool failed;
};

static enum status
perr(struct parser *ps, const char *fmt, const char *arg)
{
	if (ps->failed)
		return ERR_PARSE;
	ps->failed = true;
	if (arg)
		return error(ERR_PARSE, "%s:%u: %s'%s'", ps->file, ps->line, fmt, arg);
	return error(ERR_PARSE, "%s:%u: %s", ps->file, ps->line, fmt);
}

static void
pwarn(struct parser *ps, const char *what, const char *word)
{
	ps->t->nwarnings++;
	if (ps->t->warning_lines.n < MAX_WARN_LINES)
		strvec_pushf(&ps->t->warning_lines, "%s:%u: %s '%s'", ps->file, ps->line, what,
			     word);
}

static struct kexpr *parse_or(struct parser *ps);

static struct kexpr *
parse_primary(struct parser *ps)
{
	struct kexpr *e;

	switch (ps->lx.tok) {
	case T_OPEN:
		lex_next(&ps->lx);
		e = parse_or(ps);
		if (!e)
			return NULL;
		if (ps->lx.tok != T_CLOSE) {
			perr(ps, "missing ')' in the expression", NULL);
			return NULL;
		}
		lex_next(&ps->lx);
		return e;
	case T_WORD:
	case T_STRING:
	case T_MACRO:
		e = mk_expr(ps->t, ps->lx.tok == T_MACRO ? E_MACRO : E_SYM, NULL, NULL);
		e->name = arena_strdup(&ps->t->arena, ps->lx.text.buf);
		e->quoted = ps->lx.tok == T_STRING;
		lex_next(&ps->lx);
		return e;
	default:
		perr(ps, "malformed expression", NULL);
		return NULL;
	}
}

static struct kexpr *
parse_cmp(struct parser *ps)
{
	struct kexpr *l = parse_primary(ps), *r;
	enum eop op;

	if (!l)
		return NULL;
	switch (ps->lx.tok) {
	case T_EQ:
		op = E_EQ;
		break;
	case T_NE:
		op = E_NE;
		break;
	case T_LT:
		op = E_LT;
		break;
	case T_LE:
		op = E_LE;
		break;
	case T_GT:
		op = E_GT;
		break;
	case T_GE:
		op = E_GE;
		break;
	default:
		return l;
	}
	lex_next(&ps->lx);
	r = parse_primary(ps);
	return r ? mk_expr(ps->t, op, l, r) : NULL;
}

static struct kexpr *
parse_not(struct parser *ps)
{
	struct kexpr *e;

	if (ps->lx.tok != T_NOT)
		return parse_cmp(ps);
	if (++ps->edepth > MAX_EXPR_DEPTH) {
		perr(ps, "expression nested too deeply", NULL);
		return NULL;
	}
	lex_next(&ps->lx);
	e = parse_not(ps);
	ps->edepth--;
	return e ? mk_expr(ps->t, E_NOT, e, NULL) : NULL;
}

static struct kexpr *
parse_and(struct parser *ps)
{
	struct kexpr *l = parse_not(ps);

	while (l && ps->lx.tok == T_AND) {
		struct kexpr *r;

		lex_next(&ps->lx);
		r = parse_not(ps);
		l = r ? mk_expr(ps->t, E_AND, l, r) : NULL;
	}
	return l;
}

static struct kexpr *
parse_or(struct parser *ps)
{
	struct kexpr *l;

	if (++ps->edepth > MAX_EXPR_DEPTH) {
		perr(ps, "expression nested too deeply", NULL);
		return NULL;
	}
	l = parse_and(ps);
	while (l && ps->lx.tok == T_OR) {
		struct kexpr *r;

		lex_next(&ps->lx);
		r = parse_and(ps);
		l = r ? mk_expr(ps->t, E_OR, l, r) : NULL;
	}
	ps->edepth--;
	return l;
}

/* A whole expression that must end the line. */
static struct kexpr *
parse_expr_eol(struct parser *ps)
{
	struct kexpr *e;

	ps->edepth = 0;
	e = parse_or(ps);
	if (e && ps->lx.tok != T_EOL) {
		perr(ps, "unexpected text after the expression", NULL);
		return NULL;
	}
	return e;
}

/* An optional "if EXPR" at the end of an attribute; *out NULL when there is none. */
static bool
parse_opt_if(struct parser *ps, struct kexpr **out)
{
	*out = NULL;
	if (ps->lx.tok == T_EOL)
		return true;
	if (ps->lx.tok != T_WORD || strcmp(ps->lx.text.buf, "if")) {
		perr(ps, "expected 'if' or the end of the line", NULL);
		return false;
	}
	lex_next(&ps->lx);
	*out = parse_expr_eol(ps);
	return *out != NULL;
}

static int
nearest_choice(const struct parser *ps)
{
	for (int i = ps->depth - 1; i >= 0; i--)
		if (ps->stack[i].kind == F_CHOICE)
			return ps->stack[i].choice;
	return -1;
}

static void
finish_entry(struct parser *ps)
{
	struct kconfig_tree *t = ps->t;
	struct entry *en = &ps->en;

	if (en->kind == EN_CONFIG) {
		struct kdef *d = arena_alloc(&t->arena, sizeof(*d));
		struct kexpr *dep = NULL, *vis = NULL;
		struct ksym *s = en->sym;

		for (int i = 0; i < ps->depth; i++) {
			dep = mk_and(t, dep, ps->stack[i].dep);
			vis = mk_and(t, vis, ps->stack[i].visible);
		}
		d->file = en->file;
		d->line = en->line;
		d->dep = mk_and(t, dep, en->dep);
		d->prompt = en->prompt;
		d->visible = mk_and(t, vis, en->prompt_if);
		d->choice = nearest_choice(ps);
		d->range_lo = en->range_lo;
		d->range_hi = en->range_hi;
		if (s->last_def)
			s->last_def->next = d;
		else
			s->defs = d;
		s->last_def = d;
		if (en->type != KT_UNKNOWN)
			s->type = en->type;
		if (d->choice >= 0) {
			struct kchoice *c = &t->choices[d->choice];
			bool seen = false;

			for (size_t i = 0; i < c->n && !seen; i++)
				seen = c->members[i] == s;
			if (!seen) {
				ALLOC_GROW(c->members, c->n + 1, c->alloc);
				c->members[c->n++] = s;
			}
		}
		for (size_t i = 0; i < en->nsel; i++) {
			struct kselect *k = arena_alloc(&t->arena, sizeof(*k));

			k->by = s;
			k->cond = en->sel[i].cond;
			k->dep = d->dep;
			k->next = en->sel[i].target->selected_by;
			en->sel[i].target->selected_by = k;
			en->sel[i].target->nselectors++;
		}
	}
	free(en->sel);
	memset(en, 0, sizeof(*en));
}

static enum status
push_frame(struct parser *ps, enum frame_kind kind, struct kexpr *dep)
{
	struct frame *f;

	if (ps->depth >= MAX_BLOCK_DEPTH)
		return perr(ps, "blocks nested too deeply", NULL);
	f = &ps->stack[ps->depth++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->dep = dep;
	f->choice = -1;
	f->file = ps->file;
	f->line = ps->line;
	return OK;
}

static const char *const frame_open[] = { "if", "menu", "choice" };
static const char *const frame_close[] = { "endif", "endmenu", "endchoice" };

static enum status
pop_frame(struct parser *ps, enum frame_kind kind, int floor)
{
	if (ps->depth <= floor || ps->stack[ps->depth - 1].kind != kind) {
		if (ps->failed)
			return ERR_PARSE;
		ps->failed = true;
		if (ps->depth > floor)
			return error(ERR_PARSE, "%s:%u: '%s' closes the '%s' opened at %s:%u",
				     ps->file, ps->line, frame_close[kind],
				     frame_open[ps->stack[ps->depth - 1].kind],
				     ps->stack[ps->depth - 1].file, ps->stack[ps->depth - 1].line);
		return error(ERR_PARSE, "%s:%u: '%s' without '%s'", ps->file, ps->line,
			     frame_close[kind], frame_open[kind]);
	}
	ps->depth--;
	return OK;
}

static enum kc_type
type_of(const char *w)
{
	if (!strcmp(w, "bool") || !strcmp(w, "def_bool"))
		return KT_BOOL;
	if (!strcmp(w, "tristate") || !strcmp(w, "def_tristate"))
		return KT_TRISTATE;
	if (!strcmp(w, "string"))
		return KT_STRING;
	if (!strcmp(w, "int"))
		return KT_INT;
	if (!strcmp(w, "hex"))
		return KT_HEX;
	return KT_UNKNOWN;
}

static enum status parse_file(struct parser *ps, const char *rel);

/* Expand $(SRCARCH) (and $(HEADER_ARCH), um's name for it) in a source path. */
static char *
expand_source(const struct parser *ps, const char *path, bool *unknown)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = path;

	*unknown = false;
	while (*p) {
		if (p[0] == '$' && p[1] == '(') {
			const char *end = strchr(p, ')');

			if (!end) {
				*unknown = true;
				break;
			}
			if ((size_t)(end - p) == 9 && !strncmp(p, "$(SRCARCH)", 10))
				strbuf_adds(&sb, ps->t->srcarch);
			else if (!strncmp(p, "$(HEADER_ARCH)", 14))
				strbuf_adds(&sb, ps->t->srcarch);
			else
				*unknown = true;
			p = end + 1;
			continue;
		}
		strbuf_addch(&sb, *p++);
	}
	return strbuf_detach(&sb);
}

static enum status
do_source(struct parser *ps, const char *kw)
{
	bool relative = !strcmp(kw, "rsource") || !strcmp(kw, "orsource");
	bool optional = kw[0] == 'o';
	bool unknown;
	char *path, *rel, *full;
	enum status rc = OK;

	if (ps->lx.tok != T_STRING)
		return perr(ps, "expected a quoted file name after ", kw);
	path = expand_source(ps, ps->lx.text.buf, &unknown);
	if (unknown) {
		pwarn(ps, "skipped a source with an unknown variable:", ps->lx.text.buf);
		free(path);
		return OK;
	}
	if (relative) {
		const char *slash = strrchr(ps->file, '/');
		char *dir = slash ? xstrndup(ps->file, (size_t)(slash - ps->file)) : xstrdup("");

		rel = *dir ? path_join(dir, path) : xstrdup(path);
		free(dir);
	} else {
		rel = xstrdup(path);
	}
	free(path);
	if (strchr(rel, '*') || strchr(rel, '?')) {
		pwarn(ps, "skipped a source with a wildcard:", rel);
		free(rel);
		return OK;
	}
	full = path_join(ps->t->srctree, rel);
	if (optional && !path_exists(full)) {
		free(full);
		free(rel);
		return OK;
	}
	free(full);
	{
		const char *file = ps->file;
		unsigned line = ps->line;

		rc = parse_file(ps, rel);
		ps->file = file;
		ps->line = line;
	}
	free(rel);
	return rc;
}

static bool
is_attribute(const char *w)
{
	static const char *const attrs[] = {
		"bool",		  "tristate",	   "string",  "int",	  "hex",
		"def_bool",	  "def_tristate",  "prompt",  "default",  "depends",
		"select",	  "imply",	   "range",   "help",	  "---help---",
		"visible",	  "option",	   "modules", "optional", "transitional",
		"defconfig_list", "allnoconfig_y",
	};

	for (size_t i = 0; i < ARRAY_SIZE(attrs); i++)
		if (!strcmp(w, attrs[i]))
			return true;
	return false;
}

/* One attribute line of the current entry; kw is its first word (already lexed). */
static enum status
do_attribute(struct parser *ps, const char *kw, bool *help)
{
	struct entry *en = &ps->en;
	struct kconfig_tree *t = ps->t;
	struct kexpr *e;
	enum kc_type ty = type_of(kw);

	if (!strcmp(kw, "help") || !strcmp(kw, "---help---")) {
		*help = true;
		return OK;
	}
	if (en->kind == EN_NONE) {
		pwarn(ps, "attribute outside an entry:", kw);
		return OK;
	}
	if (!strcmp(kw, "depends")) {
		if (ps->lx.tok != T_WORD || strcmp(ps->lx.text.buf, "on"))
			return perr(ps, "expected 'depends on'", NULL);
		lex_next(&ps->lx);
		e = parse_expr_eol(ps);
		if (!e)
			return ERR_PARSE;
		if (en->kind == EN_CONFIG)
			en->dep = mk_and(t, en->dep, e);
		else if (en->kind == EN_MENU || en->kind == EN_CHOICE)
			ps->stack[ps->depth - 1].dep = mk_and(t, ps->stack[ps->depth - 1].dep, e);
		return OK;
	}
	if (!strcmp(kw, "visible")) {
		if (ps->lx.tok != T_WORD || strcmp(ps->lx.text.buf, "if"))
			return perr(ps, "expected 'visible if'", NULL);
		lex_next(&ps->lx);
		e = parse_expr_eol(ps);
		if (!e)
			return ERR_PARSE;
		if (en->kind == EN_MENU)
			ps->stack[ps->depth - 1].visible =
				mk_and(t, ps->stack[ps->depth - 1].visible, e);
		return OK;
	}
	if (en->kind != EN_CONFIG)
		return OK; /* prompts, types and defaults of choices, menus, comments */
	if (ty != KT_UNKNOWN) {
		en->type = ty;
		if (str_startswith(kw, "def_"))
			return OK; /* the default is not needed */
		if (ps->lx.tok == T_STRING) {
			en->prompt = true;
			lex_next(&ps->lx);
			if (!parse_opt_if(ps, &e))
				return ERR_PARSE;
			en->prompt_if = mk_and(t, en->prompt_if, e);
		}
		return OK;
	}
	if (!strcmp(kw, "prompt")) {
		if (ps->lx.tok != T_STRING)
			return perr(ps, "expected a quoted prompt", NULL);
		en->prompt = true;
		lex_next(&ps->lx);
		if (!parse_opt_if(ps, &e))
			return ERR_PARSE;
		en->prompt_if = mk_and(t, en->prompt_if, e);
		return OK;
	}
	if (!strcmp(kw, "select") || !strcmp(kw, "imply")) {
		struct ksym *target;

		if (ps->lx.tok != T_WORD)
			return perr(ps, "expected an option name after ", kw);
		target = sym_get(t, ps->lx.text.buf);
		lex_next(&ps->lx);
		if (!parse_opt_if(ps, &e))
			return ERR_PARSE;
		if (kw[0] == 's') {
			ALLOC_GROW(en->sel, en->nsel + 1, en->asel);
			en->sel[en->nsel].target = target;
			en->sel[en->nsel].cond = e;
			en->nsel++;
		}
		return OK;
	}
	if (!strcmp(kw, "range")) {
		struct kexpr *lo, *hi;

		if (!(lo = parse_primary(ps)) || !(hi = parse_primary(ps)))
			return ERR_PARSE;
		if (!en->range_lo) { /* the first range is the one kconfig uses */
			en->range_lo = lo;
			en->range_hi = hi;
		}
		return OK;
	}
	return OK; /* default, option, modules, optional, ... */
}

/* A top-level macro definition (NAME := value, NAME = value, NAME += value). */
static bool
is_macro_definition(const char *rest)
{
	while (*rest == ' ' || *rest == '\t')
		rest++;
	return rest[0] == '=' || (rest[0] == ':' && rest[1] == '=') ||
	       (rest[0] == '+' && rest[1] == '=');
}

static enum status
parse_line(struct parser *ps, const char *text, bool *help)
{
	struct kconfig_tree *t = ps->t;
	char *kw;
	enum status rc = OK;

	ps->lx.p = text;
	lex_next(&ps->lx);
	if (ps->lx.tok == T_EOL)
		return OK;
	if (ps->lx.tok == T_MACRO)
		return OK; /* a macro call at the top level: $(error-if,...) */
	if (ps->lx.tok != T_WORD) {
		pwarn(ps, "skipped a line starting with", text);
		return OK;
	}
	kw = xstrdup(ps->lx.text.buf);
	if (is_macro_definition(ps->lx.p)) {
		free(kw);
		return OK;
	}
	lex_next(&ps->lx);
	if (!strcmp(kw, "config") || !strcmp(kw, "menuconfig")) {
		finish_entry(ps);
		if (ps->lx.tok != T_WORD) {
			rc = perr(ps, "expected an option name after ", kw);
		} else {
			ps->en.kind = EN_CONFIG;
			ps->en.sym = sym_get(t, ps->lx.text.buf);
			ps->en.file = ps->file;
			ps->en.line = ps->line;
		}
	} else if (!strcmp(kw, "choice")) {
		finish_entry(ps);
		rc = push_frame(ps, F_CHOICE, NULL);
		if (rc == OK) {
			struct kchoice *c;

			ALLOC_GROW(t->choices, t->nchoices + 1, t->achoices);
			c = &t->choices[t->nchoices];
			memset(c, 0, sizeof(*c));
			c->file = ps->file;
			c->line = ps->line;
			ps->stack[ps->depth - 1].choice = (int)t->nchoices++;
			ps->en.kind = EN_CHOICE;
		}
	} else if (!strcmp(kw, "endchoice")) {
		finish_entry(ps);
		rc = pop_frame(ps, F_CHOICE, ps->floor);
	} else if (!strcmp(kw, "menu")) {
		finish_entry(ps);
		rc = push_frame(ps, F_MENU, NULL);
		ps->en.kind = EN_MENU;
	} else if (!strcmp(kw, "endmenu")) {
		finish_entry(ps);
		rc = pop_frame(ps, F_MENU, ps->floor);
	} else if (!strcmp(kw, "if")) {
		struct kexpr *e;

		finish_entry(ps);
		e = parse_expr_eol(ps);
		rc = e ? push_frame(ps, F_IF, e) : ERR_PARSE;
	} else if (!strcmp(kw, "endif")) {
		finish_entry(ps);
		rc = pop_frame(ps, F_IF, ps->floor);
	} else if (!strcmp(kw, "comment")) {
		finish_entry(ps);
		ps->en.kind = EN_COMMENT;
	} else if (!strcmp(kw, "mainmenu")) {
		finish_entry(ps);
	} else if (!strcmp(kw, "source") || !strcmp(kw, "rsource") || !strcmp(kw, "osource") ||
		   !strcmp(kw, "orsource")) {
		finish_entry(ps);
		rc = do_source(ps, kw);
	} else if (is_attribute(kw)) {
		rc = do_attribute(ps, kw, help);
	} else {
		pwarn(ps, "unknown keyword", kw);
	}
	free(kw);
	return rc;
}

static unsigned
indent_of(const char *s, const char *end)
{
	unsigned col = 0;

	for (; s < end && (*s == ' ' || *s == '\t'); s++)
		col = *s == '\t' ? (col + 8) & ~7u : col + 1;
	return col;
}

static bool
blank_line(const char *s, const char *end)
{
	for (; s < end; s++)
		if (!isspace((unsigned char)*s))
			return false;
	return true;
}

static enum status
parse_file(struct parser *ps, const char *rel)
{
	struct kconfig_tree *t = ps->t;
	char *full = path_join(t->srctree, rel), *text;
	const char *file = arena_strdup(&t->arena, rel);
	const char *p, *end;
	size_t len;
	int floor = ps->depth, saved_floor = ps->floor;
	bool help = false;
	unsigned help_indent = 0, lineno = 0;
	struct strbuf logical = STRBUF_INIT;
	enum status rc;

	for (int i = 0; i < ps->nopen; i++)
		if (!strcmp(ps->open_files[i], rel)) {
			free(full);
			return perr(ps, "source cycle: this sources ", rel);
		}
	if (ps->nopen >= MAX_SOURCE_DEPTH) {
		free(full);
		return perr(ps, "sources nested too deeply at ", rel);
	}
	if (++t->nfiles > MAX_FILES) {
		free(full);
		return perr(ps, "too many Kconfig files; stopped at ", rel);
	}
	rc = read_file(full, MAX_FILE_SIZE, &text, &len);
	free(full);
	if (rc != OK) {
		if (ps->nopen)
			return error_prefix(rc, "%s:%u", ps->file, ps->line);
		return rc;
	}
	ps->open_files[ps->nopen++] = file;
	ps->file = file;
	ps->floor = floor;
	p = text;
	end = text + len;
	while (p < end && rc == OK) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		lineno++;
		ps->line = lineno;
		if (help) {
			if (blank_line(p, le)) {
				p = nl ? nl + 1 : end;
				continue;
			}
			unsigned ind = indent_of(p, le);

			if (ind > 0 && (help_indent == 0 || ind >= help_indent)) {
				if (help_indent == 0)
					help_indent = ind;
				p = nl ? nl + 1 : end;
				continue;
			}
			help = false;
		}
		strbuf_reset(&logical);
		strbuf_add(&logical, p, (size_t)(le - p));
		p = nl ? nl + 1 : end;
		while (logical.len && logical.buf[logical.len - 1] == '\\' && p < end) {
			const char *nl2 = memchr(p, '\n', (size_t)(end - p));
			const char *le2 = nl2 ? nl2 : end;

			strbuf_setlen(&logical, logical.len - 1);
			strbuf_addch(&logical, ' ');
			strbuf_add(&logical, p, (size_t)(le2 - p));
			p = nl2 ? nl2 + 1 : end;
			lineno++;
			if (logical.len > MAX_LINE) {
				rc = perr(ps, "line longer than 64 KiB", NULL);
				break;
			}
		}
		if (rc != OK)
			break;
		if (logical.len > MAX_LINE) {
			rc = perr(ps, "line longer than 64 KiB", NULL);
			break;
		}
		rc = parse_line(ps, logical.buf, &help);
		ps->file = file;
		if (help)
			help_indent = 0;
	}
	if (rc == OK) {
		finish_entry(ps);
		if (ps->depth > floor) {
			struct frame *f = &ps->stack[ps->depth - 1];

			ps->failed = true;
			rc = error(ERR_PARSE,
				   "%s:%u: '%s' is not closed (no '%s' before the end of the file)",
				   f->file, f->line, frame_open[f->kind], frame_close[f->kind]);
		}
	}
	ps->nopen--;
	ps->floor = saved_floor;
	strbuf_release(&logical);
	free(text);
	return rc;
}

enum status
kconfig_tree_load(const char *srctree, const char *srcarch, struct kconfig_tree **out)
{
	struct kconfig_tree *t = xcalloc(1, sizeof(*t));
	struct parser ps;
	enum status rc;

	*out = NULL;
	{
		char *top = path_join(srctree, "Kconfig");
		bool there = path_exists(top);

		free(top);
		if (!there) {
			free(t);
			return error(ERR_NOTFOUND, "'%s' has no Kconfig file; is it a kernel tree?",
				     srctree);
		}
	}
	t->srctree = xstrdup(srctree);
	t->srcarch = xstrdup(srcarch);
	strvec_init(&t->warning_lines);
	memset(&ps, 0, sizeof(ps));
	ps.t = t;
	ps.file = "Kconfig";
	strbuf_init(&ps.lx.text);
	rc = parse_file(&ps, "Kconfig");
	finish_entry(&ps);
	strbuf_release(&ps.lx.text);
	if (rc != OK) {
		kconfig_tree_free(t);
		return rc;
	}
	*out = t;
	return OK;
}

void
kconfig_tree_free(struct kconfig_tree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nchoices; i++)
		free(t->choices[i].members);
	free(t->choices);
	free(t->names);
	map_free(&t->syms);
	strvec_clear(&t->warning_lines);
	arena_free(&t->arena);
	free(t->srctree);
	free(t->srcarch);
	free(t);
}

static bool
sym_defined(const struct ksym *s)
{
	return s && s->defs;
}

bool
kconfig_tree_has(const struct kconfig_tree *t, const char *name)
{
	return sym_defined(sym_lookup(t, name));
}

size_t
kconfig_tree_files(const struct kconfig_tree *t)
{
	return t->nfiles;
}

size_t
kconfig_tree_symbols(const struct kconfig_tree *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nnames; i++)
		n += sym_defined(sym_lookup(t, t->names[i]));
	return n;
}

size_t
kconfig_tree_warnings(const struct kconfig_tree *t)
{
	return t->nwarnings;
}

const struct strvec *
kconfig_tree_warning_lines(const struct kconfig_tree *t)
{
	return &t->warning_lines;
}

/* ---- rendering expressions ---- */

static const char *
op_str(enum eop op)
{
	switch (op) {
	case E_EQ:
		return "=";
	case E_NE:
		return "!=";
	case E_LT:
		return "<";
	case E_LE:
		return "<=";
	case E_GT:
		return ">";
	case E_GE:
		return ">=";
	case E_AND:
		return "&&";
	case E_OR:
		return "||";
	default:
		return "?";
	}
}

static int
prec_of(enum eop op)
{
	switch (op) {
	case E_OR:
		return 1;
	case E_AND:
		return 2;
	case E_NOT:
		return 3;
	case E_SYM:
	case E_MACRO:
		return 5;
	default:
		return 4;
	}
}

/* The expression as Kconfig writes it. */
static void
render_plain(const struct kexpr *e, struct strbuf *sb, int outer)
{
	int p = prec_of(e->op);

	if (p < outer)
		strbuf_addch(sb, '(');
	switch (e->op) {
	case E_SYM:
		if (e->quoted)
			strbuf_addf(sb, "\"%s\"", e->name);
		else
			strbuf_adds(sb, e->name);
		break;
	case E_MACRO:
		strbuf_adds(sb, e->name);
		break;
	case E_NOT:
		strbuf_addch(sb, '!');
		render_plain(e->l, sb, 3);
		break;
	default:
		render_plain(e->l, sb, e->op == E_AND || e->op == E_OR ? p : 5);
		strbuf_addf(sb, " %s ", op_str(e->op));
		render_plain(e->r, sb, e->op == E_AND || e->op == E_OR ? p : 5);
		break;
	}
	if (p < outer)
		strbuf_addch(sb, ')');
}

char *
kconfig_tree_depends(const struct kconfig_tree *t, const char *name)
{
	const struct ksym *s = sym_lookup(t, name);
	struct strbuf sb = STRBUF_INIT;

	if (!sym_defined(s))
		return NULL;
	if (s->defs->dep)
		render_plain(s->defs->dep, &sb, 0);
	return strbuf_detach(&sb);
}

/* ---- evaluation ---- */

struct ectx {
	const struct kconfig_tree *t;
	const struct kconfig_values *cfg;
	const struct kconfig_requests *req;
	bool modules;
};

static bool
is_const_word(const char *w)
{
	char *end;

	if (!strcmp(w, "y") || !strcmp(w, "m") || !strcmp(w, "n"))
		return true;
	errno = 0;
	(void)strtoll(w, &end, 0);
	return *w && !*end && !errno;
}

/* A word that names an option (defined here, or found in the .config). */
static bool
is_option(const struct ectx *c, const struct kexpr *e)
{
	if (e->op != E_SYM || e->quoted || is_const_word(e->name))
		return false;
	return true;
}

static int
tri_value(const char *v)
{
	if (!v)
		return 0;
	if (!strcmp(v, "y"))
		return 2;
	if (!strcmp(v, "m"))
		return 1;
	return 0;
}

static int
leaf_tri(const struct ectx *c, const struct kexpr *e)
{
	if (e->quoted)
		return tri_value(e->name);
	if (!strcmp(e->name, "y"))
		return 2;
	if (!strcmp(e->name, "n"))
		return 0;
	if (!strcmp(e->name, "m"))
		return c->modules ? 1 : 0;
	return tri_value(kconfig_value(c->cfg, e->name));
}

static enum kc_type
sym_type(const struct ectx *c, const char *name)
{
	const struct ksym *s = c->t ? sym_lookup(c->t, name) : NULL;

	return s ? s->type : KT_UNKNOWN;
}

/* A leaf's value as a string, for comparisons; buf holds stripped quotes. */
static const char *
leaf_str(const struct ectx *c, const struct kexpr *e, char *buf, size_t len)
{
	const char *v;

	if (e->quoted || !is_option(c, e))
		return e->name;
	v = kconfig_value(c->cfg, e->name);
	if (!v) {
		enum kc_type ty = sym_type(c, e->name);

		return ty == KT_STRING || ty == KT_INT || ty == KT_HEX ? "" : "n";
	}
	if (v[0] == '"') {
		size_t n = strlen(v);

		snprintf(buf, len, "%.*s", (int)(n >= 2 ? n - 2 : 0), v + 1);
		return buf;
	}
	return v;
}

static bool
as_number(const char *s, long long *out)
{
	char *end;

	if (!*s)
		return false;
	errno = 0;
	*out = strtoll(s, &end, 0);
	if (*end || errno) {
		errno = 0;
		*out = strtoll(s, &end, 16);
		return !*end && !errno && (str_startswith(s, "0x") || str_startswith(s, "0X"));
	}
	return true;
}

static int
compare(const struct ectx *c, const struct kexpr *e)
{
	char b1[256], b2[256];
	const char *l = leaf_str(c, e->l, b1, sizeof(b1));
	const char *r = leaf_str(c, e->r, b2, sizeof(b2));
	long long a, b;
	int cmp;

	if (e->l->op != E_SYM || e->r->op != E_SYM)
		return 2; /* a macro on one side: counts as met */
	if (as_number(l, &a) && as_number(r, &b))
		cmp = a < b ? -1 : a > b;
	else
		cmp = strcmp(l, r);
	switch (e->op) {
	case E_EQ:
		return cmp == 0 ? 2 : 0;
	case E_NE:
		return cmp != 0 ? 2 : 0;
	case E_LT:
		return cmp < 0 ? 2 : 0;
	case E_LE:
		return cmp <= 0 ? 2 : 0;
	case E_GT:
		return cmp > 0 ? 2 : 0;
	case E_GE:
		return cmp >= 0 ? 2 : 0;
	default:
		return 0;
	}
}

static int
eval(const struct ectx *c, const struct kexpr *e)
{
	int a, b;

	if (!e)
		return 2;
	switch (e->op) {
	case E_SYM:
		return leaf_tri(c, e);
	case E_MACRO:
		return 2;
	case E_NOT:
		return 2 - eval(c, e->l);
	case E_AND:
		a = eval(c, e->l);
		b = eval(c, e->r);
		return a < b ? a : b;
	case E_OR:
		a = eval(c, e->l);
		b = eval(c, e->r);
		return a > b ? a : b;
	default:
		return compare(c, e);
	}
}

/* ---- explaining ---- */

/* "CONFIG_FOO (not set)", "CONFIG_FOO (m)", "28", "\"x\"". */
static void
render_leaf(const struct ectx *c, const struct kexpr *e, struct strbuf *sb)
{
	const char *v;

	if (e->op == E_MACRO) {
		strbuf_addf(sb, "%s (a toolchain test)", e->name);
		return;
	}
	if (!is_option(c, e)) {
		if (e->quoted)
			strbuf_addf(sb, "\"%s\"", e->name);
		else
			strbuf_adds(sb, e->name);
		return;
	}
	v = kconfig_value(c->cfg, e->name);
	if (!v || !strcmp(v, "n")) {
		if (c->t && !kconfig_tree_has(c->t, e->name))
			strbuf_addf(sb, "CONFIG_%s (not set: there is no such option for %s)",
				    e->name, c->t->srcarch);
		else
			strbuf_addf(sb, "CONFIG_%s (not set)", e->name);
	} else {
		strbuf_addf(sb, "CONFIG_%s (%s)", e->name, v);
	}
}

/* The expression with the values of its options shown. */
static void
render_values(const struct ectx *c, const struct kexpr *e, struct strbuf *sb, int outer)
{
	int p = prec_of(e->op);

	switch (e->op) {
	case E_SYM:
	case E_MACRO:
		render_leaf(c, e, sb);
		return;
	default:
		break;
	}
	if (p < outer)
		strbuf_addch(sb, '(');
	if (e->op == E_NOT) {
		strbuf_addch(sb, '!');
		render_values(c, e->l, sb, 3);
	} else {
		render_values(c, e->l, sb, e->op == E_AND || e->op == E_OR ? p : 5);
		strbuf_addf(sb, " %s ", op_str(e->op));
		render_values(c, e->r, sb, e->op == E_AND || e->op == E_OR ? p : 5);
	}
	if (p < outer)
		strbuf_addch(sb, ')');
}

static void
flatten_or(const struct kexpr *e, const struct kexpr **terms, size_t *n, size_t max)
{
	if (e->op == E_OR) {
		flatten_or(e->l, terms, n, max);
		flatten_or(e->r, terms, n, max);
	} else if (*n < max) {
		terms[(*n)++] = e;
	}
}

/*
 * Add to phrases what makes e fall short of need (2: y, 1: at least m),
 * and to leaves the options whose being unset is the cause.
 */
static void
explain(const struct ectx *c, const struct kexpr *e, int need, struct strvec *phrases,
	struct strvec *leaves)
{
	struct strbuf sb = STRBUF_INIT;

	if (!e || eval(c, e) >= need)
		return;
	switch (e->op) {
	case E_AND:
		explain(c, e->l, need, phrases, leaves);
		explain(c, e->r, need, phrases, leaves);
		return;
	case E_OR: {
		const struct kexpr *terms[16];
		size_t n = 0;

		flatten_or(e, terms, &n, ARRAY_SIZE(terms));
		strbuf_adds(&sb, "one of ");
		for (size_t i = 0; i < n; i++) {
			if (i)
				strbuf_adds(&sb, i + 1 == n ? " or " : ", ");
			render_values(c, terms[i], &sb, 3);
		}
		break;
	}
	case E_NOT:
		if (is_option(c, e->l)) {
			const char *v = kconfig_value(c->cfg, e->l->name);

			strbuf_addf(&sb, "CONFIG_%s off (it is %s)", e->l->name, v ? v : "set");
		} else {
			strbuf_adds(&sb, "not ");
			render_values(c, e->l, &sb, 3);
		}
		break;
	case E_SYM:
		if (!is_option(c, e)) {
			if (!strcmp(e->name, "m"))
				strbuf_adds(&sb, "CONFIG_MODULES (not set)");
			else
				strbuf_addf(&sb, "'%s', which is never met", e->name);
			break;
		}
		if (leaf_tri(c, e) == 1 && need == 2) {
			strbuf_addf(&sb, "CONFIG_%s=y (it is m)", e->name);
		} else {
			render_leaf(c, e, &sb);
			if (leaves && !strvec_contains(leaves, e->name))
				strvec_push(leaves, e->name);
		}
		break;
	default:
		render_values(c, e, &sb, 0);
		break;
	}
	if (sb.len && !strvec_contains(phrases, sb.buf))
		strvec_push(phrases, sb.buf);
	strbuf_release(&sb);
}

static void
join_phrases(struct strbuf *sb, const struct strvec *phrases)
{
	for (size_t i = 0; i < phrases->n; i++) {
		if (i)
			strbuf_adds(sb, i + 1 == phrases->n ? " and " : ", ");
		strbuf_adds(sb, phrases->v[i]);
	}
}

/* The definition with the best-met dependencies, and that value. */
static const struct kdef *
best_def(const struct ectx *c, const struct ksym *s, int *value)
{
	const struct kdef *best = NULL;
	int bv = -1;

	for (const struct kdef *d = s->defs; d; d = d->next) {
		int v = eval(c, d->dep);

		if (v > bv) {
			bv = v;
			best = d;
		}
	}
	*value = bv < 0 ? 0 : bv;
	return best;
}

static bool
has_prompt(const struct ksym *s)
{
	for (const struct kdef *d = s->defs; d; d = d->next)
		if (d->prompt)
			return true;
	return false;
}

/* "CONFIG_A, CONFIG_B and 3 more" of the options selecting s. */
static void
list_selectors(const struct ksym *s, struct strbuf *sb, size_t max)
{
	size_t n = 0;
	const struct ksym *seen[64];
	size_t nseen = 0;

	for (const struct kselect *k = s->selected_by; k; k = k->next) {
		bool dup = false;

		for (size_t i = 0; i < nseen && !dup; i++)
			dup = seen[i] == k->by;
		if (dup)
			continue;
		if (nseen < ARRAY_SIZE(seen))
			seen[nseen++] = k->by;
		if (n < max)
			strbuf_addf(sb, "%sCONFIG_%s", n ? ", " : "", k->by->name);
		n++;
	}
	if (n > max)
		strbuf_addf(sb, " and %zu more", n - max);
}

/* Why the unset option name (not itself asked for) is unset: one sentence, then deeper. */
static void
chain(const struct ectx *c, const char *name, int need, int depth, struct strvec *visited,
      struct strbuf *out)
{
	const struct ksym *s = sym_lookup(c->t, name);
	struct strvec phrases = STRVEC_INIT, leaves = STRVEC_INIT;
	int dv;

	if (!sym_defined(s) || depth >= MAX_CHAIN || strvec_contains(visited, name) ||
	    (c->req && kconfig_requests_find(c->req, name)))
		return;
	strvec_push(visited, name);
	best_def(c, s, &dv);
	if (dv < need) {
		int v = -1;
		const struct kdef *d = best_def(c, s, &v);

		explain(c, d->dep, need, &phrases, &leaves);
		if (phrases.n) {
			strbuf_addf(out, "; CONFIG_%s needs ", name);
			join_phrases(out, &phrases);
		}
		for (size_t i = 0; i < leaves.n; i++)
			chain(c, leaves.v[i], need, depth + 1, visited, out);
	} else if (!has_prompt(s)) {
		strbuf_addf(out, "; CONFIG_%s has no prompt: it is on only when selected", name);
		if (s->selected_by) {
			strbuf_adds(out, " (by ");
			list_selectors(s, out, 4);
			strbuf_adds(out, ")");
		}
	} else {
		strbuf_addf(out, "; CONFIG_%s can be set: add CONFIG_%s=y to a fragment", name,
			    name);
	}
	strvec_clear(&phrases);
	strvec_clear(&leaves);
}

static char *
explain_depends(const struct ectx *c, const char *name, const struct kexpr *dep, int need,
		const char *how)
{
	struct strvec phrases = STRVEC_INIT, leaves = STRVEC_INIT, visited = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;

	explain(c, dep, need, &phrases, &leaves);
	strbuf_addf(&sb, "CONFIG_%s %s ", name, how);
	if (phrases.n)
		join_phrases(&sb, &phrases);
	else
		strbuf_adds(&sb, "a dependency that is not met");
	strvec_push(&visited, name);
	for (size_t i = 0; i < leaves.n; i++)
		chain(c, leaves.v[i], need, 0, &visited, &sb);
	strvec_clear(&phrases);
	strvec_clear(&leaves);
	strvec_clear(&visited);
	return strbuf_detach(&sb);
}

static bool
is_off(const char *v)
{
	return !v || !strcmp(v, "n") || !*v;
}

static bool
same_value(const char *a, const char *b)
{
	long long x, y;

	if (!strcmp(a, b))
		return true;
	return as_number(a, &x) && as_number(b, &y) && x == y;
}

/* A defined option within a few edits of name (a typo), or NULL. */
static const char *
closest_option(const struct kconfig_tree *t, const char *name)
{
	size_t len = strlen(name), limit = len / 5 > 2 ? len / 5 : 2, best = limit + 1;
	const char *found = NULL;

	for (size_t i = 0; i < t->nnames; i++) {
		size_t l2 = strlen(t->names[i]), d;

		if ((l2 > len ? l2 - len : len - l2) > limit || !kconfig_tree_has(t, t->names[i]))
			continue;
		d = edit_distance(name, t->names[i]);
		if (d < best) {
			best = d;
			found = t->names[i];
		}
	}
	return found;
}

static const struct kchoice *
choice_of(const struct ectx *c, const struct ksym *s)
{
	for (const struct kdef *x = s->defs; x; x = x->next)
		if (x->choice >= 0)
			return &c->t->choices[x->choice];
	return NULL;
}

/* Judge one request; fills r->verdict and r->why. */
static void
judge(const struct ectx *c, struct kconfig_result *r, unsigned flags)
{
	const char *want = r->wanted, *have = r->actual;
	const struct ksym *s;
	int need, dv;
	const struct kdef *d;

	if (is_off(want) ? is_off(have)
			 : (have && (same_value(want, have) ||
				     (!strcmp(want, "m") && !strcmp(have, "y"))))) {
		r->verdict = KV_SET;
		return;
	}
	if (!strcmp(want, "y") && have && !strcmp(have, "m") && (flags & KCONFIG_MODULES_OK)) {
		r->verdict = KV_MODULE;
		r->why = xasprintf("CONFIG_%s is a module (m): it works once the module is loaded",
				   r->name);
		return;
	}
	if (!c->t) {
		r->verdict = KV_NOT_SET;
		if (is_off(have))
			r->why = xasprintf("CONFIG_%s is not set", r->name);
		else
			r->why = xasprintf("CONFIG_%s is %s, not %s", r->name, have, want);
		return;
	}
	s = sym_lookup(c->t, r->name);
	if (!sym_defined(s)) {
		const char *close = closest_option(c->t, r->name);

		r->verdict = KV_ABSENT;
		if (close && kconfig_tree_has(c->t, close) && strcmp(close, r->name))
			r->why = xasprintf("this tree has no option CONFIG_%s (no 'config %s' in "
					   "its Kconfig files for %s); did you mean CONFIG_%s?",
					   r->name, r->name, c->t->srcarch, close);
		else
			r->why = xasprintf("this tree has no option CONFIG_%s (no 'config %s' in "
					   "its Kconfig files for %s)",
					   r->name, r->name, c->t->srcarch);
		return;
	}
	if (is_off(want)) {
		/* asked off, found on */
		for (const struct kselect *k = s->selected_by; k; k = k->next) {
			if (eval(c, k->cond) > 0 &&
			    leaf_tri(c, &(struct kexpr){ .op = E_SYM, .name = k->by->name }) > 0) {
				r->verdict = KV_SELECTED;
				r->why = xasprintf("CONFIG_%s is selected by CONFIG_%s (%s), which "
						   "turns it on",
						   r->name, k->by->name,
						   kconfig_value(c->cfg, k->by->name));
				return;
			}
		}
		if (!has_prompt(s)) {
			r->verdict = KV_NO_PROMPT;
			r->why = xasprintf("CONFIG_%s has no prompt, so it cannot be turned off by "
					   "hand: its default turns it on",
					   r->name);
			return;
		}
		if (choice_of(c, s)) {
			const struct kchoice *ch = choice_of(c, s);

			r->verdict = KV_CHOICE;
			r->why = xasprintf("CONFIG_%s is one of a choice (%s:%u), which always has "
					   "one member on; ask for another member (=y) instead",
					   r->name, ch->file, ch->line);
			return;
		}
		r->verdict = KV_OTHER;
		r->why = xasprintf("CONFIG_%s is %s although it was asked off; see 'make "
				   "menuconfig' (search with /%s)",
				   r->name, have, r->name);
		return;
	}
	/* a bool's m dependency still lets it be y: only a tristate needs y for y */
	need = !strcmp(want, "m") || s->type != KT_TRISTATE ? 1 : 2;
	d = best_def(c, s, &dv);
	if (dv < need) {
		r->verdict = KV_DEPENDS;
		r->why = explain_depends(c, r->name, d->dep, need, "needs");
		return;
	}
	if (!has_prompt(s)) {
		struct strbuf sb = STRBUF_INIT;

		r->verdict = KV_NO_PROMPT;
		strbuf_addf(&sb,
			    "CONFIG_%s has no prompt, so it cannot be set by hand: it is on "
			    "only when another option selects it",
			    r->name);
		if (s->selected_by) {
			strbuf_adds(&sb, " (");
			list_selectors(s, &sb, 5);
			strbuf_adds(&sb, ")");
		}
		r->why = strbuf_detach(&sb);
		return;
	}
	{
		/* the prompt is there, but hidden? */
		const struct kdef *vis = NULL;
		int vv = -1;

		for (const struct kdef *x = s->defs; x; x = x->next) {
			int v;

			if (!x->prompt)
				continue;
			v = eval(c, x->dep) < eval(c, x->visible) ? eval(c, x->dep)
								  : eval(c, x->visible);
			if (v > vv) {
				vv = v;
				vis = x;
			}
		}
		if (vis && vv < need) {
			r->verdict = KV_DEPENDS;
			r->why = explain_depends(c, r->name, vis->visible, need,
						 "can only be set (its prompt shows) with");
			return;
		}
	}
	for (const struct kdef *x = s->defs; x; x = x->next) {
		const struct kchoice *ch;

		if (x->choice < 0)
			continue;
		ch = &c->t->choices[x->choice];
		for (size_t i = 0; i < ch->n; i++) {
			const char *v = kconfig_value(c->cfg, ch->members[i]->name);

			if (ch->members[i] != s && v && !strcmp(v, "y")) {
				const struct kconfig_request *other =
					c->req ? kconfig_requests_find(c->req, ch->members[i]->name)
					       : NULL;

				r->verdict = KV_CHOICE;
				r->why = xasprintf(
					"CONFIG_%s is one of a choice (%s:%u) and CONFIG_%s was "
					"chosen instead%s",
					r->name, ch->file, ch->line, ch->members[i]->name,
					other && !is_off(other->value)
						? ", because it was asked for too (the later one "
						  "wins only when read last)"
						: "; ask for the one you want and leave the others "
						  "unset");
				return;
			}
		}
	}
	if (s->type == KT_STRING || s->type == KT_INT || s->type == KT_HEX) {
		const struct kdef *rd = NULL;

		for (const struct kdef *x = s->defs; x && !rd; x = x->next)
			if (x->range_lo)
				rd = x;
		r->verdict = KV_VALUE;
		if (rd) {
			char b1[64], b2[64];

			r->why = xasprintf("CONFIG_%s is %s, not %s (its range is %s to %s)",
					   r->name, have ? have : "unset", want,
					   leaf_str(c, rd->range_lo, b1, sizeof(b1)),
					   leaf_str(c, rd->range_hi, b2, sizeof(b2)));
		} else
			r->why = xasprintf("CONFIG_%s is %s, not %s", r->name,
					   have ? have : "unset", want);
		return;
	}
	if (!strcmp(want, "y") && have && !strcmp(have, "m")) {
		r->verdict = KV_OTHER;
		r->why = xasprintf("CONFIG_%s is m, not y (a select or default made it a module)",
				   r->name);
		return;
	}
	if (!(flags & KCONFIG_MERGED) && is_off(have)) {
		r->verdict = KV_NOT_SET;
		r->why = xasprintf("CONFIG_%s is not set; its dependencies are met, so setting "
				   "CONFIG_%s=%s would keep it",
				   r->name, r->name, want);
		return;
	}
	r->verdict = KV_OTHER;
	r->why = xasprintf("CONFIG_%s is %s, not %s, and its dependencies are met; see 'make "
			   "menuconfig' (search with /%s)",
			   r->name, have ? have : "not set", want, r->name);
}

const char *
kconfig_verdict_str(enum kconfig_verdict v)
{
	static const char *const names[] = {
		[KV_SET] = "set",	    [KV_MODULE] = "module",	  [KV_ABSENT] = "absent",
		[KV_DEPENDS] = "depends",   [KV_NO_PROMPT] = "no-prompt", [KV_CHOICE] = "choice",
		[KV_SELECTED] = "selected", [KV_VALUE] = "value",	  [KV_NOT_SET] = "not-set",
		[KV_OTHER] = "other",
	};

	return (size_t)v < ARRAY_SIZE(names) && names[v] ? names[v] : "?";
}

bool
kconfig_result_ok(const struct kconfig_result *r)
{
	return r->verdict == KV_SET || r->verdict == KV_MODULE;
}

void
kconfig_check_values(const struct kconfig_values *cfg, const char *name,
		     const struct kconfig_tree *tree, const struct kconfig_requests *req,
		     unsigned flags, struct kconfig_report *out)
{
	struct ectx c = { tree, cfg, req, false };

	memset(out, 0, sizeof(*out));
	c.modules = tri_value(kconfig_value(cfg, "MODULES")) == 2;
	out->config = xstrdup(name);
	out->v = xcalloc(req->n ? req->n : 1, sizeof(*out->v));
	out->n = req->n;
	for (size_t i = 0; i < req->n; i++) {
		const struct kconfig_request *q = &req->v[i];
		struct kconfig_result *r = &out->v[i];
		const char *have = kconfig_value(cfg, q->name);

		r->name = xstrdup(q->name);
		r->wanted = xstrdup(q->value);
		r->actual = have ? xstrdup(have) : NULL;
		r->source = xstrdup(q->source);
		r->needed_by = q->needed_by ? xstrdup(q->needed_by) : NULL;
		r->need = q->need;
		judge(&c, r, flags);
		if (!tree && r->verdict == KV_NOT_SET && is_off(have)) {
			free(r->why);
			r->why = xasprintf("CONFIG_%s is not set in %s", q->name, name);
		}
		if (kconfig_result_ok(r)) {
			out->nset++;
		} else {
			out->ndropped++;
			if (r->need == KCONFIG_NEED)
				out->nneeded++;
		}
	}
}

enum status
kconfig_check(const char *config_path, const struct kconfig_tree *tree,
	      const struct kconfig_requests *req, unsigned flags, struct kconfig_report *out)
{
	struct kconfig_values *cfg = kconfig_values_new();
	enum status rc = kconfig_values_load(cfg, config_path);

	memset(out, 0, sizeof(*out));
	if (rc == OK)
		kconfig_check_values(cfg, config_path, tree, req, flags, out);
	kconfig_values_free(cfg);
	return rc;
}

void
kconfig_report_release(struct kconfig_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].wanted);
		free(r->v[i].actual);
		free(r->v[i].source);
		free(r->v[i].needed_by);
		free(r->v[i].why);
	}
	free(r->v);
	free(r->config);
	memset(r, 0, sizeof(*r));
}
