// SPDX-License-Identifier: GPL-2.0
/*
 * Admission of scatterings, both services: a scattering is stamped and
 * sent only once every one of its messages holds a credit towards its
 * destination.  Until then it waits on op_net.waitq, unstamped, with its
 * packets built, and its socket is not writable (a socket has at most one
 * waiting scattering, so its scatterings keep the order it sent them in).
 *
 * Credits come from each destination peer:
 *  - reliable: the receiver's window (the sequence numbers it grants) and
 *    the congestion window (rdm_tx.c);
 *  - best effort: net.onepipe.be_window messages on the wire and not yet
 *    ACKed, NAKed or expired.  Without it a saturating sender would queue
 *    more than the fabric carries within the ACK timeout: its messages
 *    would expire on the way, and the socket would keep accepting them.
 *
 * Credits go to waiting scatterings in queue order per destination, so a
 * large scattering is never starved by small ones and a slow destination
 * only holds back the scatterings that use it.  With nothing in flight to
 * a destination it always gives credit, so that a scattering needing more
 * than a whole window still goes (no ACK would come to open it).
 *
 * Everything here runs under tx_lock: stamping order is wire order.
 */
#include "onepipe.h"

static u32 op_be_window(struct op_net *on)
{
	return clamp_t(u32, READ_ONCE(on->be_window), 1, OP_BE_WINDOW_MAX);
}

/* Can @msg, to its peer, take a credit now? */
static bool op_admit_credit(struct op_net *on, struct op_msg_cb *cb)
{
	struct op_peer *p = cb->peer;

	if (cb->flags & OP_F_RELIABLE) {
		struct op_rdm_tx *t = &p->rtx;

		if ((s32)(t->edge - t->next) - (s32)t->reserved <= 0)
			return false;
		/*
		 * With nothing in flight no ACK will come to open the
		 * congestion window: then only the receiver's window counts
		 * (a scattering may need more than a cut window holds).
		 */
		if (t->inflight + t->reserved < t->cwnd || !t->inflight) {
			t->reserved++;
			return true;
		}
		return false;
	}
	if (skb_queue_len(&p->outstanding) + p->be_reserved <
	    op_be_window(on) || skb_queue_empty(&p->outstanding)) {
		p->be_reserved++;
		return true;
	}
	return false;
}

/* Give back the credit @msg holds. */
static void op_admit_uncredit(struct op_msg_cb *cb)
{
	if (!cb->credited)
		return;
	if (cb->flags & OP_F_RELIABLE)
		cb->peer->rtx.reserved--;
	else
		cb->peer->be_reserved--;
	cb->credited = 0;
}

/* Take what credits @sc can get; true once each message holds one. */
static bool op_admit_take(struct op_net *on, struct op_scat *sc, u32 gen)
{
	struct sk_buff *msg;

	skb_queue_walk(&sc->msgs, msg) {
		struct op_msg_cb *cb = OP_MSG_CB(msg);
		u32 *blocked = cb->flags & OP_F_RELIABLE ?
			       &cb->peer->rtx.blocked_gen :
			       &cb->peer->be_blocked_gen;

		if (cb->credited)
			continue;
		/*
		 * Credits go to waiting scatterings in queue order: once one
		 * found none here, later ones may not take this peer's.
		 */
		if (*blocked != gen && op_admit_credit(on, cb)) {
			cb->credited = 1;
			sc->missing--;
		} else {
			*blocked = gen;
		}
	}
	return !sc->missing;
}

/*
 * True if @msgs send more reliable messages to some host than that host's
 * window (as far as its ACKs told it) can ever hold at once: such a
 * scattering would wait forever.  Counts in each peer's @need, then
 * clears it.  A best-effort window has no such limit (see the top).
 */
static bool op_admit_too_big(struct sk_buff_head *msgs)
{
	struct sk_buff *msg;
	bool big = false;

	skb_queue_walk(msgs, msg) {
		struct op_msg_cb *cb = OP_MSG_CB(msg);
		struct op_rdm_tx *t = &cb->peer->rtx;

		if (!(cb->flags & OP_F_RELIABLE))
			return false;
		if (t->win && ++t->need > t->win)
			big = true;
	}
	skb_queue_walk(msgs, msg)
		OP_MSG_CB(msg)->peer->rtx.need = 0;
	return big;
}

/*
 * True if one of @msgs is a reliable message to a host the controller
 * declared failed: it could only be recalled, and while it were resent
 * its stamp would hold the commit barrier of the whole fabric.
 */
static bool op_admit_to_failed(struct op_net *on, struct sk_buff_head *msgs)
{
	struct sk_buff *msg;

	if (likely(!READ_ONCE(on->nfailed)))
		return false;
	skb_queue_walk(msgs, msg) {
		struct op_msg_cb *cb = OP_MSG_CB(msg);

		if ((cb->flags & OP_F_RELIABLE) && READ_ONCE(cb->peer->failed))
			return true;
	}
	return false;
}

/**
 * op_admit_unqueue() - a waiting scattering will not be sent
 * @os: its socket
 * @msgs: its messages are appended here, their credits given back
 *
 * Its packets are freed.  Caller holds tx_lock and wakes the socket's
 * writers.
 */
