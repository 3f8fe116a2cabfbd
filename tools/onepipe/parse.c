// SPDX-License-Identifier: GPL-2.0
/*
 * Argument parsing for the onepipe tool (see parse.h).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/onepipe.h>

#include "parse.h"

bool op_matches(const char *arg, const char *word)
{
	size_t len = strlen(arg);

	return len > 0 && len <= strlen(word) && !strncmp(arg, word, len);
}

int op_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	int base = 10;
	char *end;

	/* strtoull() would accept blanks, a sign and "0x" on its own. */
	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!isxdigit((unsigned char)s[0]))
			return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, base);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int op_parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;
	int err = op_parse_uint(s, UINT32_MAX, &v);

	if (!err)
		*out = v;
	return err;
}

int op_parse_host_id(const char *s, uint32_t *out)
{
	uint64_t v;
	int err = op_parse_uint(s, OP_HOST_ID_MAX, &v);

	if (err)
		return err;
	if (v == ONEPIPE_HOST_LOCAL)
		return -ERANGE;
	*out = v;
	return 0;
}

int op_parse_port(const char *s, uint16_t *out)
{
	uint64_t v;
	int err = op_parse_uint(s, UINT16_MAX, &v);

	if (err)
		return err;
	if (v == 0)
		return -ERANGE;
	*out = v;
	return 0;
}

int op_parse_udp_addr(const char *s, uint16_t defport,
		      struct op_udp_addr *out)
{
	char host[INET_ADDRSTRLEN];
	const char *colon = strchr(s, ':');
	size_t len = colon ? (size_t)(colon - s) : strlen(s);
	struct op_udp_addr a = { .port = defport };

	if (len == 0 || len >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, len);
	host[len] = '\0';
	/* inet_pton() takes only full dotted quads: no "10.1", no names. */
	if (inet_pton(AF_INET, host, &a.addr) != 1)
		return -EINVAL;
	if (colon && op_parse_port(colon + 1, &a.port))
		return -EINVAL;
	*out = a;
	return 0;
}

void op_format_udp_addr(char *buf, size_t len, struct in_addr addr,
			uint16_t port)
{
	char host[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &addr, host, sizeof(host));
	snprintf(buf, len, "%s:%u", host, port);
}

int op_parse_gid(const char *s, uint8_t gid[16])
{
	struct in_addr v4;

	if (inet_pton(AF_INET6, s, gid) == 1)
		return 0;
	if (inet_pton(AF_INET, s, &v4) != 1)
		return -EINVAL;
	/* ::ffff:a.b.c.d, the GID of an IPv4 address on a RoCEv2 port */
	memset(gid, 0, 10);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, &v4.s_addr, 4);
	return 0;
}

void op_format_gid(char *buf, size_t len, const uint8_t gid[16])
{
	if (!inet_ntop(AF_INET6, gid, buf, len))
		snprintf(buf, len, "?");
}

int op_parse_qpn(const char *s, uint32_t *out)
{
	uint64_t v;
	int err = op_parse_uint(s, OP_QPN_MAX, &v);

	if (err)
		return err;
	if (v == 0)
		return -ERANGE;
	*out = v;
	return 0;
}

int op_parse_qkey(const char *s, uint32_t *out)
{
	uint64_t v;
	int err = op_parse_uint(s, OP_QKEY_MAX, &v);

	if (!err)
		*out = v;
	return err;
}

static int parse_transport(const char *s, uint32_t *out)
{
	if (!strcmp(s, "udp")) {
		*out = ONEPIPE_TRANSPORT_UDP;
		return 0;
	}
	if (!strcmp(s, "verbs")) {
		*out = ONEPIPE_TRANSPORT_VERBS;
		return 0;
	}
	return -EINVAL;
}

/* Where "host set" parsing is, and what it has seen. */
struct hs_parser {
	struct op_host_set *req;
	char *err;
	size_t errlen;
	bool has_id;
	/* the peer being described, after the first "peer" keyword */
	struct op_verbs_peer *peer;
	bool peer_gid, peer_qpn;
};

