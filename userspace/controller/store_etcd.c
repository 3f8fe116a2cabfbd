// SPDX-License-Identifier: GPL-2.0
/*
 * The etcd state store (ctl_store.h), spoken through etcd's v3 JSON
 * gateway (POST /v3/..., keys and values base64, int64s as strings) with
 * libcurl and json-c, so onepiped needs no gRPC stack.
 *
 * Keys, under PREFIX:
 *   PREFIX/leader  the active instance's id, attached to its lease: when
 *                  the instance stops renewing, etcd deletes the key and
 *                  a standby's next campaign creates it.
 *   PREFIX/state   the blob.  Written only by a transaction that checks
 *                  PREFIX/leader still carries the writer's lease, so an
 *                  instance that lost the lease (paused, partitioned) and
 *                  does not know it yet cannot overwrite its successor.
 *
 * Every request goes to the member that answered last; on a connection
 * failure, a timeout or an "unavailable" answer it goes on to the next
 * member, each attempt bounded by ETCD_TIMEOUT_MS.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "ctl_store.h"

#define ETCD_CONNECT_TIMEOUT_MS	500
#define ETCD_TIMEOUT_MS		1000

/* gRPC status codes the gateway passes on in its error answers. */
#define GRPC_DEADLINE_EXCEEDED	4
#define GRPC_NOT_FOUND		5
#define GRPC_UNAVAILABLE	14

struct etcd_store {
	struct ctl_store head;
	char **eps;		/* "http://host:port", no trailing slash */
	unsigned int n_eps;
	unsigned int cur;	/* the member that answered last */
	char *leader_key;
	char *state_key;
	char *id;
	unsigned int ttl_s;
	long long lease;	/* our lease, 0 if none */
	int active;		/* our last campaign won and nothing said since
				 * that we lost */
	CURL *curl;
	struct curl_slist *hdrs;
	char *rbuf;		/* the answer being received */
	size_t rlen, rcap;
};

static struct etcd_store *to_etcd(struct ctl_store *s)
{
	return (struct etcd_store *)s;
}

/* --- base64 (RFC 4648, padded), as the gateway wants bytes ------------ */

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *b64_encode(const void *data, size_t len)
{
	const unsigned char *p = data;
	char *out, *o;
	size_t i;

	out = malloc((len + 2) / 3 * 4 + 1);
	if (!out)
		return NULL;
	o = out;
	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 |
			     p[i + 2];

		*o++ = b64_alphabet[v >> 18];
		*o++ = b64_alphabet[(v >> 12) & 63];
		*o++ = b64_alphabet[(v >> 6) & 63];
		*o++ = b64_alphabet[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)p[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		*o++ = b64_alphabet[v >> 18];
		*o++ = b64_alphabet[(v >> 12) & 63];
		*o++ = i + 1 < len ? b64_alphabet[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/**
 * b64_decode() - decode base64 into a NUL-terminated buffer
 * @s: the text (padding optional)
 * @out: the bytes, malloc'd, with a NUL after them
 * @len: their number
 *
 * Return: 0, -EPROTO on a character outside the alphabet, -ENOMEM.
 */
static int b64_decode(const char *s, char **out, size_t *len)
{
	size_t n = strlen(s), i, o = 0;
	uint32_t acc = 0;
	int bits = 0, v;
	char *buf;

	while (n && s[n - 1] == '=')
		n--;
	buf = malloc(n / 4 * 3 + 3);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		v = b64_value(s[i]);
		if (v < 0) {
			free(buf);
			return -EPROTO;
		}
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf[o++] = (char)(acc >> bits & 0xff);
		}
	}
	buf[o] = '\0';
	*out = buf;
	*len = o;
	return 0;
}

/* --- JSON helpers -------------------------------------------------------- */

/* Add a bytes field (key or value): base64 of @len bytes at @data. */
static int j_add_bytes(json_object *o, const char *field, const void *data,
		       size_t len)
{
	char *b = b64_encode(data, len);

	if (!b)
		return -ENOMEM;
	json_object_object_add(o, field, json_object_new_string(b));
	free(b);
	return 0;
}

/* int64s go as strings: that is how the gateway writes them too. */
static void j_add_i64(json_object *o, const char *field, long long v)
{
	char num[24];

	snprintf(num, sizeof(num), "%lld", v);
	json_object_object_add(o, field, json_object_new_string(num));
}

/*
 * An int64 field of an answer.  The gateway leaves out fields that are
 * zero (and "false"), so absent means 0.
 */
static long long j_get_i64(json_object *o, const char *field)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, field, &v))
		return 0;
	if (json_object_is_type(v, json_type_string))
		return strtoll(json_object_get_string(v), NULL, 10);
	return (long long)json_object_get_int64(v);
}

