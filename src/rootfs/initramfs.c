/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The initramfs for a modular kernel: modules chosen, a cpio written, gzip. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/event.h"
#include "core/paths.h"
#include "core/sha.h"
#include "core/spawn.h"
#include "core/util.h"
#include "rootfs/initramfs.h"

#define BUSYBOX	      "/bin/busybox"
#define MAX_INDEX     (64u << 20) /* modules.dep and friends */
#define MAX_INIT      (1u << 20)
#define DEFAULT_INIT  "/usr/local/sbin/fswb-init"
#define STAGE	      "appliance"
#define BOOT_DIR      "lib/fswb-boot"
#define CONFIG_FILE   "etc/fswb-initramfs"
#define GZIP_LEVEL    "-6"
#define CPIO_MAX_NAME 4096

/* ---- the cpio writer ---- */

static void
cpio_write(struct cpio *c, const void *data, size_t len)
{
	const char *p = data;

	while (c->err == OK && len) {
		ssize_t n = write(c->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			c->err = error(ERR_IO, "cannot write '%s': %s", c->path,
				       n < 0 ? strerror(errno) : "short write");
			return;
		}
		p += n;
		len -= (size_t)n;
		c->off += (uint64_t)n;
	}
}

static void
cpio_pad(struct cpio *c)
{
	static const char zeros[4];

	if (c->off % 4)
		cpio_write(c, zeros, 4 - c->off % 4);
}

static void
cpio_header(struct cpio *c, const char *name, mode_t mode, int64_t mtime, uint64_t size,
	    unsigned rmajor, unsigned rminor)
{
	char hdr[111];
	size_t namelen = strlen(name) + 1;

	if (c->err != OK)
		return;
	if (namelen > CPIO_MAX_NAME) {
		c->err = error(ERR_LIMIT, "cpio: name '%.40s...' is too long", name);
		return;
	}
	if (size > 0xffffffffu) {
		c->err = error(ERR_LIMIT, "cpio: '%s' is larger than 4 GiB", name);
		return;
	}
	snprintf(hdr, sizeof(hdr), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		 ++c->ino, (unsigned)mode, 0u, 0u, S_ISDIR(mode) ? 2u : 1u,
		 (unsigned)(mtime > 0 ? (uint32_t)mtime : 0), (unsigned)size, 0u, 0u, rmajor,
		 rminor, (unsigned)namelen, 0u);
	cpio_write(c, hdr, 110);
	cpio_write(c, name, namelen);
	cpio_pad(c);
}

enum status
cpio_open(struct cpio *c, const char *path)
{
	memset(c, 0, sizeof(*c));
	c->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (c->fd < 0)
		return error(ERR_IO, "cannot create '%s': %s", path, strerror(errno));
	c->path = xstrdup(path);
	c->err = OK;
	return OK;
}

void
cpio_add_dir(struct cpio *c, const char *name, mode_t mode)
{
	cpio_header(c, name, S_IFDIR | (mode & 07777), 0, 0, 0, 0);
}

void
cpio_add_data(struct cpio *c, const char *name, mode_t mode, int64_t mtime, const void *data,
	      size_t len)
{
	cpio_header(c, name, S_IFREG | (mode & 07777), mtime, len, 0, 0);
	cpio_write(c, data, len);
	cpio_pad(c);
}

void
cpio_add_file(struct cpio *c, const char *name, const char *src)
{
	struct stat st;
	char buf[65536];
	uint64_t left;
	int fd;

	if (c->err != OK)
		return;
	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		c->err = error(ERR_IO, "cannot read '%s': %s", src,
			       fd < 0 ? strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return;
	}
	cpio_header(c, name, S_IFREG | (st.st_mode & 07777), st.st_mtime, (uint64_t)st.st_size, 0,
		    0);
	left = (uint64_t)st.st_size;
	while (c->err == OK && left) {
		ssize_t n = read(fd, buf, left < sizeof(buf) ? left : sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			c->err = error(ERR_IO, "cannot read '%s': %s", src,
				       n < 0 ? strerror(errno) : "it shrank while being read");
			break;
		}
		cpio_write(c, buf, (size_t)n);
		left -= (uint64_t)n;
	}
	close(fd);
	cpio_pad(c);
}

