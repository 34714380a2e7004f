/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Compute Engine client without Google: the JWT (its signature checked
 * against the public half of a key made here), the key file's checks,
 * Google's error envelopes, escaping and int64 members; then real HTTP
 * against a loopback server in a thread (a token endpoint, a 401 that
 * renews the token, a 503 that is retried, errors, Cloud Storage up and
 * down, an operation that fails).
 */
#include "testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/gce_api.h"
#include "core/util.h"

static EVP_PKEY *test_key;
static char *test_pem;

static void
make_key(void)
{
	BIO *bio;
	char *p;
	long n;

	if (test_pem)
		return;
	test_key = EVP_RSA_gen(2048);
	assert_non_null(test_key);
	bio = BIO_new(BIO_s_mem());
	assert_int_equal(PEM_write_bio_PrivateKey(bio, test_key, NULL, NULL, 0, NULL, NULL), 1);
	n = BIO_get_mem_data(bio, &p);
	test_pem = xstrndup(p, (size_t)n);
	BIO_free(bio);
}

static size_t
b64url_decode(const char *s, size_t n, unsigned char *out)
{
	size_t len = 0;
	uint32_t acc = 0;
	int bits = 0;

	for (size_t i = 0; i < n; i++) {
		const char *tab =
			"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
		const char *c = strchr(tab, s[i]);

		assert_non_null(c);
		assert_true(s[i] != '\0');
		acc = acc << 6 | (uint32_t)(c - tab);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[len++] = (unsigned char)(acc >> bits);
		}
	}
	return len;
}

static json_t *
b64url_json(const char *s, size_t n)
{
	unsigned char buf[1024];
	size_t len;

	assert_true(n * 3 / 4 < sizeof(buf));
	len = b64url_decode(s, n, buf);
	return json_loadb((const char *)buf, len, 0, NULL);
}

static void
test_jwt(void **state)
{
	char *jwt = NULL;
	const char *d1, *d2;
	json_t *h, *c;
	unsigned char sig[512];
	size_t siglen;
	EVP_MD_CTX *ctx;

	make_key();
	assert_int_equal(gce_jwt(test_pem, "sa@p.iam.gserviceaccount.com",
				 "https://oauth2.googleapis.com/token",
				 "https://www.googleapis.com/auth/cloud-platform", 1700000000,
				 &jwt),
			 OK);
	assert_null(strchr(jwt, '='));
	d1 = strchr(jwt, '.');
	assert_non_null(d1);
	d2 = strchr(d1 + 1, '.');
	assert_non_null(d2);
	assert_null(strchr(d2 + 1, '.'));

	h = b64url_json(jwt, (size_t)(d1 - jwt));
	assert_non_null(h);
	assert_string_equal(json_string_value(json_object_get(h, "alg")), "RS256");
	assert_string_equal(json_string_value(json_object_get(h, "typ")), "JWT");
	assert_int_equal(json_object_size(h), 2);
	json_decref(h);

	c = b64url_json(d1 + 1, (size_t)(d2 - d1 - 1));
	assert_non_null(c);
	assert_string_equal(json_string_value(json_object_get(c, "iss")),
			    "sa@p.iam.gserviceaccount.com");
	assert_string_equal(json_string_value(json_object_get(c, "aud")),
			    "https://oauth2.googleapis.com/token");
	assert_string_equal(json_string_value(json_object_get(c, "scope")),
			    "https://www.googleapis.com/auth/cloud-platform");
	assert_int_equal(json_integer_value(json_object_get(c, "iat")), 1700000000);
	assert_int_equal(json_integer_value(json_object_get(c, "exp")), 1700003600);
	json_decref(c);

	siglen = b64url_decode(d2 + 1, strlen(d2 + 1), sig);
	assert_int_equal(siglen, 256);
	ctx = EVP_MD_CTX_new();
	assert_int_equal(EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, test_key), 1);
	assert_int_equal(
		EVP_DigestVerify(ctx, sig, siglen, (const unsigned char *)jwt, (size_t)(d2 - jwt)),
		1);
	/* One bit changed in the signed text: no longer valid. */
	jwt[3] ^= 1;
	assert_int_equal(EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, test_key), 1);
	assert_int_not_equal(
		EVP_DigestVerify(ctx, sig, siglen, (const unsigned char *)jwt, (size_t)(d2 - jwt)),
		1);
	EVP_MD_CTX_free(ctx);
	free(jwt);

	assert_int_equal(gce_jwt("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
				 "i", "a", "s", 1, &jwt),
			 ERR_INVALID);
	assert_null(jwt);
	assert_non_null(strstr(error_msg(), "PEM RSA"));
}

