// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The disk image GCE imports: see gce_image.h.
 *
 * The steps, all in a private directory out.tmp.PID next to out:
 *	grub.cfg, then BOOTX64.EFI from grub-mkstandalone with it embedded;
 *	esp.img: mformat (FAT32), mmd, mcopy of BOOTX64.EFI, the kernel and initrd;
 *	disk.raw: a sparse file of the layout's size, the GPT written here,
 *	esp.img and the appliance copied in at their offsets (holes and zero
 *	blocks skipped, so disk.raw stays sparse);
 *	tar --format=gnu -S -czf out.part, then rename to out.
 */
#include "backends/gce_image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "core/paths.h"
#include "core/spawn.h"
#include "core/util.h"

#define MIB	       (UINT64_C(1) << 20)
#define GIB	       (UINT64_C(1) << 30)
#define SECTOR	       512u
#define ESP_SIZE       (100 * MIB)
#define GPT_ENTRIES    128u
#define GPT_ENTRY_SIZE 128u
/* the entries' sectors: 128 * 128 / 512 */
#define GPT_ENTRY_SECTORS (GPT_ENTRIES * GPT_ENTRY_SIZE / SECTOR)

/* the GRUB modules built into BOOTX64.EFI (the others are in its memdisk) */
#define GRUB_MODULES                                                                       \
	"part_gpt part_msdos fat ext2 linux normal serial terminal search search_fs_uuid " \
	"echo test gzio"

static uint64_t
round_up(uint64_t n, uint64_t to)
{
	return (n + to - 1) / to * to;
}

void
gce_image_layout(uint64_t appliance_size, struct gce_layout *l)
{
	l->esp_start = MIB;
	l->esp_size = ESP_SIZE;
	l->root_start = l->esp_start + l->esp_size;
	l->root_size = round_up(appliance_size ? appliance_size : 1, MIB);
	/* room for the backup GPT (33 sectors) after partition 2, then whole GiB */
	l->disk_size = round_up(l->root_start + l->root_size + MIB, GIB);
}

/* ---- the appliance's UUID ---- */

enum status
gce_image_uuid(const char *appliance, char uuid[37])
{
	unsigned char sb[0x78];
	int fd = open(appliance, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return error(ERR_IO, "cannot open the appliance '%s': %s", appliance,
			     strerror(errno));
	n = pread(fd, sb, sizeof(sb), 1024);
	close(fd);
	if (n < 0)
		return error(ERR_IO, "cannot read the appliance '%s': %s", appliance,
			     strerror(errno));
	/* s_magic at 0x38, little endian 0xEF53; s_uuid at 0x68 */
	if (n != (ssize_t)sizeof(sb) || sb[0x38] != 0x53 || sb[0x39] != 0xef)
		return error(ERR_INVALID,
			     "'%s' is not an ext4 filesystem image (no ext2/3/4 superblock); give "
			     "the appliance's root.img",
			     appliance);
	snprintf(uuid, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 sb[0x68], sb[0x69], sb[0x6a], sb[0x6b], sb[0x6c], sb[0x6d], sb[0x6e], sb[0x6f],
		 sb[0x70], sb[0x71], sb[0x72], sb[0x73], sb[0x74], sb[0x75], sb[0x76], sb[0x77]);
	return OK;
}

char *
gce_image_cmdline(const char *appliance, const char *extra)
{
	char uuid[37];

	if (gce_image_uuid(appliance, uuid) != OK)
		return NULL;
	/* the qemu backend's words, with root by UUID (sda2 on SCSI, nvme0n1p2 on NVMe) */
	return xasprintf("console=ttyS0,115200 root=UUID=%s rw rootfstype=ext4 "
			 "init=/usr/local/sbin/fswb-init panic=-1 printk.devkmsg=on "
			 "systemd.show_status=0 fswb.gce=1%s%s",
			 uuid, extra && *extra ? " " : "", extra ? extra : "");
}

/* Words GRUB's script parser takes as they are: no quoting, no expansion. */
static bool
grub_safe(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr(" _-.,:=/+@%~", *s)))
			return false;
	return true;
}

/* ---- the GPT ---- */

static uint32_t
crc32_le(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
	}
	return ~c;
}

static void
put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void
put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void
put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* A random (version 4) GUID in GPT's byte order. */
static void
random_guid(unsigned char g[16])
{
	size_t got = 0;

	while (got < 16) {
		ssize_t n = getrandom(g + got, 16 - got, 0);

		if (n < 0 && errno != EINTR)
			BUG("getrandom: %s", strerror(errno));
		if (n > 0)
			got += (size_t)n;
	}
	g[7] = (unsigned char)((g[7] & 0x0f) | 0x40);
	g[8] = (unsigned char)((g[8] & 0x3f) | 0x80);
}

