/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Kconfig reader, .config files, fragments and the survival check. */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/paths.h"
#include "core/spawn.h"
#include "core/util.h"
#include "kbuild/kconfig.h"

/* ---- the real tree (Debian's linux-source), unpacked once per machine ---- */

static char *
linux_tree(void)
{
	const char *cache = getenv("FSWB_TEST_CACHE");
	char *dir, *mk, *tmp, *unpacked;
	const char *tarball = "/usr/src/linux-source-6.1.tar.xz";
	const char *argv[] = { "tar", "-xJf", tarball, "-C", NULL, NULL };
	struct child_exit ex = { 0 };
	struct loop *loop;

	if (!cache || !*cache)
		cache = "/var/tmp/fswb-test-cache";
	dir = xasprintf("%s/linux-source-6.1", cache);
	mk = path_join(dir, "Kconfig");
	if (path_exists(mk)) {
		free(mk);
		return dir;
	}
	free(mk);
	if (!path_exists(tarball)) {
		print_message(
			"# no kernel tree: %s is not installed (apt install linux-source-6.1)\n",
			tarball);
		free(dir);
		return NULL;
	}
	tmp = xasprintf("%s/unpack.%d", cache, (int)getpid());
	assert_int_equal(mkdir_p(tmp, 0755), OK);
	argv[4] = tmp;
	loop = loop_new();
	assert_int_equal(spawn_run(loop, argv, NULL, true, 1 << 20, NULL, &ex), OK);
	loop_free(loop);
	assert_true(ex.exited && ex.code == 0);
	unpacked = path_join(tmp, "linux-source-6.1");
	if (rename(unpacked, dir) != 0)
		assert_true(path_exists(dir)); /* another test unpacked it meanwhile */
	remove_tree(tmp);
	free(unpacked);
	free(tmp);
	return dir;
}

/* ---- .config values ---- */

static void
test_values_parse(void **state)
{
	struct kconfig_values *v = kconfig_values_new();
	const char *name, *value;

	assert_int_equal(kconfig_values_parse(v,
					      "#\n# Linux/x86 6.1 Kernel Configuration\n"
					      "CONFIG_A=y\n"
					      "# CONFIG_B is not set\n"
					      "CONFIG_C=m\n\n"
					      "CONFIG_NR=16000\n"
					      "CONFIG_S=\"a b\"\n"
					      "   # a comment\n"
					      "CONFIG_A=m\n",
					      "x.config"),
			 OK);
	assert_string_equal(kconfig_value(v, "A"), "m"); /* later wins */
	assert_string_equal(kconfig_value(v, "B"), "n");
	assert_string_equal(kconfig_value(v, "NR"), "16000");
	assert_string_equal(kconfig_value(v, "S"), "\"a b\"");
	assert_null(kconfig_value(v, "D"));
	assert_int_equal(kconfig_values_count(v), 5);
	kconfig_values_at(v, 0, &name, &value);
	assert_string_equal(name, "A"); /* keeps its first position */
	{
		struct strbuf sb = STRBUF_INIT;

		kconfig_values_format(v, &sb);
		assert_non_null(strstr(sb.buf, "CONFIG_A=m\n# CONFIG_B is not set\n"));
		strbuf_release(&sb);
	}
	kconfig_values_free(v);
}

static void
test_values_bad_line(void **state)
{
	struct kconfig_values *v = kconfig_values_new();

	assert_int_equal(kconfig_values_parse(v, "CONFIG_A=y\nEXT4_FS=y\n", "frag.config"),
			 ERR_PARSE);
	assert_non_null(strstr(error_msg(), "frag.config:2"));
	assert_non_null(strstr(error_msg(), "'EXT4_FS=y'"));
	assert_int_equal(kconfig_values_parse(v, "CONFIG_A=\n", "f"), ERR_PARSE);
	kconfig_values_free(v);
}

static void
test_values_many(void **state)
{
	struct kconfig_values *v = kconfig_values_new();
	char name[32];

	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "OPT_%d", i);
		kconfig_values_set(v, name, i % 2 ? "y" : "m");
	}
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "OPT_%d", i);
		assert_string_equal(kconfig_value(v, name), i % 2 ? "y" : "m");
	}
	kconfig_values_free(v);
}

