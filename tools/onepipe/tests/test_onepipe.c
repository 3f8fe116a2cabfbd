// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the onepipe tool's kernel-free parts: number, address and
 * "host set" argument parsing, the JSON writer, and the text/JSON rendering
 * of host, link, sock, peer and fail replies built by hand; the JSON
 * reader and the rendering of onepiped's "controller show" answer.  TAP
 * output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/genetlink.h>

#include "ctl_proto.h"
#include "json.h"
#include "parse.h"
#include "tool.h"

static int tests, failures;

static bool ok(bool cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	tests++;
	printf("%sok %d - ", cond ? "" : "not ", tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		failures++;
	return cond;
}

/* Print both strings as TAP diagnostics when they differ. */
static void is_str(const char *got, const char *want, const char *name)
{
	const char *p;

	if (ok(!strcmp(got, want), "%s", name))
		return;
	printf("# got:\n# ");
	for (p = got; *p; p++)
		printf(*p == '\n' ? "\n# " : "%c", *p);
	printf("\n# want:\n# ");
	for (p = want; *p; p++)
		printf(*p == '\n' ? "\n# " : "%c", *p);
	putchar('\n');
}

static struct nlmsghdr *fake_reply(char *buf, uint8_t cmd);
static char *render_dump(struct nlmsghdr **msgs, int n, uint16_t nest_type,
			 const struct op_attr_spec *spec, unsigned int max,
			 op_print_fn print, bool json);

static void test_matches(void)
{
	ok(op_matches("h", "host"), "matches: h is host");
	ok(op_matches("host", "host"), "matches: host is host");
	ok(!op_matches("hosts", "host"), "matches: hosts is not host");
	ok(!op_matches("", "host"), "matches: empty string matches nothing");
	ok(!op_matches("se", "show"), "matches: se is not show");
}

static void test_numbers(void)
{
	static const struct {
		const char *s;
		uint64_t max;
		int err;
		uint64_t v;
	} cases[] = {
		{ "0", UINT32_MAX, 0, 0 },
		{ "42", UINT32_MAX, 0, 42 },
		{ "0x10", UINT32_MAX, 0, 16 },
		{ "0XfF", UINT32_MAX, 0, 255 },
		{ "007", UINT32_MAX, 0, 7 },	/* decimal, not octal */
		{ "4294967295", UINT32_MAX, 0, 4294967295ULL },
		{ "4294967296", UINT32_MAX, -ERANGE, 0 },
		{ "18446744073709551615", UINT64_MAX, 0, UINT64_MAX },
		{ "18446744073709551616", UINT64_MAX, -ERANGE, 0 },
		{ "", UINT32_MAX, -EINVAL, 0 },
		{ "-1", UINT32_MAX, -EINVAL, 0 },
		{ "+1", UINT32_MAX, -EINVAL, 0 },
		{ " 1", UINT32_MAX, -EINVAL, 0 },
		{ "1 ", UINT32_MAX, -EINVAL, 0 },
		{ "1a", UINT32_MAX, -EINVAL, 0 },
		{ "0x", UINT32_MAX, -EINVAL, 0 },
		{ "0x-1", UINT32_MAX, -EINVAL, 0 },
		{ "abc", UINT32_MAX, -EINVAL, 0 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t v = 12345;
		int err = op_parse_uint(cases[i].s, cases[i].max, &v);

		ok(err == cases[i].err && (err || v == cases[i].v),
		   "parse_uint \"%s\" -> %d (got %d, %llu)", cases[i].s,
		   cases[i].err, err, (unsigned long long)v);
	}
	ok(op_parse_uint(NULL, 1, &(uint64_t){0}) == -EINVAL,
	   "parse_uint NULL is invalid");
}

static void test_host_id(void)
{
	uint32_t id = 7;

	ok(op_parse_host_id("0", &id) == -ERANGE && id == 7,
	   "host id 0 is rejected");
	ok(op_parse_host_id("1", &id) == 0 && id == 1, "host id 1");
	ok(op_parse_host_id("4294967294", &id) == 0 && id == 4294967294U,
	   "host id 4294967294");
	ok(op_parse_host_id("4294967295", &id) == -ERANGE,
	   "host id 4294967295 is rejected");
	ok(op_parse_host_id("x", &id) == -EINVAL, "host id x is rejected");
}

static void test_port(void)
{
	uint16_t port = 9;

	ok(op_parse_port("0", &port) == -ERANGE, "port 0 is rejected");
	ok(op_parse_port("1", &port) == 0 && port == 1, "port 1");
	ok(op_parse_port("65535", &port) == 0 && port == 65535,
	   "port 65535");
	ok(op_parse_port("65536", &port) == -ERANGE,
	   "port 65536 is rejected");
}

static void test_udp_addr(void)
{
	static const char *const bad[] = {
		"", ":5640", "10.77.1.3:", "10.77.1", "300.1.1.1",
		"host.example", "10.0.0.1:0", "10.0.0.1:abc", "10.0.0.1:70000",
		"10.0.0.1:5640:1", "::1", "10.0.0.1 ", "255.255.255.255255",
	};
	struct op_udp_addr a;
	const uint8_t *b = (const uint8_t *)&a.addr.s_addr;
	char buf[OP_ADDR_STRLEN];
	unsigned int i;

	ok(op_parse_udp_addr("10.77.1.3", 5640, &a) == 0 && a.port == 5640 &&
	   b[0] == 10 && b[1] == 77 && b[2] == 1 && b[3] == 3,
	   "addr without port: default port, network byte order");
	ok(op_parse_udp_addr("127.0.0.1:5641", 5640, &a) == 0 &&
	   a.port == 5641 && a.addr.s_addr == htonl(INADDR_LOOPBACK),
	   "addr with port");
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		ok(op_parse_udp_addr(bad[i], 5640, &a) == -EINVAL,
		   "addr \"%s\" is rejected", bad[i]);
	a.addr.s_addr = htonl(0xff000001);
	op_format_udp_addr(buf, sizeof(buf), a.addr, 65535);
	is_str(buf, "255.0.0.1:65535", "format longest address");
}

/*
 * Run op_parse_host_set on a whitespace-separated command line.  The
 * previous result's peers are freed first: @req must start zeroed.
 */
static int host_set(const char *line, struct op_host_set *req, char *err)
{
	char copy[1024], *argv[64], *tok, *save;
	int argc = 0;

	op_host_set_free(req);
	snprintf(copy, sizeof(copy), "%s", line);
	for (tok = strtok_r(copy, " ", &save); tok && argc < 64;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	err[0] = '\0';
	return op_parse_host_set(argc, argv, req, err, 128);
}

static void test_host_set(void)
{
	static const struct {
		const char *line;
		const char *err;
	} bad[] = {
		{ "", "\"id\" is required" },
		{ "transport udp", "\"id\" is required" },
		{ "id", "\"id\" needs a value" },
		{ "id 1 local", "\"local\" needs a value" },
		{ "id 0", "invalid host id \"0\" (1..4294967294)" },
		{ "id 4294967295",
		  "invalid host id \"4294967295\" (1..4294967294)" },
		{ "id -3", "invalid host id \"-3\" (1..4294967294)" },
		{ "id 1 id 2", "duplicate \"id\"" },
		{ "id 1 transport tcp",
		  "unknown transport \"tcp\" (udp, verbs)" },
		{ "id 1 transport udp transport udp",
		  "duplicate \"transport\"" },
		{ "id 1 local 1.2.3",
		  "invalid local address \"1.2.3\" (ADDR[:PORT])" },
		{ "id 1 uplink 1.2.3.4:0",
		  "invalid uplink address \"1.2.3.4:0\" (ADDR[:PORT])" },
		{ "id 1 uplink 1.2.3.4 uplink 1.2.3.4",
		  "duplicate \"uplink\"" },
		{ "id 1 bogus 2", "unknown keyword \"bogus\"" },
		{ "id 1 ids 2", "unknown keyword \"ids\"" },
	};
	struct op_host_set req = { .npeers = 0 };
	char err[128];
	unsigned int i;

	ok(host_set("id 3 transport udp local 10.77.1.3 uplink 10.77.1.1:5641",
		    &req, err) == 0 &&
	   req.id == 3 && req.has_transport &&
	   req.transport == ONEPIPE_TRANSPORT_UDP &&
	   req.has_local && req.local.addr.s_addr == inet_addr("10.77.1.3") &&
	   req.local.port == ONEPIPE_UDP_PORT &&
	   req.has_uplink &&
	   req.uplink.addr.s_addr == inet_addr("10.77.1.1") &&
	   req.uplink.port == 5641,
	   "host set: full command");
	ok(host_set("id 9", &req, err) == 0 && req.id == 9 &&
	   !req.has_transport && !req.has_local && !req.has_uplink,
	   "host set: id alone sends only the id");
	ok(host_set("uplink 127.0.0.1 id 0x10", &req, err) == 0 &&
	   req.id == 16 && req.has_uplink && !req.has_local &&
	   req.has_transport && req.transport == ONEPIPE_TRANSPORT_UDP,
	   "host set: any order; an address implies transport udp");
	ok(host_set("i 4294967294 t udp l 1.2.3.4:1 u 1.2.3.5", &req, err) ==
	   0 && req.id == 4294967294U && req.local.port == 1 &&
	   req.uplink.port == ONEPIPE_UDP_PORT,
	   "host set: abbreviated keywords");
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret = host_set(bad[i].line, &req, err);

		ok(ret == -EINVAL && !strcmp(err, bad[i].err),
		   "host set \"%s\" -> %s (got %d, %s)", bad[i].line,
		   bad[i].err, ret, err);
	}
	op_host_set_free(&req);
}

static void test_gid(void)
{
	static const uint8_t mapped[16] = {
		[10] = 0xff, [11] = 0xff, [12] = 10, [13] = 77, [14] = 3,
		[15] = 2,
	};
	static const char *const bad[] = {
		"", "10.77.3", "::ffff:10.77.3", "fe80:::1", "1:2:3:4:5:6:7:8:9",
		"10.77.3.2 ", "gid", "0x1",
	};
	char buf[INET6_ADDRSTRLEN];
	uint8_t gid[16];
	unsigned int i;

	ok(op_parse_gid("::ffff:10.77.3.2", gid) == 0 &&
	   !memcmp(gid, mapped, 16), "gid: IPv4-mapped IPv6 text");
	memset(gid, 0x55, sizeof(gid));
	ok(op_parse_gid("10.77.3.2", gid) == 0 && !memcmp(gid, mapped, 16),
	   "gid: an IPv4 address is its IPv4-mapped GID");
	ok(op_parse_gid("fe80::1", gid) == 0 && gid[0] == 0xfe &&
	   gid[1] == 0x80 && gid[15] == 1, "gid: link-local GID");
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		ok(op_parse_gid(bad[i], gid) == -EINVAL,
		   "gid \"%s\" is rejected", bad[i]);
	op_format_gid(buf, sizeof(buf), mapped);
	is_str(buf, "::ffff:10.77.3.2", "gid: printed as IPv6 text");
	memset(gid, 0xff, sizeof(gid));
	op_format_gid(buf, sizeof(buf), gid);
	is_str(buf, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
	       "gid: longest form fits INET6_ADDRSTRLEN");
}

static void test_qpn(void)
{
	uint32_t qpn = 5;

	ok(op_parse_qpn("0", &qpn) == -ERANGE && qpn == 5,
	   "qpn 0 is rejected");
	ok(op_parse_qpn("1", &qpn) == 0 && qpn == 1, "qpn 1 (the uplink's)");
	ok(op_parse_qpn("0xffffff", &qpn) == 0 && qpn == 0xffffff,
	   "qpn 0xffffff (24 bits)");
	ok(op_parse_qpn("16777216", &qpn) == -ERANGE,
	   "qpn 2^24 is rejected");
	ok(op_parse_qpn("q", &qpn) == -EINVAL, "qpn q is rejected");
}

static bool gid_is_v4(const uint8_t gid[16], const char *v4)
{
	uint8_t want[16];

	return op_parse_gid(v4, want) == 0 && !memcmp(gid, want, 16);
}

static void test_host_set_verbs(void)
{
	static const struct {
		const char *line;
		const char *err;
	} bad[] = {
		{ "id 1 transport verbs dev", "\"dev\" needs a value" },
		{ "id 1 dev opr1 dev opr2", "duplicate \"dev\"" },
		{ "id 1 dev a/b", "invalid RDMA device name \"a/b\"" },
		{ "id 1 dev "
		  "0123456789012345678901234567890123456789012345678901234567890123",
		  "invalid RDMA device name \"0123456789012345678901234567890123456789012345678901234567890123\"" },
		{ "id 1 dev opr1 port 0",
		  "invalid port \"0\" (1..4294967295)" },
		{ "id 1 dev opr1 qkey -1",
		  "invalid qkey \"-1\" (0..0x7fffffff)" },
		{ "id 1 dev opr1 qkey 0x80000000",
		  "invalid qkey \"0x80000000\" (0..0x7fffffff)" },
		{ "id 1 dev opr1 qkey 1 qkey 2", "duplicate \"qkey\"" },
		{ "id 1 dev opr1 peer 0 gid 10.77.1.1",
		  "peer 0 needs \"qpn\"" },
		{ "id 1 dev opr1 peer 0 qpn 1 peer 2 gid 10.77.2.2 qpn 9",
		  "peer 0 needs \"gid\"" },
		{ "id 1 dev opr1 peer 2 gid 10.77.2.2 qpn 9 peer 2 gid 10.77.2.2 qpn 9",
		  "duplicate peer 2" },
		{ "id 1 dev opr1 peer 2 gid 10.77.2.2 gid 10.77.2.3 qpn 9",
		  "duplicate \"gid\" for peer 2" },
		{ "id 1 dev opr1 peer 2 gid 10.77.2.2 qpn 9 qpn 9",
		  "duplicate \"qpn\" for peer 2" },
		{ "id 1 dev opr1 peer 2 gid 10.77.2.2 qpn 9 qkey 1 qkey 1",
		  "duplicate \"qkey\" for peer 2" },
		{ "id 1 dev opr1 peer 4294967295 gid ::1 qpn 9",
		  "invalid peer host id \"4294967295\" (0..4294967294)" },
		{ "id 1 dev opr1 peer 2 gid 10.77.2 qpn 9",
		  "invalid gid \"10.77.2\" (IPv6 or IPv4 address)" },
		{ "id 1 dev opr1 peer 2 gid ::1 qpn 0",
		  "invalid qpn \"0\" (1..16777215)" },
		{ "id 1 dev opr1 peer 2 gid ::1 qpn 0x1000000",
		  "invalid qpn \"0x1000000\" (1..16777215)" },
		{ "id 1 dev opr1 peer 2 gid ::1 qpn 9 qkey x",
		  "invalid qkey \"x\" (0..0x7fffffff)" },
		{ "id 1 dev opr1 peer 2 gid ::1 qpn 9 qkey 4294967295",
		  "invalid qkey \"4294967295\" (0..0x7fffffff)" },
		{ "id 1 peer 2 gid ::1 qpn 9 dev opr1",
		  "\"dev\" must come before the first peer" },
		{ "peer 2 gid ::1 qpn 9 id 1",
		  "\"id\" must come before the first peer" },
		{ "id 1 dev opr1 peer 2 gid ::1 qpn 9 port 1",
		  "\"port\" must come before the first peer" },
		{ "id 1 dev opr1 peer 2 gid ::1 qpn 9 mtu 1",
		  "unknown keyword \"mtu\"" },
		{ "id 1 dev opr1 peer 2 gid ::1 qpn 9 peer",
		  "\"peer\" needs a value" },
		{ "dev opr1", "\"id\" is required" },
		{ "id 1 dev opr1 local 10.0.0.1",
		  "local/uplink (transport udp) and dev/port/qkey/peer (transport verbs) do not mix" },
		{ "id 1 transport udp dev opr1",
		  "dev/port/qkey/peer need transport verbs" },
		{ "id 1 transport verbs uplink 10.0.0.1",
		  "local/uplink need transport udp" },
	};
	struct op_host_set req = { .npeers = 0 };
	char err[128];
	unsigned int i;

	ok(host_set("id 3 transport verbs dev opr3 port 2 qkey 0x11 "
		    "peer 0 gid ::ffff:10.77.3.1 qpn 1 "
		    "peer 1 gid 10.77.1.2 qpn 17 qkey 0x1f1fe "
		    "peer 2 gid fe80::2 qpn 0xffffff", &req, err) == 0 &&
	   req.id == 3 && req.has_transport &&
	   req.transport == ONEPIPE_TRANSPORT_VERBS &&
	   req.has_dev && !strcmp(req.dev, "opr3") &&
	   req.has_port && req.port == 2 && req.has_qkey && req.qkey == 0x11 &&
	   !req.has_local && !req.has_uplink && req.npeers == 3,
	   "host set verbs: full command (%s)", err);
	ok(req.npeers == 3 &&
	   req.peers[0].host == 0 && gid_is_v4(req.peers[0].gid, "10.77.3.1") &&
	   req.peers[0].qpn == 1 && !req.peers[0].has_qkey &&
	   req.peers[1].host == 1 && gid_is_v4(req.peers[1].gid, "10.77.1.2") &&
	   req.peers[1].qpn == 17 && req.peers[1].has_qkey &&
	   req.peers[1].qkey == ONEPIPE_VERBS_QKEY &&
	   req.peers[2].host == 2 && req.peers[2].gid[0] == 0xfe &&
	   req.peers[2].qpn == 0xffffff && !req.peers[2].has_qkey,
	   "host set verbs: peers in order; a qkey after a peer is the peer's");
	ok(host_set("id 4 dev mlx5_0", &req, err) == 0 &&
	   req.has_transport && req.transport == ONEPIPE_TRANSPORT_VERBS &&
	   !req.has_port && !req.has_qkey && req.npeers == 0,
	   "host set verbs: dev implies transport verbs");
	ok(host_set("id 4 peer 7 qpn 5 gid ::7 qkey 1", &req, err) == 0 &&
	   req.transport == ONEPIPE_TRANSPORT_VERBS && !req.has_dev &&
	   req.npeers == 1 && req.peers[0].has_qkey && !req.has_qkey,
	   "host set verbs: a peer alone implies verbs; gid/qpn any order");
	ok(host_set("i 5 t verbs d opr5 p 1 q 7 pe 0 g 10.77.5.1 q 1 "
		    "pe 6 g 10.77.6.2 qp 33 qk 9", &req, err) == 0 &&
	   req.port == 1 && req.has_qkey && req.qkey == 7 &&
	   req.npeers == 2 && req.peers[0].qpn == 1 &&
	   !req.peers[0].has_qkey && req.peers[1].qpn == 33 &&
	   req.peers[1].qkey == 9,
	   "host set verbs: abbreviations (p is port, q is qkey, then qpn)");
	ok(host_set("id 1 transport verbs", &req, err) == 0 &&
	   req.transport == ONEPIPE_TRANSPORT_VERBS && !req.has_dev,
	   "host set verbs: the kernel, not the tool, asks for dev");
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret = host_set(bad[i].line, &req, err);

		ok(ret == -EINVAL && !strcmp(err, bad[i].err),
		   "host set \"%s\" -> %s (got %d, %s)", bad[i].line,
		   bad[i].err, ret, err);
	}
	op_host_set_free(&req);
}

/* As many peers as the tool takes, and one more. */
static void test_host_set_many_peers(void)
{
	static char *argv[4 + 6 * (OP_VERBS_PEERS_MAX + 1)];
	static char words[OP_VERBS_PEERS_MAX + 1][2][16];
	struct op_host_set req;
	char err[128];
	int argc = 0, i, ret;

	argv[argc++] = "id";
	argv[argc++] = "1";
	argv[argc++] = "dev";
	argv[argc++] = "opr1";
	for (i = 0; i <= OP_VERBS_PEERS_MAX; i++) {
		snprintf(words[i][0], sizeof(words[i][0]), "%d", i);
		snprintf(words[i][1], sizeof(words[i][1]), "%d", i + 100);
		argv[argc++] = "peer";
		argv[argc++] = words[i][0];
		argv[argc++] = "gid";
		argv[argc++] = "10.77.0.2";
		argv[argc++] = "qpn";
		argv[argc++] = words[i][1];
	}
	ret = op_parse_host_set(argc - 6, argv, &req, err, sizeof(err));
	ok(ret == 0 && req.npeers == OP_VERBS_PEERS_MAX &&
	   req.peers[OP_VERBS_PEERS_MAX - 1].qpn == OP_VERBS_PEERS_MAX + 99,
	   "host set verbs: %u peers", OP_VERBS_PEERS_MAX);
	op_host_set_free(&req);
	ret = op_parse_host_set(argc, argv, &req, err, sizeof(err));
	ok(ret == -EINVAL && !strcmp(err, "too many peers (at most 1024)"),
	   "host set verbs: %u peers are too many (%s)",
	   OP_VERBS_PEERS_MAX + 1, err);
	op_host_set_free(&req);
}

static bool same_peer(const struct op_verbs_peer *a,
		      const struct op_verbs_peer *b)
{
	return a->host == b->host && !memcmp(a->gid, b->gid, 16) &&
	       a->qpn == b->qpn && a->has_qkey == b->has_qkey &&
	       (!a->has_qkey || a->qkey == b->qkey);
}

/* Peers go into the request as the uapi nests them, and read back. */
static void test_peers_put(void)
{
	static char buf[OP_NL_TXBUF];
	struct op_verbs_peer in[3] = {
		{ .host = 0, .qpn = 1 },
		{ .host = 2, .qpn = 0x12, .has_qkey = true, .qkey = 0xabc },
		{ .host = 4294967294U, .qpn = 0xffffff },
	};
	struct op_verbs_peer *out = NULL, *many;
	const struct nlattr *top[ONEPIPE_A_MAX + 1], *attr, *inner;
	struct nlmsghdr *nlh = fake_reply(buf, ONEPIPE_CMD_HOST_SET);
	unsigned int n = 0, nests = 0, fields = 0, i;

	op_parse_gid("10.77.1.1", in[0].gid);
	op_parse_gid("10.77.2.2", in[1].gid);
	op_parse_gid("fe80::99", in[2].gid);
	ok(op_verbs_peers_put(nlh, sizeof(buf), in, 3) == 0,
	   "peers put: 3 peers");
	op_nl_parse_msg(nlh, op_attrs, ONEPIPE_A_MAX, top);
	ok(top[ONEPIPE_A_VERBS_PEERS] != NULL,
	   "peers put: one ONEPIPE_A_VERBS_PEERS");
	if (!top[ONEPIPE_A_VERBS_PEERS])
		return;
	mnl_attr_for_each_nested(attr, top[ONEPIPE_A_VERBS_PEERS]) {
		nests += mnl_attr_get_type(attr) == ONEPIPE_A_VERBS_PEER;
		mnl_attr_for_each_nested(inner, attr)
			fields++;
	}
	ok(nests == 3 && fields == 3 + 3 + 3 + 1,
	   "peers put: nests of ONEPIPE_A_VERBS_PEER, qkey only when given");
	ok(op_verbs_peers_parse(top[ONEPIPE_A_VERBS_PEERS], &out, &n) == 0 &&
	   n == 3 && same_peer(&out[0], &in[0]) &&
	   same_peer(&out[1], &in[1]) && same_peer(&out[2], &in[2]),
	   "peers put: parsed back unchanged");
	free(out);

	/* Too many for the buffer: refused, not overrun. */
	many = calloc(OP_VERBS_PEERS_MAX, sizeof(*many));
	nlh = fake_reply(buf, ONEPIPE_CMD_HOST_SET);
	ok(op_verbs_peers_put(nlh, 2048, many, 100) == -EMSGSIZE,
	   "peers put: a full buffer is -EMSGSIZE");
	for (i = 0; i < OP_VERBS_PEERS_MAX; i++) {
		many[i].has_qkey = true;
		many[i].host = i;
	}
	nlh = fake_reply(buf, ONEPIPE_CMD_HOST_SET);
	i = op_verbs_peers_put(nlh, sizeof(buf), many, OP_VERBS_PEERS_MAX);
	ok(i == 0 && nlh->nlmsg_len <= OP_NL_TXBUF,
	   "peers put: %u peers with qkeys fit OP_NL_TXBUF (%u bytes)",
	   OP_VERBS_PEERS_MAX, nlh->nlmsg_len);
	free(many);
}

/* Capture what @fn writes through a JSON writer. */
static char *capture_json(bool pretty, void (*fn)(struct jw *jw))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct jw *jw = jw_new(f, pretty);

	fn(jw);
	jw_destroy(jw);
	fclose(f);
	return buf;
}

