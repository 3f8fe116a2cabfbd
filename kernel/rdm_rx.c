// SPDX-License-Identifier: GPL-2.0
/*
 * The reliable service (SOCK_RDM), receiving half.
 *
 * A reliable message is ACKed as soon as it is whole and buffered, which
 * is the receiver's vote in the two-phase commit; it is delivered, in
 * the same total order as best-effort messages, once the commit barrier
 * from the uplink passes its timestamp: by then every receiver of its
 * scattering holds its part.  Duplicates are recognised by sequence
 * number (a ring of the ones seen above the first missing one) and ACKed
 * again, since the first ACK may have been lost.
 *
 * Refusing a message (no reliable socket on the port, or it arrived below
 * what was already committed) is a NAK: the sender recalls the rest of
 * the scattering.  A recall removes a message that has not been delivered
 * yet, which the commit barrier guarantees.
 *
 * Window: a sender may have rdm_window messages held here, counted from
 * arrival until they enter a socket's receive queue.  A socket whose
 * receive buffer is full keeps its committed messages on its own backlog,
 * in order, and they keep holding their senders' window: a process that
 * stops reading stops its senders, and nothing is dropped.
 *
 * All of it under rx_lock.
 */
#include <linux/slab.h>

#include "onepipe.h"

/**
 * struct op_recall - a recall of a message that is in the reorder queue
 * @node: on op_net.recalls
 * @ts: the message's timestamp: once delivery passes it, the entry goes
 * @src_host: the sender
 * @seq: the message
 *
 * Recalls are rare, so they are kept aside and looked up at delivery
 * instead of making the reorder queue searchable.
 */
struct op_recall {
	struct list_head node;
	u64 ts;
	u32 src_host;
	u32 seq;
};

static u32 op_rdm_rx_window(struct op_net *on)
{
	return clamp_t(u32, READ_ONCE(on->rdm_window), 1, OP_RDM_WINDOW_MAX);
}

/* The window edge this host grants @r's sender now. */
static u32 op_rdm_edge(struct op_net *on, const struct op_rdm_rx *r)
{
	u32 w = op_rdm_rx_window(on);

	return r->nxt + w - min(r->held, w);
}

/*
 * Queue a reliable control packet for @p about messages [@lo, @hi]: ACKs
 * carry the window, and the congestion mark is echoed on the next ACK of
 * data, DCTCP style.  An ACK of received messages also echoes, in
 * frag_idx, which copy of them arrived (the DATA packet's code: 0 for the
 * first transmission, n for the n-th resend): a resent message is always
 * ACKed alone, so that its sender can tell the resend's ACK from the
 * original's, as TCP tells them apart by the timestamp echo.
 *
 * Controller forwarding (relay.c): the packet also goes to the
 * controller when the one it answers came that way (@via), when @p's
 * last DATA did (flagged OP_F_VIA_CTL: the sender keeps relaying), or
 * when our own packets to @p need the controller: a broken path may be
 * broken both ways.  Never to a failed peer: the controller would drop
 * it, and a late copy must not reach its next incarnation.
 */
static void op_rdm_ctl_range(struct op_net *on, struct sk_buff_head *ctl,
			     struct op_peer *p, u8 type, u8 code, u32 lo,
			     u32 hi, u8 copy, bool via)
{
	struct op_hdr h = {
		.type = type,
		.flags = OP_F_RELIABLE,
		.code = code,
		.src_host = on->cfg.host_id,
		.dst_host = p->host,
		.seq = lo,
		.aux = type == OP_PKT_ACK ? hi : 0,
		.frag_idx = copy,
	};

	if (type == OP_PKT_ACK) {
		p->rrx.adv = op_rdm_edge(on, &p->rrx);
		if ((s32)(p->rrx.adv - p->rrx.granted) > 0)
			p->rrx.granted = p->rrx.adv;
		h.ts = p->rrx.adv;
		/* So that a sender never waits for more than we can grant. */
		h.frag_cnt = op_rdm_rx_window(on);
		if (p->rrx.ce && code == OP_ACK_RECEIVED) {
			h.flags |= OP_F_ECE;
			p->rrx.ce = false;
		}
	}
	if (p->rrx.relay_in)
		h.flags |= OP_F_VIA_CTL;
	if (unlikely(via || p->rrx.relay_in || READ_ONCE(p->rtx.relay)) &&
	    !p->failed)
		op_relay_hdr(on, &h);
	op_ctl_push(on, ctl, &h);
}

