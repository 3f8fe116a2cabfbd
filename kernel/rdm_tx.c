// SPDX-License-Identifier: GPL-2.0
/*
 * The reliable service (SOCK_RDM), sending half: the paper's two-phase
 * commit as the sender sees it.
 *
 * Prepare: a scattering is stamped once every destination has window for
 * it.  Its messages go out like best-effort ones, numbered in each
 * destination's reliable sequence space, and are sent again, with their
 * original timestamp, until the receiver ACKs them (it buffers them).
 *
 * Commit: the host's commit barrier is the lowest timestamp it still
 * lacks an ACK for, or its barrier when it lacks none.  Every packet
 * carries it (op_xmit_list()), switches aggregate it like the barrier, and
 * receivers deliver reliable messages below it.  A message stays on its
 * peer's queue, ACKed, until the commit barrier passes it: until then
 * another message of its scattering may still fail and force a recall.
 *
 * Failure: a receiver that does not answer within the retry budget is
 * declared unreachable by op_rdm_peer_unreachable(); while a controller
 * decides failures (net.onepipe.controlled) it is reported to it instead,
 * and the packets for it go through the controller too (relay.c) until
 * the controller declares it failed or the network carries them again.
 * A receiver given up or failed has its unACKed messages fail, and the
 * other messages of their scatterings are recalled (receivers discard
 * them and say so) before the commit barrier may pass them: a scattering
 * is delivered to all of its receivers or to none.
 *
 * Loss detection, as modern TCP does it (core/rack.c): a message is lost
 * when one sent sufficiently later to the same receiver was ACKed (RACK,
 * with a reordering window), and sent again at once; the tail of what is
 * in flight, which no later ACK can vouch for, gets a probe (TLP) two
 * round trips after the last ACK; and only if ACKs stop altogether does
 * the retransmission timeout fire, an RTO after the last ACK that acked
 * something new.  A timeout counted from each message's own sending would
 * fire whenever a queue that builds under load makes the round trip grow
 * faster than the estimate, although ACKs keep coming.
 *
 * Flow control: each destination grants a window of sequence numbers,
 * and a congestion window in the style of DCTCP (the receiver echoes ECN
 * marks, the sender cuts in proportion to the marked fraction) limits
 * what is in flight.
 * A scattering that does not fit waits for credits (admit.c).
 *
 * Everything here runs under tx_lock, so that stamps, sequence numbers
 * and the commit barrier reach the wire in one order.
 */
#include "onepipe.h"

/* Most doublings of the timeout. */
#define OP_RDM_BACKOFF_MAX	6

static u32 op_rdm_window(struct op_net *on)
{
	return clamp_t(u32, READ_ONCE(on->rdm_window), 1, OP_RDM_WINDOW_MAX);
}

void op_rdm_peer_init(struct op_net *on, struct op_peer *p)
{
	skb_queue_head_init(&p->rtx.out);
	INIT_LIST_HEAD(&p->rtx.active);
	INIT_LIST_HEAD(&p->rrx.ack_node);
	/*
	 * Until the receiver's first ACK says how much it grants, send it
	 * one message: every receiver grants at least that, and a sender
	 * that guessed more would be dropped past the receiver's edge with
	 * its scatterings half held there, which can wait on each other.
	 */
	p->rtx.edge = 1;
	op_rack_reset(&p->rtx.rack);
	p->rtx.cwnd = op_rdm_window(on);
	p->rtx.alpha = 1024;
	p->rrx.adv = op_rdm_window(on);
	p->rrx.granted = p->rrx.adv;
}

/*
 * DCTCP: once per window of data, alpha moves 1/16 of the way to the
 * fraction of ACKs that echoed a mark; a marked window cuts the window
 * by alpha / 2, an unmarked one grows it by a message.
 */
static void op_rdm_cc(struct op_net *on, struct op_rdm_tx *t, unsigned int n,
		      bool ece, u32 hi)
{
	u32 w = op_rdm_window(on);

	t->cc_acked += n;
	if (ece)
		t->cc_marked += n;
	if ((s32)(hi - t->cc_end) < 0)
		return;
	if (t->cc_acked) {
		u32 f = min_t(u32, t->cc_marked * 1024ULL / t->cc_acked, 1024);

		t->alpha = t->alpha - t->alpha / 16 + f / 16;
	}
	if (t->cc_marked) {
		t->cwnd = max(t->cwnd - t->cwnd * t->alpha / 2048, 1U);
		op_count(on, ONEPIPE_C_CWND_CUTS);
	} else {
		t->cwnd++;
	}
	t->cwnd = min(t->cwnd, w);
	t->cc_acked = 0;
	t->cc_marked = 0;
	t->cc_end = t->next;
}

/*
 * Retransmission timeout towards @t, doubled @backoff times: srtt +
 * 4 rttvar, at least the floor (net.onepipe.rdm_rto_min_ms) and at least
 * a beacon interval more than srtt, since timers only fire at the tick.
 */
static u64 op_rdm_rto_backoff(struct op_net *on, const struct op_rdm_tx *t,
			      unsigned int backoff)
{
	u64 min = (u64)READ_ONCE(on->rdm_rto_min_ms) * NSEC_PER_MSEC;

	return op_rtt_rto_ns(t->srtt_us, t->rttvar_us, op_interval_ns(on), min,
			     backoff);
}

/*
 * The timeout as it stands, doubled while timeouts go unanswered by a
 * valid sample: without that backoff a receiver slower than the timeout
 * would have every message resent, and Karn's rule would then discard
 * every sample that could correct it.
 */
static u64 op_rdm_rto(struct op_net *on, const struct op_rdm_tx *t)
{
	return op_rdm_rto_backoff(on, t, t->backoff);
}

/* When to send @cb's recall again after its retries so far. */
static u64 op_rdm_deadline(struct op_net *on, const struct op_rdm_tx *t,
			   const struct op_msg_cb *cb, u64 now)
{
	return now + op_rdm_rto_backoff(on, t, t->backoff +
					min_t(u8, cb->retries,
					      OP_RDM_BACKOFF_MAX));
}

