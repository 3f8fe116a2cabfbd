// SPDX-License-Identifier: GPL-2.0
/*
 * Verbs transport: each 1Pipe packet is one RDMA UD SEND, through kernel
 * verbs (what lib1pipe does in userspace).
 *
 * The module is an ib_client.  When an RDMA device appears, every RoCE
 * port gets a CQ and one UD QP with a posted receive ring, so the port's
 * QP number is known (and stable) before a host uses it; a host (network
 * namespace) then binds to one port with ONEPIPE_CMD_HOST_SET, and a port
 * serves one host at most.  The device's removal (`rdma link delete`,
 * unplug, rmmod of the driver) takes the bound host down: its messages
 * fail with ONEPIPE_EE_DOWN, as with `onepipe host down`.
 *
 * Peers are addressed by (GID, QPN, Q_Key) from the host configuration;
 * an address handle per peer is made when the host binds.  Peer 0 is the
 * uplink switch, which receives the host's beacons.
 *
 * Nothing in the fabric may rewrite a RoCE packet (the ICRC covers it),
 * so barriers travel only in beacons (op_transport_ops.beacon_barriers).
 *
 * Receive: completions run in softirq (IB_POLL_SOFTIRQ).  Small packets
 * are copied out and their buffer goes straight back to the ring; large
 * ones are handed up in their buffer, which is replaced by a fresh one.
 * If memory runs out the packet is dropped and its buffer reposted, so the
 * ring never shrinks.
 *
 * Send: op_verbs_xmit() posts under the host's tx_lock; packets that find
 * the send queue full wait on a backlog, which send completions drain in
 * order, so packets reach the wire in the order they were handed over.
 *
 * A UD QP that hits an error (a send the device could not route, say)
 * stops for good in the error state; the port then resets it in process
 * context (op_vport_reset()) and goes on with the same QP number, the
 * packets lost meanwhile being the protocol's to recover.
 *
 * A device going away must not wait for anything a namespace's teardown
 * might hold (device removal and netns cleanup can wait on each other
 * through the RDMA core's locks): op_verbs_remove() releases every
 * resource itself, and a host it could not take down (its namespace is
 * dying) only keeps a reference to the device's memory until its own
 * down drops it.
 */
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "onepipe.h"

/* Receive buffers per port. */
#define OP_VERBS_RX_RING	512
/* Send work requests per port; more packets wait on the backlog. */
#define OP_VERBS_TX_RING	512
/* Most packets waiting for a send slot before xmit drops. */
#define OP_VERBS_BACKLOG	4096
/* Packets up to this size are copied out of their receive buffer. */
#define OP_VERBS_COPYBREAK	256
/* Inline data asked of the device: beacons, ACKs and small messages. */
#define OP_VERBS_INLINE		256
/* A UD receive buffer starts with room for the GRH. */
#define OP_VERBS_GRH		sizeof(struct ib_grh)
/* Smallest 1Pipe payload per packet we accept a port for. */
#define OP_VERBS_MIN_FRAG	256
/* How long address resolution of the peers may take. */
#define OP_VERBS_RESOLVE_MS	1000
/* A GID index the address handle can carry (u8 sgid_index). */
#define OP_VERBS_GID_INDEX_MAX	256

struct op_vport;

/**
 * struct op_vrx - one receive buffer of the ring
 * @cqe: its completion
 * @vp: the port
 * @skb: the buffer; the device writes GRH + packet at skb->data
 * @dma: its DMA address
 */
struct op_vrx {
	struct ib_cqe cqe;
	struct op_vport *vp;
	struct sk_buff *skb;
	u64 dma;
};

/**
 * struct op_vtx - one send slot
 * @cqe: its completion
 * @vp: the port
 * @skb: the packet until the send completes; NULL if it went inline
 * @dma: its DMA address
 * @len: its length
 * @busy: posted and not yet completed (sq_lock)
 */
struct op_vtx {
	struct ib_cqe cqe;
	struct op_vport *vp;
	struct sk_buff *skb;
	u64 dma;
	u32 len;
	bool busy;
};

/**
 * struct op_vpeer - a peer's address, made when a host binds
 * @cfg: what the configuration said
 * @ah: the address handle
 */
struct op_vpeer {
	struct op_verbs_peer cfg;
	struct ib_ah *ah;
};

/**
 * struct op_vtx_cb - skb->cb of a packet waiting on the backlog
 * @peer: where it goes (peers outlive the backlog: see op_vport_unbind())
 */
struct op_vtx_cb {
	struct op_vpeer *peer;
};

#define OP_VTX_CB(skb)	((struct op_vtx_cb *)(skb)->cb)

/* A port's counters, per CPU, by enum onepipe_verbs_counter. */
struct op_vctrs {
	u64 c[__ONEPIPE_VC_MAX];
};

/**
 * struct op_vport - one port of an RDMA device and its UD QP
 * @vd: the device
 * @port: port number
 * @cq: completion queue of sends and receives
 * @qp: the UD QP; NULL if the port could not be set up
 * @qkey: the QP's Q_Key (op_verbs_mutex)
 * @max_inline: inline data the QP takes
 * @rx_len: size of a receive buffer, GRH included
 * @bound: the host using the port, NULL if none (op_verbs_mutex to
 *	write; it holds a reference to the device)
 * @on: @bound as the receive path sees it (RCU)
 * @sgid: the GID @bound sends from (op_verbs_mutex)
 * @uplink: peer 0's GID while bound: the only source of beacons
 * @mtu: largest 1Pipe packet while bound
 * @peers: host id -> struct op_vpeer while bound; filled before the host
 *	is up, emptied once the port is @dead or the host is down and no
 *	send is posted; xmit looks it up under @sq_lock
 * @rq_lock: receive reposting against teardown and reset
 * @sq_lock: the send slots, @tx_next, @tx_busy and @backlog
 * @dead: no more posting; the QP is going away (both locks)
 * @resetting: the QP is being reset: nothing is posted, sends wait on
 *	the backlog (both locks)
 * @reset_work: op_vport_reset()
 * @rx: the receive ring
 * @rx_posted: receive buffers posted now
 * @tx: the send slots
 * @tx_next: next slot to try
 * @tx_busy: slots posted and not completed
 * @backlog: packets waiting for a slot, in order
 * @tx_wait: woken when @tx_busy drops to 0
 * @ctr: counters, enum onepipe_verbs_counter
 */
