// SPDX-License-Identifier: GPL-2.0
/*
 * Loopback integration test of onepipe-switch: run the real binary on
 * 127.0.0.1 with three ports whose peers are three UDP sockets of this
 * test, then send crafted packets and check forwarding, the barrier and
 * commit-barrier rewrite (the commit barrier aggregated over several
 * inputs), the up-down rule, beacons (content, timing, idle rule), link
 * expiry, ECN transparency (what arrives CE leaves CE, everything else
 * ECT(0), beacons too), the stats file, pushed barrier advances (at once
 * to idle ports, after the busy window to a busy one, both well before
 * the next tick), bundles (taken apart and switched packet by packet,
 * malformed ones dropped whole, forwards bundled per port in order, none
 * with --bundle-bytes 0) and a clean exit on SIGTERM.  TAP output.
 *
 * usage: loopback PATH-TO-onepipe-switch
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "wire.h"

#define INTERVAL_MS	20
#define TIMEOUT_IVS	25
#define NPEER		3
#define LISTEN_KEY	"\"listen\":\"127.0.0.1:"
#define NOC		(~0ULL)		/* no commit: OP_F_NOCOMMIT */
/*
 * Attempts at a beacon-rate measurement: a loaded machine (two cores, a
 * kernel build next door) can hold the switch or this test off the CPU
 * for several intervals, which is no fault of the switch.  A measurement
 * that fails is repeated; the assertions are those of the last attempt.
 */
#define TIMING_TRIES	3

enum { PA, PB, PU };	/* down hosts=1, down hosts=2, up */

static const char *const pname[NPEER] = { "a", "b", "u" };
static int peer[NPEER];
static struct sockaddr_in sw_addr;
static char stats_path[256];
static char dir[] = "/tmp/onepipe-switch-test.XXXXXX";
static pid_t sw_pid;

static void bail(const char *msg)
{
	printf("Bail out! %s: %s\n", msg, strerror(errno));
	if (sw_pid > 0)
		kill(sw_pid, SIGKILL);
	exit(1);
}

static u64 now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

static int udp_socket(u16 *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len))
		bail("socket");
	*port = ntohs(sa.sin_port);
	return fd;
}

/* ---- the switch process and its stats file ----------------------------- */

static char *read_stats(void)
{
	return stats_read(stats_path);
}

/* Ask for a fresh stats file (SIGUSR1) and read it. */
static char *fresh_stats(void)
{
	return stats_fresh(stats_path, sw_pid);
}

/* Number after "key": in @s (the first occurrence), or -1. */
static long long json_num(const char *s, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = s ? strstr(s, k) : NULL;
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

/* The stats line of port @name. */
static const char *port_line(const char *s, const char *name)
{
	char k[64];

	snprintf(k, sizeof(k), "{\"name\":\"%s\",", name);
	return s ? strstr(s, k) : NULL;
}

/* Does port @name's line hold "@key":"@val"? */
static bool port_str_is(const char *s, const char *name, const char *key,
			const char *val)
{
	const char *l = port_line(s, name), *p;
	char k[64];

	if (!l)
		return false;
	p = strchr(l, '\n');
	snprintf(k, sizeof(k), "\"%s\":\"%s\"", key, val);
	l = strstr(l, k);
	return l && (!p || l < p);
}

static bool port_state_is(const char *s, const char *name, const char *st)
{
	return port_str_is(s, name, "state", st);
}

static bool commit_state_is(const char *s, const char *name, const char *st)
{
	return port_str_is(s, name, "commit_state", st);
}

/*
 * Start the switch, its ports the peer sockets (udp_socket() in @pp),
 * with "--bundle-bytes @bundle" unless @bundle is NULL.
 */
static void start_switch(const char *self, const u16 *pp, const char *bundle)
{
	char ports[NPEER][96], iv[16], to[16], *argv[22];
	int i, n = 0;

	snprintf(ports[PA], sizeof(ports[PA]), "a,down,127.0.0.1:%u,hosts=1",
		 pp[PA]);
	snprintf(ports[PB], sizeof(ports[PB]), "b,down,127.0.0.1:%u,hosts=2",
		 pp[PB]);
	snprintf(ports[PU], sizeof(ports[PU]), "u,up,127.0.0.1:%u", pp[PU]);
	snprintf(iv, sizeof(iv), "%d", INTERVAL_MS * 1000);
	snprintf(to, sizeof(to), "%d", TIMEOUT_IVS);
	argv[n++] = (char *)self;
	argv[n++] = "--listen";
	argv[n++] = "127.0.0.1:0";
	argv[n++] = "--interval-us";
	argv[n++] = iv;
	argv[n++] = "--timeout-intervals";
	argv[n++] = to;
	/* Both registers of a link die together here. */
	argv[n++] = "--commit-timeout-intervals";
	argv[n++] = to;
	argv[n++] = "--stats";
	argv[n++] = stats_path;
	argv[n++] = "--name";
	argv[n++] = "lo-test";
	for (i = 0; i < NPEER; i++) {
		argv[n++] = "--port";
		argv[n++] = ports[i];
	}
	if (bundle) {
		argv[n++] = "--bundle-bytes";
		argv[n++] = (char *)bundle;
	}
	argv[n] = NULL;
	sw_pid = fork();
	if (sw_pid < 0)
		bail("fork");
	if (!sw_pid) {
		execv(self, argv);
		perror(self);
		_exit(127);
	}
}

/* The switch binds port 0; learn the real one from its stats file. */
static void find_switch(void)
{
	const char *s, *p;
	int i;

	for (i = 0; i < 500; i++) {
		s = read_stats();
		p = s ? strstr(s, LISTEN_KEY) : NULL;
		if (p) {
			sw_addr.sin_family = AF_INET;
			sw_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			sw_addr.sin_port =
				htons((u16)atoi(p + strlen(LISTEN_KEY)));
			ok(true, "switch started, stats file written");
			return;
		}
		sleep_ms(10);
	}
	ok(false, "switch started, stats file written");
	bail("no stats file");
}

/* ---- packets ----------------------------------------------------------- */

static void send_raw(int fd, const void *buf, size_t len)
{
	if (sendto(fd, buf, len, 0, (struct sockaddr *)&sw_addr,
		   sizeof(sw_addr)) != (ssize_t)len)
		bail("sendto");
}

/* send_raw() with the IP header's TOS byte set to @tos (IP_TOS cmsg). */
static void send_tos(int fd, const void *buf, size_t len, int tos)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = {
		.msg_name = &sw_addr, .msg_namelen = sizeof(sw_addr),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = IPPROTO_IP;
	cm->cmsg_type = IP_TOS;
	cm->cmsg_len = CMSG_LEN(sizeof(tos));
	memcpy(CMSG_DATA(cm), &tos, sizeof(tos));
	if (sendmsg(fd, &mh, 0) != (ssize_t)len)
		bail("sendmsg IP_TOS");
}

/* A packet; @commit NOC sets OP_F_NOCOMMIT. */
static size_t make_pkt(u8 *buf, u8 type, u32 src, u32 dst, u64 barrier,
		       bool nobarrier, u64 commit, const char *payload)
{
	struct op_hdr h;
	size_t pl = payload ? strlen(payload) : 0;

	memset(&h, 0, sizeof(h));
	h.type = type;
	h.flags = nobarrier ? OP_F_NOBARRIER : 0;
	h.barrier = nobarrier ? 0 : barrier;
	if (commit == NOC)
		h.flags |= OP_F_NOCOMMIT;
	else
		h.commit = commit;
	h.ts = barrier + 7;
	if (type != OP_PKT_BEACON) {
		h.src_host = src;
		h.dst_host = dst;
		h.src_port = 4242;
		h.dst_port = 4343;
		h.seq = 99;
		h.aux = (u32)pl;
		h.frag_cnt = 1;
	}
	op_hdr_encode(&h, buf);
	if (pl)
		memcpy(buf + OP_HDR_LEN, payload, pl);
	return OP_HDR_LEN + pl;
}

static void send_pkt(int from, u8 type, u32 src, u32 dst, u64 barrier,
		     bool nob, u64 commit, const char *payload)
{
	u8 buf[256];

	send_raw(peer[from], buf,
		 make_pkt(buf, type, src, dst, barrier, nob, commit, payload));
}

/*
 * Next datagram on @fd that is not a beacon (beacons are collected in
 * *@nbeacons when non-NULL), within @ms.  Return: its length, or -1.
 */
static ssize_t recv_data(int fd, u8 *buf, size_t size, int ms)
{
	u64 end = now_ns(CLOCK_MONOTONIC) + (u64)ms * 1000000;

	for (;;) {
		u64 now = now_ns(CLOCK_MONOTONIC);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (now >= end ||
		    poll(&p, 1, (int)((end - now) / 1000000) + 1) <= 0)
			return -1;
		n = recv(fd, buf, size, MSG_DONTWAIT);
		if (n >= 2 && buf[1] == OP_PKT_BEACON)
			continue;
		if (n >= 0)
			return n;
	}
}

/* The TOS byte of a received datagram (IP_RECVTOS), or -1 if absent. */
static int cmsg_tos(struct msghdr *mh)
{
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm))
		if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS)
			return *CMSG_DATA(cm);
	return -1;
}

