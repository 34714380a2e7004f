/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Compute Engine and Cloud Storage over HTTPS: see gce_api.h.
 *
 * Secrets (the private key, JWTs, tokens, the form that carries a JWT, the
 * Authorization header) live in buffers that are wiped before they are
 * freed, and never reach error(): messages name files, URLs and Google's
 * answers only. No CURLOPT_VERBOSE.
 */
#include "backends/gce_api.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

#define KEY_MAX	      (64 * 1024)
#define RESPONSE_MAX  (8 * 1024 * 1024)
#define RETRY_DEFAULT 300
#define TOKEN_MARGIN  60
#define SCOPE	      "https://www.googleapis.com/auth/cloud-platform"
#define TOKEN_URI     "https://oauth2.googleapis.com/token"

struct gce_api {
	CURL *curl;
	char errbuf[CURL_ERROR_SIZE];
	char *key_file;
	struct gce_key key; /* empty on the metadata path */
	bool metadata;
	char *project;
	char *zone;
	char *token;	     /* secret */
	double token_expiry; /* monotonic seconds */
	bool had_token;
	char *compute_url;
	char *storage_url;
	char *metadata_url;
	unsigned retry_s;
	unsigned retry_max; /* 0: no cap */
	long last_http;
	char *last_reason;
};

static bool curl_ready;

enum status
gce_api_global_init(void)
{
	CURLcode cc;

	if (curl_ready)
		return OK;
	cc = curl_global_init(CURL_GLOBAL_DEFAULT);
	if (cc != CURLE_OK)
		return error(ERR_IO, "cannot initialise libcurl: %s", curl_easy_strerror(cc));
	curl_ready = true;
	return OK;
}

void
gce_api_global_cleanup(void)
{
	if (curl_ready)
		curl_global_cleanup();
	curl_ready = false;
}

static double
mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
sleep_s(double s)
{
	double until = mono_now() + s;
	double left;

	while ((left = until - mono_now()) > 0) {
		struct timespec ts = { .tv_sec = (time_t)left,
				       .tv_nsec = (long)((left - (double)(time_t)left) * 1e9) };
		nanosleep(&ts, NULL);
	}
}

static void
free_secret(char *s)
{
	if (s) {
		OPENSSL_cleanse(s, strlen(s));
		free(s);
	}
}

static void
strbuf_release_secret(struct strbuf *sb)
{
	if (sb->alloc)
		OPENSSL_cleanse(sb->buf, sb->alloc);
	strbuf_release(sb);
}

/* ---- Small pure helpers ---- */

char *
gce_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	struct strbuf sb = STRBUF_INIT;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~') {
			strbuf_addch(&sb, *p);
		} else {
			strbuf_addch(&sb, '%');
			strbuf_addch(&sb, hex[*p >> 4]);
			strbuf_addch(&sb, hex[*p & 15]);
		}
	}
	return strbuf_detach(&sb);
}

bool
gce_json_int64(json_t *obj, const char *key, int64_t *out)
{
	json_t *v = json_object_get(obj, key);

	if (json_is_integer(v)) {
		*out = (int64_t)json_integer_value(v);
		return true;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		char *end;
		long long n;

		if (!*s || (*s != '-' && (*s < '0' || *s > '9')))
			return false;
		errno = 0;
		n = strtoll(s, &end, 10);
		if (errno || *end || end == s)
			return false;
		*out = (int64_t)n;
		return true;
	}
	return false;
}

static const char *
jstr(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static void
b64url(struct strbuf *sb, const unsigned char *p, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

		strbuf_addch(sb, tab[v >> 18 & 63]);
		strbuf_addch(sb, tab[v >> 12 & 63]);
		strbuf_addch(sb, tab[v >> 6 & 63]);
		strbuf_addch(sb, tab[v & 63]);
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)p[i] << 16;

		strbuf_addch(sb, tab[v >> 18 & 63]);
		strbuf_addch(sb, tab[v >> 12 & 63]);
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;

		strbuf_addch(sb, tab[v >> 18 & 63]);
		strbuf_addch(sb, tab[v >> 12 & 63]);
		strbuf_addch(sb, tab[v >> 6 & 63]);
	}
}

/* ---- The key and the JWT ---- */

void
gce_key_release(struct gce_key *k)
{
	free(k->client_email);
	free_secret(k->private_key);
	free(k->token_uri);
	free(k->project_id);
	memset(k, 0, sizeof(*k));
}

static enum status
key_field(json_t *root, const char *path, const char *field, bool required, char **out)
{
	json_t *v = json_object_get(root, field);

	*out = NULL;
	if (!v && !required)
		return OK;
	if (!json_is_string(v) || !*json_string_value(v))
		return error(ERR_INVALID,
			     "the key file '%s' has no '%s': download a new JSON key of the "
			     "service account (gcloud iam service-accounts keys create)",
			     path, field);
	*out = xstrdup(json_string_value(v));
	return OK;
}