/* ---- requests ---- */

static void
test_requests(void **state)
{
	struct kconfig_requests r;
	char *frag = test_tmp("frag.config");
	const struct kconfig_request *q;

	test_write(frag, "# a fragment\nCONFIG_EXT4_FS=y\n\n# CONFIG_EXT4_DEBUG is not set\n");
	kconfig_requests_init(&r);
	assert_int_equal(
		kconfig_requests_add_fragment(&r, frag, "kconfig/ext4.config", KCONFIG_WANT), OK);
	assert_int_equal(r.n, 2);
	q = kconfig_requests_find(&r, "EXT4_FS");
	assert_string_equal(q->source, "kconfig/ext4.config:2");
	assert_int_equal(q->need, KCONFIG_WANT);
	assert_null(q->needed_by);
	assert_string_equal(kconfig_requests_find(&r, "EXT4_DEBUG")->value, "n");
	kconfig_requests_need(&r, "EXT4_FS", "ext4/4k");
	kconfig_requests_need(&r, "EXT4_FS", "ext4/1k");
	kconfig_requests_need(&r, "EXT4_FS", "ext4/4k");
	q = kconfig_requests_find(&r, "EXT4_FS");
	assert_int_equal(q->need, KCONFIG_NEED);
	assert_string_equal(q->needed_by, "ext4/4k ext4/1k");
	kconfig_requests_need(&r, "JBD2", "ext4/4k");
	assert_string_equal(kconfig_requests_find(&r, "JBD2")->value, "y");
	test_write(frag, "CONFIG_X=y\nthis is wrong\n");
	assert_int_equal(
		kconfig_requests_add_fragment(&r, frag, "kconfig/bad.config", KCONFIG_WANT),
		ERR_PARSE);
	assert_non_null(strstr(error_msg(), "kconfig/bad.config:2"));
	kconfig_requests_release(&r);
	free(frag);
}

/* ---- the reader, on a small tree of our own ---- */

static char *
write_tree(const char *name, const char *const *files)
{
	char *root = test_tmp(name);

	for (size_t i = 0; files[i]; i += 2) {
		char *p = path_join(root, files[i]);

		test_write(p, files[i + 1]);
		free(p);
	}
	return root;
}

