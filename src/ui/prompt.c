/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one-line prompt's editing keys, for every prompt of the TUI (the
 * wizard's questions, the pager's and the docs' searches).
 */
#include "ui/ui_int.h"

bool
prompt_edit_key(struct lineedit *le, int key)
{
	static const struct {
		int key;
		enum lineedit_key edit;
	} keys[] = {
		{ K_BS, LE_BACKSPACE },
		{ K_DEL, LE_DELETE },
		{ K_LEFT, LE_LEFT },
		{ K_RIGHT, LE_RIGHT },
		{ K_HOME, LE_HOME },
		{ K_CTRL('a'), LE_HOME },
		{ K_END, LE_END },
		{ K_CTRL('e'), LE_END },
		{ K_CTRL('u'), LE_KILL_LINE },
		{ K_CTRL('w'), LE_KILL_WORD },
		{ K_CTRL('k'), LE_KILL_TO_END },
	};
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (key == keys[i].key) {
			lineedit_key(le, keys[i].edit);
			return true;
		}
	if (key < ' ' || key >= 0x110000 || key == 0x7f)
		return false;
	strbuf_add_utf8(&sb, (unsigned long)key);
	lineedit_insert(le, sb.buf, sb.len);
	strbuf_release(&sb);
	return true;
}
