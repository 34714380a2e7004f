/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * local.config: the text itself, and what bash (plain files) and fstests'
 * own section parser (FSWB_FSTESTS_SRC/common/config) make of it.
 */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/loop.h"
#include "core/paths.h"
#include "core/spawn.h"
#include "core/util.h"
#include "fstests/localconfig.h"

/* The variables the checks print, in this order, after reading the file. */
#define VARS                                                                                   \
	"FSTYP TEST_DEV TEST_DIR SCRATCH_DEV SCRATCH_DEV_POOL SCRATCH_MNT MKFS_OPTIONS "       \
	"MOUNT_OPTIONS TEST_FS_MOUNT_OPTS USE_EXTERNAL TEST_LOGDEV SCRATCH_LOGDEV TEST_RTDEV " \
	"SCRATCH_RTDEV "                                                                       \
	"LOGWRITES_DEV RESULT_BASE SOAK_DURATION WEIRD"
#define NVARS 18

static struct fs_config
cfg(char *name, char *fstyp, char *mkfs, char *mount)
{
	struct fs_config c = { 0 };

	c.name = name;
	c.fstyp = fstyp;
	c.mkfs_options = mkfs;
	c.mount_options = mount;
	c.test_size = 5ull << 30;
	c.scratch_size = 5ull << 30;
	return c;
}

static const struct localconfig_devices vd = {
	.test_dev = "/dev/vdb",
	.test_dir = "/mnt/test",
	.scratch_dev = "/dev/vdc",
	.scratch_mnt = "/mnt/scratch",
};

/*
 * Run a bash script with the config file as $1 and return what it printed:
 * NUL-separated fields, split into out.
 */
static void
run_bash(const char *script, const char *file, struct strvec *out)
{
	struct loop *loop = loop_new();
	struct strbuf buf = STRBUF_INIT;
	struct child_exit ex;
	const char *argv[] = { "bash", "-c", script, "bash", file, NULL };
	const char *env[] = { "LC_ALL=C", NULL };

	assert_non_null(loop);
	assert_int_equal(spawn_run(loop, argv, env, false, 1 << 20, &buf, &ex), OK);
	if (!ex.exited || ex.code != 0)
		fail_msg("bash failed (%s) on:\n%s\noutput: %s", ex.exited ? "exit" : "signal",
			 test_read(file), buf.buf);
	for (size_t i = 0; i < buf.len;) {
		size_t l = strlen(buf.buf + i);

		strvec_push(out, buf.buf + i);
		i += l + 1;
	}
	strbuf_release(&buf);
	loop_free(loop);
}

/* Prints every VAR as a child process sees it (so: exported). */
static const char child_print[] =
	"bash -c 'for v in " VARS "; do printf \"%s\\0\" \"${!v-<unset>}\"; done'";

static void
source_plain(const char *file, struct strvec *out)
{
	char *script = xasprintf("set -e; . \"$1\"; %s", child_print);

	run_bash(script, file, out);
	free(script);
}

static char *
write_text(const char *text)
{
	static int n;
	char *name = xasprintf("local.config.%d", n++);
	char *path = test_tmp(name);

	free(name);
	test_write(path, text);
	return path;
}

static void
expect_vars(const struct strvec *got, size_t off, const char *const *want)
{
	for (size_t i = 0; i < NVARS; i++) {
		assert_true(off + i < got->n);
		if (strcmp(got->v[off + i], want[i]))
			fail_msg("variable %zu of '" VARS "': got '%s', want '%s'", i,
				 got->v[off + i], want[i]);
	}
}

