/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The ssh backend's inside, for its unit tests (ssh.c). */
#ifndef FSWB_BACKENDS_SSH_INT_H
#define FSWB_BACKENDS_SSH_INT_H

#include <stdbool.h>

#include "core/status.h"
#include "core/util.h"

/* What the inspection is checked against. */
struct ssh_machine {
	const char *name;	    /* "root@host:22", for messages */
	const char *fstests, *work; /* fstests and fswb's work dir on it */
	const struct strvec *wipe;  /* the devices the user confirmed */
};

/* What stops a run beyond the message, for a front end to ask the user. */
struct ssh_verdict {
	bool blocked;		   /* something besides a confirmation stops the run */
	struct strvec unconfirmed; /* the devices the user must confirm (wipe=) */
	struct strvec holds;	   /* each with what it holds: "/dev/vdb (8.0 GiB, ext4)" */
};

/*
 * The verdict on what the inspection script printed on the machine (its
 * output is untrusted): OK, or one message naming everything that stops the
 * run (no fstests, missing tools with the install command, devices mounted,
 * root, swap, held or not confirmed, with what each holds).
 */
enum status ssh_inspect_verdict(const char *text, const struct ssh_machine *m,
				struct ssh_verdict *v);

#endif