static json_object *j_get(json_object *o, const char *field)
{
	json_object *v = NULL;

	if (o)
		json_object_object_get_ex(o, field, &v);
	return v;
}

/* The first key-value of a range answer, NULL if the key is absent. */
static json_object *j_first_kv(json_object *range)
{
	json_object *kvs = j_get(range, "kvs");

	if (!kvs || !json_object_is_type(kvs, json_type_array) ||
	    !json_object_array_length(kvs))
		return NULL;
	return json_object_array_get_idx(kvs, 0);
}

/* --- requests ------------------------------------------------------------ */

static size_t etcd_recv(char *data, size_t size, size_t nmemb, void *arg)
{
	struct etcd_store *es = arg;
	size_t n = size * nmemb;
	char *nbuf;

	if (es->rlen + n + 1 > es->rcap) {
		size_t cap = es->rcap ? es->rcap : 4096;

		while (es->rlen + n + 1 > cap)
			cap *= 2;
		nbuf = realloc(es->rbuf, cap);
		if (!nbuf)
			return 0;	/* makes curl fail the transfer */
		es->rbuf = nbuf;
		es->rcap = cap;
	}
	memcpy(es->rbuf + es->rlen, data, n);
	es->rlen += n;
	es->rbuf[es->rlen] = '\0';
	return n;
}

