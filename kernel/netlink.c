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

/* QP numbers have 24 bits. */
static struct netlink_range_validation op_qpn_range = {
	.max = 0xffffff,
};

/* Q_Keys with the high bit set are the privileged ones. */
static struct netlink_range_validation op_qkey_range = {
	.max = 0x7fffffff,
};

static const struct nla_policy op_nl_vpeer_policy[ONEPIPE_V_MAX + 1] = {
	[ONEPIPE_V_HOST]	= { .type = NLA_U32 },
	[ONEPIPE_V_GID]		= NLA_POLICY_EXACT_LEN(16),
	[ONEPIPE_V_QPN]		= NLA_POLICY_FULL_RANGE(NLA_U32, &op_qpn_range),
	[ONEPIPE_V_QKEY]	= NLA_POLICY_FULL_RANGE(NLA_U32, &op_qkey_range),
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
	[ONEPIPE_A_VERBS_DEV]		= { .type = NLA_NUL_STRING,
					    .len = OP_VERBS_DEV_LEN - 1 },
	[ONEPIPE_A_VERBS_PORT]		= NLA_POLICY_MIN(NLA_U32, 1),
	[ONEPIPE_A_VERBS_QKEY]		= NLA_POLICY_FULL_RANGE(NLA_U32,
							&op_qkey_range),
	[ONEPIPE_A_VERBS_PEERS]	= NLA_POLICY_NESTED_ARRAY(op_nl_vpeer_policy),
};

/* ONEPIPE_CMD_FAIL: strict, its own attributes only. */
static const struct nla_policy op_nl_fail_policy[ONEPIPE_A_MAX + 1] = {
	[ONEPIPE_A_EPOCH]	= NLA_POLICY_MIN(NLA_U32, 1),
	[ONEPIPE_A_FAIL_HOST]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&op_host_id_range),
	[ONEPIPE_A_FAIL_TS]	= { .type = NLA_U64 },
};

/* ONEPIPE_CMD_REJOIN: FAIL_TS is the new incarnation's first stamp. */
static const struct nla_policy op_nl_rejoin_policy[ONEPIPE_A_MAX + 1] = {
	[ONEPIPE_A_EPOCH]	= NLA_POLICY_MIN(NLA_U32, 1),
	[ONEPIPE_A_FAIL_HOST]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&op_host_id_range),
	[ONEPIPE_A_FAIL_TS]	= { .type = NLA_U64 },
};

/* ONEPIPE_CMD_RELAY: one packet, a 1Pipe header at least. */
static const struct nla_policy op_nl_relay_policy[ONEPIPE_A_MAX + 1] = {
	[ONEPIPE_A_PACKET]	= NLA_POLICY_RANGE(NLA_BINARY, OP_HDR_LEN,
						   ONEPIPE_RELAY_MAX),
};

static struct genl_family op_genl_family;

/* Multicast groups; the index is what genlmsg_multicast_netns() takes. */
enum op_nl_mcgrp {
	OP_NL_MCGRP_CTL,
};

/* Failure reports are the controller's business only. */
static const struct genl_multicast_group op_nl_mcgrps[] = {
	[OP_NL_MCGRP_CTL] = {
		.name	= ONEPIPE_GENL_MCGRP_CTL,
		.flags	= GENL_MCAST_CAP_NET_ADMIN,
	},
};

/*
 * Events may be sent while the family is registered: module exit clears
 * this (and waits out every sender) before it unregisters the family,
 * while hosts may still tick.
 */