static void op_rdm_ctl(struct op_net *on, struct sk_buff_head *ctl,
		       struct op_peer *p, u8 type, u32 seq, u8 code)
{
	op_rdm_ctl_range(on, ctl, p, type, code, seq, seq, 0, false);
}

/* The same, answering @h: through the controller if @h came that way. */
static void op_rdm_answer(struct op_net *on, struct sk_buff_head *ctl,
			  struct op_peer *p, const struct op_hdr *h, u8 type,
			  u32 seq, u8 code)
{
	op_rdm_ctl_range(on, ctl, p, type, code, seq, seq, 0,
			 h->flags & OP_F_RELAYED);
}

/*
 * Send the ACK range being built for @p.  When it continues the previous
 * range, it repeats that one too: ranges are not cumulative, and without
 * the repeat a lost ACK would have its whole range resent.
 */
static void op_rdm_ack_flush(struct op_net *on, struct op_peer *p,
			     struct sk_buff_head *ctl)
{
	struct op_rdm_rx *r = &p->rrx;
	u32 lo = r->ack_lo;

	if (r->prev_valid && r->prev_hi + 1 == r->ack_lo)
		lo = r->prev_lo;
	op_rdm_ctl_range(on, ctl, p, OP_PKT_ACK, OP_ACK_RECEIVED, lo,
			 r->ack_hi, 0, false);
	r->prev_lo = r->ack_lo;
	r->prev_hi = r->ack_hi;
	r->prev_valid = true;
	list_del_init(&r->ack_node);
	r->ack_ns = ktime_get_ns();
}

/*
 * ACK copy @copy of message @seq from @p, alone and at once, after the
 * range being built: ACKs leave in the order their messages arrived, so
 * the sender may take a message sent before and still unACKed for lost.
 */
static void op_rdm_ack_copy(struct op_net *on, struct op_peer *p, u32 seq,
			    u8 copy, struct sk_buff_head *ctl)
{
	if (!list_empty(&p->rrx.ack_node))
		op_rdm_ack_flush(on, p, ctl);
	op_rdm_ctl_range(on, ctl, p, OP_PKT_ACK, OP_ACK_RECEIVED, seq, seq,
			 copy, false);
}

/*
 * Copy @copy of message @seq from @p is buffered: ACK it.  The ACK goes
 * out at once if @p heard none for an interval, so a lone message waits
 * for nothing; under load, ACKs of consecutive messages merge until the
 * tick (or 64 of them), so that a reliable message does not cost a second
 * packet.  A message that did not follow the previous one (one before it
 * is missing, or it fills a hole) is ACKed at once too: the sender learns
 * of a loss from the first and stops holding the commit barrier with the
 * second; and so is a resent copy, alone, with its number.
 */
static void op_rdm_ack_received(struct op_net *on, struct op_peer *p,
				u32 seq, u8 copy, struct sk_buff_head *ctl)
{
	struct op_rdm_rx *r = &p->rrx;
	bool in_order = seq == r->last + 1;

	r->last = seq;
	if (copy) {
		op_rdm_ack_copy(on, p, seq, copy, ctl);
		r->ack_ns = ktime_get_ns();
		return;
	}
	if (!list_empty(&r->ack_node)) {
		if (in_order && r->ack_hi - r->ack_lo < 63) {
			r->ack_hi = seq;
			return;
		}
		op_rdm_ack_flush(on, p, ctl);
	}
	r->ack_lo = seq;
	r->ack_hi = seq;
	list_add_tail(&r->ack_node, &on->rdm_ack_pending);
	if (!in_order || ktime_get_ns() - r->ack_ns >= op_interval_ns(on))
		op_rdm_ack_flush(on, p, ctl);
}

