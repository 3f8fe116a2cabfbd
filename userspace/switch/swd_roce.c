// SPDX-License-Identifier: GPL-2.0
/*
 * onepipe-switch's RoCE backend (--roce): the verbs transport, the
 * paper's "switch CPU" mode.
 *
 * Every port is a network interface, read and written whole with one
 * AF_PACKET socket per interface.  A 1Pipe packet is the payload of a
 * RoCEv2 UD SEND Only (roce.h).  Its ICRC covers nearly every byte, and
 * the receiving host's RDMA device drops a packet whose ICRC is wrong, so
 * the switch never changes a forwarded frame: same bytes, same MACs (the
 * hosts address their frames to the final destination).  Barriers
 * therefore travel in beacons only (switch_logic.c's beacon-only mode):
 * every interval, every port gets a beacon, a UD SEND crafted here with
 * its own ICRC and addressed to the peer's QP.
 *
 * ECN needs nothing: a frame leaves exactly as it came, CE mark and all
 * (the TOS byte is outside the ICRC), and beacons go out ECT(0) as the
 * hosts' packets do.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/onepipe.h>

#include "roce.h"
#include "swd.h"
#include "ts.h"

#define BEACON_TTL	64
#define BEACON_SQPN	1	/* a switch has no QP: say GSI, as the contract */

/**
 * struct roce_port - an interface and how to reach the QP behind it
 * @ifname: the interface
 * @fd: its AF_PACKET socket
 * @mac: its MAC, the source of our beacons
 * @peer_mac: destination MAC of our beacons
 * @peer_ip: their IPv4 destination, network order
 * @src_ip: their IPv4 source, network order
 * @qpn: their destination QP
 * @qkey: their Q_Key
 * @psn: PSN of the next one (UD ignores it; it numbers them in captures)
 * @rx_other: frames that are not RoCEv2 UD SENDs
 * @rx_icrc_bad: beacons dropped for a bad ICRC
 * @rx_queue_drops: frames the kernel dropped because the socket's receive
 *	queue was full (PACKET_STATISTICS, summed: reading resets it)
 * @rx_late: best-effort DATA that arrived with a timestamp below the
 *	barrier its sender's last beacon promised (see count_late())
 * @beacon: the beacon frame of the current tick
 */
struct roce_port {
	char ifname[IFNAMSIZ];
	int fd;
	u8 mac[6];
	u8 peer_mac[6];
	u32 peer_ip;
	u32 src_ip;
	u32 qpn;
	u32 qkey;
	u32 psn;
	u64 rx_other;
	u64 rx_icrc_bad;
	u64 rx_queue_drops;
	u64 rx_late;
	u8 beacon[ROCE_FRAME_LEN(OP_HDR_LEN)];
};

static struct roce_port rports[SW_MAX_PORTS];

static int roce_init(const char *listen)
{
	(void)listen;	/* refused by the option parser */
	return 0;
}

/* ---- --port NAME,ROLE,IFNAME[,key=value]... ----------------------------- */

/* A number, decimal or 0x hex, within [@min, @max]. */
static int parse_num(const char *s, u64 min, u64 max, u64 *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end || *v < min || *v > max ? -1 : 0;
}

static int parse_mac(const char *s, u8 *mac)
{
	int n = 0;

	if (sscanf(s, "%2hhx:%2hhx:%2hhx:%2hhx:%2hhx:%2hhx%n", &mac[0],
		   &mac[1], &mac[2], &mac[3], &mac[4], &mac[5], &n) != 6)
		return -1;
	return s[n] ? -1 : 0;
}

static int parse_ip(const char *s, u32 *ip)
{
	return inet_pton(AF_INET, s, ip) == 1 ? 0 : -1;
}

/* What a port's key=value options fill in. */
struct port_opts {
	struct roce_port *rp;
	struct sw_range r[SW_MAX_RANGES];
	int nr;
	unsigned int seen;	/* bit per key: each at most once */
};

static int parse_kv(struct port_opts *o, char *kv)
{
	static const char *const keys[] = {
		"hosts", "mac", "ip", "src", "qpn", "qkey", NULL
	};
	char *v = strchr(kv, '=');
	unsigned int k;
	u64 n;

	if (!v)
		return -1;
	*v++ = 0;
	for (k = 0; keys[k] && strcmp(kv, keys[k]); k++)
		;
	if (!keys[k] || (o->seen & (1U << k)))
		return -1;
	o->seen |= 1U << k;
	switch (k) {
	case 0:
		o->nr = sw_parse_hosts(v, o->r, SW_MAX_RANGES);
		return o->nr < 0 ? -1 : 0;
	case 1:
		return parse_mac(v, o->rp->peer_mac);
	case 2:
		return parse_ip(v, &o->rp->peer_ip);
	case 3:
		return parse_ip(v, &o->rp->src_ip);
	case 4:
		/* QPN 0 is the SMI's; rxe drops anything sent to it. */
		if (parse_num(v, 1, ROCE_QPN_MASK, &n))
			return -1;
		o->rp->qpn = (u32)n;
		return 0;
	default:
		if (parse_num(v, 0, 0xffffffffULL, &n))
			return -1;
		o->rp->qkey = (u32)n;
		return 0;
	}
}

