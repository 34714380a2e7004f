/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The gce backend: each session is a Compute Engine instance booting the
 * appliance and the chosen kernel from an image fswb made and imported
 * (gce_image.c), through the Compute Engine and Cloud Storage REST APIs
 * (gce_api.c); no gcloud.
 *
 * A session is a worker process (agent_kept) that holds the instance:
 *   - the image: fswb-KEY, KEY from the appliance, kernel, initramfs and
 *     command line; made once (CACHE/gce/fswb-KEY.tar.gz), uploaded to the
 *     bucket, images.insert'ed, and reused by every later run;
 *   - the instance: fswb-ID-SLOT-N with the boot disk from the image and a
 *     persistent disk per test device (device name = the role), labelled
 *     fswb=1; leased before it exists (reap deletes it);
 *   - the agent's input: what the engine sends is written to the bucket as
 *     PREFIX/in-K and announced in the instance's metadata (fswb-in = the
 *     count), which fswb-init watches (src/agent/fswb-init, gce_main);
 *   - the agent's output: serial port 2, lines "fswb-ctl SEQ BASE64", read
 *     with getSerialPortOutput; the kernel log: port 1, the console;
 *   - results: the agent stores its archive in the bucket and says
 *     "RESULTAT NAME SIZE"; the worker fetches it and hands the engine an
 *     ordinary RESULT frame (unpacked under the usual rules);
 *   - the end: the instance powers off after the agent; the worker deletes
 *     it and the session's objects.
 *
 * Detached (fswb run --detach): the instance gets the metadata fswb-detach
 * (its time limit) and fswb-compute, and the compute scope. fswb-init then
 * also keeps the agent's output as PREFIX/out in the bucket, and deletes
 * its own instance at the end (or at the limit). Once the engine sent the
 * job and POWEROFF, detach() lets the worker pass them on and end without
 * deleting anything. A session that follows the instance (spec->follow,
 * fswb results fetch) reads PREFIX/out instead of serial port 2, and the
 * kernel log from port 1 while the instance exists.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "backends/agentpipe.h"
#include "backends/backend.h"
#include "backends/gce_api.h"
#include "backends/gce_image.h"
#include "core/lockfile.h"
#include "core/paths.h"
#include "core/sha.h"
#include "core/util.h"

#define BOOT_DEFAULT	600  /* s from the instance's insert to the agent's HELLO */
#define SILENCE_DEFAULT 600  /* s */
#define POLL_MS_DEFAULT 1000 /* serial output and input, each */
#define MACHINE_DEFAULT "e2-standard-2"
#define DISK_GB_MIN	10 /* Compute Engine's smallest standard persistent disk */
#define RESULT_MAX	(2ull << 30)
#define CTL_LINE_MAX	8192
#define FRAME_HEAD_MAX	4096
#define STORAGE_DEFAULT "https://storage.googleapis.com"
#define PRICES_DATE	"2024-06"
#define PRICES_REGION	"us-central1"

enum {
	WK_OK = 0,
	WK_FAIL = 1,	  /* refused or broken: said on stderr */
	WK_LOST = 3,	  /* the instance stopped before the agent ended */
	WK_PREEMPTED = 5, /* Compute Engine took the instance away (preempted) */
	WK_NOROOM = 6,	  /* Compute Engine had no room for it (a quota), tried for a while */
	WK_STOPPED = 4,	  /* SIGTERM from fswb */
};

/* On-demand list prices (USD an hour) of machine types, in PRICES_REGION on PRICES_DATE. */
static const struct {
	const char *type;
	double usd_hour;
} prices[] = {
	{ "e2-small", 0.016751 },      { "e2-medium", 0.033503 },     { "e2-standard-2", 0.067006 },
	{ "e2-standard-4", 0.134012 }, { "e2-standard-8", 0.268024 }, { "n1-standard-2", 0.094999 },
	{ "n1-standard-4", 0.189999 }, { "n2-standard-2", 0.097118 }, { "n2-standard-4", 0.194236 },
	{ "n2-standard-8", 0.388472 },
};

/* ---- options ------------------------------------------------------------------ */

static bool
name_chars(const char *v, const char *extra, size_t max)
{
	size_t n = strlen(v);

	if (!n || n > max)
		return false;
	for (const char *p = v; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || strchr(extra, *p)))
			return false;
	return true;
}

static enum status
project_check(const char *v)
{
	if (!name_chars(v, "-", 30) || !(v[0] >= 'a' && v[0] <= 'z'))
		return error(ERR_INVALID,
			     "'%s' is not a project ID (lower-case letters, digits "
			     "and dashes, 6 to 30, starting with a letter)",
			     v);
	return OK;
}

static enum status
zone_check(const char *v)
{
	const char *dash = strrchr(v, '-');

	if (!name_chars(v, "-", 40) || !dash || dash == v || strlen(dash) != 2)
		return error(ERR_INVALID, "'%s' is not a zone (like us-central1-a)", v);
	return OK;
}

static enum status
bucket_check(const char *v)
{
	if (!name_chars(v, "-_.", 63) || strlen(v) < 3)
		return error(ERR_INVALID,
			     "'%s' is not a bucket name (3 to 63 lower-case letters, digits, "
			     "'-', '_' and '.'; no gs://)",
			     v);
	return OK;
}

static enum status
machine_check(const char *v)
{
	if (!name_chars(v, "-", 60))
		return error(ERR_INVALID, "'%s' is not a machine type (like %s)", v,
			     MACHINE_DEFAULT);
	return OK;
}

static enum status
key_check(const char *v)
{
	if (!*v)
		return error(ERR_INVALID, "the key is a file: a service account's JSON key");
	return OK;
}

static enum status
cost_check(const char *v)
{
	if (strcmp(v, "ok"))
		return error(ERR_INVALID, "cost=ok is the only value: it accepts the cost");
	return OK;
}

static enum status
spot_check(const char *v)
{
	if (strcmp(v, "yes") && strcmp(v, "no"))
		return error(ERR_INVALID, "spot=yes or spot=no: whether the instances are spot "
					  "instances (cheaper; Compute Engine may take them away)");
	return OK;
}

static const struct backend_option gce_options[] = {
	{ "project", "PROJECT", project_check },
	{ "zone", "ZONE", zone_check },
	{ "bucket", "BUCKET", bucket_check },
	{ "key", "FILE", key_check },
	{ "machine-type", "TYPE", machine_check },
	{ "spot", "yes|no", spot_check },
	{ "cost", "ok", cost_check },
	{ "boot", "SECONDS", backend_option_seconds },
	{ "silence", "SECONDS", backend_option_seconds },
	{ NULL, NULL, NULL },
};

static enum status
gce_check_plan(const struct plan *plan)
{
	if (!plan_backend_opt(plan, "zone") || !plan_backend_opt(plan, "bucket"))
		return error(ERR_INVALID,
			     "the gce backend needs -o zone=ZONE and -o bucket=BUCKET (and -o "
			     "key=FILE, a service account's JSON key, unless fswb runs on Compute "
			     "Engine)");
	if (!plan_backend_opt(plan, "key") && !plan_backend_opt(plan, "project"))
		return error(
			ERR_INVALID,
			"without -o key=FILE (fswb on Compute Engine, its own service account) "
			"name the project: -o project=PROJECT");
	return OK;
}

static bool
price_of(const char *type, double *usd)
{
	for (size_t i = 0; i < ARRAY_SIZE(prices); i++)
		if (!strcmp(prices[i].type, type)) {
			*usd = prices[i].usd_hour;
			return true;
		}
	return false;
}

/* ---- the session --------------------------------------------------------------- */

struct gce_session_priv {
	struct agent_kept kept; /* first: agent_kept_send and _cancel take the session */
	char *key_file, *project, *zone, *bucket, *machine;
	char *appliance, *kernel, *initrd, *cmdline, *app_key;
	char *name;    /* the instance */
	char *prefix;  /* the session's objects: fswb/NAME */
	char *workdir; /* this host: the worker's marks */
	struct strvec roles, disks;
	uint64_t *sizes;
	unsigned boot, silence, poll_ms;
	bool spot;	 /* a spot instance: cheaper, and Compute Engine may take it away */
	unsigned detach; /* > 0: the instance may be left to run alone, this many seconds */
	bool follow;	 /* following a detached instance (spec->follow) */
	char *notice;
	char *lease_item;
};

static char *
mark_path(const struct gce_session_priv *s, const char *what)
{
	return path_join(s->workdir, what);
}

static void
mark(const struct gce_session_priv *s, const char *what)
{
	char *p = mark_path(s, what);

	if (write_file_atomic(p, "", 0, 0600) != OK)
		error_clear();
	free(p);
}

static bool
marked(const struct gce_session_priv *s, const char *what)
{
	char *p = mark_path(s, what);
	bool r = path_exists(p);

	free(p);
	return r;
}

