/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a .config's options become in a tree, and why: see kconfig.h. */
#include "kbuild/kconfig_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CHAIN 3

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
	const struct ksym *s = kc_sym_lookup(t, name);
	struct strbuf sb = STRBUF_INIT;

	if (!kc_sym_defined(s))
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
	const struct ksym *s = c->t ? kc_sym_lookup(c->t, name) : NULL;

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
	const struct ksym *s = kc_sym_lookup(c->t, name);
	struct strvec phrases = STRVEC_INIT, leaves = STRVEC_INIT;
	int dv;

	if (!kc_sym_defined(s) || depth >= MAX_CHAIN || strvec_contains(visited, name) ||
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
	s = kc_sym_lookup(c->t, r->name);
	if (!kc_sym_defined(s)) {
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
