// SPDX-License-Identifier: GPL-2.0
/*
 * The receiving half of a 1Pipe host: barriers from the uplink, fragment
 * reassembly, the reorder queue, delivery in total order, and the ACKs
 * and NAKs that tell senders how their messages fared.
 *
 * A message is delivered once the barrier of the input link passes its
 * timestamp: nothing below the barrier can arrive any more on a FIFO
 * path.  A message that does arrive below it (a non-FIFO path, or a
 * sender whose link was not counted) is dropped and NAKed as late, so
 * the order is never broken.
 */
#include <linux/slab.h>
#include <net/netfilter/nf_conntrack.h>

#include "onepipe.h"

/**
 * struct op_partial - a message being reassembled from its fragments
 * @node: on the sender's op_peer.partial list
 * @skb: the message, payload written in place as fragments arrive
 * @ts: the message's timestamp
 * @born: ktime_get_ns() when the first fragment came
 * @seq: sequence number
 * @len: message length
 * @fsz: size of every fragment but the last, once known
 * @last_len: size of the last fragment, once it came
 * @src_port: sending port
 * @dst_port: destination port
 * @flags: OP_F_* of the message
 * @dl_code: its best-effort deadline (core/wire.h), 0 if reliable
 * @frag_cnt: fragments in the message
 * @have: fragments received
 * @map: which fragments were received
 */
struct op_partial {
	struct list_head node;
	struct sk_buff *skb;
	u64 ts;
	u64 born;
	u32 seq;
	u32 len;
	u32 fsz;
	u32 last_len;
	u16 src_port;
	u16 dst_port;
	u8 flags;
	u8 dl_code;
	u16 frag_cnt;
	u16 have;
	DECLARE_BITMAP(map, OP_MAX_FRAGS);
};

/*
 * NAK best-effort message @seq of @host (enum op_nak_code @code).  @at is
 * when it was refused on its way to delivery, or closed by a query while
 * it waited here (this host's 1Pipe clock), or 0 for a message that never
 * came: the sender times the delay towards this host from it
 * (core/deadline.h, core/wire.h).
 */
static void op_nak(struct op_net *on, struct sk_buff_head *ctl, u32 host,
		   u32 seq, u8 code, u64 at)
{
	op_ctl_queue(on, ctl, OP_PKT_NAK, host, seq, 0, code, at);
}

/* Send the ACK range being built for peer @p. */
static void op_ack_flush(struct op_net *on, struct op_peer *p,
			 struct sk_buff_head *ctl)
{
	op_ctl_queue(on, ctl, OP_PKT_ACK, p->host, p->ack_lo, p->ack_hi, 0, 0);
	list_del_init(&p->ack_node);
}

/*
 * A message was delivered: extend the peer's ACK range.  Delivery from
 * one sender host follows its sequence numbers, so ranges are long; they
 * go out when broken, when long, or at the next tick.
 */
static void op_ack(struct op_net *on, u32 host, u32 seq,
		   struct sk_buff_head *ctl)
{
	struct op_peer *p = op_peer_get(on, host, GFP_ATOMIC);

	if (!p)
		return;
	if (!list_empty(&p->ack_node)) {
		if (seq == p->ack_hi + 1 && p->ack_hi - p->ack_lo < 255) {
			p->ack_hi = seq;
			return;
		}
		op_ack_flush(on, p, ctl);
	}
	p->ack_lo = seq;
	p->ack_hi = seq;
	list_add_tail(&p->ack_node, &on->ack_pending);
}

/**
 * op_rx_observe() - this host is delivering a message stamped @ts
 * @on: this host; rx_lock held
 * @ts: the stamp
 *
 * Published before the message is: whatever the host sends after a
 * process saw the message is stamped above it (causality).
 */
void op_rx_observe(struct op_net *on, u64 ts)
{
	WRITE_ONCE(on->rx_max_ts, on->rx_seen ?
		   op_ts_max(on->rx_max_ts, ts) : ts);
	WRITE_ONCE(on->rx_seen, true);
}

/**
 * op_rx_take() - the next message of a reorder queue below a barrier
 * @on: this host; rx_lock held
 * @q: the queue
 * @b: the barrier
 *
 * Return: the message, out of the queue and its bytes, or NULL.
 */
struct sk_buff *op_rx_take(struct op_net *on, struct op_pq *q, u64 b)
{
	struct op_pq_node *n = op_pq_peek(q);
	struct sk_buff *skb;

	if (!n || !op_ts_before(n->ts, b))
		return NULL;
	skb = op_rx_node_skb(op_pq_pop(q));
	/* Reliable messages are bounded by their window instead. */
	if (q == &on->pq)
		on->pq_bytes -= skb->truesize;
	return skb;
}