static enum status
open_api(const char *key_file, const char *project, const char *zone, struct gce_api **a)
{
	struct gce_api_opts o = { key_file, project, zone, 0 };

	return gce_api_open(&o, a);
}

/* The image's name: fswb-KEY from everything it holds. */
static enum status
image_key(const struct gce_session_priv *s, char out[65])
{
	struct sha sha;
	const char *files[] = { s->kernel, s->initrd };

	sha_init(&sha);
	sha_addf(&sha, "fswb gce image 1\n%s\n%s\n", s->app_key, s->cmdline ? s->cmdline : "");
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char buf[65536];
		ssize_t n;
		int fd;

		if (!files[i])
			continue;
		fd = open(files[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return error(ERR_IO, "cannot read %s: %s", files[i], strerror(errno));
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			sha_add(&sha, buf, (size_t)n);
		close(fd);
		if (n < 0)
			return error(ERR_IO, "cannot read %s: %s", files[i], strerror(errno));
	}
	sha_hex(&sha, out);
	return OK;
}

static void
image_waiting(void *name)
{
	agent_worker_note("waiting for another session making the image %s", (const char *)name);
}

/* The image for this appliance and kernel: there already, or made, uploaded and imported. */
static enum status
ensure_image(struct gce_session_priv *s, struct gce_api *a, char **name)
{
	char key[65], *cache = NULL, *tarball = NULL, *lock = NULL, *path, *object = NULL;
	json_t *r = NULL, *op = NULL, *body;
	enum status rc = image_key(s, key);
	bool cancel = false;
	int lfd = -1;
	struct loop *loop = NULL;

	if (rc != OK)
		return rc;
	*name = xasprintf("fswb-%.20s", key);
	path = xasprintf("projects/%s/global/images/%s", gce_api_project(a), *name);
	rc = gce_compute(a, "GET", path, NULL, &r);
	if (rc == OK && r &&
	    !strcmp(json_string_value(json_object_get(r, "status")) ?: "", "READY"))
		goto out;
	if (rc != OK && gce_api_last_http(a) != 404)
		goto out;
	error_clear();
	json_decref(r);
	r = NULL;
	rc = fswb_dir_make(DIR_CACHE, "gce", &cache);
	if (rc != OK)
		goto out;
	/* one session makes it; the others of the run (and other fswbs) wait for it */
	lock = xasprintf("%s/%s.lock", cache, *name);
	loop = loop_new();
	rc = lockfile_take(loop, lock, &cancel, image_waiting, *name, &lfd);
	if (rc != OK)
		goto out;
	rc = gce_compute(a, "GET", path, NULL, &r);
	if (rc == OK && r &&
	    !strcmp(json_string_value(json_object_get(r, "status")) ?: "", "READY"))
		goto out;
	error_clear();
	json_decref(r);
	r = NULL;
	tarball = xasprintf("%s/%s.tar.gz", cache, *name);
	if (!path_exists(tarball)) {
		struct gce_image_in in = { s->appliance, s->kernel, s->initrd, s->cmdline };

		agent_worker_note("making the image %s (once per appliance and kernel)", *name);
		rc = gce_image_make(loop, &in, tarball);
		if (rc != OK)
			goto out;
	}
	object = xasprintf("fswb/images/%s.tar.gz", *name);
	agent_worker_note("uploading the image to gs://%s/%s", s->bucket, object);
	rc = gce_upload_file(a, s->bucket, object, tarball);
	if (rc != OK)
		goto out;
	agent_worker_note("importing the image %s (Compute Engine takes minutes)", *name);
	{
		/* Compute Engine reads the image from Cloud Storage by this URL */
		char *src = xasprintf("https://storage.googleapis.com/%s/%s", s->bucket, object);
		char *images = xasprintf("projects/%s/global/images", gce_api_project(a));

		body = json_pack("{s:s, s:{s:s}, s:[{s:s}], s:{s:s}}", "name", *name, "rawDisk",
				 "source", src, "guestOsFeatures", "type", "UEFI_COMPATIBLE",
				 "labels", "fswb", "1");
		rc = gce_compute(a, "POST", images, body, &op);
		json_decref(body);
		free(src);
		free(images);
	}
	if (rc == OK)
		rc = gce_wait_op(a, op, 3600);
	/* the tarball's object is only the import's input */
	if (gce_delete_object(a, s->bucket, object) != OK)
		error_clear();
	if (rc != OK)
		rc = error_prefix(rc, "cannot import the image %s", *name);
out:
	if (lfd >= 0)
		lockfile_release(lfd);
	if (loop)
		loop_free(loop);
	json_decref(r);
	json_decref(op);
	free(path);
	free(cache);
	free(tarball);
	free(lock);
	free(object);
	if (rc != OK) {
		free(*name);
		*name = NULL;
	}
	return rc;
}

/* The compute API's base as the instance reaches it (tests: their endpoint's). */
static const char *
instance_compute_url(void)
{
	const char *v = getenv("FSWB_GCE_INSTANCE_COMPUTE_URL");

	if (!v || !*v)
		v = getenv("FSWB_GCE_COMPUTE_URL");
	return v && *v ? v : "https://compute.googleapis.com/compute/v1";
}

/* The storage API's base as the instance reaches it (tests: their endpoint's). */
static const char *
instance_storage_url(void)
{
	const char *v = getenv("FSWB_GCE_INSTANCE_STORAGE_URL");

	if (!v || !*v)
		v = getenv("FSWB_GCE_STORAGE_URL");
	return v && *v ? v : STORAGE_DEFAULT;
}

static uint64_t
disk_gb(uint64_t bytes)
{
	uint64_t gb = (bytes + (1ull << 30) - 1) >> 30;

	return gb < DISK_GB_MIN ? DISK_GB_MIN : gb;
}

/* A role as a device name: [a-z]([-a-z0-9]*[a-z0-9])? (test_logdev: test-logdev). */
static char *
device_name(const char *role)
{
	char *d = xstrdup(role);

	for (char *p = d; *p; p++)
		if (*p == '_')
			*p = '-';
	return d;
}

/*
 * This host, as the label fswb-host of the instances it makes: 16 hex
 * digits of the hash of its machine id (else its name). `fswb doctor
 * --forget` deletes only this host's.
 */
static const char *
host_label(void)
{
	static char label[17];

	if (!label[0]) {
		char *id = NULL, hex[65], name[256] = "";
		size_t len;
		struct sha sh;

		sha_init(&sh);
		if (read_file("/etc/machine-id", 4096, &id, &len) == OK && len) {
			sha_add(&sh, id, len);
		} else {
			error_clear();
			gethostname(name, sizeof(name) - 1);
			sha_adds(&sh, name);
		}
		free(id);
		sha_hex(&sh, hex);
		memcpy(label, hex, 16);
	}
	return label;
}

static enum status
insert_instance(struct gce_session_priv *s, struct gce_api *a, const char *image)
{
	const char *v;
	json_t *disks = json_array(), *body, *op = NULL;
	char *mt = xasprintf("zones/%s/machineTypes/%s", gce_api_zone(a), s->machine);
	char *img = xasprintf("projects/%s/global/images/%s", gce_api_project(a), image);
	char *path =
		xasprintf("projects/%s/zones/%s/instances", gce_api_project(a), gce_api_zone(a));
	enum status rc;

	json_array_append_new(disks, json_pack("{s:b, s:b, s:s, s:{s:s}}", "boot", 1, "autoDelete",
					       1, "deviceName", "persistent-disk-0",
					       "initializeParams", "sourceImage", img));
	for (size_t i = 0; i < s->roles.n; i++) {
		char *dn = device_name(s->roles.v[i]);
		char gb[32];

		snprintf(gb, sizeof(gb), "%llu", (unsigned long long)disk_gb(s->sizes[i]));
		json_array_append_new(disks, json_pack("{s:b, s:s, s:{s:s}}", "autoDelete", 1,
						       "deviceName", dn, "initializeParams",
						       "diskSizeGb", gb));
		free(dn);
	}
	body = json_pack("{s:s, s:s, s:o, s:[{s:s, s:[{s:s, s:s}]}], s:{s:[{s:s, s:s}, {s:s, s:s}, "
			 "{s:s, s:s}, {s:s, s:s}]}, s:{s:s, s:s}, s:[{s:s, s:[s]}]}",
			 "name", s->name, "machineType", mt, "disks", disks, "networkInterfaces",
			 "network", "global/networks/default", "accessConfigs", "type",
			 "ONE_TO_ONE_NAT", "name", "External NAT", "metadata", "items", "key",
			 "fswb-bucket", "value", s->bucket, "key", "fswb-prefix", "value",
			 s->prefix, "key", "fswb-storage", "value", instance_storage_url(), "key",
			 "fswb-in", "value", "0", "labels", "fswb", "1", "fswb-host", host_label(),
			 "serviceAccounts", "email", "default", "scopes",
			 "https://www.googleapis.com/auth/devstorage.read_write");
	if (s->detach) {
		/* left alone, it keeps its output in the bucket and deletes itself */
		json_t *items = json_object_get(json_object_get(body, "metadata"), "items");
		char limit[32];

		snprintf(limit, sizeof(limit), "%u", s->detach);
		json_array_append_new(
			items, json_pack("{s:s, s:s}", "key", "fswb-detach", "value", limit));
		json_array_append_new(items, json_pack("{s:s, s:s}", "key", "fswb-compute", "value",
						       instance_compute_url()));
		/* how often it uploads its output (tests: sooner than the 20 s default) */
		if ((v = getenv("FSWB_GCE_UPLOAD_S")) && atoi(v) > 0 && atoi(v) <= 3600) {
			snprintf(limit, sizeof(limit), "%d", atoi(v));
			json_array_append_new(items, json_pack("{s:s, s:s}", "key", "fswb-upload-s",
							       "value", limit));
		}
		json_array_append_new(
			json_object_get(json_array_get(json_object_get(body, "serviceAccounts"), 0),
					"scopes"),
			json_string("https://www.googleapis.com/auth/compute"));
		json_object_set_new(json_object_get(body, "labels"), "fswb-detach",
				    json_string("yes"));
	}
	if (s->spot)
		/* preempted: deleted, so nothing is left to pay for even without fswb */
		json_object_set_new(body, "scheduling",
				    json_pack("{s:s, s:s, s:s, s:b}", "provisioningModel", "SPOT",
					      "instanceTerminationAction", "DELETE",
					      "onHostMaintenance", "TERMINATE", "automaticRestart",
					      0));
	rc = gce_compute(a, "POST", path, body, &op);
	if (rc == OK)
		rc = gce_wait_op(a, op, 600);
	json_decref(body);
	json_decref(op);
	free(mt);
	free(img);
	free(path);
	return rc;
}

static char *
instance_path(const struct gce_session_priv *s, struct gce_api *a, const char *tail)
{
	return xasprintf("projects/%s/zones/%s/instances/%s%s", gce_api_project(a), gce_api_zone(a),
			 s->name, tail ? tail : "");
}

/* DELETE path, waited for when wait; one gone already (404) is gone too. */
static enum status
delete_resource(struct gce_api *a, const char *path, bool wait)
{
	json_t *op = NULL;
	enum status rc = gce_compute(a, "DELETE", path, NULL, &op);

	if (rc != OK && gce_api_last_http(a) == 404)
		rc = OK, error_clear();
	else if (rc == OK && wait)
		rc = gce_wait_op(a, op, 600);
	json_decref(op);
	return rc;
}

/* Delete the instance (its disks go with it); wait for it when wait. */
static enum status
delete_instance(const struct gce_session_priv *s, struct gce_api *a, bool wait)
{
	char *path = instance_path(s, a, NULL);
	enum status rc = delete_resource(a, path, wait);

	free(path);
	return rc;
}

/* The agent's input: bytes as object PREFIX/in-K, then fswb-in = K + 1. */
static enum status
send_input(struct gce_session_priv *s, struct gce_api *a, unsigned k, const char *buf, size_t len)
{
	char *object = xasprintf("%s/in-%u", s->prefix, k), *path = instance_path(s, a, NULL);
	char *setmd = instance_path(s, a, "/setMetadata"), count[32];
	json_t *inst = NULL, *md, *items, *op = NULL;
	enum status rc = gce_upload_mem(a, s->bucket, object, buf, len);

	snprintf(count, sizeof(count), "%u", k + 1);
	/* the fingerprint changes with every change: a conflict is tried again */
	for (int tries = 0; rc == OK && tries < 5; tries++) {
		size_t i;
		json_t *it;
		bool found = false;

		json_decref(inst);
		inst = NULL;
		rc = gce_compute(a, "GET", path, NULL, &inst);
		if (rc != OK)
			break;
		md = json_deep_copy(json_object_get(inst, "metadata"));
		if (!json_is_object(md)) {
			json_decref(md);
			md = json_object();
		}
		items = json_object_get(md, "items");
		if (!json_is_array(items)) {
			items = json_array();
			json_object_set_new(md, "items", items);
		}
		json_array_foreach(
			items, i,
			it) if (!strcmp(json_string_value(json_object_get(it, "key")) ?: "",
					"fswb-in"))
		{
			json_object_set_new(it, "value", json_string(count));
			found = true;
		}
		if (!found)
			json_array_append_new(
				items, json_pack("{s:s, s:s}", "key", "fswb-in", "value", count));
		json_object_del(md, "kind");
		rc = gce_compute(a, "POST", setmd, md, &op);
		json_decref(md);
		if (rc == OK)
			rc = gce_wait_op(a, op, 120);
		json_decref(op);
		op = NULL;
		if (rc == OK || gce_api_last_http(a) != 412)
			break;
		error_clear();
		rc = OK;
	}
	json_decref(inst);
	free(object);
	free(path);
	free(setmd);
	return rc;
}

/* ---- the agent's stream from serial port 2 ------------------------------------- */

struct ctl_reader {
	uint64_t next[3]; /* getSerialPortOutput's next, ports 1 and 2 */
	bool started[3];
	struct strbuf line; /* port 2: a line being read */
	long long seq;	    /* the next "fswb-ctl SEQ" */
	bool ended;	    /* "fswb-ctl-end": the agent's output ended */
	bool broken;
	/* frames: RESULTAT is turned into RESULT */
	struct strbuf head;
	uint64_t payload;     /* bytes of a frame's payload still to pass */
	struct strvec passed; /* following: the results passed on, deleted at the end */
};

static void
ctl_break(struct ctl_reader *r, const char *fmt, const char *what)
{
	if (!r->broken)
		agent_worker_say(fmt, what);
	r->broken = true;
}

/* RESULTAT NAME SIZE: the archive from the bucket, as a RESULT frame on fd. */
static void
fetch_result(struct gce_session_priv *s, struct gce_api *a, struct ctl_reader *r, const char *head,
	     int fd)
{
	char name[512];
	unsigned long long size;
	char *tmp = mark_path(s, "result.tgz"), *data = NULL, *frame;
	size_t len = 0;
	enum status rc;

	if (sscanf(head, "RESULTAT %511s %llu", name, &size) != 2 ||
	    strncmp(name, s->prefix, strlen(s->prefix)) || name[strlen(s->prefix)] != '/' ||
	    strstr(name, "..")) {
		ctl_break(r, "the instance named results that are not its own: %.200s", head);
		free(tmp);
		return;
	}
	rc = gce_download_file(a, s->bucket, name, tmp, RESULT_MAX);
	if (rc == OK)
		rc = read_file(tmp, RESULT_MAX, &data, &len);
	if (rc != OK) {
		agent_worker_note("cannot fetch the results gs://%s/%s: %s", s->bucket, name,
				  error_msg());
		error_clear();
		len = 0;
	} else if (len != size) {
		agent_worker_note("the results gs://%s/%s have %zu bytes, not the %llu the agent "
				  "said",
				  s->bucket, name, len, size);
	}
	frame = xasprintf("RESULT +%zu\n", len);
	if (!agent_write_all(fd, frame, strlen(frame)) || (len && !agent_write_all(fd, data, len)))
		ctl_break(r, "%s", "fswb stopped reading the session");
	/* a follow that is stopped reads them again the next time */
	if (s->follow)
		strvec_push(&r->passed, name);
	else if (gce_delete_object(a, s->bucket, name) != OK)
		error_clear();
	unlink(tmp);
	free(frame);
	free(data);
	free(tmp);
}

/* Decoded agent bytes: frames passed to fd as they are, but RESULTAT. */
static void
ctl_bytes(struct gce_session_priv *s, struct gce_api *a, struct ctl_reader *r, const char *buf,
	  size_t len, int fd)
{
	while (len && !r->broken) {
		if (r->payload) {
			size_t n = len < r->payload ? len : (size_t)r->payload;

			if (!agent_write_all(fd, buf, n))
				ctl_break(r, "%s", "fswb stopped reading the session");
			r->payload -= n;
			buf += n;
			len -= n;
			continue;
		}
		{
			const char *nl = memchr(buf, '\n', len);
			size_t n = nl ? (size_t)(nl - buf) + 1 : len;
			const char *plus;

			strbuf_add(&r->head, buf, n);
			buf += n;
			len -= n;
			if (!nl) {
				if (r->head.len > FRAME_HEAD_MAX) {
					/* not a frame: the engine says so */
					agent_write_all(fd, r->head.buf, r->head.len);
					strbuf_reset(&r->head);
				}
				continue;
			}
			if (!strncmp(r->head.buf, "RESULTAT ", 9)) {
				r->head.buf[r->head.len - 1] = 0;
				fetch_result(s, a, r, r->head.buf, fd);
			} else {
				if (!agent_write_all(fd, r->head.buf, r->head.len))
					ctl_break(r, "%s", "fswb stopped reading the session");
				r->head.buf[r->head.len - 1] = 0;
				plus = strrchr(r->head.buf, ' ');
				if (plus && plus[1] == '+')
					r->payload = strtoull(plus + 2, NULL, 10);
			}
			strbuf_reset(&r->head);
		}
	}
}

static size_t
b64_decode(const char *in, size_t n, unsigned char *out)
{
	int len;
	size_t pad = 0;

	if (n % 4)
		return (size_t)-1;
	len = EVP_DecodeBlock(out, (const unsigned char *)in, (int)n);
	if (len < 0)
		return (size_t)-1;
	if (n && in[n - 1] == '=')
		pad++;
	if (n > 1 && in[n - 2] == '=')
		pad++;
	return (size_t)len - pad;
}

/* One complete line of port 2. */
static void
ctl_line(struct gce_session_priv *s, struct gce_api *a, struct ctl_reader *r, char *line, int fd)
{
	long long seq;
	int off = 0;
	size_t n;
	char *p;

	n = strlen(line);
	while (n && (line[n - 1] == '\r' || line[n - 1] == '\n'))
		line[--n] = 0;
	/* the firmware and the boot loader write on every port: ours may follow their words */
	if ((p = strstr(line, "fswb-ctl-end ")) && sscanf(p, "fswb-ctl-end %lld", &seq) == 1) {
		r->ended = true;
		return;
	}
	if (!(p = strstr(line, "fswb-ctl ")) || sscanf(p, "fswb-ctl %lld %n", &seq, &off) != 1 ||
	    !off)
		return; /* not ours */
	line = p;
	if (seq != r->seq) {
		char what[96];

		snprintf(what, sizeof(what), "line %lld came where %lld was due", seq, r->seq);
		ctl_break(r, "the agent's output on serial port 2 lost bytes (%s)", what);
		return;
	}
	r->seq++;
	{
		unsigned char *buf = xmalloc(n);
		size_t got = b64_decode(line + off, strlen(line + off), buf);

		if (got == (size_t)-1)
			ctl_break(r, "the agent's output on serial port 2 is garbled: %.80s", line);
		else
			ctl_bytes(s, a, r, (const char *)buf, got, fd);
		free(buf);
	}
}

/* Text of the agent's output stream (serial port 2, or PREFIX/out), line by line. */
static void
ctl_text(struct gce_session_priv *s, struct gce_api *a, struct ctl_reader *r, const char *p,
	 size_t len)
{
	const char *end = p + len;

	while (p < end && !r->broken) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);

		strbuf_add(&r->line, p, n);
		p += n;
		if (nl) {
			ctl_line(s, a, r, r->line.buf, 1);
			strbuf_reset(&r->line);
		} else if (r->line.len > CTL_LINE_MAX) {
			ctl_break(r, "%s", "a line of the agent's output is too long");
		}
	}
}