/*
 * The defaults suit a port towards another switch, which reads every
 * frame on its interface: broadcast, no addresses, QPN 1.  A port towards
 * a host needs the host's MAC, IP and QPN, and a source IP its kernel
 * accepts (not 0.0.0.0).
 */
static void port_defaults(struct roce_port *rp)
{
	memset(rp, 0, sizeof(*rp));
	memset(rp->peer_mac, 0xff, sizeof(rp->peer_mac));
	rp->qpn = 1;
	rp->qkey = ONEPIPE_VERBS_QKEY;
	rp->fd = -1;
}

static bool ifname_taken(const char *ifname)
{
	unsigned int i;

	for (i = 0; i < swd.sw.nports; i++)
		if (!strcmp(rports[i].ifname, ifname))
			return true;
	return false;
}

static int parse_port(char *s, struct port_opts *o, enum sw_role *rl,
		      char **name)
{
	char *role, *ifname, *kv;

	*name = strsep(&s, ",");
	role = strsep(&s, ",");
	ifname = strsep(&s, ",");
	if (!role || !ifname)
		return -1;
	if (!strcmp(role, "down"))
		*rl = SW_ROLE_DOWN;
	else if (!strcmp(role, "up"))
		*rl = SW_ROLE_UP;
	else
		return -1;
	/* One socket per interface: an interface is one input port. */
	if (!*ifname || strlen(ifname) >= IFNAMSIZ || ifname_taken(ifname))
		return -1;
	strcpy(o->rp->ifname, ifname);
	while ((kv = strsep(&s, ",")))
		if (parse_kv(o, kv))
			return -1;
	return 0;
}

static int roce_add_port(const char *spec)
{
	struct roce_port rp;
	struct port_opts o = { .rp = &rp };
	char *dup = strdup(spec), *name;
	enum sw_role rl;
	int i = -1;

	if (!dup)
		return -1;
	port_defaults(&rp);
	if (!parse_port(dup, &o, &rl, &name))
		i = sw_add_port(&swd.sw, name, rl, o.r, (unsigned int)o.nr);
	if (i >= 0)
		rports[i] = rp;
	else
		fprintf(stderr, "onepipe-switch: bad or duplicate --port %s\n",
			spec);
	free(dup);
	return i < 0 ? -1 : 0;
}

/* ---- transmit ---------------------------------------------------------- */

static void roce_beacon(const struct sw_beacon *b)
{
	struct roce_port *rp = &rports[b->port];
	u8 hdr[OP_HDR_LEN];
	struct roce_ud ud = {
		.saddr = rp->src_ip,
		.daddr = rp->peer_ip,
		.tos = IPTOS_ECN_ECT0,
		.ttl = BEACON_TTL,
		.sport = ROCE_SPORT_BASE,
		.pkey = ROCE_DEFAULT_PKEY,
		.dqpn = rp->qpn,
		.psn = rp->psn++ & ROCE_PSN_MASK,
		.qkey = rp->qkey,
		.sqpn = BEACON_SQPN,
		.payload = hdr,
		.len = sizeof(hdr),
	};
	size_t n;

	memcpy(ud.dmac, rp->peer_mac, 6);
	memcpy(ud.smac, rp->mac, 6);
	sw_beacon_build(hdr, b);
	n = roce_build(rp->beacon, sizeof(rp->beacon), &ud);
	swd_tx_queue(b->port, rp->beacon, n, true, false);
}

/* Send the queue: one sendmmsg() per interface, each in queue order. */
static void roce_flush(void)
{
	static struct mmsghdr m[SWD_TXMAX];
	static struct iovec iov[SWD_TXMAX];
	static unsigned int idx[SWD_TXMAX];
	u64 pending = 0;
	unsigned int i, p, n;

	for (i = 0; i < swd.ntx; i++)
		pending |= (u64)1 << swd.tx[i].port;
	for (p = 0; pending; p++) {
		if (!(pending & ((u64)1 << p)))
			continue;
		pending &= ~((u64)1 << p);
		for (i = 0, n = 0; i < swd.ntx; i++) {
			if (swd.tx[i].port != p)
				continue;
			iov[n].iov_base = swd.tx[i].buf;
			iov[n].iov_len = swd.tx[i].len;
			memset(&m[n].msg_hdr, 0, sizeof(m[n].msg_hdr));
			m[n].msg_hdr.msg_iov = &iov[n];
			m[n].msg_hdr.msg_iovlen = 1;
			idx[n++] = i;
		}
		swd_tx_send(rports[p].fd, m, idx, NULL, n);
	}
}