/* recv_data() that also returns the datagram's TOS byte in *@tos. */
static ssize_t recv_data_tos(int fd, u8 *buf, size_t size, int ms, int *tos)
{
	u64 end = now_ns(CLOCK_MONOTONIC) + (u64)ms * 1000000;
	char ctl[256];

	for (;;) {
		u64 now = now_ns(CLOCK_MONOTONIC);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct iovec iov = { .iov_base = buf, .iov_len = size };
		struct msghdr mh = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctl, .msg_controllen = sizeof(ctl),
		};
		ssize_t n;

		if (now >= end ||
		    poll(&p, 1, (int)((end - now) / 1000000) + 1) <= 0)
			return -1;
		n = recvmsg(fd, &mh, MSG_DONTWAIT);
		if (n >= 2 && buf[1] == OP_PKT_BEACON)
			continue;
		if (n >= 0) {
			*tos = cmsg_tos(&mh);
			return n;
		}
	}
}

static void drain(int fd)
{
	u8 buf[2048];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		;
}

struct beacons {
	unsigned int n;
	unsigned int bad;		/* not a well-formed beacon */
	unsigned int other;		/* non-beacon datagrams */
	u64 last_barrier;
	u64 last_commit;		/* NOC: OP_F_NOCOMMIT */
	unsigned int on_time;		/* arrived < 5 ms after a tick */
	unsigned int not_ect0;		/* beacons whose ECN field is not ECT(0) */
};

/* One packet of what collect() sees, arrived at @phase in the interval. */
static void count_beacon(struct beacons *b, const u8 *pkt, size_t n, int tos,
			 u64 phase)
{
	struct op_hdr h;

	if (n < 2 || pkt[1] != OP_PKT_BEACON) {
		b->other++;
		return;
	}
	/*
	 * Every port has a barrier by now, a commit maybe not: then the
	 * flag says so and the field is 0.
	 */
	if (op_hdr_decode(&h, pkt, n) || n != OP_HDR_LEN || h.src_host ||
	    h.dst_host || (h.flags & ~OP_F_NOCOMMIT) ||
	    ((h.flags & OP_F_NOCOMMIT) && h.commit)) {
		b->bad++;
		return;
	}
	b->n++;
	if (tos < 0 || (tos & IPTOS_ECN_MASK) != IPTOS_ECN_ECT0)
		b->not_ect0++;
	b->last_barrier = h.barrier;
	b->last_commit = h.flags & OP_F_NOCOMMIT ? NOC : h.commit;
	if (phase < 5000000)
		b->on_time++;
}

/*
 * recv() that also returns the kernel's CLOCK_REALTIME arrival time and
 * the datagram's TOS byte (-1 if absent).
 */
