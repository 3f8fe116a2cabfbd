// SPDX-License-Identifier: GPL-2.0
/*
 * AF_ONEPIPE socket family: socket calls, ports, module init.
 *
 * A socket is a 1Pipe process: (host id, port).  sendmsg() queues a
 * message into the scattering being built; the last message of a
 * sendmmsg() call, or a sendmsg() without MSG_MORE, closes the scattering
 * and tx.c stamps and sends it.  Received messages arrive already in
 * total order (rx.c) on sk_receive_queue; send failures arrive on
 * sk_error_queue.
 */
#include <linux/module.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <linux/errqueue.h>
#include <asm/ioctls.h>
#include <net/sock.h>

#include "onepipe.h"

static struct proto op_proto = {
	.name		= "ONEPIPE",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct op_sock),
};

/* Port table ------------------------------------------------------------ */

struct sock *op_port_lookup_rcu(struct op_net *on, u16 port)
{
	struct op_sock *os;

	hash_for_each_possible_rcu(on->ports, os, bind_node, port)
		if (os->port == port)
			return &os->sk;
	return NULL;
}

static bool op_port_used(struct op_net *on, u16 port)
{
	struct op_sock *os;

	lockdep_assert_held(&on->port_lock);
	hash_for_each_possible(on->ports, os, bind_node, port)
		if (os->port == port)
			return true;
	return false;
}

/* Bind @os to @port, or to a free ephemeral port when @port is 0. */
static int op_port_bind(struct op_net *on, struct op_sock *os, u16 port)
{
	const u16 span = 65535 - ONEPIPE_PORT_EPHEMERAL + 1;
	int err = 0;
	u16 i;

	spin_lock_bh(&on->port_lock);
	if (!port) {
		for (i = 0; i < span; i++) {
			u16 p = ONEPIPE_PORT_EPHEMERAL +
				(on->next_port + i) % span;

			if (!op_port_used(on, p)) {
				port = p;
				on->next_port = (on->next_port + i + 1) % span;
				break;
			}
		}
		if (!port)
			err = -EADDRINUSE;
	} else if (op_port_used(on, port)) {
		err = -EADDRINUSE;
	}
	if (!err) {
		os->port = port;
		hash_add_rcu(on->ports, &os->bind_node, port);
	}
	spin_unlock_bh(&on->port_lock);
	return err;
}

static void op_port_unbind(struct op_net *on, struct op_sock *os)
{
	if (!os->port)
		return;
	spin_lock_bh(&on->port_lock);
	hash_del_rcu(&os->bind_node);
	spin_unlock_bh(&on->port_lock);
}

unsigned int op_sock_count(struct op_net *on)
{
	unsigned int n = 0, bkt;
	struct op_sock *os;

	rcu_read_lock();
	hash_for_each_rcu(on->ports, bkt, os, bind_node)
		n++;
	rcu_read_unlock();
	return n;
}

/* Addresses ---------------------------------------------------------------- */

/*
 * Check a user-supplied address; host 0 means this host.  Errors follow
 * the inet conventions: a short address is EINVAL, another family
 * EAFNOSUPPORT.
 */
static int op_addr_check(struct op_net *on, const struct sockaddr *addr,
			 int len, struct sockaddr_onepipe *out)
{
	const struct sockaddr_onepipe *sop = (const void *)addr;

	if (len < (int)sizeof(*sop))
		return -EINVAL;
	if (sop->sop_family != AF_ONEPIPE)
		return -EAFNOSUPPORT;
	*out = *sop;
	if (out->sop_host == ONEPIPE_HOST_LOCAL)
		out->sop_host = READ_ONCE(on->cfg.host_id);
	return 0;
}

static int op_autobind(struct op_net *on, struct op_sock *os)
{
	return os->port ? 0 : op_port_bind(on, os, 0);
}

/* Socket calls ------------------------------------------------------------- */

