// SPDX-License-Identifier: GPL-2.0
/*
 * op-traffic: one 1Pipe process for tests, the demo and the benchmark.
 *
 * It sends scatterings (one sendmmsg() each, or one sendmsg(MSG_MORE) per
 * message with --use-more) to random sets of peers, receives what others
 * send, drains send-failure notifications from the error queue, and logs
 * every event in program order (one poll() loop, one thread) for
 * tools/checker/op-check.  With --udp it does the same over plain UDP
 * sockets, as a baseline for tools/bench/op-bench.  --recv-pause-ms makes
 * it a receiver that stops reading for a while (flow control tests).
 *
 * Log lines (see tools/traffic/README.md):
 *   P <host> <port>
 *   S <ts> <scat_id> <dh>:<dp>[,<dh>:<dp>...]
 *   R <ts> <sh>:<sp> <scat_id> <idx> <len> <lat_ns>
 *   E <ts> <dh>:<dp> <scat_id> <idx> <errno> <code>
 *   X <sh>:<sp> <reason>
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/onepipe.h>
#include <linux/sockios.h>

#include "payload.h"
#include "stats.h"
#include "tool.h"

#define RX_BATCH	16
#define RX_BUDGET	256		/* messages per poll round, then send */
#define RX_BUFSZ	ONEPIPE_MAX_MSG
#define CMSG_BUFSZ	256
#define ERRQ_SWEEP_NS	50000000ull	/* read the error queue at least this often */
#define NOBUFS_WAIT_NS	1000000ull	/* ENOBUFS has no POLLOUT edge: back off */
#define START_FILE_POLL_MS 10
#define DRAIN_POLL_NS	100000000ull	/* --drain: look at SIOCOUTQ this often */

/* A process address: 1Pipe (host id, port) or UDP (IPv4, port). */
struct ep {
	uint32_t host;
	uint16_t port;
};

struct opts {
	uint16_t port;
	int type;
	bool udp;
	struct ep *peers;
	int npeers;
	long scatterings;
	int fanout;
	size_t size;
	uint64_t interval_ns;
	long expect;
	uint64_t linger_ns;
	const char *log;
	bool unordered;
	bool use_more;
	int sndbuf;
	int rcvbuf;
	uint64_t seed;
	uint64_t start_at_ns;
	const char *start_file;
	bool quiet;
	bool json;
	uint32_t bind_addr;
	uint64_t delay_ns;	/* first scattering this long after the start */
	uint64_t duration_ns;	/* no new scattering this long after it */
	bool until_down;	/* ENETDOWN ends sending, not the process */
	bool drain;		/* linger while messages are unsettled */
	uint64_t pause_at_ns;	/* --recv-pause-ms START:DURATION, from the */
	uint64_t pause_len_ns;	/* start; pause_len_ns 0 = no pause */
	const char *summary;	/* JSON summary to this file as well */
	int64_t fail_ack_ns;	/* --failure-ack-ms; -1: never acknowledge */
};

/* The scattering being sent; messages [base, k) are still to go. */
struct txs {
	int k;
	int base;		/* first message of the current (sub)scattering */
	int next;		/* --use-more: next message to sendmsg() */
	uint64_t scat_id;
	bool built;
	struct ep *dst;
	uint8_t **buf;
	struct iovec *iov;
	struct sockaddr_storage *name;
	struct mmsghdr *msg;
};

struct rxs {
	uint8_t *buf[RX_BATCH];
	struct iovec iov[RX_BATCH];
	struct sockaddr_storage name[RX_BATCH];
	char ctl[RX_BATCH][CMSG_BUFSZ];
	struct mmsghdr msg[RX_BATCH];
	uint8_t *ebuf;		/* error queue */
};

struct stats {
	uint64_t scats, sent, recvd, failed, bad, splits, errq_swept;
	uint64_t eagain, enobufs, blocked;
	uint64_t first_send, last_send, first_recv, last_recv;	/* realtime */
	uint64_t pause_from, pause_to;		/* realtime, 0 = not yet */
	struct lat_samples lat;
};

/*
 * A scattering that waits for credits (a reliable receiver's window, the
 * best-effort be_window) is stamped when they come, after sendmmsg()
 * returned: until then ONEPIPE_LAST_TS fails with
 * EINPROGRESS and the socket is not writable.  Its S line keeps its place
 * in the log (where the send call was: what causality is about) and gets
 * its timestamp once the socket is writable again; the lines logged
 * meanwhile are held in memory.
 */
struct pend {
	bool on;
	uint64_t scat_id;
	char *dests;		/* "<dh>:<dp>,..." of the S line */
	FILE *mem;		/* log lines after the S line */
	char *buf;
	size_t len;
};

/* Most process-failure notifications one run keeps track of. */
#define MAX_FAILED	64

struct traffic {
	struct opts o;
	int fd;
	struct ep self;
	FILE *log;
	uint64_t rng;
	struct txs tx;
	struct rxs rx;
	struct stats st;
	uint64_t next_scat_id;
	bool started;
	bool want_out;		/* send hit EAGAIN: wait for POLLOUT */
	bool blocked;		/* this wait for POLLOUT was counted */
	bool defer_ts;		/* S timestamps may come late */
	struct pend pend;
	uint64_t prev_ts;	/* last timestamp an S line logged, not 0 */
	bool paused;		/* not reading (--recv-pause-ms) */
	bool down;		/* --until-down: a send found the host down */
	uint64_t pause_at;	/* monotonic */
	uint64_t pause_end;	/* monotonic */
	uint64_t next_send;	/* monotonic */
	uint64_t send_until;	/* monotonic: --duration-ms ends here */
	uint64_t last_progress;	/* monotonic */
	uint64_t next_sweep;	/* monotonic */
	uint32_t failed[MAX_FAILED];	/* hosts notified failed */
	int nfailed;
	uint32_t ack_epoch;	/* process failure to acknowledge, 0: none */
	uint64_t ack_at;	/* monotonic */
};

/* xorshift64*: destination choice only needs to be cheap and seeded. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* ---- addresses ---------------------------------------------------- */

static const char *ep_str(const struct traffic *t, struct ep e, char *b,
			  size_t n)
{
	return host_port_str(e.host, e.port, t->o.udp, b, n);
}