static void op_rdm_rtt_sample(struct op_rdm_tx *t, u32 m)
{
	t->backoff = 0;
	op_rtt_sample(&t->srtt_us, &t->rttvar_us, &t->min_rtt_us, m);
}

static u32 op_now_us(void)
{
	return (u32)div_u64(ktime_get_ns(), NSEC_PER_USEC);
}

static u32 op_ns_to_us(u64 ns)
{
	return (u32)div_u64(ns, NSEC_PER_USEC);
}

/*
 * Nothing in flight towards @t: no timer runs, and RACK forgets the last
 * delivered message.  Its send time is a u32 microsecond clock: after
 * half an hour of quiet it would seem to lie in the future, and every
 * message sent since would look sent before it, hence lost.
 */
static void op_rdm_disarm(struct op_rdm_tx *t)
{
	t->rto_at = 0;
	t->tlp_at = 0;
	t->reo_at = 0;
	t->tlp_out = false;
	t->rack.valid = false;
}

/*
 * After a transmission (@acked false) or an ACK that acked something new
 * (@acked true) towards @t: the retransmission timer runs while messages
 * are in flight, restarted when the oldest unACKed message was ACKed
 * (@una_moved, TCP's "ACK of new data"; an ACK of later messages only
 * must not postpone the timeout of one that RACK cannot resend any
 * more); the tail-loss probe is due two round trips after the last
 * transmission or ACK (once until the next ACK), and only if it comes
 * before the timeout.
 */
static void op_rdm_arm(struct op_net *on, struct op_rdm_tx *t, u64 now,
		       bool acked, bool una_moved)
{
	u64 rto, pto;

	if (!t->inflight) {
		op_rdm_disarm(t);
		return;
	}
	/* A message sent when nothing was in flight starts afresh. */
	if (!acked && t->inflight == 1)
		op_rdm_disarm(t);
	rto = op_rdm_rto(on, t);
	if (una_moved || !t->rto_at)
		t->rto_at = now + rto;
	if (acked)
		t->tlp_out = false;
	if (t->tlp_out)
		return;
	/*
	 * The receiver may hold an ACK back until its tick; half the
	 * timeout's floor is as short as a probe can sensibly be.
	 */
	pto = (u64)op_tlp_pto_us(t->srtt_us,
				 op_ns_to_us(op_interval_ns(on)),
				 READ_ONCE(on->rdm_rto_min_ms) * 500U) *
	      NSEC_PER_USEC;
	t->tlp_at = pto && now + pto < t->rto_at ? now + pto : 0;
}

/**
 * op_rdm_commit() - the commit barrier this host may advertise now
 * @on: this host; tx_lock held
 *
 * The barrier already promises that no later stamp is below it; every
 * reliable message below the lowest unACKed one is ACKed everywhere.
 *
 * Return: the commit barrier.
 */
u64 op_rdm_commit(struct op_net *on)
{
	u64 c = on->tx_barrier;
	struct op_rdm_tx *t;

	lockdep_assert_held(&on->tx_lock);
	list_for_each_entry(t, &on->rdm_active, active)
		if (t->una)
			c = op_ts_min(c, OP_MSG_CB(t->una)->ts);
	return c;
}

/**
 * op_rdm_commit_news() - would a beacon now tell receivers news?
 * @on: this host; tx_lock held
 *
 * Receivers hold a reliable message until the commit barrier passes it.
 * A fresh commit barrier is news when no message at or below the one
 * last sent is still unACKed (else it cannot move past it) and some
 * message sent is at or above it (else nobody waits for it to move).
 *
 * Return: whether it is news.
 */
bool op_rdm_commit_news(struct op_net *on)
{
	struct op_rdm_tx *t;

	lockdep_assert_held(&on->tx_lock);
	if (!on->rdm_sent || !on->tx_commit_valid ||
	    op_ts_before(on->rdm_last_ts, on->tx_commit))
		return false;
	list_for_each_entry(t, &on->rdm_active, active)
		if (t->una && !op_ts_after(OP_MSG_CB(t->una)->ts, on->tx_commit))
			return false;
	return true;
}

/* Every message below this is settled: ACKed, failed or recalled. */
static u32 op_rdm_settled(const struct op_rdm_tx *t)
{
	struct sk_buff *skb;

	skb_queue_walk(&t->out, skb)
		if (OP_MSG_CB(skb)->state != OP_RDM_ACKED)
			return OP_MSG_CB(skb)->seq;
	return t->next;
}

/* Point @t->una at the first message not ACKed, walking from @from. */
static void op_rdm_una_from(struct op_rdm_tx *t, struct sk_buff *from)
{
	struct sk_buff *skb = from;

	t->una = NULL;
	if (!skb)
		return;
	skb_queue_walk_from(&t->out, skb) {
		if (OP_MSG_CB(skb)->state != OP_RDM_ACKED) {
			t->una = skb;
			return;
		}
	}
}

static void op_rdm_una_reset(struct op_rdm_tx *t)
{
	op_rdm_una_from(t, skb_peek(&t->out));
}

/* Packets of the reliable service carry its flag and both hosts. */
static void op_rdm_ctl_hdr(struct op_net *on, struct op_hdr *h, u8 type,
			   const struct op_msg_cb *cb)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->flags = OP_F_RELIABLE;
	h->src_host = on->cfg.host_id;
	h->dst_host = cb->dst_host;
	h->src_port = cb->src_port;
	h->dst_port = cb->dst_port;
	h->ts = cb->ts;
	h->barrier = on->tx_barrier;
	h->seq = cb->seq;
}

/*
 * Send a header-only packet to @p, through the controller too if
 * relaying.  False if no packet could be allocated for the network.
 */