static bool op_nl_live;

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
	bool up, has_rxc, cup_silent, cup_heard;
	u64 cup_reg;

	mutex_lock(&on->cfg_mutex);
	cfg = on->cfg;
	up = on->up;
	mutex_unlock(&on->cfg_mutex);

	spin_lock_bh(&on->tx_lock);
	clock = op_clock_floor(&on->clock, op_now(on));
	txb = on->tx_barrier;
	txc = on->tx_commit;
	waiting = list_count_nodes(&on->waitq);
	unacked = on->rdm_unacked;
	spin_unlock_bh(&on->tx_lock);
	spin_lock_bh(&on->rx_lock);
	rxb = on->delivered;
	rxc = on->cdelivered;
	has_rxc = on->cagg.valid;
	depth = on->pq.count + on->rdm_pq.count;
	cup_silent = on->cup_reported;
	cup_heard = on->cuplink.heard;
	cup_reg = on->cuplink.reg;
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
	    nla_put_u32(msg, ONEPIPE_A_RDM_UNACKED, unacked) ||
	    nla_put_u32(msg, ONEPIPE_A_CONTROLLED,
			READ_ONCE(on->controlled)))
		return -EMSGSIZE;
	if (has_rxc &&
	    nla_put_u64_64bit(msg, ONEPIPE_A_RX_COMMIT, rxc, ONEPIPE_A_PAD))
		return -EMSGSIZE;
	/*
	 * The uplink's commit register as EV_LINK last said: an agent that
	 * lost events (a full socket) reads it back here.
	 */
	if (READ_ONCE(on->controlled) &&
	    (nla_put_u32(msg, ONEPIPE_A_LINK_UP, !cup_silent) ||
	     (cup_heard && nla_put_u64_64bit(msg, ONEPIPE_A_LINK_COMMIT,
					     cup_reg, ONEPIPE_A_PAD))))
		return -EMSGSIZE;
	return op_nl_put_counters(msg, on);
}

/* What HOST_GET and DEV_GET say of an RDMA device port. */
static int op_nl_put_verbs(struct sk_buff *msg, const struct op_verbs_info *vi)
{
	struct nlattr *nest;
	int c;

	if (nla_put_string(msg, ONEPIPE_A_VERBS_DEV, vi->dev) ||
	    nla_put_u32(msg, ONEPIPE_A_VERBS_PORT, vi->port) ||
	    nla_put_u32(msg, ONEPIPE_A_VERBS_STATE, vi->state) ||
	    (vi->has_gid &&
	     nla_put(msg, ONEPIPE_A_VERBS_GID, sizeof(vi->gid), vi->gid)) ||
	    nla_put_u32(msg, ONEPIPE_A_VERBS_QPN, vi->qpn) ||
	    nla_put_u32(msg, ONEPIPE_A_VERBS_QKEY, vi->qkey) ||
	    nla_put_u32(msg, ONEPIPE_A_VERBS_MTU, vi->mtu) ||
	    nla_put_u32(msg, ONEPIPE_A_VERBS_BOUND, vi->bound))
		return -EMSGSIZE;
	nest = nla_nest_start(msg, ONEPIPE_A_VERBS_COUNTERS);
	if (!nest)
		return -EMSGSIZE;
	for (c = 1; c <= ONEPIPE_VC_MAX; c++)
		if (nla_put_u64_64bit(msg, c, vi->ctr[c], ONEPIPE_VC_UNSPEC))
			return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int op_nl_put_vpeers(struct sk_buff *msg,
			    const struct op_verbs_peer *peers, unsigned int n)
{
	struct nlattr *all, *one;
	unsigned int i;

	all = nla_nest_start(msg, ONEPIPE_A_VERBS_PEERS);
	if (!all)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		one = nla_nest_start(msg, ONEPIPE_A_VERBS_PEER);
		if (!one ||
		    nla_put_u32(msg, ONEPIPE_V_HOST, peers[i].host) ||
		    nla_put(msg, ONEPIPE_V_GID, sizeof(peers[i].gid),
			    peers[i].gid) ||
		    nla_put_u32(msg, ONEPIPE_V_QPN, peers[i].qpn) ||
		    nla_put_u32(msg, ONEPIPE_V_QKEY, peers[i].qkey))
			return -EMSGSIZE;
		nla_nest_end(msg, one);
	}
	nla_nest_end(msg, all);
	return 0;
}