static int hs_fail(struct hs_parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int hs_fail(struct hs_parser *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, p->errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int hs_udp_addr(struct hs_parser *p, const char *key, const char *val,
		       bool *has, struct op_udp_addr *a)
{
	if (*has)
		return hs_fail(p, "duplicate \"%s\"", key);
	if (op_parse_udp_addr(val, ONEPIPE_UDP_PORT, a))
		return hs_fail(p, "invalid %s address \"%s\" (ADDR[:PORT])",
			       key, val);
	*has = true;
	return 0;
}

static int hs_port(struct hs_parser *p, const char *val)
{
	struct op_host_set *req = p->req;

	if (req->has_port)
		return hs_fail(p, "duplicate \"port\"");
	if (op_parse_u32(val, &req->port) || req->port == 0)
		return hs_fail(p, "invalid port \"%s\" (1..%u)", val,
			       UINT32_MAX);
	req->has_port = true;
	return 0;
}

/* The host's own Q_Key, or (@peer) a peer's. */
static int hs_qkey(struct hs_parser *p, const char *val, bool *has,
		   uint32_t *qkey, const struct op_verbs_peer *peer)
{
	if (*has && peer)
		return hs_fail(p, "duplicate \"qkey\" for peer %u", peer->host);
	if (*has)
		return hs_fail(p, "duplicate \"qkey\"");
	if (op_parse_qkey(val, qkey))
		return hs_fail(p, "invalid qkey \"%s\" (0..0x%x)", val,
			       OP_QKEY_MAX);
	*has = true;
	return 0;
}

static int hs_dev(struct hs_parser *p, const char *val)
{
	struct op_host_set *req = p->req;
	size_t len = strlen(val);

	if (req->has_dev)
		return hs_fail(p, "duplicate \"dev\"");
	if (len == 0 || len >= sizeof(req->dev) || strchr(val, '/'))
		return hs_fail(p, "invalid RDMA device name \"%s\"", val);
	memcpy(req->dev, val, len + 1);
	req->has_dev = true;
	return 0;
}

/* The previous peer, if any, must be complete before another starts. */
static int hs_peer_done(struct hs_parser *p)
{
	if (!p->peer)
		return 0;
	if (!p->peer_gid)
		return hs_fail(p, "peer %u needs \"gid\"", p->peer->host);
	if (!p->peer_qpn)
		return hs_fail(p, "peer %u needs \"qpn\"", p->peer->host);
	return 0;
}

static int hs_peer(struct hs_parser *p, const char *val)
{
	struct op_host_set *req = p->req;
	struct op_verbs_peer *peers;
	uint64_t id;
	unsigned int i;

	if (hs_peer_done(p))
		return -EINVAL;
	if (op_parse_uint(val, OP_HOST_ID_MAX, &id))
		return hs_fail(p, "invalid peer host id \"%s\" (0..%u)", val,
			       OP_HOST_ID_MAX);
	for (i = 0; i < req->npeers; i++)
		if (req->peers[i].host == id)
			return hs_fail(p, "duplicate peer %u", (uint32_t)id);
	if (req->npeers >= OP_VERBS_PEERS_MAX)
		return hs_fail(p, "too many peers (at most %u)",
			       OP_VERBS_PEERS_MAX);
	peers = realloc(req->peers, (req->npeers + 1) * sizeof(*peers));
	if (!peers)
		return hs_fail(p, "out of memory");
	req->peers = peers;
	p->peer = &peers[req->npeers++];
	memset(p->peer, 0, sizeof(*p->peer));
	p->peer->host = id;
	p->peer_gid = false;
	p->peer_qpn = false;
	return 0;
}

/* gid, qpn and qkey after a "peer": they describe that peer. */
static int hs_peer_key(struct hs_parser *p, const char *key, const char *val)
{
	struct op_verbs_peer *peer = p->peer;

	if (op_matches(key, "peer"))
		return hs_peer(p, val);
	if (op_matches(key, "gid")) {
		if (p->peer_gid)
			return hs_fail(p, "duplicate \"gid\" for peer %u",
				       peer->host);
		if (op_parse_gid(val, peer->gid))
			return hs_fail(p, "invalid gid \"%s\" (IPv6 or IPv4 address)",
				       val);
		p->peer_gid = true;
		return 0;
	}
	if (op_matches(key, "qpn")) {
		if (p->peer_qpn)
			return hs_fail(p, "duplicate \"qpn\" for peer %u",
				       peer->host);
		if (op_parse_qpn(val, &peer->qpn))
			return hs_fail(p, "invalid qpn \"%s\" (1..%u)", val,
				       OP_QPN_MAX);
		p->peer_qpn = true;
		return 0;
	}
	if (op_matches(key, "qkey"))
		return hs_qkey(p, val, &peer->has_qkey, &peer->qkey, peer);
	return 1;	/* not a peer keyword */
}

static int hs_host_key(struct hs_parser *p, const char *key, const char *val)
{
	struct op_host_set *req = p->req;

	if (op_matches(key, "id")) {
		if (p->has_id)
			return hs_fail(p, "duplicate \"id\"");
		if (op_parse_host_id(val, &req->id))
			return hs_fail(p, "invalid host id \"%s\" (1..%u)",
				       val, OP_HOST_ID_MAX);
		p->has_id = true;
		return 0;
	}
	if (op_matches(key, "transport")) {
		if (req->has_transport)
			return hs_fail(p, "duplicate \"transport\"");
		if (parse_transport(val, &req->transport))
			return hs_fail(p, "unknown transport \"%s\" (udp, verbs)",
				       val);
		req->has_transport = true;
		return 0;
	}
	if (op_matches(key, "local"))
		return hs_udp_addr(p, "local", val, &req->has_local,
				   &req->local);
	if (op_matches(key, "uplink"))
		return hs_udp_addr(p, "uplink", val, &req->has_uplink,
				   &req->uplink);
	if (op_matches(key, "dev"))
		return hs_dev(p, val);
	if (op_matches(key, "port"))
		return hs_port(p, val);
	if (op_matches(key, "peer"))
		return hs_peer(p, val);
	if (op_matches(key, "qkey"))
		return hs_qkey(p, val, &req->has_qkey, &req->qkey, NULL);
	return hs_fail(p, "unknown keyword \"%s\"", key);
}

static bool is_host_key(const char *key)
{
	static const char *const keys[] = {
		"id", "transport", "local", "uplink", "dev", "port", NULL,
	};
	const char *const *k;

	for (k = keys; *k; k++)
		if (op_matches(key, *k))
			return true;
	return false;
}

/*
 * The UDP keywords imply transport udp, the verbs ones transport verbs;
 * an explicit transport must agree with them.
 */
static int hs_transport(struct hs_parser *p)
{
	struct op_host_set *req = p->req;
	bool udp = req->has_local || req->has_uplink;
	bool verbs = req->has_dev || req->has_port || req->has_qkey ||
		     req->npeers;

	if (udp && verbs)
		return hs_fail(p, "local/uplink (transport udp) and dev/port/qkey/peer (transport verbs) do not mix");
	if (!req->has_transport) {
		if (udp || verbs) {
			req->has_transport = true;
			req->transport = udp ? ONEPIPE_TRANSPORT_UDP :
					       ONEPIPE_TRANSPORT_VERBS;
		}
		return 0;
	}
	if (udp && req->transport != ONEPIPE_TRANSPORT_UDP)
		return hs_fail(p, "local/uplink need transport udp");
	if (verbs && req->transport != ONEPIPE_TRANSPORT_VERBS)
		return hs_fail(p, "dev/port/qkey/peer need transport verbs");
	return 0;
}

int op_parse_host_set(int argc, char **argv, struct op_host_set *req,
		      char *err, size_t errlen)
{
	struct hs_parser p = { .req = req, .err = err, .errlen = errlen };
	int i, ret;

	memset(req, 0, sizeof(*req));
	for (i = 0; i < argc; i += 2) {
		const char *key = argv[i], *val;

		if (i + 1 >= argc)
			return hs_fail(&p, "\"%s\" needs a value", key);
		val = argv[i + 1];
		if (p.peer) {
			ret = hs_peer_key(&p, key, val);
			if (ret < 0)
				return ret;
			if (ret == 0)
				continue;
			/* Keep "qkey" unambiguous: host keywords come first. */
			if (is_host_key(key))
				return hs_fail(&p, "\"%s\" must come before the first peer",
					       key);
			return hs_fail(&p, "unknown keyword \"%s\"", key);
		}
		ret = hs_host_key(&p, key, val);
		if (ret)
			return ret;
	}
	if (!p.has_id)
		return hs_fail(&p, "\"id\" is required");
	if (hs_peer_done(&p))
		return -EINVAL;
	return hs_transport(&p);
}

void op_host_set_free(struct op_host_set *req)
{
	free(req->peers);
	req->peers = NULL;
	req->npeers = 0;
}