/* getSerialPortOutput of port from r->next[port]; what came, to fd (port 1) or decoded. */
static enum status
poll_port(struct gce_session_priv *s, struct gce_api *a, struct ctl_reader *r, int port, int fd)
{
	char *tail = r->started[port] ? xasprintf("/serialPort?port=%d&start=%llu", port,
						  (unsigned long long)r->next[port])
				      : xasprintf("/serialPort?port=%d&start=0", port);
	char *path = instance_path(s, a, tail);
	json_t *out = NULL;
	int64_t start = 0, next = 0;
	const char *contents;
	enum status rc = gce_compute(a, "GET", path, NULL, &out);

	free(tail);
	free(path);
	if (rc != OK)
		return rc;
	contents = json_string_value(json_object_get(out, "contents"));
	if (!gce_json_int64(out, "next", &next) || !gce_json_int64(out, "start", &start) ||
	    !contents || next < start) {
		json_decref(out);
		return error(ERR_PROTOCOL, "getSerialPortOutput answered without contents, start "
					   "and next");
	}
	if (r->started[port] && (uint64_t)start > r->next[port]) {
		char lost[32];

		snprintf(lost, sizeof(lost), "%llu",
			 (unsigned long long)((uint64_t)start - r->next[port]));
		if (port == 1)
			agent_worker_note(
				"%s bytes of the kernel log were lost (Compute Engine keeps "
				"the last 1 MiB of a serial port)",
				lost);
		else
			ctl_break(r, "%s bytes of the agent's output were lost on serial port 2",
				  lost);
	}
	r->started[port] = true;
	r->next[port] = (uint64_t)next;
	if (port == 1) {
		if (fd >= 0)
			agent_write_all(fd, contents, strlen(contents));
	} else {
		ctl_text(s, a, r, contents, strlen(contents));
	}
	json_decref(out);
	return OK;
}