static void
test_plain_simple(void **state)
{
	struct fs_config c = cfg("ext4/4k", "ext4", "", "");
	struct localconfig_section s = { &c, &vd };
	struct strbuf out = STRBUF_INIT;
	struct strvec got = STRVEC_INIT;
	char *path;
	const char *want[NVARS] = { "ext4",	    "/dev/vdb", "/mnt/test", "/dev/vdc", "<unset>",
				    "/mnt/scratch", "<unset>",	"<unset>",   "<unset>",	 "<unset>",
				    "<unset>",	    "<unset>",	"<unset>",   "<unset>",	 "<unset>",
				    "<unset>",	    "<unset>",	"<unset>" };

	(void)state;
	assert_int_equal(localconfig_write(&s, 1, NULL, NULL, &out), OK);
	/* Plain variables, no section, exactly the lines check needs. */
	assert_null(strchr(out.buf, '['));
	assert_non_null(strstr(out.buf, "\nexport FSTYP=ext4\n"));
	assert_non_null(strstr(out.buf, "\nexport TEST_DEV=/dev/vdb\n"));
	assert_non_null(strstr(out.buf, "\nexport SCRATCH_MNT=/mnt/scratch\n"));
	assert_null(strstr(out.buf, "MKFS_OPTIONS"));
	path = write_text(out.buf);
	source_plain(path, &got);
	expect_vars(&got, 0, want);
	free(path);
	strvec_clear(&got);
	strbuf_release(&out);
}

/* Values with quotes, $, spaces, backslashes and backquotes survive bash. */
static void
test_plain_quoting(void **state)
{
	const char *mkfs = "-O ^has_journal -E 'x=1' \"two\" $HOME `id` \\n \\\\ a  b\tc";
	const char *mount = "-o it's,\"dq\",$(echo no),${X}";
	const char *soak = "3m";
	const char *weird = "'''' '\\'' \\ \\\\ !x #not-a-comment [sec]";
	struct fs_config c = cfg("ext4/odd one", "ext4", (char *)mkfs, (char *)mount);
	struct localconfig_devices d = vd;
	struct localconfig_section s = { &c, &d };
	struct strbuf out = STRBUF_INIT;
	struct strvec env = STRVEC_INIT, got = STRVEC_INIT;
	char *path;
	const char *want[NVARS] = { "ext4",
				    "/dev/vdb",
				    "/mnt/test dir",
				    "/dev/vdc",
				    "<unset>",
				    "/mnt/scr'atch",
				    mkfs,
				    mount,
				    mount,
				    "<unset>",
				    "<unset>",
				    "<unset>",
				    "<unset>",
				    "<unset>",
				    "<unset>",
				    "/res $ults/'x'",
				    soak,
				    weird };

	(void)state;
	d.test_dir = "/mnt/test dir";
	d.scratch_mnt = "/mnt/scr'atch";
	strvec_push(&env, "SOAK_DURATION=3m");
	strvec_pushf(&env, "WEIRD=%s", weird);
	assert_int_equal(localconfig_write(&s, 1, "/res $ults/'x'", &env, &out), OK);
	path = write_text(out.buf);
	source_plain(path, &got);
	expect_vars(&got, 0, want);
	free(path);
	strvec_clear(&got);
	strvec_clear(&env);
	strbuf_release(&out);
}