/**
 * op_rdm_rx_tick() - send the ACK ranges being built
 * @on: this host; rx_lock held
 * @ctl: the ACKs are appended here
 */
void op_rdm_rx_tick(struct op_net *on, struct sk_buff_head *ctl)
{
	struct op_rdm_rx *r, *tmp;

	list_for_each_entry_safe(r, tmp, &on->rdm_ack_pending, ack_node)
		op_rdm_ack_flush(on, container_of(r, struct op_peer, rrx),
				 ctl);
}

static bool op_rdm_seen(const struct op_rdm_rx *r, u32 seq)
{
	s32 d = (s32)(seq - r->nxt);

	return d < 0 || (d < OP_RDM_WINDOW_MAX &&
			 test_bit(seq % OP_RDM_SEEN_BITS, r->seen));
}

/* Message @seq is settled here (arrived, refused or recalled). */
static void op_rdm_mark_seen(struct op_rdm_rx *r, u32 seq)
{
	__set_bit(seq % OP_RDM_SEEN_BITS, r->seen);
	while (test_bit(r->nxt % OP_RDM_SEEN_BITS, r->seen)) {
		__clear_bit(r->nxt % OP_RDM_SEEN_BITS, r->seen);
		/* Refusals are kept from nxt - MAX up to nxt + MAX. */
		__clear_bit((r->nxt + OP_RDM_WINDOW_MAX) % OP_RDM_SEEN_BITS,
			    r->refused);
		r->nxt++;
	}
}

/* Within the span where refusals are remembered? */
static bool op_rdm_refusal_known(const struct op_rdm_rx *r, u32 seq)
{
	s32 d = (s32)(seq - r->nxt);

	return d >= -OP_RDM_WINDOW_MAX && d < OP_RDM_WINDOW_MAX;
}

/*
 * A message from @p no longer holds window.  Tell the sender when a good
 * part of its window opened since it last heard, or it may be waiting.
 */
static void op_rdm_release(struct op_net *on, struct op_peer *p,
			   struct sk_buff_head *ctl)
{
	struct op_rdm_rx *r = &p->rrx;
	u32 step = max(op_rdm_rx_window(on) / 4, 1U);

	if (r->held)
		r->held--;
	if (unlikely(p->failed))
		return;		/* it hears nothing from us until it rejoins */
	if ((s32)(op_rdm_edge(on, r) - r->adv) >= (s32)step)
		op_rdm_ctl(on, ctl, p, OP_PKT_ACK, r->nxt - 1, OP_ACK_WINDOW);
}

static void op_rdm_release_host(struct op_net *on, u32 host,
				struct sk_buff_head *ctl)
{
	struct op_peer *p = xa_load(&on->peers, host);

	if (p)
		op_rdm_release(on, p, ctl);
}

static void op_rdm_release_skb(struct op_net *on, struct sk_buff *skb,
			       struct sk_buff_head *ctl)
{
	op_rdm_release_host(on, OP_RX_CB(skb)->node.src_host, ctl);
}

/* Queue @skb on @sk although the receive buffer is full. */
static void op_rdm_force_rcv(struct sock *sk, struct sk_buff *skb)
{
	skb_set_owner_r(skb, sk);
	sock_skb_set_dropcount(sk, skb);
	skb_queue_tail(&sk->sk_receive_queue, skb);
	if (!sock_flag(sk, SOCK_DEAD))
		sk->sk_data_ready(sk);
}

