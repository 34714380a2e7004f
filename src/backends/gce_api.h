/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Google Compute Engine and Cloud Storage: authentication and a small
 * blocking REST client (libcurl's easy interface), for the gce backend's
 * workers and its probe worker.
 *
 * Authentication: a service-account JSON key (mode 0600 or stricter, owned
 * by us, not a symbolic link, at most 64 KiB) signs a JWT (RS256) that the
 * key's token_uri trades for an access token; without a key the token comes
 * from the metadata server (fswb running on a Compute Engine machine). A
 * token is renewed when less than 60 s of it remain, and once more when a
 * call answers 401 (that call is then made again). Keys, JWTs and tokens are
 * never printed nor put in a message, and are wiped on gce_api_close().
 *
 * Every call retries transient failures (no connection, a name that does
 * not resolve, connection reset, empty reply, time-out, HTTP
 * 408/429/500/502/503/504, a 403 rateLimitExceeded) with exponential
 * back-off and jitter (1, 2, 4 .. 32 s) for up to 5 minutes in all, then
 * fails with ERR_TIMEOUT ("Compute Engine did not answer for 300 s: ...").
 * A POST or DELETE through gce_compute() gets a requestId query parameter
 * (one UUID per gce_compute() call, kept across its retries), so that
 * Compute Engine runs a retried insert only once; operations' .../wait is
 * the exception (it is idempotent and takes no requestId).
 *
 * The environment overrides (tests, private endpoints):
 *	FSWB_GCE_COMPUTE_URL   https://compute.googleapis.com/compute/v1
 *	FSWB_GCE_STORAGE_URL   https://storage.googleapis.com
 *	                       (JSON API BASE/storage/v1, uploads BASE/upload/storage/v1)
 *	FSWB_GCE_METADATA_URL  http://metadata.google.internal/computeMetadata/v1
 *	FSWB_GCE_RETRY_S       how long transient failures are retried (300)
 * The token endpoint is the key's token_uri (https://oauth2.googleapis.com/token
 * when the key has none).
 *
 * Requests time out after 120 s (connecting after 10 s); uploads and
 * downloads instead fail when less than 1 byte/s moves for 60 s. Answers
 * are at most 8 MiB and must be JSON objects. curl never touches signals
 * (CURLOPT_NOSIGNAL); SIGPIPE is blocked in the calling thread during a
 * transfer. One struct gce_api is used by one thread at a time.
 */
#ifndef FSWB_BACKENDS_GCE_API_H
#define FSWB_BACKENDS_GCE_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* curl_global_init, once per process before any thread; the cleanup at exit. */
enum status gce_api_global_init(void);
void gce_api_global_cleanup(void);

struct gce_api; /* opaque */

struct gce_api_opts {
	const char *key_file; /* service-account JSON key; NULL: the metadata server's token */
	const char *project;  /* NULL: the key's project_id, or the metadata server's project */
	const char *zone;     /* NULL: the metadata server's zone (on GCE), else none */
	unsigned retry_max;   /* cap on the retries' time, s (a probe's); 0: none */
};

/*
 * Read the key (or ask the metadata server) and get a first token, so that
 * a bad key or a missing permission shows here.
 */
enum status gce_api_open(const struct gce_api_opts *o, struct gce_api **out);
void gce_api_close(struct gce_api *a);
const char *gce_api_project(const struct gce_api *a);
const char *gce_api_zone(const struct gce_api *a);	   /* NULL when none was given nor found */
const char *gce_api_client_email(const struct gce_api *a); /* NULL on the metadata path */

/*
 * One call. path: relative to the compute base
 * ("projects/P/zones/Z/instances"), or an absolute Compute Engine URL (an
 * operation's selfLink: its "projects/..." part is taken onto the compute
 * base; any other absolute URL is refused, so the token goes nowhere else).
 * body NULL or a JSON object (borrowed); *out (out may be NULL) the parsed
 * response, NULL for an empty one, owned by the caller. HTTP errors become
 * ERR_NOTFOUND (404), ERR_EXISTS (409), ERR_LIMIT (quota, rate limits),
 * ERR_INVALID (400, 401, 403), ERR_PROTOCOL (others) with Google's message
 * and reason ("Quota 'CPUS' exceeded. Limit: 24.0 (quotaExceeded)").
 */