static bool op_rdm_xmit_hdr(struct op_net *on, struct op_peer *p,
			    const struct op_hdr *h)
{
	struct sk_buff *skb = op_pkt_alloc(on, 0, GFP_ATOMIC);

	if (unlikely(p->rtx.relay) && !READ_ONCE(p->failed))
		op_relay_hdr(on, h);
	if (!skb) {
		op_count(on, ONEPIPE_C_TX_ERRORS);
		return false;
	}
	op_hdr_encode(h, skb->data);
	op_xmit(on, skb);
	return true;
}

static bool op_rdm_send_recall(struct op_net *on, struct sk_buff *msg)
{
	struct op_hdr h;

	op_rdm_ctl_hdr(on, &h, OP_PKT_RECALL, OP_MSG_CB(msg));
	return op_rdm_xmit_hdr(on, OP_MSG_CB(msg)->peer, &h);
}

/*
 * Send a message again, with its original stamp and sequence number, as
 * op_xmit_msg() sends it the first time; the header's code says which
 * copy this is (cb->retries), and the receiver's ACK echoes it.  False if
 * the copy could not be built (no memory): nothing left, so the caller
 * takes back the retry it counted, and the path taught nothing.
 */
static bool op_rdm_resend(struct op_net *on, struct sk_buff *msg)
{
	struct sk_buff_head wire, out;

	__skb_queue_head_init(&wire);
	__skb_queue_head_init(&out);
	if (op_msg_packets(on, msg, &wire, GFP_ATOMIC)) {
		__skb_queue_purge(&wire);
		op_count(on, ONEPIPE_C_TX_ERRORS);
		return false;
	}
	op_xmit_copy(on, msg, &wire, OP_MSG_CB(msg)->retries, &out);
	op_xmit_list(on, &out);
	op_count(on, ONEPIPE_C_RETRANSMITS);
	return true;
}

/**
 * op_rdm_send() - stamp a reliable scattering and send it
 * @on: this host; tx_lock held
 * @os: the socket, whose waiting scattering holds every credit it needs
 *	(admit.c)
 */
void op_rdm_send(struct op_net *on, struct op_sock *os)
{
	struct op_scat *sc = &os->scat;
	unsigned int n = skb_queue_len(&sc->msgs);
	u64 ts = op_tx_stamp(on, os), now = ktime_get_ns();
	u32 now_us = op_now_us();
	struct sk_buff_head out;
	struct sk_buff *msg;

	__skb_queue_head_init(&out);
	on->rdm_last_ts = ts;
	on->rdm_sent = true;

	while ((msg = __skb_dequeue(&sc->msgs))) {
		struct op_msg_cb *cb = OP_MSG_CB(msg);
		struct op_rdm_tx *t = &cb->peer->rtx;

		t->reserved--;
		cb->credited = 0;
		cb->ts = ts;
		cb->seq = t->next++;
		cb->state = OP_RDM_SENT;
		cb->retries = 0;
		cb->sent_us = now_us;
		cb->deadline = 0;
		__skb_queue_tail(&t->out, msg);
		if (!t->una)
			t->una = msg;
		if (list_empty(&t->active))
			list_add_tail(&t->active, &on->rdm_active);
		on->rdm_unacked++;
		t->inflight++;
		op_rdm_arm(on, t, now, false, false);
		op_xmit_msg(on, msg, &sc->wire, &out);
	}
	op_xmit_list(on, &out);
	op_count(on, ONEPIPE_C_TX_SCATTERINGS);
	op_count_add(on, ONEPIPE_C_TX_MSGS, n);
}

/*
 * A message left its peer's queue for good, failed with @code: it goes on
 * @fail (with the code in cb->state, which means nothing any more), and
 * the rest of its scattering is recalled.
 */
static void op_rdm_failed(struct op_net *on, struct sk_buff *msg, int code,
			  struct sk_buff_head *fail);

/*
 * Recall every message of the scattering stamped @ts that is still on a
 * queue and not being recalled.  Stamps are unique per host, so @ts names
 * the scattering; queues are in stamp order.
 */
static void op_rdm_recall(struct op_net *on, u64 ts)
{
	u64 now = ktime_get_ns();
	struct op_rdm_tx *t;
	struct sk_buff *skb;

	list_for_each_entry(t, &on->rdm_active, active) {
		bool hit = false;

		skb_queue_walk(&t->out, skb) {
			struct op_msg_cb *cb = OP_MSG_CB(skb);

			if (op_ts_after(cb->ts, ts))
				break;
			if (cb->ts != ts || cb->state == OP_RDM_RECALLING)
				continue;
			if (cb->state == OP_RDM_ACKED)
				on->rdm_unacked++;
			else
				t->inflight--;
			cb->state = OP_RDM_RECALLING;
			cb->retries = 0;
			cb->deadline = op_rdm_deadline(on, t, cb, now);
			op_rdm_send_recall(on, skb);
			op_count(on, ONEPIPE_C_RECALLS);
			hit = true;
		}
		if (hit)
			op_rdm_una_reset(t);
	}
}

static void op_rdm_failed(struct op_net *on, struct sk_buff *msg, int code,
			  struct sk_buff_head *fail)
{
	struct op_msg_cb *cb = OP_MSG_CB(msg);
	bool recalling = cb->state == OP_RDM_RECALLING;

	if (cb->state != OP_RDM_ACKED)
		on->rdm_unacked--;
	if (cb->state == OP_RDM_SENT)
		cb->peer->rtx.inflight--;
	cb->state = code;
	__skb_queue_tail(fail, msg);
	if (!recalling)
		op_rdm_recall(on, cb->ts);
}

/* Free what the commit barrier passed; forget peers with nothing out. */
static void op_rdm_settle(struct op_net *on, struct sk_buff_head *done)
{
	u64 c = op_rdm_commit(on);
	struct op_rdm_tx *t, *tmp;
	struct sk_buff *skb;

	list_for_each_entry_safe(t, tmp, &on->rdm_active, active) {
		while ((skb = skb_peek(&t->out)) &&
		       OP_MSG_CB(skb)->state == OP_RDM_ACKED &&
		       op_ts_before(OP_MSG_CB(skb)->ts, c)) {
			__skb_unlink(skb, &t->out);
			__skb_queue_tail(done, skb);
		}
		if (skb_queue_empty(&t->out))
			list_del_init(&t->active);
	}
}