/* Has the best-effort deadline @dl_code of a message stamped @ts passed? */
static bool op_be_expired(struct op_net *on, u64 ts, u8 dl_code)
{
	u64 d = op_deadline_ns(dl_code);

	return d && op_ts_after(op_ts(op_now(on)), op_ts_add(ts, d));
}

/**
 * op_be_drop() - best-effort message @seq of @p will not be delivered here
 * @on: this host; rx_lock held
 * @p: its sender, or NULL if it could not be had (no memory)
 * @seq: the message
 * @code: enum op_nak_code, why
 * @ctl: the NAK is appended here
 *
 * The NAK goes only once the message is closed in its sender's record,
 * so that no other copy of it is delivered after the sender heard (the
 * notification is true).  A message the record says was delivered (this
 * was another copy of it), or that it forgot, gets none: the first would
 * be false and the second could not be made true; its sender asks, and
 * hears the truth or reports the fate unknown.
 */
static void op_be_drop(struct op_net *on, struct op_peer *p, u32 seq, u8 code,
		       struct sk_buff_head *ctl)
{
	enum op_seq_state st;

	if (!p)
		return;
	st = op_seqrec_get(&p->berec, seq);
	if (st == OP_SEQ_OPEN && op_seqrec_set(&p->berec, seq, OP_SEQ_CLOSED))
		st = OP_SEQ_CLOSED;
	/* Refused on its way to delivery: say when (0 is "no time"). */
	if (st == OP_SEQ_CLOSED)
		op_nak(on, ctl, p->host, seq, code, op_ts(op_now(on)) ?: 1);
}

/**
 * op_be_refuse() - must this best-effort message not be delivered?
 * @on: this host; rx_lock held
 * @p: its sender
 * @st: what its sender's record says of it (core/seqrec.h)
 * @seq: its sequence number
 * @ts: its timestamp
 * @dl_code: its deadline
 * @ctl: a NAK for it is appended here
 *
 * Refused: a copy of it was delivered (a duplicate), its sender's query
 * closed it (and got its answer), the record forgot it (no answer could
 * be given for it), or its deadline passed: then it is closed and NAKed
 * (EXPIRED).
 *
 * Return: true if refused, counted as rx_dup or rx_expired; the caller
 * drops it.
 */
static bool op_be_refuse(struct op_net *on, struct op_peer *p,
			 enum op_seq_state st, u32 seq, u64 ts, u8 dl_code,
			 struct sk_buff_head *ctl)
{
	switch (st) {
	case OP_SEQ_OPEN:
		if (!op_be_expired(on, ts, dl_code))
			return false;
		op_be_drop(on, p, seq, OP_NAK_EXPIRED, ctl);
		break;
	case OP_SEQ_DELIVERED:
		op_count(on, ONEPIPE_C_RX_DUP);
		return true;
	case OP_SEQ_CLOSED:
	case OP_SEQ_FORGOTTEN:
		break;
	}
	op_count(on, ONEPIPE_C_RX_EXPIRED);
	return true;
}

/*
 * Hand one best-effort message to the socket bound to its port, and
 * record it delivered: its sender may ask (op_rx_query()).
 */
static void op_deliver_one(struct op_net *on, struct sk_buff *skb,
			   struct sk_buff_head *ctl)
{
	struct op_rx_cb *rcb = OP_RX_CB(skb);
	u32 host = rcb->node.src_host, seq = rcb->node.seq;
	struct op_peer *p = op_peer_get(on, host, GFP_ATOMIC);
	struct sock *sk;

	/* Without its record the message cannot be answered for. */
	if (!p) {
		op_count(on, ONEPIPE_C_RX_NOBUFS);
		kfree_skb(skb);
		return;
	}
	if (op_be_refuse(on, p, op_seqrec_get(&p->berec, seq), seq,
			 rcb->node.ts, rcb->dl_code, ctl)) {
		kfree_skb(skb);
		return;
	}
	sk = op_port_lookup_rcu(on, rcb->dst_port);
	if (!sk || op_sk_reliable(sk)) {
		op_count(on, ONEPIPE_C_RX_NOPORT);
		op_be_drop(on, p, seq, OP_NAK_NOPORT, ctl);
		kfree_skb(skb);
		return;
	}
	op_rx_observe(on, rcb->node.ts);
	if (sock_queue_rcv_skb(sk, skb) < 0) {
		op_count(on, ONEPIPE_C_RX_NOBUFS);
		op_be_drop(on, p, seq, OP_NAK_NOBUFS, ctl);
		kfree_skb(skb);
		return;
	}
	op_seqrec_set(&p->berec, seq, OP_SEQ_DELIVERED);
	op_count(on, ONEPIPE_C_RX_MSGS);
	op_ack(on, host, seq, ctl);
}