static char *
key_json(const char *skip, const char *token_uri)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "service_account", "project_id",
			      "proj-1", "client_email", "sa@proj-1.iam.gserviceaccount.com",
			      "private_key", test_pem, "token_uri",
			      token_uri ? token_uri : "https://oauth2.googleapis.com/token");
	char *s;

	if (skip)
		json_object_del(o, skip);
	s = json_dumps(o, 0);
	json_decref(o);
	return s;
}

static char *
write_key(const char *name, const char *text, mode_t mode)
{
	char *path = test_tmp(name);

	test_write(path, text);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

static void
expect_key_error(const char *path, enum status code, const char *words)
{
	struct gce_key k;

	assert_int_equal(gce_key_load(path, &k), code);
	if (!strstr(error_msg(), words))
		fail_msg("'%s' does not say '%s'", error_msg(), words);
	/* The key never shows in a message. */
	assert_null(strstr(error_msg(), "PRIVATE KEY"));
	assert_null(strstr(error_msg(), "MII"));
}

static void
test_key_file(void **state)
{
	struct gce_key k;
	char *text, *path, *msg;
	struct strbuf big = STRBUF_INIT;

	make_key();
	text = key_json(NULL, NULL);
	path = write_key("ok.json", text, 0600);
	assert_int_equal(gce_key_load(path, &k), OK);
	assert_string_equal(k.client_email, "sa@proj-1.iam.gserviceaccount.com");
	assert_string_equal(k.project_id, "proj-1");
	assert_string_equal(k.token_uri, "https://oauth2.googleapis.com/token");
	assert_string_equal(k.private_key, test_pem);
	gce_key_release(&k);
	assert_int_equal(chmod(path, 0400), 0);
	assert_int_equal(gce_key_load(path, &k), OK);
	gce_key_release(&k);

	assert_int_equal(chmod(path, 0644), 0);
	msg = xasprintf("the key file '%s' can be read by others (mode 0644): chmod 600 '%s'", path,
			path);
	expect_key_error(path, ERR_INVALID, msg);
	free(msg);
	assert_int_equal(chmod(path, 0640), 0);
	expect_key_error(path, ERR_INVALID, "chmod 600");
	assert_int_equal(chmod(path, 0600), 0);

	{
		char *link = test_tmp("link.json");

		assert_int_equal(symlink(path, link), 0);
		expect_key_error(link, ERR_INVALID, "symbolic link");
		free(link);
	}
	free(path);
	free(text);

	/* Without token_uri: the default; without project_id: fine here. */
	text = key_json("token_uri", NULL);
	path = write_key("no-uri.json", text, 0600);
	assert_int_equal(gce_key_load(path, &k), OK);
	assert_string_equal(k.token_uri, "https://oauth2.googleapis.com/token");
	gce_key_release(&k);
	free(path);
	free(text);
	text = key_json("project_id", NULL);
	path = write_key("no-project.json", text, 0600);
	assert_int_equal(gce_key_load(path, &k), OK);
	assert_null(k.project_id);
	gce_key_release(&k);
	free(path);
	free(text);

	text = key_json("client_email", NULL);
	path = write_key("no-email.json", text, 0600);
	expect_key_error(path, ERR_INVALID, "has no 'client_email'");
	expect_key_error(path, ERR_INVALID, path);
	free(path);
	free(text);
	text = key_json("private_key", NULL);
	path = write_key("no-pk.json", text, 0600);
	expect_key_error(path, ERR_INVALID, "has no 'private_key'");
	free(path);
	free(text);
	text = key_json("type", NULL);
	path = write_key("no-type.json", text, 0600);
	expect_key_error(path, ERR_INVALID, "not a service-account key");
	free(path);
	free(text);

	/* Broken JSON right inside the key: the message does not quote it. */
	text = key_json(NULL, NULL);
	text[strlen(text) / 2] = '\0';
	path = write_key("cut.json", text, 0600);
	expect_key_error(path, ERR_PARSE, "not a JSON object");
	free(path);
	free(text);
	path = write_key("list.json", "[1, 2]", 0600);
	expect_key_error(path, ERR_PARSE, "not a JSON object");
	free(path);

	for (int i = 0; i < 70 * 1024; i++)
		strbuf_addch(&big, ' ');
	strbuf_adds(&big, "{}");
	path = write_key("big.json", big.buf, 0600);
	expect_key_error(path, ERR_LIMIT, "is 71682 bytes");
	free(path);
	strbuf_release(&big);

	path = test_tmp("missing.json");
	expect_key_error(path, ERR_NOTFOUND, "cannot open the key file");
	free(path);
	path = test_tmp("");
	expect_key_error(path, ERR_INVALID, "not a regular file");
	free(path);
}

static void
expect_error_text(long http, const char *body, const char *text, const char *reason,
		  enum status code)
{
	char *r = NULL;
	char *t = gce_error_text(http, "https://x.example/compute/v1/p", body, strlen(body), &r);

	assert_string_equal(t, text);
	if (reason)
		assert_string_equal(r, reason);
	else
		assert_null(r);
	assert_int_equal(gce_error_status(http, r), code);
	free(t);
	free(r);
}

static void
test_errors(void **state)
{
	json_t *op;
	char *t, *r;

	expect_error_text(404,
			  "{\"error\": {\"code\": 404, \"message\": \"The resource "
			  "'projects/p/zones/z/instances/x' was not found\", \"errors\": "
			  "[{\"message\": \"The resource 'projects/p/zones/z/instances/x' was not "
			  "found\", \"domain\": \"global\", \"reason\": \"notFound\"}]}}",
			  "The resource 'projects/p/zones/z/instances/x' was not found (notFound)",
			  "notFound", ERR_NOTFOUND);
	expect_error_text(
		403,
		"{\"error\": {\"code\": 403, \"message\": \"Quota 'CPUS' exceeded.  "
		"Limit: 24.0 in region us-central1.\", \"errors\": [{\"message\": "
		"\"Quota 'CPUS' exceeded.\", \"domain\": \"usageLimits\", \"reason\": "
		"\"quotaExceeded\"}]}}",
		"Quota 'CPUS' exceeded.  Limit: 24.0 in region us-central1. (quotaExceeded)",
		"quotaExceeded", ERR_LIMIT);
	expect_error_text(
		403,
		"{\"error\": {\"code\": 403, \"message\": \"Required 'compute.instances.create' "
		"permission\", \"errors\": [{\"reason\": \"forbidden\"}]}}",
		"Required 'compute.instances.create' permission (forbidden)", "forbidden",
		ERR_INVALID);
	expect_error_text(409,
			  "{\"error\": {\"code\": 409, \"message\": \"exists\", \"status\": "
			  "\"ALREADY_EXISTS\"}}",
			  "exists (ALREADY_EXISTS)", "ALREADY_EXISTS", ERR_EXISTS);
	expect_error_text(400,
			  "{\"error\": \"invalid_grant\", \"error_description\": \"Invalid JWT "
			  "Signature.\"}",
			  "Invalid JWT Signature. (invalid_grant)", "invalid_grant", ERR_INVALID);
	expect_error_text(502, "<html><body>\x1b[31mBad Gateway</body></html>",
			  "HTTP 502 from https://x.example/compute/v1/p", NULL, ERR_PROTOCOL);
	expect_error_text(500, "", "HTTP 500 from https://x.example/compute/v1/p", NULL,
			  ERR_PROTOCOL);
	/* A terminal escape in Google's message does not reach the terminal. */
	expect_error_text(400, "{\"error\": {\"message\": \"bad\\u001b[2J\"}}", "bad^[[2J", NULL,
			  ERR_INVALID);

	op = json_loads("{\"errors\": [{\"code\": \"ZONE_RESOURCE_POOL_EXHAUSTED\", \"message\": "
			"\"The zone 'projects/p/zones/us-central1-a' does not have enough "
			"resources available to fulfill the request.\"}, {\"code\": \"X\"}]}",
			0, NULL);
	t = gce_op_error_text(op, &r);
	assert_string_equal(t, "The zone 'projects/p/zones/us-central1-a' does not have enough "
			       "resources available to fulfill the request. "
			       "(ZONE_RESOURCE_POOL_EXHAUSTED)");
	assert_string_equal(r, "ZONE_RESOURCE_POOL_EXHAUSTED");
	assert_int_equal(gce_error_status(0, r), ERR_LIMIT);
	free(t);
	free(r);
	json_decref(op);
	assert_int_equal(gce_error_status(0, "RESOURCE_NOT_FOUND"), ERR_NOTFOUND);
	assert_int_equal(gce_error_status(0, "QUOTA_EXCEEDED"), ERR_LIMIT);
	assert_int_equal(gce_error_status(0, "SOMETHING"), ERR_IO);
}

static void
test_escape_int64(void **state)
{
	char *s = gce_escape("a/b c%");
	json_t *o;
	int64_t v = 7;

	assert_string_equal(s, "a%2Fb%20c%25");
	free(s);
	s = gce_escape("Az09-._~\xc3\xa9?&=+");
	assert_string_equal(s, "Az09-._~%C3%A9%3F%26%3D%2B");
	free(s);

	o = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:f, s:n}", "a", "123", "b", 123, "c", "-1",
		      "d", "x", "e", "99999999999999999999", "f", "", "g", 1.5, "h");
	assert_true(gce_json_int64(o, "a", &v));
	assert_int_equal(v, 123);
	assert_true(gce_json_int64(o, "b", &v));
	assert_int_equal(v, 123);
	assert_true(gce_json_int64(o, "c", &v));
	assert_int_equal(v, -1);
	v = 7;
	assert_false(gce_json_int64(o, "d", &v));
	assert_false(gce_json_int64(o, "e", &v));
	assert_false(gce_json_int64(o, "f", &v));
	assert_false(gce_json_int64(o, "g", &v));
	assert_false(gce_json_int64(o, "h", &v));
	assert_false(gce_json_int64(o, "missing", &v));
	assert_int_equal(v, 7);
	json_decref(o);
}