void
cpio_add_symlink(struct cpio *c, const char *name, const char *target)
{
	size_t len = strlen(target);

	cpio_header(c, name, S_IFLNK | 0777, 0, len, 0, 0);
	cpio_write(c, target, len);
	cpio_pad(c);
}

void
cpio_add_node(struct cpio *c, const char *name, mode_t mode, unsigned major, unsigned minor)
{
	if (!S_ISCHR(mode) && !S_ISBLK(mode))
		BUG("cpio_add_node of a mode that is not a device: %o", (unsigned)mode);
	cpio_header(c, name, mode, 0, 0, major, minor);
}

enum status
cpio_finish(struct cpio *c)
{
	enum status rc;

	cpio_header(c, "TRAILER!!!", 0, 0, 0, 0, 0);
	/* the kernel reads in 512-byte blocks, as cpio(1) writes */
	while (c->err == OK && c->off % 512) {
		static const char zeros[512];

		cpio_write(c, zeros, 512 - c->off % 512);
	}
	if (c->fd >= 0 && close(c->fd) < 0 && c->err == OK)
		c->err = error(ERR_IO, "cannot write '%s': %s", c->path, strerror(errno));
	c->fd = -1;
	rc = c->err;
	free(c->path);
	c->path = NULL;
	return rc;
}

/* ---- ELF ---- */

enum status
elf_is_static(const char *path, bool *is_static)
{
	unsigned char id[EI_NIDENT];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	enum status rc = OK;
	bool interp = false;

	if (fd < 0)
		return error(ERR_NOTFOUND, "cannot open '%s': %s", path, strerror(errno));
	if (pread(fd, id, sizeof(id), 0) != (ssize_t)sizeof(id) || memcmp(id, ELFMAG, SELFMAG)) {
		close(fd);
		return error(ERR_INVALID, "'%s' is not an ELF executable", path);
	}
	if (id[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;

		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
			rc = ERR_INVALID;
		for (unsigned i = 0; rc == OK && i < eh.e_phnum; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph),
				  (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
			    (ssize_t)sizeof(ph)) {
				rc = ERR_INVALID;
				break;
			}
			if (ph.p_type == PT_INTERP)
				interp = true;
		}
	} else if (id[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr eh;

		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
			rc = ERR_INVALID;
		for (unsigned i = 0; rc == OK && i < eh.e_phnum; i++) {
			Elf32_Phdr ph;

			if (pread(fd, &ph, sizeof(ph),
				  (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
			    (ssize_t)sizeof(ph)) {
				rc = ERR_INVALID;
				break;
			}
			if (ph.p_type == PT_INTERP)
				interp = true;
		}
	} else {
		rc = ERR_INVALID;
	}
	close(fd);
	if (rc != OK)
		return error(ERR_INVALID, "'%s' is not a readable ELF executable", path);
	*is_static = !interp;
	return OK;
}

/* ---- modules ---- */

struct mod {
	char *path; /* relative to the modules directory */
	char *name;
	struct strvec deps;
	bool chosen, visiting, in_boot;
};

struct modset {
	struct mod *v;
	size_t n, alloc;
	size_t *by_name;	 /* indexes into v, sorted by name */
	struct strvec builtin;	 /* names */
	struct strvec alias_key; /* modules.alias, exact aliases only */
	struct strvec alias_val;
	struct strvec softdep_mod; /* "ext4" */
	struct strvec softdep_pre; /* "crc16 crc32c" */
	bool have_builtin;
};

char *
initramfs_module_name(const char *path)
{
	const char *base = strrchr(path, '/');
	char *name, *dot;

	base = base ? base + 1 : path;
	name = xstrdup(base);
	dot = strstr(name, ".ko");
	if (dot)
		*dot = '\0';
	for (char *p = name; *p; p++)
		if (*p == '-')
			*p = '_';
	return name;
}

static void
modset_release(struct modset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].name);
		strvec_clear(&s->v[i].deps);
	}
	free(s->v);
	free(s->by_name);
	strvec_clear(&s->builtin);
	strvec_clear(&s->alias_key);
	strvec_clear(&s->alias_val);
	strvec_clear(&s->softdep_mod);
	strvec_clear(&s->softdep_pre);
	memset(s, 0, sizeof(*s));
}

static int
cmp_mod_path(const void *a, const void *b)
{
	return strcmp(((const struct mod *)a)->path, ((const struct mod *)b)->path);
}