/* Outside tx_lock: free settled messages, notify failed ones. */
static void op_rdm_finish(struct sk_buff_head *done, struct sk_buff_head *fail)
{
	struct sk_buff *skb;

	/* Freeing returns send-buffer space and wakes writers. */
	__skb_queue_purge(done);
	while ((skb = __skb_dequeue(fail)))
		op_sock_fail(skb->sk, skb, OP_MSG_CB(skb)->state);
}

/*
 * ACK of [lo, hi], of copy @copy of them, received: those messages are
 * buffered at the peer.
 *
 * A resent message's ACK may be the original's (Karn's problem); the
 * receiver ACKs a resent copy alone and echoes its number, so an ACK
 * whose echo is not the message's last copy is an earlier copy's: it
 * says nothing of when the ACKed copy left, and the resend was needless.
 * Every other newly ACKed message tells RACK when it left.  One
 * round-trip sample per ACK, from the first message it newly acks: that
 * one waited longest in the receiver's ACK range, so the estimate covers
 * that wait.  An ACK about data the controller carried (@timed false)
 * times the controller's path, not the network's: it is no sample, and
 * no word on reordering, but it answers, so the backoff ends.
 */
static unsigned int op_rdm_mark_acked(struct op_net *on, struct op_rdm_tx *t,
				      u32 lo, u32 hi, u16 copy, bool timed)
{
	struct sk_buff *skb = t->una;
	u32 now_us = op_now_us();
	bool sampled = false, spurious = false;
	unsigned int n = 0;

	if (!skb)
		return 0;
	skb_queue_walk_from(&t->out, skb) {
		struct op_msg_cb *cb = OP_MSG_CB(skb);

		if ((s32)(cb->seq - hi) > 0)
			break;
		if ((s32)(cb->seq - lo) < 0 || cb->state != OP_RDM_SENT)
			continue;
		if (!timed) {
			t->backoff = 0;
		} else if (cb->retries && (lo != hi || copy != cb->retries)) {
			spurious = true;
		} else {
			if (!sampled)
				op_rdm_rtt_sample(t, now_us - cb->sent_us);
			sampled = true;
			op_rack_update(&t->rack, cb->sent_us, cb->seq, now_us);
		}
		cb->state = OP_RDM_ACKED;
		on->rdm_unacked--;
		t->inflight--;
		n++;
	}
	/* An earlier copy arrived after all: widen the reordering window. */
	if (spurious)
		op_rack_spurious(&t->rack);
	if (n)
		op_rdm_una_from(t, t->una);
	return n;
}

/*
 * RACK: send again, at once, every message of @t sent before the most
 * recently sent one that was ACKed, if it has been out longer than that
 * one's round trip plus the reordering window; arm @t->reo_at for those
 * that have not yet.  On a FIFO path their ACKs would have come first,
 * so they (or their ACKs) were lost, and waiting for a timeout would
 * stall every receiver's commit barrier.  The walk stops at the first
 * message sent once and after that one, so it covers what the ACK walk
 * covered.  A message out of retries is left to the timeout, which
 * gives its receiver up.
 */
static void op_rdm_rack_detect(struct op_net *on, struct op_rdm_tx *t,
			       u64 now)
{
	unsigned int budget = READ_ONCE(on->rdm_retries);
	struct sk_buff *skb = t->una;
	u32 now_us = op_ns_to_us(now), reo, left;
	bool lost = false;

	t->reo_at = 0;
	if (!skb || !t->rack.valid)
		return;
	reo = op_rack_reo_wnd_us(&t->rack, t->min_rtt_us, t->srtt_us, 0);
	skb_queue_walk_from(&t->out, skb) {
		struct op_msg_cb *cb = OP_MSG_CB(skb);

		left = op_rack_left_us(&t->rack, reo, cb->sent_us, cb->seq,
				       now_us);
		/* Sent once, after it: so were all the later ones. */
		if (left == OP_RACK_UNKNOWN && !cb->retries)
			break;
		if (cb->state != OP_RDM_SENT || left == OP_RACK_UNKNOWN)
			continue;
		if (left) {
			u64 at = now + (u64)left * NSEC_PER_USEC;

			if (!t->reo_at || (s64)(at - t->reo_at) < 0)
				t->reo_at = at;
			continue;
		}
		if (cb->retries >= budget)
			continue;
		cb->retries++;
		if (!op_rdm_resend(on, skb)) {
			/* Still lost: the next ACK or the timeout tries again. */
			cb->retries--;
			continue;
		}
		cb->sent_us = now_us;
		lost = true;
	}
	if (lost)
		op_rack_detected(&t->rack);
}

/* ACK of a recall: the peer discarded [lo, hi]. */
static void op_rdm_mark_recalled(struct op_net *on, struct op_rdm_tx *t,
				 u32 lo, u32 hi, struct sk_buff_head *fail)
{
	struct sk_buff *skb, *tmp;

	skb_queue_walk_safe(&t->out, skb, tmp) {
		struct op_msg_cb *cb = OP_MSG_CB(skb);

		if ((s32)(cb->seq - hi) > 0)
			break;
		if ((s32)(cb->seq - lo) < 0 || cb->state != OP_RDM_RECALLING)
			continue;
		__skb_unlink(skb, &t->out);
		op_rdm_failed(on, skb, ONEPIPE_EE_RECALLED, fail);
	}
	op_rdm_una_reset(t);
}

/**
 * op_rdm_acked() - a reliable ACK arrived
 * @on: this host
 * @h: the ACK: code, range [seq, aux], window edge in ts
 *
 * Context: softirq, no 1Pipe lock held.
 */
