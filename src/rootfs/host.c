/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The appliance's config file, the host's release and mirror.
 */
#include <dirent.h>
#include <jansson.h>
#include <string.h>

#include "core/paths.h"
#include "rootfs/appliance_int.h"

enum status
appliance_config_read(const char *path, char **release, char **mirror)
{
	char *own = NULL, *text = NULL;
	unsigned lineno = 0;
	enum status rc = OK;

	*release = *mirror = NULL;
	if (!path) {
		char *dir = fswb_dir(DIR_CONFIG);

		own = path_join(dir, "config");
		free(dir);
		path = own;
	}
	if (!path_exists(path))
		goto out;
	rc = read_file(path, MAX_CONFIG, &text, NULL);
	if (rc != OK)
		goto out;
	for (char *line = text, *next; line; line = next) {
		char *eq, *key, *value;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line = str_trim(line);
		if (!*line || *line == '#')
			continue;
		eq = strchr(line, '=');
		if (!eq) {
			rc = error(
				ERR_PARSE,
				"'%s' line %u: '%s' is not 'key = value'; fix or remove the line",
				path, lineno, line);
			goto out;
		}
		*eq = '\0';
		key = str_trim(line);
		value = str_trim(eq + 1);
		if (!strcmp(key, "release") || !strcmp(key, "mirror")) {
			char **dst = !strcmp(key, "release") ? release : mirror;

			if (!*value) {
				rc = error(ERR_PARSE, "'%s' line %u: '%s' has no value", path,
					   lineno, key);
				goto out;
			}
			free(*dst);
			*dst = xstrdup(value);
		}
	}
out:
	if (rc != OK) {
		free(*release);
		free(*mirror);
		*release = *mirror = NULL;
	}
	free(text);
	free(own);
	return rc;
}

enum status
appliance_host_release(const char *os_release, char **out)
{
	const char *path = os_release ? os_release : "/etc/os-release";
	char *text = NULL, *v;
	enum status rc;

	*out = NULL;
	rc = read_file(path, MAX_CONFIG, &text, NULL);
	if (rc != OK)
		return error(ERR_NOTFOUND,
			     "cannot read '%s' to learn the host's release: set 'release = NAME' "
			     "in the config file or pass --release",
			     path);
	v = os_release_value(text, "VERSION_CODENAME");
	if (v && *str_trim(v))
		*out = xstrdup(str_trim(v));
	free(v);
	free(text);
	if (!*out)
		return error(ERR_NOTFOUND,
			     "'%s' has no VERSION_CODENAME (a Debian testing or sid host?): set "
			     "'release = NAME' in the config file or pass --release",
			     path);
	return OK;
}

bool
ap_mirror_scheme_ok(const char *uri)
{
	return str_startswith(uri, "http://") || str_startswith(uri, "https://") ||
	       str_startswith(uri, "ftp://") || str_startswith(uri, "file:/");
}

/* One-line format: deb [opts] URI SUITE COMPONENT... */
static char *
mirror_from_list(const char *text, const char *release)
{
	struct strvec lines = STRVEC_INIT;
	char *found = NULL;

	strvec_split(&lines, text, "\n");
	for (size_t i = 0; !found && i < lines.n; i++) {
		char *line = lines.v[i], *hash = strchr(line, '#');
		struct strvec w = STRVEC_INIT;
		size_t j = 1;

		if (hash)
			*hash = '\0';
		strvec_split(&w, line, " \t");
		if (w.n >= 3 && !strcmp(w.v[0], "deb")) {
			if (w.v[1][0] == '[') {
				/* options up to the word that ends with ']' */
				while (j < w.n && !str_endswith(w.v[j], "]"))
					j++;
				j++;
			}
			if (j + 1 < w.n && !strcmp(w.v[j + 1], release) &&
			    ap_mirror_scheme_ok(w.v[j]))
				found = xstrdup(w.v[j]);
		}
		strvec_clear(&w);
	}
	strvec_clear(&lines);
	return found;
}

