/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fstests/localconfig.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * check's defaults when a section leaves MOUNT_OPTIONS or MKFS_OPTIONS empty
 * and the filesystem changes (common/config, with none of the per-filesystem
 * variables such as EXT_MOUNT_OPTIONS set). Filesystems not listed default
 * to nothing.
 */
static const struct {
	const char *fstyp, *mount, *mkfs;
} fs_defaults[] = {
	{ "ext2", "-o acl,user_xattr", "" },
	{ "ext3", "-o acl,user_xattr", "" },
	{ "ext4", "-o acl,user_xattr", "" },
	{ "f2fs", "-o acl,user_xattr", "" },
	{ "gfs2", "-o acl", "-O -p lock_nolock" },
	{ "tmpfs", "-o size=1G", "" },
	{ "jfs", "", "-q" },
};

static const char *
fs_default(const char *fstyp, bool mount)
{
	for (size_t i = 0; i < ARRAY_SIZE(fs_defaults); i++)
		if (!strcmp(fs_defaults[i].fstyp, fstyp))
			return mount ? fs_defaults[i].mount : fs_defaults[i].mkfs;
	return "";
}

struct writer {
	struct strbuf *out;
	bool sections;
	const char *where; /* "config 'ext4/4k'" or "extra setting" */
};

static enum status
check_value(const struct writer *w, const char *name, const char *value)
{
	for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			if (*p == '\t' && !w->sections)
				continue;
			return error(ERR_INVALID,
				     "%s: the value of '%s' holds a control character (0x%02x); "
				     "write it on one line without tabs or control characters",
				     w->where, name, *p);
		}
	}
	if (!w->sections)
		return OK;

	size_t len = strlen(value);
	const char *bad = strpbrk(value, "'\"#*?[");

	if (bad)
		return error(ERR_INVALID,
			     "%s: the value of '%s' holds '%c', which check's section parser "
			     "cannot carry; run this configuration on its own",
			     w->where, name, *bad);
	if (len && (value[0] == ' ' || value[len - 1] == ' '))
		return error(ERR_INVALID,
			     "%s: the value of '%s' starts or ends with a space, which check's "
			     "section parser drops; remove it",
			     w->where, name);
	if (strstr(value, "  "))
		return error(ERR_INVALID,
			     "%s: the value of '%s' has two spaces in a row, which check's "
			     "section parser makes one; use single spaces",
			     w->where, name);
	if (strstr(value, " =") || strstr(value, "= "))
		return error(ERR_INVALID,
			     "%s: the value of '%s' has a space beside '=', which check's "
			     "section parser removes; write 'key=value'",
			     w->where, name);
	return OK;
}

/* Append NAME=value (or `export NAME=value`) as the mode needs it. */
static enum status
put_var(struct writer *w, const char *name, const char *value)
{
	enum status rc = check_value(w, name, value);

	if (rc != OK)
		return rc;
	if (!w->sections) {
		strbuf_addf(w->out, "export %s=", name);
		if (*value)
			sq_quote(w->out, value);
		else
			strbuf_adds(w->out, "''");
		strbuf_addch(w->out, '\n');
		return OK;
	}
	strbuf_addf(w->out, "%s=", name);
	if (*value) {
		strbuf_addch(w->out, '"');
		for (const char *p = value; *p; p++) {
			if (*p == '\\' || *p == '$' || *p == '`')
				strbuf_addch(w->out, '\\');
			strbuf_addch(w->out, *p);
		}
		strbuf_addch(w->out, '"');
	}
	strbuf_addch(w->out, '\n');
	return OK;
}

/* A variable without its checks (the single-space value of a default). */
static void
put_raw(struct writer *w, const char *name, const char *raw)
{
	strbuf_addf(w->out, "%s=%s\n", name, raw);
}