static void
test_plain_devices(void **state)
{
	struct fs_config c = cfg("btrfs/pool", "btrfs", "", "");
	struct fs_config x = cfg("xfs/logdev", "xfs", "-m crc=1", "");
	const char *pool[] = { "/dev/vdc", "/dev/vdd", "/dev/vde", NULL };
	struct localconfig_devices d = vd;
	struct localconfig_section s = { &c, &d };
	struct strbuf out = STRBUF_INIT;
	struct strvec got = STRVEC_INIT;
	char *path;
	const char *want_pool[NVARS] = {
		"btrfs",	"/dev/vdb", "/mnt/test", "<unset>", "/dev/vdc /dev/vdd /dev/vde",
		"/mnt/scratch", "<unset>",  "<unset>",	 "<unset>", "<unset>",
		"<unset>",	"<unset>",  "<unset>",	 "<unset>", "/dev/vdf",
		"<unset>",	"<unset>",  "<unset>"
	};
	const char *want_log[NVARS] = { "xfs",	   "/dev/vdb",	   "/mnt/test", "/dev/vdc",
					"<unset>", "/mnt/scratch", "-m crc=1",	"<unset>",
					"<unset>", "yes",	   "/dev/vdg",	"/dev/vdh",
					"<unset>", "<unset>",	   "<unset>",	"<unset>",
					"<unset>", "<unset>" };

	(void)state;
	c.pool_devices = 3;
	c.scratch_size = 0;
	d.scratch_dev = NULL;
	d.scratch_pool = pool;
	d.logwrites_dev = "/dev/vdf";
	assert_int_equal(localconfig_write(&s, 1, NULL, NULL, &out), OK);
	path = write_text(out.buf);
	source_plain(path, &got);
	expect_vars(&got, 0, want_pool);
	free(path);
	strvec_clear(&got);
	strbuf_reset(&out);

	/* Too few pool devices, no device at all: named errors. */
	c.pool_devices = 4;
	assert_int_equal(localconfig_write(&s, 1, NULL, NULL, &out), ERR_INVALID);
	assert_non_null(
		strstr(error_msg(), "config 'btrfs/pool' needs 4 devices in SCRATCH_DEV_POOL"));
	assert_int_equal(out.len, 0);

	x.logdev_size = 1 << 30;
	d = vd;
	s.config = &x;
	assert_int_equal(localconfig_write(&s, 1, NULL, NULL, &out), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "config 'xfs/logdev' needs SCRATCH_LOGDEV"));
	d.scratch_logdev = "/dev/vdh";
	d.test_logdev = "/dev/vdg";
	assert_int_equal(localconfig_write(&s, 1, NULL, NULL, &out), OK);
	path = write_text(out.buf);
	source_plain(path, &got);
	expect_vars(&got, 0, want_log);
	free(path);
	strvec_clear(&got);

	d.test_dev = NULL;
	strbuf_reset(&out);
	assert_int_equal(localconfig_write(&s, 1, NULL, NULL, &out), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "config 'xfs/logdev' needs TEST_DEV"));
	assert_int_equal(out.len, 0);
	strbuf_release(&out);
}

static void
test_bad_input(void **state)
{
	struct fs_config c = cfg("ext4/4k", "ext4", "-b\n4096", "");
	struct fs_config c2 = cfg("ext4/1k", "ext4", "-b 1024", "");
	struct localconfig_section s[2] = { { &c, &vd }, { &c2, &vd } };
	struct strbuf out = STRBUF_INIT;
	struct strvec env = STRVEC_INIT;

	(void)state;
	/* A newline could start a "[section]" line: refused in every mode. */
	assert_int_equal(localconfig_write(s, 1, NULL, NULL, &out), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "'MKFS_OPTIONS' holds a control character"));

	c.mkfs_options = "-E 'x'";
	assert_int_equal(localconfig_write(s, 1, NULL, NULL, &out), OK);
	strbuf_reset(&out);
	/* ... but check's section parser cannot carry a quote. */
	assert_int_equal(localconfig_write(s, 2, NULL, NULL, &out), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "config 'ext4/4k': the value of 'MKFS_OPTIONS' holds"));
	c.mkfs_options = "-b  4096";
	assert_int_equal(localconfig_write(s, 2, NULL, NULL, &out), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "two spaces in a row"));
	c.mkfs_options = "-E a = b";
	assert_int_equal(localconfig_write(s, 2, NULL, NULL, &out), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "space beside '='"));
	c.mkfs_options = "-b 4096 #x";
	assert_int_equal(localconfig_write(s, 2, NULL, NULL, &out), ERR_INVALID);
	assert_int_equal(out.len, 0);
	c.mkfs_options = "";

	strvec_push(&env, "1BAD=x");
	assert_int_equal(localconfig_write(s, 1, NULL, &env, &out), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "extra setting '1BAD=x' is not NAME=value"));
	strvec_clear(&env);
	strvec_push(&env, "NOEQUALS");
	assert_int_equal(localconfig_write(s, 1, NULL, &env, &out), ERR_INVALID);
	strvec_clear(&env);
	strvec_push(&env, "TEST_DEV=/dev/sda");
	assert_int_equal(localconfig_write(s, 1, NULL, &env, &out), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "'TEST_DEV' comes from the configuration"));
	strvec_clear(&env);
	assert_int_equal(localconfig_write(s, 0, NULL, NULL, &out), ERR_INVALID);
	assert_int_equal(out.len, 0);
	strbuf_release(&out);
}