static ssize_t recv_stamped(int fd, u8 *buf, size_t size, u64 *when,
			    int *tos)
{
	char ctl[CMSG_SPACE(sizeof(struct timespec)) +
		 CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *cm;
	ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT);

	*when = now_ns(CLOCK_REALTIME);
	*tos = n >= 0 ? cmsg_tos(&mh) : -1;
	for (cm = CMSG_FIRSTHDR(&mh); n >= 0 && cm;
	     cm = CMSG_NXTHDR(&mh, cm)) {
		struct timespec ts;

		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
		*when = (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
	}
	return n;
}

/*
 * The packets a datagram @d of @n bytes carries, bare or bundled, in
 * @pkt and @len (room for OP_BUNDLE_MAX_PKTS).  Return: their number, 0
 * for a malformed bundle.
 */
static unsigned int unbundle(const u8 *d, size_t n, const u8 **pkt,
			     size_t *len)
{
	size_t off = OP_BUNDLE_HDR_LEN;
	int i, cnt;
	u16 l;

	if (!op_is_bundle(d, n)) {
		pkt[0] = d;
		len[0] = n;
		return 1;
	}
	cnt = op_bundle_check(d, n);
	for (i = 0; i < cnt; i++) {
		pkt[i] = op_bundle_next(d, &off, &l);
		len[i] = l;
	}
	return cnt < 0 ? 0 : (unsigned int)cnt;
}

/*
 * Collect everything arriving on every peer socket for @ms, bundles
 * taken apart: the switch may bundle a beacon with what it forwards.
 */
static void collect(struct beacons *b, int ms)
{
	u64 end = now_ns(CLOCK_MONOTONIC) + (u64)ms * 1000000;
	u64 iv = (u64)INTERVAL_MS * 1000000;
	struct pollfd p[NPEER];
	static u8 buf[65536];
	int i;

	memset(b, 0, sizeof(*b) * NPEER);
	for (i = 0; i < NPEER; i++)
		p[i] = (struct pollfd){ .fd = peer[i], .events = POLLIN };
	for (;;) {
		u64 now = now_ns(CLOCK_MONOTONIC);

		if (now >= end)
			return;
		if (poll(p, NPEER, (int)((end - now) / 1000000) + 1) <= 0)
			continue;
		for (i = 0; i < NPEER; i++) {
			const u8 *pkt[OP_BUNDLE_MAX_PKTS];
			size_t len[OP_BUNDLE_MAX_PKTS];
			unsigned int k, np;
			u64 phase;
			ssize_t n;
			int tos;

			if (!(p[i].revents & POLLIN))
				continue;
			n = recv_stamped(peer[i], buf, sizeof(buf), &phase,
					 &tos);
			if (n < 0)
				continue;
			phase %= iv;
			np = unbundle(buf, (size_t)n, pkt, len);
			b[i].bad += !np;
			for (k = 0; k < np; k++)
				count_beacon(&b[i], pkt[k], len[k], tos, phase);
		}
	}
}

/* ---- the tests --------------------------------------------------------- */

static void test_silence_before_barriers(void)
{
	struct beacons b[NPEER];

	collect(b, 3 * INTERVAL_MS);
	ok(!b[PA].n && !b[PB].n && !b[PU].n,
	   "no beacons while no port has a barrier");
}

static void test_unknown_source(void)
{
	u8 buf[128];
	u16 port;
	int fd = udp_socket(&port);

	send_raw(fd, buf,
		 make_pkt(buf, OP_PKT_BEACON, 0, 0, 1, false, 1, NULL));
	close(fd);
}

/*
 * A forward is byte-exact apart from the barrier and commit fields and
 * their two flags.
 */
static bool same_but_barriers(const u8 *a, const u8 *b, size_t len)
{
	const u8 mine = OP_F_NOBARRIER | OP_F_NOCOMMIT;
	size_t i;

	for (i = 0; i < len; i++)
		if (i != 2 && (i < OP_HDR_BARRIER_OFF ||
			       i >= OP_HDR_COMMIT_OFF + 8) && a[i] != b[i])
			return false;
	return (a[2] & ~mine) == (b[2] & ~mine);
}

/* Did @got come out with barrier @want and commit @wantc (NOC: none)? */
static bool barriers_are(const u8 *got, u64 want, u64 wantc)
{
	bool noc = got[2] & OP_F_NOCOMMIT;

	if (op_hdr_get_barrier(got) != want || (got[2] & OP_F_NOBARRIER))
		return false;
	if (wantc == NOC)
		return noc && !op_hdr_get_commit(got);
	return !noc && op_hdr_get_commit(got) == wantc;
}

static void expect_fwd(int from, u32 src, u32 dst, u64 barrier, bool nob,
		       u64 commit, int to, u64 want, u64 wantc,
		       const char *what)
{
	u8 sent[256], got[2048];
	size_t len = make_pkt(sent, OP_PKT_DATA, src, dst, barrier, nob,
			      commit, "hello, 1pipe");
	long long gc;
	ssize_t n;
	int tos = -1;

	send_raw(peer[from], sent, len);
	n = recv_data_tos(peer[to], got, sizeof(got), 1000, &tos);
	gc = n < OP_HDR_LEN ? -2 : got[2] & OP_F_NOCOMMIT ? -1 :
		(long long)op_hdr_get_commit(got);
	/* Sent not-ECT (the test sockets' default), forwarded ECT(0). */
	ok(n == (ssize_t)len && same_but_barriers(sent, got, len) &&
	   barriers_are(got, want, wantc) &&
	   tos >= 0 && (tos & IPTOS_ECN_MASK) == IPTOS_ECN_ECT0,
	   "%s: %s -> %s, barrier %llu commit %lld (got len %zd barrier %llu commit %lld flags %u tos %d)",
	   what, pname[from], pname[to], (unsigned long long)want,
	   wantc == NOC ? -1LL : (long long)wantc, n,
	   n > 0 ? (unsigned long long)op_hdr_get_barrier(got) : 0ULL, gc,
	   n > 2 ? got[2] : 0, tos);
}

static void test_forwarding(void)
{
	u8 buf[2048];

	/* No commit anywhere yet: every output says OP_F_NOCOMMIT. */
	/* Only a is heard: b gets a's barrier. */
	expect_fwd(PA, 1, 2, 1000, false, NOC, PB, 1000, NOC,
		   "first barrier");
	/* Up: min over down ports a (1000) and b (2000). */
	expect_fwd(PB, 2, 99, 2000, false, NOC, PU, 1000, NOC, "routed up");
	/* Down from u (500, within the admission slack): held at 1000. */
	expect_fwd(PU, 99, 1, 500, false, NOC, PA, 1000, NOC, "routed down");
	/* No barrier on the input: rewritten with the group's. */
	expect_fwd(PU, 99, 2, 0, true, NOC, PB, 1000, NOC, "nobarrier input");

	/* From an up port to an unknown host: no valley, dropped. */
	send_pkt(PU, OP_PKT_DATA, 99, 98, 600, false, NOC, "x");
	ok(recv_data(peer[PA], buf, sizeof(buf), 3 * INTERVAL_MS) < 0 &&
	   recv_data(peer[PB], buf, sizeof(buf), 1) < 0 &&
	   recv_data(peer[PU], buf, sizeof(buf), 1) < 0,
	   "up to up is not forwarded");

	/* Malformed: too short. */
	send_raw(peer[PA], buf, 20);
	ok(recv_data(peer[PB], buf, sizeof(buf), 3 * INTERVAL_MS) < 0 &&
	   recv_data(peer[PU], buf, sizeof(buf), 1) < 0,
	   "malformed packet is not forwarded");
}

/*
 * The commit barrier: a second register per input, aggregated by the
 * same rules into its own groups.  Barriers stay where test_forwarding()
 * left them (down 1000, up 1000).
 */
static void test_commit(void)
{
	/* Only a has a commit: b gets it. */
	expect_fwd(PA, 1, 2, 1100, false, 300, PB, 1000, 300,
		   "first commit");
	/* b's 700 joins; a's 300 is still the minimum. */
	expect_fwd(PB, 2, 1, 2100, false, 700, PA, 1000, 300,
		   "commit min(a 300, b 700)");
	/* a moves to 800: now b's 700 is the minimum. */
	expect_fwd(PA, 1, 2, 1200, false, 800, PB, 1000, 700,
		   "commit min(a 800, b 700)");
	/* u's 750 joins the down group, above the output. */
	expect_fwd(PU, 99, 1, 600, false, 750, PA, 1000, 700,
		   "commit min(a 800, b 700, u 750)");
	/* Up: a and b only, whatever u says. */
	expect_fwd(PB, 2, 99, 2200, false, 900, PU, 1200, 800,
		   "commit up: min(a 800, b 900)");
}

static const char *ecn_name(int tos)
{
	static const char *const names[] = { "not-ECT", "ECT(1)", "ECT(0)",
					     "CE" };

	return tos < 0 ? "none" : names[tos & IPTOS_ECN_MASK];
}

/*
 * ECN transparency: a datagram that arrives CE leaves CE, any other
 * leaves ECT(0); the packet itself is rewritten as always.  Packets
 * without barriers (NOBARRIER, NOCOMMIT) leave the registers as they
 * are.  The stats count the marks received and forwarded per port.
 */
static void test_ecn(void)
{
	static const struct {
		int from, to;
		u32 src, dst;
		int tos, want;
	} c[] = {
		{ PA, PB, 1, 2, IPTOS_ECN_CE, IPTOS_ECN_CE },
		{ PA, PB, 1, 2, IPTOS_ECN_ECT0, IPTOS_ECN_ECT0 },
		{ PA, PB, 1, 2, IPTOS_ECN_ECT1, IPTOS_ECN_ECT0 },
		{ PU, PB, 99, 2, IPTOS_ECN_NOT_ECT, IPTOS_ECN_ECT0 },
		/* DSCP bits do not hide the mark */
		{ PB, PU, 2, 99, 0xb8 | IPTOS_ECN_CE, IPTOS_ECN_CE },
	};
	u8 sent[256], got[2048];
	const char *s;
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		size_t len = make_pkt(sent, OP_PKT_DATA, c[i].src, c[i].dst,
				      0, true, NOC, "congested?");
		ssize_t n;
		int tos = -1;

		send_tos(peer[c[i].from], sent, len, c[i].tos);
		n = recv_data_tos(peer[c[i].to], got, sizeof(got), 1000, &tos);
		ok(n == (ssize_t)len && same_but_barriers(sent, got, len) &&
		   tos >= 0 && (tos & IPTOS_ECN_MASK) == c[i].want,
		   "ecn: %s -> %s sent tos 0x%02x (%s), forwarded %s (got len %zd, tos %d)",
		   pname[c[i].from], pname[c[i].to], (unsigned int)c[i].tos,
		   ecn_name(c[i].tos), ecn_name(c[i].want), n, tos);
	}
	/* A marked beacon is consumed, but its mark is counted. */
	send_tos(peer[PU], sent,
		 make_pkt(sent, OP_PKT_BEACON, 0, 0, 0, true, NOC, NULL),
		 IPTOS_ECN_CE);
	s = fresh_stats();
	ok(json_num(port_line(s, "a"), "rx_ce") == 1 &&
	   json_num(port_line(s, "b"), "rx_ce") == 1 &&
	   json_num(port_line(s, "u"), "rx_ce") == 1 &&
	   json_num(port_line(s, "b"), "ce_fwd") == 1 &&
	   json_num(port_line(s, "u"), "ce_fwd") == 1 &&
	   json_num(port_line(s, "a"), "ce_fwd") == 0,
	   "stats: rx_ce a 1, b 1, u 1 (a beacon); ce_fwd b 1, u 1, a 0 (%lld %lld %lld; %lld %lld %lld)",
	   json_num(port_line(s, "a"), "rx_ce"),
	   json_num(port_line(s, "b"), "rx_ce"),
	   json_num(port_line(s, "u"), "rx_ce"),
	   json_num(port_line(s, "b"), "ce_fwd"),
	   json_num(port_line(s, "u"), "ce_fwd"),
	   json_num(port_line(s, "a"), "ce_fwd"));
}

