// SPDX-License-Identifier: GPL-2.0
/*
 * The sending half of a 1Pipe host: stamping scatterings, fragmenting
 * them into packets, beacons, control packets, and tracking every message
 * until its end-to-end ACK arrives or it is reported as failed.
 *
 * Everything that goes on the wire goes through tx_lock, which makes the
 * order of stamps (and of the barriers they imply) the order of packets
 * on the uplink: a barrier must never overtake a smaller timestamp.
 */
#include <linux/slab.h>

#include "onepipe.h"

/**
 * op_pkt_alloc() - a packet with room for the header and @payload bytes
 * @on: this host (its transport's headroom is reserved)
 * @payload: bytes after the 1Pipe header
 * @gfp: allocation flags
 *
 * The packets the host builds come from here: data (but the best-effort
 * messages op_msg_packets() clones), beacons, ACKs, NAKs, recalls and
 * probes, in process context and in softirq; so this is where
 * fail_onepipe (fault_inject.c) fails them.
 *
 * Return: the packet, data at the header, or NULL without memory.
 */
struct sk_buff *op_pkt_alloc(struct op_net *on, unsigned int payload,
			     gfp_t gfp)
{
	unsigned int hr = READ_ONCE(on->headroom);
	struct sk_buff *skb;

	if (op_fault_alloc())
		return NULL;
	skb = alloc_skb(hr + OP_HDR_LEN + payload, gfp | __GFP_NOWARN);
	if (!skb)
		return NULL;
	skb_reserve(skb, hr);
	skb_put(skb, OP_HDR_LEN + payload);
	return skb;
}

/**
 * op_xmit_list() - hand packets to the transport, in order
 * @on: this host; tx_lock held, BHs off
 * @pkts: the packets, each header written with the barrier it carries;
 *	emptied
 *
 * Every packet also carries the host's commit barrier as of now (see
 * rdm_tx.c); it never goes back, so take the max for the switch's
 * register.  Callers hand over together what one send produced, which
 * the transport may bundle into one datagram (core/wire.h).
 */
void op_xmit_list(struct op_net *on, struct sk_buff_head *pkts)
{
	unsigned int n = skb_queue_len(pkts);
	struct sk_buff *skb;
	int failed;
	u64 c;

	lockdep_assert_held(&on->tx_lock);
	if (!n)
		return;
	/* The transport may be gone: host down ran while a socket closed. */
	if (!on->up) {
		__skb_queue_purge(pkts);
		return;
	}
	c = op_rdm_commit(on);
	on->tx_commit = on->tx_commit_valid ? op_ts_max(on->tx_commit, c) : c;
	on->tx_commit_valid = true;
	skb_queue_walk(pkts, skb) {
		/*
		 * A waiting scattering's packets were charged to their
		 * socket; on the wire they are the transport's.
		 */
		skb_orphan(skb);
		op_hdr_set_commit(skb->data, on->tx_commit);
	}
	failed = on->tops->xmit(on, pkts);
	op_count_add(on, ONEPIPE_C_TX_PKTS, n - failed);
	if (failed)
		op_count_add(on, ONEPIPE_C_TX_ERRORS, failed);
}

/* op_xmit_list() of one packet. */
void op_xmit(struct op_net *on, struct sk_buff *skb)
{
	struct sk_buff_head one;

	__skb_queue_head_init(&one);
	__skb_queue_tail(&one, skb);
	op_xmit_list(on, &one);
}

/**
 * op_msg_headroom() - room to reserve in front of a new message
 * @on: this host
 * @len: the message's length
 * @reliable: it is the reliable service's
 *
 * A best-effort message that fits one packet is sent from its own
 * buffer (op_msg_packets()): the room for the 1Pipe header and the
 * transport's headers is reserved when sendmsg() allocates it.
 *
 * Return: bytes to skb_reserve(), 0 for a message that is copied.
 */
unsigned int op_msg_headroom(struct op_net *on, size_t len, bool reliable)
{
	if (reliable || len > READ_ONCE(on->frag_size))
		return 0;
	return READ_ONCE(on->headroom) + OP_HDR_LEN;
}