static json_object *parse_answer(const char *text, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *o;

	if (!tok)
		return NULL;
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/**
 * etcd_call() - POST one gateway request, trying the members in turn
 * @es: the store
 * @path: e.g. "/v3/kv/range"
 * @req: the request body (not consumed)
 * @ans: the parsed answer of a member that said 200 (caller puts it)
 *
 * A member that cannot be reached, times out, says "unavailable" (no
 * leader, leader changed, stopping) or does not answer like etcd may be
 * the only sick one: the next one is tried.  Other errors are the
 * request's own and are returned at once.
 *
 * Return: 0, -ENOENT if etcd says "not found", -ETIMEDOUT /
 * -EHOSTUNREACH if no member answered, -EPROTO / -EIO otherwise.
 */
static int etcd_call(struct etcd_store *es, const char *path,
		     json_object *req, json_object **ans)
{
	const char *body;
	int err = -EHOSTUNREACH;
	unsigned int i;

	*ans = NULL;
	body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	if (!body)
		return -ENOMEM;
	for (i = 0; i < es->n_eps; i++) {
		unsigned int idx = (es->cur + i) % es->n_eps;
		json_object *o, *msg;
		long long grpc;
		char url[512];
		CURLcode rc;
		long code = 0;

		snprintf(url, sizeof(url), "%s%s", es->eps[idx], path);
		es->rlen = 0;
		curl_easy_setopt(es->curl, CURLOPT_URL, url);
		curl_easy_setopt(es->curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(es->curl, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)strlen(body));
		rc = curl_easy_perform(es->curl);
		if (rc != CURLE_OK) {
			err = rc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT :
							       -EHOSTUNREACH;
			fprintf(stderr, "etcd %s: %s\n", url,
				curl_easy_strerror(rc));
			continue;
		}
		curl_easy_getinfo(es->curl, CURLINFO_RESPONSE_CODE, &code);
		o = parse_answer(es->rbuf ? es->rbuf : "", es->rlen);
		if (code == 200 && o) {
			es->cur = idx;
			*ans = o;
			return 0;
		}
		msg = j_get(o, "message");
		fprintf(stderr, "etcd %s: HTTP %ld: %s\n", url, code,
			msg ? json_object_get_string(msg) : "(not etcd's)");
		grpc = j_get(o, "code") ? j_get_i64(o, "code") : -1;
		json_object_put(o);
		switch (grpc) {
		case GRPC_NOT_FOUND:
			return -ENOENT;
		case -1:		/* not etcd that answered */
			err = -EPROTO;
			continue;
		case GRPC_DEADLINE_EXCEEDED:
		case GRPC_UNAVAILABLE:	/* no leader, leader changed, ... */
			err = -ETIMEDOUT;
			continue;
		default:		/* the request's own fault */
			return -EIO;
		}
	}
	return err;
}

/* --- leases and keys ----------------------------------------------------- */

/* Grant a new lease of the store's TTL; the old one (if any) is forgotten
 * and simply expires. */
static int lease_grant(struct etcd_store *es)
{
	json_object *req = json_object_new_object(), *ans;
	long long ttl;
	int err;

	if (!req)
		return -ENOMEM;
	j_add_i64(req, "TTL", es->ttl_s);
	err = etcd_call(es, "/v3/lease/grant", req, &ans);
	json_object_put(req);
	if (err)
		return err;
	es->lease = j_get_i64(ans, "ID");
	/* etcd may raise a TTL below its minimum: believe its answer */
	ttl = j_get_i64(ans, "TTL");
	json_object_put(ans);
	if (!es->lease)
		return -EPROTO;
	if (ttl > 0)
		es->head.lease_ms = (unsigned int)ttl * 1000;
	return 0;
}

/**
 * lease_refresh() - renew our lease once
 * @es: the store, with a lease
 *
 * The gateway maps the keepalive stream to one answer per request line,
 * {"result": {"ID", "TTL"}}; a TTL of 0 (left out) means etcd no longer
 * knows the lease.
 *
 * Return: 1 if the lease lives, 0 if it is gone, negative errno if etcd
 * could not be asked.
 */
static int lease_refresh(struct etcd_store *es)
{
	json_object *req = json_object_new_object(), *ans, *res;
	int err;

	if (!req)
		return -ENOMEM;
	j_add_i64(req, "ID", es->lease);
	err = etcd_call(es, "/v3/lease/keepalive", req, &ans);
	json_object_put(req);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	res = j_get(ans, "result");
	if (!res) {
		json_object_put(ans);
		return -EPROTO;
	}
	err = j_get_i64(res, "TTL") > 0;
	json_object_put(ans);
	return err;
}

static void lease_revoke(struct etcd_store *es)
{
	json_object *req = json_object_new_object(), *ans;

	if (!req)
		return;
	j_add_i64(req, "ID", es->lease);
	if (!etcd_call(es, "/v3/lease/revoke", req, &ans))
		json_object_put(ans);
	json_object_put(req);
	es->lease = 0;
}

/* The lease attached to PREFIX/leader: 0 if the key is absent. */
static int leader_lease(struct etcd_store *es, long long *lease)
{
	json_object *req = json_object_new_object(), *ans;
	int err;

	if (!req)
		return -ENOMEM;
	err = j_add_bytes(req, "key", es->leader_key, strlen(es->leader_key));
	if (!err)
		err = etcd_call(es, "/v3/kv/range", req, &ans);
	json_object_put(req);
	if (err)
		return err;
	*lease = j_get_i64(j_first_kv(ans), "lease");
	json_object_put(ans);
	return 0;
}

/* --- the operations ------------------------------------------------------ */

static int etcd_load(struct ctl_store *s, char **blob, size_t *len)
{
	struct etcd_store *es = to_etcd(s);
	json_object *req = json_object_new_object(), *ans, *kv, *val;
	size_t n;
	int err;

	if (!req)
		return -ENOMEM;
	err = j_add_bytes(req, "key", es->state_key, strlen(es->state_key));
	if (!err)
		err = etcd_call(es, "/v3/kv/range", req, &ans);
	json_object_put(req);
	if (err)
		return err;
	kv = j_first_kv(ans);
	if (!kv) {
		json_object_put(ans);
		return -ENOENT;
	}
	/* An empty value is left out of the answer. */
	val = j_get(kv, "value");
	err = b64_decode(val ? json_object_get_string(val) : "", blob, &n);
	json_object_put(ans);
	if (!err && len)
		*len = n;
	return err;
}

static int etcd_save(struct ctl_store *s, const char *blob, size_t len)
{
	struct etcd_store *es = to_etcd(s);
	json_object *req, *cmp, *cmps, *put, *op, *ops, *ans;
	int err;

	/*
	 * Not only a shortcut: with no lease of ours the compare below would
	 * be "leader's lease == 0", which an absent leader key satisfies.
	 */
	if (!es->active || !es->lease)
		return -EPERM;

	req = json_object_new_object();
	cmps = json_object_new_array();
	cmp = json_object_new_object();
	ops = json_object_new_array();
	op = json_object_new_object();
	put = json_object_new_object();
	if (!req || !cmps || !cmp || !ops || !op || !put) {
		json_object_put(req);
		json_object_put(cmps);
		json_object_put(cmp);
		json_object_put(ops);
		json_object_put(op);
		json_object_put(put);
		return -ENOMEM;
	}
	json_object_object_add(cmp, "result", json_object_new_string("EQUAL"));
	json_object_object_add(cmp, "target", json_object_new_string("LEASE"));
	j_add_i64(cmp, "lease", es->lease);
	json_object_array_add(cmps, cmp);
	json_object_object_add(req, "compare", cmps);
	json_object_object_add(op, "request_put", put);
	json_object_array_add(ops, op);
	json_object_object_add(req, "success", ops);
	err = j_add_bytes(cmp, "key", es->leader_key, strlen(es->leader_key));
	if (!err)
		err = j_add_bytes(put, "key", es->state_key,
				  strlen(es->state_key));
	if (!err)
		err = j_add_bytes(put, "value", blob, len);
	if (!err)
		err = etcd_call(es, "/v3/kv/txn", req, &ans);
	json_object_put(req);
	if (err)
		return err;
	if (!json_object_get_boolean(j_get(ans, "succeeded"))) {
		/* somebody else is leader now: we were deposed */
		es->active = 0;
		err = -EPERM;
	}
	json_object_put(ans);
	return err;
}

static int etcd_keepalive(struct ctl_store *s)
{
	struct etcd_store *es = to_etcd(s);
	long long holder;
	int err;

	if (!es->active || !es->lease)
		return -EPERM;
	err = lease_refresh(es);
	if (err < 0)
		return err;
	if (!err) {
		es->lease = 0;
		es->active = 0;
		return -EPERM;
	}
	/* The lease can outlive our key only if somebody deleted the key;
	 * then a standby may have taken over under its own lease. */
	err = leader_lease(es, &holder);
	if (err)
		return err;
	if (holder != es->lease) {
		es->active = 0;
		return -EPERM;
	}
	return 0;
}

/**
 * leader_txn() - the election: create PREFIX/leader under our lease
 * @es: the store, with a live lease
 *
 * If the key exists its range comes back instead; if that key carries our
 * own lease, an earlier attempt of ours succeeded but its answer was
 * lost (the request was then retried on another member), and we won.
 *
 * Return: 1 won, 0 somebody else holds the key, negative errno.
 */
static int leader_txn(struct etcd_store *es)
{
	json_object *req, *cmp, *cmps, *put, *get, *op1, *op2, *ok, *fail;
	json_object *ans, *resps, *range;
	int err;

	req = json_object_new_object();
	cmps = json_object_new_array();
	cmp = json_object_new_object();
	ok = json_object_new_array();
	fail = json_object_new_array();
	op1 = json_object_new_object();
	op2 = json_object_new_object();
	put = json_object_new_object();
	get = json_object_new_object();
	if (!req || !cmps || !cmp || !ok || !fail || !op1 || !op2 || !put ||
	    !get) {
		json_object_put(req);
		json_object_put(cmps);
		json_object_put(cmp);
		json_object_put(ok);
		json_object_put(fail);
		json_object_put(op1);
		json_object_put(op2);
		json_object_put(put);
		json_object_put(get);
		return -ENOMEM;
	}
	json_object_object_add(cmp, "result", json_object_new_string("EQUAL"));
	json_object_object_add(cmp, "target", json_object_new_string("CREATE"));
	j_add_i64(cmp, "create_revision", 0);
	json_object_array_add(cmps, cmp);
	json_object_object_add(req, "compare", cmps);
	j_add_i64(put, "lease", es->lease);
	json_object_object_add(op1, "request_put", put);
	json_object_array_add(ok, op1);
	json_object_object_add(req, "success", ok);
	json_object_object_add(op2, "request_range", get);
	json_object_array_add(fail, op2);
	json_object_object_add(req, "failure", fail);
	err = j_add_bytes(cmp, "key", es->leader_key, strlen(es->leader_key));
	if (!err)
		err = j_add_bytes(put, "key", es->leader_key,
				  strlen(es->leader_key));
	if (!err)
		err = j_add_bytes(put, "value", es->id, strlen(es->id));
	if (!err)
		err = j_add_bytes(get, "key", es->leader_key,
				  strlen(es->leader_key));
	if (!err)
		err = etcd_call(es, "/v3/kv/txn", req, &ans);
	json_object_put(req);
	if (err)
		return err;
	if (json_object_get_boolean(j_get(ans, "succeeded"))) {
		err = 1;
	} else {
		resps = j_get(ans, "responses");
		range = NULL;
		if (resps && json_object_is_type(resps, json_type_array) &&
		    json_object_array_length(resps))
			range = j_get(json_object_array_get_idx(resps, 0),
				      "response_range");
		err = j_get_i64(j_first_kv(range), "lease") == es->lease;
	}
	json_object_put(ans);
	return err;
}

static int etcd_campaign(struct ctl_store *s)
{
	struct etcd_store *es = to_etcd(s);
	int err;

	if (es->active) {
		err = etcd_keepalive(s);
		if (err != -EPERM)
			return err ? err : 1;
		/* lost it: stand again like anybody else */
	}
	/*
	 * A standby keeps its lease between campaigns (one request fewer
	 * each time); if it campaigned too rarely the lease is gone and it
	 * takes a new one.
	 */
	if (es->lease) {
		err = lease_refresh(es);
		if (err < 0)
			return err;
		if (!err)
			es->lease = 0;
	}
	if (!es->lease) {
		err = lease_grant(es);
		if (err)
			return err;
	}
	err = leader_txn(es);
	if (err < 0)
		return err;
	es->active = err;
	return err;
}

static void etcd_close(struct ctl_store *s)
{
	struct etcd_store *es = to_etcd(s);
	unsigned int i;

	if (!es)
		return;
	/* Revoking deletes PREFIX/leader with it: a standby need not wait
	 * for the TTL. */
	if (es->lease && es->curl)
		lease_revoke(es);
	if (es->curl)
		curl_easy_cleanup(es->curl);
	curl_slist_free_all(es->hdrs);
	for (i = 0; i < es->n_eps; i++)
		free(es->eps[i]);
	free(es->eps);
	free(es->leader_key);
	free(es->state_key);
	free(es->id);
	free(es->rbuf);
	free(es);
	curl_global_cleanup();
}

static const struct ctl_store_ops etcd_ops = {
	.name = "etcd",
	.load = etcd_load,
	.save = etcd_save,
	.campaign = etcd_campaign,
	.keepalive = etcd_keepalive,
	.close = etcd_close,
};

/* Split "a,b, c" into "http://a", ...; a scheme given is kept. */
static int parse_endpoints(struct etcd_store *es, const char *list)
{
	const char *p = list;

	while (*p) {
		const char *end;
		size_t n;
		char **neps, *ep;

		while (*p == ' ' || *p == ',')
			p++;
		if (!*p)
			break;
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		n = (size_t)(end - p);
		while (n && (p[n - 1] == ' ' || p[n - 1] == '/'))
			n--;
		if (asprintf(&ep, "%s%.*s", strstr(p, "://") &&
			     strstr(p, "://") < end ? "" : "http://",
			     (int)n, p) < 0)
			return -ENOMEM;
		neps = realloc(es->eps, (es->n_eps + 1) * sizeof(*neps));
		if (!neps) {
			free(ep);
			return -ENOMEM;
		}
		es->eps = neps;
		es->eps[es->n_eps++] = ep;
		p = end;
	}
	return es->n_eps ? 0 : -EINVAL;
}

/**
 * ctl_store_etcd_open() - open the etcd store
 * @endpoints: comma-separated [http://]HOST:PORT of the cluster's members
 * @prefix: key prefix, e.g. "/onepipe"
 * @id: this instance's name, the leader key's value
 * @ttl_s: lease TTL in seconds (etcd may raise it to its minimum)
 *
 * Sends nothing yet: an unreachable cluster shows at the first call.
 *
 * Return: the store, or NULL with errno set.
 */
struct ctl_store *ctl_store_etcd_open(const char *endpoints,
				      const char *prefix, const char *id,
				      unsigned int ttl_s)
{
	struct etcd_store *es;
	size_t plen;
	int err;

	if (!endpoints || !prefix || !id || !*id || !ttl_s) {
		errno = EINVAL;
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		errno = ENOMEM;
		return NULL;
	}
	es = calloc(1, sizeof(*es));
	if (!es) {
		curl_global_cleanup();
		errno = ENOMEM;
		return NULL;
	}
	es->head.ops = &etcd_ops;
	es->head.lease_ms = ttl_s * 1000;
	es->ttl_s = ttl_s;
	plen = strlen(prefix);
	while (plen && prefix[plen - 1] == '/')
		plen--;
	err = parse_endpoints(es, endpoints);
	if (!err && asprintf(&es->leader_key, "%.*s/leader", (int)plen,
			     prefix) < 0) {
		es->leader_key = NULL;
		err = -ENOMEM;
	}
	if (!err && asprintf(&es->state_key, "%.*s/state", (int)plen,
			     prefix) < 0) {
		es->state_key = NULL;
		err = -ENOMEM;
	}
	es->id = strdup(id);
	es->curl = curl_easy_init();
	/* no "Expect: 100-continue" round trip before a big blob */
	es->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	if (es->hdrs) {
		struct curl_slist *h = curl_slist_append(es->hdrs, "Expect:");

		if (h)
			es->hdrs = h;
		else
			err = -ENOMEM;
	}
	if (!err && (!es->id || !es->curl || !es->hdrs))
		err = -ENOMEM;
	if (err) {
		etcd_close(&es->head);
		errno = -err;
		return NULL;
	}
	curl_easy_setopt(es->curl, CURLOPT_HTTPHEADER, es->hdrs);
	curl_easy_setopt(es->curl, CURLOPT_WRITEFUNCTION, etcd_recv);
	curl_easy_setopt(es->curl, CURLOPT_WRITEDATA, es);
	curl_easy_setopt(es->curl, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)ETCD_CONNECT_TIMEOUT_MS);
	curl_easy_setopt(es->curl, CURLOPT_TIMEOUT_MS, (long)ETCD_TIMEOUT_MS);
	/* no signals (timeouts in a daemon), no proxy from the environment */
	curl_easy_setopt(es->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(es->curl, CURLOPT_PROXY, "");
	return &es->head;
}
