// SPDX-License-Identifier: GPL-2.0
/*
 * onepipe-switch: the software 1Pipe switch of the UDP transport.
 *
 * One UDP socket, one thread, one epoll loop.  Every configured port is a
 * peer address; a datagram's input port is the peer it came from.  Packets
 * are received and forwarded in batches (recvmmsg/sendmmsg) and handed to
 * the I/O-free state machine of switch_logic.c, which decides where they
 * go and rewrites their barrier and commit barrier.  A CLOCK_REALTIME
 * timer fires at absolute multiples of the beacon interval, like the
 * hosts' beacon timers, so the whole fabric beacons at the same instants.
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
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "switch_logic.h"

#define SWD_UDP_PORT	5640		/* ONEPIPE_UDP_PORT */
#define SWD_BATCH	64		/* datagrams per recvmmsg() */
#define SWD_BUF		65536		/* largest datagram we accept */
#define SWD_RX_ROUNDS	8		/* batches before timers get a turn */
#define SWD_TXMAX	(SWD_BATCH + SW_MAX_PORTS)
#define SWD_STATS_NS	100000000ULL	/* stats file refresh, 100 ms */
#define SWD_SOCKBUF	(4 << 20)

/* Room for one IP_TOS cmsg, aligned for struct cmsghdr. */
union swd_tosctl {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

enum { EV_SOCK, EV_TICK, EV_STATS, EV_SIG };

struct swd {
	struct sw sw;
	struct sockaddr_in peer[SW_MAX_PORTS];
	struct sockaddr_in local;
	const char *name;
	const char *stats;
	u64 interval;			/* beacon interval, ns */
	u64 timeout_intervals;
	int sock;
	int tick_fd;
	int stats_fd;
	int sig_fd;
	int ep;
	bool running;
	bool rx_err_logged;
	/* transmit batch, flushed after each receive batch and tick */
	struct mmsghdr txm[SWD_TXMAX];
	struct iovec txiov[SWD_TXMAX];
	unsigned int txport[SWD_TXMAX];
	bool txbeacon[SWD_TXMAX];
	bool txce[SWD_TXMAX];
	unsigned int ntx;
	u8 beacon_buf[SW_MAX_PORTS][OP_HDR_LEN];
	union swd_tosctl ce_ctl;	/* IP_TOS = CE, built once */
	/* ECN counters per port, kept here: switch_logic knows no IP */
	u64 rx_ce[SW_MAX_PORTS];	/* datagrams received marked CE */
	u64 ce_fwd[SW_MAX_PORTS];	/* sent on with their CE mark */
};

static struct swd swd;
static u8 rxbuf[SWD_BATCH][SWD_BUF];

static u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

static struct timespec ns_to_ts(u64 ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ULL),
		.tv_nsec = (long)(ns % 1000000000ULL),
	};
	return ts;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: onepipe-switch [--listen ADDR[:PORT]]\n"
		"         [--interval-us N] [--timeout-intervals K]\n"
		"         [--commit-timeout-intervals C]\n"
		"         [--admit-slack-us S]\n"
		"         [--stats FILE] [--name NAME]\n"
		"         --port NAME,ROLE,PEERADDR[:PORT][,hosts=LIST] ...\n"
		"  ROLE is down (towards hosts / a lower tier) or up;\n"
		"  LIST is like 1-4+7 (host ids reachable through the port).\n"
		"  Defaults: listen 0.0.0.0:%d, interval 100 us, timeout 10\n"
		"  intervals, commit registers 10 times the timeout, admit\n"
		"  slack = timeout.\n", SWD_UDP_PORT);
}

static int parse_u64(const char *s, u64 min, u64 max, u64 *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno || *end || *v < min || *v > max)
		return -1;
	return 0;
}

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
	if (colon && parse_u64(colon + 1, port0_ok ? 0 : 1, 65535, &port))
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