static void json_doc(struct jw *jw)
{
	jw_start_object(jw);
	jw_name(jw, "s");
	jw_string(jw, "a\"b\\c\n\t\x01/\xc3\xa9");
	jw_name(jw, "n");
	jw_uint(jw, UINT64_MAX);
	jw_name(jw, "i");
	jw_int(jw, INT64_MIN);
	jw_name(jw, "t");
	jw_bool(jw, true);
	jw_name(jw, "z");
	jw_null(jw);
	jw_name(jw, "e");
	jw_start_object(jw);
	jw_end_object(jw);
	jw_name(jw, "a");
	jw_start_array(jw);
	jw_uint(jw, 1);
	jw_start_object(jw);
	jw_name(jw, "x");
	jw_bool(jw, false);
	jw_end_object(jw);
	jw_start_array(jw);
	jw_end_array(jw);
	jw_end_array(jw);
	jw_end_object(jw);
}

static void json_empty_array(struct jw *jw)
{
	jw_start_array(jw);
	jw_end_array(jw);
}

static void json_nothing(struct jw *jw)
{
	(void)jw;
}

static void json_doubles(struct jw *jw)
{
	jw_start_array(jw);
	jw_double(jw, 0.0625);
	jw_double(jw, 1);
	jw_double(jw, 0);
	jw_double(jw, 0.1);
	jw_double(jw, 1.0 / 1024);
	jw_double(jw, 4294967295.0 / 1024);
	jw_double(jw, -2.5e-300);
	jw_double(jw, 1.0 / 3);
	jw_double(jw, NAN);
	jw_double(jw, INFINITY);
	jw_end_array(jw);
}