/* C12A7328-F81F-11D2-BA4B-00A0C93EC93B and 0FC63DAF-8483-4772-8E79-3D69D8477DE4, mixed endian */
static const unsigned char guid_esp[16] = { 0x28, 0x73, 0x2a, 0xc1, 0x1f, 0xf8, 0xd2, 0x11,
					    0xba, 0x4b, 0x00, 0xa0, 0xc9, 0x3e, 0xc9, 0x3b };
static const unsigned char guid_linux[16] = { 0xaf, 0x3d, 0xc6, 0x0f, 0x83, 0x84, 0x72, 0x47,
					      0x8e, 0x79, 0x3d, 0x69, 0xd8, 0x47, 0x7d, 0xe4 };

static void
gpt_entry(unsigned char *e, const unsigned char type[16], uint64_t start, uint64_t size,
	  const char *name)
{
	memcpy(e, type, 16);
	random_guid(e + 16);
	put64(e + 32, start / SECTOR);
	put64(e + 40, (start + size) / SECTOR - 1);
	put64(e + 48, 0);
	for (size_t i = 0; name[i] && i < 36; i++)
		put16(e + 56 + 2 * i, (uint16_t)(unsigned char)name[i]);
}

static void
gpt_header(unsigned char *h, uint64_t my, uint64_t alt, uint64_t entries_lba, uint64_t last_usable,
	   const unsigned char disk_guid[16], uint32_t entries_crc)
{
	memset(h, 0, SECTOR);
	memcpy(h, "EFI PART", 8);
	put32(h + 8, 0x00010000);
	put32(h + 12, 92);
	put64(h + 24, my);
	put64(h + 32, alt);
	put64(h + 40, 2 + GPT_ENTRY_SECTORS); /* first usable LBA: 34 */
	put64(h + 48, last_usable);
	memcpy(h + 56, disk_guid, 16);
	put64(h + 72, entries_lba);
	put32(h + 80, GPT_ENTRIES);
	put32(h + 84, GPT_ENTRY_SIZE);
	put32(h + 88, entries_crc);
	put32(h + 16, crc32_le(h, 92));
}

static bool
pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ENOSPC;
			return false;
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return true;
}

/* The protective MBR, both GPT headers and both copies of the entries. */
static enum status
write_gpt(int fd, const char *path, const struct gce_layout *l)
{
	uint64_t sectors = l->disk_size / SECTOR, last = sectors - 1;
	unsigned char mbr[SECTOR] = { 0 }, h[SECTOR], disk_guid[16];
	unsigned char *entries = xcalloc(GPT_ENTRIES, GPT_ENTRY_SIZE);
	size_t esz = GPT_ENTRIES * GPT_ENTRY_SIZE;
	uint32_t ecrc;
	bool ok;

	/* protective MBR: one partition of type 0xEE over the whole disk */
	mbr[446 + 2] = 0x02;
	mbr[446 + 4] = 0xee;
	mbr[446 + 5] = mbr[446 + 6] = mbr[446 + 7] = 0xff;
	put32(mbr + 446 + 8, 1);
	put32(mbr + 446 + 12, sectors - 1 > 0xffffffffu ? 0xffffffffu : (uint32_t)(sectors - 1));
	mbr[510] = 0x55;
	mbr[511] = 0xaa;

	random_guid(disk_guid);
	gpt_entry(entries, guid_esp, l->esp_start, l->esp_size, "EFI system partition");
	gpt_entry(entries + GPT_ENTRY_SIZE, guid_linux, l->root_start, l->root_size, "fswb-root");
	ecrc = crc32_le(entries, esz);

	ok = pwrite_all(fd, mbr, SECTOR, 0);
	gpt_header(h, 1, last, 2, last - 1 - GPT_ENTRY_SECTORS, disk_guid, ecrc);
	ok = ok && pwrite_all(fd, h, SECTOR, SECTOR);
	ok = ok && pwrite_all(fd, entries, esz, 2 * SECTOR);
	ok = ok && pwrite_all(fd, entries, esz, (last - GPT_ENTRY_SECTORS) * SECTOR);
	gpt_header(h, last, 1, last - GPT_ENTRY_SECTORS, last - 1 - GPT_ENTRY_SECTORS, disk_guid,
		   ecrc);
	ok = ok && pwrite_all(fd, h, SECTOR, last * SECTOR);
	free(entries);
	if (!ok)
		return error(ERR_IO, "cannot write the partition table of '%s': %s", path,
			     strerror(errno));
	return OK;
}