static bool one_per_interval(const struct beacons *b)
{
	return b->n >= 7 && b->n <= 11;
}

static void test_beacons(void)
{
	unsigned int on_time, total, not_ect0, bad[NPEER] = { 0 };
	struct beacons b[NPEER];
	int i, try;

	for (try = 1;; try++) {
		/*
		 * Registers: a 8000, b 9000, u 5500 (admitted, holds the
		 * min); commits a 3000, b 4000, u 2000.  The same values
		 * again on a retry: registers stay, links stay alive.
		 */
		send_pkt(PU, OP_PKT_BEACON, 0, 0, 5500, false, 2000, NULL);
		send_pkt(PA, OP_PKT_BEACON, 0, 0, 8000, false, 3000, NULL);
		send_pkt(PB, OP_PKT_BEACON, 0, 0, 9000, false, 4000, NULL);
		sleep_ms(2 * INTERVAL_MS);
		for (i = 0; i < NPEER; i++)
			drain(peer[i]);
		collect(b, 10 * INTERVAL_MS);
		for (i = 0; i < NPEER; i++)
			bad[i] += b[i].bad + b[i].other;
		if (try == TIMING_TRIES || (one_per_interval(&b[PA]) &&
					    one_per_interval(&b[PB]) &&
					    one_per_interval(&b[PU])))
			break;
	}
	for (i = 0; i < NPEER; i++)
		ok(one_per_interval(&b[i]) && !bad[i],
		   "%s: one well-formed beacon per interval (%u in 10, attempt %d)",
		   pname[i], b[i].n, try);
	ok(b[PA].last_barrier == 5500 && b[PB].last_barrier == 5500,
	   "down ports beacon min over all inputs (a %llu, b %llu)",
	   (unsigned long long)b[PA].last_barrier,
	   (unsigned long long)b[PB].last_barrier);
	ok(b[PU].last_barrier == 8000,
	   "up port beacons min over down inputs only (%llu)",
	   (unsigned long long)b[PU].last_barrier);
	ok(b[PA].last_commit == 2000 && b[PB].last_commit == 2000 &&
	   b[PU].last_commit == 3000,
	   "beacons carry the commit too (a %lld, b %lld: 2000; u %lld: 3000)",
	   (long long)b[PA].last_commit, (long long)b[PB].last_commit,
	   (long long)b[PU].last_commit);
	/*
	 * Half, not all: a loaded machine delays timers.  Beacons sent at
	 * random phases would pass this with a probability of about 0.2%.
	 */
	on_time = b[PA].on_time + b[PB].on_time + b[PU].on_time;
	total = b[PA].n + b[PB].n + b[PU].n;
	ok(total && on_time * 2 >= total,
	   "beacons at multiples of the interval (%u of %u within 5 ms)",
	   on_time, total);
	not_ect0 = b[PA].not_ect0 + b[PB].not_ect0 + b[PU].not_ect0;
	ok(total && !not_ect0, "beacons are ECT(0) (%u of %u are not)",
	   not_ect0, total);
}

/* A port that carries traffic every few ms needs no beacon. */
static void test_busy_port_not_beaconed(void)
{
	struct beacons b[NPEER];
	u8 buf[256];
	size_t len = make_pkt(buf, OP_PKT_DATA, 1, 2, 10000, false, 5000,
			      "busy");
	unsigned int beacons_b, beacons_a;
	int try;

	for (try = 1;; try++) {
		u64 end = now_ns(CLOCK_MONOTONIC) +
			  10ULL * INTERVAL_MS * 1000000;

		beacons_a = 0;
		beacons_b = 0;
		drain(peer[PA]);
		drain(peer[PB]);
		while (now_ns(CLOCK_MONOTONIC) < end) {
			send_raw(peer[PA], buf, len);
			/* keep b and u alive, with the barriers they gave */
			send_pkt(PB, OP_PKT_BEACON, 0, 0, 9000, false, 4000,
				 NULL);
			send_pkt(PU, OP_PKT_BEACON, 0, 0, 5500, false, 2000,
				 NULL);
			collect(b, INTERVAL_MS / 4);
			beacons_a += b[PA].n;
			beacons_b += b[PB].n;
		}
		if ((beacons_b <= 1 && beacons_a >= 7) || try == TIMING_TRIES)
			break;
	}
	ok(beacons_b <= 1 && beacons_a >= 7,
	   "busy output gets no beacons (b %u, idle-output a %u, attempt %d)",
	   beacons_b, beacons_a, try);
	/* a speaks last, so it is the last link to die later on */
	sleep_ms(3 * INTERVAL_MS);
	send_pkt(PA, OP_PKT_BEACON, 0, 0, 10000, false, 6000, NULL);
}