static socklen_t ep_to_sa(bool udp, struct ep e, struct sockaddr_storage *ss)
{
	struct sockaddr_onepipe *sop;

	memset(ss, 0, sizeof(*ss));
	if (udp) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(e.host);
		sin->sin_port = htons(e.port);
		return sizeof(*sin);
	}
	sop = (struct sockaddr_onepipe *)ss;
	sop->sop_family = AF_ONEPIPE;
	sop->sop_host = e.host;
	sop->sop_port = e.port;
	return sizeof(*sop);
}

static struct ep sa_to_ep(const struct sockaddr_storage *ss)
{
	struct ep e = { 0, 0 };

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ss;

		e.host = ntohl(sin->sin_addr.s_addr);
		e.port = ntohs(sin->sin_port);
	} else if (ss->ss_family == AF_ONEPIPE) {
		const struct sockaddr_onepipe *sop = (const void *)ss;

		e.host = sop->sop_host;
		e.port = sop->sop_port;
	}
	return e;
}

/* --recv-pause-ms START:DURATION, both in ms, DURATION > 0. */
static void parse_pause(struct opts *o, const char *s)
{
	char start[32];
	const char *colon = strchr(s, ':');
	uint64_t a, b;

	if (!colon || (size_t)(colon - s) >= sizeof(start))
		usage_error("bad recv-pause-ms '%s' (START:DURATION)", s);
	memcpy(start, s, colon - s);
	start[colon - s] = 0;
	if (!parse_u64(start, &a) || !parse_u64(colon + 1, &b) || !b ||
	    a > UINT32_MAX || b > UINT32_MAX)
		usage_error("bad recv-pause-ms '%s' (START:DURATION)", s);
	o->pause_at_ns = a * 1000000;
	o->pause_len_ns = b * 1000000;
}

/* "H:P": H a host id (1Pipe) or an IPv4 address (--udp). */
static bool parse_ep(const char *s, bool udp, struct ep *e)
{
	char host[64];
	struct in_addr a;
	uint64_t h;

	if (!split_host_port(s, host, sizeof(host), &e->port))
		return false;
	if (udp) {
		if (inet_pton(AF_INET, host, &a) != 1)
			return false;
		e->host = ntohl(a.s_addr);
		return true;
	}
	if (!parse_u64(host, &h) || h > UINT32_MAX)
		return false;
	e->host = h;
	return true;
}

static void parse_peers(struct opts *o, const char *list)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int n = 1;
	const char *c;

	if (!copy)
		die("out of memory");
	for (c = list; *c; c++)
		n += *c == ',';
	free(o->peers);
	o->peers = xcalloc(n, sizeof(*o->peers));
	o->npeers = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!parse_ep(tok, o->udp, &o->peers[o->npeers]))
			usage_error("bad peer '%s'", tok);
		o->npeers++;
	}
	free(copy);
}

/* ---- options ------------------------------------------------------ */

static void help(void)
{
	puts(
"usage: op-traffic [options]\n"
"  --port P            bind port (0 = any)\n"
"  --type dgram|rdm    socket type (default dgram)\n"
"  --peers H:P[,...]   possible destinations\n"
"  --scatterings N     scatterings to send (default 0)\n"
"  --fanout K          distinct destinations per scattering (default 1)\n"
"  --size BYTES        message size, >= 36 (default 64)\n"
"  --interval-us U     pause between scatterings (default 0)\n"
"  --expect N          stop once N messages were delivered (and all sent)\n"
"  --linger-ms D       after sending, stop after D ms without progress\n"
"                      (default 1000)\n"
"  --drain             and not while the socket holds unsettled messages\n"
"                      (SIOCOUTQ > 0: not yet ACKed, or for rdm committed,\n"
"                      nor notified)\n"
"  --log FILE          event log\n"
"  --unordered         setsockopt(ONEPIPE_ORDERED, 0)\n"
"  --use-more          one sendmsg(MSG_MORE) per message, not sendmmsg\n"
"  --sndbuf B --rcvbuf B\n"
"  --seed S            PRNG seed, mixed with this process's address\n"
"  --start-at-ns T     send nothing before CLOCK_REALTIME T\n"
"  --start-file F      wait for file F to hold T, then as --start-at-ns T\n"
"  --delay-ms D        first scattering D ms after the start\n"
"  --duration-ms D     no new scattering D ms after the start (with a\n"
"                      large --scatterings: send for a while)\n"
"  --recv-pause-ms S:D stop receiving S ms after the start, for D ms\n"
"                      (sending and the error queue go on)\n"
"  --udp               plain UDP baseline: peers are IPv4:port\n"
"  --bind ADDR         --udp only: local IPv4 address (default any)\n"
"  --json              summary as one JSON object\n"
"  --summary FILE      also write the JSON summary to FILE\n"
"  --until-down        a send failing with ENETDOWN (the host went down)\n"
"                      ends sending, not the process\n"
"  --failure-ack-ms D  SOCK_RDM: acknowledge a process-failure notification\n"
"                      D ms after it (default 0; -1: never)\n"
"  --quiet             no summary on stdout");
}

enum {
	O_PORT = 256, O_TYPE, O_PEERS, O_SCAT, O_FANOUT, O_SIZE, O_INTERVAL,
	O_EXPECT, O_LINGER, O_LOG, O_UNORDERED, O_MORE, O_SNDBUF, O_RCVBUF,
	O_SEED, O_START, O_START_FILE, O_QUIET, O_UDP, O_BIND, O_JSON, O_HELP,
	O_DELAY, O_PAUSE, O_SUMMARY, O_UNTIL_DOWN, O_FAIL_ACK, O_DRAIN,
	O_DURATION,
};

