// SPDX-License-Identifier: GPL-2.0
/*
 * onepipe-switch's UDP backend: the UDP transport.
 *
 * One UDP socket.  Every configured port is a peer address; a datagram's
 * input port is the peer it came from.  A datagram is one 1Pipe packet or
 * a bundle of them (kernel/core/wire.h), and the switch rewrites the
 * barrier and commit barrier of each packet it forwards (switch_logic.c).
 *
 * Bundles: a bundle is checked whole, then each of its packets is switched
 * as if it had come alone.  What one receive batch forwards to one port
 * leaves in as few datagrams as --bundle-bytes allows (swd.bundle_bytes),
 * so the per-datagram cost of the network stacks is paid once per bundle.
 *
 * ECN: the hosts send ECT(0) so that a congested hop marks rather than
 * drops, and their receivers echo the marks to the senders' congestion
 * control.  The switch re-sends every packet from its own socket, so it
 * carries the mark across: the socket's TOS is ECT(0), and a packet that
 * arrived Congestion Experienced (IP_RECVTOS) leaves with an IP_TOS cmsg
 * saying CE.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "swd.h"

#define SWD_UDP_PORT	5640		/* ONEPIPE_UDP_PORT */

/* Room for one IP_TOS cmsg, aligned for struct cmsghdr. */
union udp_tosctl {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

static struct {
	struct sockaddr_in peer[SW_MAX_PORTS];
	struct sockaddr_in local;
	int sock;
	union udp_tosctl ce_ctl;	/* IP_TOS = CE, built once */
	u8 beacon_buf[SW_MAX_PORTS][OP_HDR_LEN];
	u64 rx_bundles;			/* well-formed bundles received */
	u64 rx_bad_bundles;		/* malformed ones (in rx_bad too) */
	u64 tx_bundles;			/* bundles handed to the kernel */
} udp;

/* "A.B.C.D[:PORT]"; @port0_ok allows port 0 (bind to any free port). */
static int parse_addr(const char *s, struct sockaddr_in *sa, bool port0_ok)
{
	char host[INET_ADDRSTRLEN];
	const char *colon = strchr(s, ':');
	size_t hl = colon ? (size_t)(colon - s) : strlen(s);
	u64 port = SWD_UDP_PORT;

	if (!hl || hl >= sizeof(host))
		return -1;
	memcpy(host, s, hl);
	host[hl] = 0;
	if (colon && swd_parse_u64(colon + 1, port0_ok ? 0 : 1, 65535, &port))
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((u16)port);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

static bool same_addr(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
	return a->sin_addr.s_addr == b->sin_addr.s_addr &&
	       a->sin_port == b->sin_port;
}

static int udp_init(const char *listen)
{
	if (!listen)
		listen = "0.0.0.0";
	if (parse_addr(listen, &udp.local, true)) {
		fprintf(stderr, "onepipe-switch: bad --listen %s\n", listen);
		return -1;
	}
	return 0;
}

/* --port NAME,ROLE,PEERADDR[:PORT][,hosts=LIST] */
static int udp_add_port(const char *spec)
{
	char *dup = strdup(spec), *s = dup;
	char *name, *role, *peer, *hosts;
	struct sw_range r[SW_MAX_RANGES];
	struct sockaddr_in sa;
	enum sw_role rl;
	int nr = 0, i, ret = -1;

	if (!dup)
		return -1;
	name = strsep(&s, ",");
	role = strsep(&s, ",");
	peer = strsep(&s, ",");
	hosts = strsep(&s, ",");
	if (!role || !peer || s)
		goto out;
	if (!strcmp(role, "down"))
		rl = SW_ROLE_DOWN;
	else if (!strcmp(role, "up"))
		rl = SW_ROLE_UP;
	else
		goto out;
	if (parse_addr(peer, &sa, false))
		goto out;
	if (hosts) {
		if (strncmp(hosts, "hosts=", 6))
			goto out;
		nr = sw_parse_hosts(hosts + 6, r, SW_MAX_RANGES);
		if (nr < 0)
			goto out;
	}
	for (i = 0; i < (int)swd.sw.nports; i++)
		if (same_addr(&udp.peer[i], &sa))
			goto out;	/* the input port would be ambiguous */
	i = sw_add_port(&swd.sw, name, rl, r, (unsigned int)nr);
	if (i < 0)
		goto out;
	udp.peer[i] = sa;
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "onepipe-switch: bad or duplicate --port %s\n",
			spec);
	free(dup);
	return ret;
}

/* ---- transmit ---------------------------------------------------------- */

static void udp_beacon(const struct sw_beacon *b)
{
	u8 *buf = udp.beacon_buf[b->port];

	sw_beacon_build(buf, b);
	swd_tx_queue(b->port, buf, OP_HDR_LEN, true, false);
}

/*
 * A datagram udp_flush() puts together: packets of one port and one CE
 * flag, chained through udp_next[] from @first to @last.  As a bundle it
 * would take @bytes.
 */
struct udp_dgram {
	unsigned int port;
	unsigned int n;
	unsigned int first;
	unsigned int last;
	size_t bytes;
	bool ce;
};

static struct udp_dgram udp_dg[SWD_TXMAX];
static unsigned int udp_next[SWD_TXMAX];

/*
 * Sort the queue into datagrams, numbered in the order they are started,
 * which is the order they are sent: each port's packets keep their order.
 * A packet joins its port's open datagram if the CE mark, the count and
 * the size allow, else it starts a new one, which becomes the port's open
 * one unless it leaves no room for even a bare header.  Return: the
 * number of datagrams.
 */
static unsigned int udp_group(void)
{
	int open[SW_MAX_PORTS];
	unsigned int i, n = 0;

	for (i = 0; i < swd.sw.nports; i++)
		open[i] = -1;
	for (i = 0; i < swd.ntx; i++) {
		const struct swd_tx *t = &swd.tx[i];
		size_t need = OP_BUNDLE_ENTRY_LEN + t->len;
		struct udp_dgram *d;

		if (open[t->port] >= 0) {
			d = &udp_dg[open[t->port]];
			if (d->ce == t->ce && d->n < OP_BUNDLE_MAX_PKTS &&
			    d->bytes + need <= swd.bundle_bytes) {
				udp_next[d->last] = i;
				d->last = i;
				d->n++;
				d->bytes += need;
				continue;
			}
		}
		d = &udp_dg[n];
		*d = (struct udp_dgram){
			.port = t->port, .n = 1, .first = i, .last = i,
			.bytes = OP_BUNDLE_HDR_LEN + need, .ce = t->ce,
		};
		open[t->port] = d->bytes + OP_BUNDLE_ENTRY_LEN + OP_HDR_LEN <=
				swd.bundle_bytes ? (int)n : -1;
		n++;
	}
	return n;
}

static void set_iov(struct iovec *iov, void *base, size_t len)
{
	iov->iov_base = base;
	iov->iov_len = len;
}

/*
 * Send the queue, bundled, without copying: a bundle's iovecs are its
 * preamble, then each packet's length and the packet where it lies.
 * Everything leaves ECT(0), the socket's TOS; a datagram of packets that
 * arrived CE is sent with a cmsg that overrides that with CE, so the mark
 * reaches the receiver.
 */
static void udp_flush(void)
{
	static struct mmsghdr m[SWD_TXMAX];
	/* Bare: one each; a bundle of k: 1 + 2k, k >= 2. */
	static struct iovec iov[2 * SWD_TXMAX + SWD_TXMAX / 2];
	static u8 pre[SWD_TXMAX / 2][OP_BUNDLE_HDR_LEN];
	static u8 lens[SWD_TXMAX][OP_BUNDLE_ENTRY_LEN];
	static unsigned int idx[SWD_TXMAX], cnt[SWD_TXMAX];
	unsigned int nd = udp_group(), j, i, k = 0, v = 0, nb = 0;

	for (j = 0; j < nd; j++) {
		const struct udp_dgram *d = &udp_dg[j];
		struct msghdr *mh = &m[j].msg_hdr;

		memset(mh, 0, sizeof(*mh));
		mh->msg_name = &udp.peer[d->port];
		mh->msg_namelen = sizeof(udp.peer[d->port]);
		mh->msg_iov = &iov[v];
		if (d->n > 1) {
			op_bundle_put_hdr(pre[nb], d->n);
			set_iov(&iov[v++], pre[nb++], sizeof(pre[0]));
		}
		for (i = d->first;; i = udp_next[i]) {
			const struct swd_tx *t = &swd.tx[i];

			if (d->n > 1) {
				op_bundle_put_len(lens[i], (u16)t->len);
				set_iov(&iov[v++], lens[i], sizeof(lens[i]));
			}
			set_iov(&iov[v++], t->buf, t->len);
			idx[k++] = i;
			if (i == d->last)
				break;
		}
		mh->msg_iovlen = (size_t)(&iov[v] - mh->msg_iov);
		if (d->ce) {
			mh->msg_control = udp.ce_ctl.buf;
			mh->msg_controllen = sizeof(udp.ce_ctl.buf);
		}
		cnt[j] = d->n;
	}
	udp.tx_bundles += nb;
	swd_tx_send(udp.sock, m, idx, cnt, nd);
}

/* ---- receive ----------------------------------------------------------- */

static int find_peer(const struct sockaddr_in *sa, socklen_t len)
{
	unsigned int i;

	if (len < sizeof(*sa) || sa->sin_family != AF_INET)
		return -1;
	for (i = 0; i < swd.sw.nports; i++)
		if (same_addr(&udp.peer[i], sa))
			return (int)i;
	return -1;
}

/* Did the datagram arrive Congestion Experienced (its IP_TOS cmsg)? */
static bool rx_ce(struct msghdr *mh)
{
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm))
		if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS &&
		    cm->cmsg_len >= CMSG_LEN(1))
			return (*CMSG_DATA(cm) & IPTOS_ECN_MASK) ==
			       IPTOS_ECN_CE;
	return false;
}