static const char *const small_tree[] = {
	"Kconfig",
	"mainmenu \"Linux/$(ARCH) $(KERNELVERSION) Kernel Configuration\"\n"
	"cc-option = $(success,true)\n"
	"$(error-if,$(failure,true),never)\n"
	"source \"init/Kconfig\"\n"
	"source \"arch/$(SRCARCH)/Kconfig\"\n"
	"source \"fs/Kconfig\"\n",
	"init/Kconfig",
	"config MODULES\n"
	"\tbool \"Enable loadable module support\"\n"
	"\thelp\n"
	"\t  Text with keywords at the start of lines:\n"
	"\t  if you say Y here\n"
	"\t  config NOT_AN_OPTION\n"
	"\n"
	"\t  endif and endmenu do not end anything here.\n"
	"\n"
	"config BLOCK\n"
	"\tbool \"Enable the block layer\" if EXPERT\n"
	"\tdefault y\n"
	"config EXPERT\n"
	"\tbool \"Expert\"\n"
	"config CC_HAS_THING\n"
	"\tdef_bool $(cc-option,-fthing -fother)\n",
	"arch/x86/Kconfig",
	"config X86_64\n"
	"\tdef_bool y\n"
	"config NR_CPUS_MAX\n"
	"\tint\n"
	"\tdefault 512\n"
	"config NR_CPUS\n"
	"\tint \"Maximum number of CPUs\"\n"
	"\trange 2 NR_CPUS_MAX\n"
	"\tdefault 64\n",
	"fs/Kconfig",
	"menu \"File systems\"\n"
	"if BLOCK\n"
	"source \"fs/ext4/Kconfig\"\n"
	"endif # BLOCK\n"
	"config CRC32\n"
	"\ttristate\n"
	"config FS_IOMAP\n"
	"\tbool\n"
	"menu \"Pseudo\"\n"
	"\tdepends on PROC_FS && \\\n"
	"\t\tSYSFS\n"
	"config PSEUDO_FS\n"
	"\tbool \"pseudo\"\n"
	"endmenu\n"
	"comment \"a comment\"\n"
	"\tdepends on NEVER_SET\n"
	"config PROC_FS\n"
	"\tbool \"/proc\"\n"
	"config SYSFS\n"
	"\tbool \"sysfs\"\n"
	"choice\n"
	"\tprompt \"Allocator\"\n"
	"\tdefault SLUB\n"
	"config SLAB\n"
	"\tbool \"SLAB\"\n"
	"config SLUB\n"
	"\tbool \"SLUB\"\n"
	"endchoice\n"
	"menu \"Hidden\"\n"
	"\tvisible if EXPERT\n"
	"config HIDDEN_OPT\n"
	"\tbool \"a hidden one\"\n"
	"endmenu\n"
	"endmenu\n",
	"fs/ext4/Kconfig",
	"config EXT4_FS\n"
	"\ttristate \"ext4\"\n"
	"\tselect CRC32\n"
	"\tselect FS_IOMAP if EXT4_DAX\n"
	"config EXT4_DAX\n"
	"\tbool \"dax\"\n"
	"\tdepends on EXT4_FS && (FS_DAX || !MODULES) && $(cc-option,-fdax)\n"
	"config EXT4_FS_POSIX_ACL\n"
	"\tbool \"ext4 acl\"\n"
	"\tdepends on EXT4_FS\n"
	"\tdepends on MODULES = y\n"
	"---help---\n"
	"config EXT4_DEBUG\n"
	"\tbool \"ext4 debug\"\n"
	"\tdepends on EXT4_FS && PROC_FS\n"
	"config EXT4_FS_SECURITY\n"
	"\tbool \"ext4 security\"\n"
	"\tdepends on EXT4_FS\n"
	"config EXT4_KUNIT_TESTS\n"
	"\ttristate \"ext4 tests\"\n"
	"\tdepends on EXT4_FS\n"
	"config CMP_OPT\n"
	"\tbool \"needs many CPUs\"\n"
	"\tdepends on NR_CPUS >= 128 || EXPERT\n",
	NULL,
};

static void
test_reader_small(void **state)
{
	char *root = write_tree("small", small_tree);
	struct kconfig_tree *t;
	char *dep;

	assert_int_equal(kconfig_tree_load(root, "x86", &t), OK);
	assert_int_equal(kconfig_tree_files(t), 5);
	assert_int_equal(kconfig_tree_symbols(t), 22);
	assert_int_equal(kconfig_tree_warnings(t), 0);
	assert_true(kconfig_tree_has(t, "MODULES"));
	assert_true(kconfig_tree_has(t, "X86_64")); /* $(SRCARCH) expanded */
	assert_false(kconfig_tree_has(t, "NOT_AN_OPTION"));
	assert_true(kconfig_tree_has(t, "EXT4_DEBUG")); /* the help ended at the next entry */
	dep = kconfig_tree_depends(t, "EXT4_DAX");
	assert_string_equal(dep, "BLOCK && EXT4_FS && (FS_DAX || !MODULES) && $(cc-option,-fdax)");
	free(dep);
	dep = kconfig_tree_depends(t, "EXT4_FS_POSIX_ACL");
	assert_string_equal(dep, "BLOCK && EXT4_FS && MODULES = y");
	free(dep);
	dep = kconfig_tree_depends(t, "PSEUDO_FS"); /* a menu's depends, continued line */
	assert_string_equal(dep, "PROC_FS && SYSFS");
	free(dep);
	dep = kconfig_tree_depends(t, "PROC_FS"); /* the comment's depends does not leak */
	assert_string_equal(dep, "");
	free(dep);
	assert_null(kconfig_tree_depends(t, "NO_SUCH"));
	kconfig_tree_free(t);
	free(root);
}