static void test_stats_and_expiry(void)
{
	struct beacons b[NPEER];
	const char *s;
	int i;

	s = fresh_stats();
	ok(s && json_num(s, "rx_bad") == 1 &&
	   json_num(s, "rx_unknown_src") == 1 && json_num(s, "no_route") == 1,
	   "stats: rx_bad 1, rx_unknown_src 1, no_route 1 (%lld %lld %lld)",
	   json_num(s, "rx_bad"), json_num(s, "rx_unknown_src"),
	   json_num(s, "no_route"));
	for (i = 0; i < NPEER; i++)
		ok(port_state_is(s, pname[i], "live") &&
		   commit_state_is(s, pname[i], "live"),
		   "stats: %s live, commit register too", pname[i]);
	ok(json_num(port_line(s, "u"), "rx_beacons") >= 1 &&
	   json_num(port_line(s, "u"), "out_barrier") == 9000 &&
	   json_num(port_line(s, "a"), "out_barrier") == 5500,
	   "stats: out_barrier u 9000 (min of a, b), a 5500 (min of all)");
	ok(json_num(port_line(s, "a"), "commit_register") == 6000 &&
	   json_num(port_line(s, "u"), "out_commit") == 4000 &&
	   json_num(port_line(s, "a"), "out_commit") == 2000,
	   "stats: commit_register a 6000, out_commit u 4000, a 2000");

	/* Everyone silent: links die after the timeout. */
	sleep_ms((TIMEOUT_IVS + 3) * INTERVAL_MS + 100);
	s = fresh_stats();
	for (i = 0; i < NPEER; i++)
		ok(port_state_is(s, pname[i], "dead") &&
		   commit_state_is(s, pname[i], "dead"),
		   "stats: %s dead, commit register too", pname[i]);
	collect(b, 4 * INTERVAL_MS);
	/*
	 * b and u went silent three intervals before a, so for a while a
	 * alone fed both groups: its 10000 and 6000 are where they stay.
	 */
	ok(b[PA].n >= 2 && b[PA].last_barrier == 10000 && b[PU].n >= 2 &&
	   b[PU].last_barrier == 10000 && b[PA].last_commit == 6000 &&
	   b[PU].last_commit == 6000,
	   "dead inputs: beacons keep the last barriers (a %llu/%lld, u %llu/%lld)",
	   (unsigned long long)b[PA].last_barrier,
	   (long long)b[PA].last_commit,
	   (unsigned long long)b[PU].last_barrier,
	   (long long)b[PU].last_commit);
}

/* Sleep until @ms into the next beacon interval (wall clock). */
static void sleep_to_phase(unsigned int ms)
{
	u64 iv = (u64)INTERVAL_MS * 1000000, now = now_ns(CLOCK_REALTIME);
	u64 at = (now / iv + 1) * iv + (u64)ms * 1000000;

	sleep_ms((int)((at - now) / 1000000));
}

/*
 * Wait up to @ms for a beacon carrying @barrier on peer @i, bare or
 * bundled; other beacons and packets are skipped.  Return: whether it
 * came.
 */
static bool beacon_with(int i, u64 barrier, int ms)
{
	u64 end = now_ns(CLOCK_MONOTONIC) + (u64)ms * 1000000;
	static u8 buf[65536];

	for (;;) {
		u64 now = now_ns(CLOCK_MONOTONIC), when;
		struct pollfd p = { .fd = peer[i], .events = POLLIN };
		const u8 *pkt[OP_BUNDLE_MAX_PKTS];
		size_t len[OP_BUNDLE_MAX_PKTS];
		unsigned int k, np;
		struct op_hdr h;
		ssize_t n;
		int tos;

		if (now >= end ||
		    poll(&p, 1, (int)((end - now) / 1000000) + 1) <= 0)
			return false;
		n = recv_stamped(peer[i], buf, sizeof(buf), &when, &tos);
		np = n < 0 ? 0 : unbundle(buf, (size_t)n, pkt, len);
		for (k = 0; k < np; k++)
			if (len[k] == OP_HDR_LEN &&
			    !op_hdr_decode(&h, pkt[k], len[k]) &&
			    h.type == OP_PKT_BEACON && h.barrier == barrier)
				return true;
	}
}

/*
 * A barrier advance reaches idle ports at once, not at the next tick; a
 * port that just forwarded gets it after the busy window (an eighth of
 * an interval, from the push timer).  Each round starts a quarter into
 * an interval and must see every beacon within the next half: the next
 * tick is still a quarter away, and b, which forwarded in this interval,
 * would not even get a beacon from it.
 */
static void test_push(void)
{
	unsigned int early_idle = 0, early_busy = 0, round;
	u64 x = 20000;
	const char *s;
	int i;

	for (i = 0; i < NPEER; i++)
		send_pkt(i, OP_PKT_BEACON, 0, 0, x, false, x, NULL);
	sleep_ms(2 * INTERVAL_MS);
	for (round = 0; round < 4; round++) {
		x += 1000;
		for (i = 0; i < NPEER; i++)
			drain(peer[i]);
		sleep_to_phase(INTERVAL_MS / 4);
		/* a -> b, carrying the old minimum: b is busy for a while */
		send_pkt(PA, OP_PKT_DATA, 1, 2, x - 1000, false, x - 1000,
			 "busy");
		for (i = 0; i < NPEER; i++)
			send_pkt(i, OP_PKT_BEACON, 0, 0, x, false, x, NULL);
		/* b's beacon waits in its socket while a's and u's come */
		early_idle += beacon_with(PA, x, INTERVAL_MS / 4) &&
			      beacon_with(PU, x, 1);
		early_busy += beacon_with(PB, x, INTERVAL_MS / 4);
	}
	/* Most rounds, not all: a loaded machine delays this test too. */
	ok(early_idle >= 2, "push: an advance reaches idle ports before the tick (%u of 4 rounds)",
	   early_idle);
	ok(early_busy >= 2, "push: and a busy port after its busy window, before the tick (%u of 4 rounds)",
	   early_busy);
	s = fresh_stats();
	ok(json_num(port_line(s, "a"), "tx_pushes") >= 2 &&
	   json_num(port_line(s, "b"), "tx_pushes") >= 2 &&
	   json_num(port_line(s, "u"), "tx_pushes") >= 2 &&
	   strstr(s, "\"push\":true"),
	   "stats: push on, tx_pushes a %lld, b %lld, u %lld",
	   json_num(port_line(s, "a"), "tx_pushes"),
	   json_num(port_line(s, "b"), "tx_pushes"),
	   json_num(port_line(s, "u"), "tx_pushes"));
}

/* ---- bundles ----------------------------------------------------------- */

#define BUNDLE_BYTES	1400		/* the switch's default */
#define TPKT_MAX	1536
#define ARRIVE_MAX	1024

/* A packet the test sends. */
struct tpkt {
	size_t len;
	u8 b[TPKT_MAX];
};

/* The non-beacon packets that came to one peer socket, in order. */
struct arrivals {
	unsigned int n;
	unsigned int dgrams;		/* datagrams that held them */
	unsigned int bundles;		/* bundles among them */
	unsigned int bad;		/* malformed bundles */
	size_t biggest;			/* the largest bundle */
	/* the packets: arrive() clears what comes before */
	struct tpkt pkt[ARRIVE_MAX];
	int tos[ARRIVE_MAX];		/* of the datagram each came in */
};

/* Bundle the @n packets @p into @b; return the bundle's length. */
static size_t bundle(u8 *b, const struct tpkt *p, unsigned int n)
{
	size_t off = OP_BUNDLE_HDR_LEN;
	unsigned int i;

	op_bundle_put_hdr(b, n);
	for (i = 0; i < n; i++) {
		op_bundle_put_len(b + off, (u16)p[i].len);
		memcpy(b + off + OP_BUNDLE_ENTRY_LEN, p[i].b, p[i].len);
		off += OP_BUNDLE_ENTRY_LEN + p[i].len;
	}
	return off;
}