static char *
instance_status(struct gce_session_priv *s, struct gce_api *a)
{
	char *path = instance_path(s, a, NULL), *st = NULL;
	json_t *out = NULL;

	if (gce_compute(a, "GET", path, NULL, &out) == OK)
		st = xstrdup(json_string_value(json_object_get(out, "status")) ?: "");
	else if (gce_api_last_http(a) == 404)
		st = xstrdup("GONE"), error_clear();
	json_decref(out);
	free(path);
	return st;
}

/* A call on the instance was answered 404: is it the instance that is gone (a spot
 * instance preempted is deleted)? The error is kept when not. */
static bool
instance_gone(struct gce_session_priv *s, struct gce_api *a)
{
	char *why = xstrdup(error_msg()), *st;
	bool gone;

	error_clear();
	st = instance_status(s, a);
	gone = st && !strcmp(st, "GONE");
	error_clear();
	if (!gone)
		error(ERR_NOTFOUND, "%s", why);
	free(st);
	free(why);
	return gone;
}

/* Did Compute Engine preempt the instance (a zonal operation says so)? */
static bool
preempted(struct gce_session_priv *s, struct gce_api *a)
{
	char *path =
		xasprintf("projects/%s/zones/%s/operations?filter=operationType%%3D%%22compute."
			  "instances.preempted%%22",
			  gce_api_project(a), gce_api_zone(a));
	char *tail = xasprintf("/instances/%s", s->name);
	json_t *r = NULL, *it;
	size_t i;
	bool yes = false;

	if (gce_compute(a, "GET", path, NULL, &r) == OK)
		json_array_foreach(json_object_get(r, "items"), i, it)
		{
			const char *t = json_string_value(json_object_get(it, "targetLink"));
			size_t tl = t ? strlen(t) : 0, n = strlen(tail);

			if (tl >= n && !strcmp(t + tl - n, tail))
				yes = true;
		}
	error_clear();
	json_decref(r);
	free(path);
	free(tail);
	return yes;
}

/*
 * The instance stopped (its status st) before its agent ended: why, said;
 * WK_PREEMPTED when Compute Engine took it away, else WK_LOST.
 */
static int
stopped_early(struct gce_session_priv *s, struct gce_api *a, const char *st)
{
	if (preempted(s, a)) {
		agent_worker_say("Compute Engine preempted the instance %s", s->name);
		return WK_PREEMPTED;
	}
	agent_worker_say("the instance %s stopped (%s) before the agent ended: a kernel panic or "
			 "a power-off",
			 s->name, st);
	return WK_LOST;
}

/* Remove the session's objects (its input, results not fetched). */
static void
remove_objects(struct gce_session_priv *s, struct gce_api *a, unsigned inputs)
{
	for (unsigned k = 0; k < inputs; k++) {
		char *object = xasprintf("%s/in-%u", s->prefix, k);

		if (gce_delete_object(a, s->bucket, object) != OK)
			error_clear();
		free(object);
	}
}

static bool
no_room(struct gce_api *a)
{
	const char *reason = gce_api_last_reason(a);

	return reason && (!strcmp(reason, "quotaExceeded") ||
			  !strcmp(reason, "ZONE_RESOURCE_POOL_EXHAUSTED") ||
			  !strcmp(reason, "resourceNotReady"));
}

/*
 * The instance, tried again while Compute Engine has no room for it (a
 * quota, an exhausted zone) with back-off, for as long as transient
 * failures are (FSWB_GCE_RETRY_S).
 */