/* A configuration's own settings (FSX_AVOID for bigalloc) reach local.config. */
static void
test_config_env(void **state)
{
	struct fs_config big = cfg("ext4/bigalloc_4k", "ext4", "-O bigalloc", "");
	struct fs_config plain = cfg("ext4/4k", "ext4", "", "");
	struct localconfig_section s[2] = { { &big, &vd }, { &plain, &vd } };
	struct strbuf out = STRBUF_INIT;
	struct strvec env = STRVEC_INIT, got = STRVEC_INIT;
	const char *tail;
	char *path;

	(void)state;
	strvec_init(&big.env);
	strvec_push(&big.env, "FSX_AVOID=-C -I");
	strvec_push(&big.env, "XFS_IO_AVOID=fcollapse finsert");
	strvec_push(&env, "SOAK_DURATION=180");
	assert_int_equal(localconfig_write(s, 1, NULL, &env, &out), OK);
	assert_non_null(strstr(out.buf, "\nexport FSX_AVOID='-C -I'\n"));
	path = write_text(out.buf);
	run_bash("set -e; . \"$1\"; bash -c 'printf \"%s\\0\" \"$FSX_AVOID\" "
		 "\"$XFS_IO_AVOID\" \"$SOAK_DURATION\"'",
		 path, &got);
	assert_int_equal(got.n, 3);
	assert_string_equal(got.v[0], "-C -I");
	assert_string_equal(got.v[1], "fcollapse finsert");
	assert_string_equal(got.v[2], "180");
	strvec_clear(&got);
	free(path);

	/* check carries a section's settings into the next: the next empties them */
	strbuf_reset(&out);
	assert_int_equal(localconfig_write(s, 2, NULL, &env, &out), OK);
	tail = strstr(out.buf, "\n[ext4_4k]\n");
	assert_non_null(tail);
	assert_non_null(strstr(tail, "\nFSX_AVOID=\n"));
	assert_non_null(strstr(tail, "\nXFS_IO_AVOID=\n"));
	assert_null(strstr(tail, "\nSOAK_DURATION=\n"));

	/* the run may not replace what the configuration sets */
	strbuf_reset(&out);
	strvec_push(&env, "FSX_AVOID=-W");
	assert_int_equal(localconfig_write(s, 1, NULL, &env, &out), ERR_INVALID);
	assert_string_equal(error_msg(), "config 'ext4/bigalloc_4k' sets FSX_AVOID itself; the "
					 "extra setting 'FSX_AVOID=-W' would replace it");
	assert_int_equal(out.len, 0);
	strvec_clear(&env);
	strvec_clear(&big.env);
	strbuf_release(&out);
}

/*
 * Every shipped configuration: its local.config, sourced by bash as check
 * sources it, gives each variable what the profile and its devices say.
 */