struct op_vport {
	struct op_vdev *vd;
	u32 port;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u32 qkey;
	u32 max_inline;
	u32 rx_len;

	struct op_net *bound;
	struct op_net __rcu *on;
	const struct ib_gid_attr *sgid;
	u8 uplink[16];
	u32 mtu;
	struct xarray peers;

	spinlock_t rq_lock;		/* receive reposting vs teardown */
	spinlock_t sq_lock;		/* send slots and backlog */
	bool dead;
	bool resetting;
	struct work_struct reset_work;
	struct op_vrx *rx;
	atomic_t rx_posted;
	struct op_vtx *tx;
	unsigned int tx_next;
	unsigned int tx_busy;
	struct sk_buff_head backlog;
	wait_queue_head_t tx_wait;
	struct op_vctrs __percpu *ctr;
};

/**
 * struct op_vdev - an RDMA device the module runs on
 * @ref: the device list holds one reference, every bound port another
 * @dev: the device; not to be touched once @gone
 * @pd: its protection domain
 * @node: on op_verbs_devs while the device is there (op_verbs_mutex)
 * @gone: the device was removed and everything on it released
 *	(op_verbs_mutex)
 * @nports: entries in @ports
 * @ports: one per port, from rdma_start_port()
 */
struct op_vdev {
	struct kref ref;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct list_head node;
	bool gone;
	unsigned int nports;
	struct op_vport ports[];
};

/*
 * op_verbs_mutex protects the device list and the binding of hosts to
 * ports.  It nests inside a host's cfg_mutex (HOST_SET brings the
 * transport up and down under it), so device removal drops it before it
 * takes hosts down.
 */
static DEFINE_MUTEX(op_verbs_mutex);
static LIST_HEAD(op_verbs_devs);

static void op_vdev_release(struct kref *ref)
{
	kfree(container_of(ref, struct op_vdev, ref));
}

static void op_vcount(struct op_vport *vp, int c)
{
	this_cpu_inc(vp->ctr->c[c]);
}

static struct ib_device *op_vdev_ib(const struct op_vport *vp)
{
	return vp->vd->dev;
}

/* Receive ---------------------------------------------------------------- */

static void op_verbs_recv_done(struct ib_cq *cq, struct ib_wc *wc);

static int op_verbs_rx_buf(struct op_vport *vp, struct sk_buff **skbp,
			   u64 *dma, gfp_t gfp)
{
	struct ib_device *dev = op_vdev_ib(vp);
	struct sk_buff *skb;

	skb = alloc_skb(vp->rx_len, gfp | __GFP_NOWARN);
	if (!skb)
		return -ENOMEM;
	*dma = ib_dma_map_single(dev, skb->data, vp->rx_len, DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, *dma)) {
		kfree_skb(skb);
		return -ENOMEM;
	}
	*skbp = skb;
	return 0;
}

/* Give @rx's buffer to the device, unless the port is going away. */
static void op_verbs_rx_post(struct op_vport *vp, struct op_vrx *rx)
{
	struct ib_sge sge = {
		.addr	= rx->dma,
		.length	= vp->rx_len,
		.lkey	= vp->vd->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &rx->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};
	spin_lock_bh(&vp->rq_lock);
	if (!vp->dead && !vp->resetting) {
		atomic_inc(&vp->rx_posted);
		if (ib_post_recv(vp->qp, &wr, NULL)) {
			atomic_dec(&vp->rx_posted);
			op_vcount(vp, ONEPIPE_VC_RX_ERRORS);
		}
	}
	spin_unlock_bh(&vp->rq_lock);
}

/*
 * RoCEv2 puts the packet's IP header in the GRH area: an IPv4 header in
 * its last 20 bytes, or the whole IPv6 header.  The ECN bits tell whether
 * the network marked the packet.
 */
static bool op_verbs_ce(const u8 *grh, const struct ib_wc *wc)
{
	if (!(wc->wc_flags & IB_WC_GRH) ||
	    !(wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE))
		return false;
	if (wc->network_hdr_type == RDMA_NETWORK_IPV4)
		return INET_ECN_is_ce(((const struct iphdr *)
				       (grh + OP_VERBS_GRH -
					sizeof(struct iphdr)))->tos);
	if (wc->network_hdr_type == RDMA_NETWORK_IPV6)
		return INET_ECN_is_ce(ipv6_get_dsfield((const struct ipv6hdr *)
						       grh));
	return false;
}

/*
 * Take the packet of @len bytes (GRH included) out of @rx and put a
 * buffer back on the ring.  Return: the packet, data at the 1Pipe
 * header, or NULL if it had to be dropped.
 */
static struct sk_buff *op_verbs_rx_take(struct op_vport *vp,
					struct op_vrx *rx, u32 len)
{
	struct ib_device *dev = op_vdev_ib(vp);
	u32 plen = len - OP_VERBS_GRH;
	struct sk_buff *skb;
	u64 dma;

	if (plen <= OP_VERBS_COPYBREAK) {
		skb = alloc_skb(plen, GFP_ATOMIC | __GFP_NOWARN);
		if (skb)
			skb_put_data(skb, rx->skb->data + OP_VERBS_GRH, plen);
		ib_dma_sync_single_for_device(dev, rx->dma, len,
					      DMA_FROM_DEVICE);
		op_verbs_rx_post(vp, rx);
		op_vcount(vp, skb ? ONEPIPE_VC_RX_COPIED : ONEPIPE_VC_RX_DROPS);
		return skb;
	}
	if (op_verbs_rx_buf(vp, &skb, &dma, GFP_ATOMIC)) {
		ib_dma_sync_single_for_device(dev, rx->dma, len,
					      DMA_FROM_DEVICE);
		op_verbs_rx_post(vp, rx);
		op_vcount(vp, ONEPIPE_VC_RX_DROPS);
		return NULL;
	}
	swap(rx->skb, skb);
	ib_dma_unmap_single(dev, rx->dma, vp->rx_len, DMA_FROM_DEVICE);
	rx->dma = dma;
	op_verbs_rx_post(vp, rx);
	op_vcount(vp, ONEPIPE_VC_RX_REFILLS);

