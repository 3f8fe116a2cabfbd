// SPDX-License-Identifier: GPL-2.0
/*
 * UDP transport: 1Pipe packets in UDP datagrams between a host and its
 * uplink switch, through a kernel UDP tunnel socket (as TIPC's UDP media
 * does).  Only the uplink may speak to the host: datagrams from anyone
 * else are counted as bad and dropped, so a stray sender cannot inject
 * barriers.
 *
 * A datagram carries one packet or a bundle of them (core/wire.h): what
 * one send hands over goes in as few datagrams as the path's MTU allows
 * (net.onepipe.bundle), and the uplink's switch bundles too.  On this
 * path every datagram costs a trip through the IP stacks of both ends
 * and the switch's socket I/O, whatever its size; small messages then
 * share that cost.
 */
#include <linux/slab.h>
#include <net/dst_cache.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/udp.h>
#include <net/udp_tunnel.h>

#include "onepipe.h"

/* Smallest fragment payload we accept a path for. */
#define OP_UDP_MIN_FRAG	256

/**
 * struct op_udp - the UDP transport of one host
 * @on: the host
 * @sock: the kernel UDP socket
 * @dcache: route to the uplink
 * @laddr: local address
 * @uaddr: uplink address
 * @lport: local port
 * @uport: uplink port
 * @mtu: largest 1Pipe packet the route carries
 * @headroom: room for the headers pushed in front of ours on that route:
 *	its device's link layer, any transform's (IPsec), IPv4 and UDP
 */
struct op_udp {
	struct op_net *on;
	struct socket *sock;
	struct dst_cache dcache;
	__be32 laddr;
	__be32 uaddr;
	__be16 lport;
	__be16 uport;
	unsigned int mtu;
	unsigned int headroom;
};

/*
 * A packet a clone of its datagram may pin at most this many times about
 * what a copy of it would cost (SKB_TRUESIZE()): past that, it is copied.
 */
#define OP_UDP_PIN_MAX	4

/*
 * Packet @data, @len bytes of bundle @skb, in an sk_buff of its own: a
 * clone cut down to its bytes, or a copy.  A copy used to be most of
 * what receiving a small message cost; the receive path only reads a
 * packet's bytes, never writes around them (op_rcv_list()), so clones
 * may share the datagram's buffer.  A clone is charged about what a copy
 * would be, so sockets and queues count about its own size, and it is
 * made only while that leaves what it pins (its own sk_buff and the
 * whole buffer, until its siblings are gone too: the datagram's
 * truesize) within OP_UDP_PIN_MAX times its charge: small packets of a
 * large datagram are copied.  So are the packets of a datagram from the
 * emergency reserves (pfmemalloc), which ordinary sockets refuse.
 */
static struct sk_buff *op_udp_packet(struct sk_buff *skb, const u8 *data,
				     u16 len)
{
	unsigned int charge = SKB_TRUESIZE(len);
	struct sk_buff *pkt;

	if (op_fault_alloc())
		return NULL;
	if (skb->truesize > OP_UDP_PIN_MAX * charge || skb_pfmemalloc(skb)) {
		pkt = alloc_skb(len, GFP_ATOMIC | __GFP_NOWARN);
		if (pkt)
			skb_put_data(pkt, data, len);
		return pkt;
	}
	pkt = skb_clone(skb, GFP_ATOMIC | __GFP_NOWARN);
	if (!pkt)
		return NULL;
	__skb_pull(pkt, data - skb->data);
	__skb_trim(pkt, len);
	pkt->ip_summed = CHECKSUM_NONE;
	pkt->truesize = charge;
	return pkt;
}

/*
 * Take a bundle apart: each packet in an sk_buff of its own
 * (op_udp_packet()), in order, all taken in together (op_rcv_list()).
 * A malformed bundle is dropped whole, counted once; a packet we have no
 * memory for is lost alone, as on a lossy link.
 */