/* Room for one peer in HOST_GET's reply. */
#define OP_NL_VPEER_SIZE	64

static int op_nl_host_get(struct sk_buff *skb, struct genl_info *info)
{
	struct op_net *on = op_net(genl_info_net(info));
	unsigned int npeers = OP_VERBS_MAX_PEERS;
	struct op_verbs_peer *peers = NULL;
	struct op_verbs_info *vi = NULL;
	struct sk_buff *msg = NULL;
	bool verbs = false;
	void *hdr;
	int err = -ENOMEM;

	if (READ_ONCE(on->cfg.transport) == ONEPIPE_TRANSPORT_VERBS) {
		vi = kmalloc(sizeof(*vi), GFP_KERNEL);
		peers = kvmalloc_array(npeers, sizeof(*peers), GFP_KERNEL);
		if (!vi || !peers)
			goto out;
		verbs = !op_verbs_host_info(on, vi, peers, &npeers);
	}
	if (!verbs)
		npeers = 0;

	msg = nlmsg_new(NLMSG_DEFAULT_SIZE + npeers * OP_NL_VPEER_SIZE,
			GFP_KERNEL);
	if (!msg)
		goto out;
	hdr = genlmsg_put_reply(msg, info, &op_genl_family, 0,
				ONEPIPE_CMD_HOST_GET);
	err = -EMSGSIZE;
	if (!hdr)
		goto out;
	err = op_nl_fill_host(msg, on);
	if (!err && verbs)
		err = op_nl_put_verbs(msg, vi) ?:
		      op_nl_put_vpeers(msg, peers, npeers);
	if (err)
		goto out;
	genlmsg_end(msg, hdr);
	err = genlmsg_reply(msg, info);
	msg = NULL;
out:
	nlmsg_free(msg);
	kvfree(peers);
	kfree(vi);
	return err;
}

/* Parse the verbs peers of HOST_SET into @cfg; the caller frees them. */
static int op_nl_parse_vpeers(struct genl_info *info, struct op_host_cfg *cfg)
{
	struct nlattr *nest = info->attrs[ONEPIPE_A_VERBS_PEERS];
	struct nlattr *tb[ONEPIPE_V_MAX + 1], *pa;
	struct op_verbs_peer *peers, *p;
	int rem, n = 0, err;

	if (!nest)
		return 0;
	nla_for_each_nested(pa, nest, rem)
		n++;
	if (n > OP_VERBS_MAX_PEERS) {
		NL_SET_ERR_MSG_ATTR(info->extack, nest, "too many peers");
		return -E2BIG;
	}
	peers = kvcalloc(n, sizeof(*peers), GFP_KERNEL);
	if (!peers)
		return -ENOMEM;
	cfg->vpeers = peers;
	nla_for_each_nested(pa, nest, rem) {
		err = nla_parse_nested(tb, ONEPIPE_V_MAX, pa,
				       op_nl_vpeer_policy, info->extack);
		if (err)
			return err;
		if (NL_REQ_ATTR_CHECK(info->extack, pa, tb, ONEPIPE_V_HOST) ||
		    NL_REQ_ATTR_CHECK(info->extack, pa, tb, ONEPIPE_V_GID) ||
		    NL_REQ_ATTR_CHECK(info->extack, pa, tb, ONEPIPE_V_QPN))
			return -EINVAL;
		p = &peers[cfg->nvpeers++];
		p->host = nla_get_u32(tb[ONEPIPE_V_HOST]);
		nla_memcpy(p->gid, tb[ONEPIPE_V_GID], sizeof(p->gid));
		p->qpn = nla_get_u32(tb[ONEPIPE_V_QPN]);
		p->qkey = tb[ONEPIPE_V_QKEY] ? nla_get_u32(tb[ONEPIPE_V_QKEY]) :
					       ONEPIPE_VERBS_QKEY;
	}
	return 0;
}

