// SPDX-License-Identifier: GPL-2.0
/*
 * Fake RoCE hosts for onepipe-switch --roce, on the far ends of veths.
 *
 *   roce_peer test SWITCH SWNS
 *	The --roce loopback test, TAP output (tests/roce_loopback.sh sets
 *	up the namespaces and runs it).  It runs in the hosts' netns, where
 *	e1, e2 and e3 are; their peers p1, p2 and p3 are in SWNS, where it
 *	starts SWITCH.  The MACs are fixed by the script (see below).  It
 *	checks the beacons (every port, every interval, busy or not; their
 *	Ethernet, IPv4, BTH and DETH fields, their ICRC, their barriers),
 *	that frames are forwarded byte for byte, CE mark and all, that
 *	registers move with beacons only, that frames which are not 1Pipe
 *	UD SENDs are counted and dropped, that a beacon with a bad ICRC is
 *	refused, link expiry and a clean exit.
 *
 *   roce_peer beacons IFNAME DSTMAC SRCIP DSTIP BARRIER COMMIT SECONDS
 *	Send a 1Pipe beacon (a UD SEND to QPN 1) out of IFNAME every 10 ms
 *	for SECONDS: a host's beacons, so that a switch has a barrier.
 *
 *   roce_peer sniff IFNAME SECONDS
 *	Print every RoCEv2 UD SEND seen on IFNAME with its fields and
 *	whether roce.c finds its ICRC good; exit 0 if at least one was
 *	seen and every one was good.  Run on frames from rxe, it checks
 *	roce.c against the kernel at every run.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/onepipe.h>

#include "roce.h"
#include "harness.h"
#include "wire.h"

#define NP		3
#define INTERVAL_MS	20
#define TIMEOUT_IVS	25
#define QKEY_A		0x1234
#define QPN_A		0x11
#define QPN_B		18
#define NOC		(~0ULL)		/* no commit: OP_F_NOCOMMIT */
#define FRAME_MAX	2048

enum { PA, PB, PU };	/* down hosts=1, down hosts=2, up */

static const char *const pname[NP] = { "a", "b", "u" };
static const char *const hif[NP] = { "e1", "e2", "e3" };
static int hfd[NP];
/* e<N>: 02:00:00:00:0N:02 (the "host"), p<N>: 02:00:00:00:0N:01 */
static u8 hmac[NP][6], smac[NP][6];
static const u8 bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static char dir[] = "/tmp/onepipe-roce-test.XXXXXX";
static char stats_path[256];
static pid_t sw_pid;
static pid_t keepalive;		/* see start_keepalive() */

static void bail(const char *msg)
{
	printf("Bail out! %s: %s\n", msg, strerror(errno));
	if (sw_pid > 0)
		kill(sw_pid, SIGKILL);
	if (keepalive > 0)
		kill(keepalive, SIGKILL);
	exit(1);
}

/* Milliseconds from now until @end (an earlier now_ms() + x), 0 if past. */
static int ms_left(u64 end)
{
	u64 now = now_ms();

	return now < end ? (int)(end - now) : 0;
}

static u32 ip4(const char *s)
{
	u32 a;

	if (inet_pton(AF_INET, s, &a) != 1) {
		errno = EINVAL;
		bail(s);
	}
	return a;
}

static int parse_mac(const char *s, u8 *mac)
{
	int n = 0;

	if (sscanf(s, "%2hhx:%2hhx:%2hhx:%2hhx:%2hhx:%2hhx%n", &mac[0],
		   &mac[1], &mac[2], &mac[3], &mac[4], &mac[5], &n) != 6 ||
	    s[n])
		return -1;
	return 0;
}

/* An AF_PACKET socket on @ifname that does not hear its own sends. */
static int packet_socket(const char *ifname)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
	};
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0), one = 1;

	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (fd < 0 || !sll.sll_ifindex ||
	    setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one,
		       sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		bail(ifname);
	return fd;
}

static void send_frame(int fd, const u8 *f, size_t len)
{
	if (send(fd, f, len, 0) != (ssize_t)len)
		bail("send");
}

/*
 * Next RoCEv2 UD SEND on @fd within @ms: its length, or 0.  Other frames
 * are skipped (with IPv6 off there should be none).
 */