static void test_json(void)
{
	char *s;

	s = capture_json(false, json_doc);
	is_str(s, "{\"s\":\"a\\\"b\\\\c\\n\\t\\u0001/\xc3\xa9\","
		  "\"n\":18446744073709551615,\"i\":-9223372036854775808,"
		  "\"t\":true,\"z\":null,\"e\":{},"
		  "\"a\":[1,{\"x\":false},[]]}\n",
	       "json: compact document, escaping, all value kinds");
	free(s);
	s = capture_json(true, json_doc);
	is_str(s, "{\n"
		  "    \"s\": \"a\\\"b\\\\c\\n\\t\\u0001/\xc3\xa9\",\n"
		  "    \"n\": 18446744073709551615,\n"
		  "    \"i\": -9223372036854775808,\n"
		  "    \"t\": true,\n"
		  "    \"z\": null,\n"
		  "    \"e\": {},\n"
		  "    \"a\": [\n"
		  "        1,\n"
		  "        {\n"
		  "            \"x\": false\n"
		  "        },\n"
		  "        []\n"
		  "    ]\n"
		  "}\n",
	       "json: pretty document");
	free(s);
	s = capture_json(false, json_doubles);
	is_str(s, "[0.0625,1,0,0.1,0.0009765625,4194303.9990234375,-2.5e-300,"
		  "0.3333333333333333,null,null]\n",
	       "json: doubles in their shortest exact form, null if not finite");
	free(s);
	s = capture_json(true, json_empty_array);
	is_str(s, "[]\n", "json: empty array");
	free(s);
	s = capture_json(false, json_nothing);
	is_str(s, "", "json: no value, no output");
	free(s);
}

/* A fake generic netlink reply of the onepipe family. */
static struct nlmsghdr *fake_reply(char *buf, uint8_t cmd)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *genl;

	nlh->nlmsg_type = 0x1234;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = ONEPIPE_GENL_VERSION;
	return nlh;
}

static char *render_host(const struct op_host_info *hi, bool json,
			 bool pretty)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct op_out o;

	out_init(&o, f, json, pretty);
	op_host_print(&o, hi);
	out_fini(&o);
	fclose(f);
	return buf;
}

static int max_line(const char *s)
{
	int max = 0;

	while (*s) {
		int len = strcspn(s, "\n");

		if (len > max)
			max = len;
		s += len + (s[len] == '\n');
	}
	return max;
}

static void test_host_full(void)
{
	static char buf[4096];
	struct nlmsghdr *nlh = fake_reply(buf, ONEPIPE_CMD_HOST_GET);
	struct op_host_info hi;
	struct nlattr *nest;
	unsigned int id;
	char *s;

	mnl_attr_put_u32(nlh, ONEPIPE_A_HOST_ID, 3);
	mnl_attr_put_u32(nlh, ONEPIPE_A_TRANSPORT, ONEPIPE_TRANSPORT_UDP);
	mnl_attr_put_u32(nlh, ONEPIPE_A_UDP_LOCAL_ADDR, inet_addr("10.77.1.3"));
	mnl_attr_put_u16(nlh, ONEPIPE_A_UDP_LOCAL_PORT, 5640);
	mnl_attr_put_u32(nlh, ONEPIPE_A_UDP_UPLINK_ADDR,
			 inet_addr("10.77.1.1"));
	mnl_attr_put_u16(nlh, ONEPIPE_A_UDP_UPLINK_PORT, 5641);
	mnl_attr_put_u32(nlh, ONEPIPE_A_STATE, 1);
	mnl_attr_put_u64(nlh, ONEPIPE_A_CLOCK, 123456789);
	mnl_attr_put_u64(nlh, ONEPIPE_A_TX_BARRIER, 123456000);
	mnl_attr_put_u64(nlh, ONEPIPE_A_RX_BARRIER, 123450000);
	mnl_attr_put_u32(nlh, ONEPIPE_A_REORDER_DEPTH, 2);
	mnl_attr_put_u64(nlh, ONEPIPE_A_TX_COMMIT, 123455000);
	mnl_attr_put_u64(nlh, ONEPIPE_A_RX_COMMIT, 123449000);
	mnl_attr_put_u32(nlh, ONEPIPE_A_RDM_WAITING, 1);
	mnl_attr_put_u32(nlh, ONEPIPE_A_RDM_UNACKED, 17);
	mnl_attr_put_u32(nlh, ONEPIPE_A_CONTROLLED, 1);
	nest = mnl_attr_nest_start(nlh, ONEPIPE_A_COUNTERS);
	for (id = 1; id <= ONEPIPE_C_MAX; id++)
		mnl_attr_put_u64(nlh, id, id * 10);
	/* from a newer kernel: the first number without a name */
	mnl_attr_put_u64(nlh, ONEPIPE_C_MAX + 1, 7);
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_put_u32(nlh, 60, 1);	/* unknown attribute: ignored */

	op_host_parse(nlh, &hi);
	s = render_host(&hi, false, false);
	is_str(s,
	       "host 3 transport udp local 10.77.1.3:5640 uplink 10.77.1.1:5641 state up\n"
	       "  clock 123456789 tx_barrier 123456000 rx_barrier 123450000 reorder 2\n"
	       "  tx_commit 123455000 rx_commit 123449000 commit_lag 7789 rdm_waiting 1\n"
	       "    rdm_unacked 17 controlled yes\n"
	       "  counters: tx_msgs 10 tx_scatterings 20 tx_pkts 30 tx_beacons 40 tx_acks 50\n"
	       "    tx_naks 60 tx_errors 70 rx_pkts 80 rx_beacons 90 rx_msgs 100 rx_late 110\n"
	       "    rx_noport 120 rx_nobufs 130 rx_bad 140 rx_dup 150 rx_reasm_drop 160\n"
	       "    acked 170 send_failures 180 link_timeouts 190 retransmits 200 recalls 210\n"
	       "    rx_recalls 220 window_stalls 230 window_probes 240 ecn_marks 250\n"
	       "    cwnd_cuts 260 rx_rdm_msgs 270 commit_lag_ns 280 tx_aborted 290\n"
	       "    rx_overwindow 300 failures 310 fail_discards 320 fail_notifies 330\n"
	       "    ctl_events 340 relay_out 350 relay_in 360 relay_drops 370 rx_expired 380\n"
	       "    tx_queries 390 tx_unknown 400 tx_bundles 410 rx_bundles 420"
	       " counter_43 7\n",
	       "host show: text, every attribute");
	ok(max_line(s) <= OUT_TEXT_WIDTH, "host show: text fits in %d columns",
	   OUT_TEXT_WIDTH);
	free(s);
	s = render_host(&hi, true, false);
	is_str(s,
	       "{\"host\":3,\"transport\":\"udp\",\"local\":\"10.77.1.3:5640\","
	       "\"uplink\":\"10.77.1.1:5641\",\"state\":\"up\","
	       "\"clock\":123456789,\"tx_barrier\":123456000,"
	       "\"rx_barrier\":123450000,\"reorder_depth\":2,"
	       "\"tx_commit\":123455000,\"rx_commit\":123449000,"
	       "\"commit_lag\":7789,\"rdm_waiting\":1,\"rdm_unacked\":17,"
	       "\"controlled\":true,"
	       "\"counters\":{\"tx_msgs\":10,\"tx_scatterings\":20,"
	       "\"tx_pkts\":30,\"tx_beacons\":40,\"tx_acks\":50,"
	       "\"tx_naks\":60,\"tx_errors\":70,\"rx_pkts\":80,"
	       "\"rx_beacons\":90,\"rx_msgs\":100,\"rx_late\":110,"
	       "\"rx_noport\":120,\"rx_nobufs\":130,\"rx_bad\":140,"
	       "\"rx_dup\":150,\"rx_reasm_drop\":160,\"acked\":170,"
	       "\"send_failures\":180,\"link_timeouts\":190,"
	       "\"retransmits\":200,\"recalls\":210,\"rx_recalls\":220,"
	       "\"window_stalls\":230,\"window_probes\":240,"
	       "\"ecn_marks\":250,\"cwnd_cuts\":260,\"rx_rdm_msgs\":270,"
	       "\"commit_lag_ns\":280,\"tx_aborted\":290,"
	       "\"rx_overwindow\":300,\"failures\":310,"
	       "\"fail_discards\":320,\"fail_notifies\":330,"
	       "\"ctl_events\":340,\"relay_out\":350,\"relay_in\":360,"
	       "\"relay_drops\":370,\"rx_expired\":380,\"tx_queries\":390,"
	       "\"tx_unknown\":400,\"tx_bundles\":410,\"rx_bundles\":420,"
	       "\"counter_43\":7}}\n",
	       "host show: JSON, every attribute");
	free(s);
}

/* Collect what the code under test writes to stderr. */
static FILE *stderr_tmp;
static int stderr_saved = -1;

static void stderr_begin(void)
{
	stderr_tmp = tmpfile();
	stderr_saved = dup(STDERR_FILENO);
	fflush(stderr);
	dup2(fileno(stderr_tmp), STDERR_FILENO);
}

static char *stderr_end(void)
{
	char *buf = calloc(1, 1024);

	fflush(stderr);
	dup2(stderr_saved, STDERR_FILENO);
	close(stderr_saved);
	rewind(stderr_tmp);
	if (fread(buf, 1, 1023, stderr_tmp) == 0)
		buf[0] = '\0';
	fclose(stderr_tmp);
	return buf;
}