enum status
gce_key_load(const char *path, struct gce_key *k)
{
	struct strbuf text = STRBUF_INIT;
	struct stat st;
	json_error_t jerr;
	json_t *root = NULL;
	const char *type;
	enum status rc;
	int fd;

	memset(k, 0, sizeof(*k));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == ELOOP)
		return error(
			ERR_INVALID,
			"the key file '%s' is a symbolic link: give the path of the file itself",
			path);
	if (fd < 0)
		return error(errno == ENOENT ? ERR_NOTFOUND : ERR_IO,
			     "cannot open the key file '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = error(ERR_IO, "cannot read the key file '%s': %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = error(ERR_INVALID, "the key file '%s' is not a regular file", path);
		goto out;
	}
	if (st.st_uid != geteuid()) {
		rc = error(ERR_INVALID,
			   "the key file '%s' belongs to another user (uid %u): copy it and "
			   "chmod 600 the copy",
			   path, (unsigned)st.st_uid);
		goto out;
	}
	if (st.st_mode & 077) {
		rc = error(ERR_INVALID,
			   "the key file '%s' can be read by others (mode %04o): chmod 600 '%s'",
			   path, (unsigned)(st.st_mode & 07777), path);
		goto out;
	}
	if (st.st_size > KEY_MAX) {
		rc = error(ERR_LIMIT,
			   "the key file '%s' is %lld bytes, more than a service-account key "
			   "(at most %d): is it the right file?",
			   path, (long long)st.st_size, KEY_MAX);
		goto out;
	}
	strbuf_grow(&text, KEY_MAX + 1);
	for (;;) {
		ssize_t n = read(fd, text.buf + text.len, KEY_MAX + 1 - text.len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = error(ERR_IO, "cannot read the key file '%s': %s", path,
				   strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		text.len += (size_t)n;
		if (text.len > KEY_MAX) {
			rc = error(ERR_LIMIT, "the key file '%s' is larger than %d bytes", path,
				   KEY_MAX);
			goto out;
		}
	}
	text.buf[text.len] = '\0';
	/* jerr.text may quote the key: only its position goes in the message. */
	root = json_loadb(text.buf, text.len, 0, &jerr);
	if (!json_is_object(root)) {
		rc = error(ERR_PARSE,
			   "the key file '%s' is not a JSON object (line %d, column %d): give "
			   "the service account's JSON key as downloaded",
			   path, jerr.line, jerr.column);
		goto out;
	}
	type = jstr(root, "type");
	if (!type || strcmp(type, "service_account") != 0) {
		rc = error(ERR_INVALID,
			   "the key file '%s' is not a service-account key (its 'type' is not "
			   "\"service_account\")",
			   path);
		goto out;
	}
	if ((rc = key_field(root, path, "client_email", true, &k->client_email)) ||
	    (rc = key_field(root, path, "private_key", true, &k->private_key)) ||
	    (rc = key_field(root, path, "token_uri", false, &k->token_uri)) ||
	    (rc = key_field(root, path, "project_id", false, &k->project_id)))
		goto out;
	if (!k->token_uri)
		k->token_uri = xstrdup(TOKEN_URI);
	if (!str_startswith(k->token_uri, "https://") && !str_startswith(k->token_uri, "http://")) {
		rc = error(ERR_INVALID, "the key file '%s': its token_uri is not an http(s) URL",
			   path);
		goto out;
	}
	rc = OK;
out:
	if (root) {
		/* Wipe the key's copy inside jansson before it is freed. */
		json_t *pk = json_object_get(root, "private_key");

		if (json_is_string(pk))
			OPENSSL_cleanse((char *)json_string_value(pk), json_string_length(pk));
		json_decref(root);
	}
	strbuf_release_secret(&text);
	close(fd);
	if (rc)
		gce_key_release(k);
	return rc;
}

static int
no_passphrase(char *buf, int size, int rwflag, void *u)
{
	return -1;
}

enum status
gce_jwt(const char *pem, const char *iss, const char *aud, const char *scope, int64_t now,
	char **jwt)
{
	static const char header[] = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
	struct strbuf sb = STRBUF_INIT;
	EVP_PKEY *pkey = NULL;
	EVP_MD_CTX *ctx = NULL;
	unsigned char *sig = NULL;
	size_t siglen = 0;
	json_t *claims;
	char *text;
	BIO *bio;
	enum status rc = OK;

	*jwt = NULL;
	bio = BIO_new_mem_buf(pem, -1);
	if (bio)
		pkey = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
	BIO_free(bio);
	if (!pkey || EVP_PKEY_get_base_id(pkey) != EVP_PKEY_RSA) {
		ERR_clear_error();
		EVP_PKEY_free(pkey);
		return error(ERR_INVALID, "its private_key is not an unencrypted PEM RSA key");
	}
	claims = json_pack("{s:s, s:s, s:s, s:I, s:I}", "iss", iss, "scope", scope, "aud", aud,
			   "iat", (json_int_t)now, "exp", (json_int_t)(now + 3600));
	text = claims ? json_dumps(claims, JSON_COMPACT) : NULL;
	json_decref(claims);
	if (!text) {
		EVP_PKEY_free(pkey);
		return error(ERR_INVALID,
			     "cannot build the JWT claims (is the client_email UTF-8?)");
	}
	b64url(&sb, (const unsigned char *)header, strlen(header));
	strbuf_addch(&sb, '.');
	b64url(&sb, (const unsigned char *)text, strlen(text));
	free(text);

	ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, pkey) != 1 ||
	    EVP_DigestSign(ctx, NULL, &siglen, (const unsigned char *)sb.buf, sb.len) != 1) {
		rc = error(ERR_INVALID, "cannot sign with its private_key (OpenSSL refused it)");
		goto out;
	}
	sig = xmalloc(siglen);
	if (EVP_DigestSign(ctx, sig, &siglen, (const unsigned char *)sb.buf, sb.len) != 1) {
		rc = error(ERR_INVALID, "cannot sign with its private_key (OpenSSL refused it)");
		goto out;
	}
	strbuf_addch(&sb, '.');
	b64url(&sb, sig, siglen);
	*jwt = strbuf_detach(&sb);
out:
	ERR_clear_error();
	free(sig);
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(pkey);
	strbuf_release_secret(&sb);
	return rc;
}

/* ---- Errors ---- */

static char *
clean_text(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = strlen(s);

	if (n > 600)
		n = 600;
	strbuf_add_term_clean(&sb, s, n);
	if (n < strlen(s))
		strbuf_adds(&sb, "...");
	while (sb.len && (sb.buf[sb.len - 1] == '\n' || sb.buf[sb.len - 1] == ' '))
		strbuf_setlen(&sb, sb.len - 1);
	return strbuf_detach(&sb);
}

