/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The test appliance: a Debian root filesystem with fstests built in it and
 * fswb's agent as its init, in an ext4 image that guests boot through their
 * own overlays (the image itself is never written).
 *
 * What goes in:
 *	release	  opts->release, else "release = NAME" in the config file, else
 *		  the host's VERSION_CODENAME (/etc/os-release)
 *	mirror	  opts->mirror, else "mirror = URL" in the config file, else the
 *		  first "deb" source for that release in the host's apt sources
 *		  (/etc/apt/sources.list, sources.list.d/ *.list and *.sources)
 *	packages  appliance_packages (what fstests builds and runs with), or
 *		  opts->packages
 *	users	  fsgqa, fsgqa2 and 123456-fsgqa, group fsgqa
 *	fstests	  opts->fstests_src: a directory (copied without .git and build
 *		  products: for a git work tree, the files git lists, tracked
 *		  and untracked but not ignored) or a git URL (URL#REF for a
 *		  branch, tag or commit; cloned bare into the cache and fetched
 *		  when REF moved); NULL: APPLIANCE_FSTESTS_URL. It lands in
 *		  /opt/fstests and is built there (make -C /opt/fstests -jN in
 *		  the root filesystem) when its Makefile has a default target.
 *	agent	  fswb-agent and fswb-init from rootfs_agent_dir(), installed
 *		  as /usr/local/sbin/fswb-agent and /usr/local/sbin/fswb-init
 * The config file is fswb_dir(DIR_CONFIG)/config, "key = value" lines,
 * '#' comments; appliance.c reads "release" and "mirror" and leaves other
 * keys to their readers.
 *
 * How: mmdebstrap --variant=apt (as root --mode=root, else --mode=unshare)
 * with the steps above as --customize-hook commands, into a directory
 * (dpkg leaves out manual pages, documentation and translations); or,
 * without mmdebstrap and as root, debootstrap --variant=minbase and the same
 * steps run by fswb in a chroot. Then `mkfs.ext4 -d ROOT -L fswb-root
 * IMAGE SIZE` (SIZE: 1.5 x what the tree uses + 512 MiB; the file is sparse)
 * -- nothing is ever mounted by fswb. In unshare mode the tree belongs to
 * the user's subordinate ids, so du, mkfs.ext4 and the final rm run through
 * `mmdebstrap --unshare-helper`. FSWB_APPLIANCE_MODE=root, unshare or
 * debootstrap forces one way (unshare works as root too: mmdebstrap's
 * mounts then live in a private namespace).
 *
 * The cache: fswb_dir_make(DIR_CACHE, "appliances/KEY"), KEY the sha256 of
 * every input (the format version, tool, release, mirror, package list,
 * fstests' file names, sizes and mtimes or its commit, the agent files'
 * contents), holding root.img, appliance.json (what went in, when, how
 * long, the image's size) and build.log. A build happens in
 * appliances/KEY.tmp.PID and is renamed to appliances/KEY when complete;
 * a failure or an interruption removes it (its log is kept as
 * appliances/KEY.failed.log); what a fswb killed outright left behind is
 * removed by the next build. appliances/KEY.lock is flock()ed for the
 * build: a second fswb wanting the same KEY waits (in the loop) and then
 * reuses what the first built. A --force build replaces the old appliance
 * only once it is complete.
 *
 * Events (bus may be NULL), stage "appliance": appliance_ensure() emits
 * STAGE_BEGIN (detail "appliance"), STAGE_PROGRESS with detail "bootstrap",
 * "packages", "build fstests", "image" (and on the way "preparing
 * fstests", "users", "agent", "cleaning up", "fetching fstests", "waiting
 * for another fswb building this appliance", or "reusing ID" for a cache
 * hit), fraction 0..1 (from mmdebstrap's output: its phases and apt's
 * Get/Unpacking/Setting up lines), and STAGE_END (detail "appliance", or
 * "reused") with the status and message. A WARNING when a git URL cannot
 * be reached and the clone fetched before is used. initramfs_ensure()
 * emits its own BEGIN/END pair (detail "initramfs") when it builds.
 *
 * The run engine's call sequence:
 *	struct appliance_opts o = { .fstests_src = plan->fstests_src,
 *				    .cancel = &e->cancelled };
 *	struct appliance a;
 *	appliance_ensure(loop, bus, &o, &a);       a.image: the backend's spec.appliance
 *	if (k.modules)                             (kernel.h: NULL when it has none)
 *		initramfs_ensure(loop, bus, k.version, k.modules, &initrd);
 *						   initrd (NULL: none needed): spec.initrd
 *	... boot ...
 *	appliance_release(&a); free(initrd);
 *
 * Children (mmdebstrap, git, mkfs.ext4, du) run as jobs (core/job.h), in
 * their own process groups; the call waits in the loop until they exit
 * (job_wait(), so it may be called from a loop callback; other watchers
 * keep running). When *opts->cancel becomes true or loop_quit() is called
 * meanwhile, the child's group gets SIGTERM (mmdebstrap then removes its
 * mounts), SIGKILL 30 s later, the temporary build is removed and the
 * result is ERR_INTERRUPTED. The loop must not be done on entry.
 */
