/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The docs browser's Markdown renderer (md4c underneath): headings and
 * their anchors, wrapping at 40 and 80 columns, lists with hanging
 * indents, code blocks never wrapped, links numbered and collected, HTML
 * comments dropped, tables, inline styles, ASCII mode. Over the real pages
 * of docs/getting-started and small snippets. The module comes
 * from libfswb.a (src/view).
 */
#include "testlib.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "view/markdown.h"
#include "view/text.h"

static const char *const pages[] = {
	"README.md",	      "what-is-fstests.md",  "first-run.md",
	"backends.md",	      "reading-failures.md", "writing-a-test.md",
	"before-you-send.md", "glossary.md",	     "links.md",
};

static char *
page_text(const char *file)
{
	char *rel = xasprintf("docs/getting-started/%s", file);
	char *path = test_path(rel);
	char *text = test_read(path);

	free(rel);
	free(path);
	return text;
}

static void
render(const char *src, int width, bool ascii, struct md_doc *doc)
{
	struct md_opts o = { .width = width, .ascii = ascii, .link_list = true };

	md_doc_init(doc);
	assert_int_equal(md_render(src, strlen(src), &o, doc), OK);
}

static void
render_page(const char *file, int width, bool ascii, struct md_doc *doc)
{
	char *text = page_text(file);

	render(text, width, ascii, doc);
	free(text);
}

/* The index of the first line equal to text, or -1. */
static long
line_eq(const struct md_doc *d, const char *text)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->lines[i].text, text))
			return (long)i;
	return -1;
}

/* The index of the first line containing text, or -1. */
static long
line_has(const struct md_doc *d, const char *text)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->lines[i].text, text))
			return (long)i;
	return -1;
}

/* The style of the span covering byte off of line i. */
static unsigned
style_at(const struct md_doc *d, size_t i, size_t off)
{
	const struct md_line *l = &d->lines[i];

	for (size_t s = 0; s < l->nspans; s++)
		if (off >= l->spans[s].off && off < l->spans[s].off + l->spans[s].len)
			return l->spans[s].style;
	fail_msg("no span at byte %zu of line %zu '%s'", off, i, l->text);
	return 0;
}

static void
test_headings(void **state)
{
	struct md_doc d;
	long i;

	render_page("first-run.md", 80, false, &d);
	assert_string_equal(d.title, "Your first run");
	assert_int_equal(d.lines[0].kind, MDL_HEADING);
	assert_int_equal(d.lines[0].level, 1);
	assert_string_equal(d.lines[0].text, "Your first run");
	assert_true(style_at(&d, 0, 0) & MDS_HEAD);
	/* level 1 is underlined by a double rule as wide as the heading */
	assert_int_equal(d.lines[1].kind, MDL_RULE);
	assert_int_equal(text_width(d.lines[1].text, false), 14);
	assert_non_null(strstr(d.lines[1].text, "\xe2\x95\x90"));
	/* every "## N. ..." heading, numbered as written, with its anchor */
	assert_true(d.nheadings >= 6);
	assert_string_equal(d.headings[1].text, "1. Install, build, run");
	assert_int_equal(d.headings[1].level, 2);
	assert_string_equal(d.headings[1].anchor, "1-install-build-run");
	i = md_find_anchor(&d, "4-choosing-what-to-run");
	assert_true(i > 0);
	assert_string_equal(d.lines[i].text, "4. Choosing what to run");
	assert_int_equal(d.lines[i + 1].kind, MDL_RULE);
	assert_string_equal(
		d.lines[i + 1].text,
		"\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80"
		"\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80"
		"\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80"
		"\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80");
	/* a blank line before and after a heading */
	assert_int_equal(d.lines[i - 1].kind, MDL_BLANK);
	assert_int_equal(d.lines[i + 2].kind, MDL_BLANK);
	assert_int_equal(md_find_anchor(&d, "no-such-heading"), -1);
	md_doc_release(&d);

	/* ASCII rules; level 3 has none */
	render("# Title\n\n## Sub\n\n### Third\n\ntext\n", 40, true, &d);
	assert_string_equal(d.lines[0].text, "Title");
	assert_string_equal(d.lines[1].text, "=====");
	assert_string_equal(d.lines[3].text, "Sub");
	assert_string_equal(d.lines[4].text, "---");
	assert_string_equal(d.lines[6].text, "Third");
	assert_int_equal(d.lines[6].level, 3);
	assert_int_equal(d.lines[7].kind, MDL_BLANK);
	assert_string_equal(d.lines[8].text, "text");
	md_doc_release(&d);

	/* a long heading wraps like a paragraph */
	render("## A heading far too long for a narrow screen to hold\n", 20, false, &d);
	assert_string_equal(d.lines[0].text, "A heading far too");
	assert_string_equal(d.lines[1].text, "long for a narrow");
	assert_int_equal(d.lines[3].kind, MDL_RULE);
	assert_string_equal(d.headings[0].text,
			    "A heading far too long for a narrow screen to hold");
	md_doc_release(&d);
}