static bool
deb822_enabled(const char *v)
{
	return !(!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0"));
}

/* deb822 format: stanzas of Types:, URIs:, Suites:, Enabled: fields. */
static char *
mirror_from_sources(const char *text, const char *release)
{
	char *copy = xstrdup(text), *found = NULL;
	struct strvec types = STRVEC_INIT, uris = STRVEC_INIT, suites = STRVEC_INIT;
	bool enabled = true, in_stanza = false, last_field_uris = false;
	char *line, *next;

	for (line = copy;; line = next) {
		bool end = !line;

		next = line ? strchr(line, '\n') : NULL;
		if (next)
			*next++ = '\0';
		if (line && line[0] == '#')
			continue;
		if (end || !*str_trim(line)) {
			if (in_stanza && enabled && strvec_contains(&types, "deb") &&
			    strvec_contains(&suites, release))
				for (size_t i = 0; !found && i < uris.n; i++)
					if (ap_mirror_scheme_ok(uris.v[i]))
						found = xstrdup(uris.v[i]);
			strvec_clear(&types);
			strvec_clear(&uris);
			strvec_clear(&suites);
			enabled = true;
			in_stanza = false;
			if (end || found)
				break;
			continue;
		}
		in_stanza = true;
		if ((line[0] == ' ' || line[0] == '\t')) {
			/* a continuation line of the last field */
			if (last_field_uris)
				strvec_split(&uris, line, " \t");
			continue;
		}
		last_field_uris = false;
		{
			char *colon = strchr(line, ':');
			char *key, *value;

			if (!colon)
				continue;
			*colon = '\0';
			key = str_trim(line);
			value = str_trim(colon + 1);
			if (!strcasecmp(key, "Types")) {
				strvec_split(&types, value, " \t");
			} else if (!strcasecmp(key, "URIs")) {
				strvec_split(&uris, value, " \t");
				last_field_uris = true;
			} else if (!strcasecmp(key, "Suites")) {
				strvec_split(&suites, value, " \t");
			} else if (!strcasecmp(key, "Enabled")) {
				enabled = deb822_enabled(value);
			}
		}
	}
	strvec_clear(&types);
	strvec_clear(&uris);
	strvec_clear(&suites);
	free(copy);
	return found;
}

enum status
appliance_host_mirror(const char *apt_dir, const char *release, char **out)
{
	const char *dir = apt_dir ? apt_dir : "/etc/apt";
	struct strvec files = STRVEC_INIT, parts = STRVEC_INIT;
	char *list = path_join(dir, "sources.list");
	char *partdir = path_join(dir, "sources.list.d");
	DIR *d;
	struct dirent *de;
	enum status rc = OK;

	*out = NULL;
	strvec_push(&files, list);
	d = opendir(partdir);
	if (d) {
		while ((de = readdir(d)))
			if (de->d_name[0] != '.' && (str_endswith(de->d_name, ".list") ||
						     str_endswith(de->d_name, ".sources")))
				strvec_push(&parts, de->d_name);
		closedir(d);
	}
	strvec_sort(&parts);
	for (size_t i = 0; i < parts.n; i++) {
		char *p = path_join(partdir, parts.v[i]);

		strvec_push(&files, p);
		free(p);
	}
	for (size_t i = 0; !*out && i < files.n; i++) {
		char *text = NULL;

		if (!path_exists(files.v[i]))
			continue;
		if (read_file(files.v[i], MAX_SOURCES, &text, NULL) != OK) {
			error_clear();
			continue;
		}
		*out = str_endswith(files.v[i], ".sources") ? mirror_from_sources(text, release)
							    : mirror_from_list(text, release);
		free(text);
	}
	if (!*out) {
		char *names = strvec_join(&files, "', '");

		rc = error(ERR_NOTFOUND,
			   "no apt source for '%s' in '%s': set 'mirror = URL' in the config file "
			   "or pass --mirror URL",
			   release, names);
		free(names);
	}
	strvec_clear(&files);
	strvec_clear(&parts);
	free(list);
	free(partdir);
	return rc;
}