#ifndef FSWB_ROOTFS_APPLIANCE_H
#define FSWB_ROOTFS_APPLIANCE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/event.h"
#include "core/loop.h"
#include "core/status.h"
#include "core/util.h"

/* Changes whenever what a build puts in changes without its inputs changing. */
#define APPLIANCE_FORMAT 1

#define APPLIANCE_FSTESTS_URL "git://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git"
#define APPLIANCE_LABEL	      "fswb-root"

/* The packages of the appliance (NULL-terminated): fstests' build and run needs. */
extern const char *const appliance_packages[];

struct appliance_opts {
	const char *release;	 /* NULL: config file, else the host's */
	const char *mirror;	 /* NULL: config file, else the host's apt sources */
	const char *fstests_src; /* directory or git URL[#REF]; NULL: APPLIANCE_FSTESTS_URL */
	/*
	 * NULL: appliance_packages. Else the whole list (it may be empty: the
	 * base system only, for tests).
	 */
	const char *const *packages;
	/*
	 * NULL: this host's. "arm64" on an x86_64 host (or the reverse): the
	 * packages are the other architecture's and their scripts, and the
	 * fstests build, run through qemu-user-static (binfmt_misc); the key
	 * then says the architecture.
	 */
	const char *arch;
	unsigned jobs;	    /* make -jN for fstests; 0: the number of online CPUs */
	bool force;	    /* build even when cached (the new build replaces the old) */
	const bool *cancel; /* optional: set (from a loop callback) to stop the build */
};

struct appliance {
	char *key;	     /* 64 hex digits */
	char *id;	     /* its first 12: what list shows and remove takes */
	char *dir;	     /* the cache directory */
	char *image;	     /* DIR/root.img */
	char *release;	     /* "bookworm" */
	char *mirror;	     /* the mirror URL */
	char *fstests_src;   /* as given (a directory's real path) */
	char *fstests_rev;   /* the commit of a URL; "dir:DIGEST16" for a directory */
	char *tool;	     /* "mmdebstrap" or "debootstrap" */
	char *arch;	     /* Debian's name: "amd64", "arm64" */
	uint64_t image_size; /* the image's apparent size, bytes */
	uint64_t image_used; /* what it occupies on disk, bytes */
	double build_seconds;
	int64_t built;	   /* when, Unix time */
	unsigned packages; /* how many were asked for */
	bool reused;	   /* appliance_ensure(): came from the cache */
};

void appliance_release(struct appliance *a);

/*
 * Build the appliance for opts, or reuse the cached one, and fill *out
 * (appliance_release() it). See the top of this file for the inputs, the
 * cache, the events and cancelling. ERR_UNSUPPORTED when no way to build
 * works here (the message is appliance_probe()'s), ERR_CHILD when a step
 * failed (the message has the last lines of its output and the log's path),
 * ERR_INTERRUPTED when cancelled.
 */