/* ---- copying, sparse ---- */

static bool
all_zero(const unsigned char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && !memcmp(p, p + 1, n - 1));
}

/*
 * Copy the file src into dst_fd at off, leaving holes where src has holes
 * or blocks of zeros (dst is a fresh sparse file: zeros already).
 */
static enum status
copy_sparse(const char *src, int dst_fd, const char *dst, uint64_t off, uint64_t max)
{
	size_t bufsz = MIB;
	unsigned char *buf;
	struct stat st;
	off_t pos = 0, end;
	enum status rc = OK;
	int fd = open(src, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return error(ERR_IO, "cannot open '%s': %s", src, strerror(errno));
	if (fstat(fd, &st)) {
		rc = error(ERR_IO, "cannot stat '%s': %s", src, strerror(errno));
		close(fd);
		return rc;
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return error(ERR_INVALID, "'%s' (%llu bytes) does not fit its partition", src,
			     (unsigned long long)st.st_size);
	}
	buf = xmalloc(bufsz);
	while (rc == OK && pos < st.st_size) {
		off_t data = lseek(fd, pos, SEEK_DATA);

		if (data < 0 && errno == ENXIO)
			break; /* a hole to the end */
		if (data < 0)
			data = pos; /* no SEEK_DATA here: read it all */
		end = lseek(fd, data, SEEK_HOLE);
		if (end < 0 || end > st.st_size)
			end = st.st_size;
		for (pos = data; rc == OK && pos < end;) {
			size_t want = (size_t)(end - pos < (off_t)bufsz ? end - pos : (off_t)bufsz);
			ssize_t n = pread(fd, buf, want, pos);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				rc = error(ERR_IO, "cannot read '%s': %s", src,
					   n ? strerror(errno) : "it shrank while being read");
				break;
			}
			if (!all_zero(buf, (size_t)n) &&
			    !pwrite_all(dst_fd, buf, (size_t)n, off + (uint64_t)pos))
				rc = error(ERR_IO, "cannot write '%s': %s", dst, strerror(errno));
			pos += n;
		}
	}
	free(buf);
	close(fd);
	return rc;
}

/* ---- running the tools ---- */

/* Run argv; a failure names what it was doing, its output, and what to install. */
static enum status
run(struct loop *loop, const char *const *argv, const char *doing, const char *install)
{
	static const char *const env[] = { "MTOOLS_SKIP_CHECK=1", "LC_ALL=C", NULL };
	struct strbuf out = STRBUF_INIT;
	struct child_exit ex;
	enum status rc;

	rc = spawn_run(loop, argv, env, true, 16u << 10, &out, &ex);
	if (rc == ERR_LIMIT) {
		/* a talkative program: its first 16 KiB are enough */
		error_clear();
		rc = OK;
	}
	if (rc == ERR_NOTFOUND) {
		rc = error(ERR_NOTFOUND, "cannot %s: no '%s' in PATH; install %s", doing, argv[0],
			   install);
	} else if (rc == OK && (!ex.exited || ex.code)) {
		char how[96];

		if (out.buf)
			str_trim(out.buf);
		rc = error(ERR_CHILD, "cannot %s: %s %s: %.400s", doing, argv[0],
			   child_exit_str(&ex, how, sizeof(how)), out.buf ? out.buf : "");
	}
	strbuf_release(&out);
	return rc;
}

#define GRUB_PKGS                                                                        \
	"grub-mkstandalone and GRUB's EFI modules (Debian: apt-get install grub-common " \
	"grub-efi-amd64-bin; Fedora: dnf install grub2-tools-extra grub2-efi-x64-modules)"
#define MTOOLS_PKG "mtools (Debian and Fedora: package mtools)"
#define TAR_PKGS   "tar and gzip (Debian and Fedora: packages tar gzip)"

