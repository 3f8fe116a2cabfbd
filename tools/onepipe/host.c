// SPDX-License-Identifier: GPL-2.0
/*
 * onepipe host { show | set | down }: the host's 1Pipe configuration,
 * clock, barriers and counters (ONEPIPE_CMD_HOST_*).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>

#include "parse.h"
#include "tool.h"

static const char *const counter_names[] = {
	[ONEPIPE_C_TX_MSGS]		= "tx_msgs",
	[ONEPIPE_C_TX_SCATTERINGS]	= "tx_scatterings",
	[ONEPIPE_C_TX_PKTS]		= "tx_pkts",
	[ONEPIPE_C_TX_BEACONS]		= "tx_beacons",
	[ONEPIPE_C_TX_ACKS]		= "tx_acks",
	[ONEPIPE_C_TX_NAKS]		= "tx_naks",
	[ONEPIPE_C_TX_ERRORS]		= "tx_errors",
	[ONEPIPE_C_RX_PKTS]		= "rx_pkts",
	[ONEPIPE_C_RX_BEACONS]		= "rx_beacons",
	[ONEPIPE_C_RX_MSGS]		= "rx_msgs",
	[ONEPIPE_C_RX_LATE]		= "rx_late",
	[ONEPIPE_C_RX_NOPORT]		= "rx_noport",
	[ONEPIPE_C_RX_NOBUFS]		= "rx_nobufs",
	[ONEPIPE_C_RX_BAD]		= "rx_bad",
	[ONEPIPE_C_RX_DUP]		= "rx_dup",
	[ONEPIPE_C_RX_REASM_DROP]	= "rx_reasm_drop",
	[ONEPIPE_C_ACKED]		= "acked",
	[ONEPIPE_C_SEND_FAILURES]	= "send_failures",
	[ONEPIPE_C_LINK_TIMEOUTS]	= "link_timeouts",
	[ONEPIPE_C_RETRANSMITS]		= "retransmits",
	[ONEPIPE_C_RECALLS]		= "recalls",
	[ONEPIPE_C_RX_RECALLS]		= "rx_recalls",
	[ONEPIPE_C_WINDOW_STALLS]	= "window_stalls",
	[ONEPIPE_C_WINDOW_PROBES]	= "window_probes",
	[ONEPIPE_C_ECN_MARKS]		= "ecn_marks",
	[ONEPIPE_C_CWND_CUTS]		= "cwnd_cuts",
	[ONEPIPE_C_RX_RDM_MSGS]		= "rx_rdm_msgs",
	[ONEPIPE_C_COMMIT_LAG_NS]	= "commit_lag_ns",
	[ONEPIPE_C_TX_ABORTED]		= "tx_aborted",
	[ONEPIPE_C_RX_OVERWINDOW]	= "rx_overwindow",
	[ONEPIPE_C_FAILURES]		= "failures",
	[ONEPIPE_C_FAIL_DISCARDS]	= "fail_discards",
	[ONEPIPE_C_FAIL_NOTIFIES]	= "fail_notifies",
	[ONEPIPE_C_CTL_EVENTS]		= "ctl_events",
	[ONEPIPE_C_RELAY_OUT]		= "relay_out",
	[ONEPIPE_C_RELAY_IN]		= "relay_in",
	[ONEPIPE_C_RELAY_DROPS]		= "relay_drops",
	[ONEPIPE_C_RX_EXPIRED]		= "rx_expired",
	[ONEPIPE_C_TX_QUERIES]		= "tx_queries",
	[ONEPIPE_C_TX_UNKNOWN]		= "tx_unknown",
	[ONEPIPE_C_TX_BUNDLES]		= "tx_bundles",
	[ONEPIPE_C_RX_BUNDLES]		= "rx_bundles",
};

/* A counter added to the uapi must get a name here too. */
_Static_assert(ARRAY_SIZE(counter_names) == __ONEPIPE_C_MAX,
	       "counter_names[] out of sync with enum onepipe_counter");