static const struct modset *sort_set;

static int
cmp_index_name(const void *a, const void *b)
{
	return strcmp(sort_set->v[*(const size_t *)a].name, sort_set->v[*(const size_t *)b].name);
}

static struct mod *
mod_by_path(struct modset *s, const char *path)
{
	struct mod key = { .path = (char *)path };

	return bsearch(&key, s->v, s->n, sizeof(*s->v), cmp_mod_path);
}

static struct mod *
mod_by_name(struct modset *s, const char *name)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(s->v[s->by_name[mid]].name, name);

		if (!c)
			return &s->v[s->by_name[mid]];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Read a file of the modules directory; *text NULL when it is not there. */
static enum status
read_index(const char *dir, const char *name, char **text)
{
	char *path = path_join(dir, name);
	enum status rc;

	*text = NULL;
	if (!path_exists(path)) {
		free(path);
		return OK;
	}
	rc = read_file(path, MAX_INDEX, text, NULL);
	free(path);
	return rc;
}

static enum status
parse_dep(struct modset *s, char *text, const char *dir)
{
	char *save = NULL;
	unsigned lineno = 0;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		struct mod *m;

		lineno++;
		if (!*str_trim(line) || line[0] == '#')
			continue;
		if (!colon)
			return error(ERR_PARSE,
				     "'%s/modules.dep' line %u: no ':'; run depmod for this kernel",
				     dir, lineno);
		*colon = '\0';
		ALLOC_GROW(s->v, s->n + 1, s->alloc);
		m = &s->v[s->n++];
		memset(m, 0, sizeof(*m));
		m->path = xstrdup(str_trim(line));
		m->name = initramfs_module_name(m->path);
		strvec_init(&m->deps);
		strvec_split(&m->deps, colon + 1, " \t");
	}
	qsort(s->v, s->n, sizeof(*s->v), cmp_mod_path);
	s->by_name = xcalloc(s->n ? s->n : 1, sizeof(*s->by_name));
	for (size_t i = 0; i < s->n; i++)
		s->by_name[i] = i;
	sort_set = s;
	qsort(s->by_name, s->n, sizeof(*s->by_name), cmp_index_name);
	sort_set = NULL;
	return OK;
}

static void
parse_builtin(struct modset *s, const char *text)
{
	struct strvec lines = STRVEC_INIT;

	strvec_split(&lines, text, "\n");
	for (size_t i = 0; i < lines.n; i++) {
		char *name = initramfs_module_name(str_trim(lines.v[i]));

		if (*name)
			strvec_push(&s->builtin, name);
		free(name);
	}
	strvec_clear(&lines);
}

static void
parse_alias(struct modset *s, const char *text)
{
	struct strvec lines = STRVEC_INIT;

	strvec_split(&lines, text, "\n");
	for (size_t i = 0; i < lines.n; i++) {
		struct strvec w = STRVEC_INIT;

		strvec_split(&w, lines.v[i], " \t");
		if (w.n == 3 && !strcmp(w.v[0], "alias") && !strpbrk(w.v[1], "*?[:")) {
			strvec_push(&s->alias_key, w.v[1]);
			strvec_push(&s->alias_val, w.v[2]);
		}
		strvec_clear(&w);
	}
	strvec_clear(&lines);
}

static void
parse_softdep(struct modset *s, const char *text)
{
	struct strvec lines = STRVEC_INIT;

	strvec_split(&lines, text, "\n");
	for (size_t i = 0; i < lines.n; i++) {
		struct strvec w = STRVEC_INIT;
		struct strbuf pre = STRBUF_INIT;
		bool post = false;

		strvec_split(&w, lines.v[i], " \t");
		if (w.n >= 3 && !strcmp(w.v[0], "softdep")) {
			for (size_t j = 2; j < w.n; j++) {
				if (!strcmp(w.v[j], "pre:"))
					post = false;
				else if (!strcmp(w.v[j], "post:"))
					post = true;
				else if (!post)
					strbuf_addf(&pre, "%s%s", pre.len ? " " : "", w.v[j]);
			}
			strvec_push(&s->softdep_mod, w.v[1]);
			strvec_push(&s->softdep_pre, pre.buf);
		}
		strbuf_release(&pre);
		strvec_clear(&w);
	}
	strvec_clear(&lines);
}