/* Switch one packet, bare or from a bundle; queue it where it goes. */
static void rx_pkt(unsigned int in, u8 *pkt, size_t len, bool ce, u64 now)
{
	unsigned int out;

	if (sw_rx(&swd.sw, in, pkt, len, now, &out) == SW_FORWARD)
		swd_tx_queue(out, pkt, len, false, ce);
}

/*
 * A bundle is taken apart whole or dropped whole: a half-read one would
 * leave no way to tell where the damage began.  A malformed one counts as
 * one malformed datagram (rx_bad, as the hosts count it, and a drop on
 * its port), and as what it is (rx_bad_bundles).  The packets of a good
 * one are switched in order, each as if it had come alone, CE mark
 * included.
 */
static void rx_bundle(unsigned int in, u8 *buf, size_t len, bool ce, u64 now)
{
	int n = op_bundle_check(buf, len);
	size_t off = OP_BUNDLE_HDR_LEN;
	u16 plen;

	if (n < 0) {
		udp.rx_bad_bundles++;
		swd.sw.rx_bad++;
		swd.sw.ports[in].rx_pkts++;
		swd.sw.ports[in].drops++;
		return;
	}
	udp.rx_bundles++;
	while (n--) {
		u8 *pkt = buf + (op_bundle_next(buf, &off, &plen) - buf);

		rx_pkt(in, pkt, plen, ce, now);
	}
}

