/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Kernel images: headers, decompression, the embedded config. See image.h. */
#include "kbuild/image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/paths.h"
#include "core/spawn.h"
#include "core/util.h"
#include "kbuild/kbuild.h"

#define MAX_KERNEL (512u << 20) /* a decompressed kernel, read whole */

static uint16_t
le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t
le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void
kimage_info_release(struct kimage_info *info)
{
	free(info->arch);
	free(info->version);
	free(info->banner);
	free(info->compression);
	memset(info, 0, sizeof(*info));
}

struct codec {
	const char *name;
	const unsigned char magic[6];
	size_t len;
	const char *argv[5];
	const char *package; /* Debian's */
};

static const struct codec codecs[] = {
	{ "gzip", { 0x1f, 0x8b }, 2, { "gzip", "-dc", NULL }, "gzip" },
	{ "bzip2", { 'B', 'Z', 'h' }, 3, { "bzip2", "-dc", NULL }, "bzip2" },
	{ "xz", { 0xfd, '7', 'z', 'X', 'Z', 0 }, 6, { "xz", "-dc", NULL }, "xz-utils" },
	{ "lzma", { 0x5d, 0, 0 }, 3, { "xz", "--format=lzma", "-dc", NULL }, "xz-utils" },
	{ "lzo", { 0x89, 'L', 'Z', 'O' }, 4, { "lzop", "-dc", NULL }, "lzop" },
	{ "lz4", { 0x02, 0x21, 0x4c, 0x18 }, 4, { "lz4", "-dc", NULL }, "lz4" },
	{ "zstd", { 0x28, 0xb5, 0x2f, 0xfd }, 4, { "zstd", "-dc", NULL }, "zstd" },
};

static const struct codec *
codec_of(const unsigned char *data, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(codecs); i++)
		if (len >= codecs[i].len && !memcmp(data, codecs[i].magic, codecs[i].len))
			return &codecs[i];
	return NULL;
}

const char *
kimage_compression(const unsigned char *data, size_t len)
{
	const struct codec *c = codec_of(data, len);

	return c ? c->name : NULL;
}

static enum status
read_at(int fd, const char *path, uint64_t off, void *buf, size_t len, size_t *got)
{
	ssize_t n;

	do {
		n = pread(fd, buf, len, (off_t)off);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return error(ERR_IO, "cannot read '%s': %s", path, strerror(errno));
	*got = (size_t)n;
	return OK;
}

/* The printable prefix of s (at most max bytes), or NULL when it is empty. */
static char *
printable(const unsigned char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n] >= 0x20 && s[n] < 0x7f)
		n++;
	return n ? xstrndup((const char *)s, n) : NULL;
}

static const char *
elf_arch(unsigned machine, bool is64)
{
	switch (machine) {
	case 62:
		return "x86_64";
	case 3:
		return "i386";
	case 183:
		return "arm64";
	case 40:
		return "arm";
	case 243:
		return is64 ? "riscv64" : "riscv32";
	case 21:
		return "ppc64";
	case 22:
		return "s390";
	default:
		return NULL;
	}
}

/* "Linux version X ..." in data; X into *out. */
static bool
find_banner(const unsigned char *data, size_t len, char **out)
{
	static const char key[] = "Linux version ";
	const unsigned char *p = data, *end = data + len;

	while (p < end) {
		const unsigned char *hit = memmem(p, (size_t)(end - p), key, sizeof(key) - 1);
		const unsigned char *v;
		size_t n = 0;

		if (!hit)
			return false;
		v = hit + sizeof(key) - 1;
		while (v + n < end && n < 200 && v[n] > 0x20 && v[n] < 0x7f)
			n++;
		if (n && v[0] >= '0' && v[0] <= '9') {
			*out = xstrndup((const char *)v, n);
			return true;
		}
		p = hit + 1;
	}
	return false;
}