/**
 * op_rx_query() - a sender asks what became of its messages [seq, aux]
 * @on: this host; rx_lock held
 * @h: the QUERY; its ts is the earliest stamp of those messages
 * @ctl: the answers are appended here
 *
 * Delivered ones are ACKed.  The others are closed, never to be
 * delivered, and NAKed (EXPIRED): the answer is final.  No answer for
 * those older than the record, nor for undelivered ones stamped before
 * this host started (the one before it may have delivered them): their
 * sender reports them as unknown.
 *
 * The NAK of one this answer closes while it waits here (for the
 * barrier, or for its fragments) carries this instant, as a refusal
 * does: its delay was at least that, which its sender's deadlines must
 * learn (core/deadline.h).  The others carry none: a lost message says
 * nothing of the delay, and a second answer about a closed one (the
 * first was lost) would say more than it knows.
 */
static void op_rx_query(struct op_net *on, const struct op_hdr *h,
			struct sk_buff_head *ctl)
{
	struct op_peer *p = op_peer_get(on, h->src_host, GFP_ATOMIC);
	bool before_us = op_ts_before(h->ts, on->born_ts);
	u64 now = op_ts(op_now(on)) ?: 1;
	u32 seq = h->seq;

	if (!p)
		return;		/* it asks again */
	op_seqrec_heard(&p->berec, h->ts);
	do {
		switch (op_seqrec_get(&p->berec, seq)) {
		case OP_SEQ_DELIVERED:
			op_ack(on, p->host, seq, ctl);
			break;
		case OP_SEQ_OPEN:
			if (before_us ||
			    !op_seqrec_set(&p->berec, seq, OP_SEQ_CLOSED))
				break;
			op_nak(on, ctl, p->host, seq, OP_NAK_EXPIRED,
			       op_seqrec_arrived(&p->berec, seq) ? now : 0);
			break;
		case OP_SEQ_CLOSED:
			op_nak(on, ctl, p->host, seq, OP_NAK_EXPIRED, 0);
			break;
		case OP_SEQ_FORGOTTEN:
			break;
		}
	} while (seq++ != h->aux);
}

/* Deliver everything below the input barrier, in order. */
static void op_deliver(struct op_net *on, struct sk_buff_head *ctl)
{
	u64 b = on->agg.out;
	struct sk_buff *skb;

	lockdep_assert_held(&on->rx_lock);
	if (!on->agg.valid)
		return;
	rcu_read_lock();
	while ((skb = op_rx_take(on, &on->pq, b)))
		op_deliver_one(on, skb, ctl);
	rcu_read_unlock();
	on->delivered = b;
}

/* A whole message arrived: deliver it now or queue it for its turn. */
void op_rx_msg(struct op_net *on, struct sk_buff *skb,
	       const struct op_hdr *h, struct sk_buff_head *ctl)
{
	struct op_rx_cb *rcb = OP_RX_CB(skb);

	memset(rcb, 0, sizeof(*rcb));
	rcb->node.ts = h->ts;
	rcb->node.src_host = h->src_host;
	rcb->node.src_port = h->src_port;
	rcb->node.seq = h->seq;
	rcb->dst_port = h->dst_port;
	rcb->dl_code = h->flags & OP_F_RELIABLE ? 0 : h->code;

	if (h->flags & OP_F_RELIABLE) {
		op_rdm_rx_msg(on, skb, h, ctl);
		return;
	}
	if (h->flags & OP_F_UNORDERED) {
		rcu_read_lock();
		op_deliver_one(on, skb, ctl);
		rcu_read_unlock();
		return;
	}
	if (on->pq_bytes + skb->truesize > OP_MAX_PQ_BYTES) {
		op_count(on, ONEPIPE_C_RX_NOBUFS);
		op_be_drop(on, xa_load(&on->peers, h->src_host), h->seq,
			   OP_NAK_NOBUFS, ctl);
		kfree_skb(skb);
		return;
	}
	on->pq_bytes += skb->truesize;
	op_pq_push(&on->pq, &rcb->node);
}

/* Each service has its own sequence numbers. */
static struct op_partial *op_partial_find(struct op_peer *p, u32 seq,
					  u8 flags)
{
	struct op_partial *m;

	list_for_each_entry(m, &p->partial, node)
		if (m->seq == seq &&
		    !((m->flags ^ flags) & OP_F_RELIABLE))
			return m;
	return NULL;
}