static int op_bind(struct socket *sock, struct sockaddr *addr, int len)
{
	struct sock *sk = sock->sk;
	struct op_sock *os = op_sk(sk);
	struct op_net *on = op_net(sock_net(sk));
	const struct sockaddr_onepipe *sop = (const void *)addr;
	int err;

	if (len < (int)sizeof(*sop))
		return -EINVAL;
	if (sop->sop_family != AF_ONEPIPE)
		return -EAFNOSUPPORT;
	if (sop->sop_host != ONEPIPE_HOST_LOCAL &&
	    sop->sop_host != READ_ONCE(on->cfg.host_id))
		return -EADDRNOTAVAIL;

	lock_sock(sk);
	err = os->port ? -EINVAL : op_port_bind(on, os, sop->sop_port);
	release_sock(sk);
	return err;
}

static int op_connect(struct socket *sock, struct sockaddr *addr, int len,
		      int flags)
{
	struct sock *sk = sock->sk;
	struct op_sock *os = op_sk(sk);
	struct sockaddr_onepipe dst;
	int err;

	if (len >= (int)sizeof(addr->sa_family) &&
	    addr->sa_family == AF_UNSPEC) {
		lock_sock(sk);
		os->connected = false;
		release_sock(sk);
		return 0;
	}
	err = op_addr_check(op_net(sock_net(sk)), addr, len, &dst);
	if (err)
		return err;
	if (!dst.sop_port)
		return -EINVAL;

	lock_sock(sk);
	os->peer = dst;
	os->connected = true;
	release_sock(sk);
	return 0;
}

static int op_getname(struct socket *sock, struct sockaddr *addr, int peer)
{
	struct op_sock *os = op_sk(sock->sk);
	struct sockaddr_onepipe *sop = (void *)addr;

	lock_sock(sock->sk);
	if (peer) {
		if (!os->connected) {
			release_sock(sock->sk);
			return -ENOTCONN;
		}
		*sop = os->peer;
	} else {
		memset(sop, 0, sizeof(*sop));
		sop->sop_family = AF_ONEPIPE;
		sop->sop_port = os->port;
		sop->sop_host = READ_ONCE(op_net(sock_net(sock->sk))->cfg.host_id);
	}
	release_sock(sock->sk);
	return sizeof(*sop);
}

/* Drop the scattering being built (an error ended it before it was sent). */
static void op_pending_purge(struct op_sock *os)
{
	__skb_queue_purge(&os->pending);
	os->pending_bytes = 0;
}

/* The scattering being built is gone: sent, refused or dropped. */
static void op_chain_end(struct op_sock *os)
{
	struct pid *b = os->builder;

	WRITE_ONCE(os->builder, NULL);
	put_pid(b);
}

/* Whether the caller builds the socket's open scattering (socket lock). */
static bool op_chain_mine(struct op_sock *os)
{
	return !skb_queue_empty(&os->pending) &&
	       os->builder == task_pid(current);
}

/**
 * op_sock_wake_writer() - a reliable scattering left the wait queue
 * @sk: its socket
 *
 * Writers blocked in sendmsg() and poll() learn that the socket may send
 * again.  sk_write_space() would not do: it also wants half the send
 * buffer free.  Context: any; takes no 1Pipe lock.
 */
void op_sock_wake_writer(struct sock *sk)
{
	struct socket_wq *wq;

	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_poll(&wq->wait, EPOLLOUT | EPOLLWRNORM |
					   EPOLLWRBAND);
	sk_wake_async(sk, SOCK_WAKE_SPACE, POLL_OUT);
	rcu_read_unlock();
}

/*
 * Whether the caller may add a message to the socket now: to the
 * scattering it is building itself, or as the first of a new one when
 * nobody else is building one, the send buffer is not full and its
 * previous scattering has left the wait for credits (admit.c: a socket
 * has at most one waiting, which keeps its scatterings stamped in the
 * order it sent them).  Socket lock held.
 */
/*
 * A thread that started a scattering and exited without closing it would
 * hold the socket's sending for good: the next thread to find it so
 * refuses it (its messages come back with ECONNABORTED).  Socket lock
 * held.
 */
static void op_chain_reap(struct sock *sk)
{
	struct op_sock *os = op_sk(sk);
	struct task_struct *t;
	bool gone;

	if (skb_queue_empty(&os->pending) || op_chain_mine(os))
		return;
	rcu_read_lock();
	t = pid_task(os->builder, PIDTYPE_PID);
	gone = !t || (t->flags & PF_EXITING);
	rcu_read_unlock();
	if (!gone)
		return;
	op_tx_abort(os, false, -ECONNABORTED);
	op_chain_end(os);
	op_sock_wake_writer(sk);
}