void op_admit_unqueue(struct op_sock *os, struct sk_buff_head *msgs)
{
	struct op_scat *sc = &os->scat;
	struct sk_buff *msg;

	list_del_init(&sc->node);
	skb_queue_walk(&sc->msgs, msg)
		op_admit_uncredit(OP_MSG_CB(msg));
	skb_queue_splice_tail_init(&sc->msgs, msgs);
	__skb_queue_purge(&sc->wire);
	WRITE_ONCE(os->waiting, false);
}

/*
 * A receiver's window turned out smaller than what @os's waiting
 * scattering needs from it (@err EMSGSIZE), or a receiver failed
 * (EHOSTDOWN): the scattering fails whole, unstamped, with @err (its
 * messages go on @fail).
 */
static void op_admit_refuse(struct op_sock *os, int err,
			    struct sk_buff_head *fail)
{
	struct sk_buff_head msgs;
	struct sk_buff *msg;

	__skb_queue_head_init(&msgs);
	op_count(op_net(sock_net(&os->sk)), ONEPIPE_C_TX_ABORTED);
	op_admit_unqueue(os, &msgs);
	skb_queue_walk(&msgs, msg) {
		OP_MSG_CB(msg)->state = ONEPIPE_EE_ABORTED;
		OP_MSG_CB(msg)->err = err;
	}
	skb_queue_splice_tail_init(&msgs, fail);
	op_sock_wake_writer(&os->sk);
}

/**
 * op_admit_pump() - send every waiting scattering that has its credits now
 * @on: this host; tx_lock held
 * @fail: if not NULL, also refuse the scatterings that some receiver's
 *	window, newly learnt, can never hold, or that go to a failed host;
 *	their messages are appended here (cb->state holds the code)
 */
void op_admit_pump(struct op_net *on, struct sk_buff_head *fail)
{
	struct op_scat *sc, *tmp;
	u32 gen;

	lockdep_assert_held(&on->tx_lock);
	/* Down: the fail_all paths are about to fail whatever waits. */
	if (list_empty(&on->waitq) || !on->up)
		return;
	gen = ++on->admit_gen;
	list_for_each_entry_safe(sc, tmp, &on->waitq, node) {
		struct op_sock *os = container_of(sc, struct op_sock, scat);

		if (fail && sc->win_gen != on->rdm_win_gen) {
			sc->win_gen = on->rdm_win_gen;
			if (op_admit_too_big(&sc->msgs)) {
				op_admit_refuse(os, EMSGSIZE, fail);
				continue;
			}
		}
		if (fail && op_admit_to_failed(on, &sc->msgs)) {
			op_admit_refuse(os, EHOSTDOWN, fail);
			continue;
		}
		if (!op_admit_take(on, sc, gen))
			continue;
		list_del_init(&sc->node);
		if (op_sk_reliable(&os->sk))
			op_rdm_send(on, os);
		else
			op_tx_send(on, os, &sc->msgs, &sc->wire);
		WRITE_ONCE(os->waiting, false);
		op_sock_wake_writer(&os->sk);
	}
}

/**
 * op_admit_close() - a scattering is complete: admit it
 * @on: this host; tx_lock held, host up
 * @os: the socket (locked), whose pending messages form the scattering;
 *	it has no other scattering waiting
 * @wire: the messages' packets, taken over unless this fails
 *
 * The scattering goes out now if every destination has credit for it,
 * otherwise it waits with what credits it could take; os->waiting says
 * which.  While it waits, its packets are charged to the socket's send
 * buffer like its messages (a clone, op_msg_packets(), for the buffer
 * it shares with its message: counted twice while it waits).
 *
 * Return: 0, or -EMSGSIZE if some reliable receiver's window can never
 * hold it, -EHOSTDOWN if a reliable receiver was declared failed (nothing
 * is taken over then).
 */
int op_admit_close(struct op_net *on, struct op_sock *os,
		   struct sk_buff_head *wire)
{
	struct op_scat *sc = &os->scat;
	struct sk_buff *pkt;

	if (op_admit_too_big(&os->pending))
		return -EMSGSIZE;
	if (op_admit_to_failed(on, &os->pending))
		return -EHOSTDOWN;
	skb_queue_splice_tail_init(&os->pending, &sc->msgs);
	skb_queue_splice_tail_init(wire, &sc->wire);
	sc->missing = skb_queue_len(&sc->msgs);
	sc->win_gen = on->rdm_win_gen;
	list_add_tail(&sc->node, &on->waitq);
	WRITE_ONCE(os->waiting, true);
	op_admit_pump(on, NULL);
	if (!os->waiting)
		return 0;
	op_count(on, ONEPIPE_C_WINDOW_STALLS);
	skb_queue_walk(&sc->wire, pkt)
		skb_set_owner_w(pkt, &os->sk);
	return 0;
}

/**
 * op_admit_forget_sock() - a socket is being released
 * @on: this host
 * @os: the socket
 *
 * Its waiting scattering was never stamped and goes, and the credits it
 * held go to the others.
 */
void op_admit_forget_sock(struct op_net *on, struct op_sock *os)
{
	struct sk_buff_head gone;

	__skb_queue_head_init(&gone);
	spin_lock_bh(&on->tx_lock);
	if (os->waiting) {
		op_admit_unqueue(os, &gone);
		op_admit_pump(on, NULL);
	}
	spin_unlock_bh(&on->tx_lock);
	__skb_queue_purge(&gone);
}