/* All the words of the non-code lines, in order, one space apart. */
static char *
words(const struct md_doc *d, enum md_kind only)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < d->n; i++) {
		char *t;

		if (d->lines[i].kind != only)
			continue;
		t = xstrdup(d->lines[i].text);
		for (char *w = strtok(t, " "); w; w = strtok(NULL, " ")) {
			if (sb.len)
				strbuf_addch(&sb, ' ');
			strbuf_adds(&sb, w);
		}
		free(t);
	}
	return strbuf_detach(&sb);
}

static void
test_wrap_widths(void **state)
{
	struct md_doc d40, d80;
	char *w40, *w80;
	size_t long80 = 0;

	render_page("what-is-fstests.md", 40, false, &d40);
	render_page("what-is-fstests.md", 80, false, &d80);
	assert_true(d40.n > d80.n + 20);
	for (size_t i = 0; i < d40.n; i++) {
		if (d40.lines[i].kind == MDL_CODE)
			continue;
		if (text_width(d40.lines[i].text, false) > 40)
			fail_msg("line %zu wider than 40: '%s'", i, d40.lines[i].text);
	}
	for (size_t i = 0; i < d80.n; i++) {
		int w = text_width(d80.lines[i].text, false);

		if (d80.lines[i].kind == MDL_CODE)
			continue;
		if (w > 80)
			fail_msg("line %zu wider than 80: '%s'", i, d80.lines[i].text);
		if (w > 70)
			long80++;
	}
	/* the width is used, not just respected */
	assert_true(long80 > 10);
	/* wrapping moves words between lines and loses none */
	w40 = words(&d40, MDL_TEXT);
	w80 = words(&d80, MDL_TEXT);
	assert_string_equal(w40, w80);
	assert_non_null(strstr(w80, "It began at SGI as \"xfstests\", for XFS"));
	free(w40);
	free(w80);
	md_doc_release(&d40);
	md_doc_release(&d80);

	/* exact wrapping of a paragraph; hard breaks end lines */
	render("one two three four five six seven eight nine ten eleven\n", 20, false, &d40);
	assert_int_equal(d40.n, 3);
	assert_string_equal(d40.lines[0].text, "one two three four");
	assert_string_equal(d40.lines[1].text, "five six seven eight");
	assert_string_equal(d40.lines[2].text, "nine ten eleven");
	md_doc_release(&d40);
	render("first line  \nsecond\\\nthird\n", 40, false, &d40);
	assert_int_equal(d40.n, 3);
	assert_string_equal(d40.lines[1].text, "second");
	md_doc_release(&d40);
	/* a word longer than the line is broken */
	render("x abcdefghijklmnopqrstuvwxyz\n", 10, false, &d40);
	assert_string_equal(d40.lines[0].text, "x");
	assert_string_equal(d40.lines[1].text, "abcdefghij");
	assert_string_equal(d40.lines[3].text, "uvwxyz");
	md_doc_release(&d40);
}