/* Socket lock held: may refuse a dead thread's scattering on the way. */
static bool op_send_ready(struct sock *sk)
{
	struct op_sock *os = op_sk(sk);

	op_chain_reap(sk);
	if (!skb_queue_empty(&os->pending))
		return op_chain_mine(os);
	if (READ_ONCE(os->waiting))
		return false;
	return sk_wmem_alloc_get(sk) < READ_ONCE(sk->sk_sndbuf);
}

/*
 * Whether op_send_ready() may have become true: what sk_wait_event()
 * tests without the socket lock, so lockless and without side effects.
 */
static bool op_send_maybe_ready(struct sock *sk)
{
	struct op_sock *os = op_sk(sk);

	if (!skb_queue_empty_lockless(&os->pending))
		return false;
	if (READ_ONCE(os->waiting))
		return false;
	return sk_wmem_alloc_get(sk) < READ_ONCE(sk->sk_sndbuf);
}

/*
 * Wait until op_send_ready(), or say why not: EAGAIN when non-blocking or
 * SO_SNDTIMEO ran out, EINTR / ERESTARTSYS on a signal.  Space is
 * returned by sock_wfree(), which wakes writers through sk_write_space()
 * once half the buffer is free; a scattering leaving the wait
 * and another thread's scattering being closed wake them through
 * op_sock_wake_writer().
 */
static int op_wait_send_ready(struct sock *sk, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	int err = 0;

	if (op_send_ready(sk))
		return 0;
	add_wait_queue(sk_sleep(sk), &wait);
	for (;;) {
		sk_set_bit(SOCKWQ_ASYNC_NOSPACE, sk);
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		if (op_send_ready(sk))
			break;
		if (!*timeo) {
			err = -EAGAIN;
			break;
		}
		if (signal_pending(current)) {
			err = sock_intr_errno(*timeo);
			break;
		}
		if (skb_queue_empty(&op_sk(sk)->pending)) {
			sk_wait_event(sk, timeo, op_send_maybe_ready(sk),
				      &wait);
		} else {
			/* Its builder may exit: look again now and then. */
			long slice = min_t(long, *timeo, HZ), left = slice;

			sk_wait_event(sk, &left, op_send_maybe_ready(sk),
				      &wait);
			*timeo -= slice - left;
		}
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	return err;
}

/* A blocking sender returns once its scattering is stamped. */
static void op_wait_stamped(struct sock *sk, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct op_sock *os = op_sk(sk);

	add_wait_queue(sk_sleep(sk), &wait);
	while (READ_ONCE(os->waiting) && *timeo && !signal_pending(current))
		sk_wait_event(sk, timeo, !READ_ONCE(os->waiting), &wait);
	remove_wait_queue(sk_sleep(sk), &wait);
}

#define OP_SEND_FLAGS (MSG_DONTWAIT | MSG_MORE | MSG_BATCH | MSG_NOSIGNAL | \
		       MSG_EOR | MSG_CMSG_COMPAT)

/*
 * A reliable message to a host the controller declared failed could only
 * be recalled: the scattering is refused before it is stamped.
 */
static int op_dst_failed(struct op_net *on, struct sock *sk, u32 host)
{
	struct op_peer *p;

	if (!op_sk_reliable(sk) || likely(!READ_ONCE(on->nfailed)))
		return 0;
	p = xa_load(&on->peers, host);
	return p && READ_ONCE(p->failed) ? -EHOSTDOWN : 0;
}

/* What makes a message unsendable on its own; its destination to @dst. */
static int op_msg_check(struct sock *sk, struct msghdr *msg, size_t len,
			struct sockaddr_onepipe *dst)
{
	struct op_sock *os = op_sk(sk);
	int err;

	if (msg->msg_flags & MSG_OOB)
		return -EOPNOTSUPP;
	if (msg->msg_flags & ~OP_SEND_FLAGS)
		return -EINVAL;
	if (len > ONEPIPE_MAX_MSG)
		return -EMSGSIZE;
	if (msg->msg_name) {
		err = op_addr_check(op_net(sock_net(sk)), msg->msg_name,
				    msg->msg_namelen, dst);
		if (err)
			return err;
		if (!dst->sop_port)
			return -EINVAL;
	} else if (os->connected) {
		*dst = os->peer;
	} else {
		return -EDESTADDRREQ;
	}
	return op_dst_failed(op_net(sock_net(sk)), sk, dst->sop_host);
}

