// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "onepipe": configure a host and look at its
 * state.  Every request acts on the caller's network namespace, i.e. on
 * the host the caller lives on; changes need CAP_NET_ADMIN there.
 */
#include <linux/module.h>
#include <net/genetlink.h>

#include "onepipe.h"

static struct netlink_range_validation op_host_id_range = {
	.min = 1,
	.max = U32_MAX - 1,
};

static const struct nla_policy op_nl_policy[ONEPIPE_A_MAX + 1] = {
	[ONEPIPE_A_HOST_ID]		= NLA_POLICY_FULL_RANGE(NLA_U32,
							&op_host_id_range),
	[ONEPIPE_A_TRANSPORT]		= NLA_POLICY_RANGE(NLA_U32,
							   ONEPIPE_TRANSPORT_UDP,
							   ONEPIPE_TRANSPORT_VERBS),
	[ONEPIPE_A_UDP_LOCAL_ADDR]	= { .type = NLA_BE32 },
	[ONEPIPE_A_UDP_LOCAL_PORT]	= NLA_POLICY_MIN(NLA_U16, 1),
	[ONEPIPE_A_UDP_UPLINK_ADDR]	= { .type = NLA_BE32 },
	[ONEPIPE_A_UDP_UPLINK_PORT]	= NLA_POLICY_MIN(NLA_U16, 1),
};

static struct genl_family op_genl_family;

static int op_nl_put_counters(struct sk_buff *msg, struct op_net *on)
{
	struct nlattr *nest = nla_nest_start(msg, ONEPIPE_A_COUNTERS);
	int c;

	if (!nest)
		return -EMSGSIZE;
	for (c = 1; c <= ONEPIPE_C_MAX; c++)
		if (nla_put_u64_64bit(msg, c, op_counter_sum(on, c),
				      ONEPIPE_C_UNSPEC))
			return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int op_nl_fill_host(struct sk_buff *msg, struct op_net *on)
{
	struct op_host_cfg cfg;
	u64 clock, txb, rxb, txc, rxc;
	u32 depth, waiting, unacked;
	bool up, has_rxc;

	mutex_lock(&on->cfg_mutex);
	cfg = on->cfg;
	up = on->up;
	mutex_unlock(&on->cfg_mutex);

	spin_lock_bh(&on->tx_lock);
	clock = op_clock_floor(&on->clock, op_now(on));
	txb = on->tx_barrier;
	txc = on->tx_commit;
	waiting = list_count_nodes(&on->rdm_waitq);
	unacked = on->rdm_unacked;
	spin_unlock_bh(&on->tx_lock);
	spin_lock_bh(&on->rx_lock);
	rxb = on->delivered;
	rxc = on->cdelivered;
	has_rxc = on->cagg.valid;
	depth = on->pq.count + on->rdm_pq.count;
	spin_unlock_bh(&on->rx_lock);

	if (cfg.host_id &&
	    (nla_put_u32(msg, ONEPIPE_A_HOST_ID, cfg.host_id) ||
	     nla_put_u32(msg, ONEPIPE_A_TRANSPORT, cfg.transport)))
		return -EMSGSIZE;
	if (cfg.transport == ONEPIPE_TRANSPORT_UDP &&
	    (nla_put_be32(msg, ONEPIPE_A_UDP_LOCAL_ADDR, cfg.laddr) ||
	     nla_put_u16(msg, ONEPIPE_A_UDP_LOCAL_PORT, cfg.lport) ||
	     nla_put_be32(msg, ONEPIPE_A_UDP_UPLINK_ADDR, cfg.uaddr) ||
	     nla_put_u16(msg, ONEPIPE_A_UDP_UPLINK_PORT, cfg.uport)))
		return -EMSGSIZE;
	if (nla_put_u32(msg, ONEPIPE_A_STATE, up) ||
	    nla_put_u64_64bit(msg, ONEPIPE_A_CLOCK, clock, ONEPIPE_A_PAD) ||
	    nla_put_u64_64bit(msg, ONEPIPE_A_TX_BARRIER, txb, ONEPIPE_A_PAD) ||
	    nla_put_u64_64bit(msg, ONEPIPE_A_RX_BARRIER, rxb, ONEPIPE_A_PAD) ||
	    nla_put_u32(msg, ONEPIPE_A_REORDER_DEPTH, depth) ||
	    nla_put_u64_64bit(msg, ONEPIPE_A_TX_COMMIT, txc, ONEPIPE_A_PAD) ||
	    nla_put_u32(msg, ONEPIPE_A_RDM_WAITING, waiting) ||
	    nla_put_u32(msg, ONEPIPE_A_RDM_UNACKED, unacked))
		return -EMSGSIZE;
	if (has_rxc &&
	    nla_put_u64_64bit(msg, ONEPIPE_A_RX_COMMIT, rxc, ONEPIPE_A_PAD))
		return -EMSGSIZE;
	return op_nl_put_counters(msg, on);
}

static int op_nl_host_get(struct sk_buff *skb, struct genl_info *info)
{
	struct op_net *on = op_net(genl_info_net(info));
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &op_genl_family, 0,
				ONEPIPE_CMD_HOST_GET);
	if (!hdr) {
		err = -EMSGSIZE;
		goto out_free;
	}
	err = op_nl_fill_host(msg, on);
	if (err)
		goto out_free;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

out_free:
	nlmsg_free(msg);
	return err;
}