static const struct option longopts[] = {
	{ "port", required_argument, NULL, O_PORT },
	{ "type", required_argument, NULL, O_TYPE },
	{ "peers", required_argument, NULL, O_PEERS },
	{ "scatterings", required_argument, NULL, O_SCAT },
	{ "fanout", required_argument, NULL, O_FANOUT },
	{ "size", required_argument, NULL, O_SIZE },
	{ "interval-us", required_argument, NULL, O_INTERVAL },
	{ "expect", required_argument, NULL, O_EXPECT },
	{ "linger-ms", required_argument, NULL, O_LINGER },
	{ "log", required_argument, NULL, O_LOG },
	{ "unordered", no_argument, NULL, O_UNORDERED },
	{ "use-more", no_argument, NULL, O_MORE },
	{ "sndbuf", required_argument, NULL, O_SNDBUF },
	{ "rcvbuf", required_argument, NULL, O_RCVBUF },
	{ "seed", required_argument, NULL, O_SEED },
	{ "start-at-ns", required_argument, NULL, O_START },
	{ "start-file", required_argument, NULL, O_START_FILE },
	{ "quiet", no_argument, NULL, O_QUIET },
	{ "udp", no_argument, NULL, O_UDP },
	{ "bind", required_argument, NULL, O_BIND },
	{ "json", no_argument, NULL, O_JSON },
	{ "delay-ms", required_argument, NULL, O_DELAY },
	{ "duration-ms", required_argument, NULL, O_DURATION },
	{ "recv-pause-ms", required_argument, NULL, O_PAUSE },
	{ "summary", required_argument, NULL, O_SUMMARY },
	{ "until-down", no_argument, NULL, O_UNTIL_DOWN },
	{ "drain", no_argument, NULL, O_DRAIN },
	{ "failure-ack-ms", required_argument, NULL, O_FAIL_ACK },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

static void set_opt(struct opts *o, int c, const char *a)
{
	struct in_addr in;

	switch (c) {
	case O_PORT:
		o->port = num_arg("port", a, 65535);
		break;
	case O_TYPE:
		if (!strcmp(a, "dgram"))
			o->type = SOCK_DGRAM;
		else if (!strcmp(a, "rdm"))
			o->type = SOCK_RDM;
		else
			usage_error("bad type '%s'", a);
		break;
	case O_SCAT:
		o->scatterings = num_arg("scatterings", a, LONG_MAX);
		break;
	case O_FANOUT:
		o->fanout = num_arg("fanout", a, 65536);
		break;
	case O_SIZE:
		o->size = num_arg("size", a, ONEPIPE_MAX_MSG);
		break;
	case O_INTERVAL:
		o->interval_ns = num_arg("interval", a, UINT32_MAX) * 1000;
		break;
	case O_EXPECT:
		o->expect = num_arg("expect", a, LONG_MAX);
		break;
	case O_LINGER:
		o->linger_ns = num_arg("linger", a, UINT32_MAX) * 1000000;
		break;
	case O_SNDBUF:
		o->sndbuf = num_arg("sndbuf", a, INT_MAX);
		break;
	case O_RCVBUF:
		o->rcvbuf = num_arg("rcvbuf", a, INT_MAX);
		break;
	case O_SEED:
		o->seed = num_arg("seed", a, UINT64_MAX);
		break;
	case O_START:
		o->start_at_ns = num_arg("start-at-ns", a, UINT64_MAX);
		break;
	case O_BIND:
		if (inet_pton(AF_INET, a, &in) != 1)
			usage_error("bad address '%s'", a);
		o->bind_addr = ntohl(in.s_addr);
		break;
	case O_DELAY:
		o->delay_ns = num_arg("delay-ms", a, UINT32_MAX) * 1000000;
		break;
	case O_DURATION:
		o->duration_ns = num_arg("duration-ms", a, UINT32_MAX) * 1000000;
		break;
	case O_PAUSE:
		parse_pause(o, a);
		break;
	default:
		usage_error("bad option");
	}
}

static void parse_opts(struct opts *o, int argc, char **argv)
{
	const char *peers = NULL;
	int c;

	*o = (struct opts){ .type = SOCK_DGRAM, .fanout = 1, .size = 64,
			    .linger_ns = 1000 * 1000000ull, .seed = 1,
			    .sndbuf = -1, .rcvbuf = -1 };
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case O_PEERS:
			peers = optarg;
			break;
		case O_LOG:
			o->log = optarg;
			break;
		case O_START_FILE:
			o->start_file = optarg;
			break;
		case O_SUMMARY:
			o->summary = optarg;
			break;
		case O_UNTIL_DOWN:
			o->until_down = true;
			break;
		case O_DRAIN:
			o->drain = true;
			break;
		case O_FAIL_ACK:
			o->fail_ack_ns = strcmp(optarg, "-1") ?
				(int64_t)num_arg("failure-ack-ms", optarg,
						 3600000) * 1000000 : -1;
			break;
		case O_UNORDERED:
			o->unordered = true;
			break;
		case O_MORE:
			o->use_more = true;
			break;
		case O_QUIET:
			o->quiet = true;
			break;
		case O_UDP:
			o->udp = true;
			break;
		case O_JSON:
			o->json = true;
			break;
		case O_HELP:
			help();
			exit(0);
		case '?':
			usage_error("unknown option");
			break;
		default:
			set_opt(o, c, optarg);
		}
	}
	if (optind != argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (peers)	/* after the loop: --udp changes how peers parse */
		parse_peers(o, peers);
	if (o->size < OPT_HDR_LEN)
		usage_error("--size must be at least %d", OPT_HDR_LEN);
	if (o->scatterings && (o->fanout < 1 || o->fanout > o->npeers))
		usage_error("--fanout %d needs 1..%d peers", o->fanout,
			    o->npeers);
	/* UDP corks MSG_MORE data into one datagram: no scatterings there */
	if (o->udp && (o->type != SOCK_DGRAM || o->unordered || o->use_more))
		usage_error("--udp takes no --type rdm, --unordered, --use-more");
}

/* ---- socket ------------------------------------------------------- */

static void set_int(int fd, int level, int name, int val, const char *what)
{
	if (setsockopt(fd, level, name, &val, sizeof(val)))
		die("setsockopt(%s): %s", what, strerror(errno));
}

/* As root, go past net.core.[rw]mem_max; otherwise take what is allowed. */
static void set_buf(int fd, int force_opt, int opt, int val)
{
	if (!setsockopt(fd, SOL_SOCKET, force_opt, &val, sizeof(val)))
		return;
	set_int(fd, SOL_SOCKET, opt, val, "SO_SNDBUF/SO_RCVBUF");
}

