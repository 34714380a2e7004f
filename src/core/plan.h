/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plan: what to run, as plain data.
 *
 * A plan is made from argv or the wizard, validated against the profiles,
 * and then read by the run engine; nothing downstream reads argv. It
 * round-trips through JSON (plan_to_json/plan_from_json), which is what
 * `fswb plan ... --dump` prints and `fswb run --plan FILE` reads:
 *
 *	{
 *	  "version": 1,
 *	  "kernel": { "kind": "installed", "spec": "6.1.0-57-cloud-amd64",
 *	              "modules": null, "own_config": false, "debug": [],
 *	              "arch": "x86_64" },
 *	  "configs": [ "ext4/4k" ],
 *	  "backend": { "name": "qemu", "options": { } },
 *	  "tests": { "preset": "smoke", "groups": [], "exclude_groups": [],
 *	             "tests": [], "exclude_tests": [], "exclude_files": [] },
 *	             (and "settings_from": "smoke" when set)
 *	  "fstests_src": null,
 *	  "shards": "auto", "cpus": 2, "mem": "2 GiB"
 *	}
 *
 * Reading is strict: an unknown field, a wrong type or a bad value is
 * ERR_INVALID with a message naming the field ("tests.groups[2]") and, where
 * there is a fixed set, the valid choices.
 */
#ifndef FSWB_CORE_PLAN_H
#define FSWB_CORE_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "core/profile.h"
#include "core/status.h"
#include "core/util.h"

#define PLAN_VERSION 1
/* The most --rerun-failures takes. */
#define PLAN_RERUN_MAX 100
/* The least memory a guest takes (plan.mem); fstests wants 2 GiB. */
#define PLAN_MEM_MIN (UINT64_C(256) << 20)
/* The most guests a run has at once (plan.shards). */
#define PLAN_SHARDS_MAX 64

enum kernel_kind {
	KERNEL_AUTO,	  /* a kernel tree in the current directory, else the installed kernel */
	KERNEL_INSTALLED, /* /boot/vmlinuz-VERSION; spec is VERSION, NULL for the running one */
	KERNEL_TREE,	  /* a kernel source tree; spec is its path */
	KERNEL_IMAGE,	  /* a prebuilt bzImage; spec is its path, modules optional */
};

const char *kernel_kind_str(enum kernel_kind kind);

struct plan_kernel {
	enum kernel_kind kind;
	char *spec;	     /* see enum kernel_kind; may be NULL */
	char *modules;	     /* KERNEL_IMAGE: a modules directory or tarball; may be NULL */
	bool own_config;     /* KERNEL_TREE: build with the tree's own .config */
	struct strvec debug; /* debug fragments: "kasan", "lockdep", "kmemleak" */
	char *arch;	     /* "x86_64" (later "arm64") */
};

struct plan_tests {
	char *preset;		     /* a test set name ("smoke"), or NULL */
	struct strvec groups;	     /* check -g */
	struct strvec xgroups;	     /* check -x */
	struct strvec tests;	     /* named tests, "generic/001" */
	struct strvec exclude;	     /* check -e */
	struct strvec exclude_files; /* check -E */
	char *settings_from;	     /* a test set whose settings (its env: SOAK_DURATION=...)
					apply without its tests, or NULL; only without a preset
					(a test run again alone as it ran in its set) */
};

struct plan {
	struct plan_kernel kernel;
	struct strvec configs;	    /* "ext4/4k", in run order */
	char *backend;		    /* "qemu" */
	struct strvec backend_opts; /* "key=value" */
	struct plan_tests tests;
	char *fstests_src;	 /* a directory or git URL; NULL for the default */
	unsigned shards;	 /* guests at once, 1 to PLAN_SHARDS_MAX; 0: auto, chosen
				  from the host (run/shards.h); JSON "auto" */
	unsigned cpus;		 /* per guest, >= 1 */
	uint64_t mem;		 /* bytes per guest */
	unsigned test_timeout;	 /* seconds one test may run before it counts as hung; 0: from
				  its previous time (check.time), generously */
	unsigned rerun_failures; /* check -L N: run a failed test N times more; 0: no */
	bool dry_run;		 /* check -n: say which tests would run, run none */
	bool shell;		 /* then a shell in the last guest, on the terminal */
	bool stop_on_crash;	 /* a crashed or hung guest ends its configuration's tests
				  (default: a new guest runs the remaining tests) */
	uint64_t max_results;	 /* bytes a configuration's results archive may have, and
				  unpack to; 0: the default (2 GiB) */
	bool detach;		 /* fswb run --detach: the machines run their tests on without fswb
			(BACKEND_DETACHES); fswb results fetch collects them */
};

void plan_init(struct plan *plan);
void plan_release(struct plan *plan);
void plan_copy(struct plan *dst, const struct plan *src);

/*
 * Fill what is unset with defaults that work on a plain Linux box: the
 * automatic kernel, ext4/4k, the qemu backend, the smoke set when no test
 * is named, shards left to the host (0: auto), 2 CPUs (fewer when the host
 * has fewer), 2 GiB.
 */
void plan_defaults(struct plan *plan);

/*
 * The test set whose settings apply: the preset, else settings_from; NULL
 * when neither.
 */
const char *plan_settings_set(const struct plan *plan);

/*
 * Narrow plan to test alone in configuration config (NULL: keep the
 * plan's configurations), as its run had it: the kernel, backend, its
 * options, fstests' source and the guest stay; the test set's settings stay
 * (settings_from), its tests, groups and exclusions go. Not a shell or a
 * dry run, no reruns.
 */
void plan_one_test(struct plan *plan, const char *config, const char *test);

/* The plan as pretty JSON (free() it). */
char *plan_to_json(const struct plan *plan);
/* Parse JSON; source names the text in messages (a file name). */
enum status plan_from_json(const char *text, const char *source, struct plan *out);
enum status plan_load(const char *path, struct plan *out);
enum status plan_save(const char *path, const struct plan *plan);

/*
 * Check the plan against the profiles and the backends this fswb has
 * (backends: NULL-terminated names). Names the bad field and the choices.
 */
enum status plan_validate(const struct plan *plan, const struct profiles *profiles,
			  const char *const *backends);

/*
 * A kernel spec as users give it (--kernel, the wizard): a directory is a
 * tree, a file an image, a word without '/' an installed version; sets
 * pk's kind and spec. ERR_NOTFOUND naming it for a path that does not exist.
 */
enum status plan_kernel_set(struct plan_kernel *pk, const char *spec);

/* Set a backend option "key=value", replacing an earlier value for key. */
void plan_set_backend_opt(struct plan *plan, const char *key, const char *value);
/* The same from "KEY=VALUE" as users type it (-o); ERR_INVALID naming it when it is not. */
enum status plan_set_backend_kv(struct plan *plan, const char *kv);
/* The value of a backend option, or NULL. */
const char *plan_backend_opt(const struct plan *plan, const char *key);

#endif
