/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Run directories: see rundir.h.
 */
#include "core/rundir.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/paths.h"

char *
rundir_root(void)
{
	char *data = fswb_dir(DIR_DATA), *runs = path_join(data, "runs");

	free(data);
	return runs;
}

static bool
is_run_dir(const char *dir)
{
	static const char *const marks[] = { "plan.json", "run.json", "events.jsonl" };
	struct stat st;
	bool found = false;

	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return false;
	for (size_t i = 0; !found && i < ARRAY_SIZE(marks); i++) {
		char *p = path_join(dir, marks[i]);

		found = path_exists(p);
		free(p);
	}
	return found;
}

void
rundir_list(const char *root, struct strvec *ids)
{
	DIR *d = opendir(root);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char *dir;

		if (de->d_name[0] == '.')
			continue;
		dir = path_join(root, de->d_name);
		if (is_run_dir(dir))
			strvec_push(ids, de->d_name);
		free(dir);
	}
	if (d)
		closedir(d);
	strvec_sort(ids);
}