static int op_nl_host_set(struct sk_buff *skb, struct genl_info *info)
{
	struct op_net *on = op_net(genl_info_net(info));
	struct nlattr **a = info->attrs;
	struct op_host_cfg cfg = {
		.transport = ONEPIPE_TRANSPORT_UDP,
		.lport = ONEPIPE_UDP_PORT,
		.uport = ONEPIPE_UDP_PORT,
	};
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ONEPIPE_A_HOST_ID))
		return -EINVAL;
	cfg.host_id = nla_get_u32(a[ONEPIPE_A_HOST_ID]);
	if (a[ONEPIPE_A_TRANSPORT])
		cfg.transport = nla_get_u32(a[ONEPIPE_A_TRANSPORT]);
	if (cfg.transport != ONEPIPE_TRANSPORT_UDP) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[ONEPIPE_A_TRANSPORT],
				    "transport not available");
		return -EOPNOTSUPP;
	}
	if (GENL_REQ_ATTR_CHECK(info, ONEPIPE_A_UDP_UPLINK_ADDR))
		return -EINVAL;
	cfg.uaddr = nla_get_be32(a[ONEPIPE_A_UDP_UPLINK_ADDR]);
	if (a[ONEPIPE_A_UDP_LOCAL_ADDR])
		cfg.laddr = nla_get_be32(a[ONEPIPE_A_UDP_LOCAL_ADDR]);
	if (a[ONEPIPE_A_UDP_LOCAL_PORT])
		cfg.lport = nla_get_u16(a[ONEPIPE_A_UDP_LOCAL_PORT]);
	if (a[ONEPIPE_A_UDP_UPLINK_PORT])
		cfg.uport = nla_get_u16(a[ONEPIPE_A_UDP_UPLINK_PORT]);

	err = op_host_set(on, &cfg);
	if (err == -ENETUNREACH || err == -EHOSTUNREACH)
		NL_SET_ERR_MSG_ATTR(info->extack, a[ONEPIPE_A_UDP_UPLINK_ADDR],
				    "no route to the uplink");
	else if (err == -EADDRINUSE || err == -EADDRNOTAVAIL)
		NL_SET_ERR_MSG(info->extack, "cannot bind the local address");
	else if (err == -EMSGSIZE)
		NL_SET_ERR_MSG(info->extack, "path MTU to the uplink too small");
	return err;
}

static int op_nl_host_down(struct sk_buff *skb, struct genl_info *info)
{
	op_host_down(op_net(genl_info_net(info)));
	return 0;
}