static size_t recv_ud(int fd, u8 *f, int ms, struct roce_ud *ud)
{
	u64 end = now_ms() + (u64)ms;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		u64 now = now_ms();
		ssize_t n;

		if (now >= end || poll(&p, 1, (int)(end - now)) <= 0)
			return 0;
		n = recv(fd, f, FRAME_MAX, MSG_DONTWAIT);
		if (n > 0 && !roce_parse(f, (size_t)n, ud))
			return (size_t)n;
	}
}

static bool is_beacon(const struct roce_ud *ud)
{
	return ud->len > 1 && ud->payload[1] == OP_PKT_BEACON;
}

/* ---- frames the fake hosts send --------------------------------------- */

/**
 * struct hpkt - a 1Pipe packet in a UD SEND, as a fake host sends it
 * @from: port whose host sends it
 * @dmac: destination MAC (a host's, or the switch port's for beacons)
 * @tos: IPv4 TOS
 * @type: OP_PKT_*
 * @src: source host id
 * @dst: destination host id
 * @barrier: barrier field
 * @commit: commit field, NOC for OP_F_NOCOMMIT
 * @payload: DATA payload, a string
 */
struct hpkt {
	int from;
	const u8 *dmac;
	u8 tos;
	u8 type;
	u32 src;
	u32 dst;
	u64 barrier;
	u64 commit;
	const char *payload;
};

static size_t make_1pipe(u8 *buf, const struct hpkt *k)
{
	size_t pl = k->payload ? strlen(k->payload) : 0;
	struct op_hdr h;

	memset(&h, 0, sizeof(h));
	h.type = k->type;
	h.barrier = k->barrier;
	h.ts = k->barrier + 7;
	if (k->commit == NOC)
		h.flags |= OP_F_NOCOMMIT;
	else
		h.commit = k->commit;
	if (k->type != OP_PKT_BEACON) {
		h.src_host = k->src;
		h.dst_host = k->dst;
		h.src_port = 4242;
		h.dst_port = 4343;
		h.seq = 99;
		/* DATA: its length; ACK: the last one acknowledged */
		h.aux = k->type == OP_PKT_DATA ? (u32)pl : h.seq;
		h.frag_cnt = 1;
	}
	op_hdr_encode(&h, buf);
	memcpy(buf + OP_HDR_LEN, k->payload ? k->payload : "", pl);
	return OP_HDR_LEN + pl;
}

/* Host @n's address, 10.9.@n.2, or its switch port's, 10.9.@n.1. */
static u32 addr(unsigned int n, bool sw)
{
	return htonl(0x0a090000 | n << 8 | (sw ? 1 : 2));
}

/*
 * Wrap @pl in a UD SEND from host @from to IPv4 @daddr, as rxe would.
 * The switch looks at none of this but the opcode: it must forward the
 * frame as it is.
 */
static size_t make_ud(u8 *f, int from, const u8 *dmac, u32 daddr, u8 tos,
		      const u8 *pl, size_t len)
{
	struct roce_ud ud = {
		.tos = tos, .ttl = 64, .id = 0x1234,
		.sport = ROCE_SPORT_BASE + 0x11, .pkey = ROCE_DEFAULT_PKEY,
		.dqpn = 0x11, .psn = 77, .qkey = ONEPIPE_VERBS_QKEY,
		.sqpn = 0x11 + (u32)from, .payload = pl, .len = len,
	};

	ud.saddr = addr((unsigned int)from + 1, false);
	ud.daddr = daddr;
	memcpy(ud.dmac, dmac, 6);
	memcpy(ud.smac, hmac[from], 6);
	return roce_build(f, FRAME_MAX, &ud);
}

static size_t make_host(u8 *f, const struct hpkt *k)
{
	u32 daddr = k->type == OP_PKT_BEACON ?
		    addr((unsigned int)k->from + 1, true) : addr(k->dst, false);
	u8 pl[256];

	return make_ud(f, k->from, k->dmac, daddr, k->tos, pl,
		       make_1pipe(pl, k));
}

/* A host's beacon to its switch port. */
static void host_beacon(int from, u64 barrier, u64 commit)
{
	struct hpkt k = {
		.from = from, .dmac = smac[from], .type = OP_PKT_BEACON,
		.barrier = barrier, .commit = commit,
	};
	u8 f[FRAME_MAX];

	send_frame(hfd[from], f, make_host(f, &k));
}

/*
 * Keep every link alive in the background: each host beacons every
 * interval with the values test_beacons() gives it.  Registers never go
 * back, so the tests may still raise them above those.
 */
