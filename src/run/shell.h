/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The shell relay: the engine's shell in the guest (fswb run --shell, the
 * TUI's "shell" key) on this terminal, raw when stdin is one. It ends when
 * the guest says the shell ended (the agent protocol's end-of-shell line),
 * when the channel closes, or when the user types Ctrl-]; then
 * engine_shell_end() powers the guest off.
 */
#ifndef FSWB_RUN_SHELL_H
#define FSWB_RUN_SHELL_H

#include "core/loop.h"
#include "run/engine.h"

struct shell_relay;

/*
 * Start relaying (engine_shell_fd(e) >= 0) on the loop; look: the shell is
 * engine_look()'s, whose guest goes on with its tests. When it ends, the
 * terminal is as it was, engine_shell_end(e) was called, and on_end(data)
 * (may be NULL) is called from the loop; free the relay after that, not
 * from on_end. stdin must not be watched by anything else meanwhile.
 */
struct shell_relay *shell_relay_start(struct loop *loop, struct engine *e, bool look,
				      void (*on_end)(void *data), void *data);
bool shell_relay_ended(const struct shell_relay *r);
/* End it (on_end is not called) when it goes on, and free it. NULL is fine. */
void shell_relay_free(struct shell_relay *r);

#endif