static void open_socket(struct traffic *t)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct ep me = { t->o.bind_addr, t->o.port };

	t->fd = socket(t->o.udp ? AF_INET : AF_ONEPIPE,
		       t->o.type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t->fd < 0)
		die("socket: %s", strerror(errno));
	if (t->o.sndbuf >= 0)
		set_buf(t->fd, SO_SNDBUFFORCE, SO_SNDBUF, t->o.sndbuf);
	if (t->o.rcvbuf >= 0)
		set_buf(t->fd, SO_RCVBUFFORCE, SO_RCVBUF, t->o.rcvbuf);
	if (t->o.unordered)
		set_int(t->fd, SOL_ONEPIPE, ONEPIPE_ORDERED, 0,
			"ONEPIPE_ORDERED");
	len = ep_to_sa(t->o.udp, me, &ss);
	if (bind(t->fd, (struct sockaddr *)&ss, len))
		die("bind: %s", strerror(errno));
	len = sizeof(ss);
	if (getsockname(t->fd, (struct sockaddr *)&ss, &len))
		die("getsockname: %s", strerror(errno));
	t->self = sa_to_ep(&ss);
}

/* ---- log and stats ------------------------------------------------ */

/* Where log lines go: after the S line that waits for its timestamp. */
static FILE *log_file(struct traffic *t)
{
	return t->pend.on ? t->pend.mem : t->log;
}

/* Start a line with @tag, or return false without a log. */
static bool log_start(struct traffic *t, struct log_line *l, char tag)
{
	if (!t->log)
		return false;
	line_start(l, tag);
	return true;
}

static void open_log(struct traffic *t)
{
	struct log_line l;
	char b[64];

	if (!t->o.log)
		return;
	t->log = log_open(t->o.log);
	ep_str(t, t->self, b, sizeof(b));
	*strchr(b, ':') = ' ';
	if (log_start(t, &l, 'P')) {
		line_str(&l, b);
		line_write(&l, log_file(t));
	}
	fflush(t->log);		/* tells a launcher this process is up */
}

/* ---- sending ------------------------------------------------------ */

static void tx_alloc(struct traffic *t)
{
	struct txs *tx = &t->tx;
	int i, k = t->o.fanout;

	tx->k = k;
	tx->dst = xcalloc(k, sizeof(*tx->dst));
	tx->buf = xcalloc(k, sizeof(*tx->buf));
	tx->iov = xcalloc(k, sizeof(*tx->iov));
	tx->name = xcalloc(k, sizeof(*tx->name));
	tx->msg = xcalloc(k, sizeof(*tx->msg));
	for (i = 0; i < k; i++) {
		tx->buf[i] = xcalloc(1, t->o.size);
		tx->iov[i] = (struct iovec){ tx->buf[i], t->o.size };
		tx->msg[i].msg_hdr.msg_iov = &tx->iov[i];
		tx->msg[i].msg_hdr.msg_iovlen = 1;
		tx->msg[i].msg_hdr.msg_name = &tx->name[i];
	}
}

static bool host_failed(const struct traffic *t, uint32_t host)
{
	int i;

	for (i = 0; i < t->nfailed; i++)
		if (t->failed[i] == host)
			return true;
	return false;
}

/* A process-failure notification, or EHOSTDOWN, named @host. */
static void note_failed(struct traffic *t, uint32_t host)
{
	if (!host_failed(t, host) && t->nfailed < MAX_FAILED)
		t->failed[t->nfailed++] = host;
}

/*
 * Pick up to --fanout distinct peers, none on a host notified failed: a
 * partial Fisher-Yates shuffle of the indices of those left.
 */
static void pick_dests(struct traffic *t)
{
	int n = 0, i;
	int *idx = xcalloc(t->o.npeers, sizeof(*idx));

	for (i = 0; i < t->o.npeers; i++)
		if (!host_failed(t, t->o.peers[i].host))
			idx[n++] = i;
	t->tx.k = n < t->o.fanout ? n : t->o.fanout;
	for (i = 0; i < t->tx.k; i++) {
		int j = i + rng_next(&t->rng) % (n - i);
		int tmp = idx[i];

		idx[i] = idx[j];
		idx[j] = tmp;
		t->tx.dst[i] = t->o.peers[idx[i]];
	}
	free(idx);
}

/* Encode messages [base, k) as scattering tx->scat_id, idx from 0. */
static void encode_from(struct traffic *t, int base)
{
	struct txs *tx = &t->tx;
	int i;

	for (i = base; i < tx->k; i++) {
		struct opt_payload p = {
			.src_host = t->self.host, .src_port = t->self.port,
			.scat_id = tx->scat_id, .idx = i - base,
			.len = t->o.size,
		};

		opt_encode(tx->buf[i], &p);
		tx->msg[i].msg_hdr.msg_namelen =
			ep_to_sa(t->o.udp, tx->dst[i], &tx->name[i]);
	}
}

static void build_scattering(struct traffic *t, uint64_t scat_id)
{
	pick_dests(t);
	if (!t->tx.k) {
		/* Every peer failed: nothing is left to send to. */
		t->down = true;
		t->last_progress = now_mono();
		return;
	}
	t->tx.scat_id = scat_id;
	t->tx.base = 0;
	t->tx.next = 0;
	encode_from(t, 0);
	t->tx.built = true;
}

/*
 * ONEPIPE_LAST_TS: 0, or ENOENT (nothing stamped yet), or EINPROGRESS
 * (the last scattering waits for credits, not stamped yet).
 */
static int read_last_ts(struct traffic *t, uint64_t *ts)
{
	socklen_t len = sizeof(*ts);

	if (!getsockopt(t->fd, SOL_ONEPIPE, ONEPIPE_LAST_TS, ts, &len))
		return 0;
	if (errno != ENOENT && errno != EINPROGRESS)
		die("getsockopt(ONEPIPE_LAST_TS): %s", strerror(errno));
	return errno;
}

/*
 * The S line's timestamp of the scattering just sent, from what
 * read_last_ts() gave (@err, @ts).  If ONEPIPE_LAST_TS did not move, the
 * kernel dropped the scattering before stamping it (the host went down
 * while it was being built): it is logged with timestamp 0, as its
 * notifications carry.
 */
static uint64_t sent_ts(const struct traffic *t, int err, uint64_t ts)
{
	return err || ts == t->prev_ts ? 0 : ts;
}

