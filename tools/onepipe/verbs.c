// SPDX-License-Identifier: GPL-2.0
/*
 * The verbs transport: onepipe dev show (ONEPIPE_CMD_DEV_GET dump, one
 * item per RDMA device port the module runs a UD QP on), and the verbs
 * parts of host show and host set that host.c shares: device counters,
 * the peers nest, GIDs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "tool.h"

static const char *const verbs_counter_names[] = {
	[ONEPIPE_VC_TX_POSTS]		= "tx_posts",
	[ONEPIPE_VC_TX_INLINE]		= "tx_inline",
	[ONEPIPE_VC_TX_COMPLETIONS]	= "tx_completions",
	[ONEPIPE_VC_TX_ERRORS]		= "tx_errors",
	[ONEPIPE_VC_TX_QUEUED]		= "tx_queued",
	[ONEPIPE_VC_TX_NOPEER]		= "tx_nopeer",
	[ONEPIPE_VC_RX_COMPLETIONS]	= "rx_completions",
	[ONEPIPE_VC_RX_ERRORS]		= "rx_errors",
	[ONEPIPE_VC_RX_REFILLS]		= "rx_refills",
	[ONEPIPE_VC_RX_COPIED]		= "rx_copied",
	[ONEPIPE_VC_RX_DROPS]		= "rx_drops",
	[ONEPIPE_VC_RX_EMPTY]		= "rx_empty",
	[ONEPIPE_VC_RX_POSTED]		= "rx_posted",
	[ONEPIPE_VC_RX_FOREIGN]		= "rx_foreign",
	[ONEPIPE_VC_QP_RESETS]		= "qp_resets",
};

/* A counter added to the uapi must get a name here too. */
_Static_assert(ARRAY_SIZE(verbs_counter_names) == __ONEPIPE_VC_MAX,
	       "verbs_counter_names[] out of sync with enum onepipe_verbs_counter");
_Static_assert(__ONEPIPE_VC_MAX <= OP_MAX_COUNTERS, "too many counters");

const char *op_verbs_counter_name(unsigned int id)
{
	return id < ARRAY_SIZE(verbs_counter_names) ?
	       verbs_counter_names[id] : NULL;
}

void op_counters_parse(const struct nlattr *nest, struct op_counters *c)
{
	const struct nlattr *attr;

	memset(c, 0, sizeof(*c));
	mnl_attr_for_each_nested(attr, nest) {
		unsigned int id = mnl_attr_get_type(attr);

		if (id == 0 || id >= OP_MAX_COUNTERS)
			continue;
		if (mnl_attr_get_payload_len(attr) != sizeof(uint64_t)) {
			fprintf(stderr,
				"onepipe: warning: counter %u has %u bytes, expected 8; ignored\n",
				id, mnl_attr_get_payload_len(attr));
			continue;
		}
		c->v[id] = mnl_attr_get_u64(attr);
		c->present |= 1ULL << id;
	}
}

void op_counters_print(struct op_out *o, const char *key, const char *label,
		       const struct op_counters *c,
		       const char *(*name_of)(unsigned int id))
{
	unsigned int id;
	char buf[32];

	out_line(o, 2);
	out_group_start(o, key, label, 4);
	for (id = 1; id < OP_MAX_COUNTERS; id++) {
		const char *name = name_of(id);

		if (!(c->present & (1ULL << id)))
			continue;
		/* Counters from a newer kernel still show, by number. */
		if (!name) {
			snprintf(buf, sizeof(buf), "counter_%u", id);
			name = buf;
		}
		out_uint(o, name, NULL, c->v[id]);
	}
	out_group_end(o);
}