static int op_nl_parse_verbs(struct genl_info *info, struct op_host_cfg *cfg)
{
	struct nlattr **a = info->attrs;

	if (GENL_REQ_ATTR_CHECK(info, ONEPIPE_A_VERBS_DEV))
		return -EINVAL;
	nla_strscpy(cfg->vdev, a[ONEPIPE_A_VERBS_DEV], sizeof(cfg->vdev));
	if (a[ONEPIPE_A_VERBS_PORT])
		cfg->vport = nla_get_u32(a[ONEPIPE_A_VERBS_PORT]);
	if (a[ONEPIPE_A_VERBS_QKEY])
		cfg->vqkey = nla_get_u32(a[ONEPIPE_A_VERBS_QKEY]);
	return op_nl_parse_vpeers(info, cfg);
}

static int op_nl_parse_udp(struct genl_info *info, struct op_host_cfg *cfg)
{
	struct nlattr **a = info->attrs;

	if (GENL_REQ_ATTR_CHECK(info, ONEPIPE_A_UDP_UPLINK_ADDR))
		return -EINVAL;
	cfg->uaddr = nla_get_be32(a[ONEPIPE_A_UDP_UPLINK_ADDR]);
	if (a[ONEPIPE_A_UDP_LOCAL_ADDR])
		cfg->laddr = nla_get_be32(a[ONEPIPE_A_UDP_LOCAL_ADDR]);
	if (a[ONEPIPE_A_UDP_LOCAL_PORT])
		cfg->lport = nla_get_u16(a[ONEPIPE_A_UDP_LOCAL_PORT]);
	if (a[ONEPIPE_A_UDP_UPLINK_PORT])
		cfg->uport = nla_get_u16(a[ONEPIPE_A_UDP_UPLINK_PORT]);
	return 0;
}

static void op_nl_set_udp_errmsg(struct genl_info *info, int err)
{
	struct nlattr **a = info->attrs;

	switch (err) {
	case -ENETUNREACH:
	case -EHOSTUNREACH:
		NL_SET_ERR_MSG_ATTR(info->extack, a[ONEPIPE_A_UDP_UPLINK_ADDR],
				    "no route to the uplink");
		break;
	case -EADDRINUSE:
	case -EADDRNOTAVAIL:
		NL_SET_ERR_MSG(info->extack, "cannot bind the local address");
		break;
	case -EMSGSIZE:
		NL_SET_ERR_MSG(info->extack, "path MTU to the uplink too small");
		break;
	}
}

static void op_nl_set_verbs_errmsg(struct genl_info *info, int err)
{
	struct nlattr **a = info->attrs;

	switch (err) {
	case -ENODEV:
		NL_SET_ERR_MSG_ATTR(info->extack, a[ONEPIPE_A_VERBS_DEV],
				    "no such RDMA device port");
		break;
	case -EBUSY:
		NL_SET_ERR_MSG_ATTR(info->extack, a[ONEPIPE_A_VERBS_DEV],
				    "the RDMA port serves another host");
		break;
	case -ENETDOWN:
		NL_SET_ERR_MSG_ATTR(info->extack, a[ONEPIPE_A_VERBS_DEV],
				    "the RDMA port is not active");
		break;
	case -EMSGSIZE:
		NL_SET_ERR_MSG_ATTR(info->extack, a[ONEPIPE_A_VERBS_DEV],
				    "the RDMA port's MTU is too small");
		break;
	case -EADDRNOTAVAIL:
		NL_SET_ERR_MSG_ATTR(info->extack, a[ONEPIPE_A_VERBS_DEV],
				    "the RDMA port has no IPv4 RoCEv2 GID");
		break;
	case -EDESTADDRREQ:
		NL_SET_ERR_MSG_ATTR(info->extack, a[ONEPIPE_A_VERBS_PEERS],
				    "no uplink: peer 0 is missing");
		break;
	case -EEXIST:
		NL_SET_ERR_MSG_ATTR(info->extack, a[ONEPIPE_A_VERBS_PEERS],
				    "a peer is given twice");
		break;
	case -ENODATA:
	case -ETIMEDOUT:
	case -ENETUNREACH:
	case -EHOSTUNREACH:
		NL_SET_ERR_MSG_ATTR(info->extack, a[ONEPIPE_A_VERBS_PEERS],
				    "cannot resolve a peer's address");
		break;
	}
}