_Static_assert(__ONEPIPE_C_MAX <= OP_MAX_COUNTERS, "too many counters");
_Static_assert(ONEPIPE_A_MAX < 64, "op_host_info.present too small");

const char *op_counter_name(unsigned int id)
{
	return id < ARRAY_SIZE(counter_names) ? counter_names[id] : NULL;
}

/* The verbs transport's attributes of a HOST_GET reply. */
static void parse_verbs(const struct nlattr **tb, struct op_host_info *hi)
{
	const char *dev = op_attr_str(tb[ONEPIPE_A_VERBS_DEV]);

	if (dev)
		snprintf(hi->verbs_dev, sizeof(hi->verbs_dev), "%s", dev);
	else
		hi->present &= ~(1ULL << ONEPIPE_A_VERBS_DEV);
	if (tb[ONEPIPE_A_VERBS_PORT])
		hi->verbs_port = mnl_attr_get_u32(tb[ONEPIPE_A_VERBS_PORT]);
	if (tb[ONEPIPE_A_VERBS_GID])
		memcpy(hi->verbs_gid,
		       mnl_attr_get_payload(tb[ONEPIPE_A_VERBS_GID]), 16);
	if (tb[ONEPIPE_A_VERBS_QPN])
		hi->verbs_qpn = mnl_attr_get_u32(tb[ONEPIPE_A_VERBS_QPN]);
	if (tb[ONEPIPE_A_VERBS_QKEY])
		hi->verbs_qkey = mnl_attr_get_u32(tb[ONEPIPE_A_VERBS_QKEY]);
	if (tb[ONEPIPE_A_VERBS_MTU])
		hi->verbs_mtu = mnl_attr_get_u32(tb[ONEPIPE_A_VERBS_MTU]);
	if (tb[ONEPIPE_A_VERBS_COUNTERS])
		op_counters_parse(tb[ONEPIPE_A_VERBS_COUNTERS],
				  &hi->verbs_counters);
	if (tb[ONEPIPE_A_VERBS_PEERS] &&
	    op_verbs_peers_parse(tb[ONEPIPE_A_VERBS_PEERS], &hi->peers,
				 &hi->npeers)) {
		fprintf(stderr, "onepipe: warning: out of memory for peers\n");
		hi->present &= ~(1ULL << ONEPIPE_A_VERBS_PEERS);
	}
}

/*
 * ONEPIPE_A_CONTROLLED, read with a spec of its own: op_attrs (nl.c) does
 * not name it, and would leave it out.
 */
static void parse_controlled(const struct nlmsghdr *nlh,
			     struct op_host_info *hi)
{
	static const struct op_attr_spec spec[ONEPIPE_A_MAX + 1] = {
		[ONEPIPE_A_CONTROLLED] = { "ONEPIPE_A_CONTROLLED", 4, NULL },
	};
	const struct nlattr *tb[ONEPIPE_A_MAX + 1];

	op_nl_parse_msg(nlh, spec, ONEPIPE_A_MAX, tb);
	if (!tb[ONEPIPE_A_CONTROLLED])
		return;
	hi->present |= 1ULL << ONEPIPE_A_CONTROLLED;
	hi->controlled = mnl_attr_get_u32(tb[ONEPIPE_A_CONTROLLED]);
}