static void
test_shipped_profiles(void **state)
{
	char *dir = test_path("profiles");
	struct localconfig_devices d = vd;
	struct strvec env = STRVEC_INIT;
	struct profiles p;

	(void)state;
	assert_int_equal(profiles_load(dir, &p), OK);
	d.test_logdev = "/dev/vdt";
	d.scratch_logdev = "/dev/vdu";
	d.test_rtdev = "/dev/vdv";
	d.scratch_rtdev = "/dev/vdw";
	d.logwrites_dev = "/dev/vdx";
	strvec_push(&env, "SOAK_DURATION=180");
	for (size_t i = 0; i < p.nconfigs; i++) {
		const struct fs_config *c = &p.configs[i];
		struct localconfig_section s = { c, &d };
		struct strbuf out = STRBUF_INIT, script = STRBUF_INIT;
		struct strvec got = STRVEC_INIT, pool = STRVEC_INIT;
		bool ext = c->logdev_size || c->rtdev_size;
		char *path, *joined;
		const char *want[NVARS];

		for (unsigned k = 0; k < c->pool_devices; k++)
			strvec_pushf(&pool, "/dev/pool%u", k);
		joined = strvec_join(&pool, " ");
		d.scratch_pool = pool.n ? (const char *const *)pool.v : NULL;
		/* check -overlay does the rest; a served base is check's nfs */
		want[0] = c->base && !c->serve ? c->base : c->fstyp;
		want[1] = "/dev/vdb";
		want[2] = "/mnt/test";
		want[3] = c->pool_devices ? "<unset>" : "/dev/vdc";
		want[4] = c->pool_devices ? joined : "<unset>";
		want[5] = "/mnt/scratch";
		want[6] = *c->mkfs_options && !c->serve ? c->mkfs_options : "<unset>";
		want[7] = *c->mount_options ? c->mount_options : "<unset>";
		want[8] = want[7]; /* TEST_DIR is mounted as SCRATCH is */
		want[9] = ext ? "yes" : "<unset>";
		want[10] = c->logdev_size ? "/dev/vdt" : "<unset>";
		want[11] = c->logdev_size ? "/dev/vdu" : "<unset>";
		want[12] = c->rtdev_size ? "/dev/vdv" : "<unset>";
		want[13] = c->rtdev_size ? "/dev/vdw" : "<unset>";
		want[14] = "/dev/vdx";
		want[15] = "<unset>";
		want[16] = "180";
		want[17] = "<unset>";
		if (localconfig_write(&s, 1, NULL, &env, &out) != OK)
			fail_msg("%s: %s", c->name, error_msg());
		path = write_text(out.buf);
		/* the variables, then each of the configuration's own settings */
		strbuf_addf(&script, "set -e; . \"$1\"; %s; ", child_print);
		for (size_t k = 0; k < c->env.n; k++)
			strbuf_addf(&script, "printf '%%s\\0' \"$%.*s\"; ",
				    (int)strcspn(c->env.v[k], "="), c->env.v[k]);
		run_bash(script.buf, path, &got);
		for (size_t k = 0; k < NVARS; k++)
			if (k >= got.n || strcmp(got.v[k], want[k]))
				fail_msg("%s: variable %zu of '" VARS "' is '%s', want '%s'",
					 c->name, k, k < got.n ? got.v[k] : "(none)", want[k]);
		assert_int_equal(got.n, NVARS + c->env.n);
		for (size_t k = 0; k < c->env.n; k++)
			if (strcmp(got.v[NVARS + k], strchr(c->env.v[k], '=') + 1))
				fail_msg("%s: %s came out as '%s'", c->name, c->env.v[k],
					 got.v[NVARS + k]);
		free(path);
		free(joined);
		strvec_clear(&pool);
		strvec_clear(&got);
		strbuf_release(&script);
		strbuf_release(&out);
	}
	profiles_release(&p);
	strvec_clear(&env);
	free(dir);
}

/*
 * serve = nfs: check sees FSTYP=nfs and the exports as TEST_DEV and
 * SCRATCH_DEV, mounts both with the NFS options, and never gets the base's
 * mkfs options (the guest made the base; check only empties SCRATCH_MNT).
 */