static int op_nl_host_set(struct sk_buff *skb, struct genl_info *info)
{
	struct op_net *on = op_net(genl_info_net(info));
	struct nlattr **a = info->attrs;
	struct op_host_cfg cfg = {
		.transport = ONEPIPE_TRANSPORT_UDP,
		.lport = ONEPIPE_UDP_PORT,
		.uport = ONEPIPE_UDP_PORT,
		.vport = 1,
		.vqkey = ONEPIPE_VERBS_QKEY,
	};
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ONEPIPE_A_HOST_ID))
		return -EINVAL;
	cfg.host_id = nla_get_u32(a[ONEPIPE_A_HOST_ID]);
	if (a[ONEPIPE_A_TRANSPORT])
		cfg.transport = nla_get_u32(a[ONEPIPE_A_TRANSPORT]);
	if (cfg.transport == ONEPIPE_TRANSPORT_UDP) {
		err = op_nl_parse_udp(info, &cfg) ?: op_host_set(on, &cfg);
		op_nl_set_udp_errmsg(info, err);
		return err;
	}
	if (!IS_ENABLED(CONFIG_INFINIBAND)) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[ONEPIPE_A_TRANSPORT],
				    "transport not available");
		return -EOPNOTSUPP;
	}
	/*
	 * RDMA devices are not per namespace: binding one sends from the
	 * initial namespace's addresses, so it takes the initial
	 * namespace's administrator, not just this one's.
	 */
	if (!netlink_capable(skb, CAP_NET_ADMIN)) {
		NL_SET_ERR_MSG(info->extack,
			       "the verbs transport needs CAP_NET_ADMIN");
		return -EPERM;
	}
	err = op_nl_parse_verbs(info, &cfg) ?: op_host_set(on, &cfg);
	op_nl_set_verbs_errmsg(info, err);
	kvfree(cfg.vpeers);
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

/*
 * The deadline a best-effort message to @p alone stamped now would get,
 * after its stamp (op_tx_send()), in microseconds.
 */
static u32 op_nl_be_deadline_us(struct op_net *on, struct op_peer *p)
{
	u64 need = op_tx_deadline_need(on, p, op_ts(op_now(on)));

	return (u32)min_t(u64, div_u64(op_deadline_ns(op_deadline_pick(need)),
				       NSEC_PER_USEC), U32_MAX);
}

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
	o->v[ONEPIPE_P_RELAY] = t->relay;
	o->v[ONEPIPE_P_BE_DELAY_US] = p->be_dl.srtt_us;
	o->v[ONEPIPE_P_BE_DELAYVAR_US] = p->be_dl.rttvar_us;
	o->v[ONEPIPE_P_BE_DEADLINE_US] = op_nl_be_deadline_us(on, p);
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

static int op_nl_fail(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	u64 ts;

	if (GENL_REQ_ATTR_CHECK(info, ONEPIPE_A_EPOCH) ||
	    GENL_REQ_ATTR_CHECK(info, ONEPIPE_A_FAIL_HOST) ||
	    GENL_REQ_ATTR_CHECK(info, ONEPIPE_A_FAIL_TS))
		return -EINVAL;
	ts = nla_get_u64(a[ONEPIPE_A_FAIL_TS]);
	if (ts & ~ONEPIPE_TS_MASK) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[ONEPIPE_A_FAIL_TS],
				    "timestamps have 48 bits");
		return -EINVAL;
	}
	return op_fail_apply(op_net(genl_info_net(info)),
			     nla_get_u32(a[ONEPIPE_A_EPOCH]),
			     nla_get_u32(a[ONEPIPE_A_FAIL_HOST]), ts,
			     info->extack);
}