void op_host_parse(const struct nlmsghdr *nlh, struct op_host_info *hi)
{
	const struct nlattr *tb[ONEPIPE_A_MAX + 1];
	unsigned int i;

	memset(hi, 0, sizeof(*hi));
	op_nl_parse_msg(nlh, op_attrs, ONEPIPE_A_MAX, tb);
	for (i = 0; i <= ONEPIPE_A_MAX; i++)
		if (tb[i])
			hi->present |= 1ULL << i;

#define U32(a)	(tb[a] ? mnl_attr_get_u32(tb[a]) : 0)
#define U16(a)	(tb[a] ? mnl_attr_get_u16(tb[a]) : 0)
#define U64(a)	(tb[a] ? mnl_attr_get_u64(tb[a]) : 0)
	hi->host_id = U32(ONEPIPE_A_HOST_ID);
	hi->transport = U32(ONEPIPE_A_TRANSPORT);
	/* Both addresses are be32 already: keep the bytes as they are. */
	hi->local_addr.s_addr = U32(ONEPIPE_A_UDP_LOCAL_ADDR);
	hi->local_port = U16(ONEPIPE_A_UDP_LOCAL_PORT);
	hi->uplink_addr.s_addr = U32(ONEPIPE_A_UDP_UPLINK_ADDR);
	hi->uplink_port = U16(ONEPIPE_A_UDP_UPLINK_PORT);
	hi->state = U32(ONEPIPE_A_STATE);
	hi->clock = U64(ONEPIPE_A_CLOCK);
	hi->tx_barrier = U64(ONEPIPE_A_TX_BARRIER);
	hi->rx_barrier = U64(ONEPIPE_A_RX_BARRIER);
	hi->reorder_depth = U32(ONEPIPE_A_REORDER_DEPTH);
	hi->tx_commit = U64(ONEPIPE_A_TX_COMMIT);
	hi->rx_commit = U64(ONEPIPE_A_RX_COMMIT);
	hi->rdm_waiting = U32(ONEPIPE_A_RDM_WAITING);
	hi->rdm_unacked = U32(ONEPIPE_A_RDM_UNACKED);
#undef U32
#undef U16
#undef U64
	if (tb[ONEPIPE_A_COUNTERS])
		op_counters_parse(tb[ONEPIPE_A_COUNTERS], &hi->counters);
	parse_verbs(tb, hi);
	parse_controlled(nlh, hi);
}

void op_host_free(struct op_host_info *hi)
{
	free(hi->peers);
	hi->peers = NULL;
	hi->npeers = 0;
}

static bool has(const struct op_host_info *hi, unsigned int attr)
{
	return hi->present & (1ULL << attr);
}

static const char *transport_name(uint32_t t, char *buf, size_t len)
{
	switch (t) {
	case ONEPIPE_TRANSPORT_NONE:
		return "none";
	case ONEPIPE_TRANSPORT_UDP:
		return "udp";
	case ONEPIPE_TRANSPORT_VERBS:
		return "verbs";
	}
	snprintf(buf, len, "unknown(%u)", t);
	return buf;
}

static const char *state_name(uint32_t s, char *buf, size_t len)
{
	switch (s) {
	case 0:
		return "down";
	case 1:
		return "up";
	}
	snprintf(buf, len, "unknown(%u)", s);
	return buf;
}

/* "ADDR:PORT", or just "ADDR" if the kernel left the port out. */
static void print_addr(struct op_out *o, const char *key,
		       const struct op_host_info *hi, unsigned int addr_attr,
		       struct in_addr addr, unsigned int port_attr,
		       uint16_t port)
{
	char buf[OP_ADDR_STRLEN];

	if (!has(hi, addr_attr))
		return;
	op_format_udp_addr(buf, sizeof(buf), addr, port);
	if (!has(hi, port_attr))
		*strrchr(buf, ':') = '\0';
	out_str(o, key, NULL, buf);
}

int64_t op_ts_lag(uint64_t now, uint64_t then)
{
	uint64_t d = (now - then) & ONEPIPE_TS_MASK;

	/*
	 * Timestamps wrap at 48 bits: a difference of 2^47 or more is one
	 * that went the other way (@then is ahead, e.g. a commit barrier
	 * from hosts whose clocks run ahead of ours).
	 */
	if (d & (1ULL << (ONEPIPE_TS_BITS - 1)))
		return (int64_t)d - (int64_t)(1ULL << ONEPIPE_TS_BITS);
	return (int64_t)d;
}