static void *op_nl_dump_hdr(struct sk_buff *skb, struct netlink_callback *cb,
			    u8 cmd)
{
	return genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			   &op_genl_family, NLM_F_MULTI, cmd);
}

/* A host has one input link today: its uplink, index 0. */
static int op_nl_link_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct op_net *on = op_net(sock_net(skb->sk));
	struct op_link l;
	struct nlattr *nest;
	void *hdr;
	int state;

	if (cb->args[0] || !READ_ONCE(on->up))
		return 0;
	spin_lock_bh(&on->rx_lock);
	l = on->uplink;
	state = op_agg_link_state(&on->agg, &on->uplink, 0);
	spin_unlock_bh(&on->rx_lock);

	hdr = op_nl_dump_hdr(skb, cb, ONEPIPE_CMD_LINK_GET);
	if (!hdr)
		return -EMSGSIZE;
	nest = nla_nest_start(skb, ONEPIPE_A_LINK);
	if (!nest ||
	    nla_put_u32(skb, ONEPIPE_L_INDEX, 0) ||
	    nla_put_u32(skb, ONEPIPE_L_STATE, state) ||
	    (l.heard &&
	     (nla_put_u64_64bit(skb, ONEPIPE_L_BARRIER, l.reg, ONEPIPE_L_PAD) ||
	      nla_put_u64_64bit(skb, ONEPIPE_L_IDLE_NS,
				ktime_get_ns() - l.last_heard, ONEPIPE_L_PAD)))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	cb->args[0] = 1;
	return skb->len;
}

static int op_nl_fill_sock(struct sk_buff *skb, struct netlink_callback *cb,
			   struct op_sock *os)
{
	struct sock *sk = &os->sk;
	struct nlattr *nest;
	void *hdr;

	hdr = op_nl_dump_hdr(skb, cb, ONEPIPE_CMD_SOCK_GET);
	if (!hdr)
		return -EMSGSIZE;
	nest = nla_nest_start(skb, ONEPIPE_A_SOCK);
	if (!nest ||
	    nla_put_u16(skb, ONEPIPE_S_PORT, os->port) ||
	    nla_put_u32(skb, ONEPIPE_S_TYPE, sk->sk_type) ||
	    nla_put_u32(skb, ONEPIPE_S_RX_QUEUED, sk_rmem_alloc_get(sk)) ||
	    nla_put_u32(skb, ONEPIPE_S_TX_QUEUED, sk_wmem_alloc_get(sk)) ||
	    nla_put_u8(skb, ONEPIPE_S_ORDERED, READ_ONCE(os->ordered)) ||
	    nla_put_u64_64bit(skb, ONEPIPE_S_INODE, sock_i_ino(sk),
			      ONEPIPE_S_PAD)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;
}

/* cb->args[0]: hash bucket to resume at, cb->args[1]: sockets to skip. */
static int op_nl_sock_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct op_net *on = op_net(sock_net(skb->sk));
	unsigned long bkt = cb->args[0], skip = cb->args[1], i;
	struct op_sock *os;

	spin_lock_bh(&on->port_lock);
	for (; bkt < HASH_SIZE(on->ports); bkt++, skip = 0) {
		i = 0;
		hlist_for_each_entry(os, &on->ports[bkt], bind_node) {
			if (i++ < skip)
				continue;
			if (op_nl_fill_sock(skb, cb, os))
				goto out;
			skip++;
		}
	}
out:
	spin_unlock_bh(&on->port_lock);
	cb->args[0] = bkt;
	cb->args[1] = skip;
	return skb->len;
}

/* What PEER_GET reports of one peer, copied under the locks. */
struct op_nl_peer {
	u32 v[__ONEPIPE_P_MAX];
};

static void op_nl_peer_read(struct op_net *on, struct op_peer *p,
			    struct op_nl_peer *o)
{
	const struct op_rdm_tx *t = &p->rtx;
	const struct op_rdm_rx *r = &p->rrx;