static uint64_t last_ts(struct traffic *t, uint64_t send_time)
{
	uint64_t ts = 0;
	int err;

	if (t->o.udp)
		return send_time;	/* no 1Pipe timestamp: the send time */
	err = read_last_ts(t, &ts);	/* not EINPROGRESS: not deferred */
	return sent_ts(t, err, ts);
}

/* "<dh>:<dp>,..." for messages [from, to) of the scattering being sent. */
static char *dest_list(struct traffic *t, int from, int to)
{
	size_t cap = (size_t)(to - from) * 24 + 1, n = 0;
	char *s = xcalloc(1, cap);
	int i;

	for (i = from; i < to; i++) {
		if (i > from)
			s[n++] = ',';
		n += host_port_put(s + n, cap - n, t->tx.dst[i].host,
				   t->tx.dst[i].port, t->o.udp);
	}
	return s;
}

static void log_s(struct traffic *t, uint64_t ts, uint64_t scat_id,
		  const char *dests)
{
	struct log_line l;

	if (log_start(t, &l, 'S')) {
		line_u64(&l, ts);
		line_u64(&l, scat_id);
		line_write_tail(&l, log_file(t), dests);
	}
	if (ts)		/* 0: not stamped, ONEPIPE_LAST_TS did not move */
		t->prev_ts = ts;
}

/* The S line of scattering @scat_id waits for its timestamp. */
static void pend_start(struct traffic *t, uint64_t scat_id, char *dests)
{
	struct pend *p = &t->pend;

	p->scat_id = scat_id;
	p->dests = dests;
	p->mem = NULL;
	if (t->log) {
		p->mem = open_memstream(&p->buf, &p->len);
		if (!p->mem)
			die("open_memstream: %s", strerror(errno));
	}
	p->on = true;
	t->want_out = true;
}

/*
 * The socket is writable: the pending scattering was stamped, and
 * ONEPIPE_LAST_TS is its timestamp -- unless it was dropped unstamped
 * (the host went down): see sent_ts().
 */
static void pend_resolve(struct traffic *t)
{
	struct pend *p = &t->pend;
	uint64_t ts = 0;
	int err;

	if (!p->on)
		return;
	err = read_last_ts(t, &ts);
	if (err == EINPROGRESS)
		return;		/* still waiting */
	p->on = false;
	log_s(t, sent_ts(t, err, ts), p->scat_id, p->dests);
	free(p->dests);
	if (p->mem) {
		if (fclose(p->mem))
			die("open_memstream: %s", strerror(errno));
		fwrite(p->buf, 1, p->len, t->log);
		free(p->buf);
	}
}

/* Messages [from, to) went out as one scattering: log it. */
static void log_sent(struct traffic *t, int from, int to, uint64_t send_time)
{
	char *dests = dest_list(t, from, to);

	t->st.scats++;
	t->st.sent += to - from;
	if (!t->st.first_send)
		t->st.first_send = send_time;
	t->st.last_send = send_time;
	if (t->defer_ts) {
		uint64_t ts;

		if (read_last_ts(t, &ts) == EINPROGRESS) {
			pend_start(t, t->tx.scat_id, dests);
			return;
		}
	}
	log_s(t, last_ts(t, send_time), t->tx.scat_id, dests);
	free(dests);
}

/*
 * The send failed with @err.  EAGAIN: wait for POLLOUT.  ENOBUFS: nothing
 * will signal the end of the shortage, so retry after a short pause.
 */
static void send_blocked(struct traffic *t, int err, const char *what)
{
	if (err == EAGAIN || err == EWOULDBLOCK) {
		t->st.eagain++;
		t->want_out = true;
		if (!t->blocked) {
			t->blocked = true;
			t->st.blocked++;
		}
	} else if (err == ENOBUFS) {
		t->st.enobufs++;
		t->next_send = now_mono() + NOBUFS_WAIT_NS;
	} else if (err == EHOSTDOWN) {
		/* A destination failed: the caller builds a new scattering. */
		t->last_progress = now_mono();
	} else if (err == ENETDOWN && t->o.until_down) {
		/* The host went down: what it had sent is notified. */
		t->down = true;
		t->last_progress = now_mono();
	} else if (err != EINTR) {
		die("%s: %s", what, strerror(err));
	}
}

static void stamp_from(struct traffic *t, int from, uint64_t now)
{
	int i;

	for (i = from; i < t->tx.k; i++)
		opt_set_send_time(t->tx.buf[i], now);
}

/*
 * The rest of the scattering, from message @from on, cannot share the
 * timestamp of what went out already: make it a scattering of its own.
 */
static void split_scattering(struct traffic *t, int from)
{
	t->st.splits++;
	t->tx.base = from;
	t->tx.next = from;
	t->tx.scat_id = t->next_scat_id++;
	encode_from(t, from);
}

/*
 * SOCK_RDM: message @i's host was declared failed (EHOSTDOWN): the
 * scattering was refused unstamped.  Send a new one, without that host.
 */
static void host_down(struct traffic *t, int i)
{
	note_failed(t, t->tx.dst[i].host);
	t->tx.built = false;
}

/* One sendmmsg() = one scattering.  Returns true when it is all sent. */
static bool send_mmsg(struct traffic *t)
{
	struct txs *tx = &t->tx;
	uint64_t now = now_rt();
	int n;

	stamp_from(t, tx->base, now);
	n = sendmmsg(t->fd, tx->msg + tx->base, tx->k - tx->base,
		     MSG_DONTWAIT);
	if (n <= 0) {
		int err = n < 0 ? errno : EAGAIN;

		send_blocked(t, err, "sendmmsg");
		if (err == EHOSTDOWN)
			host_down(t, tx->base);
		return false;
	}
	log_sent(t, tx->base, tx->base + n, now);
	if (tx->base + n == tx->k)
		return true;
	/* AF_ONEPIPE sends what it accepted before the error on its own. */
	split_scattering(t, tx->base + n);
	return false;
}

/*
 * One sendmsg() per message, MSG_MORE on all but the last.  An error
 * also ends the scattering being built, and what the socket accepted
 * before it goes out, so that part is logged as sent.
 */