/*
 * Move @os's backlog into its receive queue while the receive buffer
 * takes it.  An empty receive queue always takes the head, or a reader
 * that emptied it just after our try (its last skb filled the buffer)
 * would sleep while messages wait in the backlog.  A socket whose
 * application has not acknowledged a process failure yet keeps what was
 * stamped after it (op_sock_holds()).
 */
void op_rdm_feed(struct op_net *on, struct op_sock *os,
		 struct sk_buff_head *ctl)
{
	struct sock *sk = &os->sk;
	struct sk_buff *skb;
	int err;

	while ((skb = skb_peek(&os->backlog))) {
		/* Once queued, a reader may free it at any time. */
		u32 host = OP_RX_CB(skb)->node.src_host;

		if (op_sock_holds(os, OP_RX_CB(skb)->node.ts))
			return;
		__skb_unlink(skb, &os->backlog);

		err = sock_queue_rcv_skb(sk, skb);
		if (err == -ENOMEM || err == -ENOBUFS) {
			if (!skb_queue_empty_lockless(&sk->sk_receive_queue)) {
				__skb_queue_head(&os->backlog, skb);
				return;
			}
			op_rdm_force_rcv(sk, skb);
		} else if (err) {
			/* A socket filter said no: as if read and dropped. */
			kfree_skb(skb);
		}
		op_rdm_release_host(on, host, ctl);
	}
}

/* Hand a committed message to its socket, or to the socket's backlog. */
static void op_rdm_deliver_one(struct op_net *on, struct sk_buff *skb,
			       struct sk_buff_head *ctl)
{
	struct op_rx_cb *rcb = OP_RX_CB(skb);
	struct op_sock *os;
	struct sock *sk;

	sk = op_port_lookup_rcu(on, rcb->dst_port);
	if (!sk || !op_sk_reliable(sk)) {
		/* Closed since it was ACKed: a receiver process failure. */
		op_count(on, ONEPIPE_C_RX_NOPORT);
		op_rdm_release_skb(on, skb, ctl);
		kfree_skb(skb);
		return;
	}
	op_rx_observe(on, rcb->node.ts);
	op_count(on, ONEPIPE_C_RX_MSGS);
	op_count(on, ONEPIPE_C_RX_RDM_MSGS);
	op_count_add(on, ONEPIPE_C_COMMIT_LAG_NS,
		     max_t(s64, op_ts_diff(op_ts(op_now(on)), rcb->node.ts), 0));
	os = op_sk(sk);
	__skb_queue_tail(&os->backlog, skb);
	/* Pairs with the barrier in op_recvmsg(): one of us feeds it. */
	smp_mb();
	op_rdm_feed(on, os, ctl);
}

static void op_recall_free(struct op_net *on, struct op_recall *rc)
{
	list_del(&rc->node);
	on->nrecalls--;
	kfree(rc);
}

/* Is @n recalled?  Then the recall is used up. */
static bool op_rdm_recalled(struct op_net *on, const struct op_pq_node *n)
{
	struct op_recall *rc;

	list_for_each_entry(rc, &on->recalls, node) {
		if (rc->src_host == n->src_host && rc->seq == n->seq &&
		    rc->ts == n->ts) {
			op_recall_free(on, rc);
			return true;
		}
	}
	return false;
}

/**
 * op_rdm_deliver() - deliver the reliable messages below the commit barrier
 * @on: this host; rx_lock held
 * @ctl: window updates for senders are appended here
 */