enum status
kimage_probe(const char *path, struct kimage_info *out)
{
	unsigned char h[0x400];
	size_t got = 0;
	struct stat st;
	enum status rc;
	int fd;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error(errno == ENOENT ? ERR_NOTFOUND : ERR_IO, "cannot open '%s': %s", path,
			     strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return error(ERR_INVALID,
			     "'%s' is not a regular file; give a kernel image (bzImage)", path);
	}
	memset(h, 0, sizeof(h));
	rc = read_at(fd, path, 0, h, sizeof(h), &got);
	if (rc != OK)
		goto out;
	if (got >= 0x250 && !memcmp(h + 0x202, "HdrS", 4) && le16(h + 0x1fe) == 0xaa55) {
		unsigned version = le16(h + 0x206);
		unsigned setup = h[0x1f1] ? h[0x1f1] : 4;
		unsigned char buf[512], magic[8];

		out->format = KIMAGE_BZIMAGE;
		out->arch = xstrdup(version >= 0x20c && (le16(h + 0x236) & 1) ? "x86_64" : "i386");
		if (version >= 0x200 && le16(h + 0x20e)) {
			size_t n = 0;

			if (read_at(fd, path, (uint64_t)le16(h + 0x20e) + 0x200, buf,
				    sizeof(buf) - 1, &n) == OK &&
			    n) {
				char *v;

				buf[n] = 0;
				out->banner = printable(buf, n);
				if (out->banner && (v = xstrdup(out->banner))) {
					char *sp = strchr(v, ' ');

					if (sp)
						*sp = '\0';
					out->version = v;
				}
			}
		}
		if (version >= 0x208) {
			size_t n = 0;

			out->payload_offset = (uint64_t)(setup + 1) * 512 + le32(h + 0x248);
			out->payload_length = le32(h + 0x24c);
			if (read_at(fd, path, out->payload_offset, magic, sizeof(magic), &n) ==
			    OK) {
				const char *c = kimage_compression(magic, n);

				out->compression = c ? xstrdup(c) : NULL;
			}
		}
		goto out;
	}
	if (got >= 0x40 && le32(h + 0x38) == 0x644d5241) {
		out->format = KIMAGE_ARM64;
		out->arch = xstrdup("arm64");
		goto out;
	}
	if (got >= 0x40 && !memcmp(h, "\177ELF", 4)) {
		bool is64 = h[4] == 2;
		const char *a = elf_arch(le16(h + 18), is64);
		char *text = NULL;
		size_t len;

		out->format = KIMAGE_ELF;
		out->arch = a ? xstrdup(a) : NULL;
		if (read_file(path, MAX_KERNEL, &text, &len) == OK)
			find_banner((unsigned char *)text, len, &out->version);
		free(text);
		error_clear();
		goto out;
	}
	if (got >= 8 && codec_of(h, got)) {
		out->format = KIMAGE_COMPRESSED;
		out->compression = xstrdup(codec_of(h, got)->name);
		out->payload_offset = 0;
		out->payload_length = (uint64_t)st.st_size;
		goto out;
	}
	rc = error(ERR_INVALID,
		   "'%s' is not a kernel image: no bzImage header ('HdrS' at 0x202), no arm64 "
		   "Image header, not an ELF vmlinux; give arch/x86/boot/bzImage of a built "
		   "tree, or a /boot/vmlinuz-VERSION",
		   path);
out:
	close(fd);
	if (rc != OK)
		kimage_info_release(out);
	return rc;
}

/* Copy len bytes at off of src into a new file dst. */
static enum status
copy_range(const char *src, uint64_t off, uint64_t len, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), out;
	char *buf;
	enum status rc = OK;

	if (in < 0)
		return error(ERR_IO, "cannot open '%s': %s", src, strerror(errno));
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0) {
		close(in);
		return error(ERR_IO, "cannot create '%s': %s", dst, strerror(errno));
	}
	buf = xmalloc(1 << 20);
	while (len && rc == OK) {
		size_t want = len > (1u << 20) ? (1u << 20) : (size_t)len, n = 0;

		rc = read_at(in, src, off, buf, want, &n);
		if (rc != OK)
			break;
		if (!n) {
			rc = error(ERR_INVALID,
				   "'%s' is truncated: its header says the kernel is "
				   "longer than the file",
				   src);
			break;
		}
		if (write(out, buf, n) != (ssize_t)n) {
			rc = error(ERR_IO, "cannot write '%s': %s", dst, strerror(errno));
			break;
		}
		off += n;
		len -= n;
	}
	free(buf);
	close(in);
	if (close(out) < 0 && rc == OK)
		rc = error(ERR_IO, "cannot write '%s': %s", dst, strerror(errno));
	return rc;
}

/* Run argv with stdin from in_path and stdout to out_path. */
static enum status
run_filter(struct loop *loop, const char *const *argv, const char *in_path, const char *out_path,
	   struct child_exit *ex)
{
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child *child = NULL;
	int in = open(in_path, O_RDONLY | O_CLOEXEC), out;
	enum status rc;

	if (in < 0)
		return error(ERR_IO, "cannot open '%s': %s", in_path, strerror(errno));
	out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0) {
		close(in);
		return error(ERR_IO, "cannot create '%s': %s", out_path, strerror(errno));
	}
	o.argv = argv;
	o.in = SPAWN_FD;
	o.in_fd = in;
	o.out = SPAWN_FD;
	o.out_fd = out;
	o.err = SPAWN_NULL;
	rc = spawn_start(loop, &o, &child);
	if (rc == OK)
		rc = child_wait(child, 300 * 1000);
	if (rc == OK)
		*ex = child->exit;
	child_free(child);
	close(in);
	close(out);
	return rc;
}

