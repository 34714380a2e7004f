/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the kconfig module: what its files share.
 *
 *	kconfig.c        .config values, fragments and requests (and the map they use)
 *	kconfig_tree.c   reading a tree's Kconfig files: symbols, expressions
 *	kconfig_check.c  what a .config's options become, and why
 */
#ifndef FSWB_KBUILD_KCONFIG_INT_H
#define FSWB_KBUILD_KCONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kbuild/kconfig.h"

struct kc_map {
	const char **keys;
	void **vals;
	size_t cap, n;
};

struct kc_opt {
	char *name;
	char *value;
};

struct kconfig_values {
	struct kc_opt *v;
	size_t n, alloc;
	struct kc_map map; /* name -> index + 1 */
};

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	_Alignas(16) char data[];
};

struct arena {
	struct arena_block *head;
};

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

/* The map: a key's value or NULL; put replaces; free releases the map, not the keys. */
void kc_map_free(struct kc_map *m);
void *kc_map_get(const struct kc_map *m, const char *key);
void kc_map_put(struct kc_map *m, const char *key, void *val);

/* The symbol named name, or NULL; whether it is defined by some Kconfig file. */
struct ksym *kc_sym_lookup(const struct kconfig_tree *t, const char *name);
bool kc_sym_defined(const struct ksym *s);

#endif