static void test_host_sparse(void)
{
	static char buf[4096];
	struct nlmsghdr *nlh = fake_reply(buf, ONEPIPE_CMD_HOST_GET);
	struct op_host_info hi;
	char *s;

	/* Never configured: no id, no addresses, no counters. */
	mnl_attr_put_u32(nlh, ONEPIPE_A_TRANSPORT, ONEPIPE_TRANSPORT_NONE);
	mnl_attr_put_u32(nlh, ONEPIPE_A_STATE, 0);
	mnl_attr_put_u64(nlh, ONEPIPE_A_CLOCK, 5);
	/* Wrong size (u32 where u64 is due): dropped with a warning. */
	mnl_attr_put_u32(nlh, ONEPIPE_A_TX_BARRIER, 1);
	stderr_begin();
	op_host_parse(nlh, &hi);
	s = stderr_end();
	ok(!(hi.present & (1U << ONEPIPE_A_TX_BARRIER)),
	   "host show: attribute of the wrong size is left out");
	is_str(s, "onepipe: warning: kernel sent ONEPIPE_A_TX_BARRIER with 4 "
		  "bytes, expected 8; ignored\n",
	       "host show: ... and reported on stderr");
	free(s);
	s = render_host(&hi, false, false);
	is_str(s, "transport none state down\n  clock 5\n",
	       "host show: text, missing attributes omitted");
	free(s);
	s = render_host(&hi, true, true);
	is_str(s, "{\n    \"transport\": \"none\",\n    \"state\": \"down\",\n"
		  "    \"clock\": 5\n}\n",
	       "host show: pretty JSON, missing attributes omitted");
	free(s);

	nlh = fake_reply(buf, ONEPIPE_CMD_HOST_GET);
	mnl_attr_put_u32(nlh, ONEPIPE_A_HOST_ID, 4294967294U);
	mnl_attr_put_u32(nlh, ONEPIPE_A_TRANSPORT, 9);
	mnl_attr_put_u32(nlh, ONEPIPE_A_UDP_UPLINK_ADDR, inet_addr("1.2.3.4"));
	mnl_attr_put_u32(nlh, ONEPIPE_A_STATE, 7);
	op_host_parse(nlh, &hi);
	s = render_host(&hi, false, false);
	is_str(s, "host 4294967294 transport unknown(9) uplink 1.2.3.4 "
		  "state unknown(7)\n",
	       "host show: unknown values, address without port");
	free(s);

	nlh = fake_reply(buf, ONEPIPE_CMD_HOST_GET);
	op_host_parse(nlh, &hi);
	s = render_host(&hi, false, false);
	is_str(s, "", "host show: empty reply prints nothing in text");
	free(s);
	s = render_host(&hi, true, false);
	is_str(s, "{}\n", "host show: empty reply is {} in JSON");
	free(s);
}

static void test_ts_lag(void)
{
	const uint64_t top = ONEPIPE_TS_MASK;

	ok(op_ts_lag(1000, 400) == 600, "ts lag: plain difference");
	ok(op_ts_lag(400, 1000) == -600, "ts lag: barrier ahead is negative");
	ok(op_ts_lag(100, top - 899) == 1000,
	   "ts lag: across the 48-bit wrap");
	ok(op_ts_lag(top - 899, 100) == -1000,
	   "ts lag: ahead across the wrap");
	ok(op_ts_lag(7, 7) == 0, "ts lag: equal is 0");
	ok(op_ts_lag((1ULL << 47) - 1, 0) == (int64_t)(1ULL << 47) - 1,
	   "ts lag: largest positive lag");
	ok(op_ts_lag(1ULL << 47, 0) == -(int64_t)(1ULL << 47),
	   "ts lag: half the range reads as behind");
}

/* The reliable service's attributes, with real-sized 48-bit values. */
static void test_host_commit(void)
{
	static char buf[4096];
	struct nlmsghdr *nlh = fake_reply(buf, ONEPIPE_CMD_HOST_GET);
	const uint64_t top = ONEPIPE_TS_MASK;
	struct op_host_info hi;
	char *s;

	/* The clock has just wrapped; the commit barrier has not yet. */
	mnl_attr_put_u64(nlh, ONEPIPE_A_CLOCK, 250);
	mnl_attr_put_u64(nlh, ONEPIPE_A_TX_BARRIER, top - 100);
	mnl_attr_put_u64(nlh, ONEPIPE_A_RX_BARRIER, top - 400);
	mnl_attr_put_u64(nlh, ONEPIPE_A_TX_COMMIT, top - 500);
	mnl_attr_put_u64(nlh, ONEPIPE_A_RX_COMMIT, top - 749);
	mnl_attr_put_u32(nlh, ONEPIPE_A_RDM_WAITING, 4294967295U);
	mnl_attr_put_u32(nlh, ONEPIPE_A_RDM_UNACKED, 1024);
	op_host_parse(nlh, &hi);
	s = render_host(&hi, false, false);
	is_str(s,
	       "  clock 250 tx_barrier 281474976710555 rx_barrier 281474976710255\n"
	       "  tx_commit 281474976710155 rx_commit 281474976709906 commit_lag 1000\n"
	       "    rdm_waiting 4294967295 rdm_unacked 1024\n",
	       "host show: commit barriers and lag across the wrap, text");
	ok(max_line(s) <= OUT_TEXT_WIDTH,
	   "host show: 48-bit values wrap within %d columns", OUT_TEXT_WIDTH);
	free(s);
	s = render_host(&hi, true, false);
	is_str(s,
	       "{\"clock\":250,\"tx_barrier\":281474976710555,"
	       "\"rx_barrier\":281474976710255,"
	       "\"tx_commit\":281474976710155,\"rx_commit\":281474976709906,"
	       "\"commit_lag\":1000,\"rdm_waiting\":4294967295,"
	       "\"rdm_unacked\":1024}\n",
	       "host show: commit barriers and lag, JSON");
	free(s);

	/* Commit barrier ahead of our clock (skew): a negative lag. */
	nlh = fake_reply(buf, ONEPIPE_CMD_HOST_GET);
	mnl_attr_put_u64(nlh, ONEPIPE_A_CLOCK, 5000);
	mnl_attr_put_u64(nlh, ONEPIPE_A_RX_COMMIT, 5300);
	op_host_parse(nlh, &hi);
	s = render_host(&hi, false, false);
	is_str(s, "  clock 5000\n  rx_commit 5300 commit_lag -300\n",
	       "host show: commit barrier ahead of the clock, text");
	free(s);
	s = render_host(&hi, true, false);
	is_str(s, "{\"clock\":5000,\"rx_commit\":5300,\"commit_lag\":-300}\n",
	       "host show: negative lag is a JSON integer");
	free(s);

	/* No clock, or no rx_commit: no lag; wrong sizes are left out. */
	nlh = fake_reply(buf, ONEPIPE_CMD_HOST_GET);
	mnl_attr_put_u64(nlh, ONEPIPE_A_TX_COMMIT, 9);
	mnl_attr_put_u64(nlh, ONEPIPE_A_RX_COMMIT, 8);
	mnl_attr_put_u64(nlh, ONEPIPE_A_RDM_UNACKED, 3);
	stderr_begin();
	op_host_parse(nlh, &hi);
	s = stderr_end();
	is_str(s, "onepipe: warning: kernel sent ONEPIPE_A_RDM_UNACKED with 8 "
		  "bytes, expected 4; ignored\n",
	       "host show: rdm_unacked of the wrong size is reported");
	free(s);
	s = render_host(&hi, false, false);
	is_str(s, "  tx_commit 9 rx_commit 8\n",
	       "host show: no commit_lag without the clock");
	free(s);
}

static void test_counter_names(void)
{
	unsigned int id;
	bool all = true;

	for (id = 1; id <= ONEPIPE_C_MAX; id++)
		all &= op_counter_name(id) != NULL;
	ok(all, "every ONEPIPE_C_* has a name");
	is_str(op_counter_name(ONEPIPE_C_RX_REASM_DROP), "rx_reasm_drop",
	       "counter name is the enum name in lower case");
	is_str(op_counter_name(ONEPIPE_C_COMMIT_LAG_NS), "commit_lag_ns",
	       "reliable-service counters are named too");
	ok(!strcmp(op_counter_name(ONEPIPE_C_RELAY_OUT), "relay_out") &&
	   !strcmp(op_counter_name(ONEPIPE_C_RELAY_IN), "relay_in") &&
	   !strcmp(op_counter_name(ONEPIPE_C_RELAY_DROPS), "relay_drops"),
	   "controller forwarding's counters: relay_out, relay_in, relay_drops");
	ok(!op_counter_name(ONEPIPE_C_MAX + 1), "no name past ONEPIPE_C_MAX");
}

static void put_gid(struct nlmsghdr *nlh, uint16_t type, const char *text)
{
	uint8_t gid[16];

	op_parse_gid(text, gid);
	mnl_attr_put(nlh, type, sizeof(gid), gid);
}

static void put_peer(struct nlmsghdr *nlh, uint32_t host, const char *gid,
		     uint32_t qpn, const uint32_t *qkey)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, ONEPIPE_A_VERBS_PEER);

	mnl_attr_put_u32(nlh, ONEPIPE_V_HOST, host);
	put_gid(nlh, ONEPIPE_V_GID, gid);
	mnl_attr_put_u32(nlh, ONEPIPE_V_QPN, qpn);
	if (qkey)
		mnl_attr_put_u32(nlh, ONEPIPE_V_QKEY, *qkey);
	mnl_attr_nest_end(nlh, nest);
}

/* A verbs host: its device, address, both counter sets and its peers. */
static void test_host_verbs(void)
{
	static char buf[4096];
	struct nlmsghdr *nlh = fake_reply(buf, ONEPIPE_CMD_HOST_GET);
	const uint32_t qkey = ONEPIPE_VERBS_QKEY;
	struct op_host_info hi;
	struct nlattr *nest;
	unsigned int id;
	char *s;

	mnl_attr_put_u32(nlh, ONEPIPE_A_HOST_ID, 3);
	mnl_attr_put_u32(nlh, ONEPIPE_A_TRANSPORT, ONEPIPE_TRANSPORT_VERBS);
	mnl_attr_put_u32(nlh, ONEPIPE_A_STATE, 1);
	mnl_attr_put_u64(nlh, ONEPIPE_A_CLOCK, 1000);
	mnl_attr_put_strz(nlh, ONEPIPE_A_VERBS_DEV, "opr3");
	mnl_attr_put_u32(nlh, ONEPIPE_A_VERBS_PORT, 1);
	put_gid(nlh, ONEPIPE_A_VERBS_GID, "::ffff:10.77.3.2");
	mnl_attr_put_u32(nlh, ONEPIPE_A_VERBS_QPN, 18);
	mnl_attr_put_u32(nlh, ONEPIPE_A_VERBS_QKEY, qkey);
	mnl_attr_put_u32(nlh, ONEPIPE_A_VERBS_MTU, 1024);
	nest = mnl_attr_nest_start(nlh, ONEPIPE_A_COUNTERS);
	mnl_attr_put_u64(nlh, ONEPIPE_C_TX_BEACONS, 7);
	mnl_attr_nest_end(nlh, nest);
	nest = mnl_attr_nest_start(nlh, ONEPIPE_A_VERBS_COUNTERS);
	for (id = 1; id <= ONEPIPE_VC_MAX; id++)
		mnl_attr_put_u64(nlh, id, id);
	mnl_attr_put_u64(nlh, 50, 5);	/* from a newer kernel */
	mnl_attr_nest_end(nlh, nest);
	nest = mnl_attr_nest_start(nlh, ONEPIPE_A_VERBS_PEERS);
	put_peer(nlh, 0, "10.77.3.1", 1, &qkey);
	put_peer(nlh, 1, "10.77.1.2", 17, NULL);
	put_peer(nlh, 2, "fe80::1234:56ff:fe78:9abc", 0xffffff, NULL);
	mnl_attr_nest_end(nlh, nest);

	op_host_parse(nlh, &hi);
	ok(hi.npeers == 3, "host show verbs: 3 peers parsed");
	s = render_host(&hi, false, false);
	is_str(s,
	       "host 3 transport verbs dev opr3 port 1 state up\n"
	       "  gid ::ffff:10.77.3.2 qpn 18 qkey 0x1f1fe mtu 1024\n"
	       "  clock 1000\n"
	       "  counters: tx_beacons 7\n"
	       "  verbs counters: tx_posts 1 tx_inline 2 tx_completions 3 tx_errors 4\n"
	       "    tx_queued 5 tx_nopeer 6 rx_completions 7 rx_errors 8 rx_refills 9\n"
	       "    rx_copied 10 rx_drops 11 rx_empty 12 rx_posted 13 rx_foreign 14 qp_resets 15\n"
	       "    counter_50 5\n"
	       "  peer 0 gid ::ffff:10.77.3.1 qpn 1 qkey 0x1f1fe\n"
	       "  peer 1 gid ::ffff:10.77.1.2 qpn 17\n"
	       "  peer 2 gid fe80::1234:56ff:fe78:9abc qpn 16777215\n",
	       "host show verbs: text");
	ok(max_line(s) <= OUT_TEXT_WIDTH,
	   "host show verbs: text fits in %d columns", OUT_TEXT_WIDTH);
	free(s);
	s = render_host(&hi, true, false);
	is_str(s,
	       "{\"host\":3,\"transport\":\"verbs\",\"dev\":\"opr3\",\"port\":1,"
	       "\"state\":\"up\",\"gid\":\"::ffff:10.77.3.2\",\"qpn\":18,"
	       "\"qkey\":127486,\"mtu\":1024,\"clock\":1000,"
	       "\"counters\":{\"tx_beacons\":7},"
	       "\"verbs_counters\":{\"tx_posts\":1,\"tx_inline\":2,"
	       "\"tx_completions\":3,\"tx_errors\":4,\"tx_queued\":5,"
	       "\"tx_nopeer\":6,\"rx_completions\":7,\"rx_errors\":8,"
	       "\"rx_refills\":9,\"rx_copied\":10,\"rx_drops\":11,"
	       "\"rx_empty\":12,\"rx_posted\":13,\"rx_foreign\":14,"
	       "\"qp_resets\":15,\"counter_50\":5},"
	       "\"peers\":[{\"host\":0,\"gid\":\"::ffff:10.77.3.1\",\"qpn\":1,"
	       "\"qkey\":127486},{\"host\":1,\"gid\":\"::ffff:10.77.1.2\","
	       "\"qpn\":17},{\"host\":2,"
	       "\"gid\":\"fe80::1234:56ff:fe78:9abc\",\"qpn\":16777215}]}\n",
	       "host show verbs: JSON");
	free(s);
	op_host_free(&hi);
}

