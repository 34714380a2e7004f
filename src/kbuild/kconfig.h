/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kconfig: .config files, config fragments, a reader of a kernel tree's
 * Kconfig files, and the check that says, for every option asked for,
 * whether a .config has it and, when it does not, why.
 *
 * `make olddefconfig` drops options it cannot set without a word. The check
 * names each one and the reason:
 *	absent      no `config NAME` in any Kconfig file of this tree (for this
 *	            architecture), with the closest name that exists
 *	depends     a `depends on` (of the option, or of an enclosing if, menu
 *	            or choice) is not met; the unmet part is named, with the
 *	            value it has: "CONFIG_XFS_ONLINE_REPAIR needs
 *	            CONFIG_XFS_ONLINE_SCRUB (not set)", and one level further
 *	            down for each unmet option that was not itself asked for
 *	no-prompt   the option cannot be set by hand; it is on only when another
 *	            option selects it (the selectors are named)
 *	choice      one of a choice, and another member was chosen
 *	selected    asked to be off, but an option that is on selects it
 *	value       an int/hex/string option with another value
 *	not-set     there is no Kconfig to say why (an installed kernel's
 *	            /boot/config-VERSION, an image's embedded config), or the
 *	            config was not made from the requests (a tree's own
 *	            .config) and the option is simply not set there
 *
 * The reader. It reads the Kconfig language as far as the check needs:
 * config, menuconfig, choice/endchoice, comment, menu/endmenu (with their
 * depends on and visible if), if/endif, source (paths relative to the tree,
 * $(SRCARCH) expanded), and in entries the types, prompts (with their if),
 * def_bool/def_tristate, default, depends on, select, imply, range and help
 * texts (skipped by indentation as kconfig does). Macro definitions and
 * calls at the top level are skipped; a $(...) inside an expression is kept
 * as an opaque term that counts as met (the toolchain tests it stands for
 * end up as CC_HAS_* symbols in the .config, which are evaluated). Other
 * attribute keywords are skipped and counted in kconfig_tree_warnings().
 * Unbalanced if/endif, menu/endmenu or choice/endchoice in a file, a
 * source cycle and a malformed expression are ERR_PARSE naming the file
 * and line. Limits: 20000 files, 8 MiB a file, source depth 32, block
 * nesting 64, expression nesting 256, 64 KiB a line.
 *
 * Expressions are evaluated as kconfig does, in three values (n < m < y):
 * && is the minimum, || the maximum, ! is y minus the value, comparisons
 * give y or n (numbers compared as numbers), and the constant m counts as
 * n unless CONFIG_MODULES is y. An option missing from the .config is n
 * (or "" for int/hex/string options).
 *
 * Call sequence:
 *	struct kconfig_tree *t;
 *	kconfig_tree_load("/src/linux", "x86", &t);
 *	struct kconfig_requests rq; kconfig_requests_init(&rq);
 *	kconfig_requests_add_fragment(&rq, "profiles/kconfig/ext4.config",
 *	                              "kconfig/ext4.config", KCONFIG_WANT);
 *	kconfig_requests_need(&rq, "EXT4_FS", "ext4/4k");
 *	struct kconfig_report rep;
 *	kconfig_check("/build/.config", t, &rq, false, &rep);
 *	... rep.v[i].verdict, rep.v[i].why ...
 *	kconfig_report_release(&rep); kconfig_requests_release(&rq);
 *	kconfig_tree_free(t);
 */
#ifndef FSWB_KBUILD_KCONFIG_H
#define FSWB_KBUILD_KCONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"
#include "core/util.h"

/* ---- .config files and fragments ---- */

/*
 * The options of one .config or fragment, in the order first seen: names
 * without "CONFIG_", values as written ("y", "m", "16000", "\"text\"");
 * "# CONFIG_X is not set" is the value "n".
 */
struct kconfig_values;

struct kconfig_values *kconfig_values_new(void);
void kconfig_values_free(struct kconfig_values *v);
/*
 * Parse text: CONFIG_NAME=VALUE, "# CONFIG_NAME is not set", comments and
 * blank lines. Anything else is ERR_PARSE naming source and the line.
 * Later lines replace earlier ones (a merged fragment's "later wins").
 */
enum status kconfig_values_parse(struct kconfig_values *v, const char *text, const char *source);
/* Read a file into v (ERR_NOTFOUND when it does not exist). */
enum status kconfig_values_load(struct kconfig_values *v, const char *path);
/* Set one option ("n" for not set), keeping its first position. */
void kconfig_values_set(struct kconfig_values *v, const char *name, const char *value);
/* The value, NULL when the option is not there. */
const char *kconfig_value(const struct kconfig_values *v, const char *name);
size_t kconfig_values_count(const struct kconfig_values *v);
/* The i-th option in order (name and value), for i < kconfig_values_count(). */
void kconfig_values_at(const struct kconfig_values *v, size_t i, const char **name,
		       const char **value);
/* Append v as .config text (one line per option) to out. */
void kconfig_values_format(const struct kconfig_values *v, struct strbuf *out);

/* ---- what is asked for ---- */

enum kconfig_need {
	KCONFIG_WANT, /* from a fragment: without it some tests do not run */
	KCONFIG_NEED, /* a filesystem configuration or a requested debug option needs it */
};

struct kconfig_request {
	char *name;	 /* "EXT4_FS" */
	char *value;	 /* "y", "m", "n", or an int/hex/string value as written */
	char *source;	 /* where it was asked: "kconfig/ext4.config:7" */
	char *needed_by; /* "ext4/4k xfs/4k", "--debug kasan"; NULL for a plain want */
	enum kconfig_need need;
};

struct kconfig_requests {
	struct kconfig_request *v; /* in the order first asked */
	size_t n, alloc;
};

void kconfig_requests_init(struct kconfig_requests *r);
void kconfig_requests_release(struct kconfig_requests *r);
/*
 * Ask for name=value. Asking again for the same name replaces value and
 * source (later wins); need becomes the stronger of the two.
 */
void kconfig_requests_set(struct kconfig_requests *r, const char *name, const char *value,
			  const char *source, enum kconfig_need need);
/*
 * Every option of a fragment file; display is how messages name the file
 * ("kconfig/ext4.config"), sources become display:LINE. ERR_PARSE naming
 * display and the line on a malformed line.
 */
enum status kconfig_requests_add_fragment(struct kconfig_requests *r, const char *path,
					  const char *display, enum kconfig_need need);
/*
 * Mark name as needed by who ("ext4/4k"), adding "name=y" when it was not
 * asked for yet. A need is met by y, or by m where modules are fine.
 */
void kconfig_requests_need(struct kconfig_requests *r, const char *name, const char *who);
const struct kconfig_request *kconfig_requests_find(const struct kconfig_requests *r,
						    const char *name);

/* ---- the Kconfig reader ---- */

struct kconfig_tree;

/*
 * Read srctree/Kconfig and everything it sources, for one source
 * architecture ("x86", "arm64": what $(SRCARCH) expands to).
 */
enum status kconfig_tree_load(const char *srctree, const char *srcarch, struct kconfig_tree **out);
void kconfig_tree_free(struct kconfig_tree *t);
/* Whether `config NAME` (or menuconfig) is defined anywhere. */
bool kconfig_tree_has(const struct kconfig_tree *t, const char *name);
/*
 * The full dependency of NAME's first definition (its own depends on with
 * those of the enclosing blocks) as text, "XFS_FS && XFS_ONLINE_SCRUB";
 * "" when it has none, NULL when NAME is not defined. free() it.
 */
char *kconfig_tree_depends(const struct kconfig_tree *t, const char *name);
/* Counts, for tests and messages. */
size_t kconfig_tree_files(const struct kconfig_tree *t);
size_t kconfig_tree_symbols(const struct kconfig_tree *t);
/* Lines skipped because the reader does not know their keyword. */
size_t kconfig_tree_warnings(const struct kconfig_tree *t);
/* The first few of them, "fs/foo/Kconfig:12: unknown keyword 'bar'" (owned by t). */
const struct strvec *kconfig_tree_warning_lines(const struct kconfig_tree *t);

/* ---- the check ---- */

enum kconfig_verdict {
	KV_SET,	      /* has what was asked (y where m was asked counts) */
	KV_MODULE,    /* y asked, m found, and modules are fine (KCONFIG_MODULES_OK) */
	KV_ABSENT,    /* no such option in this tree */
	KV_DEPENDS,   /* an unmet dependency */
	KV_NO_PROMPT, /* cannot be set by hand: only a select (or its default) sets it */
	KV_CHOICE,    /* another member of its choice was chosen */
	KV_SELECTED,  /* asked off, but selected by an option that is on */
	KV_VALUE,     /* another value */
	KV_NOT_SET,   /* not as asked, and no Kconfig at hand to say why */
	KV_OTHER,     /* not as asked, for a reason the reader cannot tell */
};

/* "set", "module", "absent", "depends", "no-prompt", "choice", ... */
const char *kconfig_verdict_str(enum kconfig_verdict v);

struct kconfig_result {
	char *name;	 /* "EXT4_FS" */
	char *wanted;	 /* the value asked for */
	char *actual;	 /* the value in the .config, NULL when not there */
	char *source;	 /* from the request */
	char *needed_by; /* from the request, may be NULL */
	enum kconfig_need need;
	enum kconfig_verdict verdict;
	char *why; /* NULL for KV_SET; otherwise one or more sentences naming the cause */
};

struct kconfig_report {
	char *config; /* the .config that was checked (its path or name) */
	struct kconfig_result *v;
	size_t n;
	size_t nset;	 /* KV_SET or KV_MODULE */
	size_t ndropped; /* everything else */
	size_t nneeded;	 /* dropped with need == KCONFIG_NEED */
};

/* Flags of kconfig_check(). */
enum {
	KCONFIG_MODULES_OK = 1u << 0, /* m meets a need for y (modules come from an initramfs) */
	KCONFIG_MERGED = 1u << 1,     /* the requests were merged into the config before
					 olddefconfig (so a miss was dropped, not left out) */
};

/* KV_SET or KV_MODULE. */
bool kconfig_result_ok(const struct kconfig_result *r);

/*
 * Check every request against the .config at config_path. tree may be NULL
 * (then a miss is KV_NOT_SET). flags: KCONFIG_MODULES_OK, KCONFIG_MERGED.
 * The report lists the requests in their order. On failure (the .config
 * cannot be read) out is empty.
 */
enum status kconfig_check(const char *config_path, const struct kconfig_tree *tree,
			  const struct kconfig_requests *req, unsigned flags,
			  struct kconfig_report *out);
/* The same on values already read; name is what the report calls them. */
void kconfig_check_values(const struct kconfig_values *cfg, const char *name,
			  const struct kconfig_tree *tree, const struct kconfig_requests *req,
			  unsigned flags, struct kconfig_report *out);
void kconfig_report_release(struct kconfig_report *r);

#endif