void op_rdm_acked(struct op_net *on, const struct op_hdr *h)
{
	struct op_peer *p = xa_load(&on->peers, h->src_host);
	struct sk_buff_head done, fail;
	unsigned int n = 0;
	struct op_rdm_tx *t;
	u32 edge = (u32)h->ts;

	if (!p)
		return;
	__skb_queue_head_init(&done);
	__skb_queue_head_init(&fail);
	t = &p->rtx;
	/* Declared failed: its answers come from a state we gave up on. */
	if (unlikely(READ_ONCE(p->failed)))
		return;
	spin_lock_bh(&on->tx_lock);
	/* It answers: nothing to report. */
	t->report_due = false;
	/* Edges only grow: a reordered ACK cannot take back room. */
	if ((s32)(edge - t->edge) > 0)
		t->edge = edge;
	/* Its window's size: a scattering needing more from it must fail. */
	if (h->frag_cnt && h->frag_cnt != t->win) {
		t->win = h->frag_cnt;
		on->rdm_win_gen++;
	}
	/* A window ACK answers a probe with the receiver's next missing. */
	if (h->code == OP_ACK_WINDOW && t->sync &&
	    (s32)(h->seq + 1 - op_rdm_settled(t)) >= 0)
		t->sync = false;
	if (h->code == OP_ACK_RECEIVED) {
		bool direct = !(h->flags & (OP_F_RELAYED | OP_F_VIA_CTL));
		struct sk_buff *una = t->una;

		n = op_rdm_mark_acked(on, t, h->seq, h->aux, h->frag_idx,
				      direct);
		/*
		 * New data the network carried, and its ACK came back the
		 * same way, for messages sent since relaying began: the path
		 * works both ways again, the controller may rest.  A window
		 * or recall ACK proves nothing of it (a path may drop only
		 * large packets).  On a path that loses most packets, one
		 * lucky copy ends it too, and the retry budget starts it
		 * again.
		 */
		if (unlikely(t->relay) && direct && n &&
		    (s32)(h->aux - t->relay_seq) >= 0)
			WRITE_ONCE(t->relay, false);
		op_rdm_cc(on, t, n, h->flags & OP_F_ECE, h->aux);
		if (n) {
			u64 now = ktime_get_ns();

			op_rdm_rack_detect(on, t, now);
			op_rdm_arm(on, t, now, true, t->una != una);
		}
	} else if (h->code == OP_ACK_RECALLED) {
		op_rdm_mark_recalled(on, t, h->seq, h->aux, &fail);
	}
	op_rdm_settle(on, &done);
	op_admit_pump(on, &fail);
	spin_unlock_bh(&on->tx_lock);
	op_count_add(on, ONEPIPE_C_ACKED, n);
	op_rdm_finish(&done, &fail);
}

/**
 * op_rdm_naked() - the peer refused reliable message @seq
 * @on: this host
 * @host: the peer
 * @seq: the message
 * @code: enum op_nak_code, reported as the equal enum onepipe_ee_code
 *
 * The rest of the scattering is recalled.  Context: softirq.
 */
void op_rdm_naked(struct op_net *on, u32 host, u32 seq, u8 code)
{
	struct op_peer *p = xa_load(&on->peers, host);
	struct sk_buff_head done, fail;
	struct sk_buff *skb, *tmp;

	if (!p || unlikely(READ_ONCE(p->failed)))
		return;
	__skb_queue_head_init(&done);
	__skb_queue_head_init(&fail);
	spin_lock_bh(&on->tx_lock);
	skb_queue_walk_safe(&p->rtx.out, skb, tmp) {
		struct op_msg_cb *cb = OP_MSG_CB(skb);

		if ((s32)(cb->seq - seq) > 0)
			break;
		if (cb->seq != seq)
			continue;
		__skb_unlink(skb, &p->rtx.out);
		/* Refused while being recalled: it is discarded either way. */
		op_rdm_failed(on, skb, cb->state == OP_RDM_RECALLING ?
			      ONEPIPE_EE_RECALLED : code, &fail);
		op_rdm_una_reset(&p->rtx);
		break;
	}
	op_rdm_settle(on, &done);
	op_admit_pump(on, &fail);
	spin_unlock_bh(&on->tx_lock);
	op_rdm_finish(&done, &fail);
}

/*
 * @p is unreachable.  Its unACKed messages fail and their scatterings are
 * recalled everywhere else; recalls it owes cannot be confirmed and fail
 * as well.  What it ACKed stays unless @acked_too: it holds those
 * messages, and the rest of their scatterings goes on.  A failure decided
 * by the controller sets @acked_too: the failed receiver will deliver
 * nothing, so every scattering to it that is not committed yet is
 * recalled, and no correct receiver delivers a scattering that one of
 * its receivers missed unless its sender was told.  Its window opens
 * again, so that waiting scatterings move on (and fail in turn if it
 * stays silent).
 */
static void op_rdm_unreachable_locked(struct op_net *on, struct op_peer *p,
				      bool acked_too, struct sk_buff_head *fail)
{
	struct op_rdm_tx *t = &p->rtx;
	struct sk_buff *skb, *tmp;
	int pass;

	/* Recalls that the first pass starts here are failed by the last. */
	for (pass = OP_RDM_SENT; pass <= OP_RDM_RECALLING; pass++) {
		if (pass == OP_RDM_ACKED && !acked_too)
			continue;
		skb_queue_walk_safe(&t->out, skb, tmp) {
			if (OP_MSG_CB(skb)->state != pass)
				continue;
			__skb_unlink(skb, &t->out);
			op_rdm_failed(on, skb, ONEPIPE_EE_UNREACH, fail);
			t->sync = true;
		}
	}
	op_rdm_una_reset(t);
	t->edge = t->next + (t->win ?: 1);
	t->cwnd = op_rdm_window(on);
	t->alpha = 1024;
	t->backoff = 0;
	t->srtt_us = 0;
	t->rttvar_us = 0;
	t->min_rtt_us = 0;
	t->report_due = false;
	WRITE_ONCE(t->relay, false);
	op_rack_reset(&t->rack);
	op_rdm_disarm(t);
}