static enum status
insert_retried(struct gce_session_priv *s, struct gce_api *a, const char *image)
{
	const char *v = getenv("FSWB_GCE_RETRY_S");
	unsigned budget = v && atoi(v) > 0 ? (unsigned)atoi(v) : 300, spent = 0, wait_s = 5;
	enum status rc;

	while ((rc = insert_instance(s, a, image)) != OK && no_room(a) && !agent_worker_stop) {
		if (spent + wait_s > budget) {
			char *why = xstrdup(error_msg());

			rc = error(
				rc,
				"Compute Engine has no room for the instance: %s; tried for %u s "
				"(run fewer shards, or another zone or machine type)",
				why, spent);
			free(why);
			return rc;
		}
		agent_worker_note("Compute Engine has no room for the instance now (%s): trying "
				  "again in %u s",
				  error_msg(), wait_s);
		error_clear();
		for (unsigned i = 0; i < wait_s * 10 && !agent_worker_stop; i++)
			usleep(100000);
		spent += wait_s;
		wait_s = wait_s * 2 > 60 ? 60 : wait_s * 2;
	}
	if (rc != OK && !no_room(a))
		rc = error_prefix(rc, "cannot start the instance %s", s->name);
	return rc;
}

/* The worker's API, its bucket checked; false when not (said). */
static bool
worker_api(struct gce_session_priv *s, struct gce_api **a)
{
	if (open_api(s->key_file, s->project, s->zone, a) == OK &&
	    gce_bucket_check(*a, s->bucket) == OK)
		return true;
	agent_worker_say("%s", error_msg());
	return false;
}

static int
worker(void *arg)
{
	struct gce_session_priv *s = arg;
	struct gce_api *a = NULL;
	struct ctl_reader r = { .line = STRBUF_INIT, .head = STRBUF_INIT };
	struct strbuf in = STRBUF_INIT;
	char *image = NULL;
	enum status rc;
	unsigned inputs = 0, polls = 0;
	bool in_open = true, inserted = false, detached = false;
	int code = WK_OK, con = agent_kept_worker(&s->kept);

	if (!worker_api(s, &a)) {
		code = WK_FAIL;
		goto out;
	}
	if (ensure_image(s, a, &image) != OK) {
		agent_worker_say("%s", error_msg());
		code = WK_FAIL;
		goto out;
	}
	agent_worker_note("starting the instance %s (%s in %s)", s->name, s->machine,
			  gce_api_zone(a));
	mark(s, "inserting");
	if (insert_retried(s, a, image) != OK) {
		agent_worker_say("%s", error_msg());
		code = no_room(a) ? WK_NOROOM : WK_FAIL;
		goto out;
	}
	inserted = true;
	while (!agent_worker_stop) {
		struct pollfd p = { in_open ? 0 : -1, POLLIN, 0 };

		poll(&p, 1, (int)s->poll_ms);
		if (agent_worker_stop)
			break;
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			char buf[65536];
			ssize_t n;

			/* what is there now goes as one object */
			while ((n = read(0, buf, sizeof(buf))) > 0) {
				strbuf_add(&in, buf, (size_t)n);
				if (poll(&p, 1, 50) <= 0 || !(p.revents & POLLIN))
					break;
			}
			if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
				in_open = false;
		}
		if (in.len) {
			if ((rc = send_input(s, a, inputs, in.buf, in.len)) == ERR_NOTFOUND &&
			    instance_gone(s, a)) {
				code = stopped_early(s, a, "deleted");
				break;
			}
			if (rc != OK) {
				agent_worker_say("cannot pass the job to %s: %s", s->name,
						 error_msg());
				code = WK_FAIL;
				break;
			}
			inputs++;
			strbuf_reset(&in);
		}
		if (!in_open && marked(s, "detached")) {
			/* it has everything: it runs on alone */
			agent_worker_note("the instance %s runs on without fswb", s->name);
			detached = true;
			break;
		}
		/* Compute Engine counts reads against a quota: the kernel log every other time */
		if ((rc = poll_port(s, a, &r, 2, -1)) != OK ||
		    ((polls & 1) == 0 && (rc = poll_port(s, a, &r, 1, con)) != OK)) {
			if (rc == ERR_NOTFOUND && instance_gone(s, a)) {
				code = stopped_early(s, a, "deleted");
				break;
			}
			agent_worker_say("cannot read %s's serial output: %s", s->name,
					 error_msg());
			code = WK_FAIL;
			break;
		}
		if (r.broken) {
			code = WK_FAIL;
			break;
		}
		if (r.ended)
			break;
		if (++polls % 5 == 0) {
			char *st = instance_status(s, a);

			if (st && (!strcmp(st, "TERMINATED") || !strcmp(st, "STOPPING") ||
				   !strcmp(st, "GONE") || !strcmp(st, "SUSPENDED"))) {
				/* what it wrote before it stopped */
				if (strcmp(st, "GONE") && poll_port(s, a, &r, 2, -1) == OK &&
				    poll_port(s, a, &r, 1, con) == OK && r.ended) {
					free(st);
					break;
				}
				error_clear();
				code = stopped_early(s, a, st);
				free(st);
				break;
			}
			free(st);
			error_clear();
		}
	}
	if (agent_worker_stop)
		code = WK_STOPPED;
out:
	if (!detached && (inserted || marked(s, "inserting"))) {
		if (inserted && code != WK_STOPPED)
			agent_worker_note("deleting the instance %s", s->name);
		if (a && delete_instance(s, a, code != WK_STOPPED) == OK)
			mark(s, "deleted");
		else
			error_clear();
	}
	if (a && code != WK_STOPPED && !detached)
		remove_objects(s, a, inputs);
	gce_api_close(a);
	strbuf_release(&r.line);
	strbuf_release(&r.head);
	strbuf_release(&in);
	free(image);
	return code;
}

/* The detached instance's objects once its output was read: input, results, PREFIX/out. */
static void
remove_followed(struct gce_session_priv *s, struct gce_api *a, const struct strvec *results)
{
	char *out = xasprintf("%s/out", s->prefix);

	for (size_t i = 0; i < results->n; i++)
		if (gce_delete_object(a, s->bucket, results->v[i]) != OK)
			error_clear();

	for (unsigned k = 0; k < 10000; k++) {
		char *object = xasprintf("%s/in-%u", s->prefix, k);
		enum status rc = gce_delete_object(a, s->bucket, object);

		free(object);
		error_clear();
		if (rc != OK)
			break;
	}
	if (gce_delete_object(a, s->bucket, out) != OK)
		error_clear();
	free(out);
}

/*
 * What the detached instance has uploaded of PREFIX/out after its first
 * from bytes; *len 0 when nothing more (or nothing yet).
 */
static enum status
read_out(struct gce_session_priv *s, struct gce_api *a, uint64_t from, char **data, size_t *len)
{
	char *object = xasprintf("%s/out", s->prefix), *tmp = mark_path(s, "out");
	enum status rc = gce_download_from(a, s->bucket, object, tmp, from, RESULT_MAX);

	*data = NULL;
	*len = 0;
	if (rc != OK && (gce_api_last_http(a) == 404 || gce_api_last_http(a) == 416))
		rc = OK, error_clear();
	else if (rc == OK)
		rc = read_file(tmp, RESULT_MAX, data, len);
	if (rc == OK && from && gce_api_last_http(a) == 200) {
		/* the whole object, the range not honoured: what is new of it */
		if (*len < from) {
			rc = error(ERR_PROTOCOL,
				   "gs://%s/%s shrank: it is not the instance's output", s->bucket,
				   object);
		} else {
			memmove(*data, *data + from, *len - from);
			*len -= from;
		}
	}
	unlink(tmp);
	free(tmp);
	free(object);
	return rc;
}

/*
 * Following a detached instance: the agent's output from PREFIX/out as it
 * grows, as if from serial port 2; input is dropped. It ends with the
 * output's end, or when the instance is gone without it.
 */