/*
 * To the host itself: answers with its new incarnation's first timestamp
 * (ONEPIPE_A_FAIL_TS), which the others then need.
 */
static int op_nl_rejoin(struct sk_buff *skb, struct genl_info *info)
{
	struct op_net *on = op_net(genl_info_net(info));
	struct nlattr **a = info->attrs;
	bool has_first = a[ONEPIPE_A_FAIL_TS];
	struct sk_buff *msg;
	u32 host, epoch;
	bool self;
	u64 first = 0;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ONEPIPE_A_FAIL_HOST) ||
	    GENL_REQ_ATTR_CHECK(info, ONEPIPE_A_EPOCH))
		return -EINVAL;
	host = nla_get_u32(a[ONEPIPE_A_FAIL_HOST]);
	epoch = nla_get_u32(a[ONEPIPE_A_EPOCH]);
	if (has_first) {
		first = nla_get_u64(a[ONEPIPE_A_FAIL_TS]);
		if (first & ~ONEPIPE_TS_MASK) {
			NL_SET_ERR_MSG_ATTR(info->extack, a[ONEPIPE_A_FAIL_TS],
					    "timestamps have 48 bits");
			return -EINVAL;
		}
	}
	/* Before the rejoin: a host that started over must get its answer. */
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	err = op_fail_rejoin(on, epoch, host, has_first, &first, &self,
			     info->extack);
	if (err || !self) {
		nlmsg_free(msg);
		return err;
	}
	hdr = genlmsg_put_reply(msg, info, &op_genl_family, 0,
				ONEPIPE_CMD_REJOIN);
	if (!hdr ||
	    nla_put_u32(msg, ONEPIPE_A_FAIL_HOST, host) ||
	    nla_put_u64_64bit(msg, ONEPIPE_A_FAIL_TS, first, ONEPIPE_A_PAD)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int op_nl_relay(struct sk_buff *skb, struct genl_info *info)
{
	const struct nlattr *pkt = info->attrs[ONEPIPE_A_PACKET];

	if (GENL_REQ_ATTR_CHECK(info, ONEPIPE_A_PACKET))
		return -EINVAL;
	return op_relay_in(op_net(genl_info_net(info)), nla_data(pkt),
			   nla_len(pkt), info->extack);
}

/* cb->args[0]: host id to resume at.  Peers are never freed meanwhile. */
static int op_nl_fail_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct op_net *on = op_net(sock_net(skb->sk));
	struct op_peer *p;
	unsigned long host;

	xa_for_each_start(&on->peers, host, p, cb->args[0]) {
		bool failed, done;
		u32 epoch;
		u64 ts;
		void *hdr;

		spin_lock_bh(&on->rx_lock);
		failed = p->failed;
		done = p->fail_done;
		epoch = p->fail_epoch;
		ts = p->fail_ts;
		spin_unlock_bh(&on->rx_lock);
		if (failed) {
			hdr = op_nl_dump_hdr(skb, cb, ONEPIPE_CMD_FAIL_GET);
			if (!hdr)
				break;
			if (nla_put_u32(skb, ONEPIPE_A_EPOCH, epoch) ||
			    nla_put_u32(skb, ONEPIPE_A_FAIL_HOST, p->host) ||
			    nla_put_u64_64bit(skb, ONEPIPE_A_FAIL_TS, ts,
					      ONEPIPE_A_PAD) ||
			    nla_put_u32(skb, ONEPIPE_A_FAIL_PENDING, !done)) {
				genlmsg_cancel(skb, hdr);
				break;
			}
			genlmsg_end(skb, hdr);
		}
		cb->args[0] = host + 1;
	}
	return skb->len;
}

/* Events ------------------------------------------------------------------- */