/* DATA @src -> @dst with the barriers given (see make_pkt()). */
static void tpkt_make(struct tpkt *p, u32 src, u32 dst, u64 barrier,
		      bool nob, u64 commit, const char *payload)
{
	p->len = make_pkt(p->b, OP_PKT_DATA, src, dst, barrier, nob, commit,
			  payload);
}

/*
 * Read what comes to peer @i, bundles taken apart and beacons skipped,
 * until @want packets have come or @ms have passed.
 */
static void arrive(int i, struct arrivals *a, unsigned int want, int ms)
{
	u64 end = now_ns(CLOCK_MONOTONIC) + (u64)ms * 1000000;
	static u8 buf[65536];
	char ctl[256];

	memset(a, 0, offsetof(struct arrivals, pkt));
	while (a->n < want) {
		u64 now = now_ns(CLOCK_MONOTONIC);
		struct pollfd p = { .fd = peer[i], .events = POLLIN };
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr mh = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctl, .msg_controllen = sizeof(ctl),
		};
		const u8 *pkt[OP_BUNDLE_MAX_PKTS];
		size_t len[OP_BUNDLE_MAX_PKTS];
		unsigned int k, np, got = 0;
		ssize_t n;
		int tos;

		if (now >= end ||
		    poll(&p, 1, (int)((end - now) / 1000000) + 1) <= 0)
			return;
		n = recvmsg(peer[i], &mh, MSG_DONTWAIT);
		if (n < 0)
			continue;
		tos = cmsg_tos(&mh);
		np = unbundle(buf, (size_t)n, pkt, len);
		if (op_is_bundle(buf, (size_t)n)) {
			a->bad += !np;
			a->bundles += !!np;
			if ((size_t)n > a->biggest)
				a->biggest = (size_t)n;
		}
		for (k = 0; k < np && a->n < ARRIVE_MAX; k++) {
			if (len[k] < 2 || pkt[k][1] == OP_PKT_BEACON ||
			    len[k] > TPKT_MAX)
				continue;
			a->pkt[a->n].len = len[k];
			memcpy(a->pkt[a->n].b, pkt[k], len[k]);
			a->tos[a->n++] = tos;
			got++;
		}
		a->dgrams += !!got;
	}
}

/*
 * Did exactly the @n packets @p come in @a, in order, each changed in
 * its barriers only?  The first difference is said.
 */
static bool came_in_order(const struct arrivals *a, const struct tpkt *p,
			  unsigned int n)
{
	unsigned int i;

	if (a->n != n || a->bad) {
		printf("# %u packets came, want %u; %u malformed bundles\n",
		       a->n, n, a->bad);
		return false;
	}
	for (i = 0; i < n; i++) {
		if (a->pkt[i].len != p[i].len ||
		    !same_but_barriers(p[i].b, a->pkt[i].b, p[i].len)) {
			printf("# packet %u is not the one sent %u-th\n", i, i);
			return false;
		}
	}
	return true;
}

/* Nothing but beacons comes to any peer for @ms. */
static bool nothing_forwarded(int ms)
{
	static struct arrivals a;
	unsigned int i, n = 0;

	for (i = 0; i < NPEER; i++) {
		arrive(i, &a, 1, i ? 1 : ms);
		n += a.n;
	}
	return !n;
}

/*
 * Hold the switch (SIGSTOP) while datagrams queue up in its socket, so
 * that release() makes them one receive batch.
 */
static void hold(void)
{
	int status;

	kill(sw_pid, SIGSTOP);
	waitpid(sw_pid, &status, WUNTRACED);
}

static void release(void)
{
	kill(sw_pid, SIGCONT);
}

/* The stats counters a bundle test looks at. */
struct bstats {
	long long rx_bundles, rx_bad_bundles, tx_bundles, rx_bad;
	long long a_rx_pkts, a_drops, a_register, b_ce_fwd;
};

static struct bstats bstats(void)
{
	const char *s = fresh_stats();
	struct bstats b = {
		.rx_bundles = json_num(s, "rx_bundles"),
		.rx_bad_bundles = json_num(s, "rx_bad_bundles"),
		.tx_bundles = json_num(s, "tx_bundles"),
		.rx_bad = json_num(s, "rx_bad"),
		.a_rx_pkts = json_num(port_line(s, "a"), "rx_pkts"),
		.a_drops = json_num(port_line(s, "a"), "drops"),
		.a_register = json_num(port_line(s, "a"), "register"),
		.b_ce_fwd = json_num(port_line(s, "b"), "ce_fwd"),
	};

	return b;
}

/* Registers: a @base, b and u @base + 10000, barrier and commit alike. */
static void bundle_registers(u64 base)
{
	int i;

	send_pkt(PA, OP_PKT_BEACON, 0, 0, base, false, base, NULL);
	send_pkt(PB, OP_PKT_BEACON, 0, 0, base + 10000, false, base + 10000,
		 NULL);
	send_pkt(PU, OP_PKT_BEACON, 0, 0, base + 10000, false, base + 10000,
		 NULL);
	sleep_ms(2 * INTERVAL_MS);
	for (i = 0; i < NPEER; i++)
		drain(peer[i]);
}

/*
 * A bundle from a: b, u, b.  Each packet is switched as if it had come
 * alone, in order: a's register moves with each, so each carries the
 * minimum its own barriers made (expect_fwd()'s rules).  b's two leave
 * in one bundle (one receive batch, one port), u's alone.
 */
static void test_bundle_rx(void)
{
	static struct arrivals ab, au;
	const u64 x = 40000;
	struct tpkt p[3], tob[2];
	struct bstats s0, s1;
	u8 b[4096];
	unsigned int i;
	bool bar;

	bundle_registers(x);
	s0 = bstats();
	tpkt_make(&p[0], 1, 2, x + 1000, false, x + 100, "bundled 0");
	tpkt_make(&p[1], 1, 99, x + 2000, false, x + 200, "bundled 1");
	tpkt_make(&p[2], 1, 2, x + 3000, false, x + 300, "bundled 2");
	send_raw(peer[PA], b, bundle(b, p, 3));
	arrive(PB, &ab, 2, 1000);
	arrive(PU, &au, 1, 1000);
	tob[0] = p[0];
	tob[1] = p[2];
	ok(came_in_order(&ab, tob, 2) && came_in_order(&au, &p[1], 1),
	   "bundle a -> b, u, b: every packet forwarded, in order, intact but for its barriers");
	bar = ab.n == 2 && au.n == 1 &&
	      barriers_are(ab.pkt[0].b, x + 1000, x + 100) &&
	      barriers_are(au.pkt[0].b, x + 2000, x + 200) &&
	      barriers_are(ab.pkt[1].b, x + 3000, x + 300);
	ok(bar, "each carries the barriers it made alone: b %llu/%llu, u %llu/%llu, b %llu/%llu",
	   (unsigned long long)x + 1000, (unsigned long long)x + 100,
	   (unsigned long long)x + 2000, (unsigned long long)x + 200,
	   (unsigned long long)x + 3000, (unsigned long long)x + 300);
	for (i = 0; !bar && i < ab.n; i++)
		printf("# b got barrier %llu commit %llu\n",
		       (unsigned long long)op_hdr_get_barrier(ab.pkt[i].b),
		       (unsigned long long)op_hdr_get_commit(ab.pkt[i].b));
	ok(ab.dgrams == 1 && ab.bundles == 1 && au.dgrams == 1 &&
	   !au.bundles,
	   "b's two leave in one bundle, u's one bare (b %u datagrams, %u bundles; u %u, %u)",
	   ab.dgrams, ab.bundles, au.dgrams, au.bundles);
	s1 = bstats();
	ok(s1.rx_bundles == s0.rx_bundles + 1 &&
	   s1.tx_bundles >= s0.tx_bundles + 1 &&
	   s1.a_rx_pkts == s0.a_rx_pkts + 3 &&
	   s1.a_register == (long long)x + 3000 &&
	   strstr(fresh_stats(), "\"bundle_bytes\":1400,"),
	   "stats: rx_bundles +%lld, tx_bundles +%lld, a's rx_pkts +%lld (per packet), register %lld, bundle_bytes 1400",
	   s1.rx_bundles - s0.rx_bundles, s1.tx_bundles - s0.tx_bundles,
	   s1.a_rx_pkts - s0.a_rx_pkts, s1.a_register);
}