/* --port NAME,ROLE,PEERADDR[:PORT][,hosts=LIST] */
static int add_port(const char *spec)
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
		if (same_addr(&swd.peer[i], &sa))
			goto out;	/* the input port would be ambiguous */
	i = sw_add_port(&swd.sw, name, rl, r, (unsigned int)nr);
	if (i < 0)
		goto out;
	swd.peer[i] = sa;
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "onepipe-switch: bad or duplicate --port %s\n",
			spec);
	free(dup);
	return ret;
}

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "interval-us", required_argument, NULL, 'i' },
		{ "timeout-intervals", required_argument, NULL, 't' },
		{ "commit-timeout-intervals", required_argument, NULL, 'c' },
		{ "admit-slack-us", required_argument, NULL, 'a' },
		{ "stats", required_argument, NULL, 's' },
		{ "name", required_argument, NULL, 'n' },
		{ "port", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *listen = "0.0.0.0";
	u64 interval_us = 100, slack_us = 0, ctimeout = 0, v;
	bool slack_set = false;
	char **ports = calloc((size_t)argc, sizeof(*ports));
	int c, np = 0, i, idx = 0;

	if (!ports)
		return -1;
	swd.timeout_intervals = 10;
	swd.name = "onepipe-switch";
	while ((c = getopt_long(argc, argv, "h", opts, &idx)) != -1) {
		switch (c) {
		case 'l':
			listen = optarg;
			break;
		case 'i':
			if (parse_u64(optarg, 1, 60000000, &interval_us))
				goto bad;
			break;
		case 't':
			if (parse_u64(optarg, 1, 1000000, &v))
				goto bad;
			swd.timeout_intervals = v;
			break;
		case 'c':
			if (parse_u64(optarg, 1, 10000000, &ctimeout))
				goto bad;
			break;
		case 'a':
			if (parse_u64(optarg, 0, 3600000000ULL, &slack_us))
				goto bad;
			slack_set = true;
			break;
		case 's':
			swd.stats = optarg;
			break;
		case 'n':
			if (!sw_valid_name(optarg))
				goto bad;
			swd.name = optarg;
			break;
		case 'p':
			ports[np++] = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			goto bad_usage;
		}
	}
	if (optind != argc || !np)
		goto bad_usage;
	swd.interval = interval_us * 1000;
	sw_init(&swd.sw, swd.timeout_intervals * swd.interval,
		slack_set ? slack_us * 1000 :
			    swd.timeout_intervals * swd.interval);
	if (ctimeout)
		swd.sw.commit_timeout = ctimeout * swd.interval;
	if (parse_addr(listen, &swd.local, true)) {
		fprintf(stderr, "onepipe-switch: bad --listen %s\n", listen);
		goto fail;
	}
	for (i = 0; i < np; i++)
		if (add_port(ports[i]))
			goto fail;
	free(ports);
	return 0;
bad:
	fprintf(stderr, "onepipe-switch: bad value for --%s: %s\n",
		opts[idx].name, optarg);
	goto fail;
bad_usage:
	usage(stderr);
fail:
	free(ports);
	return -1;
}

/* ---- transmit ---------------------------------------------------------- */

/*
 * Queue a packet for @port.  Everything leaves ECT(0), the socket's TOS;
 * @ce (it arrived Congestion Experienced) overrides that with CE, so the
 * mark reaches the receiver.
 */
static void tx_queue(unsigned int port, void *buf, size_t len, bool beacon,
		     bool ce)
{
	unsigned int i = swd.ntx++;
	struct msghdr *mh = &swd.txm[i].msg_hdr;

	swd.txiov[i].iov_base = buf;
	swd.txiov[i].iov_len = len;
	memset(mh, 0, sizeof(*mh));
	mh->msg_name = &swd.peer[port];
	mh->msg_namelen = sizeof(swd.peer[port]);
	mh->msg_iov = &swd.txiov[i];
	mh->msg_iovlen = 1;
	if (ce) {
		mh->msg_control = swd.ce_ctl.buf;
		mh->msg_controllen = sizeof(swd.ce_ctl.buf);
	}
	swd.txport[i] = port;
	swd.txbeacon[i] = beacon;
	swd.txce[i] = ce;
}

/*
 * Send the batch in order.  A datagram the kernel refuses (full buffers,
 * no route) is counted as a drop on its port and skipped: 1Pipe is best
 * effort below the reliable service, and receivers detect the loss.
 */
static void tx_flush(void)
{
	unsigned int i = 0, k;

	while (i < swd.ntx) {
		int n = sendmmsg(swd.sock, &swd.txm[i], swd.ntx - i, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			sw_tx_result(&swd.sw, swd.txport[i], swd.txbeacon[i],
				     false);
			i++;
			continue;
		}
		for (k = i; k < i + (unsigned int)n; k++) {
			sw_tx_result(&swd.sw, swd.txport[k], swd.txbeacon[k],
				     true);
			if (swd.txce[k])
				swd.ce_fwd[swd.txport[k]]++;
		}
		i += (unsigned int)n;
	}
	swd.ntx = 0;
}