static void
expect_error(const char *name, const char *const *files, const char *needle)
{
	char *root = write_tree(name, files);
	struct kconfig_tree *t = NULL;

	assert_int_equal(kconfig_tree_load(root, "x86", &t), ERR_PARSE);
	assert_null(t);
	if (!strstr(error_msg(), needle))
		fail_msg("'%s' not in '%s'", needle, error_msg());
	free(root);
}

static void
test_reader_errors(void **state)
{
	static const char *const unclosed[] = { "Kconfig", "source \"a/Kconfig\"\n", "a/Kconfig",
						"config A\n\tbool\nif A\nconfig B\n\tbool\n",
						NULL };
	static const char *const stray[] = { "Kconfig", "config A\n\tbool\nendif\n", NULL };
	static const char *const crossed[] = { "Kconfig", "menu \"m\"\nif A\nendmenu\nendif\n",
					       NULL };
	static const char *const cycle[] = { "Kconfig", "source \"b/Kconfig\"\n", "b/Kconfig",
					     "config B\n\tbool\nsource \"Kconfig\"\n", NULL };
	static const char *const missing[] = { "Kconfig", "\nsource \"nowhere/Kconfig\"\n", NULL };
	static const char *const bad_expr[] = { "Kconfig",
						"config A\n\tbool \"a\"\n\tdepends on B &&\n",
						NULL };
	static const char *const bad_paren[] = { "Kconfig",
						 "config A\n\tbool \"a\"\n\tdepends on (B || C\n",
						 NULL };
	char deep_text[2048];
	const char *deep[] = { "Kconfig", deep_text, NULL };
	char *root = NULL;
	struct kconfig_tree *t = NULL;
	size_t n;

	expect_error("unclosed", unclosed, "a/Kconfig:3: 'if' is not closed");
	expect_error("stray", stray, "Kconfig:3: 'endif' without 'if'");
	expect_error("crossed", crossed, "'endmenu' closes the 'if' opened at Kconfig:2");
	expect_error("cycle", cycle, "source cycle");
	expect_error("bad_expr", bad_expr, "Kconfig:3: malformed expression");
	expect_error("bad_paren", bad_paren, "Kconfig:3: missing ')'");

	n = (size_t)snprintf(deep_text, sizeof(deep_text), "config A\n\tbool\n\tdepends on ");
	for (int i = 0; i < 400; i++)
		deep_text[n++] = '(';
	deep_text[n++] = 'B';
	deep_text[n] = '\0';
	expect_error("deep", deep, "nested too deeply");

	root = write_tree("missing", missing);
	assert_int_equal(kconfig_tree_load(root, "x86", &t), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "Kconfig:2"));
	assert_non_null(strstr(error_msg(), "nowhere/Kconfig"));
	free(root);
	root = test_tmp("no-such-tree");
	assert_int_equal(kconfig_tree_load(root, "x86", &t), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "has no Kconfig"));
	free(root);
}

static void
test_reader_unknown_keyword(void **state)
{
	static const char *const files[] = {
		"Kconfig",
		"config A\n\tbool \"a\"\n\tfrobnicate 3\nnewkeyword X\nconfig B\n\tbool\n", NULL
	};
	char *root = write_tree("unknown", files);
	struct kconfig_tree *t;

	assert_int_equal(kconfig_tree_load(root, "x86", &t), OK);
	assert_int_equal(kconfig_tree_warnings(t), 2);
	assert_string_equal(kconfig_tree_warning_lines(t)->v[0],
			    "Kconfig:3: unknown keyword 'frobnicate'");
	assert_true(kconfig_tree_has(t, "B"));
	kconfig_tree_free(t);
	free(root);
}

/* ---- the check, on the small tree ---- */

static const struct kconfig_result *
result(const struct kconfig_report *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].name, name))
			return &r->v[i];
	fail_msg("no result for %s", name);
	return NULL;
}

static void
assert_why(const struct kconfig_result *r, const char *needle)
{
	if (!r->why || !strstr(r->why, needle))
		fail_msg("CONFIG_%s: '%s' not in why '%s'", r->name, needle,
			 r->why ? r->why : "(null)");
}