	skb_put(skb, len);
	__skb_pull(skb, OP_VERBS_GRH);
	return skb;
}

/*
 * Whether a beacon comes from the uplink: a beacon moves the barrier, so
 * one from anywhere else (a misconfigured peer) could reorder delivery.
 * The source address is in the GRH area, as for op_verbs_ce().
 */
static bool op_verbs_from_uplink(struct op_vport *vp, const u8 *grh,
				 const struct ib_wc *wc)
{
	if (!(wc->wc_flags & IB_WC_GRH) ||
	    !(wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE))
		return false;
	if (wc->network_hdr_type == RDMA_NETWORK_IPV4)
		return !memcmp(&((const struct iphdr *)(grh + OP_VERBS_GRH -
			       sizeof(struct iphdr)))->saddr, vp->uplink + 12,
			       4);
	if (wc->network_hdr_type == RDMA_NETWORK_IPV6)
		return !memcmp(&((const struct ipv6hdr *)grh)->saddr,
			       vp->uplink, 16);
	return false;
}

/* The QP broke: reset it from process context (once). */
static void op_vport_fault(struct op_vport *vp)
{
	bool first;

	spin_lock_bh(&vp->rq_lock);
	spin_lock(&vp->sq_lock);
	first = !vp->dead && !vp->resetting;
	if (first)
		vp->resetting = true;
	spin_unlock(&vp->sq_lock);
	spin_unlock_bh(&vp->rq_lock);
	if (first)
		queue_work(system_long_wq, &vp->reset_work);
}

static void op_verbs_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct op_vrx *rx = container_of(wc->wr_cqe, struct op_vrx, cqe);
	struct op_vport *vp = rx->vp;
	struct sk_buff *skb;
	struct op_net *on;
	bool ce, foreign;

	if (atomic_dec_return(&vp->rx_posted) == 0) {
		op_vcount(vp, ONEPIPE_VC_RX_EMPTY);
		wake_up(&vp->tx_wait);	/* a reset waits for the flush */
	}
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		/* A flush means the QP is in error: destroyed or broken. */
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			op_vcount(vp, ONEPIPE_VC_RX_ERRORS);
		op_vport_fault(vp);
		return;
	}
	op_vcount(vp, ONEPIPE_VC_RX_COMPLETIONS);
	if (unlikely(wc->byte_len < OP_VERBS_GRH + OP_HDR_LEN ||
		     wc->byte_len > vp->rx_len)) {
		op_vcount(vp, ONEPIPE_VC_RX_DROPS);
		op_verbs_rx_post(vp, rx);
		return;
	}
	ib_dma_sync_single_for_cpu(op_vdev_ib(vp), rx->dma, wc->byte_len,
				   DMA_FROM_DEVICE);
	ce = op_verbs_ce(rx->skb->data, wc);
	foreign = rx->skb->data[OP_VERBS_GRH + 1] == OP_PKT_BEACON &&
		  !op_verbs_from_uplink(vp, rx->skb->data, wc);
	skb = op_verbs_rx_take(vp, rx, wc->byte_len);
	if (!skb)
		return;

	rcu_read_lock();
	on = rcu_dereference(vp->on);
	if (unlikely(!on)) {
		op_vcount(vp, ONEPIPE_VC_RX_DROPS);	/* no host yet */
		kfree_skb(skb);
	} else if (unlikely(foreign)) {
		op_vcount(vp, ONEPIPE_VC_RX_FOREIGN);
		kfree_skb(skb);
	} else {
		op_rcv(on, skb, ce);
	}
	rcu_read_unlock();
}

/* Send ------------------------------------------------------------------- */

/*
 * Post @skb to @peer.  Return: 0 when posted (the skb is the slot's, or
 * freed if it went inline), -ENOSPC when no slot is free (the skb is
 * still the caller's), another errno when it failed (the skb is freed).
 */
static int op_verbs_post(struct op_vport *vp, struct sk_buff *skb,
			 const struct op_vpeer *peer)
{
	struct ib_device *dev = op_vdev_ib(vp);
	struct op_vtx *tx = &vp->tx[vp->tx_next];
	bool inl = skb->len <= vp->max_inline;
	struct ib_sge sge = {
		.length	= skb->len,
		.lkey	= vp->vd->pd->local_dma_lkey,
	};
	struct ib_ud_wr wr = {
		.wr = {
			.wr_cqe		= &tx->cqe,
			.sg_list	= &sge,
			.num_sge	= 1,
			.opcode		= IB_WR_SEND,
			.send_flags	= IB_SEND_SIGNALED,
		},
		.ah		= peer->ah,
		.remote_qpn	= peer->cfg.qpn,
		.remote_qkey	= peer->cfg.qkey,
	};
	int err;

	lockdep_assert_held(&vp->sq_lock);
	if (tx->busy)
		return -ENOSPC;
	if (inl) {
		/* The device copies inline data when the WR is posted. */
		wr.wr.send_flags |= IB_SEND_INLINE;
		sge.addr = (uintptr_t)skb->data;
	} else {
		sge.addr = ib_dma_map_single(dev, skb->data, skb->len,
					     DMA_TO_DEVICE);
		if (ib_dma_mapping_error(dev, sge.addr)) {
			err = -ENOMEM;
			goto fail;
		}
	}
	err = ib_post_send(vp->qp, &wr.wr, NULL);
	if (err) {
		if (!inl)
			ib_dma_unmap_single(dev, sge.addr, skb->len,
					    DMA_TO_DEVICE);
		goto fail;
	}
	tx->busy = true;
	tx->len = skb->len;
	tx->dma = sge.addr;
	tx->skb = inl ? NULL : skb;
	WRITE_ONCE(vp->tx_busy, vp->tx_busy + 1);
	vp->tx_next = (vp->tx_next + 1) % OP_VERBS_TX_RING;
	op_vcount(vp, ONEPIPE_VC_TX_POSTS);
	if (inl) {
		op_vcount(vp, ONEPIPE_VC_TX_INLINE);
		consume_skb(skb);
	}
	return 0;
fail:
	op_vcount(vp, ONEPIPE_VC_TX_ERRORS);
	kfree_skb(skb);
	return err;
}

