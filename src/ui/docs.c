/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The docs browser: the pages of docs/getting-started rendered by
 * markdown.c. Four views:
 *
 *	index	the pages in reading order (README.md's links first), each
 *		with its first heading; Enter opens, s searches every page
 *	page	one page, re-wrapped to the terminal's width; Tab steps
 *		through its links, Enter follows one (another page opens on
 *		top, q comes back), / and n find text, l lists the links
 *	links	the links of a page with their URLs; Enter follows one
 *	results	the lines of every page that contain a search
 *
 * A link out of the docs opens with xdg-open (through core/spawn) when a
 * display exists (DISPLAY or WAYLAND_DISPLAY); otherwise, or when xdg-open
 * is missing, its URL is shown whole in a box to copy.
 *
 * The pages are in DATADIR/docs/getting-started (fswb_datadir(): $FSWB_DATADIR,
 * the source tree, or PREFIX/share/fswb), read when a view opens
 * (src/view/docsite.c).
 *
 * The files, each calling only the ones before it:
 *	docs_draw.c    drawing a rendered line, the box, links out, the prompt
 *	docs_page.c    the page and links views
 *	docs_search.c  the results view
 *	docs_index.c   the index view
 *	docs.c         opening the docs at a page, or at a search
 * A page asks for the index or a search of every page with ui_want_*().
 */
#include <stdlib.h>
#include <string.h>

#include "ui/docs_int.h"

/* ---- the entry ---- */

void
docs_open(struct ui *ui, const char *page)
{
	struct docs_site *site = docs_site_load();
	char *file = NULL, *anchor = NULL, *hash;

	if (page && *page) {
		file = xstrdup(page);
		if ((hash = strchr(file, '#'))) {
			*hash = 0;
			anchor = hash[1] ? xstrdup(hash + 1) : NULL;
		}
		/* "first-run" is first-run.md */
		if (*file && !str_endswith(file, ".md")) {
			char *f = xasprintf("%s.md", file);

			free(file);
			file = f;
		}
	}
	if (site->error || !file || !*file) {
		docs_index_open(ui, site);
	} else if (!docs_site_has_page(site, file)) {
		docs_index_open(ui, site);
		ui_msg(ui, true, "there is no docs page '%s': here are the pages there are", file);
	} else {
		docs_page_open(ui, site, file, anchor, NULL, SIZE_MAX);
		if (!ui->depth)
			docs_index_open(ui, site);
	}
	docs_site_unref(site);
	free(file);
	free(anchor);
}

void
docs_search(struct ui *ui, const char *query)
{
	struct docs_site *site = docs_site_load();

	docs_results_open(ui, site, query);
	docs_site_unref(site);
}