static void
test_check_verdicts(void **state)
{
	char *root = write_tree("small", small_tree);
	char *cfg = test_tmp("small.config");
	struct kconfig_tree *t;
	struct kconfig_requests rq;
	struct kconfig_report rep;
	const struct kconfig_result *r;

	/* what olddefconfig would have left */
	test_write(cfg, "CONFIG_X86_64=y\n"
			"CONFIG_MODULES=y\n"
			"CONFIG_BLOCK=y\n"
			"CONFIG_EXT4_FS=m\n"
			"CONFIG_CRC32=m\n"
			"CONFIG_SLUB=y\n"
			"# CONFIG_SLAB is not set\n"
			"CONFIG_NR_CPUS=64\n"
			"CONFIG_NR_CPUS_MAX=512\n"
			"# CONFIG_EXPERT is not set\n"
			"# CONFIG_PROC_FS is not set\n");
	assert_int_equal(kconfig_tree_load(root, "x86", &t), OK);
	kconfig_requests_init(&rq);
	kconfig_requests_set(&rq, "BLOCK", "y", "f:1", KCONFIG_WANT);
	kconfig_requests_set(&rq, "EXT4_FS", "y", "f:2", KCONFIG_WANT);
	kconfig_requests_need(&rq, "EXT4_FS", "ext4/4k");
	kconfig_requests_set(&rq, "EXT4_FS_POSIX_ACL", "y", "f:3", KCONFIG_WANT);
	kconfig_requests_set(&rq, "EXT4_KUNIT_TESTS", "y", "f:3", KCONFIG_WANT);
	kconfig_requests_set(&rq, "CMP_OPT", "y", "f:3", KCONFIG_WANT);
	kconfig_requests_set(&rq, "EXT4_FS_SECURTY", "y", "f:4", KCONFIG_WANT);
	kconfig_requests_set(&rq, "EXT4_DEBUG", "y", "f:5", KCONFIG_WANT);
	kconfig_requests_set(&rq, "FS_IOMAP", "y", "f:6", KCONFIG_WANT);
	kconfig_requests_set(&rq, "CRC32", "n", "f:7", KCONFIG_WANT);
	kconfig_requests_set(&rq, "SLAB", "y", "f:8", KCONFIG_WANT);
	kconfig_requests_set(&rq, "NR_CPUS", "4096", "f:9", KCONFIG_WANT);
	kconfig_requests_set(&rq, "HIDDEN_OPT", "y", "f:10", KCONFIG_WANT);
	kconfig_requests_set(&rq, "MODULES", "y", "f:11", KCONFIG_WANT);
	kconfig_requests_set(&rq, "SLUB", "n", "f:12", KCONFIG_WANT);

	assert_int_equal(kconfig_check(cfg, t, &rq, KCONFIG_MERGED, &rep), OK);
	assert_int_equal(rep.n, rq.n);
	assert_int_equal(result(&rep, "BLOCK")->verdict, KV_SET);
	assert_int_equal(result(&rep, "MODULES")->verdict, KV_SET);
	assert_null(result(&rep, "BLOCK")->why);

	r = result(&rep, "EXT4_FS"); /* m where y is needed, no modules: dropped */
	assert_int_equal(r->verdict, KV_OTHER);
	assert_string_equal(r->actual, "m");
	assert_int_equal(r->need, KCONFIG_NEED);

	r = result(&rep, "EXT4_KUNIT_TESTS"); /* a tristate under an m is at most m */
	assert_int_equal(r->verdict, KV_DEPENDS);
	assert_why(r, "CONFIG_EXT4_KUNIT_TESTS needs CONFIG_EXT4_FS=y (it is m)");

	r = result(&rep, "EXT4_FS_POSIX_ACL"); /* a bool under an m can be y: not the cause */
	assert_int_equal(r->verdict, KV_OTHER);
	assert_why(r, "its dependencies are met");

	r = result(&rep, "CMP_OPT");
	assert_int_equal(r->verdict, KV_DEPENDS);
	assert_why(r, "needs one of CONFIG_NR_CPUS (64) >= 128 or CONFIG_EXPERT (not set)");

	r = result(&rep, "EXT4_FS_SECURTY");
	assert_int_equal(r->verdict, KV_ABSENT);
	assert_why(r, "no 'config EXT4_FS_SECURTY'");
	assert_why(r, "did you mean CONFIG_EXT4_FS_SECURITY?");

	r = result(&rep, "EXT4_DEBUG");
	assert_int_equal(r->verdict, KV_DEPENDS);
	assert_why(r, "CONFIG_EXT4_DEBUG needs CONFIG_PROC_FS (not set); CONFIG_PROC_FS can be "
		      "set: add CONFIG_PROC_FS=y to a fragment");

	r = result(&rep, "FS_IOMAP");
	assert_int_equal(r->verdict, KV_NO_PROMPT);
	assert_why(r, "selects it (CONFIG_EXT4_FS)");

	r = result(&rep, "CRC32");
	assert_int_equal(r->verdict, KV_SELECTED);
	assert_why(r, "selected by CONFIG_EXT4_FS (m)");

	r = result(&rep, "SLAB");
	assert_int_equal(r->verdict, KV_CHOICE);
	assert_why(r, "CONFIG_SLUB was chosen instead");

	r = result(&rep, "SLUB");
	assert_int_equal(r->verdict, KV_CHOICE);
	assert_why(r, "ask for another member");

	r = result(&rep, "NR_CPUS");
	assert_int_equal(r->verdict, KV_VALUE);
	assert_why(r, "its range is 2 to 512");

	r = result(&rep, "HIDDEN_OPT");
	assert_int_equal(r->verdict, KV_DEPENDS);
	assert_why(r, "can only be set (its prompt shows) with CONFIG_EXPERT (not set)");

	assert_int_equal(rep.nset, 2);
	assert_int_equal(rep.ndropped, rq.n - 2);
	assert_int_equal(rep.nneeded, 1);
	kconfig_report_release(&rep);

	/* with modules, m meets the need; without a tree, nothing is explained */
	assert_int_equal(kconfig_check(cfg, NULL, &rq, KCONFIG_MODULES_OK, &rep), OK);
	assert_int_equal(result(&rep, "EXT4_FS")->verdict, KV_MODULE);
	r = result(&rep, "EXT4_DEBUG");
	assert_int_equal(r->verdict, KV_NOT_SET);
	assert_why(r, "not set in ");
	assert_int_equal(rep.nneeded, 0);
	kconfig_report_release(&rep);

	assert_int_equal(kconfig_check("/nonexistent/.config", t, &rq, 0, &rep), ERR_NOTFOUND);
	assert_int_equal(rep.n, 0);
	kconfig_requests_release(&rq);
	kconfig_tree_free(t);
	free(cfg);
	free(root);
}