void op_rdm_deliver(struct op_net *on, struct sk_buff_head *ctl)
{
	u64 c = on->cagg.out;
	struct op_recall *rc, *tmp;
	struct sk_buff *skb;

	lockdep_assert_held(&on->rx_lock);
	if (!on->cagg.valid)
		return;
	rcu_read_lock();
	while ((skb = op_rx_take(on, &on->rdm_pq, c))) {
		const struct op_pq_node *n = &OP_RX_CB(skb)->node;
		bool drop = unlikely(!list_empty(&on->recalls)) &&
			    op_rdm_recalled(on, n);

		/*
		 * Discard: a failed sender's messages from its failure
		 * timestamp on are delivered by no correct receiver.
		 */
		if (!drop && op_fail_discards(on, n->src_host, n->ts)) {
			op_count(on, ONEPIPE_C_FAIL_DISCARDS);
			drop = true;
		}
		if (drop) {
			op_rdm_release_skb(on, skb, ctl);
			kfree_skb(skb);
			continue;
		}
		op_rdm_deliver_one(on, skb, ctl);
	}
	rcu_read_unlock();
	on->cdelivered = c;
	/* A recall whose message never came is over once delivery passed. */
	list_for_each_entry_safe(rc, tmp, &on->recalls, node) {
		if (op_ts_before(rc->ts, c))
			op_recall_free(on, rc);
	}
}

/**
 * op_rdm_rx_msg() - a whole reliable message arrived
 * @on: this host; rx_lock held
 * @skb: the message, its op_rx_cb filled in
 * @h: header of its (last) packet: its code says which copy it is
 * @ctl: the ACK is appended here
 */
void op_rdm_rx_msg(struct op_net *on, struct sk_buff *skb,
		   const struct op_hdr *h, struct sk_buff_head *ctl)
{
	struct op_peer *p = xa_load(&on->peers, h->src_host);

	/*
	 * op_rdm_rx_data() created the peer.  No byte cap here: the window
	 * is the admission control (op_rdm_rx_data() enforced it), and
	 * refusing a message inside it could hold the commit barrier until
	 * the sender gives up.
	 */
	if (!p) {
		kfree_skb(skb);
		return;
	}
	op_rdm_mark_seen(&p->rrx, h->seq);
	p->rrx.held++;
	op_rdm_ack_received(on, p, h->seq, h->code, ctl);
	op_pq_push(&on->rdm_pq, &OP_RX_CB(skb)->node);
}

/*
 * Message @seq from @p is settled without being taken: refused, or
 * abandoned by its sender.  A copy that comes later must not be ACKed as
 * if it were held here: it is refused again with @code.
 */
static void op_rdm_settle_refused(struct op_net *on, struct op_peer *p,
				  u32 seq, u8 code)
{
	struct op_rdm_rx *r = &p->rrx;

	__set_bit(seq % OP_RDM_SEEN_BITS, r->refused);
	r->refused_seq[r->refused_next] = seq;
	r->refused_code[r->refused_next] = code;
	r->refused_next = (r->refused_next + 1) % OP_RDM_REFUSED;
	op_partial_drop(on, p, seq, OP_F_RELIABLE);
	op_rdm_mark_seen(r, seq);
}

/* Refuse message @h for good and tell its sender. */
static void op_rdm_refuse(struct op_net *on, struct op_peer *p,
			  const struct op_hdr *h, u8 code,
			  struct sk_buff_head *ctl)
{
	op_rdm_settle_refused(on, p, h->seq, code);
	op_rdm_ctl(on, ctl, p, OP_PKT_NAK, h->seq, code);
}

/* The NAK code @seq was refused with, or 0 if it was not refused. */
static int op_rdm_refused(const struct op_rdm_rx *r, u32 seq)
{
	unsigned int i;

	if (!op_rdm_refusal_known(r, seq) ||
	    !test_bit(seq % OP_RDM_SEEN_BITS, r->refused))
		return 0;
	for (i = 0; i < OP_RDM_REFUSED; i++)
		if (r->refused_code[i] && r->refused_seq[i] == seq)
			return r->refused_code[i];
	return OP_NAK_NOPORT;	/* the code itself is forgotten */
}

/*
 * Which way did @h, DATA, come from its sender: the network or the
 * controller?  ACKs go back the same way (op_rdm_ctl_range()).
 */
static void op_rdm_rx_path(struct op_peer *p, const struct op_hdr *h)
{
	p->rrx.relay_in = h->flags & OP_F_RELAYED;
}

