// SPDX-License-Identifier: GPL-2.0
/*
 * onepipe-switch: the software 1Pipe switch.
 *
 * One thread, one epoll loop.  Packets are received and forwarded in
 * batches (recvmmsg/sendmmsg) and handed to the I/O-free state machine of
 * switch_logic.c, which decides where they go and what the barriers are.
 * A CLOCK_REALTIME timer fires at absolute multiples of the beacon
 * interval, like the hosts' beacon timers, so the whole fabric beacons at
 * the same instants.
 *
 * This file is what both transports share: options, the loop, the beacon
 * timer, the transmit queue's accounting and the stats file.  The I/O is
 * a backend's (swd.h): UDP datagrams to and from peer addresses
 * (swd_udp.c, the UDP transport, barriers rewritten in every packet), or
 * whole RoCEv2 frames on network interfaces (swd_roce.c, --roce, the
 * verbs transport, barriers in beacons only).  With --controller, the
 * failure controller's client (swd_ctl.c) shares the loop too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
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

#include "swd.h"

#define SWD_STATS_NS	100000000ULL	/* stats file refresh, 100 ms */

struct swd swd;
u8 swd_rxbuf[SWD_BATCH][SWD_BUF];

u64 swd_clock_ns(clockid_t id)
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
		"usage: onepipe-switch [--listen ADDR[:PORT]] [OPTIONS]\n"
		"         --port NAME,ROLE,PEERADDR[:PORT][,hosts=LIST] ...\n"
		"       onepipe-switch --roce [OPTIONS]\n"
		"         --port NAME,ROLE,IFNAME[,hosts=LIST][,mac=PEERMAC]\n"
		"                [,ip=PEERIP][,src=LOCALIP][,qpn=PEERQPN]\n"
		"                [,qkey=PEERQKEY] ...\n"
		"  OPTIONS: [--interval-us N] [--timeout-intervals K]\n"
		"         [--commit-timeout-intervals C]\n"
		"         [--admit-slack-us S] [--no-push]\n"
		"         [--stats FILE] [--name NAME] [--cpu N|any]\n"
		"         [--controller PATH --node NAME] [--bundle-bytes N]\n"
		"  ROLE is down (towards hosts / a lower tier) or up;\n"
		"  LIST is like 1-4+7 (host ids reachable through the port).\n"
		"  Defaults: listen 0.0.0.0:5640, interval 100 us, timeout 10\n"
		"  intervals, commit registers 10 times the timeout, admit\n"
		"  slack = timeout, bundles up to 1400 bytes, UDP: any CPU,\n"
		"  --roce: pinned to the CPU it starts on.  A barrier\n"
		"  advance is pushed to idle ports at once (two in a row,\n"
		"  then one per port per half interval; a port that forwarded\n"
		"  in the last eighth of an interval gets that long for a\n"
		"  packet to carry it); --no-push leaves it to the next tick.\n"
		"  --roce: ports are interfaces carrying RoCEv2 UD SENDs,\n"
		"  forwarded unchanged; barriers only in beacons, sent every\n"
		"  interval on every port to the peer's mac/ip/qpn/qkey from\n"
		"  src (defaults: broadcast, 0.0.0.0, QPN 1, the 1Pipe Q_Key,\n"
		"  0.0.0.0: another switch).\n"
		"  --bundle-bytes: UDP only: what one receive batch forwards\n"
		"  to a port leaves in bundles of at most N bytes (0 or\n"
		"  64..65507); 0: one packet per datagram, for peers that\n"
		"  take no bundles (a P4 switch).\n"
		"  --controller: report links silent for the commit timeout\n"
		"  to onepiped at PATH (AF_UNIX) as node NAME, keep their\n"
		"  commit registers until it says RESUME.\n");
}

int swd_parse_u64(const char *s, u64 min, u64 max, u64 *v)
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

/**
 * struct swd_args - command line options before they are applied
 * @listen: --listen, NULL if not given
 * @interval_us: --interval-us
 * @ctimeout: --commit-timeout-intervals, 0 if not given
 * @slack_us: --admit-slack-us
 * @slack_set: whether it was given
 * @roce: --roce
 * @no_push: --no-push
 * @cpu: --cpu: a CPU number, SWD_CPU_ANY, or SWD_CPU_DEFAULT if not given
 * @ports: the --port specs
 * @np: their number
 * @controller: --controller, NULL if not given
 * @node: --node, NULL if not given
 * @bundle_bytes: --bundle-bytes
 * @bundle_set: whether it was given
 */