/* What makes the scattering unsendable once the message joins it. */
static int op_scat_check(struct sock *sk, size_t len)
{
	struct op_sock *os = op_sk(sk);
	struct op_net *on = op_net(sock_net(sk));

	if (!READ_ONCE(on->up))
		return -ENETDOWN;
	/* A scattering is sent whole: it must fit the send buffer at once. */
	if (os->pending_bytes + len > READ_ONCE(sk->sk_sndbuf))
		return -EMSGSIZE;
	/* ... and, reliable, fit every destination's window. */
	if (op_sk_reliable(sk) &&
	    skb_queue_len(&os->pending) >= (u32)READ_ONCE(on->rdm_window))
		return -EMSGSIZE;
	return op_autobind(on, os);
}

/*
 * A scattering is admitted whole or not at all (see "Scatterings and
 * admission" in the uapi header).  Its first message waits for room, the
 * only point where the caller can still be told that nothing was taken;
 * the later ones never wait, and may overshoot the send buffer by the one
 * scattering (itself at most SO_SNDBUF bytes).  Any error refuses the
 * whole scattering: what earlier calls had accepted is not sent.
 *
 * The socket lock is dropped between the calls that build a scattering
 * (sendmmsg() makes one call per message), so the thread building one
 * owns the socket's sending until it is closed: another thread's
 * messages wait, and never end up in it.
 */
static int op_sendmsg(struct socket *sock, struct msghdr *msg, size_t len)
{
	struct sock *sk = sock->sk;
	struct op_sock *os = op_sk(sk);
	struct op_net *on = op_net(sock_net(sk));
	bool more = msg->msg_flags & (MSG_MORE | MSG_BATCH);
	struct sockaddr_onepipe dst;
	struct op_msg_cb *cb;
	struct sk_buff *skb;
	unsigned int hr;
	bool building;
	long timeo;
	int err;

	lock_sock(sk);
	building = op_chain_mine(os);
	err = op_msg_check(sk, msg, len, &dst);
	if (err)
		goto out_refuse;
	timeo = sock_sndtimeo(sk, msg->msg_flags & MSG_DONTWAIT);
	if (!building) {
		err = op_wait_send_ready(sk, &timeo);
		if (err)
			goto out;
	}
	err = op_scat_check(sk, len);
	if (err)
		goto out_abort;

	hr = op_msg_headroom(on, len, op_sk_reliable(sk));
	skb = sock_wmalloc(sk, hr + len, 1, sk->sk_allocation);
	if (!skb) {
		err = -ENOBUFS;
		goto out_abort;
	}
	skb_reserve(skb, hr);
	err = memcpy_from_msg(skb_put(skb, len), msg, len);
	if (err) {
		kfree_skb(skb);
		goto out_abort;
	}
	cb = OP_MSG_CB(skb);
	memset(cb, 0, sizeof(*cb));
	cb->dst_host = dst.sop_host;
	cb->dst_port = dst.sop_port;
	cb->src_port = os->port;
	cb->flags = os->ordered ? 0 : OP_F_UNORDERED;
	if (op_sk_reliable(sk))
		cb->flags |= OP_F_RELIABLE;
	__skb_queue_tail(&os->pending, skb);
	os->pending_bytes += len;
	if (!building)
		WRITE_ONCE(os->builder, get_pid(task_pid(current)));
	if (more) {
		release_sock(sk);
		return len;
	}

	err = op_tx_scattering(on, os, true);
	op_chain_end(os);
	/* Threads waiting for this scattering to close may go on. */
	if (building)
		op_sock_wake_writer(sk);
	/*
	 * A blocking sender returns once its scattering is stamped, so that
	 * ONEPIPE_LAST_TS names it; it was accepted whatever happens now.
	 */
	if (!err)
		op_wait_stamped(sk, &timeo);
	release_sock(sk);
	return err ?: len;

out_refuse:
	/* Another thread's scattering is not ours to refuse. */
	if (!building)
		goto out;
out_abort:
	if (!skb_queue_empty(&os->pending)) {
		op_tx_abort(os, false, err);
		op_chain_end(os);
		op_sock_wake_writer(sk);
	}
out:
	release_sock(sk);
	return err;
}