/* Message and reason out of {"message", "errors": [{"reason"|"code", "message"}], "status"}. */
static void
error_obj(json_t *e, const char **msg, const char **reason)
{
	json_t *first = json_array_get(json_object_get(e, "errors"), 0);

	*msg = jstr(e, "message");
	if (!*msg)
		*msg = jstr(first, "message");
	*reason = jstr(first, "reason");
	if (!*reason)
		*reason = jstr(first, "code");
	if (!*reason)
		*reason = jstr(e, "status");
}

static char *
join_text(const char *msg, const char *reason, char **reason_out)
{
	char *m = clean_text(msg);
	char *text;

	if (reason) {
		char *r = clean_text(reason);

		text = xasprintf("%s (%s)", m, r);
		if (reason_out)
			*reason_out = r;
		else
			free(r);
	} else {
		text = xstrdup(m);
	}
	free(m);
	return text;
}

char *
gce_error_text(long http, const char *url, const char *body, size_t len, char **reason)
{
	json_t *root = len ? json_loadb(body, len, 0, NULL) : NULL;
	json_t *e = json_object_get(root, "error");
	const char *msg = NULL, *why = NULL;
	char *text;

	if (reason)
		*reason = NULL;
	if (json_is_object(e)) {
		error_obj(e, &msg, &why);
	} else if (json_is_string(e)) {
		why = json_string_value(e);
		msg = jstr(root, "error_description");
		if (!msg) {
			msg = why;
			why = NULL;
			if (reason)
				*reason = clean_text(msg);
		}
	}
	if (msg && *msg)
		text = join_text(msg, why, reason);
	else
		text = xasprintf("HTTP %ld from %s", http, url);
	json_decref(root);
	return text;
}

char *
gce_op_error_text(json_t *err, char **reason)
{
	const char *msg = NULL, *why = NULL;

	if (reason)
		*reason = NULL;
	error_obj(err, &msg, &why);
	if (!msg || !*msg)
		msg = why ? why : "the operation failed without saying why";
	return join_text(msg, why, reason);
}

enum status
gce_error_status(long http, const char *reason)
{
	const char *r = reason ? reason : "";

	if (strstr(r, "uota") || strstr(r, "QUOTA") || strstr(r, "EXHAUSTED") ||
	    strstr(r, "ateLimit") || strstr(r, "RATE_LIMIT") || http == 429)
		return ERR_LIMIT;
	if (http == 404 || !strcmp(r, "notFound") || !strcmp(r, "RESOURCE_NOT_FOUND") ||
	    !strcmp(r, "NOT_FOUND"))
		return ERR_NOTFOUND;
	if (http == 409 || !strcmp(r, "alreadyExists") || !strcmp(r, "RESOURCE_ALREADY_EXISTS") ||
	    !strcmp(r, "ALREADY_EXISTS"))
		return ERR_EXISTS;
	if (http == 400 || http == 401 || http == 403)
		return ERR_INVALID;
	return http ? ERR_PROTOCOL : ERR_IO;
}

static void
set_reason(struct gce_api *a, const char *reason)
{
	free(a->last_reason);
	a->last_reason = xstrdup(reason ? reason : "");
}

/* ---- HTTP ---- */

struct req {
	const char *what; /* "Compute Engine", ... for messages */
	const char *method;
	const char *url;
	bool auth;	   /* the bearer token */
	bool metadata;	   /* Metadata-Flavor: Google */
	const char *ctype; /* of the body */
	const char *body;  /* or NULL */
	size_t body_len;
	int src_fd; /* upload from (-1: none) */
	uint64_t src_len;
	int dst_fd; /* a 2xx body into (-1: memory) */
	uint64_t dst_max;
	uint64_t range_from; /* a download from this byte on (0: the whole) */
	long timeout_s;	     /* 0: a low-speed limit instead */
	unsigned retry_s;    /* budget for transient failures */
};

struct xfer {
	struct gce_api *a;
	struct req *r;
	uint64_t src_off;
	struct strbuf body; /* the answer (or an error answer of a download) */
	bool too_big;
	uint64_t dst_len;
	int dst_errno;
	int to_file; /* -1: not decided yet */
};

/* curl sends a body again (a reused connection that was closed): from offset. */
static int
on_seek(void *data, curl_off_t offset, int origin)
{
	struct xfer *x = data;
	uint64_t len = x->r->src_fd >= 0 ? x->r->src_len : x->r->body_len;

	if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > len)
		return CURL_SEEKFUNC_FAIL;
	x->src_off = (uint64_t)offset;
	return CURL_SEEKFUNC_OK;
}

static size_t
on_read(char *buf, size_t size, size_t nmemb, void *data)
{
	struct xfer *x = data;
	size_t want = size * nmemb;
	uint64_t left;

	if (x->r->src_fd < 0) {
		left = x->r->body_len - x->src_off;
		if (want > left)
			want = (size_t)left;
		memcpy(buf, x->r->body + x->src_off, want);
		x->src_off += want;
		return want;
	}
	left = x->r->src_len - x->src_off;
	if (want > left)
		want = (size_t)left;
	if (!want)
		return 0;
	for (;;) {
		ssize_t n = pread(x->r->src_fd, buf, want, (off_t)x->src_off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			x->dst_errno = n < 0 ? errno : EIO;
			return CURL_READFUNC_ABORT;
		}
		x->src_off += (uint64_t)n;
		return (size_t)n;
	}
}