struct swd_args {
	const char *listen;
	u64 interval_us;
	u64 ctimeout;
	u64 slack_us;
	bool slack_set;
	bool roce;
	bool no_push;
	int cpu;
	char **ports;
	int np;
	const char *controller;
	const char *node;
	u64 bundle_bytes;
	bool bundle_set;
};

#define SWD_CPU_ANY	(-1)
#define SWD_CPU_DEFAULT	(-2)
#define SWD_CPU_MAX	(CPU_SETSIZE - 1)

static const struct option swd_opts[] = {
	{ "listen", required_argument, NULL, 'l' },
	{ "roce", no_argument, NULL, 'r' },
	{ "interval-us", required_argument, NULL, 'i' },
	{ "timeout-intervals", required_argument, NULL, 't' },
	{ "commit-timeout-intervals", required_argument, NULL, 'c' },
	{ "admit-slack-us", required_argument, NULL, 'a' },
	{ "no-push", no_argument, NULL, 'P' },
	{ "stats", required_argument, NULL, 's' },
	{ "name", required_argument, NULL, 'n' },
	{ "port", required_argument, NULL, 'p' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "controller", required_argument, NULL, 'K' },
	{ "node", required_argument, NULL, 'N' },
	{ "bundle-bytes", required_argument, NULL, 'B' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* One option; -1 for a bad value, -2 for a usage error. */
static int parse_opt(int c, struct swd_args *a)
{
	u64 v;

	switch (c) {
	case 'l':
		a->listen = optarg;
		return 0;
	case 'r':
		a->roce = true;
		return 0;
	case 'i':
		return swd_parse_u64(optarg, 1, 60000000, &a->interval_us);
	case 't':
		if (swd_parse_u64(optarg, 1, 1000000, &v))
			return -1;
		swd.timeout_intervals = v;
		return 0;
	case 'c':
		return swd_parse_u64(optarg, 1, 10000000, &a->ctimeout);
	case 'a':
		a->slack_set = true;
		return swd_parse_u64(optarg, 0, 3600000000ULL, &a->slack_us);
	case 'P':
		a->no_push = true;
		return 0;
	case 's':
		swd.stats = optarg;
		return 0;
	case 'n':
		if (!sw_valid_name(optarg))
			return -1;
		swd.name = optarg;
		return 0;
	case 'p':
		a->ports[a->np++] = optarg;
		return 0;
	case 'C':
		if (!strcmp(optarg, "any")) {
			a->cpu = SWD_CPU_ANY;
			return 0;
		}
		if (swd_parse_u64(optarg, 0, SWD_CPU_MAX, &v))
			return -1;
		a->cpu = (int)v;
		return 0;
	case 'K':
		a->controller = optarg;
		return 0;
	case 'N':
		a->node = optarg;
		return 0;
	case 'B':
		a->bundle_set = true;
		if (swd_parse_u64(optarg, 0, SWD_BUNDLE_MAX, &a->bundle_bytes))
			return -1;
		return a->bundle_bytes && a->bundle_bytes < SWD_BUNDLE_MIN ?
		       -1 : 0;
	case 'h':
		usage(stdout);
		exit(0);
	default:
		return -2;
	}
}

/*
 * Keep this process on one CPU.  A veth hands what it transmits to the
 * backlog of the CPU that sends it, and under load (softirqs deferred to
 * ksoftirqd) two CPUs' backlogs drain in either order: a switch that
 * migrates between two sends can have its beacon overtake the data sent
 * before it, and that data then arrives late at its receivers.  1Pipe
 * needs FIFO links, so the RoCE mode, whose barriers travel only in
 * beacons, stays on the CPU it starts on unless told otherwise.
 */
static int pin_cpu(const struct swd_args *a)
{
	int cpu = a->cpu;
	cpu_set_t set;

	if (cpu == SWD_CPU_DEFAULT)
		cpu = a->roce ? sched_getcpu() : SWD_CPU_ANY;
	swd.cpu = cpu;
	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "onepipe-switch: --cpu %d: %s\n", cpu,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* Pick the backend, set the switch up and add the ports. */
static int apply_args(const struct swd_args *a)
{
	int i;

	if (a->roce && a->listen) {
		fprintf(stderr, "onepipe-switch: --listen is for UDP, not "
			"--roce\n");
		return -1;
	}
	/* A RoCE frame holds one UD SEND, so one packet: nothing to bundle. */
	if (a->roce && a->bundle_set) {
		fprintf(stderr, "onepipe-switch: --bundle-bytes is for UDP, "
			"not --roce\n");
		return -1;
	}
	swd.be = a->roce ? &swd_roce : &swd_udp;
	swd.bundle_bytes = a->bundle_set ? a->bundle_bytes :
			   SWD_BUNDLE_DEFAULT;
	swd.interval = a->interval_us * 1000;
	sw_init(&swd.sw, swd.timeout_intervals * swd.interval,
		a->slack_set ? a->slack_us * 1000 :
			       swd.timeout_intervals * swd.interval);
	if (a->ctimeout)
		swd.sw.commit_timeout = a->ctimeout * swd.interval;
	/* RoCE packets may not be rewritten: barriers go in beacons. */
	swd.sw.beacon_only = a->roce;
	/* The hosts' pacing too: see kernel/core/push.h. */
	if (!a->no_push)
		sw_set_push(&swd.sw, swd.interval / OP_PUSH_GAP_DIV,
			    swd.interval / OP_PUSH_BUSY_DIV);
	/* The controller decides failures: see "Controlled mode". */
	if (!a->controller != !a->node) {
		fprintf(stderr, "onepipe-switch: --controller and --node go "
			"together\n");
		return -1;
	}
	if (a->controller) {
		if (swd_ctl_set(a->controller, a->node))
			return -1;
		sw_set_controlled(&swd.sw, true);
	}
	if (swd.be->init(a->listen))
		return -1;
	for (i = 0; i < a->np; i++)
		if (swd.be->add_port(a->ports[i]))
			return -1;
	return pin_cpu(a);
}

static int parse_args(int argc, char **argv)
{
	struct swd_args a = { .interval_us = 100, .cpu = SWD_CPU_DEFAULT };
	int c, idx = 0, ret = -1, err;

	a.ports = calloc((size_t)argc, sizeof(*a.ports));
	if (!a.ports)
		return -1;
	swd.timeout_intervals = 10;
	swd.name = "onepipe-switch";
	while ((c = getopt_long(argc, argv, "h", swd_opts, &idx)) != -1) {
		err = parse_opt(c, &a);
		if (err == -1) {
			fprintf(stderr,
				"onepipe-switch: bad value for --%s: %s\n",
				swd_opts[idx].name, optarg);
			goto out;
		}
		if (err)
			goto bad_usage;
	}
	if (optind != argc || !a.np)
		goto bad_usage;
	ret = apply_args(&a);
	goto out;
bad_usage:
	usage(stderr);
out:
	free(a.ports);
	return ret;
}

/* ---- transmit ---------------------------------------------------------- */

void swd_tx_queue(unsigned int port, void *buf, size_t len, bool beacon,
		  bool ce)
{
	struct swd_tx *t;

	/*
	 * Full: a batch of bundles forwards more than one packet per
	 * datagram.  Send what is queued, in order; the receive buffers
	 * it points into stay valid until the end of the batch.
	 */
	if (swd.ntx == SWD_TXMAX) {
		swd.be->flush();
		swd.ntx = 0;
	}
	t = &swd.tx[swd.ntx++];

	t->buf = buf;
	t->len = len;
	t->port = port;
	t->beacon = beacon;
	t->ce = ce;
}

/* Account for one message's @n packets, idx[*k] on; move *k past them. */
static void tx_done(const unsigned int *idx, unsigned int *k, unsigned int n,
		    bool ok)
{
	for (; n; n--) {
		const struct swd_tx *t = &swd.tx[idx[(*k)++]];

		sw_tx_result(&swd.sw, t->port, t->beacon, ok);
		if (ok && t->ce)
			swd.ce_fwd[t->port]++;
	}
}

/**
 * swd_tx_send() - send queued packets on one socket, in order
 * @fd: the socket
 * @m: their messages
 * @idx: the indexes in swd.tx of the packets of each message in turn
 * @cnt: each message's number of packets (a bundle's), NULL: one each
 * @n: number of messages
 *
 * A message the kernel refuses (full buffers, no route, too big) is
 * counted as a drop of each of its packets on its port and skipped: 1Pipe
 * is best effort below the reliable service, and receivers detect the
 * loss.
 */
void swd_tx_send(int fd, struct mmsghdr *m, const unsigned int *idx,
		 const unsigned int *cnt, unsigned int n)
{
	unsigned int i = 0, k = 0, end;

	while (i < n) {
		int r = sendmmsg(fd, &m[i], n - i, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			tx_done(idx, &k, cnt ? cnt[i] : 1, false);
			i++;
			continue;
		}
		for (end = i + (unsigned int)r; i < end; i++)
			tx_done(idx, &k, cnt ? cnt[i] : 1, true);
	}
}

/* Have push_fd fire when the next push falls due, if one is pending. */
static void arm_push(void)
{
	struct itimerspec its = { 0 };
	u64 when;

	if (!sw_push_due(&swd.sw, &when) || when == swd.push_armed)
		return;
	/* 0 would disarm the timer: any time in the past fires at once. */
	its.it_value = ns_to_ts(when ? when : 1);
	if (timerfd_settime(swd.push_fd, TFD_TIMER_ABSTIME, &its, NULL))
		perror("onepipe-switch: timerfd_settime");
	else
		swd.push_armed = when;
}

/*
 * Send the queue.  The pushes due go last: a beacon may carry a barrier
 * above the timestamps of the packets queued before it, which must reach
 * the port's peer first.
 */
void swd_flush(void)
{
	struct sw_beacon b[SW_MAX_PORTS];
	unsigned int n, i;

	if (swd.sw.push) {
		n = sw_push(&swd.sw, swd_clock_ns(CLOCK_MONOTONIC), b);
		for (i = 0; i < n; i++)
			swd.be->beacon(&b[i]);
	}
	if (swd.ntx)
		swd.be->flush();
	swd.ntx = 0;
	if (swd.sw.push)
		arm_push();
}

/* Log the first receive error only: a persistent one would flood. */
void swd_rx_error(const char *what)
{
	if (errno == EAGAIN || errno == EINTR || swd.rx_err_logged)
		return;
	fprintf(stderr, "onepipe-switch: %s: %s\n", what, strerror(errno));
	swd.rx_err_logged = true;
}

/*
 * Best effort: bigger buffers absorb bursts of synchronized beacons and a
 * stalled process.  With CAP_NET_ADMIN past net.core.*mem_max.
 */
void swd_setbufs(int fd)
{
	int buf = SWD_SOCKBUF;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
}

/* ---- timers ------------------------------------------------------------ */

/* Arm the beacon timer at the next multiple of the interval. */
static int arm_tick(void)
{
	u64 now = swd_clock_ns(CLOCK_REALTIME);
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
	n = sw_tick(&swd.sw, swd_clock_ns(CLOCK_MONOTONIC), b);
	for (i = 0; i < n; i++)
		swd.be->beacon(&b[i]);
	swd_flush();
	swd_ctl_tick();
}

static void on_push(void)
{
	u64 exp;

	if (read(swd.push_fd, &exp, sizeof(exp)) < 0 && errno == EAGAIN)
		return;
	swd.push_armed = 0;
	swd_flush();
}

/* ---- stats ------------------------------------------------------------- */

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

static void put_counters(FILE *f, unsigned int i)
{
	const struct sw_port *p = &swd.sw.ports[i];

	fprintf(f, "\"rx_pkts\":%llu,\"tx_pkts\":%llu,\"tx_beacons\":%llu,"
		"\"tx_pushes\":%llu,"
		"\"rx_beacons\":%llu,\"drops\":%llu,\"timeouts\":%llu,"
		"\"rx_ce\":%llu,\"ce_fwd\":%llu,\"reports\":%llu,"
		"\"resumes\":%llu",
		(unsigned long long)p->rx_pkts, (unsigned long long)p->tx_pkts,
		(unsigned long long)p->tx_beacons,
		(unsigned long long)p->pushes,
		(unsigned long long)p->rx_beacons,
		(unsigned long long)p->drops, (unsigned long long)p->timeouts,
		(unsigned long long)swd.rx_ce[i],
		(unsigned long long)swd.ce_fwd[i],
		(unsigned long long)swd.ctl.reports[i],
		(unsigned long long)p->resumes);
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
	swd.be->put_peer(f, i);
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
	/* Controlled mode: silent for the commit timeout, reported. */
	fprintf(f, "\"link_down\":%s,",
		swd.sw.reported & ((u64)1 << i) ? "true" : "false");
	put_counters(f, i);
	swd.be->put_port_tail(f, i);
	fprintf(f, "}");
}

/* One port per line, so shell scripts can grep the file. */
static void put_stats(FILE *f)
{
	u64 now = swd_clock_ns(CLOCK_MONOTONIC);
	unsigned int i;

	fprintf(f, "{\"name\":\"%s\",\"pid\":%d,", swd.name, (int)getpid());
	swd.be->put_head(f);
	fprintf(f, "\"interval_us\":%llu,\"timeout_intervals\":%llu,"
		"\"admit_slack_us\":%llu,\"push\":%s,\"controlled\":%s,"
		"\"time_ns\":%llu,\"ports\":[\n",
		(unsigned long long)(swd.interval / 1000),
		(unsigned long long)swd.timeout_intervals,
		(unsigned long long)(swd.sw.admit_slack / 1000),
		swd.sw.push ? "true" : "false",
		swd.sw.controlled ? "true" : "false",
		(unsigned long long)swd_clock_ns(CLOCK_REALTIME));
	for (i = 0; i < swd.sw.nports; i++) {
		put_port(f, i, now);
		fprintf(f, "%s\n", i + 1 < swd.sw.nports ? "," : "");
	}
	fprintf(f, "],\"rx_bad\":%llu,\"rx_unknown_src\":%llu,"
		"\"no_route\":%llu",
		(unsigned long long)swd.sw.rx_bad,
		(unsigned long long)swd.sw.rx_unknown_src,
		(unsigned long long)swd.sw.no_route);
	if (swd.ctl.path)
		swd_ctl_put_tail(f);
	swd.be->put_tail(f);
	fprintf(f, "}\n");
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
	swd.push_fd = timerfd_create(CLOCK_MONOTONIC,
				     TFD_NONBLOCK | TFD_CLOEXEC);
	if (swd.tick_fd < 0 || swd.stats_fd < 0 || swd.push_fd < 0 ||
	    arm_tick() ||
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

int swd_epoll_add(int fd, unsigned int tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	return epoll_ctl(swd.ep, EPOLL_CTL_ADD, fd, &ev);
}

static int setup(void)
{
	swd.ep = epoll_create1(EPOLL_CLOEXEC);
	if (swd.ep < 0) {
		perror("onepipe-switch: epoll");
		return -1;
	}
	/* The backend reports its own errors: it knows which port. */
	if (swd.be->open())
		return -1;
	if (open_timers()) {
		perror("onepipe-switch: timers");
		return -1;
	}
	if (swd_epoll_add(swd.tick_fd, SWD_EV_TICK) ||
	    swd_epoll_add(swd.push_fd, SWD_EV_PUSH) ||
	    swd_epoll_add(swd.stats_fd, SWD_EV_STATS) ||
	    swd_epoll_add(swd.sig_fd, SWD_EV_SIG)) {
		perror("onepipe-switch: epoll");
		return -1;
	}
	if (swd_ctl_open()) {
		perror("onepipe-switch: controller");
		return -1;
	}
	return 0;
}

static void dispatch(unsigned int tag)
{
	switch (tag) {
	case SWD_EV_TICK:
		on_tick();
		break;
	case SWD_EV_PUSH:
		on_push();
		break;
	case SWD_EV_STATS:
		on_stats();
		break;
	case SWD_EV_SIG:
		on_signal();
		break;
	case SWD_EV_CTL:
	case SWD_EV_CTL_RETRY:
		swd_ctl_event(tag);
		break;
	default:
		swd.be->rx(tag - SWD_EV_BACKEND);
		break;
	}
}

int main(int argc, char **argv)
{
	struct epoll_event ev[8];
	int n, i;

	if (parse_args(argc, argv))
		return 2;
	if (setup())
		return 1;
	write_stats();
	fprintf(stderr, "onepipe-switch %s: ", swd.name);
	swd.be->describe(stderr);
	fprintf(stderr, ", %u ports, interval %llu us", swd.sw.nports,
		(unsigned long long)(swd.interval / 1000));
	if (swd.cpu >= 0)
		fprintf(stderr, ", on CPU %d", swd.cpu);
	if (swd.ctl.path)
		fprintf(stderr, ", controlled by %s as %s", swd.ctl.path,
			swd.ctl.node);
	fprintf(stderr, "\n");
	swd.running = true;
	while (swd.running) {
		n = epoll_wait(swd.ep, ev, 8, -1);
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