static void
test_lists(void **state)
{
	struct md_doc d;
	long i;

	render("- one two three four five six\n- b\n  - nested item here\n- c\n\n"
	       "1. first item that wraps\n2. second\n",
	       20, false, &d);
	assert_string_equal(d.lines[0].text, "\xe2\x80\xa2 one two three four");
	/* the hanging indent */
	assert_string_equal(d.lines[1].text, "  five six");
	assert_true(style_at(&d, 0, 0) & MDS_DIM);
	assert_string_equal(d.lines[2].text, "\xe2\x80\xa2 b");
	/* nested: its own bullet, indented; a tight list has no blank lines */
	assert_string_equal(d.lines[3].text, "  \xe2\x97\xa6 nested item here");
	assert_string_equal(d.lines[4].text, "\xe2\x80\xa2 c");
	assert_int_equal(d.lines[5].kind, MDL_BLANK);
	assert_string_equal(d.lines[6].text, "1. first item that");
	assert_string_equal(d.lines[7].text, "   wraps");
	assert_true(style_at(&d, 6, 0) & MDS_STRONG);
	assert_string_equal(d.lines[8].text, "2. second");
	md_doc_release(&d);
	/* numbers past 9 are wider, their text too */
	render("9. nine\n10. ten that wraps too\n", 20, false, &d);
	i = line_eq(&d, "9. nine");
	assert_true(i == 0);
	assert_string_equal(d.lines[i + 1].text, "10. ten that wraps");
	assert_string_equal(d.lines[i + 2].text, "    too");
	md_doc_release(&d);

	/* ASCII bullets: '*', nested '-' */
	render("- a\n  - b\n", 40, true, &d);
	assert_string_equal(d.lines[0].text, "* a");
	assert_string_equal(d.lines[1].text, "  - b");
	md_doc_release(&d);

	/* a loose list keeps its blank lines */
	render("- a\n\n- b\n", 40, false, &d);
	assert_int_equal(d.n, 3);
	assert_int_equal(d.lines[1].kind, MDL_BLANK);
	md_doc_release(&d);

	/* a real page: reading-failures.md's bullets wrap under their text */
	render_page("reading-failures.md", 60, false, &d);
	i = line_has(&d, "\xe2\x80\xa2 NNN.out.bad: what the test printed.");
	assert_true(i > 0);
	assert_true(!strncmp(d.lines[i + 1].text, "  ", 2) && d.lines[i + 1].text[2] != ' ');
	md_doc_release(&d);
}

static void
test_code_blocks(void **state)
{
	struct md_doc d;
	long i;
	const char *code = "    fswb run -c xfs/4k                       # another filesystem "
			   "configuration";

	render_page("first-run.md", 40, false, &d);
	i = line_eq(&d, code);
	assert_true(i > 0);
	assert_int_equal(d.lines[i].kind, MDL_CODE);
	assert_true(text_width(d.lines[i].text, false) > 40);
	assert_true(style_at(&d, (size_t)i, 4) & MDS_PRE);
	/* the next code line follows, unwrapped */
	assert_true(!strncmp(d.lines[i + 1].text, "    fswb run -c ext4/4k,ext4/1k,xfs/4k", 38));
	assert_true(line_eq(&d, "    fswb doctor") > 0);
	md_doc_release(&d);

	/* tabs become spaces; blank lines inside stay; inline code is a span */
	render("```\na\tb\n\nc\n```\n\nrun `make check` now\n", 40, false, &d);
	assert_string_equal(d.lines[0].text, "    a       b");
	assert_string_equal(d.lines[1].text, "");
	assert_int_equal(d.lines[1].kind, MDL_CODE);
	assert_string_equal(d.lines[2].text, "    c");
	assert_string_equal(d.lines[4].text, "run make check now");
	assert_true(style_at(&d, 4, 4) & MDS_CODE);
	assert_false(style_at(&d, 4, 0) & MDS_CODE);
	md_doc_release(&d);

	/* code in a list item is indented under the item */
	render("- item:\n\n  ```\n  x = 1\n  ```\n", 40, false, &d);
	i = line_eq(&d, "      x = 1");
	assert_true(i > 0);
	md_doc_release(&d);
}