static int
follow_worker(void *arg)
{
	struct gce_session_priv *s = arg;
	struct gce_api *a = NULL;
	struct ctl_reader r = { .line = STRBUF_INIT, .head = STRBUF_INIT, .passed = STRVEC_INIT };
	size_t done = 0;
	bool in_open = true, kernel_log = true, last = false;
	int code = WK_OK, con = agent_kept_worker(&s->kept);

	if (!worker_api(s, &a)) {
		code = WK_FAIL;
		goto out;
	}
	agent_worker_note("following the instance %s (its output in gs://%s/%s/out)", s->name,
			  s->bucket, s->prefix);
	while (!agent_worker_stop) {
		struct pollfd p = { in_open ? 0 : -1, POLLIN, 0 };
		char *data = NULL, *st;
		size_t len = 0;

		/* its output comes in steps (fswb-init uploads it every few seconds) */
		if (poll(&p, 1, 5 * (int)s->poll_ms) > 0 &&
		    (p.revents & (POLLIN | POLLHUP | POLLERR))) {
			char buf[65536];

			if (read(0, buf, sizeof(buf)) <= 0)
				in_open =
					false; /* the engine's words went to the instance long ago */
		}
		if (agent_worker_stop)
			break;
		/* the status first: a gone instance uploaded its output before it went */
		st = instance_status(s, a);
		if (!st) {
			agent_worker_say("cannot read the state of %s: %s", s->name, error_msg());
			code = WK_FAIL;
			break;
		}
		last = !strcmp(st, "GONE") || !strcmp(st, "TERMINATED");
		/* only what came since: the object grows by appending */
		if (read_out(s, a, done, &data, &len) != OK) {
			agent_worker_say("cannot read the output of %s: %s", s->name, error_msg());
			free(st);
			code = WK_FAIL;
			break;
		}
		ctl_text(s, a, &r, data, len);
		done += len;
		free(data);
		if (!last && kernel_log && poll_port(s, a, &r, 1, con) != OK) {
			error_clear();
			kernel_log = false;
		}
		if (r.broken) {
			free(st);
			code = WK_FAIL;
			break;
		}
		if (r.ended || last) {
			if (!r.ended)
				code = stopped_early(s, a, st);
			/* it is deleting itself, or it could not: it costs money still */
			if (strcmp(st, "GONE") && delete_instance(s, a, false) != OK)
				error_clear();
			free(st);
			break;
		}
		free(st);
	}
	if (agent_worker_stop)
		code = WK_STOPPED;
	else if (code != WK_FAIL)
		remove_followed(s, a, &r.passed);
out:
	gce_api_close(a);
	strbuf_release(&r.line);
	strbuf_release(&r.head);
	strvec_clear(&r.passed);
	return code;
}

/* ---- the slots ----------------------------------------------------------------- */

static void
reap_instance(const char *key_file, const char *project, const char *zone, const char *name)
{
	struct gce_api *a = NULL;
	char *path;
	json_t *op = NULL;

	if (open_api(*key_file ? key_file : NULL, project, zone, &a) != OK) {
		error_clear();
		return;
	}
	path = xasprintf("projects/%s/zones/%s/instances/%s", project, zone, name);
	if (gce_compute(a, "DELETE", path, NULL, &op) != OK)
		error_clear();
	json_decref(op);
	free(path);
	gce_api_close(a);
}

/* "instance PROJECT ZONE NAME KEYFILE" (KEYFILE "-": the metadata server's token). */
static void
gce_reap(const char *item)
{
	char what[16], project[64], zone[64], name[64];
	int key = 0;

	/* the key file last: its path may hold spaces */
	if (sscanf(item, "%15s %63s %63s %63s %n", what, project, zone, name, &key) == 4 && key &&
	    !strcmp(what, "instance"))
		reap_instance(strcmp(item + key, "-") ? item + key : "", project, zone, name);
}

static void
gce_release(void *priv)
{
	struct gce_session_priv *s = priv;

	agent_kept_release(&s->kept);
	/* a worker killed before it deleted its instance: delete it now */
	if (s->workdir && marked(s, "inserting") && !marked(s, "deleted") && !marked(s, "detached"))
		gce_reap(s->lease_item);
	if (s->workdir && remove_tree(s->workdir) != OK)
		error_clear();
	free(s->key_file);
	free(s->project);
	free(s->zone);
	free(s->bucket);
	free(s->machine);
	free(s->appliance);
	free(s->kernel);
	free(s->initrd);
	free(s->cmdline);
	free(s->app_key);
	free(s->name);
	free(s->prefix);
	free(s->workdir);
	free(s->sizes);
	free(s->notice);
	free(s->lease_item);
	strvec_clear(&s->roles);
	strvec_clear(&s->disks);
	free(s);
}

static enum status
gce_start(struct loop *loop, void *run, const struct session_spec *spec,
	  const struct session_callbacks *cb, void *data, struct lease *lease, void **priv)
{
	struct gce_session_priv *s = xcalloc(1, sizeof(*s));
	const char *v;
	enum status rc;
	char *abs = NULL;

	agent_kept_init(&s->kept, loop, run, spec->slot, cb, data);
	s->kept.pipe.preempted_exit = WK_PREEMPTED;
	s->kept.pipe.noroom_exit = WK_NOROOM;
	s->spot = (v = session_spec_opt(spec, "spot")) && !strcmp(v, "yes");
	s->detach = spec->detach;
	s->follow = spec->follow != NULL;
	strvec_init(&s->roles);
	strvec_init(&s->disks);
	if (!s->follow && (!spec->appliance || !spec->kernel))
		BUG("a gce session without the appliance or a kernel");
	s->boot = session_spec_seconds(spec, "boot", BOOT_DEFAULT);
	s->silence = session_spec_seconds(spec, "silence", SILENCE_DEFAULT);
	s->poll_ms = POLL_MS_DEFAULT;
	if ((v = getenv("FSWB_GCE_POLL_MS")) && atoi(v) >= 50 && atoi(v) <= 60000)
		s->poll_ms = (unsigned)atoi(v);
	if ((v = session_spec_opt(spec, "key"))) {
		abs = realpath(v, NULL);
		if (!abs) {
			rc = error(ERR_NOTFOUND, "the key file '%s': %s", v, strerror(errno));
			goto fail;
		}
		s->key_file = abs;
	}
	s->project = (v = session_spec_opt(spec, "project")) ? xstrdup(v) : NULL;
	if (!s->project && s->key_file) {
		/* the key's project, for the lease (gce_api_open checks the key) */
		json_t *k = json_load_file(s->key_file, 0, NULL);
		const char *p = json_string_value(json_object_get(k, "project_id"));

		if (p && project_check(p) == OK)
			s->project = xstrdup(p);
		error_clear();
		json_decref(k);
	}
	s->zone = (v = session_spec_opt(spec, "zone")) ? xstrdup(v) : NULL;
	s->bucket = (v = session_spec_opt(spec, "bucket")) ? xstrdup(v) : NULL;
	if (!s->zone || !s->bucket)
		BUG("a gce session without a zone or bucket (check_plan)");
	s->machine = xstrdup((v = session_spec_opt(spec, "machine-type")) ? v : MACHINE_DEFAULT);
	if (s->follow) {
		if (strncmp(spec->follow, "fswb-", 5) || !name_chars(spec->follow, "-", 63)) {
			rc = error(ERR_INVALID, "'%.80s' names no instance of fswb's",
				   spec->follow);
			goto fail;
		}
		s->name = xstrdup(spec->follow);
	} else {
		s->appliance = xstrdup(spec->appliance);
		s->kernel = xstrdup(spec->kernel);
		s->initrd = spec->initrd ? xstrdup(spec->initrd) : NULL;
		s->cmdline = spec->cmdline ? xstrdup(spec->cmdline) : NULL;
	}
	if (s->appliance) {
		/* the appliance's cache directory is named by its key */
		char *dir = xstrdup(spec->appliance), *slash = strrchr(dir, '/');

		if (slash)
			*slash = 0;
		s->app_key = xstrdup(strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir);
		free(dir);
	}
	rc = lease ? lease_add_path(lease, spec->workdir) : OK;
	if (rc == OK)
		rc = mkdir_p(spec->workdir, 0700);
	if (rc != OK)
		goto fail;
	s->workdir = xstrdup(spec->workdir);
	if (!s->name) {
		static unsigned n;
		unsigned long long id =
			((unsigned long long)getpid() << 20) ^ (unsigned long long)time(NULL);

		s->name = xasprintf("fswb-%llx-%u-%u", id & 0xffffffffffull, spec->slot, n++);
	}
	s->prefix = xasprintf("fswb/%s", s->name);
	s->sizes = xcalloc(spec->ndisks + 1, sizeof(*s->sizes));
	for (size_t i = 0; i < spec->ndisks; i++) {
		char *dn = device_name(spec->disks[i].role);

		if (spec->disks[i].path) {
			rc = error(ERR_INVALID, "a Compute Engine instance gets disks of its own: "
						"it takes no device paths");
			free(dn);
			goto fail;
		}
		strvec_push(&s->roles, spec->disks[i].role);
		strvec_pushf(&s->disks, "/dev/fswb/%s", dn);
		s->sizes[s->roles.n - 1] = spec->disks[i].size;
		free(dn);
	}
	s->lease_item = xasprintf("instance %s %s %s %s", s->project ? s->project : "-", s->zone,
				  s->name, s->key_file ? s->key_file : "-");
	if (!s->project) {
		rc = error(ERR_INVALID, "the key %s names no project: give -o project=PROJECT",
			   s->key_file);
		goto fail;
	}
	/* a followed instance ends itself: a killed fswb leaves it to do so */
	if (lease && !s->follow) {
		rc = lease_add_item(lease, s->lease_item);
		if (rc != OK)
			goto fail;
	}
	rc = agent_kept_start(&s->kept, s->follow ? follow_worker : worker, s, "fswb gce", lease);
	if (rc != OK)
		goto fail;
	s->notice = s->follow ? xasprintf("following the detached Compute Engine instance %s "
					  "(%s): it deletes itself when it is done",
					  s->name, s->zone)
			      : xasprintf("the test machine is the Compute Engine instance %s (%s, "
					  "%s): it costs money while it runs",
					  s->name, s->machine, s->zone);
	*priv = s;
	return OK;
fail:
	gce_release(s);
	return rc;
}

