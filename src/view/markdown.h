/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Markdown to lines for the docs browser, without curses: md4c parses, this
 * lays the blocks out at a width as lines of text with styled spans.
 *
 *	struct md_doc doc;
 *	struct md_opts o = { .width = 76, .ascii = false, .link_list = true };
 *	md_doc_init(&doc);
 *	if (md_render(src, len, &o, &doc) != OK) ...   error_msg() says why
 *	for (size_t i = 0; i < doc.n; i++) draw doc.lines[i] (text, spans)
 *	md_doc_release(&doc);                            (md_render again after
 *	                                                  a resize: it clears first)
 *
 * What the layout does:
 * - headings: their own line(s) with MDS_HEAD, level in md_line.level;
 *   level 1 and 2 are underlined by a rule line ('=' / '-' in ASCII) as wide
 *   as the heading; every heading is in doc.headings with a GitHub-style
 *   anchor ("## 4. Choosing what to run" is "4-choosing-what-to-run").
 * - paragraphs, list items, table cells and headings are word-wrapped to the
 *   width; list items get a bullet ("•", "◦" nested; '*', '-' in ASCII) or
 *   their number, and a hanging indent; block quotes a bar on the left.
 * - code blocks are indented by four columns and never wrapped: a line is
 *   as long as the code (the view clips it); tabs become spaces.
 * - inline code, emphasis and strong emphasis are spans (MDS_CODE, MDS_EMPH,
 *   MDS_STRONG); the backticks and asterisks are gone.
 * - a link is its text (MDS_LINK) followed by " [n]" (MDS_MARK), n counting
 *   from 1 in the order links first appear (the same URL keeps its number);
 *   doc.links has them, and with link_list set the page ends with a
 *   "Links" list of "[n] URL" lines.
 * - tables: columns padded to their contents, shrunk and wrapped when the
 *   width is too small, a rule under the header row.
 * - raw HTML (blocks and inline), such as <!-- comments -->, is dropped.
 *
 * Every span of a link, in the text and in the list at the bottom, carries
 * the link's number (link, 0-based) and the number of that occurrence
 * (ref, 0-based, an index of doc.refs), so a view can step through them.
 * Every line records the offset in src of its first character (src), so a
 * view keeps its place across re-wrapping.
 */
#ifndef FSWB_VIEW_MARKDOWN_H
#define FSWB_VIEW_MARKDOWN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"

/* Styles of a span: a bitmask. */
enum md_style {
	MDS_TEXT = 0,
	MDS_EMPH = 1 << 0,
	MDS_STRONG = 1 << 1,
	MDS_CODE = 1 << 2,  /* inline code */
	MDS_LINK = 1 << 3,  /* a link's text */
	MDS_MARK = 1 << 4,  /* a link's " [n]" */
	MDS_HEAD = 1 << 5,  /* a heading */
	MDS_PRE = 1 << 6,   /* a code block's text */
	MDS_DIM = 1 << 7,   /* bullets, numbers, rules, table borders, quote bars */
	MDS_DEL = 1 << 8,   /* ~~struck through~~ */
	MDS_TH = 1 << 9,    /* a table's header cell */
	MDS_RULE = 1 << 10, /* a rule line under a heading, or a thematic break */
};

struct md_span {
	size_t off, len; /* bytes of md_line.text */
	unsigned style;
	int link; /* index of doc.links, or -1 */
	int ref;  /* index of doc.refs, or -1 */
};

enum md_kind {
	MDL_BLANK,
	MDL_TEXT,    /* paragraph, list item, quote */
	MDL_HEADING, /* level in md_line.level */
	MDL_RULE,    /* under a heading, or a thematic break */
	MDL_CODE,    /* a code block's line: never wrapped */
	MDL_TABLE,
	MDL_LINKS, /* the list of links at the bottom */
};

struct md_line {
	char *text; /* UTF-8, no newline; spans cover every byte */
	struct md_span *spans;
	size_t nspans;
	enum md_kind kind;
	int level;  /* headings: 1-6; else 0 */
	size_t src; /* offset in the source of its first character (or of its block) */
};

struct md_link {
	char *url;  /* as written (entities decoded) */
	char *text; /* its first occurrence's words */
};

/* One occurrence of a link: where it starts and ends. */
struct md_ref {
	int link;
	size_t first_line, last_line;
};

struct md_heading {
	int level;
	size_t line; /* its first line */
	char *text;
	char *anchor;
};

struct md_doc {
	struct md_line *lines;
	size_t n, alloc;
	struct md_link *links;
	size_t nlinks, links_alloc;
	struct md_ref *refs;
	size_t nrefs, refs_alloc;
	struct md_heading *headings;
	size_t nheadings, headings_alloc;
	char *title; /* the first heading's text, or NULL */
};

struct md_opts {
	int width;	/* columns for text (at least 10 is used) */
	bool ascii;	/* ASCII bullets and rules */
	bool link_list; /* end with the list of links */
};

void md_doc_init(struct md_doc *doc);
void md_doc_release(struct md_doc *doc);

/*
 * Render src (len bytes of Markdown, UTF-8) into doc, which is cleared
 * first. ERR_PARSE when md4c gives up (it only does when out of memory).
 */
enum status md_render(const char *src, size_t len, const struct md_opts *o, struct md_doc *doc);

/* The line of the heading with that anchor, or -1. */
long md_find_anchor(const struct md_doc *doc, const char *anchor);

/* The first line whose source offset is at least src (the last line when none). */
size_t md_line_at_src(const struct md_doc *doc, size_t src);

/* GitHub's anchor of a heading text: lower case, spaces to '-', punctuation dropped. */
char *md_anchor(const char *heading);

/* Whether url has a scheme ("https:", "mailto:"): a link out of the docs. */
bool md_url_is_external(const char *url);

#endif