static void
test_check_own_config(void **state)
{
	char *root = write_tree("small", small_tree);
	char *cfg = test_tmp("own.config");
	struct kconfig_tree *t;
	struct kconfig_requests rq;
	struct kconfig_report rep;
	const struct kconfig_result *r;

	test_write(cfg, "CONFIG_MODULES=y\nCONFIG_BLOCK=y\nCONFIG_EXT4_FS=y\nCONFIG_PROC_FS=y\n");
	assert_int_equal(kconfig_tree_load(root, "x86", &t), OK);
	kconfig_requests_init(&rq);
	kconfig_requests_set(&rq, "EXT4_DEBUG", "y", "f:1", KCONFIG_WANT);
	assert_int_equal(kconfig_check(cfg, t, &rq, 0, &rep), OK);
	r = result(&rep, "EXT4_DEBUG");
	assert_int_equal(r->verdict, KV_NOT_SET);
	assert_why(r, "its dependencies are met, so setting CONFIG_EXT4_DEBUG=y would keep it");
	kconfig_report_release(&rep);
	kconfig_requests_release(&rq);
	kconfig_tree_free(t);
	free(cfg);
	free(root);
}

/* ---- the real tree ---- */

static void
test_reader_linux(void **state)
{
	char *tree = linux_tree();
	struct kconfig_tree *t;
	char *dep;

	if (!tree) {
		skip();
		return;
	}
	assert_int_equal(kconfig_tree_load(tree, "x86", &t), OK);
	assert_true(kconfig_tree_files(t) > 1000);
	assert_true(kconfig_tree_symbols(t) > 10000);
	if (kconfig_tree_warnings(t))
		fail_msg("%zu lines skipped, the first: %s", kconfig_tree_warnings(t),
			 kconfig_tree_warning_lines(t)->v[0]);
	assert_true(kconfig_tree_has(t, "EXT4_FS"));
	assert_true(kconfig_tree_has(t, "X86_64"));
	assert_false(kconfig_tree_has(t, "S390_GUEST")); /* another architecture's */
	dep = kconfig_tree_depends(t, "XFS_ONLINE_REPAIR");
	assert_non_null(strstr(dep, "XFS_FS && XFS_ONLINE_SCRUB"));
	free(dep);
	kconfig_tree_free(t);
	free(tree);
}