static char *
gce_detach(void *priv, struct lease *lease)
{
	struct gce_session_priv *s = priv;

	if (!s->detach || s->follow)
		BUG("gce_detach of a session that cannot detach");
	mark(s, "detached");
	if (lease_drop_item(lease, s->lease_item) != OK)
		error_clear(); /* a killed fswb's next start would delete it: said by the lease */
	agent_pipe_close_input(&s->kept.pipe);
	return xstrdup(s->name);
}

static char *
gce_disk_path(void *priv, size_t index)
{
	struct gce_session_priv *s = priv;

	if (index >= s->disks.n)
		BUG("disk index %zu out of range", index);
	return xstrdup(s->disks.v[index]);
}

static unsigned
gce_boot_limit(void *priv)
{
	/* the image's making, upload and import come first, once */
	return ((struct gce_session_priv *)priv)->boot + 60 * 60;
}

static unsigned
gce_silence_limit(void *priv)
{
	return ((struct gce_session_priv *)priv)->silence;
}

static const char *
gce_notice(void *priv)
{
	return ((struct gce_session_priv *)priv)->notice;
}

static char *
gce_cost(const struct plan *plan, unsigned machines, double seconds)
{
	const char *type = plan_backend_opt(plan, "machine-type"),
		   *spot = plan_backend_opt(plan, "spot");
	unsigned n = machines ? machines : plan->shards ? plan->shards : 1;
	struct strbuf sb = STRBUF_INIT;
	char took[32];
	double usd, all;

	if (!type)
		type = MACHINE_DEFAULT;
	if (spot && strcmp(spot, "yes"))
		spot = NULL;
	strbuf_addf(&sb, "Compute Engine: %u %s%s instance%s", n, type, spot ? " spot" : "",
		    n == 1 ? "" : "s");
	if (price_of(type, &usd)) {
		strbuf_addf(&sb,
			    " at %s $%.3f an hour each (%s on-demand list price of %s%s, disks "
			    "and traffic extra): %s $%.2f an hour for the run",
			    spot ? "most" : "about", usd, PRICES_REGION, PRICES_DATE,
			    spot ? "; spot prices are lower and change" : "",
			    spot ? "at most" : "about", usd * n);
		/* Compute Engine bills by the second, a minute at least */
		all = usd * n * (seconds < 60 ? 60 : seconds) / 3600;
		if (seconds > 0)
			strbuf_addf(&sb, "; it is expected to take %s: %s $%.2f in all",
				    format_duration(seconds, took, sizeof(took)),
				    all < 0.01 ? "less than"
				    : spot     ? "at most"
					       : "about",
				    all < 0.01 ? 0.01 : all);
		else
			strbuf_adds(&sb, "; how long it takes is not known yet");
	} else {
		strbuf_adds(&sb, ", whose price fswb does not know (see "
				 "cloud.google.com/compute/vm-instance-pricing); they cost money "
				 "while the run lasts");
		if (seconds > 0)
			strbuf_addf(&sb, ", expected to take %s",
				    format_duration(seconds, took, sizeof(took)));
	}
	strbuf_adds(&sb, plan->detach ? "; they delete themselves when they are done"
				      : "; they are deleted at its end");
	return strbuf_detach(&sb);
}

static enum status
probe_api(const struct plan *plan, struct gce_api **a, char **where)
{
	const char *bucket = plan_backend_opt(plan, "bucket"),
		   *zone = plan_backend_opt(plan, "zone");
	char *path;
	json_t *out = NULL;
	enum status rc;

	if (!zone || !bucket)
		return error(ERR_INVALID, "the gce backend needs -o zone=ZONE and -o bucket=BUCKET "
					  "(and -o key=FILE, a service account's JSON key, unless "
					  "fswb runs on Compute Engine)");
	{
		/* a probe and doctor wait for a network that is down for 20 s, not minutes */
		struct gce_api_opts o = { plan_backend_opt(plan, "key"),
					  plan_backend_opt(plan, "project"), zone, 20 };

		rc = gce_api_open(&o, a);
	}
	if (rc != OK)
		return rc;
	path = xasprintf("projects/%s/zones/%s", gce_api_project(*a), zone);
	rc = gce_compute(*a, "GET", path, NULL, &out);
	json_decref(out);
	free(path);
	if (rc != OK)
		return error_prefix(rc, "project %s, zone %s", gce_api_project(*a), zone);
	rc = gce_bucket_check(*a, bucket);
	if (rc != OK)
		return error_prefix(rc, "bucket %s", bucket);
	*where = xasprintf("project %s, zone %s, bucket %s%s%s", gce_api_project(*a), zone, bucket,
			   gce_api_client_email(*a) ? ", as " : "",
			   gce_api_client_email(*a) ? gce_api_client_email(*a) : "");
	return OK;
}

/* fswb's instances in the zone (labels.fswb=1), or images in the project: the list's items. */
static enum status
list_labelled(struct gce_api *a, bool images, json_t **items)
{
	char *path = images ? xasprintf("projects/%s/global/images?filter=labels.fswb%%3D1",
					gce_api_project(a))
			    : xasprintf("projects/%s/zones/%s/instances?filter=labels.fswb%%3D1",
					gce_api_project(a), gce_api_zone(a));
	json_t *r = NULL;
	enum status rc = gce_compute(a, "GET", path, NULL, &r);

	free(path);
	*items = json_array();
	if (rc == OK) {
		json_t *it;
		size_t i;

		json_array_foreach(json_object_get(r, "items"), i, it)
		{
			const char *n = json_string_value(json_object_get(it, "name"));
			const char *fswb = json_string_value(
				json_object_get(json_object_get(it, "labels"), "fswb"));

			/* Google filters; a filter not honoured must not hand out others' */
			if (n && !strncmp(n, "fswb-", 5) && fswb && !strcmp(fswb, "1"))
				json_array_append(*items, it);
		}
	}
	json_decref(r);
	return rc;
}

/* The instance runs a detached run (fswb run --detach): it deletes itself. */
static bool
detached_label(json_t *it)
{
	const char *v =
		json_string_value(json_object_get(json_object_get(it, "labels"), "fswb-detach"));

	return v && !strcmp(v, "yes");
}

/* fswb's instances in the zone: "NAME (STATUS)" into out. */
static enum status
list_instances(struct gce_api *a, struct strvec *out)
{
	json_t *items, *it;
	size_t i;
	enum status rc = list_labelled(a, false, &items);

	json_array_foreach(items, i, it)
	{
		const char *st = json_string_value(json_object_get(it, "status"));

		strvec_pushf(out, "%s (%s%s)", json_string_value(json_object_get(it, "name")),
			     st ? st : "?",
			     detached_label(it) ? ", a detached run's: it ends itself" : "");
	}
	json_decref(items);
	return rc;
}

/* Whose the instance it is: NULL when this host's and no running fswb holds it, else why kept. */
static const char *
instance_owner(json_t *it, const char *zone, const struct strvec *held)
{
	const char *name = json_string_value(json_object_get(it, "name"));
	const char *host =
		json_string_value(json_object_get(json_object_get(it, "labels"), "fswb-host"));

	for (size_t i = 0; i < held->n; i++) {
		char what[16], z[64], n[64];

		if (sscanf(held->v[i], "%15s %*s %63s %63s", what, z, n) == 3 &&
		    !strcmp(what, "instance") && !strcmp(z, zone) && !strcmp(n, name))
			return "a running fswb's";
	}
	if (!host || strcmp(host, host_label()))
		return "another host's fswb's: delete it there, or in the Cloud console";
	if (detached_label(it) &&
	    strcmp(json_string_value(json_object_get(it, "status")) ?: "", "TERMINATED"))
		return "a detached run's: it deletes itself when it is done; fswb results fetch "
		       "collects its results";
	return NULL;
}

/* The images made on this host (CACHE/gce/fswb-*.tar.gz), removed. */
static void
remove_tarballs(void)
{
	char *cache = NULL;
	DIR *d;
	struct dirent *de;

	if (fswb_dir_make(DIR_CACHE, "gce", &cache) != OK) {
		error_clear();
		return;
	}
	d = opendir(cache);
	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (!strncmp(de->d_name, "fswb-", 5) && n > 7 &&
		    !strcmp(de->d_name + n - 7, ".tar.gz")) {
			char *p = path_join(cache, de->d_name);

			unlink(p);
			free(p);
		}
	}
	if (d)
		closedir(d);
	free(cache);
}