/**
 * op_msg_packets() - cut one message into wire packets (headers unwritten)
 * @on: this host
 * @msg: the message; its cb's nfrags is set
 * @wire: the packets are appended here
 * @gfp: allocation flags
 *
 * A best-effort message of one packet is sent once, never again (it is
 * only kept for a failure notification, which reads its payload), so its
 * packet is a clone whose header goes in the room op_msg_headroom()
 * left: written once, under tx_lock, before the transport gets it.  The
 * message gives its headroom up to the clone (__skb_header_release()),
 * so the transport pushes its own headers there without a copy.  That
 * spares an allocation and a copy per message, most of what a small
 * message costs to send.  Reliable messages are sent again, each copy
 * with a header of its own, while a transport may still read an earlier
 * one (verbs sends from the buffer asynchronously): they are copied, as
 * is a message without room for the header (the transport came up since
 * sendmsg()).  A transport that needs more room than the message has
 * makes it (skb_cow_head()).
 *
 * Return: 0, -ENETDOWN without a transport, -ENOBUFS without memory (the
 * packets already appended stay on @wire for the caller to purge).
 */
int op_msg_packets(struct op_net *on, struct sk_buff *msg,
		   struct sk_buff_head *wire, gfp_t gfp)
{
	unsigned int fsz = READ_ONCE(on->frag_size), off = 0, fl;
	struct op_msg_cb *cb = OP_MSG_CB(msg);
	struct sk_buff *pkt;

	if (!fsz)
		return -ENETDOWN;
	cb->nfrags = 0;
	if (msg->len <= fsz && !(cb->flags & OP_F_RELIABLE) &&
	    skb_headroom(msg) >= OP_HDR_LEN) {
		if (!skb_cloned(msg))
			__skb_header_release(msg);
		pkt = op_fault_alloc() ? NULL : skb_clone(msg, gfp);
		if (!pkt)
			return -ENOBUFS;
		__skb_push(pkt, OP_HDR_LEN);
		__skb_queue_tail(wire, pkt);
		cb->nfrags = 1;
		return 0;
	}
	do {
		fl = min(msg->len - off, fsz);
		pkt = op_pkt_alloc(on, fl, gfp);
		if (!pkt)
			return -ENOBUFS;
		skb_copy_bits(msg, off, pkt->data + OP_HDR_LEN, fl);
		__skb_queue_tail(wire, pkt);
		cb->nfrags++;
		off += fl;
	} while (off < msg->len);
	return 0;
}

/* Cut every pending message into wire packets, outside any lock. */
static int op_build_packets(struct op_net *on, struct op_sock *os,
			    struct sk_buff_head *wire)
{
	struct sk_buff *msg;
	int err;

	skb_queue_walk(&os->pending, msg) {
		struct op_msg_cb *cb = OP_MSG_CB(msg);

		cb->peer = op_peer_get(on, cb->dst_host, GFP_KERNEL);
		if (!cb->peer)
			return -ENOBUFS;
		err = op_msg_packets(on, msg, wire, GFP_KERNEL);
		if (err)
			return err;
	}
	return 0;
}

/*
 * A packet with our current barrier and commit left, and the fabric reads
 * them from every packet: the uplink is up to date, and busy for a while
 * (kernel/core/push.h).  Resends and probes carry an older barrier and do
 * not count.  Caller holds tx_lock.
 */
static void op_tx_carried(struct op_net *on)
{
	if (on->beacon_barriers)
		return;
	on->tx_stale = false;
	op_push_carried(&on->push, ktime_get_ns());
}

/**
 * op_xmit_copy() - write the headers of a message's packets, to be sent
 * @on: this host; tx_lock held
 * @msg: the message, stamped and numbered (its cb says everything)
 * @wire: holds the message's packets first, as op_msg_packets() made them
 * @copy: 0 the first time; a reliable resend says which copy it is
 *	(kernel/core/wire.h; best effort carries its deadline there instead)
 * @out: the packets are appended here, for op_xmit_list()
 *
 * The packets carry the last barrier sent: for a first transmission
 * that is the scattering's own stamp, since its later messages have the
 * same one.  While the controller relays for a reliable message's peer,
 * it gets a copy of each packet (relay.c).
 */