static void start_keepalive(void)
{
	int p;

	keepalive = fork();
	if (keepalive < 0)
		bail("fork");
	if (keepalive)
		return;
	for (p = 0; p < NP; p++)
		hfd[p] = packet_socket(hif[p]);
	for (;;) {
		host_beacon(PA, 1000, 500);
		host_beacon(PB, 2000, 600);
		host_beacon(PU, 1500, 550);
		sleep_ms(INTERVAL_MS);
	}
}

static void stop_keepalive(void)
{
	if (keepalive <= 0)
		return;
	kill(keepalive, SIGKILL);
	waitpid(keepalive, NULL, 0);
	keepalive = 0;
}

/* ---- the switch and its stats file ------------------------------------ */

static char *read_stats(void)
{
	return stats_read(stats_path);
}

/* "key":NUMBER in port @name's line (NULL: the top level), or -1. */
static long long stat_num(const char *s, const char *name, const char *key)
{
	char k[64];
	const char *l = s, *end, *p;

	if (!s)
		return -1;
	if (name) {
		snprintf(k, sizeof(k), "{\"name\":\"%s\",", name);
		l = strstr(s, k);
		if (!l)
			return -1;
	} else {
		l = strstr(s, "\n],");
		if (!l)
			return -1;
	}
	end = strchr(l + 1, '\n');
	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(l, k);
	if (!p || (end && p > end))
		return -1;
	return strtoll(p + strlen(k), NULL, 10);
}

static bool stat_str(const char *s, const char *name, const char *kv)
{
	char k[64];
	const char *l, *end, *p;

	snprintf(k, sizeof(k), "{\"name\":\"%s\",", name);
	l = s ? strstr(s, k) : NULL;
	if (!l)
		return false;
	end = strchr(l, '\n');
	p = strstr(l, kv);
	return p && (!end || p < end);
}

/* Ask for a fresh stats file (SIGUSR1) and read it. */
static const char *fresh_stats(void)
{
	return stats_fresh(stats_path, sw_pid);
}

/* Wait up to @ms for port @name's @key to be @want. */
static bool wait_stat(const char *name, const char *key, long long want,
		      int ms)
{
	u64 end = now_ms() + (u64)ms;

	do {
		if (stat_num(fresh_stats(), name, key) == want)
			return true;
	} while (now_ms() < end);
	return false;
}

static void start_switch(const char *sw, const char *ns)
{
	char iv[16], to[16], pa[160], pb[160];
	const char *argv[32];
	int n = 0;

	snprintf(stats_path, sizeof(stats_path), "%s/stats.json", dir);
	snprintf(iv, sizeof(iv), "%d", INTERVAL_MS * 1000);
	snprintf(to, sizeof(to), "%d", TIMEOUT_IVS);
	snprintf(pa, sizeof(pa), "a,down,p1,hosts=1,mac=02:00:00:00:01:02,"
		 "ip=10.9.1.2,src=10.9.1.1,qpn=%#x,qkey=%#x", QPN_A, QKEY_A);
	snprintf(pb, sizeof(pb), "b,down,p2,hosts=2,qpn=%d,"
		 "src=10.9.2.1,ip=10.9.2.2,mac=02:00:00:00:02:02", QPN_B);
	argv[n++] = "ip";
	argv[n++] = "netns";
	argv[n++] = "exec";
	argv[n++] = ns;
	argv[n++] = sw;
	argv[n++] = "--roce";
	argv[n++] = "--name";
	argv[n++] = "roce-test";
	argv[n++] = "--interval-us";
	argv[n++] = iv;
	argv[n++] = "--timeout-intervals";
	argv[n++] = to;
	argv[n++] = "--commit-timeout-intervals";
	argv[n++] = to;
	argv[n++] = "--stats";
	argv[n++] = stats_path;
	argv[n++] = "--port";
	argv[n++] = pa;
	argv[n++] = "--port";
	argv[n++] = pb;
	argv[n++] = "--port";
	argv[n++] = "u,up,p3";
	argv[n] = NULL;
	sw_pid = fork();
	if (sw_pid < 0)
		bail("fork");
	if (!sw_pid) {
		execvp("ip", (char **)argv);
		_exit(127);
	}
}