/* A name, a softdep's or an alias: the module it means, or NULL. */
static struct mod *
resolve_name(struct modset *s, const char *word)
{
	char *name = initramfs_module_name(word);
	struct mod *m = mod_by_name(s, name);

	for (size_t i = 0; !m && i < s->alias_key.n; i++)
		if (!strcmp(s->alias_key.v[i], word))
			m = mod_by_name(s, s->alias_val.v[i]);
	free(name);
	return m;
}

static void
choose(struct modset *s, struct mod *m)
{
	if (m->chosen)
		return;
	m->chosen = true;
	for (size_t i = 0; i < m->deps.n; i++) {
		struct mod *d = mod_by_path(s, m->deps.v[i]);

		if (d)
			choose(s, d);
	}
}

/* Post-order: dependencies (and soft pre-dependencies) before m. */
static void
add_boot(struct modset *s, struct mod *m, struct strvec *order)
{
	if (m->in_boot || m->visiting)
		return;
	m->visiting = true;
	for (size_t i = 0; i < s->softdep_mod.n; i++) {
		struct strvec pre = STRVEC_INIT;

		if (strcmp(s->softdep_mod.v[i], m->name))
			continue;
		strvec_split(&pre, s->softdep_pre.v[i], " ");
		for (size_t j = 0; j < pre.n; j++) {
			struct mod *d = resolve_name(s, pre.v[j]);

			if (d)
				add_boot(s, d, order);
		}
		strvec_clear(&pre);
	}
	for (size_t i = 0; i < m->deps.n; i++) {
		struct mod *d = mod_by_path(s, m->deps.v[i]);

		if (d)
			add_boot(s, d, order);
	}
	m->visiting = false;
	m->in_boot = true;
	choose(s, m);
	strvec_push(order, m->path);
}

static bool
chosen_path(const char *path)
{
	static const char *const prefixes[] = {
		"kernel/fs/",		"kernel/drivers/block/",
		"kernel/drivers/md/",	"kernel/drivers/virtio/",
		"kernel/drivers/char/", "kernel/lib/",
		"kernel/crypto/",	"kernel/mm/",
	};

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (str_startswith(path, prefixes[i]))
			return true;
	if (str_startswith(path, "kernel/arch/") && strstr(path, "/crypto/"))
		return true;
	if (str_startswith(path, "kernel/drivers/scsi/scsi_debug.ko"))
		return true;
	/* a GCE guest's disks (virtio-scsi, NVMe) and network (virtio-net) */
	static const char *const gce[] = {
		"kernel/drivers/scsi/virtio_scsi.ko", "kernel/drivers/scsi/sd_mod.ko",
		"kernel/drivers/scsi/scsi_mod.ko",    "kernel/drivers/scsi/scsi_common.ko",
		"kernel/drivers/nvme/host/nvme.ko",   "kernel/drivers/nvme/host/nvme-core.ko",
		"kernel/drivers/net/virtio_net.ko",   "kernel/drivers/net/net_failover.ko",
		"kernel/net/core/failover.ko",
	};
	for (size_t i = 0; i < ARRAY_SIZE(gce); i++)
		if (str_startswith(path, gce[i]))
			return true;
	return false;
}

/* optional: loaded when the kernel has them as modules, no error when it has not (GCE's disks) */
static const struct {
	const char *name, *config;
	bool optional;
} boot_modules[] = {
	{ "virtio_pci", "CONFIG_VIRTIO_PCI", false },
	{ "virtio_blk", "CONFIG_VIRTIO_BLK", false },
	{ "virtio_console", "CONFIG_VIRTIO_CONSOLE", false },
	{ "ext4", "CONFIG_EXT4_FS", false },
	{ "virtio_scsi", "CONFIG_SCSI_VIRTIO", true },
	{ "sd_mod", "CONFIG_BLK_DEV_SD", true },
	{ "nvme", "CONFIG_BLK_DEV_NVME", true },
};

void
initramfs_plan_release(struct initramfs_plan *p)
{
	free(p->version);
	free(p->modules_dir);
	strvec_clear(&p->modules);
	strvec_clear(&p->boot);
	strvec_clear(&p->builtin);
	memset(p, 0, sizeof(*p));
}