/* Post what waits on the backlog, in order, while slots are free. */
static void op_verbs_push_backlog(struct op_vport *vp)
{
	struct sk_buff *skb;

	while ((skb = skb_peek(&vp->backlog))) {
		__skb_unlink(skb, &vp->backlog);
		if (op_verbs_post(vp, skb, OP_VTX_CB(skb)->peer) == -ENOSPC) {
			__skb_queue_head(&vp->backlog, skb);
			break;
		}
	}
}

static void op_verbs_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct op_vtx *tx = container_of(wc->wr_cqe, struct op_vtx, cqe);
	struct op_vport *vp = tx->vp;

	if (tx->skb) {
		ib_dma_unmap_single(op_vdev_ib(vp), tx->dma, tx->len,
				    DMA_TO_DEVICE);
		consume_skb(tx->skb);
		tx->skb = NULL;
	}
	op_vcount(vp, wc->status == IB_WC_SUCCESS ?
		  ONEPIPE_VC_TX_COMPLETIONS : ONEPIPE_VC_TX_ERRORS);

	spin_lock(&vp->sq_lock);
	tx->busy = false;
	WRITE_ONCE(vp->tx_busy, vp->tx_busy - 1);
	if (!vp->dead && !vp->resetting)
		op_verbs_push_backlog(vp);
	if (!vp->tx_busy)
		wake_up(&vp->tx_wait);
	spin_unlock(&vp->sq_lock);
	if (unlikely(wc->status != IB_WC_SUCCESS))
		op_vport_fault(vp);
}

/* Send one packet; tx_lock held, BHs off. */
static int op_verbs_xmit_one(struct op_net *on, struct sk_buff *skb)
{
	struct op_vport *vp = on->tpriv;
	struct op_vpeer *peer;
	int err = 0;

	spin_lock(&vp->sq_lock);
	if (unlikely(vp->dead)) {
		err = -ENETDOWN;
		goto out;
	}
	peer = xa_load(&vp->peers, op_hdr_get_dst_host(skb->data));
	if (unlikely(!peer)) {
		op_vcount(vp, ONEPIPE_VC_TX_NOPEER);
		err = -EHOSTUNREACH;
		goto out;
	}
	if (likely(!vp->resetting && skb_queue_empty(&vp->backlog))) {
		err = op_verbs_post(vp, skb, peer);
		if (err != -ENOSPC) {
			skb = NULL;
			goto out;
		}
	}
	if (skb_queue_len(&vp->backlog) >= OP_VERBS_BACKLOG) {
		err = -ENOBUFS;
		goto out;
	}
	OP_VTX_CB(skb)->peer = peer;
	__skb_queue_tail(&vp->backlog, skb);
	op_vcount(vp, ONEPIPE_VC_TX_QUEUED);
	skb = NULL;
	err = 0;
out:
	spin_unlock(&vp->sq_lock);
	kfree_skb(skb);
	return err;
}

/*
 * op_transport_ops.xmit: tx_lock held, BHs off.  A UD send is one packet
 * to one destination QP: verbs never bundles.
 */
static int op_verbs_xmit(struct op_net *on, struct sk_buff_head *pkts)
{
	struct sk_buff *skb;
	int failed = 0;

	while ((skb = __skb_dequeue(pkts)))
		if (op_verbs_xmit_one(on, skb))
			failed++;
	return failed;
}

/* Ports ------------------------------------------------------------------ */

/* Bring the QP from RESET (where it is created, or reset to) to RTS. */
static int op_vport_qp_rts(struct op_vport *vp)
{
	struct ib_qp_attr a = {
		.qp_state	= IB_QPS_INIT,
		.pkey_index	= 0,
		.port_num	= vp->port,
		.qkey		= vp->qkey,
	};
	int err;

	err = ib_modify_qp(vp->qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (err)
		return err;
	a.qp_state = IB_QPS_RTR;
	err = ib_modify_qp(vp->qp, &a, IB_QP_STATE);
	if (err)
		return err;
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0;
	return ib_modify_qp(vp->qp, &a, IB_QP_STATE | IB_QP_SQ_PSN);
}

/* Asynchronous QP events: an error state stops the QP for good. */
static void op_vport_qp_event(struct ib_event *ev, void *ctx)
{
	switch (ev->event) {
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		op_vport_fault(ctx);
		break;
	default:
		break;
	}
}

static int op_vport_create_qp(struct op_vport *vp)
{
	struct ib_qp_init_attr ia = {
		.event_handler	= op_vport_qp_event,
		.qp_context	= vp,
		.send_cq	= vp->cq,
		.recv_cq	= vp->cq,
		.cap = {
			.max_send_wr	 = OP_VERBS_TX_RING,
			.max_recv_wr	 = OP_VERBS_RX_RING,
			.max_send_sge	 = 1,
			.max_recv_sge	 = 1,
			.max_inline_data = OP_VERBS_INLINE,
		},
		.sq_sig_type	= IB_SIGNAL_ALL_WR,
		.qp_type	= IB_QPT_UD,
		.port_num	= vp->port,
	};
	struct ib_qp *qp;

	qp = ib_create_qp(vp->vd->pd, &ia);
	if (IS_ERR(qp)) {
		/* Not every device does inline data: copy nothing then. */
		ia.cap.max_inline_data = 0;
		qp = ib_create_qp(vp->vd->pd, &ia);
	}
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	vp->qp = qp;
	vp->max_inline = ia.cap.max_inline_data;
	return op_vport_qp_rts(vp);
}

/* Post every receive buffer of the ring; all are ours (none is posted). */
static void op_vport_post_ring(struct op_vport *vp)
{
	unsigned int i;

	for (i = 0; i < OP_VERBS_RX_RING; i++)
		op_verbs_rx_post(vp, &vp->rx[i]);
}

static int op_vport_fill_ring(struct op_vport *vp)
{
	unsigned int i;

	for (i = 0; i < OP_VERBS_RX_RING; i++) {
		struct op_vrx *rx = &vp->rx[i];

		rx->vp = vp;
		rx->cqe.done = op_verbs_recv_done;
		if (op_verbs_rx_buf(vp, &rx->skb, &rx->dma, GFP_KERNEL))
			return -ENOMEM;
	}
	for (i = 0; i < OP_VERBS_TX_RING; i++) {
		vp->tx[i].vp = vp;
		vp->tx[i].cqe.done = op_verbs_send_done;
	}
	op_vport_post_ring(vp);
	return 0;
}

/*
 * The QP went into the error state.  Let it flush what is posted (the
 * completion handlers repost nothing while @resetting), reset it to RTS
 * with the same QP number, and start again; sends meanwhile waited on
 * the backlog.
 */
static void op_vport_reset(struct work_struct *work)
{
	struct op_vport *vp = container_of(work, struct op_vport,
					   reset_work);
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };
	int err;

	ib_modify_qp(vp->qp, &a, IB_QP_STATE);
	if (!wait_event_timeout(vp->tx_wait, !READ_ONCE(vp->tx_busy) &&
				!atomic_read(&vp->rx_posted), 10 * HZ)) {
		ibdev_warn(op_vdev_ib(vp),
			   "onepipe: port %u: QP %u does not flush\n",
			   vp->port, vp->qp->qp_num);
		return;
	}
	a.qp_state = IB_QPS_RESET;
	err = ib_modify_qp(vp->qp, &a, IB_QP_STATE) ?: op_vport_qp_rts(vp);
	if (err) {
		ibdev_warn(op_vdev_ib(vp),
			   "onepipe: port %u: QP %u reset failed: %d\n",
			   vp->port, vp->qp->qp_num, err);
		return;
	}
	ibdev_warn_ratelimited(op_vdev_ib(vp),
			       "onepipe: port %u: QP %u was reset after an error\n",
			       vp->port, vp->qp->qp_num);
	op_vcount(vp, ONEPIPE_VC_QP_RESETS);

	spin_lock_bh(&vp->rq_lock);
	spin_lock(&vp->sq_lock);
	vp->resetting = false;
	spin_unlock(&vp->sq_lock);
	spin_unlock_bh(&vp->rq_lock);
	op_vport_post_ring(vp);
	spin_lock_bh(&vp->sq_lock);
	if (!vp->dead)
		op_verbs_push_backlog(vp);
	spin_unlock_bh(&vp->sq_lock);
}