/* Broken verbs attributes are left out, with a warning. */
static void test_host_verbs_bad(void)
{
	static char buf[4096];
	struct nlmsghdr *nlh = fake_reply(buf, ONEPIPE_CMD_HOST_GET);
	struct op_host_info hi;
	struct nlattr *nest, *peer;
	char *s, *err;

	mnl_attr_put_u32(nlh, ONEPIPE_A_TRANSPORT, ONEPIPE_TRANSPORT_VERBS);
	/* not NUL-terminated */
	mnl_attr_put(nlh, ONEPIPE_A_VERBS_DEV, 4, "opr3");
	mnl_attr_put(nlh, ONEPIPE_A_VERBS_GID, 4, "\x0a\x4d\x03\x02");
	nest = mnl_attr_nest_start(nlh, ONEPIPE_A_VERBS_PEERS);
	peer = mnl_attr_nest_start(nlh, ONEPIPE_A_VERBS_PEER);
	mnl_attr_put_u32(nlh, ONEPIPE_V_HOST, 9);
	mnl_attr_put_u32(nlh, ONEPIPE_V_QPN, 9);
	mnl_attr_nest_end(nlh, peer);
	put_peer(nlh, 1, "10.77.1.2", 17, NULL);
	mnl_attr_nest_end(nlh, nest);
	stderr_begin();
	op_host_parse(nlh, &hi);
	err = stderr_end();
	is_str(err,
	       "onepipe: warning: kernel sent ONEPIPE_A_VERBS_GID with 4 bytes, expected 16; ignored\n"
	       "onepipe: warning: peer without host, gid or qpn; ignored\n",
	       "host show verbs: short GID and incomplete peer reported");
	free(err);
	s = render_host(&hi, false, false);
	is_str(s, "transport verbs\n  peer 1 gid ::ffff:10.77.1.2 qpn 17\n",
	       "host show verbs: ... and left out, as is a bad dev name");
	free(s);
	op_host_free(&hi);

	/* An empty peers nest is an empty JSON array, nothing in text. */
	nlh = fake_reply(buf, ONEPIPE_CMD_HOST_GET);
	nest = mnl_attr_nest_start(nlh, ONEPIPE_A_VERBS_PEERS);
	mnl_attr_nest_end(nlh, nest);
	op_host_parse(nlh, &hi);
	s = render_host(&hi, true, false);
	is_str(s, "{\"peers\":[]}\n", "host show verbs: no peers, JSON");
	free(s);
	s = render_host(&hi, false, false);
	is_str(s, "", "host show verbs: no peers, text");
	free(s);
	op_host_free(&hi);
}

static struct nlmsghdr *dev_msg(char *buf, const char *dev, uint32_t state,
				const char *gid, uint32_t qpn, uint32_t bound,
				bool counters)
{
	struct nlmsghdr *nlh = fake_reply(buf, ONEPIPE_CMD_DEV_GET);
	struct nlattr *nest;

	mnl_attr_put_strz(nlh, ONEPIPE_A_VERBS_DEV, dev);
	mnl_attr_put_u32(nlh, ONEPIPE_A_VERBS_PORT, 1);
	mnl_attr_put_u32(nlh, ONEPIPE_A_VERBS_STATE, state);
	if (gid)
		put_gid(nlh, ONEPIPE_A_VERBS_GID, gid);
	mnl_attr_put_u32(nlh, ONEPIPE_A_VERBS_QPN, qpn);
	mnl_attr_put_u32(nlh, ONEPIPE_A_VERBS_QKEY, ONEPIPE_VERBS_QKEY);
	mnl_attr_put_u32(nlh, ONEPIPE_A_VERBS_MTU, 4096);
	mnl_attr_put_u32(nlh, ONEPIPE_A_VERBS_BOUND, bound);
	if (counters) {
		nest = mnl_attr_nest_start(nlh, ONEPIPE_A_VERBS_COUNTERS);
		mnl_attr_put_u64(nlh, ONEPIPE_VC_TX_POSTS, 12);
		mnl_attr_put_u64(nlh, ONEPIPE_VC_RX_COMPLETIONS, 34);
		mnl_attr_put_u64(nlh, ONEPIPE_VC_RX_POSTED, 256);
		mnl_attr_nest_end(nlh, nest);
	}
	return nlh;
}

static char *render_devs(struct nlmsghdr **msgs, int n, bool json)
{
	return render_dump(msgs, n, ONEPIPE_A_UNSPEC, op_attrs, ONEPIPE_A_MAX,
			   op_dev_print, json);
}

static void test_dev(void)
{
	static char b0[1024], b1[1024], b2[1024];
	struct nlmsghdr *msgs[3] = {
		dev_msg(b0, "opr1", 4, "::ffff:10.77.1.2", 17, 1, true),
		dev_msg(b1, "opr2", 1, NULL, 18, 0, false),
		dev_msg(b2, "mlx5_0", 9, "fe80::1", 0xffffff, 0, false),
	};
	char *s;

	s = render_devs(msgs, 3, false);
	is_str(s,
	       "dev opr1 port 1 state active bound yes\n"
	       "  gid ::ffff:10.77.1.2 qpn 17 qkey 0x1f1fe mtu 4096\n"
	       "  counters: tx_posts 12 rx_completions 34 rx_posted 256\n"
	       "dev opr2 port 1 state down bound no\n"
	       "  qpn 18 qkey 0x1f1fe mtu 4096\n"
	       "dev mlx5_0 port 1 state unknown(9) bound no\n"
	       "  gid fe80::1 qpn 16777215 qkey 0x1f1fe mtu 4096\n",
	       "dev show: text");
	free(s);
	s = render_devs(msgs, 2, true);
	is_str(s,
	       "[{\"dev\":\"opr1\",\"port\":1,\"state\":\"active\","
	       "\"bound\":true,\"gid\":\"::ffff:10.77.1.2\",\"qpn\":17,"
	       "\"qkey\":127486,\"mtu\":4096,\"counters\":{\"tx_posts\":12,"
	       "\"rx_completions\":34,\"rx_posted\":256}},"
	       "{\"dev\":\"opr2\",\"port\":1,\"state\":\"down\","
	       "\"bound\":false,\"qpn\":18,\"qkey\":127486,\"mtu\":4096}]\n",
	       "dev show: JSON array");
	free(s);
	s = render_devs(msgs, 0, true);
	is_str(s, "[]\n", "dev show: no device is [] in JSON");
	free(s);
}

static void test_verbs_counter_names(void)
{
	unsigned int id;
	bool all = true;

	for (id = 1; id <= ONEPIPE_VC_MAX; id++)
		all &= op_verbs_counter_name(id) != NULL;
	ok(all, "every ONEPIPE_VC_* has a name");
	is_str(op_verbs_counter_name(ONEPIPE_VC_RX_EMPTY), "rx_empty",
	       "verbs counter name is the enum name in lower case");
	ok(!op_verbs_counter_name(ONEPIPE_VC_MAX + 1),
	   "no verbs counter name past ONEPIPE_VC_MAX");
}

/* Render a dump of @n nests of @nest_type from @msgs as the tool would. */
static char *render_dump(struct nlmsghdr **msgs, int n, uint16_t nest_type,
			 const struct op_attr_spec *spec, unsigned int max,
			 op_print_fn print, bool json)
{
	const struct nlattr *top[ONEPIPE_A_MAX + 1], *tb[64];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct op_out o;
	int i;

	out_init(&o, f, json, false);
	out_array_start(&o);
	for (i = 0; i < n; i++) {
		op_nl_parse_msg(msgs[i], op_attrs, ONEPIPE_A_MAX, top);
		if (nest_type == ONEPIPE_A_UNSPEC) {
			/* dev show: the reply's own attributes */
			op_print_item(&o, print, top);
			continue;
		}
		/* As the tool does: a reply without its nest shows nothing. */
		if (!top[nest_type])
			continue;
		op_nl_parse_nest(top[nest_type], spec, max, tb);
		op_print_item(&o, print, tb);
	}
	out_array_end(&o);
	out_fini(&o);
	fclose(f);
	return buf;
}

static struct nlmsghdr *link_msg(char *buf, uint32_t index, uint32_t state,
				 uint64_t barrier, uint64_t idle)
{
	struct nlmsghdr *nlh = fake_reply(buf, ONEPIPE_CMD_LINK_GET);
	struct nlattr *nest = mnl_attr_nest_start(nlh, ONEPIPE_A_LINK);

	mnl_attr_put_u32(nlh, ONEPIPE_L_INDEX, index);
	mnl_attr_put_u32(nlh, ONEPIPE_L_STATE, state);
	mnl_attr_put_u64(nlh, ONEPIPE_L_BARRIER, barrier);
	mnl_attr_put_u64(nlh, ONEPIPE_L_IDLE_NS, idle);
	mnl_attr_nest_end(nlh, nest);
	return nlh;
}

static void test_link(void)
{
	static char b0[512], b1[512], b2[512];
	struct nlmsghdr *msgs[3] = {
		link_msg(b0, 0, ONEPIPE_LINK_LIVE, 1000, 50),
		link_msg(b1, 1, ONEPIPE_LINK_NEW, 900, 0),
		link_msg(b2, 2, 5, 0, 2000000),
	};
	char *s;

	s = render_dump(msgs, 3, ONEPIPE_A_LINK, op_link_attrs,
			ONEPIPE_L_MAX, op_link_print, false);
	is_str(s, "link 0 state live barrier 1000 idle_ns 50\n"
		  "link 1 state new barrier 900 idle_ns 0\n"
		  "link 2 state unknown(5) barrier 0 idle_ns 2000000\n",
	       "link show: text");
	free(s);
	msgs[2] = link_msg(b2, 2, ONEPIPE_LINK_DEAD, 0, 2000000);
	s = render_dump(msgs, 3, ONEPIPE_A_LINK, op_link_attrs,
			ONEPIPE_L_MAX, op_link_print, true);
	is_str(s, "[{\"index\":0,\"state\":\"live\",\"barrier\":1000,"
		  "\"idle_ns\":50},{\"index\":1,\"state\":\"new\","
		  "\"barrier\":900,\"idle_ns\":0},{\"index\":2,"
		  "\"state\":\"dead\",\"barrier\":0,\"idle_ns\":2000000}]\n",
	       "link show: JSON array");
	free(s);
	s = render_dump(msgs, 0, ONEPIPE_A_LINK, op_link_attrs,
			ONEPIPE_L_MAX, op_link_print, true);
	is_str(s, "[]\n", "link show: empty dump is [] in JSON");
	free(s);
	s = render_dump(msgs, 0, ONEPIPE_A_LINK, op_link_attrs,
			ONEPIPE_L_MAX, op_link_print, false);
	is_str(s, "", "link show: empty dump prints nothing in text");
	free(s);
}