/* ip netns exec execs the switch in place: its pid is ours to signal. */
static void find_switch(void)
{
	const char *s;
	int i;

	for (i = 0; i < 300; i++) {
		s = read_stats();
		if (s && strstr(s, "\"mode\":\"roce\"") && strstr(s, "\n]")) {
			ok(true, "switch started, stats file says mode roce");
			return;
		}
		sleep_ms(10);
	}
	ok(false, "switch started, stats file says mode roce");
	bail("no stats file");
}

/* ---- checks ------------------------------------------------------------ */

/**
 * struct bwant - what a beacon out of a port must look like
 * @dmac: destination MAC
 * @saddr: IPv4 source (text)
 * @daddr: IPv4 destination (text)
 * @qpn: destination QP
 * @qkey: Q_Key
 */
struct bwant {
	const u8 *dmac;
	const char *saddr;
	const char *daddr;
	u32 qpn;
	u32 qkey;
};

static const struct bwant bw[NP] = {
	{ hmac[PA], "10.9.1.1", "10.9.1.2", QPN_A, QKEY_A },
	{ hmac[PB], "10.9.2.1", "10.9.2.2", QPN_B, ONEPIPE_VERBS_QKEY },
	{ bcast, "0.0.0.0", "0.0.0.0", 1, ONEPIPE_VERBS_QKEY },
};

/* Next beacon on port @p within @ms; its header in *@h. */
static bool next_beacon(int p, int ms, u8 *f, struct roce_ud *ud,
			struct op_hdr *h)
{
	u64 end = now_ms() + (u64)ms;

	while (now_ms() < end) {
		if (!recv_ud(hfd[p], f, ms_left(end), ud))
			return false;
		if (is_beacon(ud))
			return !op_hdr_decode(h, ud->payload, ud->len);
	}
	return false;
}

static void check_beacon_frame(int p, u64 barrier, u64 commit)
{
	const struct bwant *w = &bw[p];
	u8 f[FRAME_MAX];
	struct roce_ud ud;
	struct op_hdr h;
	bool got = next_beacon(p, 4 * INTERVAL_MS, f, &ud, &h);

	ok(got, "port %s: a beacon within 4 intervals", pname[p]);
	if (!got)
		return;
	ok(!memcmp(ud.dmac, w->dmac, 6) && !memcmp(ud.smac, smac[p], 6),
	   "port %s: beacon MACs: to the peer's, from the interface's",
	   pname[p]);
	ok(ud.saddr == ip4(w->saddr) && ud.daddr == ip4(w->daddr) &&
	   ud.tos == IPTOS_ECN_ECT0,
	   "port %s: beacon IPv4 %s -> %s, ECT(0)", pname[p], w->saddr,
	   w->daddr);
	ok(ud.dqpn == w->qpn && ud.qkey == w->qkey && ud.sqpn == 1 &&
	   ud.pkey == 0xffff, "port %s: beacon to QPN %u Q_Key %#x from "
	   "QPN 1, P_Key 0xffff (got QPN %u Q_Key %#x)", pname[p], w->qpn,
	   w->qkey, ud.dqpn, ud.qkey);
	ok(roce_icrc_ok(ud.ip, ud.ip_len) && ud.len == OP_HDR_LEN,
	   "port %s: beacon ICRC good, 52-byte payload", pname[p]);
	ok(h.barrier == barrier && h.commit == commit &&
	   !(h.flags & (OP_F_NOBARRIER | OP_F_NOCOMMIT)),
	   "port %s: beacon says barrier %llu commit %llu (got %llu %llu)",
	   pname[p], (unsigned long long)barrier,
	   (unsigned long long)commit, (unsigned long long)h.barrier,
	   (unsigned long long)h.commit);
}

/* Drain everything queued on every port. */
static void drain(void)
{
	u8 f[FRAME_MAX];
	int p;

	for (p = 0; p < NP; p++)
		while (recv(hfd[p], f, sizeof(f), MSG_DONTWAIT) > 0)
			;
}

/* Next frame on @p that is not a beacon, within @ms: length or 0. */
static size_t next_data(int p, u8 *f, int ms)
{
	u64 end = now_ms() + (u64)ms;
	struct roce_ud ud;
	size_t n;

	while (now_ms() < end) {
		n = recv_ud(hfd[p], f, ms_left(end), &ud);
		if (!n)
			return 0;
		if (!is_beacon(&ud))
			return n;
	}
	return 0;
}