/* Free what the ring and the send slots hold; the QP and CQ are gone. */
static void op_vport_free_bufs(struct op_vport *vp)
{
	struct ib_device *dev = op_vdev_ib(vp);
	unsigned int i;

	for (i = 0; vp->rx && i < OP_VERBS_RX_RING; i++) {
		if (!vp->rx[i].skb)
			continue;
		ib_dma_unmap_single(dev, vp->rx[i].dma, vp->rx_len,
				    DMA_FROM_DEVICE);
		kfree_skb(vp->rx[i].skb);
	}
	for (i = 0; vp->tx && i < OP_VERBS_TX_RING; i++) {
		if (!vp->tx[i].skb)
			continue;
		ib_dma_unmap_single(dev, vp->tx[i].dma, vp->tx[i].len,
				    DMA_TO_DEVICE);
		kfree_skb(vp->tx[i].skb);
	}
	__skb_queue_purge(&vp->backlog);
	kvfree(vp->rx);
	kvfree(vp->tx);
	vp->rx = NULL;
	vp->tx = NULL;
}

/* Stop posting on @vp for good; the backlog is dropped. */
static void op_vport_kill(struct op_vport *vp)
{
	spin_lock_bh(&vp->rq_lock);
	spin_lock(&vp->sq_lock);
	vp->dead = true;
	__skb_queue_purge(&vp->backlog);
	spin_unlock(&vp->sq_lock);
	spin_unlock_bh(&vp->rq_lock);
}

static void op_vport_close(struct op_vport *vp)
{
	if (!vp->vd)		/* never opened */
		return;
	op_vport_kill(vp);
	cancel_work_sync(&vp->reset_work);
	/*
	 * Completions still queued never run once the CQ is freed, and
	 * none runs after ib_free_cq() returns: then the buffers are ours.
	 */
	if (vp->qp)
		ib_destroy_qp(vp->qp);
	if (vp->cq)
		ib_free_cq(vp->cq);
	vp->qp = NULL;
	vp->cq = NULL;
	op_vport_free_bufs(vp);
	free_percpu(vp->ctr);
	vp->ctr = NULL;
}

static int op_vport_open(struct op_vdev *vd, struct op_vport *vp, u32 port)
{
	struct ib_device *dev = vd->dev;
	struct ib_port_attr pa;
	int err, mtu;

	vp->vd = vd;
	vp->port = port;
	vp->qkey = ONEPIPE_VERBS_QKEY;
	xa_init(&vp->peers);
	spin_lock_init(&vp->rq_lock);
	spin_lock_init(&vp->sq_lock);
	skb_queue_head_init(&vp->backlog);
	init_waitqueue_head(&vp->tx_wait);
	INIT_WORK(&vp->reset_work, op_vport_reset);

	/* Addresses are GIDs of IP addresses: RoCE only, for now. */
	if (!rdma_protocol_roce(dev, port))
		return -EOPNOTSUPP;
	err = ib_query_port(dev, port, &pa);
	if (err)
		return err;
	/*
	 * Buffers for the MTU of now: a port whose netdev MTU grows later
	 * keeps sending packets of this size (op_vport_bind() takes the
	 * smaller of the two).
	 */
	mtu = ib_mtu_enum_to_int(pa.active_mtu);
	if (mtu <= 0)
		return -EOPNOTSUPP;
	vp->rx_len = OP_VERBS_GRH + mtu;

	vp->ctr = alloc_percpu(struct op_vctrs);
	vp->rx = kvcalloc(OP_VERBS_RX_RING, sizeof(*vp->rx), GFP_KERNEL);
	vp->tx = kvcalloc(OP_VERBS_TX_RING, sizeof(*vp->tx), GFP_KERNEL);
	if (!vp->ctr || !vp->rx || !vp->tx)
		return -ENOMEM;
	vp->cq = ib_alloc_cq(dev, vp, OP_VERBS_RX_RING + OP_VERBS_TX_RING,
			     port % max(dev->num_comp_vectors, 1),
			     IB_POLL_SOFTIRQ);
	if (IS_ERR(vp->cq)) {
		err = PTR_ERR(vp->cq);
		vp->cq = NULL;
		return err;
	}
	err = op_vport_create_qp(vp);
	if (err)
		return err;
	return op_vport_fill_ring(vp);
}