/* ---- receive ----------------------------------------------------------- */

static bool is_beacon(const struct roce_ud *ud)
{
	return ud->len > 1 && ud->payload[1] == OP_PKT_BEACON;
}

/*
 * A beacon changes our registers, so it must be what its sender sent:
 * check its ICRC (52 bytes, cheap).  Everything else is only forwarded,
 * and its receiver checks.
 */
static bool beacon_corrupt(unsigned int in, const struct roce_ud *ud)
{
	struct sw_port *p = &swd.sw.ports[in];

	if (!is_beacon(ud) || roce_icrc_ok(ud->ip, ud->ip_len))
		return false;
	rports[in].rx_icrc_bad++;
	p->rx_pkts++;
	p->drops++;
	return true;
}

/*
 * A diagnostic, no verdict: best-effort DATA below its link's barrier
 * register broke the promise of an earlier beacon, so receivers will
 * find it late.  Either the sender stamped it wrong, or the beacon
 * overtook it on the way here (a veth delivers what two CPUs sent through
 * two backlogs).  Reliable DATA is exempt: a retransmission keeps its
 * old timestamp, and the commit barrier covers it.
 */
static void count_late(unsigned int in, const struct roce_ud *ud)
{
	const struct op_link *l = &swd.sw.links[in];
	struct op_hdr h;

	if (ud->len < OP_HDR_LEN || ud->payload[1] != OP_PKT_DATA ||
	    !l->heard || l->dead ||
	    op_hdr_decode(&h, ud->payload, ud->len) != OP_PARSE_OK ||
	    (h.flags & OP_F_RELIABLE))
		return;
	if (op_ts_before(h.ts, l->reg))
		rports[in].rx_late++;
}

static void rx_frame(unsigned int in, const struct mmsghdr *m,
		     const struct sockaddr_ll *from, u8 *buf, u64 now)
{
	size_t len = m->msg_len;
	struct roce_ud ud;
	unsigned int out;
	u8 *pl;
	bool ce;

	/* Our own sends, should PACKET_IGNORE_OUTGOING be missing. */
	if (from->sll_pkttype == PACKET_OUTGOING)
		return;
	/* A truncated frame is malformed: let the 1Pipe parser refuse it. */
	if (m->msg_hdr.msg_flags & MSG_TRUNC) {
		sw_rx(&swd.sw, in, buf, 0, now, &out);
		return;
	}
	if (roce_parse(buf, len, &ud)) {
		rports[in].rx_other++;
		return;
	}
	ce = (ud.tos & IPTOS_ECN_MASK) == IPTOS_ECN_CE;
	if (ce)
		swd.rx_ce[in]++;
	if (beacon_corrupt(in, &ud))
		return;
	count_late(in, &ud);
	pl = buf + (ud.payload - buf);
	if (sw_rx(&swd.sw, in, pl, ud.len, now, &out) == SW_FORWARD)
		swd_tx_queue(out, buf, len, false, ce);
}

static void roce_rx(unsigned int in)
{
	static struct mmsghdr m[SWD_BATCH];
	static struct iovec iov[SWD_BATCH];
	static struct sockaddr_ll from[SWD_BATCH];
	int round, n, i;
	u64 now;

	for (round = 0; round < SWD_RX_ROUNDS; round++) {
		for (i = 0; i < SWD_BATCH; i++) {
			iov[i].iov_base = swd_rxbuf[i];
			iov[i].iov_len = SWD_BUF;
			memset(&m[i].msg_hdr, 0, sizeof(m[i].msg_hdr));
			m[i].msg_hdr.msg_name = &from[i];
			m[i].msg_hdr.msg_namelen = sizeof(from[i]);
			m[i].msg_hdr.msg_iov = &iov[i];
			m[i].msg_hdr.msg_iovlen = 1;
		}
		n = recvmmsg(rports[in].fd, m, SWD_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0) {
			if (n < 0)
				swd_rx_error("recvmmsg");
			return;
		}
		now = swd_clock_ns(CLOCK_MONOTONIC);
		for (i = 0; i < n; i++)
			rx_frame(in, &m[i], &from[i], swd_rxbuf[i], now);
		swd_flush();
		if (n < SWD_BATCH)
			return;
	}
}

/* ---- setup ------------------------------------------------------------- */

static int if_mac(int fd, const char *ifname, u8 *mac)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		return -1;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