static enum status
decompress_file(struct loop *loop, const struct codec *c, const char *in_path, const char *out_path,
		const char *what)
{
	struct child_exit ex = { 0 };
	struct stat st;
	enum status rc;

	if (!path_has_program(c->argv[0]))
		return error(ERR_UNSUPPORTED,
			     "%s is %s-compressed and '%s' is not installed; install it (Debian: "
			     "apt install %s)",
			     what, c->name, c->argv[0], c->package);
	rc = run_filter(loop, c->argv, in_path, out_path, &ex);
	if (rc != OK)
		return rc;
	if (stat(out_path, &st) < 0 || st.st_size == 0) {
		char buf[128];

		return error(ERR_CHILD, "cannot decompress %s: '%s' %s and wrote nothing", what,
			     c->argv[0], child_exit_str(&ex, buf, sizeof(buf)));
	}
	return OK;
}

enum status
kimage_decompress(struct loop *loop, const char *image, const char *out_path)
{
	struct kimage_info info;
	const struct codec *c = NULL;
	char *payload;
	enum status rc = kimage_probe(image, &info);

	if (rc != OK)
		return rc;
	if (info.format == KIMAGE_ARM64 || info.format == KIMAGE_ELF) {
		struct stat st;

		kimage_info_release(&info);
		if (stat(image, &st) < 0)
			return error(ERR_IO, "cannot read '%s': %s", image, strerror(errno));
		return copy_range(image, 0, (uint64_t)st.st_size, out_path);
	}
	for (size_t i = 0; info.compression && i < ARRAY_SIZE(codecs); i++)
		if (!strcmp(codecs[i].name, info.compression))
			c = &codecs[i];
	if (!c) {
		kimage_info_release(&info);
		return error(ERR_UNSUPPORTED,
			     "the kernel in '%s' is compressed in a way fswb does not know; its "
			     "embedded config and version cannot be read",
			     image);
	}
	payload = xasprintf("%s.payload", out_path);
	if (info.format == KIMAGE_COMPRESSED)
		rc = decompress_file(loop, c, image, out_path, "the kernel image");
	else if ((rc = copy_range(image, info.payload_offset, info.payload_length, payload)) == OK)
		rc = decompress_file(loop, c, payload, out_path, "the kernel in the image");
	unlink(payload);
	free(payload);
	kimage_info_release(&info);
	return rc;
}

enum status
kimage_find_version(const char *path, char **version)
{
	char *text;
	size_t len;
	enum status rc = read_file(path, MAX_KERNEL, &text, &len);
	bool found;

	*version = NULL;
	if (rc != OK)
		return rc;
	found = find_banner((unsigned char *)text, len, version);
	free(text);
	if (!found)
		return error(ERR_NOTFOUND, "no 'Linux version' string in '%s'", path);
	return OK;
}

enum status
kimage_config_from(struct loop *loop, const char *vmlinux, const char *work, const char *out_path)
{
	static const char st_mark[] = "IKCFG_ST", ed_mark[] = "IKCFG_ED";
	char *text, *gz;
	const char *start, *end;
	size_t len;
	struct child_exit ex = { 0 };
	static const char *const gunzip[] = { "gzip", "-dc", NULL };
	enum status rc = read_file(vmlinux, MAX_KERNEL, &text, &len);

	if (rc != OK)
		return rc;
	start = memmem(text, len, st_mark, sizeof(st_mark) - 1);
	while (start && (size_t)(start - text) + 10 < len &&
	       !((unsigned char)start[8] == 0x1f && (unsigned char)start[9] == 0x8b))
		start = memmem(start + 1, len - (size_t)(start + 1 - text), st_mark,
			       sizeof(st_mark) - 1);
	if (!start || (size_t)(start - text) + 10 >= len) {
		free(text);
		return error(ERR_NOTFOUND,
			     "the kernel carries no config of its own (it was built without "
			     "CONFIG_IKCONFIG, or with IKCONFIG=m)");
	}
	start += sizeof(st_mark) - 1;
	end = memmem(start, len - (size_t)(start - text), ed_mark, sizeof(ed_mark) - 1);
	if (!end) {
		free(text);
		return error(ERR_INVALID, "the embedded config of the kernel has no end marker "
					  "('IKCFG_ED'); the image may be damaged");
	}
	gz = path_join(work, "ikconfig.gz");
	rc = write_file_atomic(gz, start, (size_t)(end - start), 0600);
	free(text);
	if (rc == OK)
		rc = run_filter(loop, gunzip, gz, out_path, &ex);
	if (rc == OK && !(ex.exited && ex.code == 0))
		rc = error(ERR_INVALID, "the embedded config of the kernel is not valid gzip data");
	unlink(gz);
	free(gz);
	return rc;
}

enum status
kimage_config(struct loop *loop, const char *image, const char *work, const char *out_path)
{
	char *vmlinux = path_join(work, "vmlinux.tmp");
	enum status rc = mkdir_p(work, 0755);

	if (rc == OK)
		rc = kimage_decompress(loop, image, vmlinux);
	if (rc == OK)
		rc = kimage_config_from(loop, vmlinux, work, out_path);
	unlink(vmlinux);
	free(vmlinux);
	return rc;
}
