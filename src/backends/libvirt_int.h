/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The libvirt backend's parts that its unit tests reach (libvirt.c). */
#ifndef FSWB_BACKENDS_LIBVIRT_INT_H
#define FSWB_BACKENDS_LIBVIRT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* A URI as the backend reads it: qemu[+transport]://[user@][host][:port]/path[?query]. */
struct lv_uri {
	char *driver; /* "qemu" */
	char *host;   /* NULL: this host */
	char *path;   /* "/system", "/session", "/embed" */
	char *root;   /* embed's root=DIR, else NULL */
};

/* Parse one URI; an error names what is wrong and what a good one looks like. */
enum status lv_uri_parse(const char *uri, struct lv_uri *out);
void lv_uri_release(struct lv_uri *u);

/* What a domain is made of (the session's files, on the host that runs it). */
struct lv_domain {
	const char *name;    /* "fswb-ext4-4k-1234-1" */
	bool kvm;	     /* type='kvm', else 'qemu' (TCG) */
	const char *machine; /* "x86_64" */
	unsigned cpus;
	uint64_t mem; /* bytes */
	const char *kernel, *initrd, *cmdline;
	const char *root;	  /* the qcow2 overlay of the appliance */
	const char *const *disks; /* raw files: /dev/vdb, /dev/vdc... */
	size_t ndisks;
};

/* The transient domain's XML; every value escaped. free() it. */
char *lv_domain_xml(const struct lv_domain *d);

/*
 * What a lifecycle event (virDomainEventType, its detail) means for the
 * session: 0 the domain runs on, 1 it is gone cleanly (a power-off), 2 it
 * is gone or must be stopped for *why (static text).
 */
int lv_event_verdict(int event, int detail, const char **why);

/* A domain name for the session called name (shard's config) of this process, at most 48 bytes. */
char *lv_domain_name(const char *name, long pid, unsigned serial);

#endif