void op_xmit_copy(struct op_net *on, struct sk_buff *msg,
		  struct sk_buff_head *wire, u8 copy, struct sk_buff_head *out)
{
	const struct op_msg_cb *cb = OP_MSG_CB(msg);
	struct op_hdr h = {
		.type = OP_PKT_DATA,
		.flags = cb->flags,
		.code = cb->flags & OP_F_RELIABLE ? copy : cb->dl_code,
		.src_host = on->cfg.host_id,
		.dst_host = cb->dst_host,
		.src_port = cb->src_port,
		.dst_port = cb->dst_port,
		.ts = cb->ts,
		.barrier = on->tx_barrier,
		.seq = cb->seq,
		.aux = msg->len,
		.frag_cnt = cb->nfrags,
	};
	/* A reliable receiver the network lost: the controller carries it. */
	bool relay = (cb->flags & OP_F_RELIABLE) && cb->peer &&
		     unlikely(cb->peer->rtx.relay);

	for (h.frag_idx = 0; h.frag_idx < h.frag_cnt; h.frag_idx++) {
		struct sk_buff *pkt = __skb_dequeue(wire);

		op_hdr_encode(&h, pkt->data);
		if (relay)
			op_relay_out(on, pkt->data, pkt->len);
		__skb_queue_tail(out, pkt);
	}
}

/**
 * op_xmit_msg() - queue a message's first transmission
 * @on: this host; tx_lock held
 * @msg: the message, stamped and numbered
 * @wire: holds its packets first, as op_msg_packets() made them
 * @out: its packets are appended here; the caller hands them to
 *	op_xmit_list() before it lets go of tx_lock
 */
void op_xmit_msg(struct op_net *on, struct sk_buff *msg,
		 struct sk_buff_head *wire, struct sk_buff_head *out)
{
	op_xmit_copy(on, msg, wire, 0, out);
	op_tx_carried(on);
}

/* Stamp a scattering: one timestamp, above all this host delivered. */
u64 op_tx_stamp(struct op_net *on, struct op_sock *os)
{
	u64 ts;

	lockdep_assert_held(&on->tx_lock);
	/* Causality: stamp above everything this host has delivered. */
	if (READ_ONCE(on->rx_seen))
		op_clock_observe(&on->clock, READ_ONCE(on->rx_max_ts));
	ts = op_clock_stamp(&on->clock, op_now(on));
	/* Later messages of this scattering carry the same stamp. */
	on->tx_barrier = ts;
	os->last_ts = ts;
	os->has_last_ts = true;
	return ts;
}

/**
 * op_tx_abort() - refuse a socket's pending scattering as a whole
 * @os: the socket; its lock is held
 * @own: the last pending message is the failing call's own, which reports
 *	the error itself: it is freed
 * @err: the refusal's error
 *
 * Nothing of the scattering was stamped.  The messages earlier calls
 * accepted come back on the error queue with timestamp 0 and @err, so
 * that the sender learns that none of them left (sendmmsg() counted them
 * as sent before a later entry failed).
 */
void op_tx_abort(struct op_sock *os, bool own, int err)
{
	int code = err == -ENETDOWN ? ONEPIPE_EE_DOWN : ONEPIPE_EE_ABORTED;
	struct sk_buff *skb;

	if (own || !skb_queue_empty(&os->pending))
		op_count(op_net(sock_net(&os->sk)), ONEPIPE_C_TX_ABORTED);
	if (own)
		kfree_skb(__skb_dequeue_tail(&os->pending));
	while ((skb = __skb_dequeue(&os->pending))) {
		OP_MSG_CB(skb)->ts = 0;
		OP_MSG_CB(skb)->err = -err;
		op_sock_fail(&os->sk, skb, code);
	}
	os->pending_bytes = 0;
}

/**
 * op_tx_deadline_need() - how long after its stamp a best-effort message
 *	to @p must stay deliverable
 * @on: this host; tx_lock held
 * @p: the destination
 * @ts: the message's timestamp
 *
 * core/deadline.h's rule with this host's sysctls: at least
 * ack_timeout_ms, up to be_deadline_max_ms as the delay measured towards
 * @p asks, timers as coarse as a beacon interval.
 *
 * Return: nanoseconds after @ts.
 */
u64 op_tx_deadline_need(struct op_net *on, struct op_peer *p, u64 ts)
{
	u64 floor = (u64)READ_ONCE(on->ack_timeout_ms) * NSEC_PER_MSEC;
	u64 cap = (u64)READ_ONCE(on->be_deadline_max_ms) * NSEC_PER_MSEC;

	lockdep_assert_held(&on->tx_lock);
	return op_deadline_need(&p->be_dl, ts, floor, cap, op_interval_ns(on));
}