/*
 * The reliable service: commit barriers, how far delivery trails the
 * clock, and scatterings/messages still in the sender's hands.
 */
static void print_commit(struct op_out *o, const struct op_host_info *hi)
{
	out_line(o, 2);
	out_wrap(o, 4);
	if (has(hi, ONEPIPE_A_TX_COMMIT))
		out_uint(o, "tx_commit", NULL, hi->tx_commit);
	if (has(hi, ONEPIPE_A_RX_COMMIT))
		out_uint(o, "rx_commit", NULL, hi->rx_commit);
	if (has(hi, ONEPIPE_A_CLOCK) && has(hi, ONEPIPE_A_RX_COMMIT))
		out_int(o, "commit_lag", NULL,
			op_ts_lag(hi->clock, hi->rx_commit));
	if (has(hi, ONEPIPE_A_RDM_WAITING))
		out_uint(o, "rdm_waiting", NULL, hi->rdm_waiting);
	if (has(hi, ONEPIPE_A_RDM_UNACKED))
		out_uint(o, "rdm_unacked", NULL, hi->rdm_unacked);
	/* Whether failures are the controller's to decide. */
	if (has(hi, ONEPIPE_A_CONTROLLED))
		out_yesno(o, "controlled", NULL, hi->controlled);
}

/* The verbs host's own address, on a line of its own. */
static void print_verbs_addr(struct op_out *o, const struct op_host_info *hi)
{
	char gid[INET6_ADDRSTRLEN];

	out_line(o, 2);
	out_wrap(o, 4);
	if (has(hi, ONEPIPE_A_VERBS_GID)) {
		op_format_gid(gid, sizeof(gid), hi->verbs_gid);
		out_str(o, "gid", NULL, gid);
	}
	if (has(hi, ONEPIPE_A_VERBS_QPN))
		out_uint(o, "qpn", NULL, hi->verbs_qpn);
	if (has(hi, ONEPIPE_A_VERBS_QKEY))
		out_hex(o, "qkey", NULL, hi->verbs_qkey);
	if (has(hi, ONEPIPE_A_VERBS_MTU))
		out_uint(o, "mtu", NULL, hi->verbs_mtu);
}

void op_host_print(struct op_out *o, const struct op_host_info *hi)
{
	char buf[32];

	out_obj_start(o);
	out_line(o, 0);
	if (has(hi, ONEPIPE_A_HOST_ID))
		out_uint(o, "host", NULL, hi->host_id);
	if (has(hi, ONEPIPE_A_TRANSPORT))
		out_str(o, "transport", NULL,
			transport_name(hi->transport, buf, sizeof(buf)));
	print_addr(o, "local", hi, ONEPIPE_A_UDP_LOCAL_ADDR, hi->local_addr,
		   ONEPIPE_A_UDP_LOCAL_PORT, hi->local_port);
	print_addr(o, "uplink", hi, ONEPIPE_A_UDP_UPLINK_ADDR,
		   hi->uplink_addr, ONEPIPE_A_UDP_UPLINK_PORT,
		   hi->uplink_port);
	if (has(hi, ONEPIPE_A_VERBS_DEV))
		out_str(o, "dev", NULL, hi->verbs_dev);
	if (has(hi, ONEPIPE_A_VERBS_PORT))
		out_uint(o, "port", NULL, hi->verbs_port);
	if (has(hi, ONEPIPE_A_STATE))
		out_str(o, "state", NULL,
			state_name(hi->state, buf, sizeof(buf)));
	print_verbs_addr(o, hi);

	out_line(o, 2);
	out_wrap(o, 4);
	if (has(hi, ONEPIPE_A_CLOCK))
		out_uint(o, "clock", NULL, hi->clock);
	if (has(hi, ONEPIPE_A_TX_BARRIER))
		out_uint(o, "tx_barrier", NULL, hi->tx_barrier);
	if (has(hi, ONEPIPE_A_RX_BARRIER))
		out_uint(o, "rx_barrier", NULL, hi->rx_barrier);
	if (has(hi, ONEPIPE_A_REORDER_DEPTH))
		out_uint(o, "reorder_depth", "reorder", hi->reorder_depth);

	print_commit(o, hi);
	if (has(hi, ONEPIPE_A_COUNTERS))
		op_counters_print(o, "counters", "counters:", &hi->counters,
				  op_counter_name);
	if (has(hi, ONEPIPE_A_VERBS_COUNTERS))
		op_counters_print(o, "verbs_counters", "verbs counters:",
				  &hi->verbs_counters, op_verbs_counter_name);
	if (has(hi, ONEPIPE_A_VERBS_PEERS))
		op_verbs_peers_print(o, hi->peers, hi->npeers);
	out_obj_end(o);
	out_eol(o);
}