/*
 * A partial message leaves: uncharge it from the best-effort budget (a
 * reliable one is bounded by its window instead).
 */
static void op_partial_uncharge(struct op_net *on, struct op_partial *m,
				struct sk_buff *skb)
{
	if (!(m->flags & OP_F_RELIABLE))
		on->pq_bytes -= skb->truesize;
}

/*
 * Give up partial message @m of @p.  A best-effort one no longer waits
 * here: a query about it must not say it did (op_rx_query()).
 */
static void op_partial_free(struct op_net *on, struct op_peer *p,
			    struct op_partial *m)
{
	if (!(m->flags & OP_F_RELIABLE))
		op_seqrec_clear_arrived(&p->berec, m->seq);
	list_del(&m->node);
	op_partial_uncharge(on, m, m->skb);
	kfree_skb(m->skb);
	kfree(m);
}

/**
 * op_partial_drop() - give up reassembling a message
 * @on: this host; rx_lock held
 * @p: its sender
 * @seq: the message
 * @flags: OP_F_RELIABLE for the reliable service's @seq
 *
 * Return: whether there was such a partial message.
 */
bool op_partial_drop(struct op_net *on, struct op_peer *p, u32 seq, u8 flags)
{
	struct op_partial *m = op_partial_find(p, seq, flags);

	if (m)
		op_partial_free(on, p, m);
	return m;
}

static struct op_partial *op_partial_new(struct op_net *on, struct op_peer *p,
					 const struct op_hdr *h)
{
	struct op_partial *m;

	/*
	 * Reliable messages are admitted by their window instead
	 * (op_rdm_rx_data() checked it).
	 */
	if (!(h->flags & OP_F_RELIABLE) &&
	    on->pq_bytes + h->aux > OP_MAX_PQ_BYTES)
		return NULL;
	if (op_fault_alloc())
		return NULL;
	m = kzalloc(sizeof(*m), GFP_ATOMIC | __GFP_NOWARN);
	if (!m)
		return NULL;
	m->skb = alloc_skb(h->aux, GFP_ATOMIC | __GFP_NOWARN);
	if (!m->skb) {
		kfree(m);
		return NULL;
	}
	skb_put(m->skb, h->aux);
	if (!(h->flags & OP_F_RELIABLE))
		on->pq_bytes += m->skb->truesize;
	m->ts = h->ts;
	m->born = ktime_get_ns();
	m->seq = h->seq;
	m->len = h->aux;
	m->src_port = h->src_port;
	m->dst_port = h->dst_port;
	m->flags = h->flags;
	m->dl_code = h->flags & OP_F_RELIABLE ? 0 : h->code;
	m->frag_cnt = h->frag_cnt;
	list_add_tail(&m->node, &p->partial);
	return m;
}

/*
 * Where fragment @h of @m goes.  Every fragment but the last has the same
 * size, learnt from the first of them to arrive; the last ends the
 * message.  Returns the offset, or -1 if the fragment does not fit what
 * is known of the message.
 */
static long op_frag_offset(struct op_partial *m, const struct op_hdr *h,
			   u32 plen)
{
	bool last = h->frag_idx == m->frag_cnt - 1;

	if (h->ts != m->ts || h->aux != m->len || h->frag_cnt != m->frag_cnt ||
	    h->src_port != m->src_port || h->dst_port != m->dst_port ||
	    ((h->flags ^ m->flags) & (OP_F_RELIABLE | OP_F_UNORDERED)) ||
	    !plen)
		return -1;
	if (last)
		m->last_len = plen;
	else if (!m->fsz)
		m->fsz = plen;
	else if (plen != m->fsz)
		return -1;
	if (m->fsz && m->last_len &&
	    (u64)m->fsz * (m->frag_cnt - 1) + m->last_len != m->len)
		return -1;
	if (last)
		return m->len - plen;
	if ((u64)m->fsz * (h->frag_idx + 1) > m->len)
		return -1;
	return (long)m->fsz * h->frag_idx;
}