static void rx_one(struct mmsghdr *m, const struct sockaddr_in *src, u8 *buf,
		   u64 now)
{
	int in = find_peer(src, m->msg_hdr.msg_namelen);
	size_t len = m->msg_len;
	bool ce;

	if (in < 0) {
		swd.sw.rx_unknown_src++;
		return;
	}
	ce = rx_ce(&m->msg_hdr);
	if (ce)
		swd.rx_ce[in]++;
	/* A truncated datagram is malformed: let the parser refuse it. */
	if (m->msg_hdr.msg_flags & MSG_TRUNC)
		len = 0;
	if (op_is_bundle(buf, len))
		rx_bundle((unsigned int)in, buf, len, ce, now);
	else
		rx_pkt((unsigned int)in, buf, len, ce, now);
}

static void udp_rx(unsigned int tag)
{
	static struct mmsghdr m[SWD_BATCH];
	static struct iovec iov[SWD_BATCH];
	static struct sockaddr_in src[SWD_BATCH];
	static union udp_tosctl ctl[SWD_BATCH];
	int round, n, i;
	u64 now;

	(void)tag;
	for (round = 0; round < SWD_RX_ROUNDS; round++) {
		for (i = 0; i < SWD_BATCH; i++) {
			iov[i].iov_base = swd_rxbuf[i];
			iov[i].iov_len = SWD_BUF;
			memset(&m[i].msg_hdr, 0, sizeof(m[i].msg_hdr));
			m[i].msg_hdr.msg_name = &src[i];
			m[i].msg_hdr.msg_namelen = sizeof(src[i]);
			m[i].msg_hdr.msg_iov = &iov[i];
			m[i].msg_hdr.msg_iovlen = 1;
			m[i].msg_hdr.msg_control = ctl[i].buf;
			m[i].msg_hdr.msg_controllen = sizeof(ctl[i].buf);
		}
		n = recvmmsg(udp.sock, m, SWD_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0) {
			if (n < 0)
				swd_rx_error("recvmmsg");
			return;
		}
		now = swd_clock_ns(CLOCK_MONOTONIC);
		for (i = 0; i < n; i++)
			rx_one(&m[i], &src[i], swd_rxbuf[i], now);
		swd_flush();
		if (n < SWD_BATCH)
			return;
	}
}