/*
 * What fswb keeps (the wizard's x, `fswb doctor --forget`): its images in
 * the project and the tarballs this host made of them (CACHE/gce), unless a
 * run here is going; the instances of this host's that no running fswb holds. Others'
 * instances are kept, and said.
 */
static enum status
gce_forget(const struct plan *plan, char **said)
{
	struct gce_api *a = NULL;
	struct strvec held = STRVEC_INIT, gone = STRVEC_INIT, kept = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	json_t *items = NULL, *it;
	char *where = NULL;
	size_t i, images = 0;
	enum status rc = probe_api(plan, &a, &where);

	if (rc != OK)
		goto out;
	backend_leases_held("gce", &held);
	rc = list_labelled(a, false, &items);
	json_array_foreach(items, i, it)
	{
		const char *name = json_string_value(json_object_get(it, "name"));
		const char *whose;
		char *path;

		if (rc != OK)
			break;
		if ((whose = instance_owner(it, gce_api_zone(a), &held))) {
			strvec_pushf(&kept, "%s (%s)", name, whose);
			continue;
		}
		path = xasprintf("projects/%s/zones/%s/instances/%s", gce_api_project(a),
				 gce_api_zone(a), name);
		rc = delete_resource(a, path, true);
		if (rc == OK)
			strvec_pushf(&gone, "the instance %s", name);
		free(path);
	}
	json_decref(items);
	items = NULL;
	if (rc == OK && !held.n) { /* a run going here may be making or using one */
		rc = list_labelled(a, true, &items);
		json_array_foreach(items, i, it)
		{
			const char *name = json_string_value(json_object_get(it, "name"));
			char *path;

			if (rc != OK)
				break;
			path = xasprintf("projects/%s/global/images/%s", gce_api_project(a), name);
			rc = delete_resource(a, path, true);
			if (rc == OK)
				images++;
			free(path);
		}
		if (rc == OK)
			remove_tarballs();
	} else if (rc == OK) {
		strvec_push(&kept, "the images (a run here is going)");
	}
	if (images)
		strvec_pushf(&gone, "%zu image%s of fswb's", images, images == 1 ? "" : "s");
	if (rc == OK) {
		char *g = strvec_join(&gone, ", "), *k = strvec_join(&kept, ", ");

		strbuf_addf(&sb, "%s%s in %s", gone.n ? "deleted " : "nothing of fswb's to delete",
			    g, where);
		if (kept.n)
			strbuf_addf(&sb, "; kept %s", k);
		*said = strbuf_detach(&sb);
		free(g);
		free(k);
	}
out:
	json_decref(items);
	strvec_clear(&held);
	strvec_clear(&gone);
	strvec_clear(&kept);
	strbuf_release(&sb);
	free(where);
	gce_api_close(a);
	return rc;
}

/*
 * For the probe: what fswb keeps in the project that forget deletes (its
 * images, this host's instances that no running fswb holds), or NULL.
 */
static char *
kept_here(struct gce_api *a)
{
	struct strvec held = STRVEC_INIT, left = STRVEC_INIT;
	json_t *items = NULL, *it;
	size_t i, images = 0;
	char *out = NULL;

	backend_leases_held("gce", &held);
	if (list_labelled(a, true, &items) == OK)
		images = json_array_size(items);
	json_decref(items);
	if (list_labelled(a, false, &items) == OK)
		json_array_foreach(items, i, it)
		{
			if (!instance_owner(it, gce_api_zone(a), &held))
				strvec_push(&left, json_string_value(json_object_get(it, "name")));
		}
	json_decref(items);
	error_clear();
	if (images || left.n) {
		char *names = strvec_join(&left, ", ");

		out = xasprintf("%zu image%s of fswb's (reused by runs of the same appliance and "
				"kernel)%s%s",
				images, images == 1 ? "" : "s",
				left.n ? "; instances left behind, which cost money: " : "", names);
		free(names);
	}
	strvec_clear(&held);
	strvec_clear(&left);
	return out;
}

static enum status
gce_probe(const struct plan *plan, struct backend_probe *out)
{
	struct gce_api *a = NULL;
	char *where = NULL;
	enum status rc;

	if (!plan_backend_opt(plan, "zone") || !plan_backend_opt(plan, "bucket")) {
		out->summary = xstrdup("not usable yet: no zone and bucket named");
		out->fix = xstrdup("zone=ZONE bucket=BUCKET key=FILE (-o; o)");
		return OK;
	}
	rc = probe_api(plan, &a, &where);
	if (rc != OK) {
		out->usable = false;
		out->summary = xstrdup("not usable");
		out->why = xstrdup(error_msg());
		out->fix = xstrdup("fswb doctor --backend gce -o key=FILE -o zone=ZONE -o "
				   "bucket=BUCKET says what is wrong; see `man fswb`, THE GCE "
				   "BACKEND");
		error_clear();
		gce_api_close(a);
		return OK;
	}
	out->usable = true;
	out->summary = xasprintf("ready: %s", where);
	out->kept = kept_here(a);
	if (!plan_backend_opt(plan, "cost")) {
		out->confirm = gce_cost(plan, 0, 0);
		out->confirm_opt = xstrdup("cost=ok");
	}
	free(where);
	gce_api_close(a);
	return OK;
}

static size_t
gce_doctor(struct loop *loop, const struct backend_doctor_opts *o, struct backend_finding *out,
	   size_t max)
{
	struct gce_api *a = NULL;
	struct strvec left = STRVEC_INIT;
	char *where = NULL;
	size_t n = 0;

	(void)loop;
	if (!o->plan || !o->plan->backend || strcmp(o->plan->backend, "gce")) {
		backend_finding_add(
			out, max, &n, FINDING_OK, "project",
			xstrdup("none named here; fswb doctor --backend gce -o key=FILE -o "
				"zone=ZONE -o bucket=BUCKET checks one"),
			NULL);
		return n;
	}
	if (probe_api(o->plan, &a, &where) != OK) {
		backend_finding_add(out, max, &n, FINDING_MISSING, "Compute Engine",
				    xstrdup(error_msg()), NULL);
		error_clear();
		gce_api_close(a);
		return n;
	}
	backend_finding_add(out, max, &n, FINDING_OK, "Compute Engine", where, NULL);
	if (list_instances(a, &left) != OK) {
		backend_finding_add(out, max, &n, FINDING_WARN, "fswb's instances",
				    xasprintf("cannot list them: %s", error_msg()), NULL);
		error_clear();
	} else if (!left.n) {
		backend_finding_add(out, max, &n, FINDING_OK, "fswb's instances",
				    xasprintf("none in %s", gce_api_zone(a)), NULL);
	} else {
		char *names = strvec_join(&left, ", ");

		backend_finding_add(
			out, max, &n, FINDING_WARN, "fswb's instances",
			xasprintf("%zu in %s, which cost money while they exist: %s", left.n,
				  gce_api_zone(a), names),
			xstrdup("a run still going has them; else the next fswb run deletes "
				"those of a killed fswb, and fswb doctor --backend gce ... "
				"--forget "
				"those of this host's that no running fswb holds"));
		free(names);
	}
	strvec_clear(&left);
	gce_api_close(a);
	return n;
}

static enum status
gce_init(void)
{
	return gce_api_global_init();
}

static void
gce_cleanup(void)
{
	gce_api_global_cleanup();
}

static const struct backend_program gce_programs[] = {
	{ "grub-mkstandalone", "--version", "makes the image's boot loader (grub-efi-amd64-bin)",
	  false },
	{ "mformat", "--version", "makes the image's EFI partition (mtools)", false },
	{ "mcopy", "--version", "writes the image's EFI partition (mtools)", false },
	{ NULL, NULL, NULL, false },
};

const struct backend_ops gce_backend = {
	.name = "gce",
	.description = "Google Compute Engine instances over REST: your kernel, many at once",
	.caps = BACKEND_BOOTS_KERNEL | BACKEND_APPLIANCE | BACKEND_PARALLEL | BACKEND_COSTS |
		BACKEND_DETACHES,
	.options = gce_options,
	.init = gce_init,
	.cleanup = gce_cleanup,
	.programs = gce_programs,
	.doctor = gce_doctor,
	.forget = gce_forget,
	.probe = gce_probe,
	.start = gce_start,
	.send = agent_kept_send,
	.cancel = agent_kept_cancel,
	.disk_path = gce_disk_path,
	.release = gce_release,
	.boot_limit = gce_boot_limit,
	.silence_limit = gce_silence_limit,
	.notice = gce_notice,
	.reap = gce_reap,
	.check_plan = gce_check_plan,
	.cost = gce_cost,
	.detach = gce_detach,
};