/* ---- A loopback HTTP server: canned answers in order, requests kept ---- */

#define MAX_EXCH 32

struct canned {
	int code;
	const char *body;
};

static struct {
	pthread_mutex_t lock;
	pthread_t thread;
	int fd;
	int port;
	bool stop;
	struct canned answers[MAX_EXCH];
	size_t n_answers, next;
	char *requests[MAX_EXCH]; /* head and body of each */
} srv = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

static void
serve_one(int c)
{
	struct strbuf in = STRBUF_INIT;
	char buf[65536];
	size_t want = 0, head = 0;
	struct canned ans = { 500, "{\"error\": {\"message\": \"no canned answer\"}}" };
	char *out;

	for (;;) {
		ssize_t n = read(c, buf, sizeof(buf));

		if (n <= 0)
			break;
		strbuf_add(&in, buf, (size_t)n);
		if (!head) {
			char *e = strstr(in.buf, "\r\n\r\n");

			if (e) {
				const char *cl = strcasestr(in.buf, "Content-Length:");

				head = (size_t)(e - in.buf) + 4;
				want = head + (cl && cl < e ? strtoul(cl + 15, NULL, 10) : 0);
			}
		}
		if (head && in.len >= want)
			break;
	}
	pthread_mutex_lock(&srv.lock);
	if (srv.next < srv.n_answers) {
		ans = srv.answers[srv.next];
		srv.requests[srv.next] = strbuf_detach(&in);
		srv.next++;
	}
	pthread_mutex_unlock(&srv.lock);
	if (ans.code == 0) {
		/* Hang up without a word: an empty reply. */
	} else {
		out = xasprintf("HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
				"Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
				ans.code, strlen(ans.body), ans.body);
		if (write(c, out, strlen(out)) < 0)
			(void)0;
		free(out);
	}
	strbuf_release(&in);
	close(c);
}

