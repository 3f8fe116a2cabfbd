// SPDX-License-Identifier: GPL-2.0
/*
 * op-cpg: the op-traffic workload over Corosync's CPG, for comparison.
 *
 * Every process joins one CPG group and broadcasts to it: each broadcast
 * is one cpg_mcast_joined(CPG_TYPE_AGREED) that every member, the sender
 * included, delivers in one total order.  Command line, log and JSON
 * summary follow tools/traffic/op-traffic's --udp mode, so that
 * tools/checker/op-check and the benchmark driver read its output
 * unchanged: a broadcast is logged as a scattering to every member (the
 * --peers list), a delivery with the receiver's position in that list as
 * idx, and the timestamp of S and R lines is the sender's CLOCK_REALTIME
 * send time.  One poll() loop, one thread: the log is in program order.
 *
 * Log lines (see tools/traffic/README.md):
 *   P <host> <port>
 *   S <ts> <scat_id> <dh>:<dp>[,<dh>:<dp>...]
 *   R <ts> <sh>:<sp> <scat_id> <idx> <len> <lat_ns>
 *   X <sh>:<sp> <reason>
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <corosync/corotypes.h>
#include <corosync/cpg.h>

#include "payload.h"
#include "stats.h"
#include "tool.h"

#define START_FILE_POLL_NS	10000000ull
#define TRY_AGAIN_WAIT_NS	200000ull	/* CPG flow control: no edge */
#define JOIN_RETRY_NS		100000000ull
#define MAX_WAIT_NS		NSEC		/* longest poll() */
/* A CPG message is at most 1 MB before libcpg fragments it: plenty. */
#define MAX_SIZE		(1u << 20)

/* A process identity: host id or IPv4 address, and a port. */
struct ep {
	uint32_t host;
	uint16_t port;
	bool dotted;		/* written as an IPv4 address */
};

/* A member of the group, and the CPG process its messages come from. */
struct peer {
	struct ep ep;
	char name[32];		/* "H:P" as the logs write it */
	bool bound;		/* nodeid, pid known */
	uint32_t nodeid;
	uint32_t pid;
};

struct opts {
	struct ep self;
	bool have_host, have_port;
	struct peer *peers;
	int npeers;
	const char *group;
	long scatterings;
	uint64_t duration_ns;
	uint64_t interval_ns;
	size_t size;
	uint64_t linger_ns;
	long expect;
	const char *log;
	uint64_t start_at_ns;
	const char *start_file;
	const char *summary;
	bool json;
	bool quiet;
};

struct stats {
	uint64_t scats, sent, recvd, bad, eagain, blocked;
	uint64_t first_send, last_send, first_recv, last_recv;	/* realtime */
	struct lat_samples lat;
};

struct cpgt {
	struct opts o;
	int me;			/* index of this process in o.peers */
	char self[32];
	char *dests;		/* the S lines' destination list */
	cpg_handle_t h;
	int fd;
	FILE *log;
	uint8_t *buf;
	struct stats st;
	size_t members;		/* of the group, as the last confchg said */
	bool complete;		/* every peer was a member: P line written */
	bool started;
	bool blocked;		/* CPG said try again; counted */
	uint64_t next_scat_id;
	uint64_t next_send;	/* monotonic */
	uint64_t send_until;	/* monotonic, 0: no --duration-ms */
	uint64_t last_progress;	/* monotonic */
	bool sending_over;	/* latched by sending_done() */
	uint64_t early;		/* deliveries before the group was complete */
};

/* ---- options ------------------------------------------------------ */

/* A host: a host id (decimal) or an IPv4 address, as op-check reads it. */
static bool parse_host(const char *s, struct ep *e)
{
	struct in_addr a;
	uint64_t h;

	if (inet_pton(AF_INET, s, &a) == 1) {
		e->host = ntohl(a.s_addr);
		e->dotted = true;
		return true;
	}
	if (!parse_u64(s, &h) || h > UINT32_MAX || strchr(s, 'x') ||
	    strchr(s, 'X'))
		return false;
	e->host = h;
	e->dotted = false;
	return true;
}

