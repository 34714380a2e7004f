/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text made to travel: what fswb prints from a run's record (names,
 * reasons, diffs, kernel logs came from a test machine) as plain text.
 */
#ifndef FSWB_FSTESTS_REPORT_H
#define FSWB_FSTESTS_REPORT_H

#include <stddef.h>

#include "core/util.h"

/*
 * Append s (len bytes) to out as plain text: newlines kept, a tab becomes
 * spaces to the next multiple of 8 columns, every other control character
 * (ESC, CR, DEL, the C1 controls) and every byte that is not valid UTF-8
 * becomes '?'. Nothing that moves a terminal's cursor or changes its
 * colours gets through.
 */
void text_plain(struct strbuf *out, const char *s, size_t len);

#endif
