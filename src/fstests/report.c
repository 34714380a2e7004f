/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fstests/report.h"

void
text_plain(struct strbuf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	size_t col = 0;

	while (p < end) {
		size_t n;

		if (*p == '\n') {
			strbuf_addch(out, '\n');
			col = 0;
			p++;
		} else if (*p == '\t') {
			do
				strbuf_addch(out, ' ');
			while (++col % 8);
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			strbuf_addch(out, '?');
			col++;
			p++;
		} else if (*p < 0x80) {
			strbuf_addch(out, *p++);
			col++;
		} else if ((n = utf8_len(p, end)) == 0 || (p[0] == 0xc2 && p[1] < 0xa0)) {
			/* not UTF-8, or a C1 control (U+0080..U+009F) */
			strbuf_addch(out, '?');
			col++;
			p += n ? n : 1;
		} else {
			strbuf_add(out, p, n);
			col++;
			p += n;
		}
	}
}