static size_t
on_write(char *buf, size_t size, size_t nmemb, void *data)
{
	struct xfer *x = data;
	size_t n = size * nmemb;

	if (x->to_file < 0) {
		long code = 0;

		curl_easy_getinfo(x->a->curl, CURLINFO_RESPONSE_CODE, &code);
		x->to_file = x->r->dst_fd >= 0 && code >= 200 && code < 300;
	}
	if (x->to_file) {
		if (x->dst_len + n > x->r->dst_max) {
			x->too_big = true;
			return 0;
		}
		for (size_t done = 0; done < n;) {
			ssize_t w = write(x->r->dst_fd, buf + done, n - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				x->dst_errno = errno;
				return 0;
			}
			done += (size_t)w;
		}
		x->dst_len += n;
		return n;
	}
	if (x->body.len + n > RESPONSE_MAX) {
		x->too_big = true;
		return 0;
	}
	strbuf_add(&x->body, buf, n);
	return n;
}

static bool
transient_curl(CURLcode cc)
{
	switch (cc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return true;
	default:
		return false;
	}
}

static bool
transient_http(long http)
{
	return http == 408 || http == 429 || http == 500 || http == 502 || http == 503 ||
	       http == 504;
}

/* A 403 that asks to slow down (rateLimitExceeded, userRateLimitExceeded). */
static bool
rate_limited(long http, const struct strbuf *body)
{
	char *reason = NULL;
	char *text;
	bool yes;

	if (http != 403)
		return false;
	text = gce_error_text(http, "", body->buf, body->len, &reason);
	yes = reason && strstr(reason, "ateLimitExceeded");
	free(reason);
	free(text);
	return yes;
}

/* The URL without its query, for messages. */
static char *
url_for_msg(const char *url)
{
	return xstrndup(url, strcspn(url, "?"));
}

static void
free_headers(struct curl_slist *h)
{
	for (struct curl_slist *p = h; p; p = p->next)
		OPENSSL_cleanse(p->data, strlen(p->data));
	curl_slist_free_all(h);
}