/**
 * op_rdm_rx_data() - a reliable DATA packet for this host arrived
 * @on: this host; rx_lock held
 * @skb: the packet, data past the header; consumed
 * @h: its header
 * @ctl: ACKs and NAKs are appended here
 */
void op_rdm_rx_data(struct op_net *on, struct sk_buff *skb,
		    const struct op_hdr *h, struct sk_buff_head *ctl)
{
	struct op_peer *p = op_peer_get(on, h->src_host, GFP_ATOMIC);
	struct op_rdm_rx *r;
	struct sock *sk;
	int code;

	if (!p)
		goto drop;
	if (op_fail_ignores(on, p, h->ts)) {
		op_count(on, ONEPIPE_C_FAIL_DISCARDS);
		goto drop;
	}
	op_rdm_rx_path(p, h);
	r = &p->rrx;
	code = op_rdm_refused(r, h->seq);
	if (code) {
		op_rdm_ctl(on, ctl, p, OP_PKT_NAK, h->seq, code);
		goto drop;
	}
	if (op_rdm_seen(r, h->seq)) {
		op_count(on, ONEPIPE_C_RX_DUP);
		/*
		 * Our ACK was lost, or this is a copy: ACK again, unless it is
		 * too old to tell a refused message from a taken one; the
		 * sender then times out, which is safe.
		 */
		if (op_rdm_refusal_known(r, h->seq))
			op_rdm_ack_copy(on, p, h->seq, h->code, ctl);
		goto drop;
	}
	if ((s32)(h->seq - r->nxt) >= OP_RDM_WINDOW_MAX) {
		/* Beyond any window we granted. */
		op_count(on, ONEPIPE_C_RX_BAD);
		goto drop;
	}
	/*
	 * Beyond every edge we advertised: a sender that keeps to them
	 * never gets here, and one that does not (or that guessed our
	 * window before our first ACK) must not make us hold more than a
	 * window.  A window ACK tells it where our edge is; it sends the
	 * message again once there is room.
	 */
	if ((s32)(h->seq - r->granted) >= 0) {
		op_count(on, ONEPIPE_C_RX_OVERWINDOW);
		op_rdm_ctl(on, ctl, p, OP_PKT_ACK, r->nxt - 1, OP_ACK_WINDOW);
		goto drop;
	}
	if (on->cagg.valid && op_ts_before(h->ts, on->cdelivered)) {
		/* Only a sender that lost its own state can do this. */
		op_count(on, ONEPIPE_C_RX_LATE);
		op_rdm_refuse(on, p, h, OP_NAK_LATE, ctl);
		goto drop;
	}
	rcu_read_lock();
	sk = op_port_lookup_rcu(on, h->dst_port);
	code = sk && op_sk_reliable(sk) ? 0 : OP_NAK_NOPORT;
	rcu_read_unlock();
	if (code) {
		op_count(on, ONEPIPE_C_RX_NOPORT);
		op_rdm_refuse(on, p, h, code, ctl);
		goto drop;
	}
	if (h->frag_cnt == 1) {
		op_rx_msg(on, skb, h, ctl);
		return;
	}
	op_rx_frag(on, skb, h, ctl);
	return;
drop:
	kfree_skb(skb);
}

/**
 * op_rdm_rx_recall() - the sender recalls a message
 * @on: this host; rx_lock held
 * @h: the RECALL
 * @ctl: the ACK of the recall is appended here
 *
 * The message has not been delivered: the sender's commit barrier is
 * below it.  If it is still to come, it is marked seen so that it is
 * dropped (and ACKed, which the sender ignores) when it does.
 */
void op_rdm_rx_recall(struct op_net *on, const struct op_hdr *h,
		      struct sk_buff_head *ctl)
{
	struct op_peer *p = op_peer_get(on, h->src_host, GFP_ATOMIC);
	struct op_recall *rc;
	struct op_rdm_rx *r;

