// SPDX-License-Identifier: GPL-2.0
/*
 * Process failures of the reliable service, as the controller decides
 * them (onepiped, the paper's §5.2): a FAIL names a failed host and its
 * failure timestamp, the same on every correct host.  Applying it here:
 *
 *  - Discard: the failed host's reliable messages stamped at or after
 *    the failure timestamp are never delivered (op_fail_discards(): those
 *    buffered are dropped when the commit barrier reaches them, later
 *    copies on arrival); those before it were committed by the failed
 *    host and are delivered once the switches drop its links from their
 *    commit minimums (the controller's Resume, after every correct host
 *    completed);
 *  - Recall: every scattering to the failed host that is not committed
 *    is recalled (op_rdm_peer_failed());
 *  - Callback: every SOCK_RDM socket gets a process-failure notification
 *    on its error queue, and holds back delivery of messages stamped at
 *    or after the failure until the application acknowledges it
 *    (ONEPIPE_FAILURE_ACK) or net.onepipe.failure_hold_ms passes;
 *  - once the recalls are ACKed, the host tells the controller
 *    (ONEPIPE_CMD_EV_FAIL_DONE).
 *
 * A failed host that comes back rejoins as a new incarnation
 * (ONEPIPE_CMD_REJOIN): it forgets its reliable state (what it had not
 * delivered was decided without it), and every correct host starts its
 * sequence numbers towards and from it over, while still discarding
 * what the old incarnation stamped from its failure timestamp on.
 *
 * Failure records live in the peer (struct op_peer, under rx_lock) and
 * are kept for the namespace's lifetime: a failed host's old messages
 * must stay discarded.
 */
#include <linux/errqueue.h>

#include "onepipe.h"

/*
 * Hold @os's delivery and queue a process-failure notification on it.
 * RCU read side (the port table) held.
 */
static void op_fail_notify_sock(struct op_net *on, struct op_sock *os,
				u32 epoch, u32 host, u64 ts, u64 until)
{
	struct sock *sk = &os->sk;
	struct op_err_cb *ecb;
	struct sk_buff *skb;
	bool dead;

	if (!op_sk_reliable(sk) || !refcount_inc_not_zero(&sk->sk_refcnt))
		return;
	/*
	 * The hold first: an application that reads the notification and
	 * acknowledges it at once must find the epoch notified.  A socket
	 * being released gets neither (its purge may have run already).
	 */
	spin_lock_bh(&on->rx_lock);
	dead = sock_flag(sk, SOCK_DEAD);
	if (!dead && until) {
		if (!os->held) {
			os->held = true;
			os->hold_ts = ts;
			WRITE_ONCE(on->nholds, on->nholds + 1);
		} else if (op_ts_before(ts, os->hold_ts)) {
			os->hold_ts = ts;
		}
		os->hold_until = until;
	}
	if (!dead && (s32)(epoch - os->notified_epoch) > 0)
		os->notified_epoch = epoch;
	spin_unlock_bh(&on->rx_lock);

	skb = dead ? NULL : alloc_skb(0, GFP_ATOMIC);
	if (skb) {
		ecb = OP_ERR_CB(skb);
		memset(ecb, 0, sizeof(*ecb));
		ecb->err.ee.ee_errno = EHOSTDOWN;
		ecb->err.ee.ee_origin = SO_EE_ORIGIN_LOCAL;
		ecb->err.ee.ee_code = ONEPIPE_EE_PROC_FAILED;
		ecb->err.ee.ee_data = epoch;
		ecb->err.offender.sop_family = AF_ONEPIPE;
		ecb->err.offender.sop_host = host;
		ecb->ts = ts;
		/*
		 * Past the receive buffer's limit if need be (a busy socket
		 * is the one that must not miss it); it is a few hundred
		 * bytes, once per failure.
		 */
		skb_set_owner_r(skb, sk);
		skb_queue_tail(&sk->sk_error_queue, skb);
		sk_error_report(sk);
		op_count(on, ONEPIPE_C_FAIL_NOTIFIES);
	}
	sock_put(sk);
}

/* Callback: tell every reliable socket of this host. */
static void op_fail_notify(struct op_net *on, u32 epoch, u32 host, u64 ts)
{
	u64 hold = (u64)READ_ONCE(on->failure_hold_ms) * NSEC_PER_MSEC;
	u64 until = hold ? ktime_get_ns() + hold : 0;
	struct op_sock *os;
	int bkt;

	rcu_read_lock();
	hash_for_each_rcu(on->ports, bkt, os, bind_node)
		op_fail_notify_sock(on, os, epoch, host, ts, until);
	rcu_read_unlock();
}