static void op_udp_unbundle(struct op_net *on, struct sk_buff *skb, bool ce)
{
	size_t off = OP_BUNDLE_HDR_LEN;
	struct sk_buff_head pkts;
	int n, i;

	if (skb_linearize(skb)) {
		op_count(on, ONEPIPE_C_RX_NOBUFS);
		goto drop;
	}
	n = op_bundle_check(skb->data, skb->len);
	if (n < 0) {
		op_count(on, ONEPIPE_C_RX_BAD);
		goto drop;
	}
	op_count(on, ONEPIPE_C_RX_BUNDLES);
	/*
	 * Clones need neither: op_rx_data() drops the route anyway, and a
	 * copy never had the extensions (the secpath was checked already).
	 */
	skb_dst_drop(skb);
	skb_ext_reset(skb);
	__skb_queue_head_init(&pkts);
	for (i = 0; i < n; i++) {
		struct sk_buff *pkt;
		const u8 *data;
		u16 len;

		data = op_bundle_next(skb->data, &off, &len);
		pkt = op_udp_packet(skb, data, len);
		if (!pkt) {
			op_count(on, ONEPIPE_C_RX_NOBUFS);
			continue;
		}
		__skb_queue_tail(&pkts, pkt);
	}
	consume_skb(skb);
	if (!skb_queue_empty(&pkts))
		op_rcv_list(on, &pkts, ce);
	return;
drop:
	kfree_skb(skb);
}

static int op_udp_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct op_udp *u = rcu_dereference_sk_user_data(sk);
	bool ce;

	if (!u)
		goto drop;
	if (ip_hdr(skb)->saddr != u->uaddr || udp_hdr(skb)->source != u->uport) {
		op_count(u->on, ONEPIPE_C_RX_BAD);
		goto drop;
	}
	ce = INET_ECN_is_ce(ip_hdr(skb)->tos);
	__skb_pull(skb, sizeof(struct udphdr));
	if (pskb_may_pull(skb, 1) && op_is_bundle(skb->data, skb->len))
		op_udp_unbundle(u->on, skb, ce);
	else
		op_rcv(u->on, skb, ce);
	return 0;
drop:
	kfree_skb(skb);
	return 0;
}

static struct rtable *op_udp_route(struct op_udp *u, __be32 *saddr)
{
	struct flowi4 fl = {
		.daddr = u->uaddr,
		.saddr = u->laddr,
		.flowi4_proto = IPPROTO_UDP,
	};
	struct rtable *rt;

	rt = dst_cache_get_ip4(&u->dcache, saddr);
	if (rt)
		return rt;
	rt = ip_route_output_key(u->on->net, &fl);
	if (IS_ERR(rt))
		return rt;
	dst_cache_set_ip4(&u->dcache, &rt->dst, fl.saddr);
	*saddr = fl.saddr;
	return rt;
}

/*
 * The next datagram from the head of @pkts: the longest run of packets
 * that fits one bundle within the path's MTU, or the first packet alone
 * (when bundling is off, when the next does not fit, or without memory
 * for the bundle: the first goes bare, the others are tried again).  *@n
 * is set to how many packets it carries.
 */
static struct sk_buff *op_udp_take(struct op_udp *u, struct sk_buff_head *pkts,
				   unsigned int *n)
{
	struct sk_buff *first = __skb_dequeue(pkts), *skb, *b;
	unsigned int len = OP_BUNDLE_HDR_LEN + OP_BUNDLE_ENTRY_LEN + first->len;
	unsigned int i;
	u8 *p;

	*n = 1;
	if (!READ_ONCE(u->on->bundle))
		return first;
	skb_queue_walk(pkts, skb) {
		if (*n == OP_BUNDLE_MAX_PKTS ||
		    len + OP_BUNDLE_ENTRY_LEN + skb->len > u->mtu)
			break;
		len += OP_BUNDLE_ENTRY_LEN + skb->len;
		(*n)++;
	}
	if (*n == 1)
		return first;
	b = op_fault_alloc() ? NULL :
	    alloc_skb(u->headroom + len, GFP_ATOMIC | __GFP_NOWARN);
	if (!b) {
		*n = 1;
		return first;
	}
	skb_reserve(b, u->headroom);
	p = skb_put(b, len);
	op_bundle_put_hdr(p, *n);
	p += OP_BUNDLE_HDR_LEN;
	for (i = 0; i < *n; i++) {
		skb = i ? __skb_dequeue(pkts) : first;
		op_bundle_put_len(p, skb->len);
		p += OP_BUNDLE_ENTRY_LEN;
		skb_copy_bits(skb, 0, p, skb->len);
		p += skb->len;
		consume_skb(skb);
	}
	return b;
}