/* One fragment of a multi-packet message. */
void op_rx_frag(struct op_net *on, struct sk_buff *skb,
		const struct op_hdr *h, struct sk_buff_head *ctl)
{
	struct op_peer *p = op_peer_get(on, h->src_host, GFP_ATOMIC);
	struct op_partial *m;
	struct sk_buff *msg;
	long off;

	if (!p)
		goto drop;
	m = op_partial_find(p, h->seq, h->flags);
	if (!m) {
		m = op_partial_new(on, p, h);
		if (!m) {
			op_count(on, ONEPIPE_C_RX_NOBUFS);
			/* A reliable sender will send it again. */
			if (!(h->flags & OP_F_RELIABLE))
				op_be_drop(on, p, h->seq, OP_NAK_NOBUFS, ctl);
			goto drop;
		}
	}
	if (test_bit(h->frag_idx, m->map)) {
		op_count(on, ONEPIPE_C_RX_DUP);
		goto drop;
	}
	off = op_frag_offset(m, h, skb->len);
	if (off < 0 || skb_copy_bits(skb, 0, m->skb->data + off, skb->len)) {
		op_count(on, ONEPIPE_C_RX_BAD);
		op_partial_free(on, p, m);
		goto drop;
	}
	__set_bit(h->frag_idx, m->map);
	consume_skb(skb);
	/* A resent message completes what its earlier copies left. */
	if (m->flags & OP_F_RELIABLE)
		m->born = ktime_get_ns();
	if (++m->have < m->frag_cnt)
		return;

	msg = m->skb;
	m->skb = NULL;
	list_del(&m->node);
	/* op_rx_msg() charges the whole message again. */
	op_partial_uncharge(on, m, msg);
	kfree(m);
	op_rx_msg(on, msg, h, ctl);
	return;
drop:
	kfree_skb(skb);
}

static void op_rx_data(struct op_net *on, struct sk_buff *skb,
		       const struct op_hdr *h, struct sk_buff_head *ctl)
{
	enum op_seq_state st;
	struct op_peer *p;

	if (h->dst_host != on->cfg.host_id) {
		op_count(on, ONEPIPE_C_RX_BAD);
		kfree_skb(skb);
		return;
	}
	/* The message may wait a while: let go of route and conntrack. */
	skb_dst_drop(skb);
	nf_reset_ct(skb);
	skb->dev = NULL;
	if (h->flags & OP_F_RELIABLE) {
		op_rdm_rx_data(on, skb, h, ctl);
		return;
	}
	/* Without its record the message cannot be answered for. */
	p = op_peer_get(on, h->src_host, GFP_ATOMIC);
	if (!p) {
		op_count(on, ONEPIPE_C_RX_NOBUFS);
		kfree_skb(skb);
		return;
	}
	st = op_seqrec_arrive(&p->berec, h->seq, h->ts);
	if (op_be_refuse(on, p, st, h->seq, h->ts, h->code, ctl)) {
		/* Its fragments waiting for the rest go too. */
		if (h->frag_cnt > 1)
			op_partial_drop(on, p, h->seq, 0);
		kfree_skb(skb);
		return;
	}
	if (!(h->flags & OP_F_UNORDERED) && on->agg.valid &&
	    op_ts_before(h->ts, on->delivered)) {
		op_count(on, ONEPIPE_C_RX_LATE);
		op_be_drop(on, p, h->seq, OP_NAK_LATE, ctl);
		kfree_skb(skb);
		return;
	}
	/* A query that closes it before delivery says it was here. */
	op_seqrec_mark_arrived(&p->berec, h->seq);
	if (h->frag_cnt == 1)
		op_rx_msg(on, skb, h, ctl);
	else
		op_rx_frag(on, skb, h, ctl);
}

/**
 * struct op_rcv_batch - the packets of one datagram (a bundle), taken in
 *	under one hold of rx_lock
 * @ctl: control packets to send, after rx_lock
 * @after: ACKs, NAKs and beacons, for the sending half after rx_lock
 * @now: ktime_get_ns() when the batch took rx_lock
 * @local: header flags that never come from the wire (OP_F_RELAYED) or
 *	that the path imposes (a relayed packet's barriers were aggregated
 *	by no switch)
 * @ce: the network marked the datagram Congestion Experienced (ECN)
 * @barrier: the uplink's barrier register heard a packet since the input
 *	barrier was last recomputed
 * @commit: likewise for the commit register
 */
struct op_rcv_batch {
	struct sk_buff_head ctl;
	struct sk_buff_head after;
	u64 now;
	u8 local;
	bool ce;
	bool barrier;
	bool commit;
};

/*
 * Recompute the input barriers from what the batch's packets heard, and
 * deliver what they pass.  The registers move with every packet; this
 * runs once per run of data packets, not once per packet.
 */
static void op_rcv_apply(struct op_net *on, struct op_rcv_batch *b)
{
	if (b->barrier && op_agg_update(&on->agg, &on->uplink, 1))
		op_deliver(on, &b->ctl);
	if (b->commit && op_agg_update(&on->cagg, &on->cuplink, 1))
		op_rdm_deliver(on, &b->ctl);
	b->barrier = false;
	b->commit = false;
}