/*
 * CE: a bundle that arrived CE leaves CE, every packet of it; bundles
 * out never mix marked packets with unmarked ones, so a batch of CE,
 * not CE, CE to one port leaves as three datagrams, each as it came.
 */
static void test_bundle_ce(void)
{
	static struct arrivals a;
	static const int want[3] = { IPTOS_ECN_CE, IPTOS_ECN_ECT0,
				     IPTOS_ECN_CE };
	struct tpkt p[3];
	struct bstats s0, s1;
	unsigned int i, good = 0;
	u8 b[4096];

	s0 = bstats();
	tpkt_make(&p[0], 1, 2, 0, true, NOC, "ce 0");
	tpkt_make(&p[1], 1, 2, 0, true, NOC, "ce 1");
	send_tos(peer[PA], b, bundle(b, p, 2), IPTOS_ECN_CE);
	arrive(PB, &a, 2, 1000);
	ok(came_in_order(&a, p, 2) && a.bundles == 1 &&
	   (a.tos[0] & IPTOS_ECN_MASK) == IPTOS_ECN_CE,
	   "a CE bundle leaves as a CE bundle (%u bundles, tos %d)",
	   a.bundles, a.n ? a.tos[0] : -1);
	tpkt_make(&p[2], 1, 2, 0, true, NOC, "ce 2");
	hold();
	for (i = 0; i < 3; i++)
		send_tos(peer[PA], p[i].b, p[i].len, want[i]);
	release();
	arrive(PB, &a, 3, 1000);
	for (i = 0; i < a.n && i < 3; i++)
		good += (a.tos[i] & IPTOS_ECN_MASK) == want[i];
	ok(came_in_order(&a, p, 3) && good == 3 && a.dgrams == 3,
	   "one batch of CE, ECT(0), CE: three datagrams, marks kept (%u datagrams, %u right)",
	   a.dgrams, good);
	s1 = bstats();
	ok(s1.b_ce_fwd == s0.b_ce_fwd + 4,
	   "stats: ce_fwd counts packets, bundled or not (b +%lld)",
	   s1.b_ce_fwd - s0.b_ce_fwd);
}

/*
 * Malformed bundles are dropped whole: nothing in them is forwarded or
 * moves a register.  A well-framed bundle holding a bundle forwards its
 * packets but the nested one, which the packet parser refuses.
 */
static void test_bundle_bad(void)
{
	static struct arrivals a;
	const u64 x = 60000, high = 900000;
	struct tpkt p[4];
	struct bstats s0, s1;
	u8 b[8][4096], nest[4096];
	size_t n[8], nl;
	unsigned int i, nb = 0;

	bundle_registers(x);
	for (i = 0; i < 3; i++)
		tpkt_make(&p[i], 1, 2, high, false, high, "bad");
	/* cut short in the last packet */
	n[nb] = bundle(b[nb], p, 2) - 10;
	nb++;
	/* count 3, two entries */
	n[nb] = bundle(b[nb], p, 2);
	b[nb++][1] = 3;
	/* count 2, three entries */
	n[nb] = bundle(b[nb], p, 3);
	b[nb++][1] = 2;
	/* count 1 */
	bundle(b[nb], p, 2);
	n[nb] = OP_BUNDLE_HDR_LEN + OP_BUNDLE_ENTRY_LEN + p[0].len;
	b[nb++][1] = 1;
	/* reserved bytes set */
	n[nb] = bundle(b[nb], p, 2);
	b[nb++][3] = 1;
	/* an entry shorter than a header */
	p[3] = p[0];
	p[3].len = OP_HDR_LEN - 1;
	n[nb] = bundle(b[nb], &p[2], 2);
	nb++;
	/* the preamble alone */
	op_bundle_put_hdr(b[nb], 2);
	n[nb++] = OP_BUNDLE_HDR_LEN;

	s0 = bstats();
	for (i = 0; i < nb; i++)
		send_raw(peer[PA], b[i], n[i]);
	ok(nothing_forwarded(3 * INTERVAL_MS),
	   "malformed bundles: nothing forwarded");
	s1 = bstats();
	ok(s1.rx_bad_bundles == s0.rx_bad_bundles + nb &&
	   s1.a_drops == s0.a_drops + nb && s1.rx_bad == s0.rx_bad + nb &&
	   s1.a_register == (long long)x,
	   "counted: rx_bad_bundles +%lld, a's drops +%lld, rx_bad +%lld (want %u each); a's register %lld (%llu)",
	   s1.rx_bad_bundles - s0.rx_bad_bundles, s1.a_drops - s0.a_drops,
	   s1.rx_bad - s0.rx_bad, nb, s1.a_register,
	   (unsigned long long)x);

	/* b, [u, u], b: the inner bundle is an unknown version. */
	tpkt_make(&p[0], 1, 2, x + 1000, false, x + 1000, "outer 0");
	tpkt_make(&p[1], 1, 99, high, false, high, "inner");
	p[2] = p[1];
	nl = bundle(nest, &p[1], 2);
	p[1].len = nl;
	memcpy(p[1].b, nest, nl);
	tpkt_make(&p[2], 1, 2, x + 2000, false, x + 2000, "outer 2");
	send_raw(peer[PA], b[0], bundle(b[0], p, 3));
	arrive(PB, &a, 2, 1000);
	p[1] = p[2];
	ok(came_in_order(&a, p, 2) &&
	   barriers_are(a.pkt[1].b, x + 2000, x + 2000),
	   "a bundle in a bundle: the packets around it are forwarded");
	arrive(PU, &a, 1, 3 * INTERVAL_MS);
	s0 = s1;
	s1 = bstats();
	ok(!a.n && s1.rx_bad == s0.rx_bad + 1 &&
	   s1.rx_bundles == s0.rx_bundles + 1 &&
	   s1.a_register == (long long)x + 2000,
	   "the inner one is a bad packet (rx_bad +%lld), nothing of it forwarded, a's register %lld",
	   s1.rx_bad - s0.rx_bad, s1.a_register);
}