static int op_put_name(struct msghdr *msg, u32 host, u16 port)
{
	DECLARE_SOCKADDR(struct sockaddr_onepipe *, sop, msg->msg_name);

	if (sop) {
		memset(sop, 0, sizeof(*sop));
		sop->sop_family = AF_ONEPIPE;
		sop->sop_host = host;
		sop->sop_port = port;
		msg->msg_namelen = sizeof(*sop);
	}
	return 0;
}

/* Copy a message out, truncating as datagram sockets do; bytes copied. */
static int op_copy_to_msg(struct sk_buff *skb, struct msghdr *msg, size_t len)
{
	size_t copied = min_t(size_t, len, skb->len);

	if (copied < skb->len)
		msg->msg_flags |= MSG_TRUNC;
	return skb_copy_datagram_msg(skb, 0, msg, copied) ?: copied;
}

/*
 * Send-failure notifications: payload is the failed message, the cmsgs
 * say why, to whom, and which timestamp.  As on IP sockets, the error
 * queue is read with MSG_ERRQUEUE and never blocks.
 */
static int op_recv_errqueue(struct sock *sk, struct msghdr *msg, size_t len)
{
	struct sk_buff *skb;
	struct op_err_cb *ecb;
	int err;

	skb = skb_dequeue(&sk->sk_error_queue);
	if (!skb)
		return -EAGAIN;
	ecb = OP_ERR_CB(skb);
	err = op_copy_to_msg(skb, msg, len);
	if (err < 0)
		goto out;
	op_put_name(msg, ecb->err.offender.sop_host, ecb->err.offender.sop_port);
	put_cmsg(msg, SOL_ONEPIPE, ONEPIPE_CMSG_RECVERR, sizeof(ecb->err),
		 &ecb->err);
	put_cmsg(msg, SOL_ONEPIPE, ONEPIPE_CMSG_TS, sizeof(ecb->ts), &ecb->ts);
	msg->msg_flags |= MSG_ERRQUEUE;
out:
	kfree_skb(skb);
	return err;
}

static int op_recvmsg(struct socket *sock, struct msghdr *msg, size_t len,
		      int flags)
{
	struct sock *sk = sock->sk;
	struct op_rx_cb *rcb;
	struct sk_buff *skb;
	int err;

	if (flags & MSG_OOB)
		return -EOPNOTSUPP;
	if (flags & ~(MSG_DONTWAIT | MSG_PEEK | MSG_TRUNC | MSG_ERRQUEUE |
		      MSG_WAITALL | MSG_CMSG_COMPAT | MSG_NOSIGNAL))
		return -EINVAL;
	if (flags & MSG_ERRQUEUE)
		return op_recv_errqueue(sk, msg, len);

	skb = skb_recv_datagram(sk, flags, &err);
	if (!skb)
		return err;
	rcb = OP_RX_CB(skb);
	err = op_copy_to_msg(skb, msg, len);
	if (err < 0)
		goto out;
	op_put_name(msg, rcb->node.src_host, rcb->node.src_port);
	put_cmsg(msg, SOL_ONEPIPE, ONEPIPE_CMSG_TS, sizeof(rcb->node.ts),
		 &rcb->node.ts);
	if (flags & MSG_TRUNC)
		err = skb->len;
out:
	skb_free_datagram(sk, skb);
	if (op_sk_reliable(sk)) {
		/*
		 * Committed messages that did not fit may now.  Pairs with
		 * the barrier in op_rdm_deliver_one(): either it sees the
		 * receive queue empty, or this sees its backlog.
		 */
		smp_mb();
		if (!skb_queue_empty_lockless(&op_sk(sk)->backlog))
			op_rdm_refill(op_net(sock_net(sk)), op_sk(sk));
	}
	return err;
}