enum status
initramfs_plan(const char *kernel_version, const char *modules_dir, struct initramfs_plan *p)
{
	struct modset s = { 0 };
	char *dep = NULL, *builtin = NULL, *alias = NULL, *softdep = NULL;
	struct sha sha;
	enum status rc;

	memset(p, 0, sizeof(*p));
	strvec_init(&p->modules);
	strvec_init(&p->boot);
	strvec_init(&p->builtin);
	strvec_init(&s.builtin);
	strvec_init(&s.alias_key);
	strvec_init(&s.alias_val);
	strvec_init(&s.softdep_mod);
	strvec_init(&s.softdep_pre);
	if (!kernel_version || !*kernel_version || strchr(kernel_version, '/'))
		return error(ERR_INVALID, "'%s' is not a kernel version",
			     kernel_version ? kernel_version : "");
	p->version = xstrdup(kernel_version);
	p->modules_dir =
		modules_dir ? xstrdup(modules_dir) : xasprintf("/lib/modules/%s", kernel_version);
	if (!path_is_dir(p->modules_dir))
		return OK; /* no modules at all: everything is built in */

	rc = read_index(p->modules_dir, "modules.dep", &dep);
	if (rc == OK)
		rc = read_index(p->modules_dir, "modules.builtin", &builtin);
	if (rc == OK)
		rc = read_index(p->modules_dir, "modules.alias", &alias);
	if (rc == OK)
		rc = read_index(p->modules_dir, "modules.softdep", &softdep);
	if (rc != OK)
		goto out;
	if (!dep) {
		/* modules, but no index: depmod never ran */
		char *ko = path_join(p->modules_dir, "kernel");

		if (path_is_dir(ko))
			rc = error(ERR_NOTFOUND,
				   "'%s' has modules but no modules.dep: run 'depmod -b DIR %s' "
				   "(DIR holding lib/modules/%s)",
				   p->modules_dir, kernel_version, kernel_version);
		free(ko);
		goto out;
	}
	sha_init(&sha);
	sha_adds(&sha, "fswb-initramfs");
	sha_adds(&sha, kernel_version);
	sha_adds(&sha, dep);
	sha_adds(&sha, builtin ? builtin : "");
	sha_adds(&sha, softdep ? softdep : "");
	rc = parse_dep(&s, dep, p->modules_dir);
	if (rc != OK) {
		sha_hex(&sha, p->digest);
		goto out;
	}
	if (builtin) {
		s.have_builtin = true;
		parse_builtin(&s, builtin);
	}
	if (alias)
		parse_alias(&s, alias);
	if (softdep)
		parse_softdep(&s, softdep);

	for (size_t i = 0; i < ARRAY_SIZE(boot_modules); i++) {
		const char *name = boot_modules[i].name;
		struct mod *m = mod_by_name(&s, name);

		if (m) {
			add_boot(&s, m, &p->boot);
		} else if (boot_modules[i].optional) {
			if (strvec_contains(&s.builtin, name))
				strvec_push(&p->builtin, name);
		} else if (!s.have_builtin || strvec_contains(&s.builtin, name)) {
			strvec_push(&p->builtin, name);
		} else {
			sha_hex(&sha, p->digest);
			rc = error(ERR_NOTFOUND,
				   "kernel '%s' has no %s, neither built in nor as a module (in "
				   "'%s'): build it with %s=y or =m",
				   kernel_version, name, p->modules_dir, boot_modules[i].config);
			goto out;
		}
	}
	for (size_t i = 0; i < s.n; i++)
		if (chosen_path(s.v[i].path))
			choose(&s, &s.v[i]);
	for (size_t i = 0; i < s.n; i++) {
		char *full;
		struct stat st;

		if (!s.v[i].chosen)
			continue;
		full = path_join(p->modules_dir, s.v[i].path);
		if (stat(full, &st) < 0) {
			rc = error(
				ERR_NOTFOUND,
				"module '%s' is in modules.dep but not there: run depmod for '%s' "
				"again or reinstall its modules",
				full, kernel_version);
			free(full);
			sha_hex(&sha, p->digest);
			goto out;
		}
		free(full);
		strvec_push(&p->modules, s.v[i].path);
		sha_adds(&sha, s.v[i].path);
		sha_add(&sha, &st.st_size, sizeof(st.st_size));
		sha_add(&sha, &st.st_mtim, sizeof(st.st_mtim));
	}
	for (size_t i = 0; i < p->boot.n; i++)
		sha_adds(&sha, p->boot.v[i]);
	sha_hex(&sha, p->digest);
	p->needed = p->modules.n > 0 || p->boot.n > 0;
out:
	free(dep);
	free(builtin);
	free(alias);
	free(softdep);
	modset_release(&s);
	return rc;
}