/* op_rdm_peer_unreachable() and op_rdm_peer_failed() */
static void op_rdm_give_up(struct op_net *on, u32 host, bool acked_too)
{
	struct op_peer *p = xa_load(&on->peers, host);
	struct sk_buff_head done, fail;

	if (!p)
		return;
	__skb_queue_head_init(&done);
	__skb_queue_head_init(&fail);
	spin_lock_bh(&on->tx_lock);
	/*
	 * What the commit barrier already passed is delivered, or about to
	 * be: it must not be recalled.
	 */
	op_rdm_settle(on, &done);
	op_rdm_unreachable_locked(on, p, acked_too, &fail);
	op_rdm_settle(on, &done);
	op_admit_pump(on, &fail);
	spin_unlock_bh(&on->tx_lock);
	op_rdm_finish(&done, &fail);
}

/**
 * op_rdm_peer_unreachable() - declare host @host unreachable
 * @on: this host
 * @host: the receiver
 *
 * The sender's own decision (its retry budget, or the transport losing
 * the peer) when no controller makes it.  Context: any but hardirq.
 */
void op_rdm_peer_unreachable(struct op_net *on, u32 host)
{
	op_rdm_give_up(on, host, false);
}

/**
 * op_rdm_peer_failed() - the controller declared receiver @host failed
 * @on: this host
 * @host: the receiver
 *
 * Every scattering to it that is not committed is recalled (Recall of
 * the paper's procedure); its message to @host is reported
 * %ONEPIPE_EE_UNREACH, the others %ONEPIPE_EE_RECALLED.  Context: process.
 */
void op_rdm_peer_failed(struct op_net *on, u32 host)
{
	op_rdm_give_up(on, host, true);
}

/*
 * Forget the sending state towards @p: sequence numbers, window, round
 * trip, congestion.  Nothing of it may be queued.  tx_lock held.
 */
static void op_rdm_tx_restart(struct op_net *on, struct op_peer *p)
{
	struct op_rdm_tx *t = &p->rtx;

	t->una = NULL;
	t->next = 0;
	t->edge = 1;
	t->win = 0;
	t->need = 0;
	t->reserved = 0;
	t->sync = false;
	t->probe_at = 0;
	t->inflight = 0;
	t->backoff = 0;
	t->srtt_us = 0;
	t->rttvar_us = 0;
	t->min_rtt_us = 0;
	t->cwnd = op_rdm_window(on);
	t->alpha = 1024;
	t->cc_acked = 0;
	t->cc_marked = 0;
	t->cc_end = 0;
	t->report_due = false;
	WRITE_ONCE(t->relay, false);
	op_rack_reset(&t->rack);
	op_rdm_disarm(t);
}

/**
 * op_rdm_tx_incarnation() - this host starts a new incarnation
 * @on: this host; rx_lock and tx_lock held (in that order), so that
 *	nothing is stamped with the old state after this
 * @fail: every queued or waiting reliable message goes here, to be
 *	failed (ONEPIPE_EE_DOWN) once the locks are dropped
 */
void op_rdm_tx_incarnation(struct op_net *on, struct sk_buff_head *fail)
{
	struct op_scat *sc, *stmp;
	struct op_rdm_tx *t, *tmp;
	struct op_peer *p;
	unsigned long host;

	lockdep_assert_held(&on->tx_lock);
	list_for_each_entry_safe(sc, stmp, &on->waitq, node) {
		struct op_sock *os = container_of(sc, struct op_sock, scat);

		/* Best effort waits on: its stamp will be the new one's. */
		if (!op_sk_reliable(&os->sk))
			continue;
		op_admit_unqueue(os, fail);
		op_sock_wake_writer(&os->sk);
	}
	list_for_each_entry_safe(t, tmp, &on->rdm_active, active) {
		skb_queue_splice_tail_init(&t->out, fail);
		list_del_init(&t->active);
	}
	on->rdm_unacked = 0;
	xa_for_each(&on->peers, host, p)
		op_rdm_tx_restart(on, p);
}

/**
 * op_rdm_peer_reset() - start the reliable service towards @host afresh
 * @on: this host
 * @host: the peer, a new incarnation of a failed host (or of this one)
 *
 * What is still queued to it fails (nothing should be: it failed);
 * sequence numbers, window and round-trip state start over, as the new
 * incarnation's receiving half does.  Context: process.
 */
void op_rdm_peer_reset(struct op_net *on, u32 host)
{
	struct op_peer *p = xa_load(&on->peers, host);
	struct sk_buff_head done, fail;
	struct op_rdm_tx *t;
	u32 reserved;

	if (!p)
		return;
	t = &p->rtx;
	__skb_queue_head_init(&done);
	__skb_queue_head_init(&fail);
	spin_lock_bh(&on->tx_lock);
	op_rdm_unreachable_locked(on, p, true, &fail);
	op_rdm_settle(on, &done);
	/* Credits that waiting scatterings hold here keep their count. */
	reserved = t->reserved;
	op_rdm_tx_restart(on, p);
	t->reserved = reserved;
	op_admit_pump(on, &fail);
	spin_unlock_bh(&on->tx_lock);
	op_rdm_finish(&done, &fail);
}

/**
 * op_rdm_recalls_pending() - are recalls still waiting for their ACKs?
 * @on: this host
 *
 * A failure is complete here once the recalls it started are ACKed (or
 * failed in turn).  Walks every queued message: called from the tick only
 * while a failure is pending.
 */
bool op_rdm_recalls_pending(struct op_net *on)
{
	struct op_rdm_tx *t;
	struct sk_buff *skb;
	bool any = false;

	spin_lock_bh(&on->tx_lock);
	list_for_each_entry(t, &on->rdm_active, active) {
		skb_queue_walk(&t->out, skb) {
			if (OP_MSG_CB(skb)->state == OP_RDM_RECALLING) {
				any = true;
				goto out;
			}
		}
	}
out:
	spin_unlock_bh(&on->tx_lock);
	return any;
}