static void *
serve(void *unused)
{
	for (;;) {
		struct pollfd p = { .fd = srv.fd, .events = POLLIN };
		bool stop;
		int c;

		pthread_mutex_lock(&srv.lock);
		stop = srv.stop;
		pthread_mutex_unlock(&srv.lock);
		if (stop)
			return NULL;
		if (poll(&p, 1, 100) <= 0)
			continue;
		c = accept(srv.fd, NULL, NULL);
		if (c >= 0)
			serve_one(c);
	}
}

static void
server_start(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	srv.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(srv.fd >= 0);
	assert_int_equal(bind(srv.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(srv.fd, 8), 0);
	assert_int_equal(getsockname(srv.fd, (struct sockaddr *)&sa, &len), 0);
	srv.port = ntohs(sa.sin_port);
	assert_int_equal(pthread_create(&srv.thread, NULL, serve, NULL), 0);
}

static void
server_stop(void)
{
	pthread_mutex_lock(&srv.lock);
	srv.stop = true;
	pthread_mutex_unlock(&srv.lock);
	pthread_join(srv.thread, NULL);
	close(srv.fd);
}

/* The next answers, in order; forgets the requests seen so far. */
static void
script(const struct canned *c, size_t n)
{
	pthread_mutex_lock(&srv.lock);
	for (size_t i = 0; i < srv.n_answers; i++) {
		free(srv.requests[i]);
		srv.requests[i] = NULL;
	}
	for (size_t i = 0; i < n; i++)
		srv.answers[i] = c[i];
	srv.n_answers = n;
	srv.next = 0;
	pthread_mutex_unlock(&srv.lock);
}

/* Request i of the script (all of them answered). */
static const char *
req_text(size_t i)
{
	const char *r;

	pthread_mutex_lock(&srv.lock);
	assert_int_equal(srv.next, srv.n_answers);
	r = srv.requests[i];
	pthread_mutex_unlock(&srv.lock);
	assert_non_null(r);
	return r;
}

static void
expect_req(size_t i, const char *words)
{
	if (!strstr(req_text(i), words))
		fail_msg("request %zu does not have '%s':\n%s", i, words, req_text(i));
}

#define TOKEN1 "{\"access_token\": \"tok-one\", \"expires_in\": 3599, \"token_type\": \"Bearer\"}"
#define TOKEN2 "{\"access_token\": \"tok-two\", \"expires_in\": \"3599\"}"
#define NOT_FOUND                                                                       \
	"{\"error\": {\"code\": 404, \"message\": \"The resource 'x' was not found\", " \
	"\"errors\": "                                                                  \
	"[{\"reason\": \"notFound\"}]}}"

static void
test_http(void **state)
{
	struct gce_api_opts o = { 0 };
	struct gce_api *a = NULL;
	char *text, *path, *url, *file, *got;
	json_t *res = NULL, *body, *op;

	make_key();
	server_start();
	url = xasprintf("http://127.0.0.1:%d", srv.port);
	setenv("FSWB_GCE_STORAGE_URL", url, 1);
	free(url);
	url = xasprintf("http://127.0.0.1:%d/compute/v1/", srv.port);
	setenv("FSWB_GCE_COMPUTE_URL", url, 1);
	free(url);
	url = xasprintf("http://127.0.0.1:%d/md", srv.port);
	setenv("FSWB_GCE_METADATA_URL", url, 1);
	free(url);
	setenv("FSWB_GCE_RETRY_S", "1", 1);
	assert_int_equal(gce_api_global_init(), OK);

	url = xasprintf("http://127.0.0.1:%d/token", srv.port);
	text = key_json(NULL, url);
	free(url);
	path = write_key("http.json", text, 0600);
	free(text);
	o.key_file = path;
	o.zone = "us-central1-a";

	/* Open: one token, got with a signed JWT. */
	script((struct canned[]){ { 200, TOKEN1 } }, 1);
	assert_int_equal(gce_api_open(&o, &a), OK);
	expect_req(0, "POST /token HTTP/1.1");
	expect_req(0,
		   "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=ey");
	expect_req(0, "Content-Type: application/x-www-form-urlencoded");
	assert_string_equal(gce_api_project(a), "proj-1");
	assert_string_equal(gce_api_zone(a), "us-central1-a");
	assert_string_equal(gce_api_client_email(a), "sa@proj-1.iam.gserviceaccount.com");

	/* A 401 renews the token and makes the call again. */
	script((struct canned[]){ { 401, "{\"error\": {\"message\": \"expired\"}}" },
				  { 200, TOKEN2 },
				  { 200, "{\"name\": \"x\"}" } },
	       3);
	assert_int_equal(gce_compute(a, "GET", "projects/proj-1/zones/z/instances/x", NULL, &res),
			 OK);
	assert_string_equal(json_string_value(json_object_get(res, "name")), "x");
	json_decref(res);
	expect_req(0, "GET /compute/v1/projects/proj-1/zones/z/instances/x HTTP/1.1");
	expect_req(0, "Authorization: Bearer tok-one");
	expect_req(1, "POST /token");
	expect_req(2, "Authorization: Bearer tok-two");

	/* A 503 and an empty reply are retried; the answer then. */
	script((struct canned[]){ { 503, "<html>busy</html>" }, { 0, "" }, { 200, "" } }, 3);
	setenv("FSWB_GCE_RETRY_S", "10", 1);
	assert_int_equal(gce_compute(a, "GET", "projects/proj-1/global/images", NULL, &res), OK);
	assert_null(res);
	assert_int_equal(gce_api_last_http(a), 200);

	/* A 403 that asks to slow down is retried too. */
	script((struct canned[]){ { 403, "{\"error\": {\"message\": \"Rate Limit Exceeded\", "
					 "\"errors\": [{\"reason\": \"rateLimitExceeded\"}]}}" },
				  { 200, "{}" } },
	       2);
	assert_int_equal(gce_compute(a, "GET", "projects/proj-1/global/images", NULL, &res), OK);
	json_decref(res);

	/* Errors: Google's message and reason; a 404 is not retried. */
	script((struct canned[]){ { 404, NOT_FOUND } }, 1);
	assert_int_equal(gce_compute(a, "GET", "projects/proj-1/zones/z/instances/y", NULL, &res),
			 ERR_NOTFOUND);
	assert_null(res);
	assert_int_equal(gce_api_last_http(a), 404);
	assert_string_equal(gce_api_last_reason(a), "notFound");
	assert_non_null(strstr(error_msg(), "The resource 'x' was not found (notFound)"));
	assert_null(strstr(error_msg(), "tok-"));

	/* Retries end after FSWB_GCE_RETRY_S. */
	setenv("FSWB_GCE_RETRY_S", "1", 1);
	script((struct canned[]){ { 503, "x" },
				  { 503, "x" },
				  { 503, "x" },
				  { 503, "x" },
				  { 503, "x" },
				  { 503, "x" } },
	       6);
	assert_int_equal(gce_compute(a, "GET", "projects/p/x", NULL, &res), ERR_TIMEOUT);
	assert_non_null(
		strstr(error_msg(), "Compute Engine did not answer for 1 s: HTTP 503 from"));

	/* Not JSON with a 200. */
	script((struct canned[]){ { 200, "<html>" } }, 1);
	assert_int_equal(gce_compute(a, "GET", "projects/p/x", NULL, &res), ERR_PROTOCOL);
	assert_null(strstr(error_msg(), "<html>"));

	/* An insert carries a requestId and its body; the operation fails. */
	body = json_pack("{s:s}", "name", "fswb-1");
	script(
		(struct canned[]){
			{ 200,
			  "{\"name\": \"op-1\", \"status\": \"RUNNING\", \"zone\": "
			  "\"https://www.googleapis.com/compute/v1/projects/proj-1/zones/z\", "
			  "\"selfLink\": \"https://www.googleapis.com/compute/v1/projects/proj-1/"
			  "zones/z/operations/op-1\"}" },
			{ 200, "{\"name\": \"op-1\", \"status\": \"RUNNING\"}" },
			{ 200,
			  "{\"name\": \"op-1\", \"status\": \"DONE\", \"operationType\": "
			  "\"insert\", \"targetLink\": \"https://x/instances/fswb-1\", "
			  "\"httpErrorStatusCode\": 503, \"error\": {\"errors\": [{\"code\": "
			  "\"ZONE_RESOURCE_POOL_EXHAUSTED\", \"message\": \"The zone does not have "
			  "enough resources\"}]}}" } },
		3);
	assert_int_equal(gce_compute(a, "POST", "projects/proj-1/zones/z/instances", body, &op),
			 OK);
	json_decref(body);
	assert_int_equal(gce_wait_op(a, op, 60), ERR_LIMIT);
	json_decref(op);
	expect_req(0, "POST /compute/v1/projects/proj-1/zones/z/instances?requestId=");
	expect_req(0, "{\"name\":\"fswb-1\"}");
	expect_req(1, "POST /compute/v1/projects/proj-1/zones/z/operations/op-1/wait HTTP/1.1");
	expect_req(2, "POST /compute/v1/projects/proj-1/zones/z/operations/op-1/wait HTTP/1.1");
	assert_string_equal(gce_api_last_reason(a), "ZONE_RESOURCE_POOL_EXHAUSTED");
	assert_int_equal(gce_api_last_http(a), 503);
	assert_non_null(strstr(error_msg(), "insert of 'fswb-1' failed: The zone does not have "
					    "enough resources (ZONE_RESOURCE_POOL_EXHAUSTED)"));

	/* An absolute URL elsewhere is refused (the token stays home). */
	assert_int_equal(gce_compute(a, "GET", "https://evil.example/x", NULL, &res), ERR_INVALID);

	/* Cloud Storage: up, down, too big, gone, the bucket. */
	script((struct canned[]){ { 200, "{\"name\": \"a/b c\"}" } }, 1);
	assert_int_equal(gce_upload_mem(a, "bkt", "a/b c", "hello", 5), OK);
	expect_req(0, "POST /upload/storage/v1/b/bkt/o?uploadType=media&name=a%2Fb%20c HTTP/1.1");
	expect_req(0, "\r\n\r\nhello");
	expect_req(0, "Content-Type: application/octet-stream");

	file = test_tmp("up.bin");
	test_write(file, "file bytes");
	script((struct canned[]){ { 503, "" }, { 200, "{}" } }, 2);
	assert_int_equal(gce_upload_file(a, "bkt", "f", file), OK);
	expect_req(1, "\r\n\r\nfile bytes");
	free(file);

	file = test_tmp("down.bin");
	script((struct canned[]){ { 200, "0123456789" } }, 1);
	assert_int_equal(gce_download_file(a, "bkt", "a/b", file, 10), OK);
	expect_req(0, "GET /storage/v1/b/bkt/o/a%2Fb?alt=media HTTP/1.1");
	got = test_read(file);
	assert_string_equal(got, "0123456789");
	free(got);
	unlink(file);
	script((struct canned[]){ { 200, "0123456789" } }, 1);
	assert_int_equal(gce_download_file(a, "bkt", "a/b", file, 9), ERR_LIMIT);
	assert_int_equal(access(file, F_OK), -1);
	{
		char *part = xasprintf("%s.part", file);

		assert_int_equal(access(part, F_OK), -1);
		free(part);
	}
	/* a ranged read: what came after the first 4 bytes */
	script((struct canned[]){ { 206, "456789" } }, 1);
	assert_int_equal(gce_download_from(a, "bkt", "a/b", file, 4, 10), OK);
	expect_req(0, "Range: bytes=4-");
	assert_int_equal(gce_api_last_http(a), 206);
	got = test_read(file);
	assert_string_equal(got, "456789");
	free(got);
	unlink(file);
	script((struct canned[]){ { 404, NOT_FOUND } }, 1);
	assert_int_equal(gce_download_file(a, "bkt", "nope", file, 9), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "cannot download gs://bkt/nope"));
	assert_int_equal(access(file, F_OK), -1);
	free(file);

	script((struct canned[]){ { 204, "" } }, 1);
	assert_int_equal(gce_delete_object(a, "bkt", "a/b"), OK);
	expect_req(0, "DELETE /storage/v1/b/bkt/o/a%2Fb HTTP/1.1");

	script((struct canned[]){ { 200, "{\"kind\": \"storage#objects\"}" } }, 1);
	assert_int_equal(gce_bucket_check(a, "bkt"), OK);
	script((struct canned[]){ { 404, NOT_FOUND } }, 1);
	assert_int_equal(gce_bucket_check(a, "bkt"), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "the bucket 'bkt' does not exist"));
	script((struct canned[]){ { 403, "{\"error\": {\"message\": \"denied\", \"errors\": "
					 "[{\"reason\": \"forbidden\"}]}}" } },
	       1);
	assert_int_equal(gce_bucket_check(a, "bkt"), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "sa@proj-1.iam.gserviceaccount.com may not use"));
	gce_api_close(a);

	/* The token endpoint refuses the key. */
	script((struct canned[]){ { 400, "{\"error\": \"invalid_grant\", \"error_description\": "
					 "\"Invalid JWT Signature.\"}" } },
	       1);
	assert_int_equal(gce_api_open(&o, &a), ERR_INVALID);
	assert_null(a);
	assert_non_null(strstr(error_msg(), "Invalid JWT Signature. (invalid_grant)"));
	assert_non_null(strstr(error_msg(), path));

	/* The metadata path: project, zone and the token from the metadata server. */
	o.key_file = NULL;
	o.zone = NULL;
	script((struct canned[]){ { 200, "md-proj" },
				  { 200, "projects/1234/zones/europe-west1-b" },
				  { 200, TOKEN1 } },
	       3);
	assert_int_equal(gce_api_open(&o, &a), OK);
	expect_req(0, "GET /md/project/project-id HTTP/1.1");
	expect_req(0, "Metadata-Flavor: Google");
	expect_req(2, "GET /md/instance/service-accounts/default/token HTTP/1.1");
	assert_string_equal(gce_api_project(a), "md-proj");
	assert_string_equal(gce_api_zone(a), "europe-west1-b");
	assert_null(gce_api_client_email(a));
	gce_api_close(a);

	/* Off Compute Engine without a key: a short wait, then what to do. */
	setenv("FSWB_GCE_METADATA_URL", "http://127.0.0.1:1/md", 1);
	setenv("FSWB_GCE_RETRY_S", "0", 1);
	assert_int_equal(gce_api_open(&o, &a), ERR_TIMEOUT);
	assert_non_null(strstr(error_msg(), "no key file was given (-o key=FILE)"));
	unsetenv("FSWB_GCE_METADATA_URL");

	script(NULL, 0);
	server_stop();
	free(path);
	unsetenv("FSWB_GCE_RETRY_S");
	gce_api_global_cleanup();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jwt),    cmocka_unit_test(test_key_file),
		cmocka_unit_test(test_errors), cmocka_unit_test(test_escape_int64),
		cmocka_unit_test(test_http),
	};
	int rc = cmocka_run_group_tests(tests, test_setup_hermetic, test_teardown_hermetic);

	free(test_pem);
	EVP_PKEY_free(test_key);
	return rc;
}