static bool send_more(struct traffic *t)
{
	struct txs *tx = &t->tx;
	uint64_t now = now_rt();

	stamp_from(t, tx->next, now);
	while (tx->next < tx->k) {
		int flags = MSG_DONTWAIT | (tx->next + 1 < tx->k ? MSG_MORE : 0);

		if (sendmsg(t->fd, &tx->msg[tx->next].msg_hdr, flags) < 0) {
			int err = errno;

			send_blocked(t, err, "sendmsg");
			if (tx->next > tx->base) {
				log_sent(t, tx->base, tx->next, now);
				split_scattering(t, tx->next);
			}
			if (err == EHOSTDOWN)
				host_down(t, tx->next);
			return false;
		}
		tx->next++;
	}
	log_sent(t, tx->base, tx->k, now);
	return true;
}

static bool sending_done(const struct traffic *t)
{
	if (t->down ||
	    t->st.scats - t->st.splits >= (uint64_t)t->o.scatterings)
		return true;
	/* --duration-ms: no new scattering after it; one under way ends. */
	return t->o.duration_ns && t->started &&
	       !(t->tx.built && t->tx.next != t->tx.base) &&
	       now_mono() >= t->send_until;
}

static void try_send(struct traffic *t)
{
	bool done;

	if (!t->tx.built)
		build_scattering(t, t->next_scat_id++);
	if (!t->tx.built)
		return;
	done = t->o.use_more ? send_more(t) : send_mmsg(t);
	if (!done)
		return;
	t->tx.built = false;
	t->next_send = now_mono() + t->o.interval_ns;
	if (sending_done(t))
		t->last_progress = now_mono();
}

/* ---- receiving ---------------------------------------------------- */

static void rx_alloc(struct traffic *t)
{
	struct rxs *rx = &t->rx;
	int i;

	for (i = 0; i < RX_BATCH; i++) {
		rx->buf[i] = xcalloc(1, RX_BUFSZ);
		rx->iov[i] = (struct iovec){ rx->buf[i], RX_BUFSZ };
	}
	rx->ebuf = xcalloc(1, RX_BUFSZ);
}

static void rx_arm(struct rxs *rx)
{
	int i;

	for (i = 0; i < RX_BATCH; i++) {
		struct msghdr *m = &rx->msg[i].msg_hdr;

		m->msg_name = &rx->name[i];
		m->msg_namelen = sizeof(rx->name[i]);
		m->msg_iov = &rx->iov[i];
		m->msg_iovlen = 1;
		m->msg_control = rx->ctl[i];
		m->msg_controllen = CMSG_BUFSZ;
		m->msg_flags = 0;
	}
}

static bool cmsg_u64(struct msghdr *m, int type, uint64_t *v)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == SOL_ONEPIPE && c->cmsg_type == type &&
		    c->cmsg_len >= CMSG_LEN(sizeof(*v))) {
			memcpy(v, CMSG_DATA(c), sizeof(*v));
			return true;
		}
	}
	return false;
}

static void log_bad(struct traffic *t, struct ep src, const char *why)
{
	struct log_line l;

	if (log_start(t, &l, 'X')) {
		line_host_port(&l, src.host, src.port, t->o.udp);
		line_str(&l, why);
		line_write(&l, log_file(t));
	}
	t->st.bad++;
}

/* Verify and log one delivered message. */
static void rx_one(struct traffic *t, struct msghdr *m, size_t n,
		   uint64_t now)
{
	struct ep src = sa_to_ep(m->msg_name);
	struct opt_payload p;
	enum opt_verify v;
	uint64_t ts = 0;
	struct log_line l;

	if (m->msg_flags & MSG_TRUNC) {
		log_bad(t, src, "truncated");
		return;
	}
	if (!t->o.udp && !cmsg_u64(m, ONEPIPE_CMSG_TS, &ts)) {
		log_bad(t, src, "no-ts-cmsg");
		return;
	}
	v = opt_decode(m->msg_iov->iov_base, n, &p);
	/* src_host 0: a --udp sender bound to the any address */
	if (v == OPT_OK && (p.src_port != src.port ||
			    (p.src_host != src.host && p.src_host)))
		v = OPT_SRC_BAD;
	if (v != OPT_OK) {
		log_bad(t, src, opt_verify_str(v));
		return;
	}
	if (t->o.udp)
		ts = p.send_time_ns;
	if (log_start(t, &l, 'R')) {
		line_u64(&l, ts);
		line_host_port(&l, src.host, src.port, t->o.udp);
		line_u64(&l, p.scat_id);
		line_u64(&l, p.idx);
		line_u64(&l, n);
		line_i64(&l, (int64_t)(now - p.send_time_ns));
		line_write(&l, log_file(t));
	}
	lat_add(&t->st.lat, (int64_t)(now - p.send_time_ns));
	if (!t->st.first_recv)
		t->st.first_recv = now;
	t->st.last_recv = now;
	t->st.recvd++;
}

static void drain_rx(struct traffic *t)
{
	int total = 0, n, i;
	uint64_t now;

	while (total < RX_BUDGET) {
		rx_arm(&t->rx);
		n = recvmmsg(t->fd, t->rx.msg, RX_BATCH, MSG_DONTWAIT, NULL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == EINTR)
				return;
			die("recvmmsg: %s", strerror(errno));
		}
		now = now_rt();
		for (i = 0; i < n; i++)
			rx_one(t, &t->rx.msg[i].msg_hdr, t->rx.msg[i].msg_len,
			       now);
		if (n)
			t->last_progress = now_mono();
		total += n;
		if (n < RX_BATCH)
			return;
	}
}

static bool cmsg_recverr(struct msghdr *m, struct onepipe_recverr *e)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == SOL_ONEPIPE &&
		    c->cmsg_type == ONEPIPE_CMSG_RECVERR &&
		    c->cmsg_len >= CMSG_LEN(sizeof(*e))) {
			memcpy(e, CMSG_DATA(c), sizeof(*e));
			return true;
		}
	}
	return false;
}

/*
 * The controller declared @host failed at @ts (epoch @epoch): log it, send
 * to it no more, and acknowledge it (--failure-ack-ms) so that delivery
 * of what was stamped after it resumes.
 */
static void failure_notified(struct traffic *t, uint32_t host, uint64_t ts,
			     uint32_t epoch)
{
	struct log_line l;

	if (log_start(t, &l, 'F')) {
		line_u64(&l, ts);
		line_u64(&l, host);
		line_u64(&l, epoch);
		line_write(&l, log_file(t));
	}
	note_failed(t, host);
	t->last_progress = now_mono();
	if (t->o.fail_ack_ns < 0)
		return;
	if (!t->ack_epoch || (int32_t)(epoch - t->ack_epoch) > 0)
		t->ack_epoch = epoch;
	t->ack_at = now_mono() + (uint64_t)t->o.fail_ack_ns;
}