/* Send @k and check it arrives on port @to exactly as sent. */
static void check_forward(const struct hpkt *k, int to, const char *what)
{
	u8 f[FRAME_MAX], g[FRAME_MAX];
	size_t n = make_host(f, k), m;

	drain();
	send_frame(hfd[k->from], f, n);
	m = next_data(to, g, 10 * INTERVAL_MS);
	ok(m == n && !memcmp(f, g, n), "%s: arrives on %s byte for byte",
	   what, pname[to]);
}

static void test_no_barrier_no_beacon(void)
{
	u8 f[FRAME_MAX];
	struct roce_ud ud;
	struct op_hdr h;
	int p, n = 0;

	for (p = 0; p < NP; p++)
		n += next_beacon(p, 2 * INTERVAL_MS, f, &ud, &h);
	ok(!n, "no beacons while no port has a barrier");
}

static void test_beacons(void)
{
	start_keepalive();
	ok(wait_stat("a", "register", 1000, 1000) &&
	   wait_stat("b", "register", 2000, 1000) &&
	   wait_stat("u", "commit_register", 550, 1000),
	   "the three host beacons reach the registers");
	drain();
	check_beacon_frame(PA, 1000, 500);
	check_beacon_frame(PB, 1000, 500);
	check_beacon_frame(PU, 1000, 500);	/* min(a, b): up-down */
}

static void test_forward(void)
{
	struct hpkt k = {
		.from = PA, .dmac = hmac[PB], .type = OP_PKT_DATA, .src = 1,
		.dst = 2, .barrier = 9000, .commit = 8000,
		.payload = "1Pipe over RoCE",
	};
	const char *s;

	check_forward(&k, PB, "DATA a->b with barriers far above");
	s = fresh_stats();
	ok(stat_num(s, "a", "register") == 1000 &&
	   stat_num(s, "a", "commit_register") == 500,
	   "its barriers are not taken (register %lld, commit %lld)",
	   stat_num(s, "a", "register"), stat_num(s, "a", "commit_register"));
	k.from = PU;
	k.src = 9;
	k.dst = 1;
	k.dmac = hmac[PA];
	check_forward(&k, PA, "DATA from the spine to host 1");
	k.from = PA;
	k.src = 1;
	k.dst = 7;
	k.dmac = bcast;
	k.type = OP_PKT_ACK;
	k.payload = NULL;
	check_forward(&k, PU, "ACK to an unknown host goes up");
}

static void test_ce(void)
{
	struct hpkt k = {
		.from = PA, .dmac = hmac[PB], .tos = 0x03, .type = OP_PKT_DATA,
		.src = 1, .dst = 2, .barrier = 9000, .commit = NOC,
		.payload = "marked",
	};
	const char *s;

	check_forward(&k, PB, "DATA that arrived CE");
	s = fresh_stats();
	ok(stat_num(s, "a", "rx_ce") == 1 && stat_num(s, "b", "ce_fwd") == 1,
	   "rx_ce and ce_fwd count it");
}

/* Frames that are not 1Pipe UD SENDs: counted, dropped, no state. */
static void test_other(void)
{
	static const u8 junk[40];
	u8 f[FRAME_MAX], g[FRAME_MAX];
	struct hpkt k = {
		.from = PA, .dmac = hmac[PB], .type = OP_PKT_DATA, .src = 1,
		.dst = 2, .barrier = 9000, .commit = NOC, .payload = "x",
	};
	size_t n = make_host(f, &k);
	size_t bth = ROCE_ETH_LEN + ROCE_IP_LEN + ROCE_UDP_LEN;

	drain();
	memcpy(g, f, n);
	g[12] = 0x08;
	g[13] = 0x06;				/* ARP */
	send_frame(hfd[PA], g, n);
	memcpy(g, f, n);
	g[ROCE_ETH_LEN + ROCE_IP_LEN + 3] = 53;	/* UDP to port 4661 */
	send_frame(hfd[PA], g, n);
	memcpy(g, f, n);
	g[bth] = 0x04;				/* RC SEND Only */
	send_frame(hfd[PA], g, n);
	ok(wait_stat("a", "rx_other", 3, 1000) &&
	   stat_num(read_stats(), NULL, "rx_other") == 3,
	   "ARP, other UDP and an RC SEND are counted in rx_other (%lld)",
	   stat_num(read_stats(), "a", "rx_other"));
	/* A UD SEND with something else in it: a malformed 1Pipe packet. */
	send_frame(hfd[PA], g, make_ud(g, PA, hmac[PB], addr(2, false), 0,
				       junk, sizeof(junk)));
	ok(wait_stat(NULL, "rx_bad", 1, 1000),
	   "a UD SEND that is not 1Pipe is counted in rx_bad");
	ok(!next_data(PB, g, 3 * INTERVAL_MS) &&
	   !next_data(PU, g, INTERVAL_MS), "none of them is forwarded");
}