static const char *ep_str(struct ep e, char *b, size_t n)
{
	return host_port_str(e.host, e.port, e.dotted, b, n);
}

static bool parse_ep(const char *s, struct ep *e)
{
	char host[64];

	if (!split_host_port(s, host, sizeof(host), &e->port))
		return false;
	return parse_host(host, e);
}

static bool ep_eq(struct ep a, struct ep b)
{
	return a.host == b.host && a.port == b.port;
}

static void parse_peers(struct opts *o, const char *list)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int n = 1, i;
	const char *c;

	if (!copy)
		die("out of memory");
	for (c = list; *c; c++)
		n += *c == ',';
	o->peers = xcalloc(n, sizeof(*o->peers));
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct peer *p = &o->peers[o->npeers];

		if (!parse_ep(tok, &p->ep))
			usage_error("bad peer '%s'", tok);
		for (i = 0; i < o->npeers; i++)
			if (ep_eq(o->peers[i].ep, p->ep))
				usage_error("peer '%s' listed twice", tok);
		ep_str(p->ep, p->name, sizeof(p->name));
		o->npeers++;
	}
	free(copy);
}

static void help(void)
{
	puts(
"usage: op-cpg --host H --port P --peers H:P,... [options]\n"
"  --host H            this process's host in the logs: a host id or an\n"
"                      IPv4 address\n"
"  --port P            this process's port in the logs\n"
"  --peers H:P,...     every member of the group, this process included,\n"
"                      in one order shared by all (a receiver's idx is its\n"
"                      position here)\n"
"  --group NAME        CPG group (default opbench)\n"
"  --scatterings N     broadcasts to send (default 0: receive only)\n"
"  --duration-ms D     stop sending D ms after the start (0: no limit)\n"
"  --interval-us U     pause between broadcasts (default 0: as fast as\n"
"                      CPG accepts them)\n"
"  --size BYTES        message size, >= 36 (default 64)\n"
"  --linger-ms D       after sending, stop after D ms without a delivery\n"
"                      (default 1000)\n"
"  --expect N          stop once N messages were delivered (and all sent)\n"
"  --log FILE          event log\n"
"  --start-at-ns T     send nothing before CLOCK_REALTIME T\n"
"  --start-file F      wait for file F to hold T, then as --start-at-ns T\n"
"  --json              summary as one JSON object\n"
"  --summary FILE      also write the JSON summary to FILE\n"
"  --quiet             no summary on stdout\n"
"The P line is logged once the group has as many members as --peers.");
}

enum {
	O_HOST = 256, O_PORT, O_PEERS, O_GROUP, O_SCAT, O_DURATION,
	O_INTERVAL, O_SIZE, O_LINGER, O_EXPECT, O_LOG, O_START,
	O_START_FILE, O_JSON, O_SUMMARY, O_QUIET, O_HELP,
};