void host_usage(FILE *f)
{
	fprintf(f,
		"Usage: onepipe host show\n"
		"       onepipe host set id ID [ transport udp ]\n"
		"                            [ local ADDR[:PORT] ] [ uplink ADDR[:PORT] ]\n"
		"       onepipe host set id ID [ transport verbs ] dev DEV [ port P ]\n"
		"                            [ qkey QKEY ] [ PEER ]...\n"
		"       onepipe host down\n"
		"       onepipe host help\n"
		"where  ID := 1..%u\n"
		"       ADDR := IPv4 address, PORT := 1..65535 (default %u)\n"
		"       DEV := RDMA device, P := its port (default 1)\n"
		"       PEER := peer PEER_ID gid GID qpn QPN [ qkey QKEY ]\n"
		"       PEER_ID := 0 (the uplink switch) | ID\n"
		"       GID := IPv6 address (or IPv4, for ::ffff:IPv4), QPN := 1..%u\n"
		"       QKEY := 0..0x%x (default 0x%x)\n",
		OP_HOST_ID_MAX, ONEPIPE_UDP_PORT, OP_QPN_MAX, OP_QKEY_MAX,
		ONEPIPE_VERBS_QKEY);
}

struct show_ctx {
	struct op_host_info hi;
	int replies;
};

static int show_cb(const struct nlmsghdr *nlh, void *data)
{
	struct show_ctx *s = data;

	/* Only one reply is expected; keep the last one's peers only. */
	op_host_free(&s->hi);
	op_host_parse(nlh, &s->hi);
	s->replies++;
	return MNL_CB_OK;
}

static int host_show(struct op_ctx *ctx)
{
	struct show_ctx s = { .replies = 0 };
	struct op_out o;
	struct op_nl nl;
	int err;

	if (op_nl_open(&nl))
		return 1;
	err = op_nl_talk(&nl, op_nl_request(&nl, ONEPIPE_CMD_HOST_GET,
					    NLM_F_ACK), show_cb, &s);
	if (err) {
		op_nl_perror(&nl, "host show", err);
		op_nl_close(&nl);
		return 1;
	}
	op_nl_close(&nl);
	if (s.replies != 1) {
		fprintf(stderr, "onepipe: host show: %d replies, expected 1\n",
			s.replies);
		op_host_free(&s.hi);
		return 1;
	}
	if (out_init(&o, ctx->out, ctx->json, ctx->pretty)) {
		fprintf(stderr, "onepipe: out of memory\n");
		op_host_free(&s.hi);
		return 1;
	}
	op_host_print(&o, &s.hi);
	op_host_free(&s.hi);
	return out_fini(&o) ? 1 : 0;
}

/* Send a command that only answers with an ack. */
static int host_simple(struct nlmsghdr *nlh, struct op_nl *nl,
		       const char *what)
{
	int err = op_nl_talk(nl, nlh, NULL, NULL);

	if (err) {
		op_nl_perror(nl, what, err);
		if (err == -EPERM)
			fprintf(stderr, "onepipe: %s needs CAP_NET_ADMIN\n",
				what);
	}
	op_nl_close(nl);
	return err ? 1 : 0;
}

