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

/*
 * Relay while engine_shell_fd(e) >= 0; runs the loop meanwhile. stdin must
 * not be watched by anything else.
 */
void shell_relay(struct loop *loop, struct engine *e);

#endif