/*
 * A message (or recall) to @t's peer is out of retries.  Without a
 * controller the peer is given up (true).  With one, that is the
 * controller's decision: tell it (the tick sends the event), keep
 * resending at the longest interval until it decides or the peer answers,
 * and relay every packet for the peer through it meanwhile (relay.c).
 */
static bool op_rdm_out_of_retries(struct op_net *on, struct op_rdm_tx *t)
{
	struct op_peer *p = container_of(t, struct op_peer, rtx);

	/* Decided already: what is left to it only fails. */
	if (!READ_ONCE(on->controlled) || READ_ONCE(p->failed))
		return true;
	/*
	 * Again at every timeout while it lasts: an event may be lost (a
	 * full socket at the agent), and the controller may be restarting.
	 */
	t->report_due = true;
	on->rdm_report = true;
	/*
	 * The controller may still reach it where the network does not:
	 * from this resend on, every packet for it goes both ways.
	 */
	if (!t->relay) {
		t->relay_seq = t->next;
		WRITE_ONCE(t->relay, true);
	}
	return false;
}

/* Collect up to @max peers whose out-of-retries report is due. */
static unsigned int op_rdm_reports(struct op_net *on, u32 *hosts,
				   unsigned int max)
{
	unsigned int n = 0;
	struct op_rdm_tx *t;

	if (!on->rdm_report)
		return 0;
	on->rdm_report = false;
	list_for_each_entry(t, &on->rdm_active, active) {
		if (!t->report_due)
			continue;
		if (n == max) {
			on->rdm_report = true;	/* the next tick */
			break;
		}
		t->report_due = false;
		hosts[n++] = container_of(t, struct op_peer, rtx)->host;
	}
	return n;
}

/*
 * Tail-loss probe: no ACK for two round trips.  If the last message was
 * lost, no later ACK can make RACK notice it: send it again; the ACK of
 * this copy lets RACK judge everything sent before.  One probe, then the
 * timeout.
 */
static void op_rdm_tlp(struct op_net *on, struct op_rdm_tx *t, u64 now)
{
	unsigned int budget = READ_ONCE(on->rdm_retries);
	struct sk_buff *skb;

	t->tlp_at = 0;
	t->tlp_out = true;
	skb_queue_reverse_walk(&t->out, skb) {
		struct op_msg_cb *cb = OP_MSG_CB(skb);

		if (cb->state != OP_RDM_SENT)
			continue;
		if (cb->retries >= budget)
			return;
		cb->retries++;
		if (op_rdm_resend(on, skb))
			cb->sent_us = op_ns_to_us(now);
		else
			cb->retries--;	/* the timeout tries again */
		return;
	}
}

/*
 * Retransmission timeout: nothing was ACKed for an RTO.  Send the first
 * unACKed message again and back off, as TCP does.  If the receiver only
 * fell silent for a while (a stalled CPU, a long queue), the originals'
 * ACKs come before this copy's and nothing more is resent; if messages
 * were lost, this copy's ACK lets RACK resend at once all that was sent
 * before it.  False if it is out of retries: the receiver is given up.
 *
 * A copy that could not be built for want of memory here spends no retry
 * and doubles nothing: it says nothing about the path or the receiver
 * (TCP does the same on local congestion).  It is tried again after the
 * timeout without its backoff.  Otherwise a short shortage would make
 * the retry budget run out, or the backoff keep the commit barrier,
 * and with it every host's reliable delivery, waiting for seconds.
 */
static bool op_rdm_timeout(struct op_net *on, struct op_rdm_tx *t, u64 now)
{
	unsigned int budget = READ_ONCE(on->rdm_retries);
	struct sk_buff *skb = t->una;

	if (skb) {
		skb_queue_walk_from(&t->out, skb) {
			struct op_msg_cb *cb = OP_MSG_CB(skb);
			bool spent = cb->retries < budget;

			if (cb->state != OP_RDM_SENT)
				continue;
			if (!spent && op_rdm_out_of_retries(on, t))
				return false;
			cb->retries += spent;
			if (!op_rdm_resend(on, skb)) {
				cb->retries -= spent;
				t->rto_at = now + op_rdm_rto_backoff(on, t, 0);
				/* The timeout goes first, then the probe. */
				t->tlp_at = 0;
				return true;
			}
			cb->sent_us = op_ns_to_us(now);
			break;
		}
	}
	if (t->backoff < OP_RDM_BACKOFF_MAX)
		t->backoff++;
	t->rto_at = now + op_rdm_rto(on, t);
	/* No probe until an ACK answers. */
	t->tlp_at = 0;
	t->tlp_out = true;
	return true;
}

/*
 * Run the loss-detection timers of every peer that has messages in
 * flight.  Returns a peer whose message exhausted the retry budget, or
 * NULL.
 */
static struct op_peer *op_rdm_timers(struct op_net *on, u64 now)
{
	struct op_rdm_tx *t;

	list_for_each_entry(t, &on->rdm_active, active) {
		if (!t->inflight) {
			op_rdm_disarm(t);
			continue;
		}
		/*
		 * One of the three per pass, the strongest due: each resends,
		 * and a second copy of the same message in one pass would
		 * only burn a retry and make its ACK look needless.
		 */
		if (t->rto_at && (s64)(now - t->rto_at) >= 0) {
			if (!op_rdm_timeout(on, t, now))
				return container_of(t, struct op_peer, rtx);
		} else if (t->tlp_at && (s64)(now - t->tlp_at) >= 0) {
			op_rdm_tlp(on, t, now);
		} else if (t->reo_at && (s64)(now - t->reo_at) >= 0) {
			op_rdm_rack_detect(on, t, now);
		}
	}
	return NULL;
}