static enum status
make_grub(struct loop *loop, const char *dir, const char *cmdline, bool initrd, uint32_t serial,
	  char **efi)
{
	char *cfg = path_join(dir, "grub.cfg"), *arg, *prog;
	struct strbuf text = STRBUF_INIT;
	enum status rc;

	strbuf_addf(&text,
		    "serial --unit=0 --speed=115200\n"
		    "terminal_input serial console\n"
		    "terminal_output serial console\n"
		    "set timeout=0\n"
		    "set default=0\n"
		    "set root=(hd0,gpt1)\n"
		    "search --no-floppy --fs-uuid --set=root %04X-%04X\n"
		    "menuentry 'fswb' {\n"
		    "\techo 'fswb: loading the kernel'\n"
		    "\tlinux /vmlinuz %s\n",
		    serial >> 16, serial & 0xffff, cmdline);
	if (initrd)
		strbuf_adds(&text, "\tinitrd /initrd.img\n");
	strbuf_adds(&text, "}\n");
	rc = write_file_atomic(cfg, text.buf, text.len, 0644);
	strbuf_release(&text);
	*efi = path_join(dir, "BOOTX64.EFI");
	arg = xasprintf("boot/grub/grub.cfg=%s", cfg);
	prog = path_which("grub-mkstandalone", NULL, NULL);
	if (!prog)
		prog = path_which("grub2-mkstandalone", NULL, NULL);
	if (rc == OK && !prog)
		rc = error(ERR_NOTFOUND, "cannot make the GCE image's boot loader: no "
					 "grub-mkstandalone in PATH; install " GRUB_PKGS);
	if (rc == OK && !path_is_dir("/usr/lib/grub/x86_64-efi"))
		rc = error(ERR_NOTFOUND,
			   "cannot make the GCE image's boot loader: no GRUB modules "
			   "for x86_64-efi in /usr/lib/grub/x86_64-efi; install " GRUB_PKGS);
	if (rc == OK)
		rc = run(loop,
			 (const char *const[]){ prog, "-O", "x86_64-efi", "--modules=" GRUB_MODULES,
						"--locales=", "--fonts=", "--themes=", "-o", *efi,
						arg, NULL },
			 "make the GCE image's boot loader", GRUB_PKGS);
	free(prog);
	free(arg);
	free(cfg);
	return rc;
}

static enum status
make_esp(struct loop *loop, const char *dir, const struct gce_layout *l,
	 const struct gce_image_in *in, const char *efi, uint32_t serial, char **esp)
{
	char sectors[32], hidden[32], ser[16];
	const char *doing = "make the GCE image's EFI system partition";
	enum status rc;

	*esp = path_join(dir, "esp.img");
	rc = backend_make_disk(*esp, l->esp_size);
	if (rc != OK)
		return rc;
	snprintf(sectors, sizeof(sectors), "%llu", (unsigned long long)(l->esp_size / SECTOR));
	snprintf(hidden, sizeof(hidden), "%llu", (unsigned long long)(l->esp_start / SECTOR));
	snprintf(ser, sizeof(ser), "%08x", serial);
	rc = run(loop,
		 (const char *const[]){ "mformat", "-i", *esp, "-F", "-T", sectors, "-h", "64",
					"-s", "32", "-H", hidden, "-N", ser, "-v", "FSWB-ESP",
					"::", NULL },
		 doing, MTOOLS_PKG);
	if (rc == OK)
		rc = run(loop,
			 (const char *const[]){ "mmd", "-i", *esp, "::/EFI", "::/EFI/BOOT", NULL },
			 doing, MTOOLS_PKG);
	if (rc == OK)
		rc = run(loop,
			 (const char *const[]){ "mcopy", "-i", *esp, efi, "::/EFI/BOOT/BOOTX64.EFI",
						NULL },
			 doing, MTOOLS_PKG);
	if (rc == OK)
		rc = run(loop,
			 (const char *const[]){ "mcopy", "-i", *esp, in->kernel, "::/vmlinuz",
						NULL },
			 "copy the kernel into the GCE image's EFI system partition", MTOOLS_PKG);
	if (rc == OK && in->initrd)
		rc = run(loop,
			 (const char *const[]){ "mcopy", "-i", *esp, in->initrd, "::/initrd.img",
						NULL },
			 "copy the initramfs into the GCE image's EFI system partition (100 MiB)",
			 MTOOLS_PKG);
	return rc;
}

static enum status
make_disk(const char *dir, const struct gce_layout *l, const char *esp, const char *appliance)
{
	char *disk = path_join(dir, "disk.raw");
	enum status rc = OK;
	int fd = open(disk, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0) {
		rc = error(ERR_IO, "cannot create '%s': %s", disk, strerror(errno));
		free(disk);
		return rc;
	}
	if (ftruncate(fd, (off_t)l->disk_size))
		rc = error(ERR_IO, "cannot size '%s' to %llu bytes: %s", disk,
			   (unsigned long long)l->disk_size, strerror(errno));
	if (rc == OK)
		rc = write_gpt(fd, disk, l);
	if (rc == OK)
		rc = copy_sparse(esp, fd, disk, l->esp_start, l->esp_size);
	if (rc == OK)
		rc = copy_sparse(appliance, fd, disk, l->root_start, l->root_size);
	if (close(fd) && rc == OK)
		rc = error(ERR_IO, "cannot write '%s': %s", disk, strerror(errno));
	free(disk);
	return rc;
}