/* Devices ---------------------------------------------------------------- */

static struct ib_client op_verbs_client;

/* Release everything on the device; the struct goes with its last ref. */
static void op_vdev_close(struct op_vdev *vd)
{
	unsigned int i;

	for (i = 0; i < vd->nports; i++)
		op_vport_close(&vd->ports[i]);
	if (vd->pd)
		ib_dealloc_pd(vd->pd);
	vd->pd = NULL;
}

static int op_verbs_add(struct ib_device *dev)
{
	unsigned int i, usable = 0;
	struct op_vdev *vd;
	int err;

	vd = kzalloc(struct_size(vd, ports, rdma_end_port(dev) -
				 rdma_start_port(dev) + 1), GFP_KERNEL);
	if (!vd)
		return -ENOMEM;
	kref_init(&vd->ref);
	vd->dev = dev;
	vd->nports = rdma_end_port(dev) - rdma_start_port(dev) + 1;
	vd->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(vd->pd)) {
		err = PTR_ERR(vd->pd);
		vd->pd = NULL;
		goto fail;
	}
	for (i = 0; i < vd->nports; i++) {
		struct op_vport *vp = &vd->ports[i];

		err = op_vport_open(vd, vp, rdma_start_port(dev) + i);
		if (!err) {
			usable++;
			continue;
		}
		if (err != -EOPNOTSUPP)
			ibdev_warn(dev, "onepipe: port %u unusable: %d\n",
				   vp->port, err);
		op_vport_close(vp);
	}
	if (!usable) {
		err = -EOPNOTSUPP;
		goto fail;
	}
	mutex_lock(&op_verbs_mutex);
	list_add_tail(&vd->node, &op_verbs_devs);
	mutex_unlock(&op_verbs_mutex);
	ib_set_client_data(dev, &op_verbs_client, vd);
	return 0;
fail:
	op_vdev_close(vd);
	kref_put(&vd->ref, op_vdev_release);
	return err;
}

static void op_vport_unbind(struct op_vport *vp);

/* A host bound to a going device, held so that it can be taken down. */
struct op_vevict {
	struct op_net *on;
	struct op_vport *vp;
};

/*
 * Take down the hosts bound to the device (they get ENETDOWN failures
 * like after `host down`), then release everything.  A host whose
 * namespace is already dying cannot be taken down from here without
 * waiting for that namespace's cleanup, which may itself wait for this
 * removal in the RDMA core: its port is released under it instead, and
 * its own down later finds the port dead.
 */
static void op_verbs_remove(struct ib_device *dev, void *data)
{
	struct op_vdev *vd = data;
	struct op_vevict *ev;
	unsigned int i, n = 0;

	ev = kcalloc(vd->nports, sizeof(*ev), GFP_KERNEL | __GFP_NOFAIL);
	mutex_lock(&op_verbs_mutex);
	list_del(&vd->node);
	for (i = 0; i < vd->nports; i++) {
		struct op_net *on = vd->ports[i].bound;

		if (on && maybe_get_net(on->net)) {
			ev[n].on = on;
			ev[n++].vp = &vd->ports[i];
		}
	}
	mutex_unlock(&op_verbs_mutex);

	for (i = 0; i < n; i++) {
		op_host_lost(ev[i].on, ev[i].vp);
		put_net(ev[i].on->net);
	}
	kfree(ev);

	mutex_lock(&op_verbs_mutex);
	/* xmit checks dead before it looks a peer up: kill, then unbind. */
	for (i = 0; i < vd->nports; i++)
		if (vd->ports[i].vd)
			op_vport_kill(&vd->ports[i]);
	for (i = 0; i < vd->nports; i++)
		if (vd->ports[i].bound)
			op_vport_unbind(&vd->ports[i]);
	vd->gone = true;
	op_vdev_close(vd);
	mutex_unlock(&op_verbs_mutex);
	kref_put(&vd->ref, op_vdev_release);
}

static struct ib_client op_verbs_client = {
	.name	= "onepipe",
	.add	= op_verbs_add,
	.remove	= op_verbs_remove,
};

/* Binding a host ----------------------------------------------------------- */

static struct op_vport *op_vport_find(const char *name, u32 port,
				      struct net *net)
{
	struct op_vdev *vd;

	lockdep_assert_held(&op_verbs_mutex);
	list_for_each_entry(vd, &op_verbs_devs, node) {
		if (strcmp(dev_name(&vd->dev->dev), name) ||
		    !rdma_dev_access_netns(vd->dev, net))
			continue;
		if (port < rdma_start_port(vd->dev) ||
		    port > rdma_end_port(vd->dev))
			return NULL;
		return &vd->ports[port - rdma_start_port(vd->dev)];
	}
	return NULL;
}

/*
 * The first RoCEv2 GID of the port that holds an IPv4 address (the
 * software switch speaks IPv4), among those an address handle can name.
 */
static const struct ib_gid_attr *op_verbs_pick_gid(struct op_vport *vp,
						   int tbl_len)
{
	const struct ib_gid_attr *a;
	int i;

	for (i = 0; i < min(tbl_len, OP_VERBS_GID_INDEX_MAX); i++) {
		a = rdma_get_gid_attr(op_vdev_ib(vp), vp->port, i);
		if (IS_ERR(a))
			continue;
		if (a->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((const struct in6_addr *)a->gid.raw))
			return a;
		rdma_put_gid_attr(a);
	}
	return NULL;
}

/**
 * struct op_vresolve - one peer's address resolution
 * @done: completed by op_verbs_resolved()
 * @status: its result
 * @da: what rdma_resolve_ip() fills in
 */
struct op_vresolve {
	struct completion done;
	int status;
	struct rdma_dev_addr da;
};

static void op_verbs_resolved(int status, struct sockaddr *src,
			      struct rdma_dev_addr *addr, void *ctx)
{
	struct op_vresolve *r = ctx;

	r->status = status;
	complete(&r->done);
}

/*
 * Start resolving @dgid's MAC address and hop limit from the IP stack of
 * the namespace the GID's netdev lives in (neighbours, ARP).
 */