static const struct option longopts[] = {
	{ "host", required_argument, NULL, O_HOST },
	{ "port", required_argument, NULL, O_PORT },
	{ "peers", required_argument, NULL, O_PEERS },
	{ "group", required_argument, NULL, O_GROUP },
	{ "scatterings", required_argument, NULL, O_SCAT },
	{ "duration-ms", required_argument, NULL, O_DURATION },
	{ "interval-us", required_argument, NULL, O_INTERVAL },
	{ "size", required_argument, NULL, O_SIZE },
	{ "linger-ms", required_argument, NULL, O_LINGER },
	{ "expect", required_argument, NULL, O_EXPECT },
	{ "log", required_argument, NULL, O_LOG },
	{ "start-at-ns", required_argument, NULL, O_START },
	{ "start-file", required_argument, NULL, O_START_FILE },
	{ "json", no_argument, NULL, O_JSON },
	{ "summary", required_argument, NULL, O_SUMMARY },
	{ "quiet", no_argument, NULL, O_QUIET },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

static void set_opt(struct opts *o, int c, const char *a)
{
	switch (c) {
	case O_HOST:
		if (!parse_host(a, &o->self))
			usage_error("bad host '%s'", a);
		o->have_host = true;
		break;
	case O_PORT:
		o->self.port = num_arg("port", a, 65535);
		o->have_port = true;
		break;
	case O_GROUP:
		if (!*a || strlen(a) > CPG_MAX_NAME_LENGTH)
			usage_error("bad group '%s' (1..%d characters)", a,
				    CPG_MAX_NAME_LENGTH);
		o->group = a;
		break;
	case O_SCAT:
		o->scatterings = num_arg("scatterings", a, LONG_MAX);
		break;
	case O_DURATION:
		o->duration_ns = num_arg("duration-ms", a, UINT32_MAX) *
				 1000000;
		break;
	case O_INTERVAL:
		o->interval_ns = num_arg("interval-us", a, UINT32_MAX) * 1000;
		break;
	case O_SIZE:
		o->size = num_arg("size", a, MAX_SIZE);
		break;
	case O_LINGER:
		o->linger_ns = num_arg("linger-ms", a, UINT32_MAX) * 1000000;
		break;
	case O_EXPECT:
		o->expect = num_arg("expect", a, LONG_MAX);
		break;
	case O_START:
		o->start_at_ns = num_arg("start-at-ns", a, UINT64_MAX);
		break;
	default:
		usage_error("bad option");
	}
}

static void parse_opts(struct cpgt *t, int argc, char **argv)
{
	struct opts *o = &t->o;
	const char *peers = NULL;
	int c, i;

	*o = (struct opts){ .group = "opbench", .size = 64,
			    .linger_ns = 1000 * 1000000ull };
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
		case O_JSON:
			o->json = true;
			break;
		case O_QUIET:
			o->quiet = true;
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
	if (!o->have_host || !o->have_port || !peers)
		usage_error("--host, --port and --peers are needed");
	parse_peers(o, peers);
	if (o->size < OPT_HDR_LEN)
		usage_error("--size must be at least %d", OPT_HDR_LEN);
	t->me = -1;
	for (i = 0; i < o->npeers; i++)
		if (ep_eq(o->peers[i].ep, o->self))
			t->me = i;
	if (t->me < 0)
		usage_error("--peers must list this process (%s)",
			    ep_str(o->self, t->self, sizeof(t->self)));
	/* written as in --peers, so all logs spell a process alike */
	memcpy(t->self, o->peers[t->me].name, sizeof(t->self));
}

/* "<dh>:<dp>,..." of every member: the destinations of each broadcast. */
static char *dest_list(const struct opts *o)
{
	size_t cap = (size_t)o->npeers * 24 + 1, n = 0;
	char *s = xcalloc(1, cap);
	int i;

	for (i = 0; i < o->npeers; i++)
		n += snprintf(s + n, cap - n, "%s%s", i ? "," : "",
			      o->peers[i].name);
	return s;
}

/* ---- log and stats ------------------------------------------------ */

/* Start a line with @tag, or return false without a log. */
static bool log_start(struct cpgt *t, struct log_line *l, char tag)
{
	if (!t->log)
		return false;
	line_start(l, tag);
	return true;
}

/* Opened early (a bad path fails before joining); the P line comes later. */
static void open_log(struct cpgt *t)
{
	if (!t->o.log)
		return;
	t->log = log_open(t->o.log);
}

/* Every peer is in the group: tell a launcher this process is up. */
static void log_p(struct cpgt *t)
{
	char b[sizeof(t->self)];
	struct log_line l;

	memcpy(b, t->self, sizeof(b));
	*strrchr(b, ':') = ' ';
	if (log_start(t, &l, 'P')) {
		line_str(&l, b);
		line_write(&l, t->log);
	}
	if (t->log && fflush(t->log))
		die("%s: %s", t->o.log, strerror(errno));
}

/* ---- CPG callbacks ------------------------------------------------ */

static struct cpgt *cpgt_of(cpg_handle_t h)
{
	void *ctx = NULL;

	if (cpg_context_get(h, &ctx) != CS_OK || !ctx)
		die("cpg_context_get failed");
	return ctx;
}

static void log_bad(struct cpgt *t, const char *src, const char *why)
{
	struct log_line l;

	if (log_start(t, &l, 'X')) {
		line_str(&l, src);
		line_str(&l, why);
		line_write(&l, t->log);
	}
	t->st.bad++;
}

static struct peer *peer_of(struct cpgt *t, const struct opt_payload *p)
{
	struct ep e = { .host = p->src_host, .port = p->src_port };
	int i;

	for (i = 0; i < t->o.npeers; i++)
		if (ep_eq(t->o.peers[i].ep, e))
			return &t->o.peers[i];
	return NULL;
}

/*
 * The payload names a member of --peers, and the CPG process that sent it
 * (nodeid, pid) is the one that member's messages always came from.
 */
static bool source_ok(struct cpgt *t, struct peer *src, uint32_t nodeid,
		      uint32_t pid)
{
	int i;

	if (!src)
		return false;
	if (src->bound)
		return src->nodeid == nodeid && src->pid == pid;
	for (i = 0; i < t->o.npeers; i++) {
		struct peer *q = &t->o.peers[i];

		if (q->bound && q->nodeid == nodeid && q->pid == pid)
			return false;	/* that process is someone else */
	}
	src->bound = true;
	src->nodeid = nodeid;
	src->pid = pid;
	return true;
}

static void on_deliver(cpg_handle_t h, const struct cpg_name *group,
		       uint32_t nodeid, uint32_t pid, void *msg, size_t len)
{
	struct cpgt *t = cpgt_of(h);
	uint64_t now = now_rt();
	struct opt_payload p;
	enum opt_verify v;
	struct log_line l;
	struct peer *src;
	char b[64];

	(void)group;
	if (!t->complete) {
		/* nobody sends before the start, which needs every P line */
		t->early++;
		return;
	}
	t->last_progress = now_mono();
	v = opt_decode(msg, len, &p);
	if (v == OPT_SHORT || v == OPT_MAGIC_BAD) {
		/* no usable header: an unknown source */
		snprintf(b, sizeof(b), t->o.self.dotted ? "0.0.0.0:0" : "0:0");
		log_bad(t, b, opt_verify_str(v));
		return;
	}
	src = peer_of(t, &p);
	if (src)
		snprintf(b, sizeof(b), "%s", src->name);
	else
		ep_str((struct ep){ p.src_host, p.src_port, t->o.self.dotted },
		       b, sizeof(b));
	if (v != OPT_OK) {
		log_bad(t, b, opt_verify_str(v));
		return;
	}
	if (!source_ok(t, src, nodeid, pid)) {
		log_bad(t, b, opt_verify_str(OPT_SRC_BAD));
		return;
	}
	if (p.idx) {		/* a broadcast is one message, idx 0 */
		log_bad(t, b, "bad-idx");
		return;
	}
	if (log_start(t, &l, 'R')) {
		line_u64(&l, p.send_time_ns);
		line_str(&l, b);
		line_u64(&l, p.scat_id);
		line_i64(&l, t->me);
		line_u64(&l, len);
		line_i64(&l, (int64_t)(now - p.send_time_ns));
		line_write(&l, t->log);
	}
	lat_add(&t->st.lat, (int64_t)(now - p.send_time_ns));
	if (!t->st.first_recv)
		t->st.first_recv = now;
	t->st.last_recv = now;
	t->st.recvd++;
}

static void on_confchg(cpg_handle_t h, const struct cpg_name *group,
		       const struct cpg_address *members, size_t nmembers,
		       const struct cpg_address *left, size_t nleft,
		       const struct cpg_address *joined, size_t njoined)
{
	struct cpgt *t = cpgt_of(h);
	size_t i;

	(void)group;
	(void)members;
	(void)joined;
	(void)njoined;
	t->members = nmembers;
	if (!t->complete)
		return;
	/* A member that finished leaves; one whose corosync failed is news. */
	for (i = 0; i < nleft; i++)
		if (left[i].reason != CPG_REASON_LEAVE &&
		    left[i].reason != CPG_REASON_PROCDOWN)
			fprintf(stderr, "op-cpg %s: member nodeid %" PRIu32
				" pid %" PRIu32 " left the group (reason %"
				PRIu32 ")\n", t->self, left[i].nodeid,
				left[i].pid, left[i].reason);
}

/* ---- CPG ---------------------------------------------------------- */

static void cpg_die(const char *what, cs_error_t err)
	__attribute__((noreturn));

static void cpg_die(const char *what, cs_error_t err)
{
	die("%s: %s (%d)", what, cs_strerror(err), err);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { ns / NSEC, ns % NSEC };

	nanosleep(&ts, NULL);
}

static void cpg_open(struct cpgt *t)
{
	static cpg_callbacks_t cb = {
		.cpg_deliver_fn = on_deliver,
		.cpg_confchg_fn = on_confchg,
	};
	struct cpg_name name;
	cs_error_t err;

	err = cpg_initialize(&t->h, &cb);
	if (err == CS_ERR_LIBRARY)
		die("cpg_initialize: %s: no corosync runs in this network "
		    "namespace", cs_strerror(err));
	if (err != CS_OK)
		cpg_die("cpg_initialize", err);
	err = cpg_context_set(t->h, t);
	if (err != CS_OK)
		cpg_die("cpg_context_set", err);
	err = cpg_fd_get(t->h, &t->fd);
	if (err != CS_OK)
		cpg_die("cpg_fd_get", err);
	name.length = strlen(t->o.group);
	memcpy(name.value, t->o.group, name.length);
	/* TRY_AGAIN while corosync syncs a new membership */
	while ((err = cpg_join(t->h, &name)) == CS_ERR_TRY_AGAIN)
		sleep_ns(JOIN_RETRY_NS);
	if (err != CS_OK)
		cpg_die("cpg_join", err);
}

/* Run the callbacks of everything queued. */
static void dispatch(struct cpgt *t)
{
	cs_error_t err = cpg_dispatch(t->h, CS_DISPATCH_ALL);

	if (err == CS_ERR_LIBRARY)
		die("cpg_dispatch: %s: corosync went away", cs_strerror(err));
	if (err != CS_OK)
		cpg_die("cpg_dispatch", err);
}

/*
 * Wait for readable (or @ns to pass, UINT64_MAX: forever) and run the
 * callbacks.  A hangup: corosync went away.
 */
static void wait_dispatch(struct cpgt *t, uint64_t ns)
{
	struct pollfd pfd = { .fd = t->fd, .events = POLLIN };
	struct timespec ts = { ns / NSEC, ns % NSEC };

	if (ppoll(&pfd, 1, ns == UINT64_MAX ? NULL : &ts, NULL) < 0) {
		if (errno == EINTR)
			return;
		die("poll: %s", strerror(errno));
	}
	if (pfd.revents & POLLIN)
		dispatch(t);
	if (pfd.revents & (POLLHUP | POLLERR | POLLNVAL))
		die("lost the connection to corosync");
}

/* Until the group has every peer: then the P line says we are up. */
static void wait_members(struct cpgt *t)
{
	while (t->members < (size_t)t->o.npeers)
		wait_dispatch(t, UINT64_MAX);
	if (t->members > (size_t)t->o.npeers)
		fprintf(stderr, "op-cpg %s: group %s has %zu members, --peers "
			"lists %d\n", t->self, t->o.group, t->members,
			t->o.npeers);
	t->complete = true;
	log_p(t);
}

/* ---- sending ------------------------------------------------------ */

static bool sending_done(struct cpgt *t, uint64_t mono)
{
	if (t->sending_over)
		return true;
	if (t->st.scats < (uint64_t)t->o.scatterings &&
	    (!t->send_until || mono < t->send_until))
		return false;
	t->sending_over = true;
	t->last_progress = mono;	/* linger from the end of sending */
	return true;
}

/* One broadcast: sent, or CPG said try again (counted, retried later). */
static void try_send(struct cpgt *t)
{
	struct opt_payload p = {
		.src_host = t->o.self.host, .src_port = t->o.self.port,
		.scat_id = t->next_scat_id, .idx = 0, .len = t->o.size,
	};
	struct iovec iov = { t->buf, t->o.size };
	struct log_line l;
	cs_error_t err;
	uint64_t now;

	now = now_rt();
	p.send_time_ns = now;
	opt_encode(t->buf, &p);
	err = cpg_mcast_joined(t->h, CPG_TYPE_AGREED, &iov, 1);
	if (err == CS_ERR_TRY_AGAIN) {
		/*
		 * Flow control (corosync's queue to totem, or the IPC ring,
		 * is full).  Nothing signals its end: dispatch what came
		 * and retry shortly.
		 */
		t->st.eagain++;
		if (!t->blocked) {
			t->blocked = true;
			t->st.blocked++;
		}
		t->next_send = now_mono() + TRY_AGAIN_WAIT_NS;
		return;
	}
	if (err != CS_OK)
		cpg_die("cpg_mcast_joined", err);
	t->blocked = false;
	if (log_start(t, &l, 'S')) {
		line_u64(&l, now);
		line_u64(&l, t->next_scat_id);
		line_write_tail(&l, t->log, t->dests);
	}
	t->next_scat_id++;
	t->st.scats++;
	t->st.sent += t->o.npeers;
	if (!t->st.first_send)
		t->st.first_send = now;
	t->st.last_send = now;
	t->next_send = now_mono() + t->o.interval_ns;
}

/* ---- main loop ---------------------------------------------------- */

static void start(struct cpgt *t)
{
	uint64_t mono;

	if (!start_time_known(&t->o.start_file, &t->o.start_at_ns))
		return;
	if (now_rt() < t->o.start_at_ns)
		return;
	mono = now_mono();
	t->started = true;
	t->last_progress = mono;
	t->next_send = mono;
	if (t->o.duration_ns)
		t->send_until = mono + t->o.duration_ns;
}

static bool finished(struct cpgt *t, uint64_t mono)
{
	if (!t->started || !sending_done(t, mono))
		return false;
	if (t->o.expect && t->st.recvd >= (uint64_t)t->o.expect)
		return true;
	return mono >= t->last_progress + t->o.linger_ns;
}

/* How long to wait for a delivery before the next thing to do. */
static uint64_t wait_ns(struct cpgt *t, uint64_t mono)
{
	uint64_t due;

	if (!t->started && t->o.start_file)
		return START_FILE_POLL_NS;
	if (!t->started) {
		uint64_t rt = now_rt();

		due = t->o.start_at_ns > rt ? t->o.start_at_ns - rt : 0;
		return due < MAX_WAIT_NS ? due : MAX_WAIT_NS;
	}
	if (!sending_done(t, mono)) {
		due = t->next_send;
		if (t->send_until && t->send_until < due)
			due = t->send_until;
	} else {
		due = t->last_progress + t->o.linger_ns;
	}
	if (due <= mono)
		return 0;
	return due - mono < MAX_WAIT_NS ? due - mono : MAX_WAIT_NS;
}

static void loop(struct cpgt *t)
{
	uint64_t mono;

	for (;;) {
		mono = now_mono();
		if (!t->started)
			start(t);
		if (finished(t, mono))
			return;
		wait_dispatch(t, wait_ns(t, mono));
		mono = now_mono();
		if (t->started && !sending_done(t, mono) &&
		    mono >= t->next_send)
			try_send(t);
	}
}

/* ---- summary ------------------------------------------------------ */

/* op-traffic's keys; what CPG has no counterpart for is 0 or false. */
static void summary_json(const struct cpgt *t, FILE *f)
{
	const struct stats *s = &t->st;

	fprintf(f, "{\"self\":\"%s\",\"mode\":\"corosync\",\"type\":\"cpg\""
		",\"scatterings\":%" PRIu64
		",\"sent\":%" PRIu64 ",\"received\":%" PRIu64
		",\"failed\":0,\"bad\":%" PRIu64
		",\"splits\":0,\"errq_swept\":0"
		",\"first_send_ns\":%" PRIu64 ",\"last_send_ns\":%" PRIu64
		",\"first_recv_ns\":%" PRIu64 ",\"last_recv_ns\":%" PRIu64
		",\"send_rate\":%.1f,\"recv_rate\":%.1f"
		",\"lat_p50_ns\":%" PRId64 ",\"lat_p99_ns\":%" PRId64
		",\"eagain\":%" PRIu64 ",\"enobufs\":0"
		",\"send_blocked\":%" PRIu64
		",\"recv_pause_start_ns\":0,\"recv_pause_end_ns\":0"
		",\"host_down\":false}\n",
		t->self, s->scats, s->sent, s->recvd, s->bad,
		s->first_send, s->last_send, s->first_recv, s->last_recv,
		msg_rate(s->sent, s->first_send, s->last_send),
		msg_rate(s->recvd, s->first_recv, s->last_recv),
		lat_pct(&s->lat, 50), lat_pct(&s->lat, 99), s->eagain,
		s->blocked);
}

static void summary(struct cpgt *t)
{
	struct stats *s = &t->st;

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
	if (t->o.json) {
		summary_json(t, stdout);
		return;
	}
	printf("op-cpg %s: sent %" PRIu64 " msgs in %" PRIu64
	       " broadcasts (%.0f msg/s), received %" PRIu64
	       " (%.0f msg/s), bad %" PRIu64
	       ", latency p50 %.1f us p99 %.1f us, blocked %" PRIu64 "\n",
	       t->self, s->sent, s->scats,
	       msg_rate(s->sent, s->first_send, s->last_send), s->recvd,
	       msg_rate(s->recvd, s->first_recv, s->last_recv), s->bad,
	       lat_pct(&s->lat, 50) / 1e3, lat_pct(&s->lat, 99) / 1e3,
	       s->blocked);
}

int main(int argc, char **argv)
{
	static struct cpgt t;
	cs_error_t err;

	tool_name = "op-cpg";
	parse_opts(&t, argc, argv);
	t.dests = dest_list(&t.o);
	t.buf = xcalloc(1, t.o.size);
	open_log(&t);
	cpg_open(&t);
	wait_members(&t);
	loop(&t);
	if (t.early)
		fprintf(stderr, "op-cpg %s: %" PRIu64 " deliveries before the "
			"group was complete, not logged\n", t.self, t.early);
	/* A flush that failed before the last one leaves only ferror(). */
	if (t.log) {
		bool bad = ferror(t.log);

		if (fclose(t.log) || bad)
			die("%s: write error", t.o.log);
	}
	/* The run is measured: a failing goodbye is not worth losing it. */
	err = cpg_finalize(t.h);
	if (err != CS_OK)
		fprintf(stderr, "op-cpg %s: cpg_finalize: error %d\n", t.self,
			err);
	summary(&t);
	return 0;
}