static void failure_ack_due(struct traffic *t, uint64_t mono)
{
	if (!t->ack_epoch || mono < t->ack_at)
		return;
	if (setsockopt(t->fd, SOL_ONEPIPE, ONEPIPE_FAILURE_ACK, &t->ack_epoch,
		       sizeof(t->ack_epoch)))
		die("setsockopt(ONEPIPE_FAILURE_ACK): %s", strerror(errno));
	t->ack_epoch = 0;
}

/* One send-failure notification; returns false when the queue is empty. */
static bool errq_one(struct traffic *t)
{
	struct onepipe_recverr e;
	struct sockaddr_storage ss;
	char ctl[CMSG_BUFSZ];
	struct iovec iov = { t->rx.ebuf, RX_BUFSZ };
	struct msghdr m = { .msg_name = &ss, .msg_namelen = sizeof(ss),
			    .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct opt_payload p;
	enum opt_verify v;
	struct ep dst;
	uint64_t ts = 0;
	struct log_line l;
	ssize_t n;

	n = recvmsg(t->fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return false;
		die("recvmsg(MSG_ERRQUEUE): %s", strerror(errno));
	}
	if (!cmsg_recverr(&m, &e)) {
		log_bad(t, t->self, "errqueue-no-recverr");
		return true;
	}
	dst = (struct ep){ e.offender.sop_host, e.offender.sop_port };
	if (!cmsg_u64(&m, ONEPIPE_CMSG_TS, &ts))
		log_bad(t, dst, "errqueue-no-ts-cmsg");
	if (e.ee.ee_code == ONEPIPE_EE_PROC_FAILED) {
		failure_notified(t, dst.host, ts, e.ee.ee_data);
		return true;
	}
	v = opt_decode(t->rx.ebuf, n, &p);
	if (v == OPT_SHORT || v == OPT_MAGIC_BAD) {
		log_bad(t, dst, "errqueue-payload");
		return true;
	}
	if (v != OPT_OK)	/* header still usable: log the E line too */
		log_bad(t, dst, "errqueue-payload");
	if (log_start(t, &l, 'E')) {
		line_u64(&l, ts);
		line_host_port(&l, dst.host, dst.port, t->o.udp);
		line_u64(&l, p.scat_id);
		line_u64(&l, p.idx);
		line_u64(&l, e.ee.ee_errno);
		line_u64(&l, e.ee.ee_code);
		line_write(&l, log_file(t));
	}
	t->st.failed++;
	t->last_progress = now_mono();
	return true;
}

/* Drain the error queue; @signalled: poll() said POLLERR. */
static void drain_errq(struct traffic *t, bool signalled)
{
	uint64_t got = 0;
	int err;
	socklen_t len = sizeof(err);

	if (t->o.udp)
		return;
	while (errq_one(t))
		got++;
	if (!signalled)		/* found by the periodic sweep */
		t->st.errq_swept += got;
	else if (!got && !getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err, &len) &&
		 err)
		fprintf(stderr, "op-traffic: socket error: %s\n",
			strerror(err));
	t->next_sweep = now_mono() + ERRQ_SWEEP_NS;
}

/* ---- main loop ---------------------------------------------------- */

/*
 * --drain: bytes of messages the socket still holds, neither settled (a
 * best-effort message ACKed, a reliable one committed) nor notified; 0
 * without --drain.
 */
static int unsettled(struct traffic *t)
{
	int outq = 0;

	if (!t->o.drain || t->o.udp || ioctl(t->fd, SIOCOUTQ, &outq))
		return 0;
	return outq;
}

static bool finished(struct traffic *t, uint64_t mono)
{
	if (!t->started || !sending_done(t) || t->pend.on)
		return false;
	if (unsettled(t))
		return false;	/* the notifications are still to come */
	if (t->o.pause_len_ns && !t->st.pause_to)
		return false;		/* a pause is always lived through */
	if (t->o.expect && t->st.recvd >= (uint64_t)t->o.expect)
		return true;
	return mono >= t->last_progress + t->o.linger_ns;
}

static int ms_until(uint64_t now, uint64_t then)
{
	uint64_t d;

	if (then <= now)
		return 0;
	d = (then - now + 999999) / 1000000;
	return d > 1000 ? 1000 : (int)d;
}

/* How long poll() may sleep before the next thing we must do. */
static int poll_timeout(struct traffic *t, uint64_t mono)
{
	uint64_t rt = now_rt(), due = t->next_sweep;
	int ms;

	if (!t->started && t->o.start_file)
		return START_FILE_POLL_MS;
	if (!t->started)
		return ms_until(rt, t->o.start_at_ns);
	/* waiting for POLLOUT: wake once when the send is due, to count it */
	if (!sending_done(t) && !t->blocked && t->next_send < due)
		due = t->next_send;
	if (sending_done(t) && t->last_progress + t->o.linger_ns < due) {
		due = t->last_progress + t->o.linger_ns;
		/* an ACK that settles the last message wakes nobody: look */
		if (due <= mono && unsettled(t))
			due = mono + DRAIN_POLL_NS;
	}
	if (t->o.pause_len_ns && !t->st.pause_to) {
		uint64_t edge = t->paused ? t->pause_end : t->pause_at;

		if (edge < due)
			due = edge;
	}
	if (t->ack_epoch && t->ack_at < due)
		due = t->ack_at;
	ms = ms_until(mono, due);
	return ms;
}

static void start(struct traffic *t)
{
	if (!start_time_known(&t->o.start_file, &t->o.start_at_ns))
		return;
	if (now_rt() < t->o.start_at_ns)
		return;
	t->started = true;
	t->last_progress = now_mono();
	t->next_send = t->last_progress + t->o.delay_ns;
	t->send_until = t->last_progress + t->o.duration_ns;
	t->pause_at = t->last_progress + t->o.pause_at_ns;
	t->pause_end = t->pause_at + t->o.pause_len_ns;
}

/*
 * --recv-pause-ms: stop and resume reading.  Both edges are taken in
 * order even if the loop wakes up late, so a pause is always logged.
 */