/*
 * End @os's hold: what it kept back goes to the application.  rx_lock
 * held; window updates for the senders are appended to @ctl.
 */
static void op_fail_unhold(struct op_net *on, struct op_sock *os,
			   struct sk_buff_head *ctl)
{
	if (!os->held)
		return;
	os->held = false;
	WRITE_ONCE(on->nholds, on->nholds - 1);
	op_rdm_feed(on, os, ctl);
}

/**
 * op_fail_sock_release() - a reliable socket goes: forget its hold
 * @on: this host; rx_lock held
 * @os: the socket, its backlog purged
 */
void op_fail_sock_release(struct op_net *on, struct op_sock *os)
{
	lockdep_assert_held(&on->rx_lock);
	if (os->held) {
		os->held = false;
		WRITE_ONCE(on->nholds, on->nholds - 1);
	}
}

/**
 * op_fail_ack() - the application handled failures up to @epoch
 * @on: this host
 * @os: the socket (ONEPIPE_FAILURE_ACK)
 * @epoch: the latest epoch it handled
 *
 * Return: 0, or -EINVAL if @epoch was not notified on @os.
 */
int op_fail_ack(struct op_net *on, struct op_sock *os, u32 epoch)
{
	struct sk_buff_head ctl;
	int err = 0;

	__skb_queue_head_init(&ctl);
	spin_lock_bh(&on->rx_lock);
	/* Nothing notified, or an epoch not notified yet. */
	if (!epoch || !os->notified_epoch ||
	    (s32)(epoch - os->notified_epoch) > 0)
		err = -EINVAL;
	else if (epoch == os->notified_epoch)
		op_fail_unhold(on, os, &ctl);
	/* An older epoch: a later failure still waits for its callback. */
	spin_unlock_bh(&on->rx_lock);
	op_tx_ctl(on, &ctl);
	return err;
}

/*
 * Send ONEPIPE_CMD_EV_FAIL_DONE for every failure whose recalls are over.
 * Process context or the tick.
 */
static void op_fail_check_done(struct op_net *on)
{
	struct { u32 epoch, host; } done[8];
	unsigned int i, n = 0;
	struct op_peer *p;
	unsigned long host;

	if (!READ_ONCE(on->fail_pending))
		return;
	spin_lock_bh(&on->rx_lock);
	/*
	 * Under rx_lock: a FAIL arming its failure meanwhile (after its
	 * recalls went out) is either seen with them or not at all.
	 */
	if (op_rdm_recalls_pending(on)) {
		spin_unlock_bh(&on->rx_lock);
		return;
	}
	xa_for_each(&on->peers, host, p) {
		if (!p->failed || !p->fail_armed || p->fail_done)
			continue;
		if (n == ARRAY_SIZE(done))
			break;		/* the rest at the next tick */
		p->fail_done = true;
		WRITE_ONCE(on->fail_pending, on->fail_pending - 1);
		done[n].epoch = p->fail_epoch;
		done[n].host = p->host;
		n++;
	}
	spin_unlock_bh(&on->rx_lock);
	for (i = 0; i < n; i++)
		op_nl_ev_fail_done(on, done[i].epoch, done[i].host);
}

/*
 * End the holds whose time is up.  The port table is walked only while a
 * hold exists.
 */
static void op_fail_expire_holds(struct op_net *on)
{
	u64 now = ktime_get_ns();
	struct sk_buff_head ctl;
	struct op_sock *os;
	int bkt;

	if (!READ_ONCE(on->nholds))
		return;
	__skb_queue_head_init(&ctl);
	rcu_read_lock();
	spin_lock_bh(&on->rx_lock);
	hash_for_each_rcu(on->ports, bkt, os, bind_node) {
		if (os->held && (s64)(now - os->hold_until) >= 0)
			op_fail_unhold(on, os, &ctl);
	}
	spin_unlock_bh(&on->rx_lock);
	rcu_read_unlock();
	op_tx_ctl(on, &ctl);
}

/**
 * op_fail_tick() - failure handling's periodic work
 * @on: this host
 *
 * Context: the tick (softirq).
 */