static CURLcode
attempt(struct gce_api *a, struct xfer *x)
{
	struct req *r = x->r;
	struct curl_slist *h = NULL;
	sigset_t pipe_set, old_set;
	CURLcode cc;

	curl_easy_reset(a->curl);
	a->errbuf[0] = '\0';
	curl_easy_setopt(a->curl, CURLOPT_ERRORBUFFER, a->errbuf);
	curl_easy_setopt(a->curl, CURLOPT_URL, r->url);
	curl_easy_setopt(a->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(a->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(a->curl, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(a->curl, CURLOPT_CONNECTTIMEOUT, 10L);
	if (r->timeout_s) {
		curl_easy_setopt(a->curl, CURLOPT_TIMEOUT, r->timeout_s);
	} else {
		curl_easy_setopt(a->curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(a->curl, CURLOPT_LOW_SPEED_TIME, 60L);
	}
	curl_easy_setopt(a->curl, CURLOPT_USERAGENT, "fswb/" FSWB_VERSION);
	curl_easy_setopt(a->curl, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(a->curl, CURLOPT_WRITEDATA, x);
	if (r->auth) {
		char *line = xasprintf("Authorization: Bearer %s", a->token);

		h = curl_slist_append(h, line);
		free_secret(line);
	}
	if (r->metadata)
		h = curl_slist_append(h, "Metadata-Flavor: Google");
	if (r->range_from) {
		char range[48];

		snprintf(range, sizeof(range), "%llu-", (unsigned long long)r->range_from);
		curl_easy_setopt(a->curl, CURLOPT_RANGE, range);
	}
	h = curl_slist_append(h, "Expect:");
	if (r->body || r->src_fd >= 0) {
		char *line = xasprintf("Content-Type: %s", r->ctype);

		h = curl_slist_append(h, line);
		free(line);
		curl_easy_setopt(a->curl, CURLOPT_POST, 1L);
		curl_easy_setopt(a->curl, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(a->curl, CURLOPT_READDATA, x);
		curl_easy_setopt(a->curl, CURLOPT_SEEKFUNCTION, on_seek);
		curl_easy_setopt(a->curl, CURLOPT_SEEKDATA, x);
		curl_easy_setopt(a->curl, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)(r->src_fd >= 0 ? r->src_len : r->body_len));
	}
	if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "POST") != 0)
		curl_easy_setopt(a->curl, CURLOPT_CUSTOMREQUEST, r->method);
	else if (!strcmp(r->method, "POST") && !r->body && r->src_fd < 0)
		curl_easy_setopt(a->curl, CURLOPT_POSTFIELDS, "");
	curl_easy_setopt(a->curl, CURLOPT_HTTPHEADER, h);
	/*
	 * CURLOPT_NOSIGNAL keeps curl's hands off signals, so a peer that hangs
	 * up under OpenSSL's write could raise SIGPIPE: blocked here, and one
	 * raised meanwhile is taken before the mask is restored.
	 */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
	cc = curl_easy_perform(a->curl);
	if (!sigismember(&old_set, SIGPIPE)) {
		struct timespec zero = { 0 };
		sigset_t pending;

		if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE))
			sigtimedwait(&pipe_set, NULL, &zero);
		pthread_sigmask(SIG_SETMASK, &old_set, NULL);
	}
	curl_easy_setopt(a->curl, CURLOPT_HTTPHEADER, NULL);
	free_headers(h);
	return cc;
}

static enum status refresh_token(struct gce_api *a);

/*
 * One logical request with its retries. On OK (a 2xx answer) *body the
 * answer (unless it went to dst_fd); else the error is recorded, with
 * a->last_http and a->last_reason.
 */
static enum status
request(struct gce_api *a, struct req *r, struct strbuf *body)
{
	struct xfer x = { .a = a, .r = r };
	double start = mono_now(), delay = 1;
	bool refreshed = false;
	char *last = NULL;
	enum status rc;

	strbuf_init(&x.body);
	a->last_http = 0;
	set_reason(a, NULL);
	for (;;) {
		CURLcode cc;
		double elapsed, pause;
		unsigned char rnd;

		if (r->auth && (!a->token || a->token_expiry - mono_now() < TOKEN_MARGIN) &&
		    (rc = refresh_token(a)))
			goto out;
		strbuf_reset(&x.body);
		x.src_off = 0;
		x.dst_len = 0;
		x.too_big = false;
		x.dst_errno = 0;
		x.to_file = -1;
		if (r->dst_fd >= 0 &&
		    (ftruncate(r->dst_fd, 0) < 0 || lseek(r->dst_fd, 0, SEEK_SET) < 0)) {
			rc = error(ERR_IO, "cannot truncate the download file: %s",
				   strerror(errno));
			goto out;
		}
		cc = attempt(a, &x);
		curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &a->last_http);
		if (x.too_big) {
			char *u = url_for_msg(r->url);

			if (x.to_file)
				rc = error(ERR_LIMIT,
					   "the object at %s is larger than %" PRIu64 " bytes", u,
					   r->dst_max);
			else
				rc = error(ERR_LIMIT, "the answer from %s is larger than %d MiB", u,
					   RESPONSE_MAX >> 20);
			free(u);
			goto out;
		}
		if (x.dst_errno) {
			rc = error(ERR_IO, "cannot %s the file for %s %s: %s",
				   r->src_fd >= 0 ? "read" : "write", r->what, r->method,
				   strerror(x.dst_errno));
			goto out;
		}
		free(last);
		last = NULL;
		if (cc == CURLE_OK) {
			if (a->last_http == 401 && r->auth && !refreshed) {
				refreshed = true;
				free_secret(a->token);
				a->token = NULL;
				continue;
			}
			if (!transient_http(a->last_http) && !rate_limited(a->last_http, &x.body))
				break;
			{
				char *u = url_for_msg(r->url);

				last = gce_error_text(a->last_http, u, x.body.buf, x.body.len,
						      NULL);
				if (!str_startswith(last, "HTTP ")) {
					char *t = xasprintf("HTTP %ld from %s: %s", a->last_http, u,
							    last);

					free(last);
					last = t;
				}
				free(u);
			}
		} else if (transient_curl(cc)) {
			last = xasprintf("%s", a->errbuf[0] ? a->errbuf : curl_easy_strerror(cc));
		} else {
			char *u = url_for_msg(r->url);

			rc = error(ERR_IO, "cannot talk to %s at %s: %s", r->what, u,
				   a->errbuf[0] ? a->errbuf : curl_easy_strerror(cc));
			free(u);
			goto out;
		}
		elapsed = mono_now() - start;
		if (elapsed >= r->retry_s) {
			rc = error(ERR_TIMEOUT, "%s did not answer for %u s: %s", r->what,
				   r->retry_s, last);
			goto out;
		}
		if (RAND_bytes(&rnd, 1) != 1)
			rnd = 128;
		pause = delay * (0.75 + 0.5 * rnd / 255.0);
		if (pause > r->retry_s - elapsed)
			pause = r->retry_s - elapsed;
		sleep_s(pause);
		delay = delay * 2 > 32 ? 32 : delay * 2;
	}
	if (a->last_http >= 200 && a->last_http < 300) {
		if (body) {
			strbuf_release(body);
			*body = x.body;
			strbuf_init(&x.body);
		}
		rc = OK;
	} else {
		char *u = url_for_msg(r->url);
		char *reason = NULL;
		char *text = gce_error_text(a->last_http, u, x.body.buf, x.body.len, &reason);

		set_reason(a, reason);
		rc = error(gce_error_status(a->last_http, reason), "%s refused %s %s: %s", r->what,
			   r->method, u, text);
		free(reason);
		free(text);
		free(u);
	}
out:
	free(last);
	strbuf_release(&x.body);
	return rc;
}

/* FSWB_GCE_RETRY_S (checked at open) as it is now: tests change it. */
static unsigned
retry_budget(struct gce_api *a)
{
	const char *rs = getenv("FSWB_GCE_RETRY_S");
	char *end;
	unsigned long v = a->retry_s;

	if (rs && *rs) {
		v = strtoul(rs, &end, 10);
		if (*end || v > 86400)
			v = a->retry_s;
	}
	return a->retry_max && v > a->retry_max ? a->retry_max : (unsigned)v;
}

static void
req_init(struct req *r, struct gce_api *a, const char *what, const char *method, const char *url)
{
	memset(r, 0, sizeof(*r));
	r->what = what;
	r->method = method;
	r->url = url;
	r->auth = true;
	r->src_fd = -1;
	r->dst_fd = -1;
	r->timeout_s = 120;
	r->retry_s = retry_budget(a);
}

/* A JSON object from an answer (NULL for an empty one). */
static enum status
parse_answer(struct gce_api *a, const char *what, const char *url, struct strbuf *body,
	     json_t **out)
{
	json_t *root;
	char *u;

	*out = NULL;
	if (!body->len)
		return OK;
	root = json_loadb(body->buf, body->len, 0, NULL);
	if (json_is_object(root)) {
		*out = root;
		return OK;
	}
	json_decref(root);
	u = url_for_msg(url);
	error(ERR_PROTOCOL, "%s answered HTTP %ld from %s with something that is not a JSON object",
	      what, a->last_http, u);
	free(u);
	return ERR_PROTOCOL;
}

/* ---- Tokens ---- */