/* Decode @skb's header into @h, with the flags only this host knows. */
static bool op_rcv_decode(struct op_net *on, struct sk_buff *skb, u8 local,
			  struct op_hdr *h)
{
	if (!pskb_may_pull(skb, OP_HDR_LEN) ||
	    op_hdr_decode(h, skb->data, skb->len) != OP_PARSE_OK)
		return false;
	h->flags |= local;
	/* Unrewritten packets carry their sender's barriers, not the link's. */
	if (READ_ONCE(on->beacon_barriers) && h->type != OP_PKT_BEACON)
		h->flags |= OP_F_NOBARRIER | OP_F_NOCOMMIT;
	return true;
}

/* Addressed to this host?  Beacons are hop by hop: they have no address. */
static bool op_rcv_mine(struct op_net *on, const struct op_hdr *h)
{
	return h->type != OP_PKT_BEACON &&
	       h->dst_host == READ_ONCE(on->cfg.host_id);
}

/*
 * One packet of a batch, under rx_lock: its barriers are heard, and what
 * it carries is taken in, judged as if it had come alone.
 *
 * Alone, its barriers and those of the packets before it would be
 * applied first.  A data message stamped at or above every register
 * heard since the last application is judged the same either way: the
 * input barriers cannot pass those registers, so nothing applying them
 * could deliver would make it late.  So runs of such messages share one
 * application, and the ordered ones among them are delivered by it, in
 * stamp order.  A message below one (the switch counted a link with a
 * higher barrier, or this host's view lags) and every packet of another
 * kind see the barriers applied first.  What does change: an unordered
 * message may reach its socket before ordered ones of the same run, and
 * the reorder queue holds a run's messages until its application.
 */
static void op_rcv_locked(struct op_net *on, struct sk_buff *skb,
			  struct op_rcv_batch *b)
{
	struct op_hdr h;
	bool mine;

	if (!op_rcv_decode(on, skb, b->local, &h)) {
		op_count(on, ONEPIPE_C_RX_BAD);
		kfree_skb(skb);
		return;
	}
	op_count(on, ONEPIPE_C_RX_PKTS);
	mine = op_rcv_mine(on, &h);
	if (!(h.flags & OP_F_NOBARRIER)) {
		op_link_heard(&on->uplink, h.barrier, b->now);
		b->barrier = true;
	}
	if (!(h.flags & OP_F_NOCOMMIT)) {
		op_link_heard(&on->cuplink, h.commit, b->now);
		b->commit = true;
	}
	if (h.type != OP_PKT_DATA ||
	    (b->barrier && op_ts_before(h.ts, on->uplink.reg)) ||
	    (b->commit && op_ts_before(h.ts, on->cuplink.reg)))
		op_rcv_apply(on, b);
	switch (h.type) {
	case OP_PKT_DATA:
		if (b->ce && mine) {
			op_count(on, ONEPIPE_C_ECN_MARKS);
			if (h.flags & OP_F_RELIABLE)
				op_rdm_rx_ce(on, h.src_host);
		}
		__skb_pull(skb, OP_HDR_LEN);
		op_rx_data(on, skb, &h, &b->ctl);
		return;
	case OP_PKT_RECALL:
		if (mine)
			op_rdm_rx_recall(on, &h, &b->ctl);
		break;
	case OP_PKT_PROBE:
		if (mine)
			op_rdm_rx_probe(on, &h, &b->ctl);
		break;
	case OP_PKT_QUERY:
		if (mine)
			op_rx_query(on, &h, &b->ctl);
		break;
	case OP_PKT_BEACON:
	case OP_PKT_ACK:
	case OP_PKT_NAK:
		__skb_queue_tail(&b->after, skb);
		return;
	}
	consume_skb(skb);
}

/* What a packet tells the sending half, after rx_lock. */
static void op_rcv_after(struct op_net *on, struct sk_buff *skb, u8 local)
{
	struct op_hdr h;

	/* Decoded under rx_lock already: this cannot fail. */
	if (WARN_ON_ONCE(!op_rcv_decode(on, skb, local, &h)))
		goto out;
	switch (h.type) {
	case OP_PKT_BEACON:
		op_count(on, ONEPIPE_C_RX_BEACONS);
		break;
	case OP_PKT_ACK:
		if (!op_rcv_mine(on, &h))
			break;
		if (h.flags & OP_F_RELIABLE) {
			op_rdm_acked(on, &h);
			op_tx_commit_moved(on);
		} else {
			op_tx_acked(on, h.src_host, h.seq, h.aux);
		}
		break;
	case OP_PKT_NAK:
		if (!op_rcv_mine(on, &h))
			break;
		if (h.flags & OP_F_RELIABLE) {
			op_rdm_naked(on, h.src_host, h.seq, h.code);
			op_tx_commit_moved(on);
		} else {
			op_tx_naked(on, h.src_host, h.seq, h.code, h.ts);
		}
		break;
	}
out:
	consume_skb(skb);
}