void op_fail_tick(struct op_net *on)
{
	op_fail_check_done(on);
	op_fail_expire_holds(on);
}

/*
 * This host failed and comes back: a new incarnation.  What it had sent
 * and was not committed fails (ONEPIPE_EE_DOWN), what it held and had not
 * delivered is dropped (the others decided without it), and every peer's
 * reliable state starts over, as theirs about us does when they apply our
 * rejoin.  All of it under rx_lock and tx_lock at once: a send or an
 * arrival in between would mix old and new sequence numbers.  Returns the
 * incarnation's first timestamp: everything stamped before it is the old
 * one's, everything after, the new one's.  cfg_mutex held.
 */
static u64 op_fail_new_incarnation(struct op_net *on)
{
	struct sk_buff_head fail;
	struct sk_buff *skb;
	struct op_peer *p;
	unsigned long host;
	u64 first;

	__skb_queue_head_init(&fail);
	spin_lock_bh(&on->rx_lock);
	op_rdm_rx_forget(on);
	xa_for_each(&on->peers, host, p)
		op_rx_peer_reset(on, p);
	spin_lock(&on->tx_lock);
	op_rdm_tx_incarnation(on, &fail);
	first = op_clock_barrier(&on->clock, op_now(on));
	spin_unlock(&on->tx_lock);
	spin_unlock_bh(&on->rx_lock);
	/* Nothing the old incarnation said reaches anybody from now on. */
	op_relay_forget(on, ONEPIPE_HOST_LOCAL);
	while ((skb = __skb_dequeue(&fail)))
		op_sock_fail(skb->sk, skb, ONEPIPE_EE_DOWN);
	return first;
}

/* REJOIN of this host itself; cfg_mutex held. */
static int op_fail_rejoin_self(struct op_net *on, u32 epoch, u64 *first,
			       struct netlink_ext_ack *extack)
{
	/*
	 * A controller that took over re-sends its decisions: the same
	 * rejoin twice is one incarnation, or the peers, which started over
	 * once, would take our restarted sequence numbers for copies.
	 */
	if (on->incarnation_epoch == epoch) {
		*first = on->incarnation_first;
		return 0;
	}
	if (on->incarnation_epoch &&
	    (s32)(epoch - on->incarnation_epoch) < 0) {
		NL_SET_ERR_MSG(extack, "an older rejoin than this incarnation");
		return -ESTALE;
	}
	on->incarnation_first = op_fail_new_incarnation(on);
	on->incarnation_epoch = epoch;
	*first = on->incarnation_first;
	return 0;
}

/**
 * op_fail_rejoin() - a failed host rejoins as a new incarnation
 * @on: this host
 * @epoch: the controller's decision
 * @host: the host that rejoins, or this host's own id
 * @has_first: @first is given (required for another host)
 * @first: in: the new incarnation's first timestamp, for the others; out:
 *	on the host itself, that timestamp
 * @self: out: @host was this host
 * @extack: for the reason of a refusal
 *
 * On the host itself, its reliable state starts over; on the others,
 * their reliable state about it.  The controller sends it to the host
 * first, then, with the timestamp the host returned, to the others; until
 * then they ignore what the new incarnation sends (it resends).  What the
 * old incarnation stamped from its failure timestamp on stays discarded,
 * and whatever it stamped before @first is ignored on arrival.  The same
 * decision again is answered as the first time; an older one is refused.
 *
 * Context: process (ONEPIPE_CMD_REJOIN).  Return: 0 or -errno.
 */