/* ---- building ---- */

char *
initramfs_init_script(void)
{
	char *datadir = fswb_datadir();
	char *a = path_join(datadir, "initramfs-init");
	char *b = path_join(datadir, "src/rootfs/initramfs-init");

	free(datadir);
	if (path_exists(a)) {
		free(b);
		return a;
	}
	free(a);
	return b;
}

/* Run argv with stdin from in_fd (or /dev/null) and stdout to out_fd. */
static enum status
run_to_fd(struct loop *loop, const char *const *argv, int in_fd, int out_fd)
{
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child *child = NULL;
	enum status rc;

	o.argv = argv;
	o.in = in_fd >= 0 ? SPAWN_FD : SPAWN_NULL;
	o.in_fd = in_fd;
	o.out = SPAWN_FD;
	o.out_fd = out_fd;
	o.err = SPAWN_INHERIT;
	o.env = (const char *const[]){ "LC_ALL=C", NULL };
	rc = spawn_start(loop, &o, &child);
	if (rc != OK)
		return rc;
	rc = child_wait(child, -1);
	if (rc == OK)
		rc = child_check(child);
	child_free(child);
	return rc;
}

struct build {
	struct loop *loop;
	struct event_bus *bus;
	struct initramfs_plan *plan;
	const char *init_script;
	const char *dir;
	struct cpio cpio;
	struct strvec dirs; /* directories already in the archive */
	struct strvec tmpfiles;
};

static void
progress(struct build *b, const char *detail, double fraction)
{
	if (b->bus)
		emit_stage(b->bus, EV_STAGE_PROGRESS, STAGE, detail, fraction);
}

