/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the appliance builder: what the files of src/rootfs share.
 *
 *	appliance.c  the entry points (resolve, ensure), the packages, the agent
 *	tools.c      what builds here: mmdebstrap or debootstrap, unshare or root
 *	host.c       the config file, the host's release and mirror
 *	sources.c    an fstests tree: its files, its build's size and progress
 *	runner.c     running the tools: output to the log, a tail, progress
 *	inputs.c     the inputs and their cache key (git for a URL)
 *	cache.c      the cache: metadata, locks, stale builds, list and remove
 *	build.c      the build: its steps, the bootstrap, the image
 */
#ifndef FSWB_ROOTFS_APPLIANCE_INT_H
#define FSWB_ROOTFS_APPLIANCE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/event.h"
#include "core/loop.h"
#include "core/util.h"
#include "rootfs/appliance.h"

#define STAGE	     "appliance"
#define MAX_META     (1u << 20)
#define MAX_CONFIG   (1u << 20)
#define SBIN_DIRS    "/usr/sbin:/sbin"
#define MAX_SOURCES  (4u << 20)
#define MAX_AGENT    (4u << 20)
#define MAX_GIT_OUT  (64u << 20)
#define TAIL_LINES   15
#define KILL_GRACE   30000 /* ms between SIGTERM and SIGKILL */
#define HEADROOM_MIB 512
#define LOCK_POLL_MS 250

/* ---- tools.c ---- */

enum tool {
	TOOL_NONE,
	TOOL_MMDEBSTRAP,
	TOOL_DEBOOTSTRAP,
};

struct tools {
	enum tool tool;
	bool unshare; /* mmdebstrap --mode=unshare */
	char *bootstrap;
	char *mkfs;
	char *du;
	char *git;
	char *tar;
};

void ap_tools_release(struct tools *t);
/* What builds here (the tool, unshare or root); ERR_* with *why (may be NULL) when nothing does. */
enum status ap_tools_probe(struct tools *t, struct strbuf *why);

/* ---- host.c ---- */

/* http://, https://, ftp:// or file:/ */
bool ap_mirror_scheme_ok(const char *uri);

/* ---- runner.c ---- */

struct runner;
typedef void line_fn(struct runner *r, const char *line);

struct steps;

/* Running children with their output to the log, a tail and a line parser. */
struct runner {
	struct loop *loop;
	struct event_bus *bus;
	const bool *cancel;
	int logfd; /* -1: no log */
	struct strvec tail;
	line_fn *on_line;
	void *data;
	bool interrupted;
	/* progress */
	char detail[128];
	double fraction;
	uint64_t last_emit;
	/* mmdebstrap's phases */
	int phase;
	unsigned total, done;
	/* the steps after the packages: the next one, and fstests' build */
	const struct steps *steps;
	unsigned hook;
	unsigned build_units, build_done;
};

/* A progress event of the stage (rate-limited). */
void ap_progress(struct runner *r, const char *detail, double fraction);
/* The build was asked to stop (cancel set, or the loop done). */
bool ap_cancelled(struct runner *r);
/* Run argv with its output to the log, the tail and r->on_line; ERR_* naming it when it fails. */
enum status ap_run(struct runner *r, const char *const *argv, const char *const *env);
/* The same with its output in *out (not the log). */
enum status ap_run_capture(struct runner *r, const char *const *argv, struct strbuf *out);
void ap_runner_release(struct runner *r);

/* ---- inputs.c ---- */

struct inputs {
	char *release, *mirror;
	char *arch;	 /* Debian's name of the packages' architecture: "amd64", "arm64" */
	bool foreign;	 /* not this host's: run through qemu-user-static */
	char *src;	 /* directory's real path, or the URL with #REF */
	char *url, *ref; /* a URL's parts */
	bool is_url;
	char *rev;   /* a URL's commit, "dir:DIGEST16" for a directory */
	char *clone; /* the bare clone of a URL */
	struct strvec files;
	char src_digest[65];
	bool build_fstests;
	char *agent_dir;
	char agent_digest[65];
	struct strvec packages;
	unsigned jobs;
	struct tools tools;
	char key[65];
};

void ap_inputs_release(struct inputs *in);
/* The inputs of o (release, mirror, fstests source and revision, agent, packages) and their key. */
enum status ap_resolve_inputs(struct runner *r, const struct appliance_opts *o, struct inputs *in);
/* At least min hex digits, and nothing else. */
bool ap_is_hex(const char *s, size_t min);

/* Debian's name of the plan's architecture ("x86_64" -> "amd64"), NULL: this host's; NULL if unknown. */
const char *ap_debian_arch(const char *arch);
/* A foreign arch's programs run here (binfmt_misc has qemu-user-static for it), else why not and the fix. */
enum status ap_binfmt_check(const char *debarch);

/* ---- cache.c ---- */

/* CACHE/appliances, created. */
enum status ap_cache_dir(char **out);
enum status ap_meta_read(const char *dir, struct appliance *a);
enum status ap_meta_write(const char *dir, const struct inputs *in, double seconds, uint64_t size,
			  uint64_t used);
/* The build in dir finished (its metadata and image are there). */
bool ap_complete(const char *dir);
/* Lock key's build in cache (*fd_out holds it); with wait, until it is free. */
enum status ap_lock_key(struct runner *r, const char *cache, const char *key, int *fd_out,
			bool wait);
enum status ap_remove_build(struct runner *r, const struct tools *t, const char *dir);
/* Remove unfinished builds other than key's. */
void ap_remove_stale(struct runner *r, const struct tools *t, const char *cache, const char *key);

/* ---- build.c ---- */

/* Build the appliance of in into cache; *out describes it. */
enum status ap_build(struct runner *r, struct inputs *in, const char *cache, struct appliance *out);

#endif