/*
 * Take in @pkts, in order, under one hold of rx_lock: the input barriers
 * are recomputed and delivered up to once per run of data packets (see
 * op_rcv_locked()), and the control packets they cause leave together.
 */
static void op_rcv_batch(struct op_net *on, struct sk_buff_head *pkts,
			 bool ce, u8 local)
{
	struct op_rcv_batch b = { .local = local, .ce = ce };
	struct sk_buff *skb;

	__skb_queue_head_init(&b.ctl);
	__skb_queue_head_init(&b.after);
	spin_lock_bh(&on->rx_lock);
	b.now = ktime_get_ns();
	while ((skb = __skb_dequeue(pkts)))
		op_rcv_locked(on, skb, &b);
	op_rcv_apply(on, &b);
	spin_unlock_bh(&on->rx_lock);

	while ((skb = __skb_dequeue(&b.after)))
		op_rcv_after(on, skb, local);
	op_tx_ctl(on, &b.ctl);
}

/**
 * op_rcv() - a packet arrived on this host's uplink
 * @on: this host
 * @skb: the packet, data at the 1Pipe header; consumed
 * @ce: the network marked it Congestion Experienced (ECN)
 *
 * Context: softirq (the transport's receive path), RCU read lock held.
 */
void op_rcv(struct op_net *on, struct sk_buff *skb, bool ce)
{
	struct sk_buff_head one;

	__skb_queue_head_init(&one);
	__skb_queue_tail(&one, skb);
	op_rcv_batch(on, &one, ce, 0);
}

/**
 * op_rcv_list() - the packets of one datagram arrived on the uplink
 * @on: this host
 * @pkts: the packets, in the order they came, each data at its 1Pipe
 *	header; emptied, every packet consumed.  They may share a buffer
 *	(clones of one datagram): the receive path reads a packet's bytes
 *	and never writes into, or in front of or behind, them.
 * @ce: the network marked the datagram Congestion Experienced (ECN)
 *
 * As op_rcv() of each in turn, with the same messages late or delivered,
 * but under one hold of rx_lock, with the delivery passes of runs of data
 * packets shared and their answers sent together (see op_rcv_locked()).
 * Context: as op_rcv().
 */
void op_rcv_list(struct op_net *on, struct sk_buff_head *pkts, bool ce)
{
	op_rcv_batch(on, pkts, ce, 0);
}

/**
 * op_rcv_relayed() - the controller delivered a packet (relay.c)
 * @on: this host
 * @skb: the packet, data at the 1Pipe header; consumed
 *
 * Its barrier and commit fields are its sender's, which no switch
 * aggregated: taken for the uplink's they could pass messages still on
 * their way, so they are ignored.
 * Context: BHs off, RCU read lock held, as op_rcv().
 */
void op_rcv_relayed(struct op_net *on, struct sk_buff *skb)
{
	struct sk_buff_head one;

	__skb_queue_head_init(&one);
	__skb_queue_tail(&one, skb);
	op_rcv_batch(on, &one, false, OP_F_RELAYED | OP_F_NOBARRIER |
		     OP_F_NOCOMMIT);
}

/*
 * While a controller decides failures (net.onepipe.controlled), a silent
 * commit uplink stays in the commit minimum: dropping it would let the
 * commit barrier pass reliable messages still on their way, a failure
 * decision only the controller may take, with one timestamp for all.
 * The silence is reported instead, and so is the link's return.
 * Returns 0 to report it silent, 1 heard again, -1 nothing to report.
 */
static int op_rx_commit_watch(struct op_net *on, u64 now, u64 timeout)
{
	struct op_link *l = &on->cuplink;
	bool silent;

	if (!READ_ONCE(on->controlled)) {
		on->cup_reported = false;
		op_links_expire(l, 1, now, timeout);
		return -1;
	}
	silent = l->heard && !l->dead &&
		 (s64)(now - l->last_heard) > (s64)timeout;
	if (silent == on->cup_reported)
		return -1;
	on->cup_reported = silent;
	return silent ? 0 : 1;
}

/**
 * op_rx_tick() - periodic receive-side work
 * @on: this host
 * @ctl: control packets to send are appended here
 *
 * Removes a silent uplink from the barrier, sends ACK ranges, and gives
 * up on partial messages that can no longer be delivered in order.
 */
