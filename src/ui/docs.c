/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "ui/ui_int.h"

void
docs_open(struct ui *ui, const char *page)
{
	ui_msg(ui, true, "the docs are not written yet");
}
