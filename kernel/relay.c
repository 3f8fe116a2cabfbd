// SPDX-License-Identifier: GPL-2.0
/*
 * Controller forwarding (the 1Pipe paper's §5.2): when the network loses
 * every copy of a reliable message to a receiver that is otherwise alive
 * (a path that drops one flow, a broken direction), the failure
 * controller, which reaches every host over its own channel, carries the
 * packets instead, so that the sender's commit barrier is not held until
 * the path heals or somebody is declared failed.
 *
 * Out: while net.onepipe.controlled is set, a sender whose peer ran out
 * of retries (rdm_tx.c, op_rdm_tx.relay) hands a copy of every reliable
 * packet for it to op_relay_out() besides sending it; the receiver of a
 * relayed packet hands back what answers it (rdm_rx.c, relay_in).  The
 * copies wait on op_net.relay_q, and a work item multicasts them to the
 * controller's agent as ONEPIPE_CMD_EV_RELAY events: the packet paths run
 * under tx_lock or rx_lock in softirq, where building netlink messages of
 * up to ONEPIPE_RELAY_MAX bytes has no place.
 *
 * In: the agent of the destination gives the packet to op_relay_in()
 * (ONEPIPE_CMD_RELAY), which receives it as if from the uplink, except
 * for its barriers (op_rcv_relayed()).
 *
 * Relaying is a slow path: a copy per packet, a few context switches and
 * the controller's round trip; each ONEPIPE_CMD_RELAY also holds the
 * genetlink mutex and cfg_mutex while it is received.  Losing a copy
 * costs nothing but a resend, so the queue is bounded, never waited for,
 * and what it drops is counted (a packet above ONEPIPE_RELAY_MAX, from a
 * transport MTU beyond a jumbo frame, is never relayed).
 */
#include "onepipe.h"

/* Most copies waiting for the work item: a few windows' worth ... */
#define OP_RELAY_QLEN	1024
/* ... and room beyond that for header-only ones. */
#define OP_RELAY_CTL	256

static void op_relay_work(struct work_struct *work)
{
	struct op_net *on = container_of(work, struct op_net, relay_work);
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&on->relay_q))) {
		op_nl_ev_relay(on, skb);
		consume_skb(skb);
		cond_resched();
	}
}

void op_relay_init(struct op_net *on)
{
	skb_queue_head_init(&on->relay_q);
	INIT_WORK(&on->relay_work, op_relay_work);
}

/* Context: process, the host's netns going away (nothing queues more). */
void op_relay_exit(struct op_net *on)
{
	cancel_work_sync(&on->relay_work);
	skb_queue_purge(&on->relay_q);
}

/**
 * op_relay_forget() - drop the copies waiting for @host, or all of them
 * @on: this host
 * @host: their destination; ONEPIPE_HOST_LOCAL (0) for every one
 *
 * When @host is declared failed (or this host starts a new incarnation,
 * or goes down), what was said to it before must not reach it later: a
 * late ACK of an old sequence number would ACK a message of its next
 * incarnation that was never received.  Copies still waiting go, and
 * the one the work item may be sending is out before this returns;
 * nothing queues new ones for it by then (the callers saw to that).
 * The controller, which drops relays to and from failed hosts, sees the
 * rest in order.
 *
 * Context: process.
 */
void op_relay_forget(struct op_net *on, u32 host)
{
	struct sk_buff *skb, *tmp;
	struct sk_buff_head drop;
	unsigned long flags;

	__skb_queue_head_init(&drop);
	spin_lock_irqsave(&on->relay_q.lock, flags);
	skb_queue_walk_safe(&on->relay_q, skb, tmp) {
		if (host == ONEPIPE_HOST_LOCAL ||
		    op_hdr_get_dst_host(skb->data) == host) {
			__skb_unlink(skb, &on->relay_q);
			__skb_queue_tail(&drop, skb);
		}
	}
	spin_unlock_irqrestore(&on->relay_q.lock, flags);
	__skb_queue_purge(&drop);
	flush_work(&on->relay_work);
}

/**
 * op_relay_out() - hand a copy of a packet to the controller
 * @on: this host
 * @pkt: the packet from its 1Pipe header on, encoded
 * @len: its length
 *
 * Context: any but hardirq; the caller may hold tx_lock or rx_lock.
 */