static void
test_served_nfs(void **state)
{
	struct fs_config c = cfg("nfs/loopback", "nfs", "-b 4096", "-o rw,relatime,nfsvers=4.2");
	struct fs_config e = cfg("ext4/4k", "ext4", "", "");
	struct localconfig_devices d = vd, de = vd;
	struct localconfig_section s[2] = { { &c, &d }, { &e, &de } };
	struct strbuf out = STRBUF_INIT;
	struct strvec got = STRVEC_INIT;
	char *path, *script;
	const char *want[NVARS] = { "nfs",
				    "127.0.0.1:/srv/fswb/test",
				    "/mnt/test",
				    "127.0.0.1:/srv/fswb/scratch",
				    "<unset>",
				    "/mnt/scratch",
				    "<unset>",
				    "-o rw,relatime,nfsvers=4.2",
				    "-o rw,relatime,nfsvers=4.2",
				    "<unset>",
				    "<unset>",
				    "<unset>",
				    "<unset>",
				    "<unset>",
				    "<unset>",
				    "<unset>",
				    "<unset>",
				    "<unset>" };

	(void)state;
	c.base = "ext4";
	c.serve = "nfs";
	d.test_dev = "127.0.0.1:/srv/fswb/test";
	d.scratch_dev = "127.0.0.1:/srv/fswb/scratch";
	assert_int_equal(localconfig_write(s, 1, NULL, NULL, &out), OK);
	assert_null(strstr(out.buf, "-b 4096"));
	path = write_text(out.buf);
	source_plain(path, &got);
	expect_vars(&got, 0, want);
	strvec_clear(&got);
	/* what common/config's _common_mount_opts reads for nfs */
	script = xasprintf("set -e; . \"$1\"; bash -c 'printf \"%%s\\0\" \"$NFS_MOUNT_OPTIONS\"'");
	run_bash(script, path, &got);
	assert_int_equal(got.n, 1);
	assert_string_equal(got.v[0], "-o rw,relatime,nfsvers=4.2");
	strvec_clear(&got);
	free(script);
	free(path);

	/* in sections, an ext4 section after it is ext4 on devices again */
	strbuf_reset(&out);
	assert_int_equal(localconfig_write(s, 2, NULL, NULL, &out), OK);
	assert_non_null(strstr(out.buf, "[nfs_loopback]\nFSTYP=\"nfs\"\n"
					"TEST_DEV=\"127.0.0.1:/srv/fswb/test\"\n"));
	assert_non_null(strstr(out.buf, "NFS_MOUNT_OPTIONS=\"-o rw,relatime,nfsvers=4.2\"\n"));
	assert_non_null(strstr(out.buf, "[ext4_4k]\nFSTYP=\"ext4\"\nTEST_DEV=\"/dev/vdb\"\n"));
	strbuf_release(&out);
}

static void
test_section_names(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct fs_config a = cfg("ext4/4k", "ext4", "", "");
	struct fs_config b = cfg("ext4-4k", "ext4", "", "");
	struct fs_config c = cfg("xfs/rt-1k", "xfs", "", "");
	struct localconfig_section s[3] = { { &a, &vd }, { &b, &vd }, { &c, &vd } };

	(void)state;
	localconfig_section_name("ext4/4k", &sb);
	assert_string_equal(sb.buf, "ext4_4k");
	strbuf_reset(&sb);
	localconfig_section_name("xfs/rt-1k.v2", &sb);
	assert_string_equal(sb.buf, "xfs_rt_1k_v2");
	strbuf_reset(&sb);
	assert_int_equal(localconfig_write(s, 3, "/results", NULL, &sb), OK);
	assert_non_null(strstr(sb.buf, "\n[ext4_4k]\n"));
	assert_non_null(strstr(sb.buf, "\n[ext4_4k_2]\n"));
	assert_non_null(strstr(sb.buf, "\n[xfs_rt_1k]\n"));
	assert_non_null(strstr(sb.buf, "\nRESULT_BASE=\"/results\"\n"));
	strbuf_release(&sb);
}

/*
 * Read a sectioned file the way check does, with the functions of the real
 * common/config (get_config_sections, parse_config_section, get_next_config
 * and the option defaults) and its start-up block, then call get_next_config
 * for each section as check's run_section does, printing what a test of
 * that section would see.
 */