enum status appliance_ensure(struct loop *loop, struct event_bus *bus,
			     const struct appliance_opts *opts, struct appliance *out);

/*
 * Can an appliance be built here, and how? OK with *why (may be NULL) saying
 * which tool and mode ("mmdebstrap 1.3.5, --mode=root"); ERR_UNSUPPORTED
 * with *why saying exactly what is missing and how to get it ("user
 * namespaces are disabled: sysctl kernel.unprivileged_userns_clone=1").
 * Runs nothing: it reads PATH, /proc/sys and /etc/subuid. For fswb doctor.
 */
enum status appliance_probe(struct strbuf *why);

/*
 * What appliance_ensure() would build: the resolved release, mirror,
 * fstests revision and key, without building (a URL is still resolved,
 * which may fetch). Fills the input fields of *out and key, id, dir, image;
 * *cached tells whether DIR/root.img is there.
 */
enum status appliance_resolve(struct loop *loop, struct event_bus *bus,
			      const struct appliance_opts *opts, struct appliance *out,
			      bool *cached);

/* The appliances in the cache, newest first (free with appliance_list_free()). */
enum status appliance_list(struct appliance **out, size_t *n);
void appliance_list_free(struct appliance *v, size_t n);

/*
 * Remove the cached appliance whose key starts with id (at least 4 hex
 * digits). ERR_NOTFOUND, ERR_INVALID when ambiguous, ERR_BUSY while another
 * fswb builds it.
 */
enum status appliance_remove(const char *id);
/* Remove every cached appliance and leftover of a build; *removed counts them. */
enum status appliance_remove_all(unsigned *removed);

/* The directory holding fswb-agent and fswb-init; NULL when neither place has them. */
char *rootfs_agent_dir(void);

/* ---- the pieces, for tests and the doctor ---- */

/* VERSION_CODENAME from an os-release file (NULL: /etc/os-release). */
enum status appliance_host_release(const char *os_release, char **out);

/*
 * The mirror for release from an apt configuration directory (NULL:
 * /etc/apt): the URI of the first enabled "deb" entry of sources.list, then
 * sources.list.d/ *.list and *.sources in name order, whose suite is
 * release and whose URI is http(s), ftp or file. ERR_NOTFOUND naming the
 * files read and the way out (mirror = URL, --mirror).
 */
enum status appliance_host_mirror(const char *apt_dir, const char *release, char **out);

/*
 * "release" and "mirror" from a config file (NULL: fswb_dir(DIR_CONFIG)/config);
 * a missing file leaves both NULL. ERR_PARSE naming the file and line for a
 * line that is not "key = value", a comment or blank.
 */
enum status appliance_config_read(const char *path, char **release, char **mirror);

/*
 * A directory of fstests: the files that would be copied (relative paths,
 * sorted; directories and symlinks included) and a digest of their names,
 * types, sizes, modes and mtimes.
 */
enum status appliance_fstests_files(struct loop *loop, const char *dir, struct strvec *files,
				    char digest[65]);

/* Does the Makefile in dir have a default target (a first rule not starting with '.')? */
bool appliance_has_default_target(const char *dir);

/*
 * Progress through fstests' own build, which is most of the time the steps
 * after the packages take. The lines of make's output that count are
 * configure's "checking ..." lines and the build's bracketed ones ("[CC]
 * fssum", "[GROUP] ...", "[LD]"); appliance_build_units() estimates how
 * many there will be for the tree in dir: one per C file under src/, ltp/
 * and lib/, and about 160 for configure (0 when dir cannot be read).
 */
unsigned appliance_build_units(const char *dir);
bool appliance_build_line(const char *line);

/* Whether src names a git URL (scheme://, git@host:path, or ends in .git and is no directory). */
bool appliance_src_is_url(const char *src);

#endif