/*
 * Many packets to one port: sent quickly they may come bundled or bare;
 * held into one batch (more than the switch's transmit queue holds)
 * they are bundled within --bundle-bytes.  Order and content are kept
 * either way, and a packet too big to share leaves alone.
 */
static void test_bundle_out(void)
{
	static struct tpkt p[3 * OP_BUNDLE_MAX_PKTS];
	static struct arrivals a;
	static u8 b[65536];
	char pl[1500];
	unsigned int i, k;

	for (i = 0; i < 40; i++) {
		snprintf(pl, sizeof(pl), "burst %u", i);
		tpkt_make(&p[i], 1, 2, 0, true, NOC, pl);
		send_raw(peer[PA], p[i].b, p[i].len);
	}
	arrive(PB, &a, 40, 2000);
	ok(came_in_order(&a, p, 40) && a.biggest <= BUNDLE_BYTES,
	   "40 packets a -> b sent quickly: all in order (%u datagrams, %u bundles)",
	   a.dgrams, a.bundles);

	for (i = 0; i < 3 * OP_BUNDLE_MAX_PKTS; i++) {
		snprintf(pl, sizeof(pl), "many %04u", i);
		tpkt_make(&p[i], 1, 2, 0, true, NOC, pl);
	}
	hold();
	for (k = 0; k < 3; k++)
		send_raw(peer[PA], b, bundle(b, &p[k * OP_BUNDLE_MAX_PKTS],
					     OP_BUNDLE_MAX_PKTS));
	release();
	arrive(PB, &a, 3 * OP_BUNDLE_MAX_PKTS, 2000);
	ok(came_in_order(&a, p, 3 * OP_BUNDLE_MAX_PKTS) &&
	   a.biggest <= BUNDLE_BYTES && a.bundles * 2 > a.dgrams,
	   "3 bundles of 255 in one batch: 765 packets in order, in bundles of at most %u bytes (%u datagrams, %u bundles, largest %zu)",
	   BUNDLE_BYTES, a.dgrams, a.bundles, a.biggest);

	tpkt_make(&p[0], 1, 2, 0, true, NOC, "small 0");
	memset(pl, 'x', BUNDLE_BYTES);
	pl[BUNDLE_BYTES] = 0;
	tpkt_make(&p[1], 1, 2, 0, true, NOC, pl);
	tpkt_make(&p[2], 1, 2, 0, true, NOC, "small 2");
	tpkt_make(&p[3], 1, 2, 0, true, NOC, "small 3");
	hold();
	for (i = 0; i < 4; i++)
		send_raw(peer[PA], p[i].b, p[i].len);
	release();
	arrive(PB, &a, 4, 1000);
	ok(came_in_order(&a, p, 4) && a.dgrams == 3 && a.bundles == 1,
	   "small, too big to share, small, small: 3 datagrams, the last two bundled (%u, %u bundles)",
	   a.dgrams, a.bundles);
}

/* --bundle-bytes out of range, or with --roce: refused (exit 2). */
static void test_bundle_option(const char *self)
{
	static const char *const bad[][5] = {
		{ "63", "--port", "a,down,127.0.0.1:1" },
		{ "65508", "--port", "a,down,127.0.0.1:1" },
		{ "x", "--port", "a,down,127.0.0.1:1" },
		{ "1400", "--roce", "--port", "a,down,lo" },
	};
	unsigned int i, refused = 0;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[8] = { (char *)self, "--bundle-bytes" };
		int status = -1, k;
		pid_t pid;

		for (k = 0; bad[i][k]; k++)
			argv[2 + k] = (char *)bad[i][k];
		pid = fork();
		if (pid < 0)
			bail("fork");
		if (!pid) {
			if (!freopen("/dev/null", "w", stderr))
				_exit(127);
			execv(self, argv);
			_exit(127);
		}
		waitpid(pid, &status, 0);
		refused += WIFEXITED(status) && WEXITSTATUS(status) == 2;
	}
	ok(refused == i, "--bundle-bytes 63, 65508, x, and with --roce: refused (%u of %u)",
	   refused, i);
}

/*
 * A second switch with --bundle-bytes 0 takes bundles apart as before
 * but sends every packet bare.
 */
static void test_no_bundles(const char *self, const u16 *pp)
{
	static struct tpkt p[24], pu;
	static struct arrivals a, au;
	char pl[32];
	u8 b[4096];
	const char *s;
	unsigned int i;

	unlink(stats_path);
	start_switch(self, pp, "0");
	find_switch();
	for (i = 0; i < 24; i++) {
		snprintf(pl, sizeof(pl), "bare %u", i);
		tpkt_make(&p[i], 1, i == 1 ? 99 : 2, 0, true, NOC, pl);
	}
	hold();
	send_raw(peer[PA], b, bundle(b, p, 3));
	for (i = 3; i < 24; i++)
		send_raw(peer[PA], p[i].b, p[i].len);
	release();
	arrive(PU, &au, 1, 1000);
	pu = p[1];
	p[1] = p[0];
	arrive(PB, &a, 23, 1000);
	ok(came_in_order(&a, &p[1], 23) && came_in_order(&au, &pu, 1) &&
	   !a.bundles && a.dgrams == 23 && au.dgrams == 1,
	   "--bundle-bytes 0: a bundle and a batch a -> b leave bare, in order (%u datagrams, %u bundles)",
	   a.dgrams, a.bundles);
	s = fresh_stats();
	ok(json_num(s, "tx_bundles") == 0 && json_num(s, "rx_bundles") == 1 &&
	   strstr(s, "\"bundle_bytes\":0,"),
	   "stats: bundle_bytes 0, rx_bundles 1, tx_bundles 0 (%lld, %lld)",
	   json_num(s, "rx_bundles"), json_num(s, "tx_bundles"));
}

static void test_exit(void)
{
	int status = -1, i;

	kill(sw_pid, SIGTERM);
	for (i = 0; i < 100; i++) {
		if (waitpid(sw_pid, &status, WNOHANG) == sw_pid)
			break;
		sleep_ms(10);
	}
	if (i == 100) {
		kill(sw_pid, SIGKILL);
		waitpid(sw_pid, &status, 0);
	}
	sw_pid = 0;
	ok(i < 100 && WIFEXITED(status) && !WEXITSTATUS(status),
	   "SIGTERM: clean exit");
}

int main(int argc, char **argv)
{
	u16 pp[NPEER];
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: loopback ONEPIPE-SWITCH\n");
		return 2;
	}
	if (!mkdtemp(dir))
		bail("mkdtemp");
	snprintf(stats_path, sizeof(stats_path), "%s/stats.json", dir);
	printf("TAP version 13\n");
	for (i = 0; i < NPEER; i++)
		peer[i] = udp_socket(&pp[i]);
	start_switch(argv[1], pp, NULL);
	find_switch();
	test_silence_before_barriers();
	test_unknown_source();
	test_forwarding();
	test_commit();
	test_ecn();
	test_beacons();
	test_busy_port_not_beaconed();
	test_stats_and_expiry();
	test_push();
	test_bundle_rx();
	test_bundle_ce();
	test_bundle_bad();
	test_bundle_out();
	test_exit();
	test_no_bundles(argv[1], pp);
	test_exit();
	test_bundle_option(argv[1]);
	unlink(stats_path);
	rmdir(dir);
	return tap_end();
}