static int op_verbs_resolve_start(const struct ib_gid_attr *sgid,
				  const u8 *dgid, struct op_vresolve *r)
{
	union {
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} src, dst;
	struct net_device *ndev;

	init_completion(&r->done);
	r->da.sgid_attr = sgid;
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(sgid);
	if (IS_ERR(ndev)) {
		rcu_read_unlock();
		return PTR_ERR(ndev);
	}
	/* Only looked at while resolving, which the GID outlives. */
	r->da.net = dev_net(ndev);
	rcu_read_unlock();

	rdma_gid2ip((struct sockaddr *)&src, &sgid->gid);
	rdma_gid2ip((struct sockaddr *)&dst, (const union ib_gid *)dgid);
	return rdma_resolve_ip((struct sockaddr *)&src,
			       (struct sockaddr *)&dst, &r->da,
			       OP_VERBS_RESOLVE_MS, op_verbs_resolved, true, r);
}

static int op_vpeer_add(struct op_vport *vp, const struct op_verbs_peer *c,
			const struct op_vresolve *r)
{
	struct rdma_ah_attr attr = {};
	struct op_vpeer *p;
	union ib_gid dgid;
	int err;

	if (xa_load(&vp->peers, c->host))
		return -EEXIST;
	memcpy(dgid.raw, c->gid, sizeof(dgid.raw));
	attr.type = rdma_ah_find_type(op_vdev_ib(vp), vp->port);
	rdma_ah_set_port_num(&attr, vp->port);
	memcpy(attr.roce.dmac, r->da.dst_dev_addr, ETH_ALEN);
	/* ECN-capable, so that a congested hop marks rather than drops. */
	rdma_ah_set_grh(&attr, &dgid, 0, vp->sgid->index, r->da.hoplimit,
			INET_ECN_ECT_0);

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->cfg = *c;
	p->ah = rdma_create_ah(vp->vd->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(p->ah)) {
		err = PTR_ERR(p->ah);
		kfree(p);
		return err;
	}
	err = xa_insert(&vp->peers, c->host, p, GFP_KERNEL);
	if (err) {
		rdma_destroy_ah(p->ah, RDMA_DESTROY_AH_SLEEPABLE);
		kfree(p);
	}
	return err;
}

/*
 * Resolve all @n peers at once (each may take up to OP_VERBS_RESOLVE_MS
 * when its neighbour is unknown) and make their address handles.
 */