/**
 * op_tx_send() - stamp a best-effort scattering and send it
 * @on: this host; tx_lock held
 * @os: the sending socket
 * @msgs: its messages, each holding a credit (admit.c); emptied
 * @wire: their packets, in @msgs order; emptied
 *
 * All messages get one timestamp, and one deadline: receivers deliver
 * them only until then.  It is ack_timeout_ms after the stamp, or more
 * if the delay measured towards one of the destinations asks for it
 * (core/deadline.h), rounded up to what the wire carries (core/wire.h).
 * They wait on their destination peer's outstanding queue for the
 * end-to-end ACK, or for the answer to a query once the deadline passed
 * (op_tx_expire()).
 */
void op_tx_send(struct op_net *on, struct op_sock *os,
		struct sk_buff_head *msgs, struct sk_buff_head *wire)
{
	unsigned int nmsgs = skb_queue_len(msgs);
	u64 ts = op_tx_stamp(on, os);
	struct sk_buff_head out;
	u64 need = 0, deadline;
	struct sk_buff *msg;
	u8 dl;

	__skb_queue_head_init(&out);
	skb_queue_walk(msgs, msg)
		need = max(need, op_tx_deadline_need(on, OP_MSG_CB(msg)->peer,
						     ts));
	dl = op_deadline_pick(need);
	deadline = op_ts_add(ts, op_deadline_ns(dl));
	while ((msg = __skb_dequeue(msgs))) {
		struct op_msg_cb *cb = OP_MSG_CB(msg);

		/* Its credit becomes the message itself, outstanding. */
		cb->peer->be_reserved--;
		cb->credited = 0;
		cb->ts = ts;
		cb->deadline = deadline;
		cb->dl_code = dl;
		cb->retries = 0;
		cb->seq = cb->peer->tx_seq++;
		op_deadline_given(&cb->peer->be_dl, deadline);
		op_xmit_msg(on, msg, wire, &out);
		__skb_queue_tail(&cb->peer->outstanding, msg);
	}
	op_xmit_list(on, &out);
	op_count(on, ONEPIPE_C_TX_SCATTERINGS);
	op_count_add(on, ONEPIPE_C_TX_MSGS, nmsgs);
}

/**
 * op_tx_scattering() - the socket's pending scattering is complete
 * @on: this host
 * @os: the sending socket; its lock is held
 * @own: the last pending message is the current sendmsg() call's
 *
 * Its packets are built here, outside any lock; then it is admitted
 * (admit.c): stamped and sent at once if every destination has credit
 * for it, or else left waiting for credits, unstamped.
 *
 * Return: 0, -ENETDOWN if the host is down, -ENOBUFS without memory,
 * -EMSGSIZE if a reliable receiver's window can never hold the
 * scattering, -EHOSTDOWN if a reliable receiver failed.  On error
 * nothing is sent: see op_tx_abort() for what the sender hears.
 */
int op_tx_scattering(struct op_net *on, struct op_sock *os, bool own)
{
	struct sk_buff_head wire;
	int err;

	__skb_queue_head_init(&wire);
	/* Checked again under tx_lock; this spares building for nothing. */
	err = READ_ONCE(on->up) ? op_build_packets(on, os, &wire) : -ENETDOWN;
	if (err)
		goto out_drop;

	spin_lock_bh(&on->tx_lock);
	err = on->up ? op_admit_close(on, os, &wire) : -ENETDOWN;
	spin_unlock_bh(&on->tx_lock);
	if (err)
		goto out_drop;
	os->pending_bytes = 0;
	return 0;

out_drop:
	__skb_queue_purge(&wire);
	op_tx_abort(os, own, err);
	return err;
}

/**
 * op_ctl_push() - build a control packet for later sending
 * @on: this host
 * @ctl: list the packet is appended to; send it with op_tx_ctl()
 * @h: its header; the barrier and commit fields are filled in at sending
 *
 * Control packets are built under rx_lock but sent after it is dropped,
 * since tx_lock nests inside rx_lock only for short sections.
 */