const char *op_attr_str(const struct nlattr *attr)
{
	if (!attr || mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
		return NULL;
	return mnl_attr_get_str(attr);
}

const struct op_attr_spec op_verbs_peer_attrs[ONEPIPE_V_MAX + 1] = {
	[ONEPIPE_V_HOST]	= { "ONEPIPE_V_HOST", 4 },
	[ONEPIPE_V_GID]		= { "ONEPIPE_V_GID", 16 },
	[ONEPIPE_V_QPN]		= { "ONEPIPE_V_QPN", 4 },
	[ONEPIPE_V_QKEY]	= { "ONEPIPE_V_QKEY", 4 },
};

/* One ONEPIPE_A_VERBS_PEER nest; false if it lacks host, gid or qpn. */
static bool parse_peer(const struct nlattr *nest, struct op_verbs_peer *p)
{
	const struct nlattr *tb[ONEPIPE_V_MAX + 1];

	op_nl_parse_nest(nest, op_verbs_peer_attrs, ONEPIPE_V_MAX, tb);
	if (!tb[ONEPIPE_V_HOST] || !tb[ONEPIPE_V_GID] || !tb[ONEPIPE_V_QPN])
		return false;
	memset(p, 0, sizeof(*p));
	p->host = mnl_attr_get_u32(tb[ONEPIPE_V_HOST]);
	memcpy(p->gid, mnl_attr_get_payload(tb[ONEPIPE_V_GID]), 16);
	p->qpn = mnl_attr_get_u32(tb[ONEPIPE_V_QPN]);
	if (tb[ONEPIPE_V_QKEY]) {
		p->has_qkey = true;
		p->qkey = mnl_attr_get_u32(tb[ONEPIPE_V_QKEY]);
	}
	return true;
}

int op_verbs_peers_parse(const struct nlattr *nest,
			 struct op_verbs_peer **peers, unsigned int *npeers)
{
	const struct nlattr *attr;
	struct op_verbs_peer *p = NULL, *more;
	unsigned int n = 0;

	mnl_attr_for_each_nested(attr, nest) {
		if (mnl_attr_get_type(attr) != ONEPIPE_A_VERBS_PEER)
			continue;
		more = realloc(p, (n + 1) * sizeof(*p));
		if (!more) {
			free(p);
			return -ENOMEM;
		}
		p = more;
		if (parse_peer(attr, &p[n]))
			n++;
		else
			fprintf(stderr,
				"onepipe: warning: peer without host, gid or qpn; ignored\n");
	}
	*peers = p;
	*npeers = n;
	return 0;
}

void op_verbs_peers_print(struct op_out *o, const struct op_verbs_peer *p,
			  unsigned int n)
{
	char gid[INET6_ADDRSTRLEN];
	unsigned int i;

	out_list_start(o, "peers");
	for (i = 0; i < n; i++) {
		out_obj_start(o);
		out_line(o, 2);
		out_uint(o, "host", "peer", p[i].host);
		op_format_gid(gid, sizeof(gid), p[i].gid);
		out_str(o, "gid", NULL, gid);
		out_uint(o, "qpn", NULL, p[i].qpn);
		if (p[i].has_qkey)
			out_hex(o, "qkey", NULL, p[i].qkey);
		out_obj_end(o);
	}
	out_list_end(o);
}

/* Put the peers of a "host set" as ONEPIPE_A_VERBS_PEERS. */
int op_verbs_peers_put(struct nlmsghdr *nlh, size_t buflen,
		       const struct op_verbs_peer *p, unsigned int n)
{
	struct nlattr *all, *one;
	unsigned int i;

	all = mnl_attr_nest_start_check(nlh, buflen, ONEPIPE_A_VERBS_PEERS);
	if (!all)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		one = mnl_attr_nest_start_check(nlh, buflen,
						ONEPIPE_A_VERBS_PEER);
		if (!one ||
		    !mnl_attr_put_u32_check(nlh, buflen, ONEPIPE_V_HOST,
					    p[i].host) ||
		    !mnl_attr_put_check(nlh, buflen, ONEPIPE_V_GID, 16,
					p[i].gid) ||
		    !mnl_attr_put_u32_check(nlh, buflen, ONEPIPE_V_QPN,
					    p[i].qpn) ||
		    (p[i].has_qkey &&
		     !mnl_attr_put_u32_check(nlh, buflen, ONEPIPE_V_QKEY,
					     p[i].qkey)))
			return -EMSGSIZE;
		mnl_attr_nest_end(nlh, one);
	}
	/* A nest's length is 16 bits. */
	if ((char *)mnl_nlmsg_get_payload_tail(nlh) - (char *)all > UINT16_MAX)
		return -EMSGSIZE;
	mnl_attr_nest_end(nlh, all);
	return 0;
}