/* ---- setup ------------------------------------------------------------- */

/*
 * ECN-transparent: every packet leaves ECT(0) (the socket's TOS) unless
 * it is sent with the CE cmsg built here; IP_RECVTOS tells which came in
 * marked.  Not best effort: without it congestion marks would be lost, or
 * turned into drops at the next congested hop.
 */
static int setup_ecn(void)
{
	int ect0 = IPTOS_ECN_ECT0, one = 1;
	struct msghdr mh = {
		.msg_control = udp.ce_ctl.buf,
		.msg_controllen = sizeof(udp.ce_ctl.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	int ce = IPTOS_ECN_CE;

	cm->cmsg_level = IPPROTO_IP;
	cm->cmsg_type = IP_TOS;
	cm->cmsg_len = CMSG_LEN(sizeof(ce));
	memcpy(CMSG_DATA(cm), &ce, sizeof(ce));
	if (setsockopt(udp.sock, IPPROTO_IP, IP_TOS, &ect0, sizeof(ect0)))
		return -1;
	return setsockopt(udp.sock, IPPROTO_IP, IP_RECVTOS, &one,
			  sizeof(one));
}

static int open_socket(void)
{
	socklen_t len = sizeof(udp.local);
	int one = 1;

	udp.sock = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			  0);
	if (udp.sock < 0 || setup_ecn())
		return -1;
	setsockopt(udp.sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	swd_setbufs(udp.sock);
	if (bind(udp.sock, (struct sockaddr *)&udp.local, sizeof(udp.local)))
		return -1;
	return getsockname(udp.sock, (struct sockaddr *)&udp.local, &len);
}

static int udp_open(void)
{
	if (open_socket() || swd_epoll_add(udp.sock, SWD_EV_BACKEND)) {
		perror("onepipe-switch: socket");
		return -1;
	}
	return 0;
}

/* ---- stats ------------------------------------------------------------- */

static void put_addr(FILE *f, const struct sockaddr_in *sa)
{
	char a[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &sa->sin_addr, a, sizeof(a));
	fprintf(f, "%s:%u", a, ntohs(sa->sin_port));
}

static void udp_put_head(FILE *f)
{
	fprintf(f, "\"listen\":\"");
	put_addr(f, &udp.local);
	fprintf(f, "\",\"bundle_bytes\":%zu,", swd.bundle_bytes);
}

static void udp_put_peer(FILE *f, unsigned int port)
{
	put_addr(f, &udp.peer[port]);
}

static void udp_put_tail(FILE *f)
{
	fprintf(f, ",\"rx_bundles\":%llu,\"rx_bad_bundles\":%llu,"
		"\"tx_bundles\":%llu",
		(unsigned long long)udp.rx_bundles,
		(unsigned long long)udp.rx_bad_bundles,
		(unsigned long long)udp.tx_bundles);
}

static void udp_put_port_nothing(FILE *f, unsigned int port)
{
	(void)f;
	(void)port;
}

static void udp_describe(FILE *f)
{
	fprintf(f, "listening on ");
	put_addr(f, &udp.local);
}

const struct swd_backend swd_udp = {
	.init = udp_init,
	.add_port = udp_add_port,
	.open = udp_open,
	.rx = udp_rx,
	.beacon = udp_beacon,
	.flush = udp_flush,
	.put_head = udp_put_head,
	.put_peer = udp_put_peer,
	.put_port_tail = udp_put_port_nothing,
	.put_tail = udp_put_tail,
	.describe = udp_describe,
};