/*
 * The shipped base fragment asks for scsi_debug as a module (fstests loads
 * it with parameters and unloads it), with module support to keep it one,
 * and for the config in /proc that _require_kernel_config reads; a
 * kernel with them passes, one with scsi_debug left out does not.
 */
static void
test_shipped_fragment_modules(void **state)
{
	char *path = test_path("profiles/kconfig/fstests.config");
	struct kconfig_requests rq;
	struct kconfig_values *v = kconfig_values_new();
	struct kconfig_report rep;
	const struct kconfig_result *r;

	(void)state;
	kconfig_requests_init(&rq);
	assert_int_equal(
		kconfig_requests_add_fragment(&rq, path, "kconfig/fstests.config", KCONFIG_WANT),
		OK);
	assert_string_equal(kconfig_requests_find(&rq, "SCSI_DEBUG")->value, "m");
	assert_string_equal(kconfig_requests_find(&rq, "MODULES")->value, "y");
	assert_string_equal(kconfig_requests_find(&rq, "IKCONFIG_PROC")->value, "y");
	assert_string_equal(kconfig_requests_find(&rq, "UNICODE")->value, "y");

	assert_int_equal(kconfig_values_parse(v,
					      "CONFIG_MODULES=y\nCONFIG_SCSI_DEBUG=m\n"
					      "CONFIG_IKCONFIG=y\nCONFIG_IKCONFIG_PROC=y\n",
					      "built.config"),
			 OK);
	kconfig_check_values(v, "built.config", NULL, &rq, KCONFIG_MERGED, &rep);
	r = result(&rep, "SCSI_DEBUG");
	assert_int_equal(r->verdict, KV_SET);
	assert_int_equal(result(&rep, "IKCONFIG_PROC")->verdict, KV_SET);
	kconfig_report_release(&rep);
	kconfig_values_free(v);

	v = kconfig_values_new();
	assert_int_equal(kconfig_values_parse(v,
					      "CONFIG_MODULES=y\n# CONFIG_SCSI_DEBUG is not set\n",
					      "other.config"),
			 OK);
	kconfig_check_values(v, "other.config", NULL, &rq, 0, &rep);
	r = result(&rep, "SCSI_DEBUG");
	assert_false(kconfig_result_ok(r));
	assert_why(r, "CONFIG_SCSI_DEBUG is not set");
	assert_false(kconfig_result_ok(result(&rep, "IKCONFIG_PROC")));
	kconfig_report_release(&rep);
	kconfig_values_free(v);
	kconfig_requests_release(&rq);
	free(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_parse),
		cmocka_unit_test(test_values_bad_line),
		cmocka_unit_test(test_values_many),
		cmocka_unit_test(test_requests),
		cmocka_unit_test(test_reader_small),
		cmocka_unit_test(test_reader_errors),
		cmocka_unit_test(test_reader_unknown_keyword),
		cmocka_unit_test(test_check_verdicts),
		cmocka_unit_test(test_check_own_config),
		cmocka_unit_test(test_shipped_fragment_modules),
		cmocka_unit_test(test_reader_linux),
	};

	return cmocka_run_group_tests(tests, test_setup_hermetic, test_teardown_hermetic);
}