static struct nlmsghdr *sock_msg(char *buf, uint16_t port, uint32_t type,
				 uint8_t ordered)
{
	struct nlmsghdr *nlh = fake_reply(buf, ONEPIPE_CMD_SOCK_GET);
	struct nlattr *nest = mnl_attr_nest_start(nlh, ONEPIPE_A_SOCK);

	mnl_attr_put_u16(nlh, ONEPIPE_S_PORT, port);
	mnl_attr_put_u32(nlh, ONEPIPE_S_TYPE, type);
	mnl_attr_put_u32(nlh, ONEPIPE_S_RX_QUEUED, 100);
	mnl_attr_put_u32(nlh, ONEPIPE_S_TX_QUEUED, 200);
	mnl_attr_put_u8(nlh, ONEPIPE_S_ORDERED, ordered);
	mnl_attr_put_u64(nlh, ONEPIPE_S_INODE, 4242);
	mnl_attr_nest_end(nlh, nest);
	return nlh;
}

static void test_sock(void)
{
	static char b0[512], b1[512];
	struct nlmsghdr *msgs[2] = {
		sock_msg(b0, 32768, SOCK_DGRAM, 1),
		sock_msg(b1, 7, SOCK_RDM, 0),
	};
	char *s;

	s = render_dump(msgs, 2, ONEPIPE_A_SOCK, op_sock_attrs,
			ONEPIPE_S_MAX, op_sock_print, false);
	is_str(s, "sock 32768 type dgram ordered on rx_queued 100 "
		  "tx_queued 200 inode 4242\n"
		  "sock 7 type rdm ordered off rx_queued 100 tx_queued 200 "
		  "inode 4242\n",
	       "sock show: text");
	free(s);
	s = render_dump(msgs, 2, ONEPIPE_A_SOCK, op_sock_attrs,
			ONEPIPE_S_MAX, op_sock_print, true);
	is_str(s, "[{\"port\":32768,\"type\":\"dgram\",\"ordered\":true,"
		  "\"rx_queued\":100,\"tx_queued\":200,\"inode\":4242},"
		  "{\"port\":7,\"type\":\"rdm\",\"ordered\":false,"
		  "\"rx_queued\":100,\"tx_queued\":200,\"inode\":4242}]\n",
	       "sock show: JSON array");
	free(s);
}

/* One peer's attributes, indexed by ONEPIPE_P_*. */
struct peer_vals {
	uint32_t v[ONEPIPE_P_MAX + 1];
};

static const struct peer_vals peer_example = { .v = {
	[ONEPIPE_P_HOST] = 3, [ONEPIPE_P_TX_NEXT] = 120,
	[ONEPIPE_P_TX_EDGE] = 376, [ONEPIPE_P_TX_INFLIGHT] = 4,
	[ONEPIPE_P_TX_RESERVED] = 0, [ONEPIPE_P_TX_QUEUED] = 9,
	[ONEPIPE_P_CWND] = 256, [ONEPIPE_P_ALPHA] = 64,
	[ONEPIPE_P_SRTT_US] = 412, [ONEPIPE_P_RTTVAR_US] = 80,
	[ONEPIPE_P_BACKOFF] = 0, [ONEPIPE_P_RX_NXT] = 98,
	[ONEPIPE_P_RX_HELD] = 2, [ONEPIPE_P_RX_ADV] = 354,
	[ONEPIPE_P_BE_DELAY_US] = 2300, [ONEPIPE_P_BE_DELAYVAR_US] = 900,
	[ONEPIPE_P_BE_DEADLINE_US] = 100000,
} };

/*
 * A PEER_GET reply with every attribute of @pv as a u32, except those in
 * the bit mask @skip (1 << ONEPIPE_P_*), which are left out.
 */
static struct nlmsghdr *peer_msg(char *buf, const struct peer_vals *pv,
				 uint32_t skip)
{
	struct nlmsghdr *nlh = fake_reply(buf, ONEPIPE_CMD_PEER_GET);
	struct nlattr *nest = mnl_attr_nest_start(nlh, ONEPIPE_A_PEER);
	unsigned int a;

	for (a = ONEPIPE_P_HOST; a <= ONEPIPE_P_MAX; a++)
		if (!(skip & (1U << a)))
			mnl_attr_put_u32(nlh, a, pv->v[a]);
	mnl_attr_nest_end(nlh, nest);
	return nlh;
}

static char *render_peers(struct nlmsghdr **msgs, int n, bool json)
{
	return render_dump(msgs, n, ONEPIPE_A_PEER, op_peer_attrs,
			   ONEPIPE_P_MAX, op_peer_print, json);
}

static void test_peer(void)
{
	static char b0[512], b1[512];
	struct peer_vals big = { .v = {
		[ONEPIPE_P_HOST] = 4294967294U,
		/* Sequence numbers about to wrap: the window is still 12. */
		[ONEPIPE_P_TX_NEXT] = 4294967290U, [ONEPIPE_P_TX_EDGE] = 6,
		[ONEPIPE_P_TX_INFLIGHT] = 1024, [ONEPIPE_P_TX_RESERVED] = 1000,
		[ONEPIPE_P_TX_QUEUED] = 4294967295U, [ONEPIPE_P_CWND] = 1,
		[ONEPIPE_P_ALPHA] = 1024, [ONEPIPE_P_SRTT_US] = 1234567,
		[ONEPIPE_P_RTTVAR_US] = 4294967295U, [ONEPIPE_P_BACKOFF] = 6,
		[ONEPIPE_P_RX_NXT] = 4294967295U, [ONEPIPE_P_RX_HELD] = 1024,
		[ONEPIPE_P_RX_ADV] = 1023, [ONEPIPE_P_RELAY] = 1,
		/* Nothing measured yet: the delay is left out. */
		[ONEPIPE_P_BE_DEADLINE_US] = 4294967295U,
	} };
	struct nlmsghdr *msgs[2];
	const struct nlattr *top[ONEPIPE_A_MAX + 1];
	char *s;

	msgs[0] = peer_msg(b0, &peer_example, 0);
	msgs[1] = peer_msg(b1, &big, 0);
	op_nl_parse_msg(msgs[0], op_attrs, ONEPIPE_A_MAX, top);
	ok(top[ONEPIPE_A_PEER] != NULL,
	   "peer show: replies' ONEPIPE_A_PEER nest is recognised");
	s = render_peers(msgs, 2, false);
	is_str(s,
	       "peer 3 tx next 120 edge 376 window 256 inflight 4 reserved 0 queued 9 cwnd 256\n"
	       "    alpha 0.062 srtt 412us rttvar 80us backoff 0 rx nxt 98 held 2 adv 354\n"
	       "    be delay 2300us var 900us deadline 100000us\n"
	       "peer 4294967294 tx next 4294967290 edge 6 window 12 inflight 1024 reserved 1000\n"
	       "    queued 4294967295 cwnd 1 alpha 1.000 srtt 1234567us rttvar 4294967295us\n"
	       "    backoff 6 relay yes rx nxt 4294967295 held 1024 adv 1023\n"
	       "    be deadline 4294967295us\n",
	       "peer show: text, wrapped with 4 spaces, relay only while on");
	ok(max_line(s) <= OUT_TEXT_WIDTH, "peer show: text fits in %d columns",
	   OUT_TEXT_WIDTH);
	free(s);
	s = render_peers(msgs, 2, true);
	is_str(s,
	       "[{\"host\":3,\"tx_next\":120,\"tx_edge\":376,\"window\":256,"
	       "\"tx_inflight\":4,\"tx_reserved\":0,\"tx_queued\":9,"
	       "\"cwnd\":256,\"alpha\":0.0625,\"srtt_us\":412,"
	       "\"rttvar_us\":80,\"backoff\":0,\"relay\":0,\"rx_nxt\":98,"
	       "\"rx_held\":2,\"rx_adv\":354,\"be_delay_us\":2300,"
	       "\"be_delayvar_us\":900,\"be_deadline_us\":100000},"
	       "{\"host\":4294967294,\"tx_next\":4294967290,\"tx_edge\":6,"
	       "\"window\":12,\"tx_inflight\":1024,\"tx_reserved\":1000,"
	       "\"tx_queued\":4294967295,\"cwnd\":1,\"alpha\":1,"
	       "\"srtt_us\":1234567,\"rttvar_us\":4294967295,\"backoff\":6,"
	       "\"relay\":1,\"rx_nxt\":4294967295,\"rx_held\":1024,"
	       "\"rx_adv\":1023,\"be_deadline_us\":4294967295}]\n",
	       "peer show: JSON array, alpha as a number, relay always");
	free(s);
	s = render_peers(msgs, 0, true);
	is_str(s, "[]\n", "peer show: no peers is [] in JSON");
	free(s);
}

/* Edge behind next, no round-trip or delay sample yet, odd alpha. */
static void test_peer_values(void)
{
	static char b0[512];
	struct peer_vals pv = peer_example;
	struct nlmsghdr *msg;
	char *s;

	pv.v[ONEPIPE_P_TX_NEXT] = 10;
	pv.v[ONEPIPE_P_TX_EDGE] = 5;
	pv.v[ONEPIPE_P_SRTT_US] = 0;
	pv.v[ONEPIPE_P_RTTVAR_US] = 0;
	pv.v[ONEPIPE_P_ALPHA] = 1;
	pv.v[ONEPIPE_P_BE_DELAY_US] = 0;
	msg = peer_msg(b0, &pv, 0);
	s = render_peers(&msg, 1, false);
	is_str(s,
	       "peer 3 tx next 10 edge 5 window -5 inflight 4 reserved 0 queued 9 cwnd 256\n"
	       "    alpha 0.001 backoff 0 rx nxt 98 held 2 adv 354 be deadline 100000us\n",
	       "peer show: negative window; no srtt/rttvar or be delay before a sample");
	free(s);
	s = render_peers(&msg, 1, true);
	is_str(s,
	       "[{\"host\":3,\"tx_next\":10,\"tx_edge\":5,\"window\":-5,"
	       "\"tx_inflight\":4,\"tx_reserved\":0,\"tx_queued\":9,"
	       "\"cwnd\":256,\"alpha\":0.0009765625,\"backoff\":0,"
	       "\"relay\":0,\"rx_nxt\":98,\"rx_held\":2,\"rx_adv\":354,"
	       "\"be_deadline_us\":100000}]\n",
	       "peer show: JSON, exact alpha, no srtt_us/rttvar_us/be_delay_us");
	free(s);
}