static int op_setsockopt(struct socket *sock, int level, int optname,
			 sockptr_t optval, unsigned int optlen)
{
	struct op_sock *os = op_sk(sock->sk);
	int val;

	if (level != SOL_ONEPIPE)
		return -ENOPROTOOPT;
	switch (optname) {
	case ONEPIPE_ORDERED:
		if (optlen < sizeof(int))
			return -EINVAL;
		if (copy_from_sockptr(&val, optval, sizeof(val)))
			return -EFAULT;
		/*
		 * A reliable message delivered on arrival could no longer be
		 * recalled: the service is ordered or it is not atomic.
		 */
		if (!val && op_sk_reliable(sock->sk))
			return -EOPNOTSUPP;
		lock_sock(sock->sk);
		os->ordered = !!val;
		release_sock(sock->sk);
		return 0;
	case ONEPIPE_FAILURE_ACK: {
		u32 epoch;

		if (!op_sk_reliable(sock->sk))
			return -ENOPROTOOPT;
		if (optlen < sizeof(epoch))
			return -EINVAL;
		if (copy_from_sockptr(&epoch, optval, sizeof(epoch)))
			return -EFAULT;
		return op_fail_ack(op_net(sock_net(sock->sk)), os, epoch);
	}
	case ONEPIPE_TIMESTAMP:
	case ONEPIPE_LAST_TS:
	case ONEPIPE_BARRIER:
		return -EPERM;	/* read-only */
	default:
		return -ENOPROTOOPT;
	}
}

static int op_getsockopt(struct socket *sock, int level, int optname,
			 char __user *optval, int __user *optlen)
{
	struct sock *sk = sock->sk;
	struct op_sock *os = op_sk(sk);
	struct op_net *on = op_net(sock_net(sk));
	bool waiting;
	int len, ival;
	u64 val;
	void *p = &val;

	if (level != SOL_ONEPIPE)
		return -ENOPROTOOPT;
	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;

	switch (optname) {
	case ONEPIPE_TIMESTAMP:
		spin_lock_bh(&on->tx_lock);
		/* The earliest stamp possible now, without consuming it. */
		val = op_clock_floor(&on->clock, op_now(on));
		spin_unlock_bh(&on->tx_lock);
		break;
	case ONEPIPE_LAST_TS:
		/* One look, or a stamp in between could pair old and new. */
		spin_lock_bh(&on->tx_lock);
		val = os->last_ts;
		ival = os->has_last_ts;
		waiting = os->waiting;
		spin_unlock_bh(&on->tx_lock);
		if (waiting)
			return -EINPROGRESS;	/* not stamped yet */
		if (!ival)
			return -ENOENT;
		break;
	case ONEPIPE_BARRIER:
		spin_lock_bh(&on->rx_lock);
		val = op_sk_reliable(sk) ? on->cdelivered : on->delivered;
		spin_unlock_bh(&on->rx_lock);
		break;
	case ONEPIPE_ORDERED:
		ival = READ_ONCE(os->ordered);
		p = &ival;
		break;
	default:
		return -ENOPROTOOPT;
	}
	len = min_t(int, len, p == &val ? sizeof(val) : sizeof(ival));
	if (put_user(len, optlen) || copy_to_user(optval, p, len))
		return -EFAULT;
	return 0;
}

static int op_ioctl(struct socket *sock, unsigned int cmd, unsigned long arg)
{
	struct sock *sk = sock->sk;
	struct sk_buff *skb;
	int amount;

	switch (cmd) {
	case SIOCINQ:	/* size of the next message, as for UDP */
		spin_lock_bh(&sk->sk_receive_queue.lock);
		skb = skb_peek(&sk->sk_receive_queue);
		amount = skb ? skb->len : 0;
		spin_unlock_bh(&sk->sk_receive_queue.lock);
		return put_user(amount, (int __user *)arg);
	case SIOCOUTQ:	/* bytes not yet acknowledged */
		amount = sk_wmem_alloc_get(sk);
		/* 0 here: the reports op_sock_fail() queued are visible. */
		smp_rmb();
		return put_user(amount, (int __user *)arg);
	default:
		return -ENOIOCTLCMD;
	}
}