void op_ctl_push(struct op_net *on, struct sk_buff_head *ctl,
		 const struct op_hdr *h)
{
	struct sk_buff *skb = op_pkt_alloc(on, 0, GFP_ATOMIC);

	if (!skb) {
		op_count(on, ONEPIPE_C_TX_ERRORS);
		return;
	}
	op_hdr_encode(h, skb->data);
	__skb_queue_tail(ctl, skb);
}

/**
 * op_ctl_queue() - build a best-effort ACK or NAK for later sending
 * @on: this host
 * @ctl: list the packet is appended to; send it with op_tx_ctl()
 * @type: OP_PKT_ACK or OP_PKT_NAK
 * @dst_host: the host the packet is for
 * @seq: first sequence number (ACK) or the sequence number (NAK)
 * @aux: last sequence number (ACK)
 * @code: enum op_nak_code (NAK)
 * @ts: a NAK's time, see core/wire.h; 0 for an ACK
 */
void op_ctl_queue(struct op_net *on, struct sk_buff_head *ctl, u8 type,
		  u32 dst_host, u32 seq, u32 aux, u8 code, u64 ts)
{
	struct op_hdr h = {
		.type = type,
		.code = code,
		.src_host = READ_ONCE(on->cfg.host_id),
		.dst_host = dst_host,
		.ts = ts,
		.seq = seq,
		.aux = aux,
	};

	op_ctl_push(on, ctl, &h);
}

/**
 * op_tx_ctl_at() - send control packets built by op_ctl_queue()
 * @on: this host
 * @ctl: the packets; emptied
 * @at: wall-clock instant (op_now() time) of the barrier they carry
 *
 * Each carries the host's barrier as of @at: the tick passes its own
 * instant, so that the ACKs it sends do not move the barrier its beacon
 * just gave (each move makes switches push it on); the others, now.
 */
void op_tx_ctl_at(struct op_net *on, struct sk_buff_head *ctl, u64 at)
{
	struct sk_buff *skb;

	if (skb_queue_empty(ctl))
		return;
	spin_lock_bh(&on->tx_lock);
	if (!on->up) {
		spin_unlock_bh(&on->tx_lock);
		__skb_queue_purge(ctl);
		return;
	}
	on->tx_barrier = op_clock_barrier(&on->clock, at);
	skb_queue_walk(ctl, skb) {
		op_hdr_set_barrier(skb->data, on->tx_barrier);
		if (skb->data[1] == OP_PKT_ACK)
			op_count(on, ONEPIPE_C_TX_ACKS);
		else if (skb->data[1] == OP_PKT_NAK)
			op_count(on, ONEPIPE_C_TX_NAKS);
	}
	/* One event's answers travel together (a bundle, core/wire.h). */
	op_xmit_list(on, ctl);
	op_tx_carried(on);
	spin_unlock_bh(&on->tx_lock);
}

/*
 * Send a beacon carrying the barrier as of wall-clock time @at (and the
 * commit barrier as of now, see op_xmit_list()).  Caller holds tx_lock.
 */
static void op_tx_beacon(struct op_net *on, u64 at)
{
	struct op_hdr h = { .type = OP_PKT_BEACON };
	struct sk_buff *skb;

	lockdep_assert_held(&on->tx_lock);
	skb = op_pkt_alloc(on, 0, GFP_ATOMIC);
	if (!skb)
		return;
	on->tx_barrier = op_clock_barrier(&on->clock, at);
	h.src_host = on->cfg.host_id;
	h.barrier = on->tx_barrier;
	op_hdr_encode(&h, skb->data);
	op_xmit(on, skb);
	op_count(on, ONEPIPE_C_TX_BEACONS);
	/* Up to date, but not busy: a beacon does not wait for a next one. */
	on->tx_stale = false;
}

/* How long after one of our packets the uplink still counts as busy. */
static u64 op_tx_busy_ns(struct op_net *on)
{
	return on->beacon_barriers ? 0 : op_interval_ns(on) / OP_PUSH_BUSY_DIV;
}

/*
 * The uplink lacks news (tx_stale): beacon now if the pacing of
 * kernel/core/push.h allows, else when it will.  Caller holds tx_lock.
 */