static enum status
take_token(struct gce_api *a, const char *what, struct strbuf *body)
{
	json_t *root = json_loadb(body->buf, body->len, 0, NULL);
	const char *tok = jstr(root, "access_token");
	int64_t expires = 0;

	if (!tok || !*tok || !gce_json_int64(root, "expires_in", &expires) || expires <= 0) {
		json_t *v = json_object_get(root, "access_token");

		if (json_is_string(v))
			OPENSSL_cleanse((char *)json_string_value(v), json_string_length(v));
		json_decref(root);
		return error(ERR_PROTOCOL, "%s answered without an access_token and expires_in",
			     what);
	}
	free_secret(a->token);
	a->token = xstrdup(tok);
	a->token_expiry = mono_now() + (double)expires;
	OPENSSL_cleanse((char *)tok, strlen(tok));
	json_decref(root);
	return OK;
}

static enum status
refresh_token(struct gce_api *a)
{
	struct strbuf body = STRBUF_INIT;
	struct req r;
	enum status rc;

	free_secret(a->token);
	a->token = NULL;
	if (a->metadata) {
		char *url =
			xasprintf("%s/instance/service-accounts/default/token", a->metadata_url);

		req_init(&r, a, "the metadata server", "GET", url);
		r.auth = false;
		r.metadata = true;
		/* Off Compute Engine the name does not resolve: say so soon. */
		if (!a->had_token && r.retry_s > 10)
			r.retry_s = 10;
		rc = request(a, &r, &body);
		if (!rc)
			rc = take_token(a, "the metadata server", &body);
		else if (a->last_http == 404)
			rc = error_prefix(rc,
					  "this machine has no service account: give a key file");
		else if (!a->had_token)
			rc = error_prefix(rc, "no key file was given (-o key=FILE), and the "
					      "metadata server (fswb "
					      "on a Compute Engine machine) gave no token");
		free(url);
	} else {
		struct strbuf form = STRBUF_INIT;
		char *jwt = NULL;

		rc = gce_jwt(a->key.private_key, a->key.client_email, a->key.token_uri, SCOPE,
			     (int64_t)time(NULL), &jwt);
		if (rc)
			return error_prefix(rc, "the key file '%s'", a->key_file);
		strbuf_adds(&form,
			    "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"
			    "&assertion=");
		strbuf_adds(&form, jwt);
		free_secret(jwt);
		req_init(&r, a, "the token endpoint", "POST", a->key.token_uri);
		r.auth = false;
		r.ctype = "application/x-www-form-urlencoded";
		r.body = form.buf;
		r.body_len = form.len;
		rc = request(a, &r, &body);
		strbuf_release_secret(&form);
		if (!rc)
			rc = take_token(a, "the token endpoint", &body);
		else if (a->last_reason && !strcmp(a->last_reason, "invalid_grant"))
			rc = error_prefix(
				rc,
				"the key file '%s' (a deleted key? is this machine's clock "
				"right?)",
				a->key_file);
		else if (a->last_http)
			rc = error_prefix(rc, "the key file '%s'", a->key_file);
	}
	if (!rc)
		a->had_token = true;
	strbuf_release_secret(&body);
	return rc;
}

/* ---- Open and close ---- */

static char *
env_url(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	char *u = xstrdup(v && *v ? v : dflt);
	size_t n = strlen(u);

	while (n && u[n - 1] == '/')
		u[--n] = '\0';
	return u;
}

/* A metadata value as text (project/project-id, instance/zone). */
static enum status
metadata_text(struct gce_api *a, const char *rel, char **out)
{
	struct strbuf body = STRBUF_INIT;
	char *url = xasprintf("%s/%s", a->metadata_url, rel);
	struct req r;
	enum status rc;

	req_init(&r, a, "the metadata server", "GET", url);
	r.auth = false;
	r.metadata = true;
	/* Off Compute Engine the name does not resolve: say so at once. */
	if (r.retry_s > 10)
		r.retry_s = 10;
	rc = request(a, &r, &body);
	free(url);
	if (rc) {
		strbuf_release(&body);
		return error_prefix(
			rc,
			"no key file was given (-o key=FILE), and the metadata server (fswb on a "
			"Compute Engine machine) did not tell the %s",
			rel);
	}
	*out = clean_text(str_trim(body.buf));
	strbuf_release(&body);
	return OK;
}

enum status
gce_api_open(const struct gce_api_opts *o, struct gce_api **out)
{
	struct gce_api *a;
	const char *rs = getenv("FSWB_GCE_RETRY_S");
	enum status rc;

	*out = NULL;
	if ((rc = gce_api_global_init()))
		return rc;
	a = xcalloc(1, sizeof(*a));
	a->curl = curl_easy_init();
	if (!a->curl) {
		free(a);
		return error(ERR_NOMEM, "cannot start libcurl");
	}
	a->compute_url =
		env_url("FSWB_GCE_COMPUTE_URL", "https://compute.googleapis.com/compute/v1");
	a->storage_url = env_url("FSWB_GCE_STORAGE_URL", "https://storage.googleapis.com");
	a->metadata_url = env_url("FSWB_GCE_METADATA_URL",
				  "http://metadata.google.internal/computeMetadata/v1");
	a->retry_s = RETRY_DEFAULT;
	a->retry_max = o->retry_max;
	if (rs && *rs) {
		char *end;
		unsigned long v = strtoul(rs, &end, 10);

		if (*end || v > 86400) {
			rc = error(ERR_INVALID, "FSWB_GCE_RETRY_S='%s' is not a number of seconds",
				   rs);
			goto fail;
		}
		a->retry_s = (unsigned)v;
	}
	a->last_reason = xstrdup("");
	if (o->key_file) {
		a->key_file = xstrdup(o->key_file);
		if ((rc = gce_key_load(o->key_file, &a->key)))
			goto fail;
		a->project = xstrdup(o->project		 ? o->project
				     : a->key.project_id ? a->key.project_id
							 : "");
		if (!*a->project) {
			rc = error(ERR_INVALID,
				   "the key file '%s' names no project_id: give the project "
				   "(-o project=NAME)",
				   o->key_file);
			goto fail;
		}
		if (o->zone)
			a->zone = xstrdup(o->zone);
	} else {
		a->metadata = true;
		if (o->project)
			a->project = xstrdup(o->project);
		else if ((rc = metadata_text(a, "project/project-id", &a->project)))
			goto fail;
		if (o->zone) {
			a->zone = xstrdup(o->zone);
		} else {
			char *z = NULL, *slash;

			if ((rc = metadata_text(a, "instance/zone", &z)))
				goto fail;
			slash = strrchr(z, '/');
			a->zone = xstrdup(slash ? slash + 1 : z);
			free(z);
		}
	}
	if ((rc = refresh_token(a)))
		goto fail;
	*out = a;
	return OK;
fail:
	gce_api_close(a);
	return rc;
}