	if (!p || op_fail_ignores_ctl(on, p, h->ts))
		return;
	r = &p->rrx;
	if (!op_rdm_seen(r, h->seq)) {
		if ((s32)(h->seq - r->nxt) >= OP_RDM_WINDOW_MAX)
			return;
		if (op_partial_drop(on, p, h->seq, OP_F_RELIABLE))
			op_count(on, ONEPIPE_C_RX_RECALLS);
		op_rdm_mark_seen(r, h->seq);
	} else if (!op_rdm_refused(r, h->seq) &&
		   !(on->cagg.valid && op_ts_before(h->ts, on->cdelivered))) {
		/* Whole and queued (or a copy of this recall came before). */
		list_for_each_entry(rc, &on->recalls, node)
			if (rc->src_host == h->src_host && rc->seq == h->seq &&
			    rc->ts == h->ts)
				goto ack;
		/* Bounded: a forged recall must not cost memory forever. */
		if (on->nrecalls >= OP_MAX_RECALLS)
			return;		/* the sender asks again */
		rc = op_fault_alloc() ? NULL :
		     kmalloc(sizeof(*rc), GFP_ATOMIC | __GFP_NOWARN);
		if (!rc)
			return;
		rc->ts = h->ts;
		rc->src_host = h->src_host;
		rc->seq = h->seq;
		list_add_tail(&rc->node, &on->recalls);
		on->nrecalls++;
		op_count(on, ONEPIPE_C_RX_RECALLS);
	}
ack:
	op_rdm_answer(on, ctl, p, h, OP_PKT_ACK, h->seq, OP_ACK_RECALLED);
}

/**
 * op_rdm_rx_ce() - a reliable packet from @host carried a congestion mark
 * @on: this host; rx_lock held
 * @host: its sender
 *
 * The next ACK to it says so.
 */
void op_rdm_rx_ce(struct op_net *on, u32 host)
{
	struct op_peer *p = op_peer_get(on, host, GFP_ATOMIC);

	if (p)
		p->rrx.ce = true;
}

/**
 * op_rdm_rx_probe() - a sender out of window asks for it
 * @on: this host; rx_lock held
 * @h: the PROBE
 * @ctl: the window ACK is appended here
 */
void op_rdm_rx_probe(struct op_net *on, const struct op_hdr *h,
		     struct sk_buff_head *ctl)
{
	struct op_peer *p = op_peer_get(on, h->src_host, GFP_ATOMIC);
	struct op_rdm_rx *r;
	s32 d;

	if (!p || op_fail_ignores_ctl(on, p, h->ts))
		return;
	r = &p->rrx;
	/*
	 * The sender has settled every message below h->seq: those still
	 * missing here were abandoned (their receiver was declared
	 * unreachable, or the sender's host went down).  Close the hole, or
	 * the first missing one would hold this pair's window shut forever.
	 */
	d = (s32)(h->seq - r->nxt);
	if (d > 0 && d <= OP_RDM_WINDOW_MAX) {
		u32 seq, end = h->seq;

		for (seq = r->nxt; seq != end; seq++)
			if (!op_rdm_seen(r, seq))
				op_rdm_settle_refused(on, p, seq,
						      OP_NAK_NOPORT);
	}
	op_rdm_answer(on, ctl, p, h, OP_PKT_ACK, r->nxt - 1, OP_ACK_WINDOW);
}

/**
 * op_rdm_refill() - move a reliable socket's backlog into its receive queue
 * @on: this host
 * @os: the socket, after recvmsg() made room
 *
 * Context: process.
 */
void op_rdm_refill(struct op_net *on, struct op_sock *os)
{
	struct sk_buff_head ctl;

	__skb_queue_head_init(&ctl);
	spin_lock_bh(&on->rx_lock);
	op_rdm_feed(on, os, &ctl);
	spin_unlock_bh(&on->rx_lock);
	op_tx_ctl(on, &ctl);
}