enum status gce_compute(struct gce_api *a, const char *method, const char *path, json_t *body,
			json_t **out);
/*
 * The HTTP code of the last answer (0: none) and Google's reason for the last
 * failure ("notFound", "quotaExceeded", "ZONE_RESOURCE_POOL_EXHAUSTED" from an
 * operation's error), "" when none; valid until the next call.
 */
long gce_api_last_http(const struct gce_api *a);
const char *gce_api_last_reason(const struct gce_api *a);

/*
 * Wait for an operation (its JSON as an insert or delete returned it,
 * borrowed) to be DONE, at most limit_s seconds (ERR_TIMEOUT then), polling
 * its .../operations/NAME/wait. An operation that ended with an error
 * becomes an ERR_* (ERR_LIMIT for quotas and exhausted zones, ERR_NOTFOUND,
 * ERR_EXISTS, ERR_IO otherwise) with its message and its first error code
 * as the reason.
 */
enum status gce_wait_op(struct gce_api *a, json_t *op, unsigned limit_s);

/* Cloud Storage. object: the plain name ("runs/x/results.tar"), escaped here. */
enum status gce_upload_file(struct gce_api *a, const char *bucket, const char *object,
			    const char *path);
enum status gce_upload_mem(struct gce_api *a, const char *bucket, const char *object,
			   const void *buf, size_t len);
/*
 * The object's bytes into path (written to path.part, renamed when whole),
 * at most max bytes (more: ERR_LIMIT, the part removed). ERR_NOTFOUND when
 * there is no such object.
 */
enum status gce_download_file(struct gce_api *a, const char *bucket, const char *object,
			      const char *path, uint64_t max);
/* The same from byte from on (a ranged read); 416 (ERR_INVALID) when the object is not longer. */
enum status gce_download_from(struct gce_api *a, const char *bucket, const char *object,
			      const char *path, uint64_t from, uint64_t max);
/* ERR_NOTFOUND when there is no such object (already deleted). */
enum status gce_delete_object(struct gce_api *a, const char *bucket, const char *object);
/*
 * Does the bucket exist and may we use it? Lists at most one object
 * (storage.objects.list, which roles/storage.objectUser and objectAdmin
 * grant; GET b/BUCKET would need storage.buckets.get, which they do not).
 */
enum status gce_bucket_check(struct gce_api *a, const char *bucket);

/* s percent-encoded for a URL path segment or query value ('/' too). free() it. */
char *gce_escape(const char *s);
/* An int64 JSON member that may be a string or a number ("start": "1024"). */
bool gce_json_int64(json_t *obj, const char *key, int64_t *out);

/* ---- Internal, exposed for the unit tests. ---- */

struct gce_key {
	char *client_email;
	char *private_key; /* PEM, wiped on release */
	char *token_uri;
	char *project_id; /* NULL when the key has none */
};

/* Read and check a service-account key file (see above). */
enum status gce_key_load(const char *path, struct gce_key *k);
void gce_key_release(struct gce_key *k);

/* A signed JWT (RS256) for the token endpoint aud. free() it (it is a secret). */
enum status gce_jwt(const char *pem, const char *iss, const char *aud, const char *scope,
		    int64_t now, char **jwt);

/*
 * An error answer as text: "MESSAGE (REASON)" from Google's envelopes
 * ({"error": {"message", "errors": [{"reason"}]}}, OAuth's {"error",
 * "error_description"}), else "HTTP 502 from URL". *reason (NULL when none,
 * free() it). free() the text.
 */
char *gce_error_text(long http, const char *url, const char *body, size_t len, char **reason);
/* The same from an operation's "error" member ({"errors": [{"code", "message"}]}). */
char *gce_op_error_text(json_t *error, char **reason);
/* The status for an HTTP code (0 for an operation's error) and reason. */
enum status gce_error_status(long http, const char *reason);

#endif