void
gce_api_close(struct gce_api *a)
{
	if (!a)
		return;
	if (a->curl)
		curl_easy_cleanup(a->curl);
	gce_key_release(&a->key);
	free_secret(a->token);
	free(a->key_file);
	free(a->project);
	free(a->zone);
	free(a->compute_url);
	free(a->storage_url);
	free(a->metadata_url);
	free(a->last_reason);
	free(a);
}

const char *
gce_api_project(const struct gce_api *a)
{
	return a->project;
}

const char *
gce_api_zone(const struct gce_api *a)
{
	return a->zone;
}

const char *
gce_api_client_email(const struct gce_api *a)
{
	return a->metadata ? NULL : a->key.client_email;
}

long
gce_api_last_http(const struct gce_api *a)
{
	return a->last_http;
}

const char *
gce_api_last_reason(const struct gce_api *a)
{
	return a->last_reason ? a->last_reason : "";
}

/* ---- Compute Engine ---- */

static char *
uuid4(void)
{
	unsigned char b[16];

	if (RAND_bytes(b, sizeof(b)) != 1) {
		ERR_clear_error();
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (unsigned char)(rand() ^ (int)(mono_now() * 1e6));
	}
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	return xasprintf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
			 b[12], b[13], b[14], b[15]);
}

/* The full URL of path (see gce_compute), or NULL after an error. */
static char *
compute_url(struct gce_api *a, const char *path)
{
	const char *p;

	if (!strstr(path, "://"))
		return xasprintf("%s/%s", a->compute_url, path[0] == '/' ? path + 1 : path);
	p = strstr(path, "/compute/v1/projects/");
	if (!p && str_startswith(path, a->compute_url) &&
	    str_startswith(path + strlen(a->compute_url), "/projects/"))
		p = path + strlen(a->compute_url) - strlen("/compute/v1");
	if (!p) {
		error(ERR_INVALID, "'%s' is not a Compute Engine URL", path);
		return NULL;
	}
	return xasprintf("%s/%s", a->compute_url, p + strlen("/compute/v1/"));
}

enum status
gce_compute(struct gce_api *a, const char *method, const char *path, json_t *body, json_t **out)
{
	struct strbuf answer = STRBUF_INIT;
	char *url = compute_url(a, path);
	char *text = NULL;
	json_t *res = NULL;
	struct req r;
	enum status rc;

	if (out)
		*out = NULL;
	if (!url)
		return ERR_INVALID;
	if ((!strcmp(method, "POST") || !strcmp(method, "DELETE")) && !strstr(url, "requestId=")) {
		size_t q = strcspn(url, "?");

		if (q < 5 || strncmp(url + q - 5, "/wait", 5) != 0) {
			char *id = uuid4();
			char *full = xasprintf("%s%crequestId=%s", url, url[q] ? '&' : '?', id);

			free(id);
			free(url);
			url = full;
		}
	}
	req_init(&r, a, "Compute Engine", method, url);
	if (body) {
		text = json_dumps(body, JSON_COMPACT);
		if (!text) {
			free(url);
			return error(ERR_INVALID, "cannot send the request body of %s %s", method,
				     path);
		}
		r.body = text;
		r.body_len = strlen(text);
		r.ctype = "application/json";
	}
	if (str_endswith(path, "/wait"))
		r.timeout_s = 150; /* the server waits up to about 2 minutes */
	rc = request(a, &r, &answer);
	if (!rc)
		rc = parse_answer(a, "Compute Engine", url, &answer, &res);
	if (!rc && out)
		*out = res;
	else
		json_decref(res);
	free(text);
	free(url);
	strbuf_release(&answer);
	return rc;
}

enum status
gce_wait_op(struct gce_api *a, json_t *op, unsigned limit_s)
{
	double deadline = mono_now() + limit_s;
	const char *name = jstr(op, "name");
	const char *self = jstr(op, "selfLink");
	const char *zone = jstr(op, "zone");
	char *path;
	json_t *cur = json_incref(op);
	enum status rc = OK;

	if (!name)
		return error(ERR_PROTOCOL, "Compute Engine answered an operation without a name");
	if (self) {
		path = xasprintf("%s/wait", self);
	} else if (zone) {
		const char *z = strrchr(zone, '/');

		path = xasprintf("projects/%s/zones/%s/operations/%s/wait", a->project,
				 z ? z + 1 : zone, name);
	} else {
		path = xasprintf("projects/%s/global/operations/%s/wait", a->project, name);
	}
	for (;;) {
		const char *st = jstr(cur, "status");
		json_t *next = NULL;

		if (st && !strcmp(st, "DONE"))
			break;
		if (mono_now() >= deadline) {
			rc = error(ERR_TIMEOUT,
				   "the Compute Engine operation '%s' (%s) is not done after %u s",
				   name,
				   jstr(op, "operationType") ? jstr(op, "operationType") : "?",
				   limit_s);
			goto out;
		}
		if ((rc = gce_compute(a, "POST", path, NULL, &next)))
			goto out;
		if (!next) {
			rc = error(ERR_PROTOCOL,
				   "Compute Engine answered the wait for '%s' with nothing", name);
			goto out;
		}
		json_decref(cur);
		cur = next;
	}
	if (json_is_object(json_object_get(cur, "error"))) {
		char *reason = NULL;
		char *text = gce_op_error_text(json_object_get(cur, "error"), &reason);
		int64_t code = 0;
		const char *target = jstr(cur, "targetLink");
		const char *t = target ? strrchr(target, '/') : NULL;

		if (gce_json_int64(cur, "httpErrorStatusCode", &code))
			a->last_http = (long)code;
		set_reason(a, reason);
		rc = error(gce_error_status(0, reason), "%s of '%s' failed: %s",
			   jstr(cur, "operationType") ? jstr(cur, "operationType")
						      : "the operation",
			   t ? t + 1 : name, text);
		free(reason);
		free(text);
	}
out:
	json_decref(cur);
	free(path);
	return rc;
}