static int op_vport_add_peers(struct op_vport *vp,
			      const struct op_verbs_peer *peers, unsigned int n)
{
	struct op_vresolve *r;
	unsigned int i, started;
	int err = 0;

	r = kvcalloc(n, sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	for (started = 0; started < n && !err; started++)
		err = op_verbs_resolve_start(vp->sgid, peers[started].gid,
					     &r[started]);
	if (err)
		started--;	/* that one never started */
	for (i = 0; i < started; i++) {
		wait_for_completion(&r[i].done);
		if (!err && r[i].status)
			err = r[i].status;
	}
	for (i = 0; i < n && !err; i++)
		err = op_vpeer_add(vp, &peers[i], &r[i]);
	kvfree(r);
	return err;
}

/* The host itself: messages to it are looped back by the device. */
static int op_vport_add_self(struct op_vport *vp, u32 host)
{
	struct op_verbs_peer self = {
		.host = host,
		.qpn = vp->qp->qp_num,
		.qkey = vp->qkey,
	};

	memcpy(self.gid, vp->sgid->gid.raw, sizeof(self.gid));
	return op_vport_add_peers(vp, &self, 1);
}

/*
 * Forget @vp's host: no packet reaches it and none is posted for it any
 * more; then its peers go.  op_verbs_mutex held.
 */
static void op_vport_unbind(struct op_vport *vp)
{
	struct op_vpeer *p;
	unsigned long host;

	lockdep_assert_held(&op_verbs_mutex);
	RCU_INIT_POINTER(vp->on, NULL);
	/* No op_rcv() for the host is running or will run. */
	synchronize_rcu();
	if (!vp->dead) {
		/* The host is down: nothing new comes. */
		spin_lock_bh(&vp->sq_lock);
		__skb_queue_purge(&vp->backlog);
		spin_unlock_bh(&vp->sq_lock);
		/* Posted sends name address handles: let them finish. */
		wait_event(vp->tx_wait, !READ_ONCE(vp->tx_busy));
	}
	xa_for_each(&vp->peers, host, p) {
		rdma_destroy_ah(p->ah, RDMA_DESTROY_AH_SLEEPABLE);
		kfree(p);
	}
	xa_destroy(&vp->peers);
	if (vp->sgid)
		rdma_put_gid_attr(vp->sgid);
	vp->sgid = NULL;
}

/* Check the port and set up what @cfg asks; op_verbs_mutex held. */
static int op_vport_bind(struct op_vport *vp, const struct op_host_cfg *cfg)
{
	struct ib_port_attr pa;
	unsigned int i;
	int err;

	err = ib_query_port(op_vdev_ib(vp), vp->port, &pa);
	if (err)
		return err;
	if (pa.state != IB_PORT_ACTIVE)
		return -ENETDOWN;
	if (ib_mtu_enum_to_int(pa.active_mtu) <= 0)
		return -EMSGSIZE;
	vp->mtu = min_t(u32, ib_mtu_enum_to_int(pa.active_mtu),
			vp->rx_len - OP_VERBS_GRH);
	if (vp->mtu < OP_HDR_LEN + OP_VERBS_MIN_FRAG)
		return -EMSGSIZE;
	for (i = 0; i < cfg->nvpeers && cfg->vpeers[i].host; i++)
		;
	/* Without its uplink a host could not beacon: nothing is ordered. */
	if (i == cfg->nvpeers)
		return -EDESTADDRREQ;
	memcpy(vp->uplink, cfg->vpeers[i].gid, sizeof(vp->uplink));
	vp->sgid = op_verbs_pick_gid(vp, pa.gid_tbl_len);
	if (!vp->sgid)
		return -EADDRNOTAVAIL;
	if (cfg->vqkey != vp->qkey) {
		struct ib_qp_attr a = { .qkey = cfg->vqkey };

		err = ib_modify_qp(vp->qp, &a, IB_QP_QKEY);
		if (err)
			return err;
		vp->qkey = cfg->vqkey;
	}
	err = op_vport_add_peers(vp, cfg->vpeers, cfg->nvpeers);
	if (!err && !xa_load(&vp->peers, cfg->host_id))
		err = op_vport_add_self(vp, cfg->host_id);
	return err;
}

static int op_verbs_up(struct op_net *on, const struct op_host_cfg *cfg)
{
	struct op_vport *vp;
	int err;

	if (cfg->nvpeers > OP_VERBS_MAX_PEERS)
		return -E2BIG;
	mutex_lock(&op_verbs_mutex);
	vp = op_vport_find(cfg->vdev, cfg->vport, on->net);
	if (!vp || !vp->qp) {
		err = -ENODEV;
		goto out;
	}
	if (vp->bound) {
		err = -EBUSY;
		goto out;
	}
	err = op_vport_bind(vp, cfg);
	if (err) {
		op_vport_unbind(vp);
		goto out;
	}
	kref_get(&vp->vd->ref);
	WRITE_ONCE(vp->bound, on);
	on->tpriv = vp;
	on->frag_size = vp->mtu - OP_HDR_LEN;
	on->headroom = 0;
	rcu_assign_pointer(vp->on, on);
out:
	mutex_unlock(&op_verbs_mutex);
	return err;
}

static void op_verbs_down(struct op_net *on)
{
	struct op_vport *vp = on->tpriv;
	struct op_vdev *vd = vp->vd;

	mutex_lock(&op_verbs_mutex);
	/* A removed device released the port under its host already. */
	if (!vd->gone)
		op_vport_unbind(vp);
	WRITE_ONCE(vp->bound, NULL);
	on->tpriv = NULL;
	mutex_unlock(&op_verbs_mutex);
	kref_put(&vd->ref, op_vdev_release);
}

static unsigned int op_verbs_mtu(struct op_net *on)
{
	return ((struct op_vport *)on->tpriv)->mtu;
}

const struct op_transport_ops op_verbs_transport = {
	.kind		 = ONEPIPE_TRANSPORT_VERBS,
	.name		 = "verbs",
	.beacon_barriers = true,
	.up		 = op_verbs_up,
	.down		 = op_verbs_down,
	.xmit		 = op_verbs_xmit,
	.mtu		 = op_verbs_mtu,
};

/* Introspection ----------------------------------------------------------- */

static void op_vport_info(struct op_vport *vp, struct op_verbs_info *info)
{
	struct ib_port_attr pa;
	int c, cpu;

	memset(info, 0, sizeof(*info));
	strscpy(info->dev, dev_name(&op_vdev_ib(vp)->dev), sizeof(info->dev));
	info->port = vp->port;
	if (!ib_query_port(op_vdev_ib(vp), vp->port, &pa)) {
		info->state = pa.state;
		info->mtu = min_t(u32, ib_mtu_enum_to_int(pa.active_mtu),
				  vp->rx_len - OP_VERBS_GRH);
	}
	if (vp->bound)
		info->mtu = vp->mtu;
	if (vp->sgid) {
		info->has_gid = true;
		memcpy(info->gid, vp->sgid->gid.raw, sizeof(info->gid));
	} else {
		const struct ib_gid_attr *a = op_verbs_pick_gid(vp,
							pa.gid_tbl_len);

		if (a) {
			info->has_gid = true;
			memcpy(info->gid, a->gid.raw, sizeof(info->gid));
			rdma_put_gid_attr(a);
		}
	}
	info->qpn = vp->qp->qp_num;
	info->qkey = vp->qkey;
	info->bound = vp->bound;
	for_each_possible_cpu(cpu)
		for (c = 1; c <= ONEPIPE_VC_MAX; c++)
			info->ctr[c] += per_cpu_ptr(vp->ctr, cpu)->c[c];
	info->ctr[ONEPIPE_VC_RX_POSTED] = atomic_read(&vp->rx_posted);
}

/**
 * op_verbs_port_info() - describe the @idx-th port @net may use
 * @net: the caller's namespace
 * @idx: which port, from 0, over the devices in the order they came
 * @info: filled in
 *
 * Context: process.
 * Return: 0, or -ENOENT past the last port.
 */
int op_verbs_port_info(struct net *net, unsigned long idx,
		       struct op_verbs_info *info)
{
	struct op_vdev *vd;
	unsigned int i;
	int err = -ENOENT;

	mutex_lock(&op_verbs_mutex);
	list_for_each_entry(vd, &op_verbs_devs, node) {
		if (!rdma_dev_access_netns(vd->dev, net))
			continue;
		for (i = 0; i < vd->nports; i++) {
			if (!vd->ports[i].qp || idx--)
				continue;
			op_vport_info(&vd->ports[i], info);
			err = 0;
			goto out;
		}
	}
out:
	mutex_unlock(&op_verbs_mutex);
	return err;
}

/**
 * op_verbs_host_info() - the port @on is bound to, and its peers
 * @on: the host
 * @info: filled in
 * @peers: filled with up to *@npeers peers
 * @npeers: in: room in @peers; out: how many were written
 *
 * Context: process.
 * Return: 0, or -ENOENT if @on is not bound to a verbs port.
 */
int op_verbs_host_info(struct op_net *on, struct op_verbs_info *info,
		       struct op_verbs_peer *peers, unsigned int *npeers)
{
	unsigned int room = *npeers;
	struct op_vport *vp;
	struct op_vpeer *p;
	unsigned long host;
	int err = -ENOENT;

	*npeers = 0;
	mutex_lock(&on->cfg_mutex);
	if (!on->up || on->tops != &op_verbs_transport)
		goto out;
	vp = on->tpriv;
	mutex_lock(&op_verbs_mutex);
	if (vp->vd->gone) {
		mutex_unlock(&op_verbs_mutex);
		goto out;
	}
	op_vport_info(vp, info);
	xa_for_each(&vp->peers, host, p) {
		if (*npeers == room)
			break;
		peers[(*npeers)++] = p->cfg;
	}
	mutex_unlock(&op_verbs_mutex);
	err = 0;
out:
	mutex_unlock(&on->cfg_mutex);
	return err;
}

int op_verbs_init(void)
{
	return ib_register_client(&op_verbs_client);
}

void op_verbs_exit(void)
{
	ib_unregister_client(&op_verbs_client);
}