/*
 * Send again the recalls that have waited longer than their timeout.
 * Returns a peer whose recall exhausted the retry budget, or NULL.
 */
static struct op_peer *op_rdm_recall_due(struct op_net *on, u64 now)
{
	unsigned int budget = READ_ONCE(on->rdm_retries);
	struct op_rdm_tx *t;
	struct sk_buff *skb;

	list_for_each_entry(t, &on->rdm_active, active) {
		skb_queue_walk(&t->out, skb) {
			struct op_msg_cb *cb = OP_MSG_CB(skb);
			bool spent = cb->retries < budget;

			if (cb->state != OP_RDM_RECALLING ||
			    (s64)(now - cb->deadline) < 0)
				continue;
			if (!spent && op_rdm_out_of_retries(on, t))
				return container_of(t, struct op_peer, rtx);
			/*
			 * One not sent for want of memory spends no retry and
			 * no backoff, as in op_rdm_timeout().
			 */
			if (op_rdm_send_recall(on, skb)) {
				cb->retries += spent;
				op_count(on, ONEPIPE_C_RETRANSMITS);
			}
			cb->deadline = op_rdm_deadline(on, t, cb, now);
		}
	}
	return NULL;
}

/*
 * Probe the peers that hold waiting scatterings back, for their window,
 * and those that must learn about abandoned messages.
 */
static void op_rdm_probe(struct op_net *on, u64 now)
{
	struct op_peer *p;
	unsigned long host;

	xa_for_each(&on->peers, host, p) {
		struct op_rdm_tx *t = &p->rtx;
		struct op_hdr h = {
			.type = OP_PKT_PROBE,
			.flags = OP_F_RELIABLE,
		};

		if ((!t->sync && (t->blocked_gen != on->admit_gen ||
				  list_empty(&on->waitq))) ||
		    (s64)(now - t->probe_at) < 0)
			continue;
		/*
		 * A failed host hears nothing from us until it rejoins: a
		 * probe would tell its new incarnation to skip sequence
		 * numbers it has not used yet.
		 */
		if (READ_ONCE(p->failed))
			continue;
		/* The checks run every tick; the clock is read for a probe. */
		h.src_host = on->cfg.host_id;
		h.dst_host = p->host;
		/* Its stamp: a rejoined receiver ignores old ones. */
		h.ts = op_clock_floor(&on->clock, op_now(on));
		h.barrier = on->tx_barrier;
		h.seq = op_rdm_settled(t);
		t->probe_at = now + op_rdm_rto(on, t);
		op_rdm_xmit_hdr(on, p, &h);
		op_count(on, ONEPIPE_C_WINDOW_PROBES);
	}
}

/**
 * op_rdm_tx_tick() - loss detection timers, recalls, retry budget, probes,
 *	settling
 * @on: this host
 * @now: ktime_get_ns()
 *
 * Context: the tick (softirq).
 */
void op_rdm_tx_tick(struct op_net *on, u64 now)
{
	u64 scan = (u64)READ_ONCE(on->rdm_rto_min_ms) * NSEC_PER_MSEC / 4;
	struct sk_buff_head done, fail;
	unsigned int i, nrep = 0;
	struct op_peer *dead;
	u32 rep[8];

	__skb_queue_head_init(&done);
	__skb_queue_head_init(&fail);
	spin_lock_bh(&on->tx_lock);
	if (!on->up)
		goto out;
	while ((dead = op_rdm_timers(on, now)))
		op_rdm_unreachable_locked(on, dead, false, &fail);
	/* Recalls are rare: their timeouts are only looked at now and then. */
	if ((s64)(now - on->rdm_retx_at) >= 0) {
		on->rdm_retx_at = now + scan;
		while ((dead = op_rdm_recall_due(on, now)))
			op_rdm_unreachable_locked(on, dead, false, &fail);
	}
	op_admit_pump(on, &fail);
	op_rdm_probe(on, now);
	op_rdm_settle(on, &done);
	nrep = op_rdm_reports(on, rep, ARRAY_SIZE(rep));
out:
	spin_unlock_bh(&on->tx_lock);
	op_rdm_finish(&done, &fail);
	for (i = 0; i < nrep; i++)
		op_nl_ev_unreach(on, rep[i]);
}

/**
 * op_rdm_fail_all() - the host went down: every reliable message fails
 * @on: this host
 * @code: enum onepipe_ee_code
 *
 * Nothing can be recalled any more; receivers that hold ACKed messages
 * deliver them if the rest of the fabric commits them.
 */
void op_rdm_fail_all(struct op_net *on, int code)
{
	struct sk_buff_head fail, done;
	struct op_rdm_tx *t, *tmp;
	struct op_scat *sc, *stmp;
	struct sk_buff *skb;
	struct op_peer *p;
	unsigned long host;

	__skb_queue_head_init(&fail);
	__skb_queue_head_init(&done);
	spin_lock_bh(&on->tx_lock);
	list_for_each_entry_safe(sc, stmp, &on->waitq, node) {
		struct op_sock *os = container_of(sc, struct op_sock, scat);

		op_admit_unqueue(os, &fail);
		op_sock_wake_writer(&os->sk);
	}
	list_for_each_entry_safe(t, tmp, &on->rdm_active, active) {
		skb_queue_walk(&t->out, skb)
			t->sync |= OP_MSG_CB(skb)->state != OP_RDM_ACKED;
		skb_queue_splice_tail_init(&t->out, &fail);
		t->una = NULL;
		t->inflight = 0;
		op_rdm_disarm(t);
		list_del_init(&t->active);
	}
	on->rdm_unacked = 0;
	/* The next transport starts with the network's word, not ours. */
	xa_for_each(&on->peers, host, p)
		WRITE_ONCE(p->rtx.relay, false);
	spin_unlock_bh(&on->tx_lock);
	while ((skb = __skb_dequeue(&fail)))
		op_sock_fail(skb->sk, skb, code);
}