static int op_release(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct op_net *on;

	if (!sk)
		return 0;
	on = op_net(sock_net(sk));

	lock_sock(sk);
	op_port_unbind(on, op_sk(sk));
	op_pending_purge(op_sk(sk));
	op_chain_end(op_sk(sk));
	sock_orphan(sk);
	release_sock(sk);

	/*
	 * Nobody is left to hear about these messages.  The waiting
	 * scattering goes first: an ACK could otherwise send it after its
	 * socket's outstanding messages were dropped.
	 */
	op_admit_forget_sock(on, op_sk(sk));
	op_tx_forget_sock(on, sk);
	if (op_sk_reliable(sk))
		op_rdm_sock_purge(on, op_sk(sk));
	sock->sk = NULL;
	sock_put(sk);
	return 0;
}

static void op_sock_destruct(struct sock *sk)
{
	/* A delivery may have raced with op_release() into the backlog. */
	if (op_sk_reliable(sk))
		op_rdm_sock_purge(op_net(sock_net(sk)), op_sk(sk));
	skb_queue_purge(&sk->sk_receive_queue);
	skb_queue_purge(&sk->sk_error_queue);
}

/**
 * op_sock_fail() - hand a message that could not be delivered back to its
 *	sender as a send-failure notification
 * @sk: the sending socket (the owner of @skb's send-buffer charge)
 * @skb: the message payload, unlinked from every queue
 * @code: enum onepipe_ee_code
 *
 * Context: any; takes no 1Pipe lock.  Consumes @skb.
 */
void op_sock_fail(struct sock *sk, struct sk_buff *skb, int code)
{
	static const int code_errno[] = {
		[ONEPIPE_EE_TIMEOUT] = ETIMEDOUT,
		[ONEPIPE_EE_LATE] = ETIME,
		[ONEPIPE_EE_NOPORT] = ECONNREFUSED,
		[ONEPIPE_EE_NOBUFS] = ENOBUFS,
		[ONEPIPE_EE_DOWN] = ENETDOWN,
		[ONEPIPE_EE_UNREACH] = EHOSTUNREACH,
		[ONEPIPE_EE_RECALLED] = ECANCELED,
		[ONEPIPE_EE_ABORTED] = 0,	/* the refusal's, in the cb */
		[ONEPIPE_EE_UNKNOWN] = ETIMEDOUT,
	};
	const struct op_msg_cb mcb = *OP_MSG_CB(skb);
	struct op_err_cb *ecb = OP_ERR_CB(skb);
	int eno = code == ONEPIPE_EE_ABORTED ? mcb.err : code_errno[code];

	op_count(op_net(sock_net(sk)), ONEPIPE_C_SEND_FAILURES);
	/*
	 * The skb's send-buffer charge may be the last thing keeping a closed
	 * socket alive: only a socket that still has users gets the report.
	 */
	if (!refcount_inc_not_zero(&sk->sk_refcnt)) {
		kfree_skb(skb);
		return;
	}
	memset(ecb, 0, sizeof(*ecb));
	ecb->err.ee.ee_errno = eno;
	ecb->err.ee.ee_origin = SO_EE_ORIGIN_LOCAL;
	ecb->err.ee.ee_code = code;
	ecb->err.ee.ee_info = skb->len;
	ecb->err.offender.sop_family = AF_ONEPIPE;
	ecb->err.offender.sop_host = mcb.dst_host;
	ecb->err.offender.sop_port = mcb.dst_port;
	ecb->ts = mcb.ts;
	/*
	 * sock_queue_err_skb() uncharges the send buffer before it queues
	 * the report: hold one unit of the charge across it, so that a
	 * sender that sees SIOCOUTQ reach 0 also finds every report on its
	 * error queue.  The reference taken above keeps sk_free(), and with
	 * it the charge's last unit, away: the put cannot reach zero.
	 */
	refcount_inc(&sk->sk_wmem_alloc);
	if (sock_flag(sk, SOCK_DEAD) || sock_queue_err_skb(sk, skb))
		kfree_skb(skb);
	refcount_dec(&sk->sk_wmem_alloc);
	sock_put(sk);
}

/*
 * Writable means the caller's next scattering is admitted: not while a
 * scattering waits for credits (admit.c), nor while another thread builds
 * one (op_sendmsg() wakes pollers when either ends).
 */