/*
 * Promiscuous: frames between hosts carry the destination host's MAC, not
 * ours.  A veth passes them up anyway; a real NIC would filter them out.
 */
static int set_promisc(int fd, int ifindex)
{
	struct packet_mreq mr = {
		.mr_ifindex = ifindex,
		.mr_type = PACKET_MR_PROMISC,
	};

	return setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr,
			  sizeof(mr));
}

/*
 * Protocol 0 until bind(): the socket hears nothing before it is tied to
 * its interface, so no other interface's frame can slip in.
 */
static int open_port(unsigned int i)
{
	struct roce_port *rp = &rports[i];
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
	};
	int one = 1;

	sll.sll_ifindex = (int)if_nametoindex(rp->ifname);
	if (!sll.sll_ifindex)
		return -1;
	rp->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
			0);
	if (rp->fd < 0)
		return -1;
	/* Not reading our own sends halves the work (Linux 4.20+). */
	setsockopt(rp->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one,
		   sizeof(one));
	swd_setbufs(rp->fd);
	if (bind(rp->fd, (struct sockaddr *)&sll, sizeof(sll)) ||
	    set_promisc(rp->fd, sll.sll_ifindex) ||
	    if_mac(rp->fd, rp->ifname, rp->mac))
		return -1;
	return swd_epoll_add(rp->fd, SWD_EV_BACKEND + i);
}

static int roce_open(void)
{
	unsigned int i;

	for (i = 0; i < swd.sw.nports; i++) {
		if (open_port(i)) {
			fprintf(stderr, "onepipe-switch: port %s: "
				"interface %s: %s\n", swd.sw.ports[i].name,
				rports[i].ifname, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* ---- stats ------------------------------------------------------------- */

static void put_mac(FILE *f, const char *key, const u8 *m)
{
	fprintf(f, ",\"%s\":\"%02x:%02x:%02x:%02x:%02x:%02x\"", key, m[0],
		m[1], m[2], m[3], m[4], m[5]);
}

static void put_ip(FILE *f, const char *key, u32 ip)
{
	char a[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &ip, a, sizeof(a));
	fprintf(f, ",\"%s\":\"%s\"", key, a);
}

static void roce_put_head(FILE *f)
{
	fprintf(f, "\"mode\":\"roce\",");
}

static void roce_put_peer(FILE *f, unsigned int port)
{
	fprintf(f, "%s", rports[port].ifname);
}

/* Collect the kernel's count of frames the socket had no room for. */
static void sample_queue_drops(struct roce_port *rp)
{
	struct tpacket_stats st;
	socklen_t len = sizeof(st);

	if (rp->fd >= 0 &&
	    !getsockopt(rp->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len))
		rp->rx_queue_drops += st.tp_drops;
}

static void roce_put_port_tail(FILE *f, unsigned int port)
{
	struct roce_port *rp = &rports[port];

	put_mac(f, "mac", rp->mac);
	put_mac(f, "peer_mac", rp->peer_mac);
	put_ip(f, "peer_ip", rp->peer_ip);
	put_ip(f, "src", rp->src_ip);
	sample_queue_drops(rp);
	fprintf(f, ",\"qpn\":%u,\"qkey\":%u,\"rx_other\":%llu,"
		"\"rx_icrc_bad\":%llu,\"rx_queue_drops\":%llu,"
		"\"rx_late\":%llu", rp->qpn, rp->qkey,
		(unsigned long long)rp->rx_other,
		(unsigned long long)rp->rx_icrc_bad,
		(unsigned long long)rp->rx_queue_drops,
		(unsigned long long)rp->rx_late);
}

static void roce_put_tail(FILE *f)
{
	u64 other = 0, icrc = 0, qdrops = 0;
	unsigned int i;

	for (i = 0; i < swd.sw.nports; i++) {
		other += rports[i].rx_other;
		icrc += rports[i].rx_icrc_bad;
		qdrops += rports[i].rx_queue_drops;
	}
	fprintf(f, ",\"rx_other\":%llu,\"rx_icrc_bad\":%llu,"
		"\"rx_queue_drops\":%llu", (unsigned long long)other,
		(unsigned long long)icrc, (unsigned long long)qdrops);
}

static void roce_describe(FILE *f)
{
	fprintf(f, "RoCEv2 on interfaces");
}

const struct swd_backend swd_roce = {
	.init = roce_init,
	.add_port = roce_add_port,
	.open = roce_open,
	.rx = roce_rx,
	.beacon = roce_beacon,
	.flush = roce_flush,
	.put_head = roce_put_head,
	.put_peer = roce_put_peer,
	.put_port_tail = roce_put_port_tail,
	.put_tail = roce_put_tail,
	.describe = roce_describe,
};