void op_relay_out(struct op_net *on, const void *pkt, unsigned int len)
{
	struct sk_buff *skb;

	/* Not while down, nor once the controller no longer decides. */
	if (!READ_ONCE(on->up) || !READ_ONCE(on->controlled))
		return;
	/*
	 * A bounded queue, with room kept for header-only packets (ACKs,
	 * recalls): a burst of data must not crowd out what unblocks it.
	 */
	if (len > ONEPIPE_RELAY_MAX ||
	    skb_queue_len_lockless(&on->relay_q) >=
	    (len > OP_HDR_LEN ? OP_RELAY_QLEN : OP_RELAY_QLEN + OP_RELAY_CTL)) {
		op_count(on, ONEPIPE_C_RELAY_DROPS);
		return;
	}
	skb = alloc_skb(len, GFP_ATOMIC | __GFP_NOWARN);
	if (!skb) {
		op_count(on, ONEPIPE_C_RELAY_DROPS);
		return;
	}
	skb_put_data(skb, pkt, len);
	skb_queue_tail(&on->relay_q, skb);
	schedule_work(&on->relay_work);
}

/**
 * op_relay_hdr() - hand a header-only packet to the controller
 * @on: this host
 * @h: its header (a reliable ACK, NAK, RECALL or PROBE); the barrier
 *	fields go as they are, the receiver ignores them
 *
 * Context: as op_relay_out().
 */
void op_relay_hdr(struct op_net *on, const struct op_hdr *h)
{
	u8 buf[OP_HDR_LEN];

	op_hdr_encode(h, buf);
	op_relay_out(on, buf, sizeof(buf));
}

/* What a controller may give us: reliable packets from another host. */
static bool op_relay_refused(const struct op_net *on, const struct op_hdr *h,
			     struct netlink_ext_ack *extack)
{
	if (!(h->flags & OP_F_RELIABLE)) {
		NL_SET_ERR_MSG(extack, "only the reliable service is relayed");
		return true;
	}
	switch (h->type) {
	case OP_PKT_DATA:
	case OP_PKT_ACK:
	case OP_PKT_NAK:
	case OP_PKT_RECALL:
	case OP_PKT_PROBE:
		break;
	default:
		NL_SET_ERR_MSG(extack, "packet type is not relayed");
		return true;
	}
	if (h->dst_host != on->cfg.host_id) {
		NL_SET_ERR_MSG(extack, "packet is for another host");
		return true;
	}
	if (h->src_host == on->cfg.host_id) {
		NL_SET_ERR_MSG(extack, "packet is from this host");
		return true;
	}
	return false;
}

/**
 * op_relay_in() - receive a packet the controller relayed
 * @on: this host
 * @pkt: the packet from its 1Pipe header on
 * @len: its length
 * @extack: why it was refused
 *
 * Context: process (ONEPIPE_CMD_RELAY).  cfg_mutex keeps the transport,
 * and so the receive path, from going away meanwhile.
 *
 * Return: 0; -EINVAL for a packet that is malformed or not a reliable
 * one from another host for this one; -ENETDOWN if the host is down;
 * -ENOMEM.
 */
int op_relay_in(struct op_net *on, const void *pkt, unsigned int len,
		struct netlink_ext_ack *extack)
{
	struct sk_buff *skb;
	struct op_hdr h;
	int err = 0;

	if (op_hdr_decode(&h, pkt, len) != OP_PARSE_OK) {
		NL_SET_ERR_MSG(extack, "not a well-formed 1Pipe packet");
		return -EINVAL;
	}
	skb = alloc_skb(len, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	skb_put_data(skb, pkt, len);
	mutex_lock(&on->cfg_mutex);
	if (!on->up) {
		NL_SET_ERR_MSG(extack, "host is down");
		err = -ENETDOWN;
		goto out;
	}
	if (op_relay_refused(on, &h, extack)) {
		err = -EINVAL;
		goto out;
	}
	local_bh_disable();
	rcu_read_lock();
	op_count(on, ONEPIPE_C_RELAY_IN);
	op_rcv_relayed(on, skb);
	rcu_read_unlock();
	local_bh_enable();
	skb = NULL;
out:
	mutex_unlock(&on->cfg_mutex);
	kfree_skb(skb);
	return err;
}