static void test_icrc(void)
{
	struct hpkt k = {
		.from = PA, .dmac = smac[PA], .type = OP_PKT_BEACON,
		.barrier = 5000, .commit = 4000,
	};
	u8 f[FRAME_MAX];
	size_t n = make_host(f, &k);

	f[n - 1] ^= 0x55;
	send_frame(hfd[PA], f, n);
	ok(wait_stat("a", "rx_icrc_bad", 1, 1000) &&
	   stat_num(read_stats(), "a", "register") == 1000,
	   "a beacon with a bad ICRC is refused (register %lld)",
	   stat_num(read_stats(), "a", "register"));
	host_beacon(PA, 3000, 2500);
	ok(wait_stat("a", "register", 3000, 1000),
	   "a good one moves the register");
	ok(stat_num(fresh_stats(), NULL, "rx_queue_drops") == 0 &&
	   stat_num(read_stats(), "a", "rx_late") == 0,
	   "so far nothing was late or dropped by the kernel");
	drain();
	check_beacon_frame(PB, 1500, 550);	/* min(3000, 2000, 1500) */
}

/*
 * Beacons on busy ports: send a data packet a->b every quarter interval
 * for 20 intervals; b must still get about one beacon per interval.
 */
static void test_busy(void)
{
	struct hpkt k = {
		.from = PA, .dmac = hmac[PB], .type = OP_PKT_DATA, .src = 1,
		.dst = 2, .barrier = 100, .commit = NOC, .payload = "busy",
	};
	u8 f[FRAME_MAX], g[FRAME_MAX];
	size_t n = make_host(f, &k);
	unsigned int sent = 0, data = 0, beacons = 0;
	struct roce_ud ud;
	u64 end;

	drain();
	end = now_ms() + 20 * INTERVAL_MS;
	while (now_ms() < end) {
		u64 next = now_ms() + INTERVAL_MS / 4;

		send_frame(hfd[PA], f, n);
		sent++;
		/*
		 * Read until the next send is due, not until b goes quiet:
		 * b is never quiet for long, it gets a beacon every interval.
		 */
		while (recv_ud(hfd[PB], g, ms_left(next), &ud)) {
			if (is_beacon(&ud))
				beacons++;
			else
				data += !memcmp(f, g, n);
		}
	}
	/* The last data frames: give them two intervals. */
	end = now_ms() + 2 * INTERVAL_MS;
	while (recv_ud(hfd[PB], g, ms_left(end), &ud))
		if (!is_beacon(&ud))
			data += !memcmp(f, g, n);
	ok(data == sent, "busy port: %u of %u data frames forwarded intact",
	   data, sent);
	ok(beacons >= 15 && beacons <= 22,
	   "busy port: %u beacons in 20 intervals", beacons);
	/* Their ts, 107, is below a's register (3000): each one was late. */
	ok(stat_num(fresh_stats(), "a", "rx_late") == sent,
	   "rx_late counts data below its link's beacon barrier");
}

/* b falls silent while a and u keep beaconing: b times out. */
static void test_expiry(void)
{
	u64 end = now_ms() + (TIMEOUT_IVS + 10) * INTERVAL_MS;
	const char *s;

	stop_keepalive();
	while (now_ms() < end) {
		host_beacon(PA, 3100, 2600);
		host_beacon(PU, 1600, 560);
		sleep_ms(INTERVAL_MS);
	}
	s = fresh_stats();
	ok(stat_str(s, "b", "\"state\":\"dead\"") &&
	   stat_num(s, "b", "timeouts") == 1 &&
	   stat_str(s, "a", "\"state\":\"live\""),
	   "a silent port times out, the others stay live");
	drain();
	check_beacon_frame(PA, 1600, 560);	/* min(3100, 1600) */
}