/*
 * Start an event of @on for the controller's agent, with room for @size
 * bytes of attributes besides the host id; NULL if there is no memory
 * (the event is lost: the agent re-reads state when it resyncs, a relay
 * is resent).
 */
static struct sk_buff *op_nl_ev_start(struct op_net *on, u8 cmd,
				      size_t size, gfp_t gfp, void **hdr)
{
	struct sk_buff *msg = genlmsg_new(nla_total_size(sizeof(u32)) + size,
					  gfp);

	if (!msg)
		return NULL;
	*hdr = genlmsg_put(msg, 0, 0, &op_genl_family, 0, cmd);
	if (!*hdr ||
	    nla_put_u32(msg, ONEPIPE_A_HOST_ID, READ_ONCE(on->cfg.host_id))) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* Multicast it; @counter counts it if it went out. */
static void op_nl_ev_send(struct op_net *on, struct sk_buff *msg, void *hdr,
			  int counter)
{
	genlmsg_end(msg, hdr);
	rcu_read_lock();
	/* -ESRCH: nobody listens; only events that went out count. */
	if (!READ_ONCE(op_nl_live))
		nlmsg_free(msg);
	else if (!genlmsg_multicast_netns(&op_genl_family, on->net, msg, 0,
					  OP_NL_MCGRP_CTL, GFP_ATOMIC))
		op_count(on, counter);
	rcu_read_unlock();
}

/**
 * op_nl_ev_link() - the uplink's commit register fell silent, or came back
 * @on: this host
 * @up: heard again
 * @has_commit: @commit is valid
 * @commit: the last commit barrier heard on the link
 *
 * Context: any but hardirq, no 1Pipe lock held.
 */
void op_nl_ev_link(struct op_net *on, bool up, bool has_commit, u64 commit)
{
	struct sk_buff *msg;
	void *hdr;

	msg = op_nl_ev_start(on, ONEPIPE_CMD_EV_LINK,
			     nla_total_size(sizeof(u32)) +
			     nla_total_size_64bit(sizeof(u64)), GFP_ATOMIC, &hdr);
	if (!msg)
		return;
	if (nla_put_u32(msg, ONEPIPE_A_LINK_UP, up) ||
	    (has_commit && nla_put_u64_64bit(msg, ONEPIPE_A_LINK_COMMIT,
					     commit, ONEPIPE_A_PAD))) {
		nlmsg_free(msg);
		return;
	}
	op_nl_ev_send(on, msg, hdr, ONEPIPE_C_CTL_EVENTS);
}

/**
 * op_nl_ev_unreach() - reliable messages to @host are out of retries
 * @on: this host
 * @host: the silent receiver
 *
 * Context: any but hardirq, no 1Pipe lock held.
 */
void op_nl_ev_unreach(struct op_net *on, u32 host)
{
	struct sk_buff *msg;
	void *hdr;

	msg = op_nl_ev_start(on, ONEPIPE_CMD_EV_UNREACH,
			     nla_total_size(sizeof(u32)), GFP_ATOMIC, &hdr);
	if (!msg)
		return;
	if (nla_put_u32(msg, ONEPIPE_A_PEER_HOST, host)) {
		nlmsg_free(msg);
		return;
	}
	op_nl_ev_send(on, msg, hdr, ONEPIPE_C_CTL_EVENTS);
}

/**
 * op_nl_ev_fail_done() - the failure of @host is complete on this host
 * @on: this host
 * @epoch: the decision that failed it
 * @host: the failed host
 *
 * Context: any but hardirq, no 1Pipe spinlock held.
 */
void op_nl_ev_fail_done(struct op_net *on, u32 epoch, u32 host)
{
	struct sk_buff *msg;
	void *hdr;

	msg = op_nl_ev_start(on, ONEPIPE_CMD_EV_FAIL_DONE,
			     2 * nla_total_size(sizeof(u32)), GFP_ATOMIC, &hdr);
	if (!msg)
		return;
	if (nla_put_u32(msg, ONEPIPE_A_EPOCH, epoch) ||
	    nla_put_u32(msg, ONEPIPE_A_FAIL_HOST, host)) {
		nlmsg_free(msg);
		return;
	}
	op_nl_ev_send(on, msg, hdr, ONEPIPE_C_CTL_EVENTS);
}

/**
 * op_nl_ev_relay() - a packet for the controller to relay
 * @on: this host
 * @pkt: the packet from its 1Pipe header on
 *
 * Context: process (relay.c's work item).
 */
void op_nl_ev_relay(struct op_net *on, const struct sk_buff *pkt)
{
	struct sk_buff *msg;
	void *hdr;

	msg = op_nl_ev_start(on, ONEPIPE_CMD_EV_RELAY,
			     nla_total_size(sizeof(u32)) +
			     nla_total_size(pkt->len), GFP_KERNEL, &hdr);
	if (!msg)
		return;
	if (nla_put_u32(msg, ONEPIPE_A_PEER_HOST,
			op_hdr_get_dst_host(pkt->data)) ||
	    nla_put(msg, ONEPIPE_A_PACKET, pkt->len, pkt->data)) {
		nlmsg_free(msg);
		return;
	}
	op_nl_ev_send(on, msg, hdr, ONEPIPE_C_RELAY_OUT);
}

/* cb->args[0]: index of the next port to report. */
static int op_nl_dev_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct op_verbs_info *vi;
	void *hdr;

	vi = kmalloc(sizeof(*vi), GFP_KERNEL);
	if (!vi)
		return -ENOMEM;
	while (!op_verbs_port_info(sock_net(skb->sk), cb->args[0], vi)) {
		hdr = op_nl_dump_hdr(skb, cb, ONEPIPE_CMD_DEV_GET);
		if (!hdr)
			break;
		if (op_nl_put_verbs(skb, vi)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0]++;
	}
	kfree(vi);
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
	{
		.cmd	= ONEPIPE_CMD_DEV_GET,
		.dumpit	= op_nl_dev_dump,
	},
};