static void
test_links(void **state)
{
	struct md_doc d;
	long i, list;

	render_page("links.md", 80, false, &d);
	assert_int_equal(d.nlinks, 18);
	assert_string_equal(d.links[0].url,
			    "https://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git");
	assert_string_equal(d.links[0].text, "fstests git repository");
	i = line_has(&d, "fstests git repository [1]: the source");
	assert_true(i > 0);
	/* the text is a link, the marker is its marker */
	assert_true(style_at(&d, (size_t)i, 4) & MDS_LINK);
	{
		const char *m = strstr(d.lines[i].text, "[1]");

		assert_true(style_at(&d, (size_t)i, (size_t)(m - d.lines[i].text)) & MDS_MARK);
	}
	assert_true(line_has(&d, "LWN search: xfstests [18]") > 0);
	/* the list at the bottom */
	list = -1;
	for (size_t k = d.n; k-- > 0 && list < 0;)
		if (!strcmp(d.lines[k].text, "Links"))
			list = (long)k;
	assert_true(list > 0);
	assert_int_equal(d.lines[list].kind, MDL_LINKS);
	assert_string_equal(d.lines[list + 1].text,
			    "[1]  https://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git");
	assert_true(line_eq(&d, "[18] https://lwn.net/Search/DoSearch?words=xfstests") > list);
	/* every occurrence is a ref with its lines: 18 in the text, 18 in the list */
	assert_int_equal(d.nrefs, 36);
	for (size_t k = 0; k < d.nrefs; k++) {
		assert_true(d.refs[k].first_line < d.n);
		assert_true(d.refs[k].last_line >= d.refs[k].first_line);
	}
	for (size_t k = 1; k < d.nrefs; k++)
		assert_true(d.refs[k].first_line >= d.refs[k - 1].first_line);
	md_doc_release(&d);

	/* a URL used twice keeps its number; a marker stays with its word */
	render("see [a](x.md) and [b](https://e.org/) and [again](x.md) here\n", 22, false, &d);
	assert_int_equal(d.nlinks, 2);
	assert_int_equal(d.nrefs, 3 + 2);
	assert_string_equal(d.lines[0].text, "see a [1] and b [2]");
	assert_string_equal(d.lines[1].text, "and again [1] here");
	assert_true(md_url_is_external(d.links[1].url));
	assert_false(md_url_is_external(d.links[0].url));
	md_doc_release(&d);

	/* no list when not asked for */
	{
		struct md_opts o = { .width = 40 };
		const char *s = "[a](https://e.org/)\n";

		md_doc_init(&d);
		assert_int_equal(md_render(s, strlen(s), &o, &d), OK);
		assert_int_equal(d.n, 1);
		assert_int_equal(d.nlinks, 1);
		md_doc_release(&d);
	}

	/* README's links are the pages in reading order */
	render_page("README.md", 80, false, &d);
	assert_true(d.nlinks >= 8);
	assert_string_equal(d.links[0].url, "what-is-fstests.md");
	assert_string_equal(d.links[1].url, "first-run.md");
	assert_string_equal(d.links[7].url, "links.md");
	md_doc_release(&d);
}

static void
test_comments_dropped(void **state)
{
	struct md_doc d;
	char *text = page_text("first-run.md");

	/* the page has doctest comments; none reaches the screen */
	assert_non_null(strstr(text, "<!-- doctest:"));
	free(text);
	render_page("first-run.md", 80, false, &d);
	assert_int_equal(line_has(&d, "doctest"), -1);
	assert_int_equal(line_has(&d, "<!--"), -1);
	assert_int_equal(line_has(&d, "-->"), -1);
	md_doc_release(&d);

	render("before <!-- hidden --> after\n\n<!-- a block\nof comment -->\n\nnext\n", 40, false,
	       &d);
	assert_string_equal(d.lines[0].text, "before after");
	assert_int_equal(d.lines[1].kind, MDL_BLANK);
	assert_string_equal(d.lines[2].text, "next");
	assert_int_equal(d.n, 3);
	md_doc_release(&d);
}

static void
test_tables(void **state)
{
	struct md_doc d;
	long i;

	render_page("reading-failures.md", 80, false, &d);
	i = line_has(&d, "file ");
	assert_true(i > 0);
	assert_int_equal(d.lines[i].kind, MDL_TABLE);
	assert_string_equal(d.lines[i].text, "file         \xe2\x94\x82 what it is");
	assert_true(style_at(&d, (size_t)i, 0) & MDS_TH);
	assert_true(!strncmp(d.lines[i + 1].text,
			     "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80", 15));
	assert_non_null(strstr(d.lines[i + 1].text, "\xe2\x94\xbc"));
	assert_true(line_eq(&d, "junit.xml    \xe2\x94\x82 the same as a JUnit/xunit report, "
				"for CI systems") > i);
	md_doc_release(&d);

	/* narrow: the wide column wraps inside its column, nothing is wider */
	render_page("reading-failures.md", 40, true, &d);
	i = line_has(&d, "run.json");
	assert_true(i > 0);
	assert_true(!strncmp(d.lines[i].text, "run.json     | every test", 25));
	assert_true(!strncmp(d.lines[i + 1].text, "             | ", 15));
	for (size_t k = 0; k < d.n; k++)
		if (d.lines[k].kind == MDL_TABLE)
			assert_true(text_width(d.lines[k].text, true) <= 40);
	md_doc_release(&d);

	/* alignment, inline code in cells */
	render("| a | b |\n|--:|:-:|\n| 1 | `x` |\n| 100 | yyyyy |\n", 40, true, &d);
	assert_string_equal(d.lines[0].text, "  a |   b");
	assert_string_equal(d.lines[1].text, "----+------");
	assert_string_equal(d.lines[2].text, "  1 |   x");
	assert_true(style_at(&d, 2, 8) & MDS_CODE);
	assert_string_equal(d.lines[3].text, "100 | yyyyy");
	md_doc_release(&d);
}