/* An attribute of the wrong size is dropped with a warning. */
static void test_peer_bad_size(void)
{
	static char b0[512];
	struct nlmsghdr *msg = fake_reply(b0, ONEPIPE_CMD_PEER_GET);
	struct nlattr *nest = mnl_attr_nest_start(msg, ONEPIPE_A_PEER);
	char *s, *err;

	mnl_attr_put_u32(msg, ONEPIPE_P_HOST, 7);
	mnl_attr_put_u32(msg, ONEPIPE_P_TX_NEXT, 100);
	mnl_attr_put_u64(msg, ONEPIPE_P_TX_EDGE, 356);	/* u64, not u32 */
	mnl_attr_put_u32(msg, ONEPIPE_P_CWND, 16);
	mnl_attr_put_u16(msg, ONEPIPE_P_ALPHA, 512);	/* u16, not u32 */
	mnl_attr_put_u32(msg, ONEPIPE_P_RX_NXT, 5);
	mnl_attr_put_u32(msg, ONEPIPE_P_MAX + 1, 9);	/* newer kernel */
	mnl_attr_nest_end(msg, nest);
	stderr_begin();
	s = render_peers(&msg, 1, false);
	err = stderr_end();
	is_str(err,
	       "onepipe: warning: kernel sent ONEPIPE_P_TX_EDGE with 8 bytes, "
	       "expected 4; ignored\n"
	       "onepipe: warning: kernel sent ONEPIPE_P_ALPHA with 2 bytes, "
	       "expected 4; ignored\n",
	       "peer show: wrong-size attributes are reported on stderr");
	is_str(s, "peer 7 tx next 100 cwnd 16 rx nxt 5\n",
	       "peer show: ... and left out, with the window they imply");
	free(s);
	free(err);
	stderr_begin();
	s = render_peers(&msg, 1, true);
	free(stderr_end());
	is_str(s, "[{\"host\":7,\"tx_next\":100,\"cwnd\":16,\"rx_nxt\":5}]\n",
	       "peer show: JSON without the wrong-size attributes");
	free(s);
}

/* Attributes the kernel left out are not shown, nor what they imply. */
static void test_peer_missing(void)
{
	static char b0[512], b1[512];
	struct nlmsghdr *msgs[2] = {
		/* No host, no tx next: "tx" leads the first tx item left. */
		peer_msg(b0, &peer_example,
			 1U << ONEPIPE_P_HOST | 1U << ONEPIPE_P_TX_NEXT |
			 1U << ONEPIPE_P_RX_NXT | 1U << ONEPIPE_P_RTTVAR_US),
		/* The receiving half only. */
		peer_msg(b1, &peer_example,
			 (((1U << (ONEPIPE_P_BACKOFF + 1)) - 1) &
			  ~(1U << ONEPIPE_P_HOST)) | 1U << ONEPIPE_P_RELAY |
			 1U << ONEPIPE_P_BE_DELAY_US |
			 1U << ONEPIPE_P_BE_DELAYVAR_US |
			 1U << ONEPIPE_P_BE_DEADLINE_US),
	};
	char *s;

	s = render_peers(msgs, 2, false);
	is_str(s,
	       "tx edge 376 inflight 4 reserved 0 queued 9 cwnd 256 alpha 0.062 srtt 412us\n"
	       "    backoff 0 rx held 2 adv 354 be delay 2300us var 900us deadline 100000us\n"
	       "peer 3 rx nxt 98 held 2 adv 354\n",
	       "peer show: missing attributes and the window left out, text");
	free(s);
	s = render_peers(msgs, 2, true);
	is_str(s,
	       "[{\"tx_edge\":376,\"tx_inflight\":4,\"tx_reserved\":0,"
	       "\"tx_queued\":9,\"cwnd\":256,\"alpha\":0.0625,"
	       "\"srtt_us\":412,\"backoff\":0,\"relay\":0,\"rx_held\":2,"
	       "\"rx_adv\":354,\"be_delay_us\":2300,\"be_delayvar_us\":900,"
	       "\"be_deadline_us\":100000},"
	       "{\"host\":3,\"rx_nxt\":98,\"rx_held\":2,\"rx_adv\":354}]\n",
	       "peer show: missing attributes left out, JSON");
	free(s);
}

/*
 * An NLMSG_ERROR answering nl->req, as the kernel builds it: the request's
 * header (or all of it unless @capped), then extended-ack TLVs.
 */
static struct nlmsghdr *fake_error(char *buf, const struct op_nl *nl,
				   int error, bool capped, bool tlvs)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlmsgerr *e;

	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_flags = (capped ? NLM_F_CAPPED : 0) |
			   (tlvs ? NLM_F_ACK_TLVS : 0);
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = error;
	e->msg = *nl->req;
	if (!capped) {
		size_t len = mnl_nlmsg_get_payload_len(nl->req);

		memcpy(mnl_nlmsg_put_extra_header(nlh, len),
		       mnl_nlmsg_get_payload(nl->req), len);
	}
	return nlh;
}

/* An offset inside a nest (peer 2's GID) names the nest. */
static void test_extack_nested(void)
{
	struct op_verbs_peer peers[2] = {
		{ .host = 0, .qpn = 1 }, { .host = 2, .qpn = 5 },
	};
	static struct op_nl nl;
	static char buf[1024];
	struct nlattr *peer, *gid = NULL;
	struct nlmsghdr *req, *nlh;
	char *s;

	nl.family = 0x1234;
	req = op_nl_request(&nl, ONEPIPE_CMD_HOST_SET, NLM_F_ACK);
	mnl_attr_put_u32(req, ONEPIPE_A_HOST_ID, 1);
	mnl_attr_put_strz(req, ONEPIPE_A_VERBS_DEV, "opr1");
	op_verbs_peers_put(req, OP_NL_TXBUF, peers, 2);
	nl.req = req;
	mnl_attr_for_each(peer, req, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(peer) == ONEPIPE_A_VERBS_PEERS)
			gid = peer;
	/* the nest's second peer, then its second attribute */
	peer = gid ? mnl_attr_get_payload(gid) : NULL;
	if (peer) {
		peer = (struct nlattr *)((char *)peer +
					 MNL_ALIGN(peer->nla_len));
		gid = mnl_attr_get_payload(peer);
		gid = (struct nlattr *)((char *)gid +
					MNL_ALIGN(gid->nla_len));
	}
	nlh = fake_error(buf, &nl, -EINVAL, true, true);
	mnl_attr_put_u32(nlh, NLMSGERR_ATTR_OFFS,
			 gid ? (char *)gid - (char *)req : 0);
	ok(gid && mnl_attr_get_type(gid) == ONEPIPE_V_GID &&
	   op_nl_ack(&nl, nlh) == -EINVAL &&
	   nl.ext_offs_type == ONEPIPE_A_VERBS_PEERS,
	   "extack: offset inside the peers nest names the nest");
	stderr_begin();
	op_nl_perror(&nl, "host set", -EINVAL);
	s = stderr_end();
	is_str(s, "onepipe: host set: Invalid argument (attribute "
		  "\"peer\": ONEPIPE_A_VERBS_PEERS)\n",
	       "extack: error line names the peers nest");
	free(s);
	nlh = fake_error(buf, &nl, -EINVAL, true, true);
	mnl_attr_put_u32(nlh, NLMSGERR_ATTR_OFFS, req->nlmsg_len);
	op_nl_ack(&nl, nlh);
	ok(nl.ext_offs_type == -1,
	   "extack: offset past the request names nothing");
}

static void test_extack(void)
{
	static struct op_nl nl;
	static char buf[1024];
	struct nlmsghdr *req, *nlh;
	struct nlattr *uplink;
	struct in_addr addr = { 0 };
	bool capped;
	char *s;

	nl.family = 0x1234;
	req = op_nl_request(&nl, ONEPIPE_CMD_HOST_SET, NLM_F_ACK);
	mnl_attr_put_u32(req, ONEPIPE_A_HOST_ID, 1);
	uplink = mnl_nlmsg_get_payload_tail(req);
	mnl_attr_put(req, ONEPIPE_A_UDP_UPLINK_ADDR, 4, &addr);
	nl.req = req;

	for (capped = false; ; capped = true) {
		nlh = fake_error(buf, &nl, -ENETUNREACH, capped, true);
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG,
				  "no route to the uplink");
		mnl_attr_put_u32(nlh, NLMSGERR_ATTR_OFFS,
				 (char *)uplink - (char *)req);
		ok(op_nl_ack(&nl, nlh) == -ENETUNREACH &&
		   !strcmp(nl.ext_msg, "no route to the uplink") &&
		   nl.ext_offs_type == ONEPIPE_A_UDP_UPLINK_ADDR &&
		   nl.ext_miss_type == -1,
		   "extack: message and offending attribute (%s)",
		   capped ? "capped" : "whole request echoed");
		if (capped)
			break;
	}
	stderr_begin();
	op_nl_perror(&nl, "host set", -ENETUNREACH);
	s = stderr_end();
	is_str(s, "onepipe: host set: no route to the uplink: Network is "
		  "unreachable (attribute \"uplink\": "
		  "ONEPIPE_A_UDP_UPLINK_ADDR)\n",
	       "extack: error line names message, errno and attribute");
	free(s);

	nlh = fake_error(buf, &nl, -EINVAL, true, true);
	mnl_attr_put_u32(nlh, NLMSGERR_ATTR_MISS_TYPE,
			 ONEPIPE_A_UDP_UPLINK_ADDR);
	ok(op_nl_ack(&nl, nlh) == -EINVAL && !nl.ext_msg[0] &&
	   nl.ext_miss_type == ONEPIPE_A_UDP_UPLINK_ADDR,
	   "extack: missing attribute");
	stderr_begin();
	op_nl_perror(&nl, "host set", -EINVAL);
	s = stderr_end();
	is_str(s, "onepipe: host set: Invalid argument (missing \"uplink\": "
		  "ONEPIPE_A_UDP_UPLINK_ADDR)\n",
	       "extack: error line names the missing attribute");
	free(s);

	nlh = fake_error(buf, &nl, -EPERM, true, false);
	mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, "not flagged");
	ok(op_nl_ack(&nl, nlh) == -EPERM && !nl.ext_msg[0],
	   "extack: TLVs ignored without NLM_F_ACK_TLVS");
	nlh = fake_error(buf, &nl, 0, true, false);
	ok(op_nl_ack(&nl, nlh) == 0, "extack: plain ack is success");
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NLMSG_ERROR;
	ok(op_nl_ack(&nl, nlh) == -EBADMSG, "extack: truncated error");
}

/* Parse @doc and render it as "controller show" would. */
static char *render_ctl(const char *doc, bool json, bool pretty)
{
	char *buf = NULL, err[128];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct op_jval *v = op_json_parse(doc, strlen(doc), err, sizeof(err));
	struct op_out o;

	if (!v) {
		fprintf(f, "ERROR %s", err);
		fclose(f);
		return buf;
	}
	out_init(&o, f, json, pretty);
	op_controller_print(&o, v);
	out_fini(&o);
	op_json_free(v);
	fclose(f);
	return buf;
}

static void test_json_read(void)
{
	static const struct {
		const char *in;
		const char *out;	/* compact re-write, or "ERROR ..." */
	} cases[] = {
		{ "{}", "{}\n" },
		{ " [ 1 , -2 , 3.5e2 , 0 , -0.25 ] ", "[1,-2,350,0,-0.25]\n" },
		{ "18446744073709551615", "18446744073709551615\n" },
		{ "18446744073709551616", "1.8446744073709552e+19\n" },
		{ "-9223372036854775808", "-9223372036854775808\n" },
		{ "{\"a\":true,\"b\":false,\"c\":null,\"d\":\"x\"}",
		  "{\"a\":true,\"b\":false,\"c\":null,\"d\":\"x\"}\n" },
		{ "\"\\u00e9\\ud83d\\ude00\\n\\\"\\/\"",
		  "\"\xc3\xa9\xf0\x9f\x98\x80\\n\\\"/\"\n" },
		{ "{\"a\":[[],{}]}", "{\"a\":[[],{}]}\n" },
		{ "", "ERROR value expected at offset 0" },
		{ "{", "ERROR member name expected at offset 1" },
		{ "{\"a\" 1}", "ERROR ':' expected at offset 5" },
		{ "[1,]", "ERROR value expected at offset 3" },
		{ "[1 2]", "ERROR ',' or ']' expected at offset 3" },
		{ "{} x", "ERROR trailing characters at offset 3" },
		{ "01", "ERROR trailing characters at offset 1" },
		{ "-", "ERROR bad number at offset 1" },
		{ "1.", "ERROR bad number at offset 2" },
		{ "tru", "ERROR value expected at offset 0" },
		{ "\"a\nb\"", "ERROR bad string at offset 3" },
		{ "\"\\u0000\"", "ERROR bad string at offset 7" },
		{ "\"\\ud800\"", "ERROR bad string at offset 7" },
		{ "\"\\x\"", "ERROR bad string at offset 3" },
		{ "\"abc", "ERROR bad string at offset 4" },
		{ "[[[[[[[[[[[[[1]]]]]]]]]]]]]",
		  "ERROR nested too deep at offset 13" },
		{ "[[[[[[[[[[[[1]]]]]]]]]]]]",
		  "[[[[[[[[[[[[1]]]]]]]]]]]]\n" },
	};
	unsigned int i;
	char *s;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char name[96];

		snprintf(name, sizeof(name), "json read: %.60s", cases[i].in);
		s = render_ctl(cases[i].in, true, false);
		is_str(s, cases[i].out, name);
		free(s);
	}
}