/**
 * op_rdm_sock_purge() - drop a reliable socket's backlog
 * @on: this host
 * @os: the socket, unbound and closing
 *
 * Its senders get their window back.  Context: process or softirq.
 */
void op_rdm_sock_purge(struct op_net *on, struct op_sock *os)
{
	struct sk_buff_head ctl;
	struct sk_buff *skb;

	__skb_queue_head_init(&ctl);
	spin_lock_bh(&on->rx_lock);
	while ((skb = __skb_dequeue(&os->backlog))) {
		op_rdm_release_skb(on, skb, &ctl);
		kfree_skb(skb);
	}
	op_fail_sock_release(on, os);
	spin_unlock_bh(&on->rx_lock);
	op_tx_ctl(on, &ctl);
}

/**
 * op_rdm_rx_reset() - start the reliable service from @p afresh
 * @on: this host; rx_lock held
 * @p: the peer: a new incarnation of a failed host, whose sequence
 *	numbers start over
 *
 * Messages of the old incarnation still queued stay: those below its
 * failure timestamp are delivered, the others discarded.
 */
void op_rdm_rx_reset(struct op_net *on, struct op_peer *p)
{
	struct op_rdm_rx *r = &p->rrx;

	lockdep_assert_held(&on->rx_lock);
	list_del_init(&r->ack_node);
	r->nxt = 0;
	/*
	 * @held stays: the old incarnation's messages still queued here
	 * release it when they are delivered or discarded.
	 */
	r->adv = op_rdm_rx_window(on);
	r->granted = r->adv;
	bitmap_zero(r->seen, OP_RDM_SEEN_BITS);
	bitmap_zero(r->refused, OP_RDM_SEEN_BITS);
	memset(r->refused_code, 0, sizeof(r->refused_code));
	r->ce = false;
	r->last = 0;
	r->prev_valid = false;
	r->relay_in = false;
}

/**
 * op_rdm_rx_forget() - this host starts a new incarnation: drop what it
 *	holds and has not delivered
 * @on: this host; rx_lock held
 *
 * The others decided about those messages without it.  Unlike
 * op_rdm_rx_flush() the commit uplink and what was delivered stay: the
 * host is up and goes on receiving.
 */
void op_rdm_rx_forget(struct op_net *on)
{
	struct op_recall *rc, *tmp;
	struct op_pq_node *n;
	struct op_peer *p;

	lockdep_assert_held(&on->rx_lock);
	while ((n = op_pq_pop(&on->rdm_pq))) {
		p = xa_load(&on->peers, n->src_host);
		if (p && p->rrx.held)
			p->rrx.held--;
		kfree_skb(op_rx_node_skb(n));
	}
	list_for_each_entry_safe(rc, tmp, &on->recalls, node)
		op_recall_free(on, rc);
}

/**
 * op_rdm_rx_flush() - forget buffered reliable messages; the host is down
 * @on: this host; rx_lock held
 *
 * They were ACKed, so their senders count on them: this is the receiver
 * failing, which only the controller will be able to make consistent.
 */
void op_rdm_rx_flush(struct op_net *on)
{
	struct op_recall *rc, *tmp;
	struct op_pq_node *n;
	struct op_peer *p;
	unsigned long host;

	lockdep_assert_held(&on->rx_lock);
	while ((n = op_pq_pop(&on->rdm_pq))) {
		p = xa_load(&on->peers, n->src_host);
		if (p && p->rrx.held)
			p->rrx.held--;
		kfree_skb(op_rx_node_skb(n));
	}
	list_for_each_entry_safe(rc, tmp, &on->recalls, node)
		op_recall_free(on, rc);
	xa_for_each(&on->peers, host, p) {
		list_del_init(&p->rrx.ack_node);
		p->rrx.relay_in = false;
	}
	memset(&on->cuplink, 0, sizeof(on->cuplink));
	on->cup_reported = false;
	memset(&on->cagg, 0, sizeof(on->cagg));
	on->cagg.members = 1;
	on->cdelivered = 0;
}