static void op_tx_push(struct op_net *on)
{
	u64 gap = op_interval_ns(on) / OP_PUSH_GAP_DIV, now = ktime_get_ns();
	u64 at = op_push_time(&on->push, now, gap, op_tx_busy_ns(on));

	lockdep_assert_held(&on->tx_lock);
	if ((s64)(at - now) > 0) {
		/* The callback takes tx_lock: start, never cancel, here. */
		if (!hrtimer_is_queued(&on->push_timer))
			hrtimer_start(&on->push_timer, ns_to_ktime(at),
				      HRTIMER_MODE_ABS_SOFT);
		return;
	}
	op_push_sent(&on->push, now, gap);
	op_tx_beacon(on, op_now(on));
}

/**
 * op_tx_tick() - the tick's beacon
 * @on: this host
 * @tick: the tick's instant on this host's 1Pipe clock (op_now())
 *
 * Every host and switch ticks at the same instants.  The beacon carries
 * the tick's instant rather than the moment the timer ran: then all idle
 * hosts whose clocks agree promise the same barrier, and a switch's
 * minimum moves once, when the last of them is heard, rather than a
 * little with each (every move costs a pushed beacon downstream).  A
 * host that sent within the busy window leaves its barrier to its next
 * packet, and beacons only if none comes (op_tx_push()).
 *
 * Context: the tick (softirq).
 */
void op_tx_tick(struct op_net *on, u64 tick)
{
	u64 now = ktime_get_ns(), busy = op_tx_busy_ns(on);

	spin_lock_bh(&on->tx_lock);
	if (!on->up)
		goto out;
	on->tx_stale = true;
	if (busy && on->push.carried &&
	    (s64)(on->push.last_carried + busy - now) > 0)
		op_tx_push(on);
	else
		op_tx_beacon(on, tick);
out:
	spin_unlock_bh(&on->tx_lock);
}

/**
 * op_tx_commit_moved() - a reliable ACK or NAK arrived: tell the uplink
 * @on: this host
 *
 * It may let the commit barrier pass messages that only wait for it at
 * their receivers (op_rdm_commit_news()).  An idle uplink would carry
 * the news only at the next tick; a beacon now (paced, op_tx_push())
 * carries it at once.
 *
 * Context: softirq.
 */
void op_tx_commit_moved(struct op_net *on)
{
	spin_lock_bh(&on->tx_lock);
	if (!on->up || !op_rdm_commit_news(on))
		goto out;
	on->tx_stale = true;
	op_tx_push(on);
out:
	spin_unlock_bh(&on->tx_lock);
}

/**
 * op_tx_push_fn() - a deferred push fell due
 * @t: op_net.push_timer
 *
 * Return: HRTIMER_NORESTART; op_tx_push() starts it again if need be.
 */
enum hrtimer_restart op_tx_push_fn(struct hrtimer *t)
{
	struct op_net *on = container_of(t, struct op_net, push_timer);

	spin_lock_bh(&on->tx_lock);
	if (on->up && on->tx_stale)
		op_tx_push(on);
	spin_unlock_bh(&on->tx_lock);
	return HRTIMER_NORESTART;
}

static void op_fail_list(struct sk_buff_head *list, int code)
{
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(list)))
		op_sock_fail(skb->sk, skb, code);
}

/**
 * op_tx_acked() - the peer acknowledged messages [@lo, @hi]
 * @on: this host
 * @host: the peer
 * @lo: first sequence number
 * @hi: last sequence number
 *
 * Outstanding messages are in sequence order, so the walk stops at the
 * first one past @hi.  Messages before @lo stay: they may still be ACKed
 * later, or time out.
 *
 * The range times the delay towards the peer (core/deadline.h) once, by
 * its oldest message not asked about: a range is ACKed when a batch is
 * delivered, and its oldest message waited longest, which is what a
 * deadline must cover.
 */