static int op_udp_xmit(struct op_net *on, struct sk_buff_head *pkts)
{
	struct op_udp *u = on->tpriv;
	int failed = 0;

	while (!skb_queue_empty(pkts)) {
		struct sk_buff *skb;
		struct rtable *rt;
		unsigned int n;
		__be32 saddr;

		rt = op_udp_route(u, &saddr);
		if (IS_ERR(rt)) {
			failed += skb_queue_len(pkts);
			__skb_queue_purge(pkts);
			break;
		}
		skb = op_udp_take(u, pkts, &n);
		/*
		 * A packet built before a reconfiguration (another transport,
		 * less room) may still come through, and a packet may share its
		 * buffer with its message (op_msg_packets()): give it room of
		 * its own rather than push headers in front of a buffer that
		 * lacks it or is not ours.
		 */
		if (unlikely(skb_cow_head(skb, u->headroom))) {
			ip_rt_put(rt);
			kfree_skb(skb);
			failed += n;
			continue;
		}
		if (n > 1)
			op_count(on, ONEPIPE_C_TX_BUNDLES);
		/* ECN-capable: a congested hop marks instead of dropping. */
		udp_tunnel_xmit_skb(rt, u->sock->sk, skb, saddr, u->uaddr,
				    INET_ECN_ECT_0,
				    ip4_dst_hoplimit(&rt->dst), 0, u->lport,
				    u->uport, false, false);
	}
	return failed;
}

static unsigned int op_udp_mtu(struct op_net *on)
{
	return ((struct op_udp *)on->tpriv)->mtu;
}

static int op_udp_up(struct op_net *on, const struct op_host_cfg *cfg)
{
	struct udp_port_cfg ucfg = {
		.family = AF_INET,
		.local_ip.s_addr = cfg->laddr,
		.local_udp_port = htons(cfg->lport),
	};
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = op_udp_encap_rcv,
	};
	struct op_udp *u;
	struct rtable *rt;
	__be32 saddr;
	int err;

	if (!cfg->uaddr || !cfg->uport || !cfg->lport)
		return -EINVAL;
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		return -ENOMEM;
	u->on = on;
	u->laddr = cfg->laddr;
	u->uaddr = cfg->uaddr;
	u->lport = htons(cfg->lport);
	u->uport = htons(cfg->uport);
	err = dst_cache_init(&u->dcache, GFP_KERNEL);
	if (err)
		goto out_free;

	local_bh_disable();
	rt = op_udp_route(u, &saddr);
	if (!IS_ERR(rt)) {
		u->mtu = dst_mtu(&rt->dst) - sizeof(struct iphdr) -
			 sizeof(struct udphdr);
		/*
		 * The route's own device, not LL_MAX_HEADER: every packet a
		 * host builds is allocated with this room, and for a small
		 * message LL_MAX_HEADER alone doubles the allocation.  Should
		 * the route move to a device that needs more, IP's output
		 * makes room (a copy), as for any other socket.
		 */
		u->headroom = LL_RESERVED_SPACE(rt->dst.dev) +
			      rt->dst.header_len + sizeof(struct iphdr) +
			      sizeof(struct udphdr);
		ip_rt_put(rt);
	}
	local_bh_enable();
	if (IS_ERR(rt)) {
		err = PTR_ERR(rt);
		goto out_cache;
	}
	if (u->mtu < OP_HDR_LEN + OP_UDP_MIN_FRAG) {
		err = -EMSGSIZE;
		goto out_cache;
	}

	err = udp_sock_create(on->net, &ucfg, &u->sock);
	if (err)
		goto out_cache;
	tcfg.sk_user_data = u;
	on->tpriv = u;
	on->frag_size = u->mtu - OP_HDR_LEN;
	WRITE_ONCE(on->headroom, u->headroom);
	setup_udp_tunnel_sock(on->net, u->sock, &tcfg);
	return 0;

out_cache:
	dst_cache_destroy(&u->dcache);
out_free:
	kfree(u);
	return err;
}

static void op_udp_down(struct op_net *on)
{
	struct op_udp *u = on->tpriv;

	/* Waits for receivers in flight (synchronize_rcu()). */
	udp_tunnel_sock_release(u->sock);
	dst_cache_destroy(&u->dcache);
	on->tpriv = NULL;
	kfree(u);
}

const struct op_transport_ops op_udp_transport = {
	.kind		= ONEPIPE_TRANSPORT_UDP,
	.name		= "udp",
	.up		= op_udp_up,
	.down		= op_udp_down,
	.xmit		= op_udp_xmit,
	.mtu		= op_udp_mtu,
};