/* ---- receive ----------------------------------------------------------- */

static int find_peer(const struct sockaddr_in *sa, socklen_t len)
{
	unsigned int i;

	if (len < sizeof(*sa) || sa->sin_family != AF_INET)
		return -1;
	for (i = 0; i < swd.sw.nports; i++)
		if (same_addr(&swd.peer[i], sa))
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

static void rx_one(struct mmsghdr *m, const struct sockaddr_in *src, u8 *buf,
		   u64 now)
{
	int in = find_peer(src, m->msg_hdr.msg_namelen);
	unsigned int out;
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
	if (sw_rx(&swd.sw, (unsigned int)in, buf, len, now, &out) ==
	    SW_FORWARD)
		tx_queue(out, buf, m->msg_len, false, ce);
}

static void on_sock(void)
{
	static struct mmsghdr m[SWD_BATCH];
	static struct iovec iov[SWD_BATCH];
	static struct sockaddr_in src[SWD_BATCH];
	static union swd_tosctl ctl[SWD_BATCH];
	int round, n, i;

	for (round = 0; round < SWD_RX_ROUNDS; round++) {
		for (i = 0; i < SWD_BATCH; i++) {
			iov[i].iov_base = rxbuf[i];
			iov[i].iov_len = SWD_BUF;
			memset(&m[i].msg_hdr, 0, sizeof(m[i].msg_hdr));
			m[i].msg_hdr.msg_name = &src[i];
			m[i].msg_hdr.msg_namelen = sizeof(src[i]);
			m[i].msg_hdr.msg_iov = &iov[i];
			m[i].msg_hdr.msg_iovlen = 1;
			m[i].msg_hdr.msg_control = ctl[i].buf;
			m[i].msg_hdr.msg_controllen = sizeof(ctl[i].buf);
		}
		n = recvmmsg(swd.sock, m, SWD_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0) {
			if (n < 0 && errno != EAGAIN && errno != EINTR &&
			    !swd.rx_err_logged) {
				perror("onepipe-switch: recvmmsg");
				swd.rx_err_logged = true;
			}
			return;
		}
		{
			u64 now = clock_ns(CLOCK_MONOTONIC);

			for (i = 0; i < n; i++)
				rx_one(&m[i], &src[i], rxbuf[i], now);
		}
		tx_flush();
		if (n < SWD_BATCH)
			return;
	}
}

/* ---- timers ------------------------------------------------------------ */

/* Arm the beacon timer at the next multiple of the interval. */
static int arm_tick(void)
{
	u64 now = clock_ns(CLOCK_REALTIME);
	struct itimerspec its = {
		.it_value = ns_to_ts((now / swd.interval + 1) * swd.interval),
		.it_interval = ns_to_ts(swd.interval),
	};

	return timerfd_settime(swd.tick_fd,
			       TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
			       &its, NULL);
}

static void on_tick(void)
{
	struct sw_beacon b[SW_MAX_PORTS];
	unsigned int n, i;
	u64 exp;

	/* Missed ticks (exp > 1) are handled once: no beacon bursts. */
	if (read(swd.tick_fd, &exp, sizeof(exp)) < 0) {
		if (errno != ECANCELED)
			return;
		/* The wall clock was set: realign with the new time. */
		if (arm_tick())
			perror("onepipe-switch: timerfd_settime");
	}
	n = sw_tick(&swd.sw, clock_ns(CLOCK_MONOTONIC), b);
	for (i = 0; i < n; i++) {
		u8 *buf = swd.beacon_buf[b[i].port];

		sw_beacon_build(buf, &b[i]);
		tx_queue(b[i].port, buf, OP_HDR_LEN, true, false);
	}
	tx_flush();
}

/* ---- stats ------------------------------------------------------------- */

static void put_addr(FILE *f, const struct sockaddr_in *sa)
{
	char a[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &sa->sin_addr, a, sizeof(a));
	fprintf(f, "%s:%u", a, ntohs(sa->sin_port));
}

static void put_hosts(FILE *f, const struct sw_port *p)
{
	unsigned int i;

	for (i = 0; i < p->nhosts; i++) {
		fprintf(f, "%s%u", i ? "+" : "", p->hosts[i].lo);
		if (p->hosts[i].hi != p->hosts[i].lo)
			fprintf(f, "-%u", p->hosts[i].hi);
	}
}

/* "key":VALUE, or "key":null when there is no value. */
static void put_opt(FILE *f, const char *key, bool valid, u64 v)
{
	if (valid)
		fprintf(f, "\"%s\":%llu,", key, (unsigned long long)v);
	else
		fprintf(f, "\"%s\":null,", key);
}

static void put_port(FILE *f, unsigned int i, u64 now)
{
	const struct sw_port *p = &swd.sw.ports[i];
	const struct op_link *l = &swd.sw.links[i];
	const struct op_link *cl = &swd.sw.clinks[i];
	bool valid;
	u64 v = 0;

	fprintf(f, "{\"name\":\"%s\",\"role\":\"%s\",\"peer\":\"", p->name,
		sw_role_name(p->role));
	put_addr(f, &swd.peer[i]);
	fprintf(f, "\",\"hosts\":\"");
	put_hosts(f, p);
	fprintf(f, "\",\"state\":\"%s\",\"heard\":%s,",
		sw_state_name(sw_port_state(&swd.sw, i)),
		l->heard ? "true" : "false");
	put_opt(f, "register", l->heard, l->reg);
	valid = sw_port_idle(&swd.sw, i, now, &v);
	put_opt(f, "idle_us", valid, v / 1000);
	valid = sw_out_barrier(&swd.sw, i, &v);
	put_opt(f, "out_barrier", valid, v);
	/* The commit barrier: its own register state, same link. */
	fprintf(f, "\"commit_state\":\"%s\",",
		sw_state_name(sw_port_commit_state(&swd.sw, i)));
	put_opt(f, "commit_register", cl->heard, cl->reg);
	valid = sw_out_commit(&swd.sw, i, &v);
	put_opt(f, "out_commit", valid, v);
	fprintf(f, "\"rx_pkts\":%llu,\"tx_pkts\":%llu,\"tx_beacons\":%llu,"
		"\"rx_beacons\":%llu,\"drops\":%llu,\"timeouts\":%llu,"
		"\"rx_ce\":%llu,\"ce_fwd\":%llu}",
		(unsigned long long)p->rx_pkts, (unsigned long long)p->tx_pkts,
		(unsigned long long)p->tx_beacons,
		(unsigned long long)p->rx_beacons,
		(unsigned long long)p->drops, (unsigned long long)p->timeouts,
		(unsigned long long)swd.rx_ce[i],
		(unsigned long long)swd.ce_fwd[i]);
}

/* One port per line, so shell scripts can grep the file. */
static void put_stats(FILE *f)
{
	u64 now = clock_ns(CLOCK_MONOTONIC);
	unsigned int i;

	fprintf(f, "{\"name\":\"%s\",\"pid\":%d,\"listen\":\"", swd.name,
		(int)getpid());
	put_addr(f, &swd.local);
	fprintf(f, "\",\"interval_us\":%llu,\"timeout_intervals\":%llu,"
		"\"admit_slack_us\":%llu,\"time_ns\":%llu,\"ports\":[\n",
		(unsigned long long)(swd.interval / 1000),
		(unsigned long long)swd.timeout_intervals,
		(unsigned long long)(swd.sw.admit_slack / 1000),
		(unsigned long long)clock_ns(CLOCK_REALTIME));
	for (i = 0; i < swd.sw.nports; i++) {
		put_port(f, i, now);
		fprintf(f, "%s\n", i + 1 < swd.sw.nports ? "," : "");
	}
	fprintf(f, "],\"rx_bad\":%llu,\"rx_unknown_src\":%llu,"
		"\"no_route\":%llu}\n",
		(unsigned long long)swd.sw.rx_bad,
		(unsigned long long)swd.sw.rx_unknown_src,
		(unsigned long long)swd.sw.no_route);
}

/* Write a temporary file and rename it: readers never see half a file. */
static void write_stats(void)
{
	char tmp[4096];
	FILE *f;
	int bad;

	if (!swd.stats)
		return;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", swd.stats) >=
	    (int)sizeof(tmp))
		return;
	f = fopen(tmp, "w");
	if (!f) {
		perror("onepipe-switch: stats");
		return;
	}
	put_stats(f);
	bad = ferror(f);
	if (fclose(f) || bad || rename(tmp, swd.stats)) {
		perror("onepipe-switch: stats");
		unlink(tmp);
	}
}