static void
test_inline_and_entities(void **state)
{
	struct md_doc d;

	render("*em* **strong** ~~del~~ a&amp;b &lt;x&gt; &#8212; &#x41; &bogus;\n", 80, false, &d);
	assert_string_equal(d.lines[0].text, "em strong del a&b <x> \xe2\x80\x94 A &bogus;");
	assert_true(style_at(&d, 0, 0) & MDS_EMPH);
	assert_true(style_at(&d, 0, 3) & MDS_STRONG);
	assert_true(style_at(&d, 0, 10) & MDS_DEL);
	assert_int_equal(style_at(&d, 0, 14), MDS_TEXT);
	md_doc_release(&d);

	/* a quote has a bar; a thematic break is a rule as wide as the text */
	render("> quoted text\n\n---\n\nafter\n", 20, true, &d);
	assert_string_equal(d.lines[0].text, "| quoted text");
	assert_int_equal(d.lines[2].kind, MDL_RULE);
	assert_string_equal(d.lines[2].text, "--------------------");
	assert_string_equal(d.lines[4].text, "after");
	md_doc_release(&d);

	{
		char *a = md_anchor("Local QEMU (`--backend qemu`, the default)");

		assert_string_equal(a, "local-qemu---backend-qemu-the-default");
		free(a);
		a = md_anchor("Filesystems' own notes");
		assert_string_equal(a, "filesystems-own-notes");
		free(a);
	}
	assert_true(md_url_is_external("mailto:a@b"));
	assert_false(md_url_is_external("#kvm"));
	assert_false(md_url_is_external("../fswb.1"));
}

/* Every page renders at every width, fits (code aside), and is ASCII in ASCII mode. */
static void
test_all_pages(void **state)
{
	static const int widths[] = { 10, 40, 80, 200 };

	for (size_t p = 0; p < ARRAY_SIZE(pages); p++) {
		char *text = page_text(pages[p]);

		for (size_t w = 0; w < ARRAY_SIZE(widths); w++) {
			for (int ascii = 0; ascii < 2; ascii++) {
				struct md_doc d;
				size_t prev_src = 0;

				render(text, widths[w], ascii, &d);
				assert_true(d.n > 3);
				assert_non_null(d.title);
				for (size_t i = 0; i < d.n; i++) {
					const struct md_line *l = &d.lines[i];
					size_t covered = 0;

					if (l->kind != MDL_CODE &&
					    text_width(l->text, ascii) > widths[w])
						fail_msg("%s at %d: line %zu too wide: '%s'",
							 pages[p], widths[w], i, l->text);
					if (ascii)
						for (const char *c = l->text; *c; c++)
							if ((unsigned char)*c >= 0x80)
								fail_msg("%s: not ASCII: '%s'",
									 pages[p], l->text);
					for (size_t s = 0; s < l->nspans; s++) {
						assert_int_equal(l->spans[s].off, covered);
						covered += l->spans[s].len;
					}
					assert_int_equal(covered, strlen(l->text));
					/* source offsets never go back: a view keeps its place */
					assert_true(l->src >= prev_src);
					prev_src = l->src;
				}
				md_doc_release(&d);
			}
		}
		free(text);
	}
}

/* After re-wrapping, the line at a source offset is the same text. */
static void
test_place_kept(void **state)
{
	struct md_doc d80, d40;
	long i80, i40;

	render_page("backends.md", 80, false, &d80);
	render_page("backends.md", 40, false, &d40);
	i80 = md_find_anchor(&d80, "kvm");
	assert_true(i80 > 0);
	i40 = (long)md_line_at_src(&d40, d80.lines[i80].src);
	assert_string_equal(d40.lines[i40].text, "KVM");
	assert_int_equal(i40, md_find_anchor(&d40, "kvm"));
	md_doc_release(&d80);
	md_doc_release(&d40);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_headings),  cmocka_unit_test(test_wrap_widths),
		cmocka_unit_test(test_lists),	  cmocka_unit_test(test_code_blocks),
		cmocka_unit_test(test_links),	  cmocka_unit_test(test_comments_dropped),
		cmocka_unit_test(test_tables),	  cmocka_unit_test(test_inline_and_entities),
		cmocka_unit_test(test_all_pages), cmocka_unit_test(test_place_kept),
	};

	setlocale(LC_ALL, "C.UTF-8");
	return cmocka_run_group_tests(tests, test_setup_hermetic, test_teardown_hermetic);
}