/* Add name's parent directories (not name itself) that are not there yet. */
static void
add_parents(struct build *b, const char *name)
{
	char *copy = xstrdup(name);

	for (char *p = strchr(copy, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (!strvec_contains(&b->dirs, copy)) {
			cpio_add_dir(&b->cpio, copy, 0755);
			strvec_push(&b->dirs, copy);
		}
		*p = '/';
	}
	free(copy);
}

static const char *
decompressor(const char *path)
{
	if (str_endswith(path, ".ko.xz"))
		return "xz";
	if (str_endswith(path, ".ko.zst"))
		return "zstd";
	if (str_endswith(path, ".ko.gz"))
		return "gzip";
	return NULL;
}

/* The boot module at rel, as a plain .ko in the archive; its path in the guest. */
static enum status
add_boot_module(struct build *b, const char *rel, struct strbuf *list)
{
	const char *prog = decompressor(rel);
	char *src = path_join(b->plan->modules_dir, rel);
	enum status rc = OK;

	if (list->len)
		strbuf_addch(list, ' ');
	if (!prog) {
		strbuf_addf(list, "/lib/modules/%s/%s", b->plan->version, rel);
	} else {
		char *name = initramfs_module_name(rel);
		char *tmp = xasprintf("%s/boot-%s.ko.tmp.%ld", b->dir, name, (long)getpid());
		char *arcname = xasprintf("%s/%s.ko", BOOT_DIR, name);
		int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		strvec_push(&b->tmpfiles, tmp);
		if (fd < 0) {
			rc = error(ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
		} else {
			rc = run_to_fd(b->loop, (const char *const[]){ prog, "-dc", src, NULL }, -1,
				       fd);
			close(fd);
			if (rc != OK)
				rc = error_prefix(rc, "uncompressing '%s'", src);
		}
		if (rc == OK) {
			add_parents(b, arcname);
			cpio_add_file(&b->cpio, arcname, tmp);
			strbuf_addf(list, "/%s", arcname);
		}
		free(name);
		free(tmp);
		free(arcname);
	}
	free(src);
	return rc;
}

static enum status
write_archive(struct build *b, const char *cpio_path)
{
	struct initramfs_plan *p = b->plan;
	struct strbuf config = STRBUF_INIT, boot = STRBUF_INIT;
	char *moddir = xasprintf("lib/modules/%s", p->version);
	enum status rc;
	DIR *d;
	struct dirent *de;
	struct strvec index = STRVEC_INIT;

	rc = cpio_open(&b->cpio, cpio_path);
	if (rc != OK) {
		free(moddir);
		return rc;
	}
	strvec_push(&b->tmpfiles, cpio_path);
	for (const char *const *dir =
		     (const char *const[]){ "bin", "dev", "etc", "lib", "proc", "sys", "newroot",
					    "sbin", "usr", "usr/bin", "usr/sbin", "tmp", "run",
					    NULL };
	     *dir; dir++) {
		cpio_add_dir(&b->cpio, *dir, 0755);
		strvec_push(&b->dirs, *dir);
	}
	cpio_add_node(&b->cpio, "dev/console", S_IFCHR | 0600, 5, 1);
	cpio_add_node(&b->cpio, "dev/null", S_IFCHR | 0666, 1, 3);
	cpio_add_file(&b->cpio, "bin/busybox", BUSYBOX);
	cpio_add_symlink(&b->cpio, "bin/sh", "busybox");
	cpio_add_file(&b->cpio, "init", b->init_script);

	/* the modules, as the kernel ships them, and every index */
	add_parents(b, moddir);
	cpio_add_dir(&b->cpio, moddir, 0755);
	strvec_push(&b->dirs, moddir);
	d = opendir(p->modules_dir);
	if (!d) {
		rc = error(ERR_IO, "cannot read '%s': %s", p->modules_dir, strerror(errno));
		goto out;
	}
	while ((de = readdir(d)))
		if (str_startswith(de->d_name, "modules."))
			strvec_push(&index, de->d_name);
	closedir(d);
	for (size_t i = 0; i < index.n; i++) {
		char *src = path_join(p->modules_dir, index.v[i]);
		char *name = path_join(moddir, index.v[i]);
		struct stat st;

		if (stat(src, &st) == 0 && S_ISREG(st.st_mode))
			cpio_add_file(&b->cpio, name, src);
		free(src);
		free(name);
	}
	for (size_t i = 0; i < p->modules.n; i++) {
		char *src = path_join(p->modules_dir, p->modules.v[i]);
		char *name = path_join(moddir, p->modules.v[i]);

		add_parents(b, name);
		cpio_add_file(&b->cpio, name, src);
		free(src);
		free(name);
		if (i % 200 == 0) {
			char detail[96];

			snprintf(detail, sizeof(detail), "initramfs: %zu of %zu modules", i,
				 p->modules.n);
			progress(b, detail, 0.8 * (double)i / (double)p->modules.n);
		}
	}
	for (size_t i = 0; rc == OK && i < p->boot.n; i++)
		rc = add_boot_module(b, p->boot.v[i], &boot);
	if (rc != OK)
		goto out;
	strbuf_addf(&config,
		    "# written by fswb for the initramfs' /init\n"
		    "VERSION='%s'\n"
		    "BOOT_MODULES='%s'\n"
		    "DEFAULT_INIT='%s'\n",
		    p->version, boot.buf, DEFAULT_INIT);
	cpio_add_data(&b->cpio, CONFIG_FILE, 0644, 0, config.buf, config.len);
out : {
	enum status frc = cpio_finish(&b->cpio);

	if (rc == OK)
		rc = frc;
}
	strvec_clear(&index);
	strbuf_release(&config);
	strbuf_release(&boot);
	free(moddir);
	return rc;
}

static enum status
compress(struct build *b, const char *cpio_path, const char *img_tmp)
{
	int in = open(cpio_path, O_RDONLY | O_CLOEXEC);
	int out;
	enum status rc;

	if (in < 0)
		return error(ERR_IO, "cannot read '%s': %s", cpio_path, strerror(errno));
	out = open(img_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return error(ERR_IO, "cannot create '%s': %s", img_tmp, strerror(errno));
	}
	strvec_push(&b->tmpfiles, img_tmp);
	progress(b, "initramfs: compressing", 0.85);
	rc = run_to_fd(b->loop, (const char *const[]){ "gzip", "-n", GZIP_LEVEL, "-c", NULL }, in,
		       out);
	close(in);
	if (fsync(out) < 0 && rc == OK)
		rc = error(ERR_IO, "cannot write '%s': %s", img_tmp, strerror(errno));
	close(out);
	return rc;
}

static void
stage_end(struct event_bus *bus, enum status rc)
{
	struct event ev = { .type = EV_STAGE_END };

	if (!bus)
		return;
	ev.u.stage.stage = STAGE;
	ev.u.stage.detail = "initramfs";
	ev.u.stage.fraction = rc == OK ? 1.0 : -1;
	ev.u.stage.code = rc;
	ev.u.stage.message = rc == OK ? NULL : error_msg();
	event_emit(bus, &ev);
}

enum status
initramfs_ensure(struct loop *loop, struct event_bus *bus, const char *kernel_version,
		 const char *modules_dir, char **out_path)
{
	struct initramfs_plan plan;
	struct build b = { 0 };
	char *script = NULL, *text = NULL, *dir = NULL, *sub = NULL, *img = NULL, *img_tmp = NULL,
	     *cpio_path = NULL;
	size_t text_len = 0;
	struct stat st;
	bool is_static = false, began = false;
	char digest[65];
	struct sha sha;
	enum status rc;

	*out_path = NULL;
	rc = initramfs_plan(kernel_version, modules_dir, &plan);
	if (rc != OK || !plan.needed)
		goto out;

	script = initramfs_init_script();
	rc = read_file(script, MAX_INIT, &text, &text_len);
	if (rc != OK) {
		rc = error(ERR_NOTFOUND,
			   "the initramfs' init script '%s' is missing: reinstall fswb", script);
		goto out;
	}
	if (stat(BUSYBOX, &st) < 0) {
		rc = error(ERR_NOTFOUND,
			   "'%s' is missing; the initramfs for kernel '%s' needs a static busybox: "
			   "install busybox-static",
			   BUSYBOX, kernel_version);
		goto out;
	}
	rc = elf_is_static(BUSYBOX, &is_static);
	if (rc == OK && !is_static)
		rc = error(
			ERR_INVALID,
			"'%s' is not statically linked; the initramfs needs a static one: install "
			"busybox-static",
			BUSYBOX);
	if (rc != OK)
		goto out;

	sha_init(&sha);
	sha_adds(&sha, "fswb-initramfs-image");
	{
		char fmt[16];

		snprintf(fmt, sizeof(fmt), "%d", INITRAMFS_FORMAT);
		sha_adds(&sha, fmt);
	}
	sha_adds(&sha, plan.digest);
	sha_add(&sha, text, text_len);
	sha_add(&sha, &st.st_size, sizeof(st.st_size));
	sha_add(&sha, &st.st_mtim, sizeof(st.st_mtim));
	sha_hex(&sha, digest);
	digest[16] = '\0';
	sub = xasprintf("initramfs/%s-%s", kernel_version, digest);
	rc = fswb_dir_make(DIR_CACHE, sub, &dir);
	if (rc != OK)
		goto out;
	img = path_join(dir, "initramfs.img");
	if (path_exists(img)) {
		*out_path = img;
		img = NULL;
		goto out;
	}

	if (bus)
		emit_stage(bus, EV_STAGE_BEGIN, STAGE, "initramfs", 0);
	began = true;
	b.loop = loop;
	b.bus = bus;
	b.plan = &plan;
	b.init_script = script;
	b.dir = dir;
	strvec_init(&b.dirs);
	strvec_init(&b.tmpfiles);
	cpio_path = xasprintf("%s/initramfs.cpio.tmp.%ld", dir, (long)getpid());
	img_tmp = xasprintf("%s/initramfs.img.tmp.%ld", dir, (long)getpid());
	rc = write_archive(&b, cpio_path);
	if (rc == OK)
		rc = compress(&b, cpio_path, img_tmp);
	if (rc == OK && rename(img_tmp, img) < 0)
		rc = error(ERR_IO, "cannot rename '%s' to '%s': %s", img_tmp, img, strerror(errno));
	for (size_t i = 0; i < b.tmpfiles.n; i++)
		unlink(b.tmpfiles.v[i]);
	strvec_clear(&b.dirs);
	strvec_clear(&b.tmpfiles);
	if (rc == OK) {
		*out_path = img;
		img = NULL;
	} else {
		rc = error_prefix(rc, "initramfs for kernel '%s'", kernel_version);
	}
out:
	if (began)
		stage_end(bus, rc);
	initramfs_plan_release(&plan);
	free(script);
	free(text);
	free(dir);
	free(sub);
	free(img);
	free(img_tmp);
	free(cpio_path);
	return rc;
}