/* enum ib_port_state, as the rdma tool names them (lower case). */
static const char *port_state_name(uint32_t s, char *buf, size_t len)
{
	static const char *const names[] = {
		"nop", "down", "init", "armed", "active", "active_defer",
	};

	if (s < ARRAY_SIZE(names))
		return names[s];
	snprintf(buf, len, "unknown(%u)", s);
	return buf;
}

/* The port's address: GID, QP number, Q_Key and MTU, when reported. */
static void verbs_addr_print(struct op_out *o, const struct nlattr **tb)
{
	char gid[INET6_ADDRSTRLEN];

	if (tb[ONEPIPE_A_VERBS_GID]) {
		op_format_gid(gid, sizeof(gid),
			      mnl_attr_get_payload(tb[ONEPIPE_A_VERBS_GID]));
		out_str(o, "gid", NULL, gid);
	}
	if (tb[ONEPIPE_A_VERBS_QPN])
		out_uint(o, "qpn", NULL,
			 mnl_attr_get_u32(tb[ONEPIPE_A_VERBS_QPN]));
	if (tb[ONEPIPE_A_VERBS_QKEY])
		out_hex(o, "qkey", NULL,
			mnl_attr_get_u32(tb[ONEPIPE_A_VERBS_QKEY]));
	if (tb[ONEPIPE_A_VERBS_MTU])
		out_uint(o, "mtu", NULL,
			 mnl_attr_get_u32(tb[ONEPIPE_A_VERBS_MTU]));
}

void op_dev_print(struct op_out *o, const struct nlattr **tb)
{
	const char *dev = op_attr_str(tb[ONEPIPE_A_VERBS_DEV]);
	struct op_counters c;
	char buf[32];

	out_wrap(o, 4);
	if (dev)
		out_str(o, "dev", NULL, dev);
	if (tb[ONEPIPE_A_VERBS_PORT])
		out_uint(o, "port", NULL,
			 mnl_attr_get_u32(tb[ONEPIPE_A_VERBS_PORT]));
	if (tb[ONEPIPE_A_VERBS_STATE])
		out_str(o, "state", NULL,
			port_state_name(mnl_attr_get_u32(tb[ONEPIPE_A_VERBS_STATE]),
					buf, sizeof(buf)));
	if (tb[ONEPIPE_A_VERBS_BOUND])
		out_yesno(o, "bound", NULL,
			  mnl_attr_get_u32(tb[ONEPIPE_A_VERBS_BOUND]));
	out_line(o, 2);
	out_wrap(o, 4);
	verbs_addr_print(o, tb);
	if (tb[ONEPIPE_A_VERBS_COUNTERS]) {
		op_counters_parse(tb[ONEPIPE_A_VERBS_COUNTERS], &c);
		op_counters_print(o, "counters", "counters:", &c,
				  op_verbs_counter_name);
	}
}

void dev_usage(FILE *f)
{
	fprintf(f,
		"Usage: onepipe dev show\n"
		"       onepipe dev help\n");
}

int do_dev(struct op_ctx *ctx, int argc, char **argv)
{
	const char *cmd = argc > 0 ? argv[0] : "show";

	if (op_matches(cmd, "show") || op_matches(cmd, "list")) {
		if (argc > 1)
			return op_unexpected_arg("dev", "show", argv[1]);
		return op_dump(ctx, ONEPIPE_CMD_DEV_GET, ONEPIPE_A_UNSPEC,
			       op_attrs, ONEPIPE_A_MAX, op_dev_print,
			       "dev show");
	}
	if (op_matches(cmd, "help")) {
		dev_usage(stdout);
		return 0;
	}
	return op_usage_error("dev", "command \"%s\" is unknown", cmd);
}