void op_rx_tick(struct op_net *on, struct sk_buff_head *ctl)
{
	u64 timeout = op_interval_ns(on) *
		      READ_ONCE(on->link_timeout_intervals);
	u64 reasm_ns = (u64)READ_ONCE(on->ack_timeout_ms) * NSEC_PER_MSEC;
	/* A best-effort partial waits for its deadline, within our bound. */
	u64 be_keep_ns = max_t(u64, reasm_ns,
			       (u64)READ_ONCE(on->be_deadline_max_ms) *
			       NSEC_PER_MSEC);
	struct op_peer *p, *tmp;
	unsigned long host;
	bool has_commit;
	u64 now, commit;
	int report;

	spin_lock_bh(&on->rx_lock);
	/* Read under the lock: op_rcv() stamps what it hears under it too. */
	now = ktime_get_ns();
	if (op_links_expire(&on->uplink, 1, now, timeout))
		op_count(on, ONEPIPE_C_LINK_TIMEOUTS);
	report = op_rx_commit_watch(on, now,
				    timeout * OP_COMMIT_TIMEOUT_FACTOR);
	has_commit = on->cuplink.heard;
	commit = on->cuplink.reg;
	if (op_agg_update(&on->agg, &on->uplink, 1))
		op_deliver(on, ctl);
	if (op_agg_update(&on->cagg, &on->cuplink, 1))
		op_rdm_deliver(on, ctl);
	list_for_each_entry_safe(p, tmp, &on->ack_pending, ack_node)
		op_ack_flush(on, p, ctl);
	op_rdm_rx_tick(on, ctl);

	xa_for_each(&on->peers, host, p) {
		struct op_partial *m, *mt;

		list_for_each_entry_safe(m, mt, &p->partial, node) {
			bool late = !(m->flags & (OP_F_UNORDERED |
						  OP_F_RELIABLE)) &&
				    on->agg.valid &&
				    op_ts_before(m->ts, on->delivered);

			/*
			 * A best-effort message may be delivered until its
			 * deadline, which the delay its sender measured may
			 * have put past the reassembly timeout; not longer
			 * than this host would give its own (the deadline is
			 * the sender's word, the memory ours).
			 */
			if (!late && ((s64)(now - m->born) < (s64)reasm_ns ||
				      (m->dl_code &&
				       (s64)(now - m->born) < (s64)be_keep_ns &&
				       !op_be_expired(on, m->ts, m->dl_code))))
				continue;
			op_count(on, ONEPIPE_C_RX_REASM_DROP);
			if (late)
				op_be_drop(on, p, m->seq, OP_NAK_LATE, ctl);
			op_partial_free(on, p, m);
		}
	}
	spin_unlock_bh(&on->rx_lock);
	if (report >= 0)
		op_nl_ev_link(on, report, has_commit, commit);
}

/**
 * op_rx_peer_reset() - the reliable service with @p starts over (a new
 *	incarnation on one side): its sequence numbers restart
 * @on: this host; rx_lock held
 * @p: the peer
 *
 * Best-effort state stays: its sequence numbers do not restart.
 */
void op_rx_peer_reset(struct op_net *on, struct op_peer *p)
{
	struct op_partial *m, *mt;

	lockdep_assert_held(&on->rx_lock);
	list_for_each_entry_safe(m, mt, &p->partial, node)
		if (m->flags & OP_F_RELIABLE)
			op_partial_free(on, p, m);
	op_rdm_rx_reset(on, p);
}

/**
 * op_rx_flush() - forget all receive state; the transport is down
 * @on: this host
 *
 * Queued messages are dropped: their senders time out.  The uplink will
 * count as a new link when the host comes back.
 */
void op_rx_flush(struct op_net *on)
{
	struct op_pq_node *n;
	struct op_peer *p;
	unsigned long host;

	spin_lock_bh(&on->rx_lock);
	while ((n = op_pq_pop(&on->pq)))
		kfree_skb(op_rx_node_skb(n));
	xa_for_each(&on->peers, host, p) {
		struct op_partial *m, *mt;

		list_for_each_entry_safe(m, mt, &p->partial, node)
			op_partial_free(on, p, m);
		/* What waited in the queue is gone too. */
		op_seqrec_clear_arrivals(&p->berec);
		list_del_init(&p->ack_node);
	}
	on->pq_bytes = 0;
	memset(&on->uplink, 0, sizeof(on->uplink));
	memset(&on->agg, 0, sizeof(on->agg));
	on->agg.members = 1;
	on->delivered = 0;
	op_rdm_rx_flush(on);
	spin_unlock_bh(&on->rx_lock);
}