static void stop_switch(void)
{
	int st = 0;

	kill(sw_pid, SIGTERM);
	if (waitpid(sw_pid, &st, 0) != sw_pid)
		bail("waitpid");
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "SIGTERM: clean exit (status %#x)", st);
	sw_pid = 0;
}

/* 02:00:00:00:0<p + 1>:0<last>, as tests/roce_loopback.sh sets them */
static void set_mac(u8 *mac, int p, u8 last)
{
	memset(mac, 0, 6);
	mac[0] = 2;
	mac[4] = (u8)(p + 1);
	mac[5] = last;
}

static int run_test(const char *sw, const char *ns)
{
	int p;

	if (!mkdtemp(dir))
		bail("mkdtemp");
	printf("TAP version 13\n");
	for (p = 0; p < NP; p++) {
		hfd[p] = packet_socket(hif[p]);
		set_mac(hmac[p], p, 2);
		set_mac(smac[p], p, 1);
	}
	start_switch(sw, ns);
	find_switch();
	test_no_barrier_no_beacon();
	test_beacons();
	test_forward();
	test_ce();
	test_other();
	test_icrc();
	test_busy();
	test_expiry();
	stop_switch();
	unlink(stats_path);
	rmdir(dir);
	return tap_end();
}

/* ---- helpers for the rxe script ---------------------------------------- */

static int run_beacons(char **a)
{
	u8 dmac[6], pl[OP_HDR_LEN], f[FRAME_MAX];
	struct hpkt k = { .type = OP_PKT_BEACON };
	struct roce_ud ud = {
		.tos = IPTOS_ECN_ECT0, .ttl = 64, .sport = ROCE_SPORT_BASE,
		.pkey = ROCE_DEFAULT_PKEY, .dqpn = 1,
		.qkey = ONEPIPE_VERBS_QKEY, .sqpn = 1, .payload = pl,
		.len = sizeof(pl),
	};
	int fd = packet_socket(a[0]);
	u64 end;
	size_t n;

	if (parse_mac(a[1], dmac))
		return 2;
	k.barrier = strtoull(a[4], NULL, 0);
	k.commit = strtoull(a[5], NULL, 0);
	end = now_ms() + strtoull(a[6], NULL, 0) * 1000;
	make_1pipe(pl, &k);
	memcpy(ud.dmac, dmac, 6);
	ud.saddr = ip4(a[2]);
	ud.daddr = ip4(a[3]);
	n = roce_build(f, sizeof(f), &ud);
	while (now_ms() < end) {
		send_frame(fd, f, n);
		sleep_ms(10);
	}
	return 0;
}

static void print_ud(const struct roce_ud *ud, bool good, size_t n)
{
	char s[16], d[16];

	inet_ntop(AF_INET, &ud->saddr, s, sizeof(s));
	inet_ntop(AF_INET, &ud->daddr, d, sizeof(d));
	printf("ud-send %s -> %s qpn %u qkey %#x sqpn %u len %zu frame %zu "
	       "icrc %s\n", s, d, ud->dqpn, ud->qkey, ud->sqpn, ud->len, n,
	       good ? "good" : "BAD");
}

static int run_sniff(char **a)
{
	u64 end = now_ms() + strtoull(a[1], NULL, 0) * 1000;
	unsigned int seen = 0, good = 0;
	int fd = packet_socket(a[0]);
	u8 f[FRAME_MAX];
	struct roce_ud ud;
	size_t n;

	while (now_ms() < end) {
		n = recv_ud(fd, f, ms_left(end), &ud);
		if (!n)
			break;
		seen++;
		good += roce_icrc_ok(ud.ip, ud.ip_len);
		print_ud(&ud, roce_icrc_ok(ud.ip, ud.ip_len), n);
	}
	printf("sniffed %u UD SENDs on %s, %u with a good ICRC\n", seen, a[0],
	       good);
	return seen && good == seen ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "test"))
		return run_test(argv[2], argv[3]);
	if (argc == 9 && !strcmp(argv[1], "beacons"))
		return run_beacons(argv + 2);
	if (argc == 4 && !strcmp(argv[1], "sniff"))
		return run_sniff(argv + 2);
	fprintf(stderr,
		"usage: roce_peer test SWITCH SWNS\n"
		"       roce_peer beacons IFNAME DSTMAC SRCIP DSTIP BARRIER "
		"COMMIT SECONDS\n"
		"       roce_peer sniff IFNAME SECONDS\n");
	return 2;
}