static void pause_update(struct traffic *t, uint64_t mono)
{
	if (!t->o.pause_len_ns || !t->started || t->st.pause_to)
		return;
	if (!t->paused && mono >= t->pause_at) {
		t->paused = true;
		t->st.pause_from = now_rt();
	}
	if (t->paused && mono >= t->pause_end) {
		t->paused = false;
		t->st.pause_to = now_rt();
		t->last_progress = mono;	/* linger from the resume */
	}
}

/* A send is due; send, or count the wait if the socket is not writable. */
static void send_due(struct traffic *t)
{
	if (!t->want_out) {
		try_send(t);
	} else if (!t->blocked) {
		t->blocked = true;
		t->st.blocked++;
	}
}

static void loop(struct traffic *t)
{
	uint64_t mono;

	t->next_sweep = now_mono() + ERRQ_SWEEP_NS;
	for (;;) {
		struct pollfd pfd = { .fd = t->fd, .events = POLLIN };

		mono = now_mono();
		if (!t->started)
			start(t);
		pause_update(t, mono);
		if (finished(t, mono))
			return;
		if (t->paused)	/* a pause only stops reading */
			pfd.events = 0;
		if (t->want_out)
			pfd.events |= POLLOUT;
		if (poll(&pfd, 1, poll_timeout(t, mono)) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (pfd.revents & POLLERR)
			drain_errq(t, true);
		if ((pfd.revents & POLLIN) && !t->paused)
			drain_rx(t);
		if (pfd.revents & POLLOUT) {
			pend_resolve(t);
			t->want_out = t->pend.on;
			t->blocked = t->blocked && t->want_out;
		}
		mono = now_mono();
		failure_ack_due(t, mono);
		if (mono >= t->next_sweep)
			drain_errq(t, false);
		if (t->started && !sending_done(t) && mono >= t->next_send)
			send_due(t);
	}
}

/* ---- summary ------------------------------------------------------ */

static const char *type_str(const struct traffic *t)
{
	if (t->o.udp)
		return "udp";
	return t->o.type == SOCK_RDM ? "rdm" : "dgram";
}

static void summary_json(const struct traffic *t, FILE *f)
{
	const struct stats *s = &t->st;
	char b[64];

	fprintf(f, "{\"self\":\"%s\",\"mode\":\"%s\",\"type\":\"%s\""
		",\"scatterings\":%" PRIu64
		",\"sent\":%" PRIu64 ",\"received\":%" PRIu64
		",\"failed\":%" PRIu64 ",\"bad\":%" PRIu64
		",\"splits\":%" PRIu64 ",\"errq_swept\":%" PRIu64
		",\"first_send_ns\":%" PRIu64 ",\"last_send_ns\":%" PRIu64
		",\"first_recv_ns\":%" PRIu64 ",\"last_recv_ns\":%" PRIu64
		",\"send_rate\":%.1f,\"recv_rate\":%.1f"
		",\"lat_p50_ns\":%" PRId64 ",\"lat_p99_ns\":%" PRId64
		",\"eagain\":%" PRIu64 ",\"enobufs\":%" PRIu64
		",\"send_blocked\":%" PRIu64
		",\"recv_pause_start_ns\":%" PRIu64
		",\"recv_pause_end_ns\":%" PRIu64
		",\"host_down\":%s}\n",
		ep_str(t, t->self, b, sizeof(b)),
		t->o.udp ? "udp" : t->o.unordered ? "unordered" : "ordered",
		type_str(t),
		s->scats, s->sent, s->recvd, s->failed, s->bad, s->splits,
		s->errq_swept, s->first_send, s->last_send,
		s->first_recv, s->last_recv,
		msg_rate(s->sent, s->first_send, s->last_send),
		msg_rate(s->recvd, s->first_recv, s->last_recv),
		lat_pct(&s->lat, 50), lat_pct(&s->lat, 99), s->eagain,
		s->enobufs, s->blocked,
		s->pause_from, s->pause_to, t->down ? "true" : "false");
}

static void summary(struct traffic *t)
{
	struct stats *s = &t->st;
	char b[64];

	lat_sort(&s->lat);
	if (t->o.summary) {
		FILE *f = fopen(t->o.summary, "w");

		if (!f)
			die("%s: %s", t->o.summary, strerror(errno));
		summary_json(t, f);
		if (fclose(f))
			die("%s: %s", t->o.summary, strerror(errno));
	}
	if (t->o.quiet)
		return;
	if (t->o.json)
		return summary_json(t, stdout);
	printf("op-traffic %s: sent %" PRIu64 " msgs in %" PRIu64
	       " scatterings (%.0f msg/s), received %" PRIu64
	       " (%.0f msg/s), failed %" PRIu64 ", bad %" PRIu64
	       ", latency p50 %.1f us p99 %.1f us, blocked %" PRIu64 "\n",
	       ep_str(t, t->self, b, sizeof(b)), s->sent, s->scats,
	       msg_rate(s->sent, s->first_send, s->last_send), s->recvd,
	       msg_rate(s->recvd, s->first_recv, s->last_recv), s->failed,
	       s->bad, lat_pct(&s->lat, 50) / 1e3, lat_pct(&s->lat, 99) / 1e3,
	       s->blocked);
}

int main(int argc, char **argv)
{
	static struct traffic t;

	tool_name = "op-traffic";
	parse_opts(&t.o, argc, argv);
	open_socket(&t);
	t.rng = t.o.seed ^ (((uint64_t)t.self.host << 16) | t.self.port);
	t.rng = t.rng * 0x9e3779b97f4a7c15ull;
	if (!t.rng)	/* xorshift never leaves 0 */
		t.rng = 1;
	t.defer_ts = !t.o.udp;
	open_log(&t);
	if (t.o.scatterings)
		tx_alloc(&t);
	rx_alloc(&t);
	loop(&t);
	/*
	 * A notification queued after the last sweep, before --drain saw
	 * SIOCOUTQ reach 0, is on the error queue by then (the module keeps
	 * a unit of the charge until it is): one more sweep logs it.
	 */
	drain_errq(&t, false);
	if (t.log && fclose(t.log))
		die("%s: %s", t.o.log, strerror(errno));
	close(t.fd);
	summary(&t);
	return 0;
}