/* ---- Cloud Storage ---- */

static char *
object_url(struct gce_api *a, const char *bucket, const char *object, const char *query)
{
	char *b = gce_escape(bucket);
	char *o = gce_escape(object);
	char *url = xasprintf("%s/storage/v1/b/%s/o/%s%s", a->storage_url, b, o, query);

	free(b);
	free(o);
	return url;
}

static enum status
upload(struct gce_api *a, const char *bucket, const char *object, int fd, uint64_t len,
       const void *buf)
{
	char *b = gce_escape(bucket);
	char *o = gce_escape(object);
	char *url = xasprintf("%s/upload/storage/v1/b/%s/o?uploadType=media&name=%s",
			      a->storage_url, b, o);
	struct req r;
	enum status rc;

	req_init(&r, a, "Cloud Storage", "POST", url);
	r.ctype = "application/octet-stream";
	r.timeout_s = 0;
	if (fd >= 0) {
		r.src_fd = fd;
		r.src_len = len;
	} else {
		r.body = buf ? buf : "";
		r.body_len = (size_t)len;
	}
	rc = request(a, &r, NULL);
	if (rc)
		rc = error_prefix(rc, "cannot upload gs://%s/%s", bucket, object);
	free(url);
	free(b);
	free(o);
	return rc;
}

enum status
gce_upload_mem(struct gce_api *a, const char *bucket, const char *object, const void *buf,
	       size_t len)
{
	return upload(a, bucket, object, -1, len, buf);
}

enum status
gce_upload_file(struct gce_api *a, const char *bucket, const char *object, const char *path)
{
	struct stat st;
	enum status rc;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return error(ERR_IO, "cannot open '%s' to upload it: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return error(ERR_IO, "cannot upload '%s': not a regular file", path);
	}
	rc = upload(a, bucket, object, fd, (uint64_t)st.st_size, NULL);
	close(fd);
	return rc;
}

enum status
gce_download_file(struct gce_api *a, const char *bucket, const char *object, const char *path,
		  uint64_t max)
{
	return gce_download_from(a, bucket, object, path, 0, max);
}

enum status
gce_download_from(struct gce_api *a, const char *bucket, const char *object, const char *path,
		  uint64_t from, uint64_t max)
{
	char *part = xasprintf("%s.part", path);
	char *url = object_url(a, bucket, object, "?alt=media");
	struct req r;
	enum status rc;
	int fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0) {
		rc = error(ERR_IO, "cannot create '%s': %s", part, strerror(errno));
		goto out;
	}
	req_init(&r, a, "Cloud Storage", "GET", url);
	r.timeout_s = 0;
	r.dst_fd = fd;
	r.dst_max = max;
	r.range_from = from;
	rc = request(a, &r, NULL);
	if (close(fd) < 0 && !rc)
		rc = error(ERR_IO, "cannot write '%s': %s", part, strerror(errno));
	if (!rc && rename(part, path) < 0)
		rc = error(ERR_IO, "cannot rename '%s' to '%s': %s", part, path, strerror(errno));
	if (rc) {
		unlink(part);
		rc = error_prefix(rc, "cannot download gs://%s/%s", bucket, object);
	}
out:
	free(url);
	free(part);
	return rc;
}

enum status
gce_delete_object(struct gce_api *a, const char *bucket, const char *object)
{
	char *url = object_url(a, bucket, object, "");
	struct req r;
	enum status rc;

	req_init(&r, a, "Cloud Storage", "DELETE", url);
	rc = request(a, &r, NULL);
	if (rc)
		rc = error_prefix(rc, "cannot delete gs://%s/%s", bucket, object);
	free(url);
	return rc;
}

enum status
gce_bucket_check(struct gce_api *a, const char *bucket)
{
	char *b = gce_escape(bucket);
	char *url = xasprintf("%s/storage/v1/b/%s/o?maxResults=1&fields=kind", a->storage_url, b);
	const char *who = a->metadata ? "this machine's service account" : a->key.client_email;
	struct req r;
	enum status rc;

	req_init(&r, a, "Cloud Storage", "GET", url);
	rc = request(a, &r, NULL);
	if (rc == ERR_NOTFOUND)
		rc = error_prefix(
			rc,
			"the bucket '%s' does not exist: create it (gcloud storage buckets "
			"create gs://%s --project=%s) or name another",
			bucket, bucket, a->project);
	else if (rc == ERR_INVALID && a->last_http == 403)
		rc = error_prefix(
			rc,
			"%s may not use the bucket '%s': grant it roles/storage.objectUser "
			"on the bucket",
			who, bucket);
	free(url);
	free(b);
	return rc;
}