/* Shaped like onepiped's answer, but the text form must not depend on it. */
static const char ctl_doc[] =
	"{\"node\":\"ctl1\",\"epoch\":2,\"phase\":\"resume\",\"standby\":false,"
	"\"controllers\":[\"spine\"],"
	"\"nodes\":[{\"name\":\"h1\",\"kind\":\"host\",\"host\":1,"
	"\"state\":\"correct\",\"connected\":true},"
	"{\"name\":\"h2\",\"kind\":\"host\",\"host\":2,\"state\":\"failed\","
	"\"connected\":false}],"
	"\"failures\":[{\"epoch\":2,\"host\":2,\"ts\":123456789}],"
	"\"procedure\":{\"epoch\":2,\"waiting_done\":[\"h3\"],"
	"\"resume\":{\"tor1\":[\"h2\"]}},"
	"\"links_down\":[],\"empty\":{}}";

static void test_controller_print(void)
{
	char *s;

	s = render_ctl(ctl_doc, false, false);
	is_str(s,
	       "node ctl1 epoch 2 phase resume standby no controllers spine links_down - empty -\n"
	       "  nodes:\n"
	       "    name h1 kind host host 1 state correct connected yes\n"
	       "    name h2 kind host host 2 state failed connected no\n"
	       "  failures:\n"
	       "    epoch 2 host 2 ts 123456789\n"
	       "  procedure: epoch 2 waiting_done h3\n"
	       "    resume: tor1 h2\n",
	       "controller show: text follows the document's shape");
	ok(max_line(s) <= OUT_TEXT_WIDTH,
	   "controller show: text fits in %d columns", OUT_TEXT_WIDTH);
	free(s);
	s = render_ctl(ctl_doc, true, false);
	is_str(s, "{\"node\":\"ctl1\",\"epoch\":2,\"phase\":\"resume\","
		  "\"standby\":false,\"controllers\":[\"spine\"],"
		  "\"nodes\":[{\"name\":\"h1\",\"kind\":\"host\",\"host\":1,"
		  "\"state\":\"correct\",\"connected\":true},"
		  "{\"name\":\"h2\",\"kind\":\"host\",\"host\":2,"
		  "\"state\":\"failed\",\"connected\":false}],"
		  "\"failures\":[{\"epoch\":2,\"host\":2,\"ts\":123456789}],"
		  "\"procedure\":{\"epoch\":2,\"waiting_done\":[\"h3\"],"
		  "\"resume\":{\"tor1\":[\"h2\"]}},"
		  "\"links_down\":[],\"empty\":{}}\n",
	       "controller show: JSON re-written as sent");
	free(s);
	s = render_ctl("{\"a\":{\"b\":1},\"l\":[[1,2],{\"c\":\"\"}]}", true,
		       true);
	is_str(s, "{\n"
		  "    \"a\": {\n"
		  "        \"b\": 1\n"
		  "    },\n"
		  "    \"l\": [\n"
		  "        [\n"
		  "            1,\n"
		  "            2\n"
		  "        ],\n"
		  "        {\n"
		  "            \"c\": \"\"\n"
		  "        }\n"
		  "    ]\n"
		  "}\n",
	       "controller show: pretty JSON");
	free(s);
	s = render_ctl("{\"l\":[[1,2],{\"c\":\"\"},3]}", false, false);
	is_str(s, "l:\n"
		  "  1,2\n"
		  "  c \"\"\n"
		  "  3\n",
	       "controller show: text of a mixed array");
	free(s);
	s = render_ctl("{\"daemon\":{\"role\":\"active\"},"
		       "\"controller\":{\"epoch\":0,\"nodes\":[{\"name\":\"h1\"}]}}",
		       false, false);
	is_str(s, "daemon: role active\n"
		  "controller: epoch 0\n"
		  "  nodes:\n"
		  "    name h1\n",
	       "controller show: text of blocks only, from the left margin");
	free(s);
	s = render_ctl("[1,2]", false, false);
	is_str(s, "- 1,2\n", "controller show: text of a bare array");
	free(s);
}

static void chunk(struct ctl_msg *m, const char *text, bool last)
{
	ctl_msg_init(m, CTL_SHOW_REPLY, NULL);
	m->host = strlen(text);
	memcpy(m->text, text, m->host);
	if (last)
		m->flags |= CTL_F_LAST;
}

static void test_ctl_text(void)
{
	struct op_ctl_text t = { .len = 0 };
	struct ctl_msg m;
	char big[CTL_TEXT_LEN + 1];

	chunk(&m, "{\"a\":", false);
	ok(op_ctl_text_add(&t, &m) == 0, "show reply: first chunk, more follow");
	memset(big, ' ', CTL_TEXT_LEN);
	big[CTL_TEXT_LEN] = '\0';
	chunk(&m, big, false);
	ok(op_ctl_text_add(&t, &m) == 0, "show reply: a full chunk");
	chunk(&m, "1}", true);
	ok(op_ctl_text_add(&t, &m) == 1, "show reply: the last chunk ends it");
	ok(t.chunks == 3 && t.len == 5 + CTL_TEXT_LEN + 2 &&
	   !memcmp(t.buf, "{\"a\":", 5) && !strcmp(t.buf + t.len - 2, "1}"),
	   "show reply: chunks joined in order");
	op_ctl_text_free(&t);
	chunk(&m, "", true);
	ok(op_ctl_text_add(&t, &m) == 1 && t.len == 0 && t.buf &&
	   !t.buf[0], "show reply: an empty last chunk");
	op_ctl_text_free(&t);
	chunk(&m, "x", false);
	m.type = CTL_STATE;
	ok(op_ctl_text_add(&t, &m) == -EBADMSG,
	   "show reply: another message type is refused");
	chunk(&m, "x", false);
	m.host = CTL_TEXT_LEN + 1;
	ok(op_ctl_text_add(&t, &m) == -EBADMSG,
	   "show reply: a length beyond the chunk is refused");
	t.len = OP_CTL_TEXT_MAX - 1;
	chunk(&m, "xy", false);
	ok(op_ctl_text_add(&t, &m) == -EFBIG,
	   "show reply: an answer beyond %d bytes is refused",
	   OP_CTL_TEXT_MAX);
	op_ctl_text_free(&t);
}

static void test_show_opts(void)
{
	struct op_show_opts o;
	char err[128];

#define ARGS(...)	(char *[]){ __VA_ARGS__ }
#define RESET()	(o = (struct op_show_opts){ .socket = "/def" })
	RESET();
	ok(!op_parse_show_opts(0, NULL, true, &o, err, sizeof(err)) &&
	   !o.json && !o.pretty && !strcmp(o.socket, "/def"),
	   "show opts: none");
	RESET();
	ok(!op_parse_show_opts(1, ARGS("-j"), true, &o, err, sizeof(err)) &&
	   o.json && !o.pretty, "show opts: -j");
	RESET();
	ok(!op_parse_show_opts(1, ARGS("-p"), true, &o, err, sizeof(err)) &&
	   o.json && o.pretty, "show opts: -p implies JSON");
	RESET();
	ok(!op_parse_show_opts(3, ARGS("--json", "--socket", "/x"), true, &o,
			       err, sizeof(err)) &&
	   o.json && !strcmp(o.socket, "/x"), "show opts: --socket PATH");
	RESET();
	ok(!op_parse_show_opts(1, ARGS("--socket=/y"), true, &o, err,
			       sizeof(err)) && !strcmp(o.socket, "/y"),
	   "show opts: --socket=PATH");
	RESET();
	ok(op_parse_show_opts(1, ARGS("--socket"), true, &o, err,
			      sizeof(err)) == -EINVAL &&
	   !strcmp(err, "--socket needs a path"),
	   "show opts: --socket without a path");
	RESET();
	ok(op_parse_show_opts(1, ARGS("--socket="), true, &o, err,
			      sizeof(err)) == -EINVAL &&
	   !strcmp(err, "the socket path is empty"),
	   "show opts: an empty socket path");
	RESET();
	ok(op_parse_show_opts(2, ARGS("--socket", "/x"), false, &o, err,
			      sizeof(err)) == -EINVAL &&
	   !strcmp(err, "unexpected argument \"--socket\""),
	   "show opts: no socket for fail show");
	RESET();
	ok(op_parse_show_opts(1, ARGS("-x"), true, &o, err,
			      sizeof(err)) == -EINVAL &&
	   !strcmp(err, "unexpected argument \"-x\""),
	   "show opts: unknown argument");
#undef ARGS
#undef RESET
}

static struct nlmsghdr *fail_msg(char *buf, uint32_t epoch, uint32_t host,
				 uint64_t ts, uint32_t pending)
{
	struct nlmsghdr *nlh = fake_reply(buf, ONEPIPE_CMD_FAIL_GET);

	mnl_attr_put_u32(nlh, ONEPIPE_A_EPOCH, epoch);
	mnl_attr_put_u32(nlh, ONEPIPE_A_FAIL_HOST, host);
	mnl_attr_put_u64(nlh, ONEPIPE_A_FAIL_TS, ts);
	mnl_attr_put_u32(nlh, ONEPIPE_A_FAIL_PENDING, pending);
	return nlh;
}

static char *render_fails(struct nlmsghdr **msgs, int n, bool json)
{
	const struct nlattr *tb[ONEPIPE_A_MAX + 1];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct op_out o;
	int i;

	out_init(&o, f, json, false);
	out_array_start(&o);
	for (i = 0; i < n; i++) {
		op_nl_parse_msg(msgs[i], op_fail_attrs, ONEPIPE_A_MAX, tb);
		op_print_item(&o, op_fail_print, tb);
	}
	out_array_end(&o);
	out_fini(&o);
	fclose(f);
	return buf;
}

static void test_fail(void)
{
	static char b1[256], b2[256];
	struct nlmsghdr *msgs[2];
	char *s;

	msgs[0] = fail_msg(b1, 1, 2, 123456789, 0);
	msgs[1] = fail_msg(b2, 3, 7, 0xffffffffffffULL, 1);
	s = render_fails(msgs, 2, false);
	is_str(s, "host 2 epoch 1 ts 123456789 pending no\n"
		  "host 7 epoch 3 ts 281474976710655 pending yes\n",
	       "fail show: text");
	free(s);
	s = render_fails(msgs, 2, true);
	is_str(s, "[{\"host\":2,\"epoch\":1,\"ts\":123456789,"
		  "\"pending\":false},"
		  "{\"host\":7,\"epoch\":3,\"ts\":281474976710655,"
		  "\"pending\":true}]\n",
	       "fail show: JSON");
	free(s);
	s = render_fails(msgs, 0, true);
	is_str(s, "[]\n", "fail show: none, JSON");
	free(s);
}

int main(void)
{
	test_matches();
	test_numbers();
	test_host_id();
	test_port();
	test_udp_addr();
	test_host_set();
	test_gid();
	test_qpn();
	test_host_set_verbs();
	test_host_set_many_peers();
	test_peers_put();
	test_json();
	test_host_full();
	test_host_sparse();
	test_ts_lag();
	test_host_commit();
	test_counter_names();
	test_host_verbs();
	test_host_verbs_bad();
	test_dev();
	test_verbs_counter_names();
	test_link();
	test_sock();
	test_peer();
	test_peer_values();
	test_peer_bad_size();
	test_peer_missing();
	test_extack();
	test_extack_nested();
	test_json_read();
	test_controller_print();
	test_ctl_text();
	test_show_opts();
	test_fail();
	printf("1..%d\n", tests);
	if (failures)
		printf("# %d of %d tests failed\n", failures, tests);
	return failures ? 1 : 0;
}