/* tar --format=gnu -S -czf part -C dir disk.raw (gzip by pigz when there is one), synced. */
static enum status
pack(struct loop *loop, const char *dir, const char *part)
{
	bool pigz = path_has_program("pigz");
	enum status rc;
	int fd;

	rc = run(loop,
		 (const char *const[]){ "tar", "--format=gnu", "-S", "--numeric-owner", "--owner=0",
					"--group=0", pigz ? "--use-compress-program=pigz" : "-z",
					"-cf", part, "-C", dir, "disk.raw", NULL },
		 "pack the GCE image", TAR_PKGS);
	if (rc != OK)
		return rc;
	fd = open(part, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fsync(fd))
		rc = error(ERR_IO, "cannot write '%s': %s", part, strerror(errno));
	if (fd >= 0)
		close(fd);
	return rc;
}

static enum status
check_input(const char *what, const char *path)
{
	struct stat st;

	if (!path)
		BUG("gce_image_make without %s", what);
	if (stat(path, &st))
		return error(ERR_NOTFOUND, "cannot read the %s '%s': %s", what, path,
			     strerror(errno));
	if (!S_ISREG(st.st_mode))
		return error(ERR_INVALID, "the %s '%s' is not a regular file", what, path);
	return OK;
}

enum status
gce_image_make(struct loop *loop, const struct gce_image_in *in, const char *out)
{
	struct gce_layout l;
	struct stat st;
	char *cmdline = NULL, *dir = NULL, *efi = NULL, *esp = NULL, *part = NULL;
	uint32_t serial;
	enum status rc;

	rc = check_input("appliance", in->appliance);
	if (rc == OK)
		rc = check_input("kernel", in->kernel);
	if (rc == OK && in->initrd)
		rc = check_input("initramfs", in->initrd);
	if (rc != OK)
		return rc;
	if (in->cmdline && !grub_safe(in->cmdline))
		return error(ERR_INVALID,
			     "kernel command line '%s': only letters, digits, spaces and "
			     "_-.,:=/+@%%~ can go into the GCE image's grub.cfg",
			     in->cmdline);
	{
		char uuid[37];

		rc = gce_image_uuid(in->appliance, uuid);
		if (rc != OK)
			return rc;
	}
	cmdline = gce_image_cmdline(in->appliance, in->cmdline);
	if (!cmdline)
		return error(ERR_IO, "cannot read the appliance '%s' again", in->appliance);
	if (stat(in->appliance, &st)) {
		free(cmdline);
		return error(ERR_IO, "cannot stat '%s': %s", in->appliance, strerror(errno));
	}
	gce_image_layout((uint64_t)st.st_size, &l);

	dir = xasprintf("%s.tmp.%ld", out, (long)getpid());
	part = xasprintf("%s.part", out);
	if (path_exists(dir) && remove_tree(dir) != OK)
		error_clear(); /* ours: a pid's earlier try; mkdir says what is wrong */
	if (mkdir(dir, 0700)) {
		rc = error(ERR_IO, "cannot make the directory '%s': %s", dir, strerror(errno));
		free(dir);
		dir = NULL;
		goto out;
	}
	{
		unsigned char r[16];

		random_guid(r);
		serial = (uint32_t)r[0] << 24 | (uint32_t)r[1] << 16 | (uint32_t)r[2] << 8 | r[3];
	}
	rc = make_grub(loop, dir, cmdline, in->initrd != NULL, serial, &efi);
	if (rc == OK)
		rc = make_esp(loop, dir, &l, in, efi, serial, &esp);
	if (rc == OK)
		rc = make_disk(dir, &l, esp, in->appliance);
	if (rc == OK) {
		unlink(esp); /* in disk.raw now: give the space back before tar */
		unlink(part);
		rc = pack(loop, dir, part);
	}
	if (rc == OK && rename(part, out))
		rc = error(ERR_IO, "cannot write '%s': %s", out, strerror(errno));
out:
	if (rc != OK)
		unlink(part);
	if (dir) {
		/* the first failure's message is the one to keep */
		char *msg = rc != OK ? xstrdup(error_msg()) : NULL;

		if (remove_tree(dir) != OK && rc == OK)
			rc = error_prefix(ERR_IO, "cannot remove the temporary directory");
		else if (msg)
			error(rc, "%s", msg);
		free(msg);
	}
	free(cmdline);
	free(dir);
	free(part);
	free(efi);
	free(esp);
	return rc;
}