/* Commands with a policy of their own. */
static const struct genl_ops op_genl_full_ops[] = {
	{
		.cmd	= ONEPIPE_CMD_FAIL,
		.doit	= op_nl_fail,
		.policy	= op_nl_fail_policy,
		.maxattr = ONEPIPE_A_MAX,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd	= ONEPIPE_CMD_FAIL_GET,
		.dumpit	= op_nl_fail_dump,
		.policy	= op_nl_fail_policy,
		.maxattr = ONEPIPE_A_MAX,
	},
	{
		.cmd	= ONEPIPE_CMD_REJOIN,
		.doit	= op_nl_rejoin,
		.policy	= op_nl_rejoin_policy,
		.maxattr = ONEPIPE_A_MAX,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd	= ONEPIPE_CMD_RELAY,
		.doit	= op_nl_relay,
		.policy	= op_nl_relay_policy,
		.maxattr = ONEPIPE_A_MAX,
		.flags	= GENL_UNS_ADMIN_PERM,
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
	.ops		= op_genl_full_ops,
	.n_ops		= ARRAY_SIZE(op_genl_full_ops),
	.mcgrps		= op_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(op_nl_mcgrps),
	.resv_start_op	= ONEPIPE_CMD_SOCK_GET + 1,
};

int __init op_netlink_init(void)
{
	int err = genl_register_family(&op_genl_family);

	if (!err)
		WRITE_ONCE(op_nl_live, true);
	return err;
}

void op_netlink_exit(void)
{
	WRITE_ONCE(op_nl_live, false);
	/* Senders run in softirq or under rcu_read_lock(). */
	synchronize_rcu();
	genl_unregister_family(&op_genl_family);
}

MODULE_ALIAS_GENL_FAMILY(ONEPIPE_GENL_NAME);