void op_tx_acked(struct op_net *on, u32 host, u32 lo, u32 hi)
{
	struct op_peer *p = xa_load(&on->peers, host);
	struct sk_buff *skb, *tmp;
	struct sk_buff_head done;
	unsigned int n = 0;
	bool timed = false;
	u64 timed_ts = 0;

	if (!p)
		return;
	__skb_queue_head_init(&done);
	spin_lock_bh(&on->tx_lock);
	skb_queue_walk_safe(&p->outstanding, skb, tmp) {
		struct op_msg_cb *cb = OP_MSG_CB(skb);

		if ((s32)(cb->seq - lo) < 0)
			continue;
		if ((s32)(cb->seq - hi) > 0)
			break;
		/* Karn: once asked about, the ACK may be the answer. */
		if (!timed && !cb->retries) {
			timed = true;
			timed_ts = cb->ts;
		}
		__skb_unlink(skb, &p->outstanding);
		__skb_queue_tail(&done, skb);
		n++;
	}
	if (timed)
		op_deadline_sample(&p->be_dl, timed_ts, op_ts(op_now(on)));
	/* The window opened: scatterings waiting for it may go. */
	if (n)
		op_admit_pump(on, NULL);
	spin_unlock_bh(&on->tx_lock);
	/* Freeing returns send-buffer space and wakes writers: no locks. */
	__skb_queue_purge(&done);
	op_count_add(on, ONEPIPE_C_ACKED, n);
}

/**
 * op_tx_naked() - the peer refused message @seq
 * @on: this host
 * @host: the peer
 * @seq: the message
 * @code: enum op_nak_code, which equals the enum onepipe_ee_code reported
 * @at: when the peer refused it on its way to delivery, or closed it for
 *	a query while it waited there, by the peer's 1Pipe clock; 0 if the
 *	NAK says nothing of the delay (core/wire.h)
 *
 * That time, less the message's stamp, is (at least) the delay the
 * message took to reach delivery: a sample for the deadlines towards the
 * peer (core/deadline.h) whether or not the message was asked about,
 * since it is the peer's instant, not when the NAK was sent or came.
 */
void op_tx_naked(struct op_net *on, u32 host, u32 seq, u8 code, u64 at)
{
	struct op_peer *p = xa_load(&on->peers, host);
	struct sk_buff *skb, *tmp, *found = NULL;

	if (!p)
		return;
	spin_lock_bh(&on->tx_lock);
	skb_queue_walk_safe(&p->outstanding, skb, tmp) {
		struct op_msg_cb *cb = OP_MSG_CB(skb);

		if ((s32)(cb->seq - seq) > 0)
			break;
		if (cb->seq != seq)
			continue;
		if (at)
			op_deadline_sample(&p->be_dl, cb->ts, at);
		__skb_unlink(skb, &p->outstanding);
		found = skb;
		op_admit_pump(on, NULL);
		break;
	}
	spin_unlock_bh(&on->tx_lock);
	if (found)
		op_sock_fail(found->sk, found, code);
}

/* Queries about one message before its fate is reported unknown. */
#define OP_BE_QUERIES	4

/*
 * How long a query's answer may take: the message's deadline (its
 * length after the stamp, deadline code @dl) over the queries, so that
 * the delay measured towards the peer paces them too.
 */
static u64 op_query_gap_ns(u8 dl)
{
	return max_t(u64, op_deadline_ns(dl) / OP_BE_QUERIES, NSEC_PER_MSEC);
}

/*
 * Ask @p about messages [@lo, @hi], the first stamped @ts (OP_PKT_QUERY).
 * Caller holds tx_lock; the packet goes out with @ctl once it is dropped.
 */
static void op_tx_query(struct op_net *on, struct sk_buff_head *ctl,
			struct op_peer *p, u32 lo, u32 hi, u64 ts)
{
	struct op_hdr h = {
		.type = OP_PKT_QUERY,
		.src_host = READ_ONCE(on->cfg.host_id),
		.dst_host = p->host,
		.ts = ts,
		.seq = lo,
		.aux = hi,
	};
	unsigned int n = skb_queue_len(ctl);

	op_ctl_push(on, ctl, &h);
	if (skb_queue_len(ctl) > n)
		op_count(on, ONEPIPE_C_TX_QUERIES);
}

/**
 * op_tx_expire() - ask about messages past their deadline without an ACK
 * @on: this host
 * @now_mono: ktime_get_ns()
 *
 * A best-effort message not ACKed by its deadline (by this host's 1Pipe
 * clock) is not reported failed on a guess: its receiver is asked, and
 * its answer, an ACK or a NAK (op_tx_acked(), op_tx_naked()), settles
 * it.  The question goes again every op_query_gap_ns(); after
 * OP_BE_QUERIES of them the message is reported as ONEPIPE_EE_UNKNOWN.
 *
 * Deadlines never go down along an outstanding queue (op_tx_send() and
 * core/deadline.h see to it), so the messages being asked about are its
 * head, and the walk stops at the first one whose deadline is still
 * ahead.  (If ack_timeout_ms or be_deadline_max_ms shrinks, a later
 * message may have the earlier deadline: it is asked about late, never
 * wrongly.)  Context: the tick.
 */