static __poll_t op_poll(struct file *file, struct socket *sock,
			poll_table *wait)
{
	__poll_t mask = datagram_poll(file, sock, wait);
	struct sock *sk = sock->sk;
	struct op_sock *os = op_sk(sk);
	bool busy = false;

	/* Rare: another thread builds a scattering (or exited doing so). */
	if (!skb_queue_empty_lockless(&os->pending) &&
	    READ_ONCE(os->builder) != task_pid(current)) {
		lock_sock(sk);
		op_chain_reap(sk);
		busy = !skb_queue_empty(&os->pending) && !op_chain_mine(os);
		release_sock(sk);
	}
	if (busy || READ_ONCE(os->waiting))
		mask &= ~(EPOLLOUT | EPOLLWRNORM | EPOLLWRBAND);
	return mask;
}

static const struct proto_ops op_sock_ops = {
	.family		= PF_ONEPIPE,
	.owner		= THIS_MODULE,
	.release	= op_release,
	.bind		= op_bind,
	.connect	= op_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= sock_no_accept,
	.getname	= op_getname,
	.poll		= op_poll,
	.ioctl		= op_ioctl,
	.gettstamp	= sock_gettstamp,
	.listen		= sock_no_listen,
	.shutdown	= sock_no_shutdown,
	.setsockopt	= op_setsockopt,
	.getsockopt	= op_getsockopt,
	.sendmsg	= op_sendmsg,
	.recvmsg	= op_recvmsg,
	.mmap		= sock_no_mmap,
	.sendpage	= sock_no_sendpage,
};

static int op_create(struct net *net, struct socket *sock, int protocol,
		     int kern)
{
	struct op_sock *os;
	struct sock *sk;

	if (protocol)
		return -EPROTONOSUPPORT;
	if (sock->type != SOCK_DGRAM && sock->type != SOCK_RDM)
		return -ESOCKTNOSUPPORT;

	sk = sk_alloc(net, PF_ONEPIPE, GFP_KERNEL, &op_proto, kern);
	if (!sk)
		return -ENOBUFS;
	sock_init_data(sock, sk);
	sock->ops = &op_sock_ops;
	sock->state = SS_UNCONNECTED;
	/* Receivers look sockets up under RCU, in softirq. */
	sock_set_flag(sk, SOCK_RCU_FREE);
	sk->sk_destruct = op_sock_destruct;

	os = op_sk(sk);
	os->ordered = true;
	skb_queue_head_init(&os->pending);
	INIT_LIST_HEAD(&os->scat.node);
	__skb_queue_head_init(&os->scat.msgs);
	__skb_queue_head_init(&os->scat.wire);
	__skb_queue_head_init(&os->backlog);
	return 0;
}

static const struct net_proto_family op_family = {
	.family	= PF_ONEPIPE,
	.create	= op_create,
	.owner	= THIS_MODULE,
};

/* Module ------------------------------------------------------------------- */

static int __init onepipe_init(void)
{
	int err;

	BUILD_BUG_ON(sizeof(struct op_msg_cb) > sizeof_field(struct sk_buff, cb));
	BUILD_BUG_ON(sizeof(struct op_err_cb) > sizeof_field(struct sk_buff, cb));
	BUILD_BUG_ON(offsetofend(struct op_rx_cb, dl_code) > 44);
	BUILD_BUG_ON(OP_MAX_MSG != ONEPIPE_MAX_MSG);

	err = proto_register(&op_proto, 1);
	if (err)
		return err;
	op_fault_init();
	err = register_pernet_subsys(&op_net_ops);
	if (err)
		goto out_proto;
	err = op_netlink_init();
	if (err)
		goto out_pernet;
	err = op_verbs_init();
	if (err)
		goto out_netlink;
	err = sock_register(&op_family);
	if (err)
		goto out_verbs;
	return 0;

out_verbs:
	op_verbs_exit();
out_netlink:
	op_netlink_exit();
out_pernet:
	unregister_pernet_subsys(&op_net_ops);
out_proto:
	op_fault_exit();
	proto_unregister(&op_proto);
	return err;
}

static void __exit onepipe_exit(void)
{
	sock_unregister(PF_ONEPIPE);
	op_verbs_exit();
	op_netlink_exit();
	unregister_pernet_subsys(&op_net_ops);
	op_fault_exit();
	proto_unregister(&op_proto);
}

module_init(onepipe_init);
module_exit(onepipe_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("AF_ONEPIPE: causally and totally ordered messaging (1Pipe)");
MODULE_ALIAS_NETPROTO(PF_ONEPIPE);