static const char sections_script[] =
	"set -u +e\n"
	"src=$FSWB_FSTESTS_SRC_DIR\n"
	"for f in get_config_sections parse_config_section get_next_config _common_mount_opts \\\n"
	"         _mount_opts _test_mount_opts _mkfs_opts _fsck_opts; do\n"
	"  def=$(awk -v f=\"$f\" '$0 ~ \"^\" f \"[(][)]\" {p=1} p {print} p && /^}/ {exit}' "
	"\"$src/common/config\")\n"
	"  [ -n \"$def\" ] || { echo \"no $f in $src/common/config\" >&2; exit 1; }\n"
	"  eval \"$def\"\n"
	"done\n"
	"startup=$(awk '/^if \\[ -z \"\\$CONFIG_INCLUDED\" \\]/ {p=1} p {print} p && /^else/ "
	"{exit}' "
	"\"$src/common/config\"; echo fi)\n"
	"_check_device() { :; }\n"
	"_canonicalize_mountpoint() { echo \"$2\"; }\n"
	"_exit() { exit \"$1\"; }\n"
	"_fatal() { echo \"$*\" >&2; exit 1; }\n"
	"set +u\n"
	"export HOST_OPTIONS=$1 EMAIL=root@localhost here=/fstests\n"
	"sections=$(get_config_sections \"$HOST_OPTIONS\")\n"
	"[ -n \"$sections\" ] || { echo 'no sections found' >&2; exit 1; }\n"
	"export HOST_OPTIONS_SECTIONS=$sections OPTIONS_HAVE_SECTIONS=true\n"
	"get_next_config $(echo $sections | cut -f1 -d' ')\n"
	"eval \"$startup\"\n"
	"for s in $sections; do\n"
	"  get_next_config $s\n"
	"  printf '%s\\0' \"[$s]\"\n"
	"  CHILD\n"
	"done\n";

static const char *
fstests_src(void)
{
	const char *src = getenv("FSWB_FSTESTS_SRC");
	char *conf;
	bool ok;

	if (!src || !*src)
		return NULL;
	conf = path_join(src, "common/config");
	ok = path_exists(conf);
	free(conf);
	return ok ? src : NULL;
}

static void
read_sections(const char *file, struct strvec *got)
{
	struct strbuf script = STRBUF_INIT;
	const char *p = strstr(sections_script, "CHILD");
	char *withsrc;

	strbuf_add(&script, sections_script, (size_t)(p - sections_script));
	strbuf_adds(&script, child_print);
	strbuf_adds(&script, p + 5);
	withsrc = xasprintf("FSWB_FSTESTS_SRC_DIR='%s'\n%s", fstests_src(), script.buf);
	run_bash(withsrc, file, got);
	free(withsrc);
	strbuf_release(&script);
}