void op_tx_expire(struct op_net *on, u64 now_mono)
{
	u64 now_ts = op_ts(op_now(on));
	struct sk_buff_head failed, ctl;
	unsigned int unknown = 0;
	struct op_peer *p;
	unsigned long host;

	__skb_queue_head_init(&failed);
	__skb_queue_head_init(&ctl);
	spin_lock_bh(&on->tx_lock);
	xa_for_each(&on->peers, host, p) {
		struct sk_buff *skb, *tmp;
		bool asking = false;
		u32 lo = 0, hi = 0;
		u64 lo_ts = 0;

		skb_queue_walk_safe(&p->outstanding, skb, tmp) {
			struct op_msg_cb *cb = OP_MSG_CB(skb);

			if (!cb->retries) {
				if (!op_ts_after(now_ts, cb->deadline))
					break;
			} else if ((s64)(now_mono - cb->deadline) < 0) {
				continue;
			}
			if (cb->retries >= OP_BE_QUERIES) {
				__skb_unlink(skb, &p->outstanding);
				__skb_queue_tail(&failed, skb);
				unknown++;
				continue;
			}
			cb->retries++;
			cb->deadline = now_mono + op_query_gap_ns(cb->dl_code);
			if (asking && cb->seq - lo < OP_QUERY_MAX) {
				hi = cb->seq;
				continue;
			}
			if (asking)
				op_tx_query(on, &ctl, p, lo, hi, lo_ts);
			asking = true;
			lo = cb->seq;
			hi = cb->seq;
			lo_ts = cb->ts;
		}
		if (asking)
			op_tx_query(on, &ctl, p, lo, hi, lo_ts);
	}
	if (unknown)
		op_admit_pump(on, NULL);
	spin_unlock_bh(&on->tx_lock);
	op_tx_ctl(on, &ctl);
	op_count_add(on, ONEPIPE_C_TX_UNKNOWN, unknown);
	op_fail_list(&failed, ONEPIPE_EE_UNKNOWN);
}

/**
 * op_tx_fail_all() - report every outstanding message as failed
 * @on: this host, whose transport is down
 * @code: enum onepipe_ee_code
 */
void op_tx_fail_all(struct op_net *on, int code)
{
	struct sk_buff_head failed;
	struct op_peer *p;
	unsigned long host;

	__skb_queue_head_init(&failed);
	spin_lock_bh(&on->tx_lock);
	xa_for_each(&on->peers, host, p)
		skb_queue_splice_tail_init(&p->outstanding, &failed);
	spin_unlock_bh(&on->tx_lock);
	op_fail_list(&failed, code);
	op_rdm_fail_all(on, code);
}

/**
 * op_tx_forget_sock() - drop the outstanding messages of a closed socket
 * @on: this host
 * @sk: the socket, being released
 *
 * Nobody is left to be told about their fate, and dropping them now
 * releases the socket (and the module) without waiting for ACK timeouts.
 * Reliable messages already stamped stay: the other messages of their
 * scatterings may be delivered only if they are (see rdm_tx.c).
 */
void op_tx_forget_sock(struct op_net *on, struct sock *sk)
{
	struct sk_buff_head gone;
	struct sk_buff *skb, *tmp;
	struct op_peer *p;
	unsigned long host;

	__skb_queue_head_init(&gone);
	spin_lock_bh(&on->tx_lock);
	xa_for_each(&on->peers, host, p) {
		skb_queue_walk_safe(&p->outstanding, skb, tmp) {
			if (skb->sk != sk)
				continue;
			__skb_unlink(skb, &p->outstanding);
			__skb_queue_tail(&gone, skb);
		}
	}
	if (!skb_queue_empty(&gone))
		op_admit_pump(on, NULL);
	spin_unlock_bh(&on->tx_lock);
	__skb_queue_purge(&gone);
}