int op_fail_rejoin(struct op_net *on, u32 epoch, u32 host, bool has_first,
		   u64 *first, bool *self, struct netlink_ext_ack *extack)
{
	struct op_peer *p;
	int err = 0;

	mutex_lock(&on->cfg_mutex);
	*self = host == on->cfg.host_id;
	if (*self) {
		err = op_fail_rejoin_self(on, epoch, first, extack);
		goto out;
	}
	if (!has_first) {
		NL_SET_ERR_MSG(extack,
			       "another host's rejoin needs its first timestamp");
		err = -EINVAL;
		goto out;
	}
	p = xa_load(&on->peers, host);
	spin_lock_bh(&on->rx_lock);
	if (!p || (!p->failed && !p->rejoined)) {
		NL_SET_ERR_MSG(extack, "host has not failed");
		err = -ENOENT;
	} else if (!p->failed) {
		/* Rejoined: the same decision again, or a stale one. */
		if (epoch != p->rejoin_epoch) {
			NL_SET_ERR_MSG(extack, "host has not failed again");
			err = -ESTALE;
		}
	} else if ((s32)(epoch - p->fail_epoch) <= 0) {
		NL_SET_ERR_MSG(extack, "a rejoin older than the failure");
		err = -ESTALE;
	} else if (op_ts_before(*first, p->fail_ts)) {
		NL_SET_ERR_MSG(extack,
			       "first timestamp before the failure timestamp");
		err = -EINVAL;
	}
	spin_unlock_bh(&on->rx_lock);
	if (err || !p->failed)
		goto out;
	op_rdm_peer_reset(on, host);
	spin_lock_bh(&on->rx_lock);
	op_rx_peer_reset(on, p);
	p->fail_end = *first;
	p->rejoin_epoch = epoch;
	p->rejoined = true;
	WRITE_ONCE(p->failed, false);
	if (!p->fail_done) {
		/* Nobody waits for it any more. */
		p->fail_done = true;
		p->fail_armed = true;
		WRITE_ONCE(on->fail_pending, on->fail_pending - 1);
	}
	spin_unlock_bh(&on->rx_lock);
out:
	mutex_unlock(&on->cfg_mutex);
	return err;
}

/**
 * op_fail_apply() - apply the controller's decision that @host failed
 * @on: this host
 * @epoch: the decision's number
 * @host: the failed host
 * @ts: its failure timestamp
 * @extack: for the reason of a refusal
 *
 * Idempotent: the same failure again only answers EV_FAIL_DONE again
 * once it is complete (a controller that took over re-sends what it does
 * not know to be done).
 *
 * Context: process (ONEPIPE_CMD_FAIL).  Return: 0 or -errno.
 */
int op_fail_apply(struct op_net *on, u32 epoch, u32 host, u64 ts,
		  struct netlink_ext_ack *extack)
{
	struct op_peer *p;
	bool again = false;
	int err = 0;

	mutex_lock(&on->cfg_mutex);
	if (host == on->cfg.host_id) {
		/* The controller lost us; our own fate is a rejoin's. */
		NL_SET_ERR_MSG(extack, "cannot apply this host's own failure");
		err = -EINVAL;
		goto out;
	}
	p = op_peer_get(on, host, GFP_KERNEL);
	if (!p) {
		NL_SET_ERR_MSG(extack, "no memory, or too many peers");
		err = -ENOSPC;
		goto out;
	}
	spin_lock_bh(&on->rx_lock);
	if (p->rejoined && !p->failed &&
	    (s32)(epoch - p->rejoin_epoch) <= 0) {
		/* A re-sent decision about the incarnation that rejoined. */
		spin_unlock_bh(&on->rx_lock);
		goto out;
	}
	if (p->failed) {
		if (p->fail_ts != ts) {
			NL_SET_ERR_MSG(extack,
				       "host already failed at another timestamp");
			err = -EEXIST;
		} else if ((s32)(epoch - p->fail_epoch) > 0) {
			/* Re-sent in a later decision: answer for that one. */
			p->fail_epoch = epoch;
		}
		again = p->fail_done;
		epoch = p->fail_epoch;
		spin_unlock_bh(&on->rx_lock);
		if (!err && again)
			op_nl_ev_fail_done(on, epoch, host);
		goto out;
	}
	p->fail_ts = ts;
	p->fail_epoch = epoch;
	p->fail_done = false;
	p->fail_armed = false;
	p->rejoined = false;
	WRITE_ONCE(p->failed, true);
	WRITE_ONCE(on->nfailed, on->nfailed + 1);
	WRITE_ONCE(on->fail_pending, on->fail_pending + 1);
	spin_unlock_bh(&on->rx_lock);
	op_count(on, ONEPIPE_C_FAILURES);

	op_rdm_peer_failed(on, host);
	op_relay_forget(on, host);
	/* Its recalls are out: from now on their end is its end. */
	spin_lock_bh(&on->rx_lock);
	p->fail_armed = true;
	spin_unlock_bh(&on->rx_lock);
	op_fail_notify(on, epoch, host, ts);
	op_fail_check_done(on);
out:
	mutex_unlock(&on->cfg_mutex);
	return err;
}