static void
test_sections_real_parser(void **state)
{
	/* ext4 with options, ext4 wanting defaults (the carry-over case),
	 * xfs with a log device, btrfs with a pool, xfs again without
	 * external devices and with odd but carriable characters. */
	const char *odd = "-m crc=1,finobt=1 -d su=$x,sw=`y` \\back";
	struct fs_config c0 = cfg("ext4/1k", "ext4", "-b 1024", "-o nodelalloc");
	struct fs_config c1 = cfg("ext4/4k", "ext4", "", "");
	struct fs_config c2 = cfg("xfs/logdev", "xfs", "-l size=16m", "");
	struct fs_config c3 = cfg("btrfs/pool", "btrfs", "", "");
	struct fs_config c4 = cfg("xfs/odd", "xfs", (char *)odd, "");
	struct localconfig_devices d2 = vd, d3 = vd;
	const char *pool[] = { "/dev/vdd", "/dev/vde", NULL };
	struct localconfig_section s[5] = {
		{ &c0, &vd }, { &c1, &vd }, { &c2, &d2 }, { &c3, &d3 }, { &c4, &vd },
	};
	struct strbuf out = STRBUF_INIT;
	struct strvec env = STRVEC_INIT, got = STRVEC_INIT;
	char *path;
	const char *w0[NVARS] = { "ext4",
				  "/dev/vdb",
				  "/mnt/test",
				  "/dev/vdc",
				  "",
				  "/mnt/scratch",
				  "-b 1024",
				  "-o nodelalloc",
				  "-o nodelalloc",
				  "",
				  "<unset>",
				  "<unset>",
				  "<unset>",
				  "<unset>",
				  "",
				  "/res",
				  "3m",
				  "a$b" };
	/* Same FSTYP, no options of its own: check's defaults, not 1k's. */
	const char *w1[NVARS] = { "ext4",
				  "/dev/vdb",
				  "/mnt/test",
				  "/dev/vdc",
				  "",
				  "/mnt/scratch",
				  " ",
				  "-o acl,user_xattr",
				  "-o acl,user_xattr",
				  "",
				  "<unset>",
				  "<unset>",
				  "<unset>",
				  "<unset>",
				  "",
				  "/res",
				  "3m",
				  "a$b" };
	const char *w2[NVARS] = { "xfs",
				  "/dev/vdb",
				  "/mnt/test",
				  "/dev/vdc",
				  "",
				  "/mnt/scratch",
				  "-l size=16m",
				  "",
				  "",
				  "yes",
				  "",
				  "/dev/vdh",
				  "",
				  "",
				  "",
				  "/res",
				  "3m",
				  "a$b" };
	/* The pool's first device becomes SCRATCH_DEV; the log device is gone. */
	const char *w3[NVARS] = { "btrfs",
				  "/dev/vdb",
				  "/mnt/test",
				  "/dev/vdd",
				  "/dev/vdd /dev/vde",
				  "/mnt/scratch",
				  "",
				  "",
				  "",
				  "no",
				  "",
				  "",
				  "",
				  "",
				  "",
				  "/res",
				  "3m",
				  "a$b" };
	/* A new FSTYP without USE_EXTERNAL: check clears the external devices. */
	const char *w4[NVARS] = { "xfs",	  "/dev/vdb", "/mnt/test", "/dev/vdc", "",
				  "/mnt/scratch", odd,	      "",	   "",	       "<unset>",
				  "<unset>",	  "<unset>",  "<unset>",   "<unset>",  "",
				  "/res",	  "3m",	      "a$b" };
	const char *const *want[5] = { w0, w1, w2, w3, w4 };
	const char *names[5] = { "[ext4_1k]", "[ext4_4k]", "[xfs_logdev]", "[btrfs_pool]",
				 "[xfs_odd]" };

	(void)state;
	if (!fstests_src()) {
		fprintf(stderr, "# SKIP FSWB_FSTESTS_SRC does not name an fstests tree; "
				"sections are checked against its common/config\n");
		skip();
	}
	c2.logdev_size = 64 << 20;
	d2.scratch_logdev = "/dev/vdh";
	c3.scratch_size = 0;
	c3.pool_devices = 2;
	d3.scratch_dev = NULL;
	d3.scratch_pool = pool;
	strvec_push(&env, "SOAK_DURATION=3m");
	strvec_push(&env, "WEIRD=a$b");
	assert_int_equal(localconfig_write(s, 5, "/res", &env, &out), OK);
	path = write_text(out.buf);
	read_sections(path, &got);
	assert_int_equal(got.n, 5 * (NVARS + 1));
	for (size_t i = 0; i < 5; i++) {
		assert_string_equal(got.v[i * (NVARS + 1)], names[i]);
		expect_vars(&got, i * (NVARS + 1) + 1, want[i]);
	}
	free(path);
	strvec_clear(&got);
	strvec_clear(&env);
	strbuf_release(&out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_simple),  cmocka_unit_test(test_plain_quoting),
		cmocka_unit_test(test_plain_devices), cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_config_env),    cmocka_unit_test(test_shipped_profiles),
		cmocka_unit_test(test_section_names), cmocka_unit_test(test_sections_real_parser),
		cmocka_unit_test(test_served_nfs),
	};

	return cmocka_run_group_tests_name("localconfig", tests, test_setup_hermetic,
					   test_teardown_hermetic);
}