static void put_udp_addr(struct nlmsghdr *nlh, uint16_t addr_attr,
			 uint16_t port_attr, const struct op_udp_addr *a)
{
	/* s_addr is network order, which is what the uapi asks for. */
	mnl_attr_put(nlh, addr_attr, sizeof(a->addr.s_addr), &a->addr.s_addr);
	mnl_attr_put_u16(nlh, port_attr, a->port);
}

/* The verbs attributes of a "host set" request. */
static int put_verbs(struct nlmsghdr *nlh, const struct op_host_set *req)
{
	if (req->has_dev)
		mnl_attr_put_strz(nlh, ONEPIPE_A_VERBS_DEV, req->dev);
	if (req->has_port)
		mnl_attr_put_u32(nlh, ONEPIPE_A_VERBS_PORT, req->port);
	if (req->has_qkey)
		mnl_attr_put_u32(nlh, ONEPIPE_A_VERBS_QKEY, req->qkey);
	if (!req->npeers)
		return 0;
	return op_verbs_peers_put(nlh, OP_NL_TXBUF, req->peers, req->npeers);
}

static int host_set(int argc, char **argv)
{
	struct op_host_set req;
	struct nlmsghdr *nlh;
	struct op_nl nl;
	char err[128];

	if (op_parse_host_set(argc, argv, &req, err, sizeof(err))) {
		op_host_set_free(&req);
		return op_usage_error("host", "host set: %s", err);
	}
	if (op_nl_open(&nl)) {
		op_host_set_free(&req);
		return 1;
	}
	nlh = op_nl_request(&nl, ONEPIPE_CMD_HOST_SET, NLM_F_ACK);
	mnl_attr_put_u32(nlh, ONEPIPE_A_HOST_ID, req.id);
	if (req.has_transport)
		mnl_attr_put_u32(nlh, ONEPIPE_A_TRANSPORT, req.transport);
	if (req.has_local)
		put_udp_addr(nlh, ONEPIPE_A_UDP_LOCAL_ADDR,
			     ONEPIPE_A_UDP_LOCAL_PORT, &req.local);
	if (req.has_uplink)
		put_udp_addr(nlh, ONEPIPE_A_UDP_UPLINK_ADDR,
			     ONEPIPE_A_UDP_UPLINK_PORT, &req.uplink);
	if (put_verbs(nlh, &req)) {
		/* Cannot happen within OP_VERBS_PEERS_MAX; be safe anyway. */
		fprintf(stderr, "onepipe: host set: request too large\n");
		op_host_set_free(&req);
		op_nl_close(&nl);
		return 1;
	}
	op_host_set_free(&req);
	return host_simple(nlh, &nl, "host set");
}

static int host_down(void)
{
	struct op_nl nl;

	if (op_nl_open(&nl))
		return 1;
	return host_simple(op_nl_request(&nl, ONEPIPE_CMD_HOST_DOWN,
					 NLM_F_ACK), &nl, "host down");
}

int do_host(struct op_ctx *ctx, int argc, char **argv)
{
	const char *cmd = argc > 0 ? argv[0] : "show";

	/* "s" is show, not set: an abbreviation never changes state. */
	if (op_matches(cmd, "show") || op_matches(cmd, "list")) {
		if (argc > 1)
			return op_unexpected_arg("host", "show", argv[1]);
		return host_show(ctx);
	}
	if (op_matches(cmd, "set"))
		return host_set(argc - 1, argv + 1);
	if (op_matches(cmd, "down")) {
		if (argc > 1)
			return op_unexpected_arg("host", "down", argv[1]);
		return host_down();
	}
	if (op_matches(cmd, "help")) {
		host_usage(stdout);
		return 0;
	}
	return op_usage_error("host", "command \"%s\" is unknown", cmd);
}
