/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading a kernel tree's Kconfig files: see kconfig.h. */
#include "kbuild/kconfig_int.h"

#include <ctype.h>
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

/* ---- the tree: arena, symbols, expressions ---- */

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

struct ksym *
kc_sym_lookup(const struct kconfig_tree *t, const char *name)
{
	return kc_map_get(&t->syms, name);
}

static struct ksym *
sym_get(struct kconfig_tree *t, const char *name)
{
	struct ksym *s = kc_sym_lookup(t, name);

	if (s)
		return s;
	s = arena_alloc(&t->arena, sizeof(*s));
	s->name = arena_strdup(&t->arena, name);
	kc_map_put(&t->syms, s->name, s);
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
	kc_map_free(&t->syms);
	strvec_clear(&t->warning_lines);
	arena_free(&t->arena);
	free(t->srctree);
	free(t->srcarch);
	free(t);
}

bool
kc_sym_defined(const struct ksym *s)
{
	return s && s->defs;
}

bool
kconfig_tree_has(const struct kconfig_tree *t, const char *name)
{
	return kc_sym_defined(kc_sym_lookup(t, name));
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
		n += kc_sym_defined(kc_sym_lookup(t, t->names[i]));
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