	spin_lock_bh(&on->rx_lock);
	o->v[ONEPIPE_P_RX_NXT] = r->nxt;
	o->v[ONEPIPE_P_RX_HELD] = r->held;
	o->v[ONEPIPE_P_RX_ADV] = r->adv;
	spin_unlock_bh(&on->rx_lock);
	spin_lock_bh(&on->tx_lock);
	o->v[ONEPIPE_P_TX_NEXT] = t->next;
	o->v[ONEPIPE_P_TX_EDGE] = t->edge;
	o->v[ONEPIPE_P_TX_INFLIGHT] = t->inflight;
	o->v[ONEPIPE_P_TX_RESERVED] = t->reserved;
	o->v[ONEPIPE_P_TX_QUEUED] = skb_queue_len(&t->out);
	o->v[ONEPIPE_P_CWND] = t->cwnd;
	o->v[ONEPIPE_P_ALPHA] = t->alpha;
	o->v[ONEPIPE_P_SRTT_US] = t->srtt_us;
	o->v[ONEPIPE_P_RTTVAR_US] = t->rttvar_us;
	o->v[ONEPIPE_P_BACKOFF] = t->backoff;
	spin_unlock_bh(&on->tx_lock);
	o->v[ONEPIPE_P_HOST] = p->host;
}

static int op_nl_fill_peer(struct sk_buff *skb, struct netlink_callback *cb,
			   const struct op_nl_peer *o)
{
	struct nlattr *nest;
	void *hdr;
	int a;

	hdr = op_nl_dump_hdr(skb, cb, ONEPIPE_CMD_PEER_GET);
	if (!hdr)
		return -EMSGSIZE;
	nest = nla_nest_start(skb, ONEPIPE_A_PEER);
	if (!nest)
		goto cancel;
	for (a = ONEPIPE_P_HOST; a <= ONEPIPE_P_MAX; a++)
		if (nla_put_u32(skb, a, o->v[a]))
			goto cancel;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* cb->args[0]: host id to resume at.  Peers are never freed meanwhile. */
static int op_nl_peer_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct op_net *on = op_net(sock_net(skb->sk));
	struct op_nl_peer o;
	struct op_peer *p;
	unsigned long host;

	xa_for_each_start(&on->peers, host, p, cb->args[0]) {
		op_nl_peer_read(on, p, &o);
		if (op_nl_fill_peer(skb, cb, &o))
			break;
		cb->args[0] = host + 1;
	}
	return skb->len;
}

static const struct genl_small_ops op_genl_ops[] = {
	{
		.cmd	= ONEPIPE_CMD_HOST_GET,
		.doit	= op_nl_host_get,
	},
	{
		.cmd	= ONEPIPE_CMD_HOST_SET,
		.doit	= op_nl_host_set,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd	= ONEPIPE_CMD_HOST_DOWN,
		.doit	= op_nl_host_down,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd	= ONEPIPE_CMD_LINK_GET,
		.dumpit	= op_nl_link_dump,
	},
	{
		.cmd	= ONEPIPE_CMD_SOCK_GET,
		.dumpit	= op_nl_sock_dump,
	},
	{
		.cmd	= ONEPIPE_CMD_PEER_GET,
		.dumpit	= op_nl_peer_dump,
	},
};

static struct genl_family op_genl_family __ro_after_init = {
	.name		= ONEPIPE_GENL_NAME,
	.version	= ONEPIPE_GENL_VERSION,
	.maxattr	= ONEPIPE_A_MAX,
	.policy		= op_nl_policy,
	.netnsok	= true,
	.module		= THIS_MODULE,
	.small_ops	= op_genl_ops,
	.n_small_ops	= ARRAY_SIZE(op_genl_ops),
	.resv_start_op	= ONEPIPE_CMD_SOCK_GET + 1,
};

int __init op_netlink_init(void)
{
	return genl_register_family(&op_genl_family);
}

void op_netlink_exit(void)
{
	genl_unregister_family(&op_genl_family);
}

MODULE_ALIAS_GENL_FAMILY(ONEPIPE_GENL_NAME);