static void on_stats(void)
{
	u64 exp;

	if (read(swd.stats_fd, &exp, sizeof(exp)) == sizeof(exp))
		write_stats();
}

static void on_signal(void)
{
	struct signalfd_siginfo si;

	while (read(swd.sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGUSR1)
			write_stats();
		else
			swd.running = false;
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
		.msg_control = swd.ce_ctl.buf,
		.msg_controllen = sizeof(swd.ce_ctl.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	int ce = IPTOS_ECN_CE;

	cm->cmsg_level = IPPROTO_IP;
	cm->cmsg_type = IP_TOS;
	cm->cmsg_len = CMSG_LEN(sizeof(ce));
	memcpy(CMSG_DATA(cm), &ce, sizeof(ce));
	if (setsockopt(swd.sock, IPPROTO_IP, IP_TOS, &ect0, sizeof(ect0)))
		return -1;
	return setsockopt(swd.sock, IPPROTO_IP, IP_RECVTOS, &one,
			  sizeof(one));
}

static int open_socket(void)
{
	socklen_t len = sizeof(swd.local);
	int one = 1, buf = SWD_SOCKBUF;

	swd.sock = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			  0);
	if (swd.sock < 0 || setup_ecn())
		return -1;
	setsockopt(swd.sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/*
	 * Best effort: bigger buffers absorb bursts of synchronized beacons
	 * and a stalled process.  With CAP_NET_ADMIN past net.core.*mem_max.
	 */
	if (setsockopt(swd.sock, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)))
		setsockopt(swd.sock, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (setsockopt(swd.sock, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)))
		setsockopt(swd.sock, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	if (bind(swd.sock, (struct sockaddr *)&swd.local, sizeof(swd.local)))
		return -1;
	return getsockname(swd.sock, (struct sockaddr *)&swd.local, &len);
}

static int open_timers(void)
{
	struct itimerspec its = {
		.it_value = ns_to_ts(SWD_STATS_NS),
		.it_interval = ns_to_ts(SWD_STATS_NS),
	};
	sigset_t set;

	swd.tick_fd = timerfd_create(CLOCK_REALTIME,
				     TFD_NONBLOCK | TFD_CLOEXEC);
	swd.stats_fd = timerfd_create(CLOCK_MONOTONIC,
				      TFD_NONBLOCK | TFD_CLOEXEC);
	if (swd.tick_fd < 0 || swd.stats_fd < 0 || arm_tick() ||
	    timerfd_settime(swd.stats_fd, 0, &its, NULL))
		return -1;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -1;
	swd.sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return swd.sig_fd < 0 ? -1 : 0;
}

static int epoll_add(int fd, u32 tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	return epoll_ctl(swd.ep, EPOLL_CTL_ADD, fd, &ev);
}

static int setup(void)
{
	if (open_socket()) {
		perror("onepipe-switch: socket");
		return -1;
	}
	if (open_timers()) {
		perror("onepipe-switch: timers");
		return -1;
	}
	swd.ep = epoll_create1(EPOLL_CLOEXEC);
	if (swd.ep < 0 || epoll_add(swd.sock, EV_SOCK) ||
	    epoll_add(swd.tick_fd, EV_TICK) ||
	    epoll_add(swd.stats_fd, EV_STATS) ||
	    epoll_add(swd.sig_fd, EV_SIG)) {
		perror("onepipe-switch: epoll");
		return -1;
	}
	return 0;
}

static void dispatch(u32 tag)
{
	switch (tag) {
	case EV_SOCK:
		on_sock();
		break;
	case EV_TICK:
		on_tick();
		break;
	case EV_STATS:
		on_stats();
		break;
	case EV_SIG:
		on_signal();
		break;
	}
}

int main(int argc, char **argv)
{
	struct epoll_event ev[4];
	int n, i;

	if (parse_args(argc, argv))
		return 2;
	if (setup())
		return 1;
	write_stats();
	fprintf(stderr, "onepipe-switch %s: listening on ", swd.name);
	put_addr(stderr, &swd.local);
	fprintf(stderr, ", %u ports, interval %llu us\n", swd.sw.nports,
		(unsigned long long)(swd.interval / 1000));
	swd.running = true;
	while (swd.running) {
		n = epoll_wait(swd.ep, ev, 4, -1);
		if (n < 0 && errno != EINTR) {
			perror("onepipe-switch: epoll_wait");
			return 1;
		}
		for (i = 0; i < n; i++)
			dispatch(ev[i].data.u32);
	}
	write_stats();
	return 0;
}