static bool
valid_name(const char *s, size_t len)
{
	if (!len || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (size_t i = 1; i < len; i++) {
		char c = s[i];

		if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		      (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

static enum status
check_env(const struct strvec *env)
{
	if (!env)
		return OK;
	for (size_t i = 0; i < env->n; i++) {
		const char *s = env->v[i];
		const char *eq = strchr(s, '=');

		if (!eq || !valid_name(s, (size_t)(eq - s)))
			return error(ERR_INVALID,
				     "extra setting '%s' is not NAME=value with NAME made of "
				     "letters, digits and '_'",
				     s);
		if (profiles_fswb_var(s, (size_t)(eq - s)))
			return error(ERR_INVALID,
				     "extra setting '%s': '%.*s' comes from the "
				     "configuration and its devices; change those instead",
				     s, (int)(eq - s), s);
	}
	return OK;
}

static enum status
put_env(struct writer *w, const struct strvec *env)
{
	enum status rc = OK;

	if (!env)
		return OK;
	for (size_t i = 0; i < env->n && rc == OK; i++) {
		const char *eq = strchr(env->v[i], '=');
		char *name = xstrndup(env->v[i], (size_t)(eq - env->v[i]));
		const char *where = w->where;

		w->where = "extra setting";
		rc = put_var(w, name, eq + 1);
		w->where = where;
		free(name);
	}
	return rc;
}

static enum status
need(const struct writer *w, const char *name, const char *value)
{
	if (!value || !*value)
		return error(ERR_INVALID, "%s needs %s but no device or directory was given for it",
			     w->where, name);
	return OK;
}

/* What check has in effect after a section, for the carry-over rules. */
struct carried {
	const char *fstyp;
	const char *mkfs;  /* NULL: check's default */
	const char *mount; /* NULL: check's default */
	const char *test_mount;
	bool external;
	struct strvec env; /* the names an earlier section's configuration set */
};

/* MKFS_OPTIONS or MOUNT_OPTIONS of one section. */
static enum status
put_options(struct writer *w, const char *name, const char *value, const char *fstyp, bool same_fs,
	    const char **carried, bool mount)
{
	enum status rc = OK;

	if (value && *value) {
		rc = put_var(w, name, value);
		*carried = value;
		return rc;
	}
	if (!w->sections || !same_fs || !*carried) {
		*carried = NULL;
		return OK;
	}
	/* check would keep the earlier section's value: give the default. */
	const char *def = fs_default(fstyp, mount);

	if (*def)
		rc = put_var(w, name, def);
	else
		put_raw(w, name, "\" \"");
	*carried = NULL;
	return rc;
}

static enum status
put_section(struct writer *w, const struct localconfig_section *s, const char *result_base,
	    const struct strvec *env, struct carried *c)
{
	const struct fs_config *cfg = s->config;
	const struct localconfig_devices *d = s->dev;
	bool pool = cfg->pool_devices > 0;
	bool scratch = pool || cfg->scratch_size > 0 || cfg->devices;
	bool logdev = cfg->logdev_size > 0, rtdev = cfg->rtdev_size > 0;
	/*
	 * an overlay's TEST and SCRATCH are its base's; check -overlay does the
	 * rest. A served base (nfs) is exported by the guest: check sees only
	 * nfs, and the mkfs options are the base's, never given to check.
	 */
	const char *fstyp = cfg->base && !cfg->serve ? cfg->base : cfg->fstyp;
	const char *mkfs = cfg->serve ? "" : cfg->mkfs_options;
	bool same_fs = c->fstyp && !strcmp(c->fstyp, fstyp);
	enum status rc;

	if ((rc = need(w, "TEST_DEV", d->test_dev)) != OK ||
	    (rc = need(w, "TEST_DIR", d->test_dir)) != OK)
		return rc;
	if (scratch && (rc = need(w, "SCRATCH_MNT", d->scratch_mnt)) != OK)
		return rc;
	if (pool) {
		size_t n = 0;

		while (d->scratch_pool && d->scratch_pool[n])
			n++;
		if (n != cfg->pool_devices)
			return error(ERR_INVALID,
				     "%s needs %u devices in SCRATCH_DEV_POOL but %zu were given",
				     w->where, cfg->pool_devices, n);
	} else if (scratch && (rc = need(w, "SCRATCH_DEV", d->scratch_dev)) != OK) {
		return rc;
	}
	if (logdev && (rc = need(w, "SCRATCH_LOGDEV", d->scratch_logdev)) != OK)
		return rc;
	if (rtdev && (rc = need(w, "SCRATCH_RTDEV", d->scratch_rtdev)) != OK)
		return rc;

	if ((rc = put_var(w, "FSTYP", fstyp)) != OK ||
	    (rc = put_var(w, "TEST_DEV", d->test_dev)) != OK ||
	    (rc = put_var(w, "TEST_DIR", d->test_dir)) != OK)
		return rc;

	if (pool) {
		struct strvec v = STRVEC_INIT;
		char *joined;

		strvec_pushv(&v, d->scratch_pool);
		joined = strvec_join(&v, " ");
		strvec_clear(&v);
		if (w->sections)
			rc = put_var(w, "SCRATCH_DEV", "");
		if (rc == OK)
			rc = put_var(w, "SCRATCH_DEV_POOL", joined);
		free(joined);
	} else {
		if (scratch)
			rc = put_var(w, "SCRATCH_DEV", d->scratch_dev);
		else if (w->sections)
			rc = put_var(w, "SCRATCH_DEV", "");
		if (rc == OK && w->sections)
			rc = put_var(w, "SCRATCH_DEV_POOL", "");
	}
	if (rc != OK)
		return rc;
	if (d->scratch_mnt && *d->scratch_mnt && (rc = put_var(w, "SCRATCH_MNT", d->scratch_mnt)))
		return rc;

	if ((rc = put_options(w, "MKFS_OPTIONS", mkfs, fstyp, same_fs, &c->mkfs, false)) != OK ||
	    (rc = put_options(w, "MOUNT_OPTIONS", cfg->mount_options, fstyp, same_fs, &c->mount,
			      true)) != OK ||
	    (rc = put_options(w, "TEST_FS_MOUNT_OPTS", cfg->mount_options, fstyp, same_fs,
			      &c->test_mount, true)) != OK)
		return rc;
	/* what an fstests user reads (and check's own default for nfs) */
	if (cfg->serve && *cfg->mount_options &&
	    (rc = put_var(w, "NFS_MOUNT_OPTIONS", cfg->mount_options)) != OK)
		return rc;

	if (logdev || rtdev) {
		const char *tl = logdev && d->test_logdev ? d->test_logdev : "";
		const char *sl = logdev ? d->scratch_logdev : "";
		const char *tr = rtdev && d->test_rtdev ? d->test_rtdev : "";
		const char *sr = rtdev ? d->scratch_rtdev : "";

		if ((rc = put_var(w, "USE_EXTERNAL", "yes")) != OK)
			return rc;
		if ((*tl || w->sections) && (rc = put_var(w, "TEST_LOGDEV", tl)) != OK)
			return rc;
		if ((*sl || w->sections) && (rc = put_var(w, "SCRATCH_LOGDEV", sl)) != OK)
			return rc;
		if ((*tr || w->sections) && (rc = put_var(w, "TEST_RTDEV", tr)) != OK)
			return rc;
		if ((*sr || w->sections) && (rc = put_var(w, "SCRATCH_RTDEV", sr)) != OK)
			return rc;
		c->external = true;
	} else if (w->sections && c->external) {
		if ((rc = put_var(w, "USE_EXTERNAL", "no")) != OK ||
		    (rc = put_var(w, "TEST_LOGDEV", "")) != OK ||
		    (rc = put_var(w, "SCRATCH_LOGDEV", "")) != OK ||
		    (rc = put_var(w, "TEST_RTDEV", "")) != OK ||
		    (rc = put_var(w, "SCRATCH_RTDEV", "")) != OK)
			return rc;
		c->external = false;
	}

	if (d->logwrites_dev && *d->logwrites_dev)
		rc = put_var(w, "LOGWRITES_DEV", d->logwrites_dev);
	else if (w->sections)
		rc = put_var(w, "LOGWRITES_DEV", "");
	if (rc == OK && result_base && *result_base)
		rc = put_var(w, "RESULT_BASE", result_base);
	for (size_t i = 0; rc == OK && env && i < env->n; i++) {
		size_t len = strcspn(env->v[i], "=") + 1;

		for (size_t j = 0; j < cfg->env.n; j++)
			if (!strncmp(cfg->env.v[j], env->v[i], len))
				return error(ERR_INVALID,
					     "%s sets %.*s itself; the extra setting '%s' would "
					     "replace it",
					     w->where, (int)len - 1, env->v[i], env->v[i]);
	}
	if (rc == OK)
		rc = check_env(&cfg->env);
	/* check would carry an earlier configuration's setting into this one */
	for (size_t i = 0; rc == OK && i < c->env.n; i++) {
		char *set = xasprintf("%s=", c->env.v[i]);
		bool again = false;

		for (size_t j = 0; j < cfg->env.n; j++)
			again = again || str_startswith(cfg->env.v[j], set);
		for (size_t j = 0; env && j < env->n; j++)
			again = again || str_startswith(env->v[j], set);
		if (!again)
			rc = put_var(w, c->env.v[i], "");
		free(set);
	}
	strvec_clear(&c->env);
	for (size_t i = 0; i < cfg->env.n; i++) {
		char *name = xstrndup(cfg->env.v[i], strcspn(cfg->env.v[i], "="));

		strvec_push(&c->env, name);
		free(name);
	}
	if (rc == OK)
		rc = put_env(w, &cfg->env);
	if (rc == OK)
		rc = put_env(w, env);
	c->fstyp = fstyp;
	return rc;
}

void
localconfig_section_name(const char *config_name, struct strbuf *out)
{
	for (const char *p = config_name; *p; p++) {
		char ch = *p;
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '_';

		strbuf_addch(out, ok ? ch : '_');
	}
	if (!*config_name)
		strbuf_adds(out, "default");
}

enum status
localconfig_write(const struct localconfig_section *secs, size_t n, const char *result_base,
		  const struct strvec *env, struct strbuf *out)
{
	struct strbuf text = STRBUF_INIT;
	struct strvec names = STRVEC_INIT;
	struct carried carried = { .env = STRVEC_INIT };
	struct writer w = { .out = &text, .sections = n > 1 };
	enum status rc;

	if (!n)
		return error(ERR_INVALID, "no configuration to write a local.config for");
	if ((rc = check_env(env)) != OK)
		return rc;

	strbuf_adds(&text, "# fstests local.config for fswb's run of");
	for (size_t i = 0; i < n; i++) {
		strbuf_adds(&text, " '");
		for (const char *p = secs[i].config->name; *p; p++)
			strbuf_addch(&text, (unsigned char)*p < 0x20 ? '?' : *p);
		strbuf_addch(&text, '\'');
	}
	strbuf_adds(&text,
		    w.sections ? ".\n# One section per configuration; check runs them in order.\n"
			       : ".\n");

	for (size_t i = 0; i < n && rc == OK; i++) {
		char *where = xasprintf("config '%s'", secs[i].config->name);

		w.where = where;
		if (w.sections) {
			struct strbuf name = STRBUF_INIT;
			size_t base_len;

			localconfig_section_name(secs[i].config->name, &name);
			base_len = name.len;
			for (unsigned k = 2; strvec_contains(&names, name.buf); k++) {
				strbuf_setlen(&name, base_len);
				strbuf_addf(&name, "_%u", k);
			}
			strvec_push(&names, name.buf);
			strbuf_addf(&text, "\n[%s]\n", name.buf);
			strbuf_release(&name);
		}
		rc = put_section(&w, &secs[i], result_base, env, &carried);
		free(where);
	}
	if (rc == OK)
		strbuf_add(out, text.buf, text.len);
	strbuf_release(&text);
	strvec_clear(&names);
	strvec_clear(&carried.env);
	return rc;
}
