// SPDX-License-Identifier: GPL-2.0
/*
 * onepiped: the failure controller of the 1Pipe reliable service.
 *
 * This file is only the I/O shell around ctl_logic.c, which makes every
 * decision: it reads the topology, keeps the state in a ctl_store (a
 * local file, or etcd with leader election), accepts the agents',
 * switches' and CLI's connections on an AF_UNIX SOCK_SEQPACKET socket
 * (ctl_proto.h), turns each message, disconnection and timer expiry into
 * a ctl_logic event and then carries out the actions it queued, in
 * order:
 *
 *  SAVE  store ctl_encode() now.  If the store refuses, nothing that
 *        follows is sent: the rest of the queue is dropped, this
 *        instance steps down to standby and later reloads the last state
 *        that was saved (its own or its successor's), so no decision
 *        reaches a client without being durable first.
 *  SEND  to the connection of the named node, if there is one; a node
 *        that is not connected gets everything it is owed when it says
 *        HELLO, so the message is simply dropped.
 *  LOG   one line with a timestamp.
 *
 * RELAY (controller forwarding) is the one message that is not an event
 * of the procedure: ctl_relay() says where it goes and this file passes
 * the datagram on unchanged to that node's connection.  No SAVE, no
 * queueing for a node that is not connected, and a bounded share of a
 * connection's output queue (OPD_RELAY_OUTQ): the module resends what is
 * lost, and relays must never crowd out a FAIL.
 *
 * One thread, one epoll set: the listening socket, the connections, a
 * timerfd for ctl_logic's next deadline, a timerfd for the store (etcd:
 * campaign while standby, keepalive while active; every third of the
 * lease), a timerfd for connections that have not said who they are yet
 * and a signalfd.  Time is CLOCK_MONOTONIC nanoseconds.
 *
 * Connection slots are few (they fit the descriptor limit) and the
 * agents and switches need them, so nothing may hold one for nothing: a
 * connection must say HELLO or SHOW within OPD_HELLO_TIMEOUT_MS, a SHOW
 * connection (the CLI) is closed once its answer is out, a refused HELLO
 * closes the connection, and output queued to clients that do not read
 * is bounded per client and in total.
 *
 * A standby does not listen at all: a client of a controller pair is
 * given every instance's socket path and retries them every 200 ms, so
 * it talks to whichever instance is active.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl_logic.h"
#include "ctl_proto.h"
#include "ctl_store.h"

#define OPD_NAME		"onepiped"
#define OPD_DEFAULT_STATE	"/var/lib/onepipe/onepiped.state"
#define OPD_DEFAULT_PREFIX	"/onepipe"
#define OPD_DEFAULT_LEASE_S	5
#define OPD_MAX_ALLOW_UIDS	8
/* A connection is closed after this many malformed messages. */
#define OPD_MAX_BAD		8
/* Messages queued to a client that does not read; beyond, it is cut. */
#define OPD_MAX_OUTQ		4096
/*
 * Bytes queued to all clients together.  OPD_MAX_OUTQ alone would let
 * every connection slot hold 4 MB; the client that would go beyond this
 * is cut like a slow one (it re-syncs on HELLO).
 */
#define OPD_MAX_OUT_BYTES	(64ULL << 20)
/*
 * Relays are packets, resent by the module if lost: one is queued only
 * while its connection's queue holds fewer than OPD_RELAY_OUTQ messages
 * and all queues together less than OPD_RELAY_OUT_BYTES, else dropped
 * (relay_unsent).  So relays alone never bring a client near the limits
 * above, which cut it: the rest is left to the procedure's messages.
 */
#define OPD_RELAY_OUTQ		64
#define OPD_RELAY_OUT_BYTES	(OPD_MAX_OUT_BYTES / 2)
/*
 * Send buffer of a connection: relays are up to CTL_DGRAM_MAX bytes each,
 * and a burst of them should go out at once rather than wait in @outq.
 */
#define OPD_SNDBUF		(1 << 20)
/* A connection that says neither HELLO nor SHOW by then is closed. */
#define OPD_HELLO_TIMEOUT_MS	2000
/* At most one "descriptor limit" log line per this many ms. */
#define OPD_FD_LOG_MS		1000
/* Retry period of a file-store instance that failed to save. */
#define OPD_RETRY_MS		1000
#define OPD_HASH_BITS		10
#define OPD_MAX_EVENTS		64
#define NSEC_PER_MSEC		1000000ULL
#define NSEC_PER_SEC		1000000000ULL

/* What an epoll entry is: the first member of whatever it points to. */
enum opd_kind {
	OPD_W_LISTEN,
	OPD_W_CLIENT,
	OPD_W_LOGIC_TIMER,
	OPD_W_STORE_TIMER,
	OPD_W_HELLO_TIMER,
	OPD_W_SIGNAL,
};

/**
 * struct client - one accepted connection
 * @kind: OPD_W_CLIENT (epoll tag)
 * @fd: the connection, -1 once closed
 * @uid: its peer's uid (SO_PEERCRED)
 * @pid: its peer's pid (SO_PEERCRED), for the log
 * @accepted_at: when it was accepted (monotonic ns): it has
 *	OPD_HELLO_TIMEOUT_MS to say HELLO or SHOW
 * @node: the node name of its accepted HELLO, "" before (or a CLI)
 * @show_only: sent SHOW without a HELLO: closed once the answer is out
 * @bad: malformed messages received on it
 * @dead: closed during this epoll batch; freed at its end, because
 *	later events of the same batch may still point to it
 * @outq: messages the socket had no room for, oldest first
 * @out_head: index of the oldest in @outq
 * @out_len: how many are queued
 * @out_cap: @outq's size
 * @out_bytes: the bytes they hold
 * @next: all connections
 * @hnext: connections with the same name hash (named ones only)
 */
struct client {
	enum opd_kind kind;
	int fd;
	uid_t uid;
	pid_t pid;
	uint64_t accepted_at;
	char node[CTL_NAME_LEN];
	bool show_only;
	unsigned int bad;
	bool dead;
	struct outmsg *outq;
	size_t out_head, out_len, out_cap;
	size_t out_bytes;
	struct client *next;
	struct client *hnext;
};

/* A message queued for a client: a struct ctl_msg, or a longer RELAY. */
struct outmsg {
	size_t len;
	void *data;
};

struct watch {
	enum opd_kind kind;
};

/* The command line, as parsed (see usage()). */
struct opd_opts {
	const char *socket;
	const char *topology;
	const char *state;
	const char *etcd;
	const char *prefix;
	const char *id;
	unsigned int lease_s;
	uint64_t settle_ms;
	uint64_t done_timeout_ms;
	const char *log;
	int verbose;
	uid_t allow[OPD_MAX_ALLOW_UIDS];
	unsigned int nallow;
};

/**
 * struct opd_counters - the daemon's own counters (SHOW "daemon")
 * @accepted: connections accepted
 * @refused: connections closed at once: peer not an allowed uid
 * @over_limit: connections closed at once: too many connections
 * @fd_limit: connections closed at once: out of descriptors (EMFILE)
 * @silent: connections closed for saying neither HELLO nor SHOW in time
 * @hello_refused: connections closed because the logic refused their HELLO
 * @bad: malformed, forged or out-of-place messages
 * @cut_bad: connections closed for too many of them
 * @cut_slow: connections closed because their queue overflowed, or all
 *	queues together went over OPD_MAX_OUT_BYTES
 * @replaced: connections replaced by a newer one of the same node
 * @sent: messages sent (or queued) to clients
 * @unsent: SENDs to nodes not connected (they get it on HELLO)
 * @saves: state saves that succeeded
 * @save_errors: saves that failed (each one a step down to standby)
 * @activations: times this instance became active
 * @relays: RELAYs passed on (sent or queued) to their destination
 * @relay_unsent: RELAYs ctl_relay() let through that could not go on:
 *	the destination's connection gone or its queue full (OPD_RELAY_OUTQ)
 */
struct opd_counters {
	uint64_t accepted;
	uint64_t refused;
	uint64_t over_limit;
	uint64_t fd_limit;
	uint64_t silent;
	uint64_t hello_refused;
	uint64_t bad;
	uint64_t cut_bad;
	uint64_t cut_slow;
	uint64_t replaced;
	uint64_t sent;
	uint64_t unsent;
	uint64_t saves;
	uint64_t save_errors;
	uint64_t activations;
	uint64_t relays;
	uint64_t relay_unsent;
};

static struct opd {
	struct opd_opts o;
	FILE *logf;
	char *topo;		/* the topology file's text */
	size_t topo_len;
	struct ctl_config cfg;
	struct ctl_store *store;
	struct ctl_logic *logic;	/* NULL while standby */
	bool active;
	bool demote;		/* a save failed: step down after the batch */
	bool quit;
	int status;		/* exit status once @quit */
	int epfd;
	int lfd;		/* listening socket, -1 while standby */
	bool lpaused;		/* @lfd out of epoll: no descriptor to spare */
	int spare_fd;		/* /dev/null, given up to shed one connection */
	uint64_t fd_log_at;	/* last "descriptor limit" log line */
	uint64_t fd_shed;	/* connections shed since that line */
	struct watch lw, ltw, stw, htw, sigw;
	int logic_tfd;
	int store_tfd;
	int hello_tfd;		/* the next OPD_HELLO_TIMEOUT_MS deadline */
	uint64_t hello_at;	/* when @hello_tfd fires, 0 if disarmed */
	int sigfd;
	uint64_t store_period_ns;
	uint64_t last_keepalive;	/* last successful keepalive */
	struct client *clients;
	struct client *graveyard;
	struct client *byname[1U << OPD_HASH_BITS];
	unsigned int nclients;
	unsigned int max_clients;	/* fits the descriptor limit */
	uint64_t out_bytes;	/* queued to all clients together */
	char *buf;		/* encode / show buffer */
	size_t buf_cap;
	struct opd_counters n;
} opd = {
	.epfd = -1,
	.lfd = -1,
	.spare_fd = -1,
	.logic_tfd = -1,
	.store_tfd = -1,
	.hello_tfd = -1,
	.sigfd = -1,
};

/* ---- time and logging ------------------------------------------------ */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static const char *level_name(int level)
{
	switch (level) {
	case CTL_LOG_ERR:
		return "error";
	case CTL_LOG_WARNING:
		return "warning";
	case CTL_LOG_NOTICE:
		return "notice";
	case CTL_LOG_INFO:
		return "info";
	default:
		return "debug";
	}
}

/*
 * One log line: wall-clock time (to match other machines' logs), level,
 * text.  Debug lines only with -v.
 */
static void __attribute__((format(printf, 2, 3)))
logmsg(int level, const char *fmt, ...)
{
	FILE *f = opd.logf ? opd.logf : stderr;
	struct timespec ts;
	struct tm tm;
	char when[32];
	va_list ap;

	if (level >= CTL_LOG_DEBUG && !opd.o.verbose)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, "%s.%03ldZ %s[%d] %s: ", when, ts.tv_nsec / 1000000,
		OPD_NAME, (int)getpid(), level_name(level));
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fflush(f);
}

static int open_log(void)
{
	FILE *f;

	if (!opd.o.log)
		return 0;
	f = fopen(opd.o.log, "ae");
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", OPD_NAME, opd.o.log,
			strerror(errno));
		return -1;
	}
	if (opd.logf)
		fclose(opd.logf);
	opd.logf = f;
	return 0;
}

/* ---- timers ------------------------------------------------------------ */

/* Arm @fd to fire at monotonic time @when (ns); 0 disarms. */
static void timer_at(int fd, uint64_t when)
{
	struct itimerspec its = { 0 };

	if (when) {
		its.it_value.tv_sec = (time_t)(when / NSEC_PER_SEC);
		its.it_value.tv_nsec = (long)(when % NSEC_PER_SEC);
	}
	timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void timer_drain(int fd)
{
	uint64_t n;

	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		logmsg(CTL_LOG_WARNING, "timerfd read: %s", strerror(errno));
}

/* Follow ctl_logic's next deadline (it may move either way). */
static void rearm_logic_timer(void)
{
	uint64_t when = 0;

	if (opd.logic && ctl_next_deadline(opd.logic, &when) && !when)
		when = 1;	/* due already: 0 would disarm */
	timer_at(opd.logic_tfd, opd.logic ? when : 0);
}

/* ---- the client table -------------------------------------------------- */

static unsigned int name_hash(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h >> (32 - OPD_HASH_BITS);
}

static struct client *client_by_name(const char *node)
{
	struct client *c;

	for (c = opd.byname[name_hash(node)]; c; c = c->hnext)
		if (!strcmp(c->node, node))
			return c;
	return NULL;
}

static void unhash_client(struct client *c)
{
	struct client **pp;

	if (!c->node[0])
		return;
	for (pp = &opd.byname[name_hash(c->node)]; *pp; pp = &(*pp)->hnext)
		if (*pp == c) {
			*pp = c->hnext;
			break;
		}
	c->hnext = NULL;
}

static void listen_pause(bool pause);

/**
 * client_close() - close a connection
 * @c: the connection
 * @tell: tell ctl_logic that a connection of its node closed (not when
 *	the logic is being dropped with every connection)
 *
 * The memory is freed after the current epoll batch (see @dead).
 */
static void client_close(struct client *c, bool tell)
{
	struct client **pp;

	if (c->dead)
		return;
	unhash_client(c);
	if (tell && c->node[0] && opd.logic)
		ctl_disconnect(opd.logic, now_ns(), c->node);
	epoll_ctl(opd.epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->dead = true;
	while (c->out_len) {
		free(c->outq[c->out_head].data);
		c->out_head = (c->out_head + 1) % c->out_cap;
		c->out_len--;
	}
	opd.out_bytes -= c->out_bytes;
	c->out_bytes = 0;
	/* A descriptor is free again: new connections can be taken. */
	if (opd.lpaused)
		listen_pause(false);
	for (pp = &opd.clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	c->next = opd.graveyard;
	opd.graveyard = c;
	opd.nclients--;
}

static void bury_clients(void)
{
	struct client *c;

	while ((c = opd.graveyard)) {
		opd.graveyard = c->next;
		free(c->outq);
		free(c);
	}
}

static void client_want_out(struct client *c, bool on)
{
	struct epoll_event ev = {
		.events = EPOLLIN | (on ? EPOLLOUT : 0),
		.data.ptr = c,
	};

	epoll_ctl(opd.epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/**
 * client_enqueue() - queue a message the socket has no room for
 * @c: the connection
 * @data: the message
 * @len: its length
 * @relay: a RELAY: queued only within the relays' share (OPD_RELAY_OUTQ,
 *	OPD_RELAY_OUT_BYTES)
 *
 * Return: 0, -ENOBUFS over the limits, -ENOMEM.
 */
static int client_enqueue(struct client *c, const void *data, size_t len,
			  bool relay)
{
	struct outmsg *q;
	size_t i, cap;
	void *copy;

	if (relay ? c->out_len >= OPD_RELAY_OUTQ ||
		    opd.out_bytes + len > OPD_RELAY_OUT_BYTES :
		    c->out_len == OPD_MAX_OUTQ ||
		    opd.out_bytes + len > OPD_MAX_OUT_BYTES)
		return -ENOBUFS;
	if (c->out_len == c->out_cap) {
		cap = c->out_cap ? c->out_cap * 2 : 16;
		q = malloc(cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		/* Unwrap the ring while copying. */
		for (i = 0; i < c->out_len; i++)
			q[i] = c->outq[(c->out_head + i) % c->out_cap];
		free(c->outq);
		c->outq = q;
		c->out_cap = cap;
		c->out_head = 0;
	}
	copy = malloc(len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, len);
	q = &c->outq[(c->out_head + c->out_len) % c->out_cap];
	q->data = copy;
	q->len = len;
	c->out_len++;
	c->out_bytes += len;
	opd.out_bytes += len;
	return 0;
}

/* Send what is queued, as far as the socket takes it. */
static int client_flush(struct client *c)
{
	struct outmsg *q;
	ssize_t r;

	while (c->out_len) {
		q = &c->outq[c->out_head];
		r = send(c->fd, q->data, q->len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			return -errno;
		}
		free(q->data);
		c->out_head = (c->out_head + 1) % c->out_cap;
		c->out_len--;
		c->out_bytes -= q->len;
		opd.out_bytes -= q->len;
	}
	client_want_out(c, false);
	return 0;
}

/**
 * client_write() - send one datagram to a connection, in order
 * @c: the connection
 * @data: the datagram
 * @len: its length
 * @relay: a RELAY (see client_enqueue())
 *
 * What the socket has no room for is queued.  A client that does not
 * read for OPD_MAX_OUTQ messages is cut off rather than given an
 * incomplete stream: it reconnects and its HELLO brings it up to date.
 * A relay that finds no room is dropped instead: it is a packet that the
 * module resends, and its destination must not lose its connection (and
 * the procedure's messages on it) for it.
 *
 * Return: true if sent or queued; false if dropped or the connection
 * was closed.
 */
static bool client_write(struct client *c, const void *data, size_t len,
			 bool relay)
{
	ssize_t r;
	int err;

	if (c->dead)
		return false;
	if (!c->out_len) {
		r = send(c->fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r == (ssize_t)len)
			return true;
		/* No memory for a big datagram: a relay is only a copy. */
		if (relay && r < 0 && (errno == ENOBUFS || errno == ENOMEM))
			return false;
		if (r >= 0 || (errno != EAGAIN && errno != EINTR)) {
			logmsg(CTL_LOG_INFO, "%s: send: %s",
			       c->node[0] ? c->node : "client",
			       r < 0 ? strerror(errno) : "short");
			client_close(c, true);
			return false;
		}
		client_want_out(c, true);
	}
	err = client_enqueue(c, data, len, relay);
	if (!err)
		return true;
	if (relay)
		return false;
	logmsg(CTL_LOG_WARNING, "%s does not read its messages%s: "
	       "disconnected (it re-syncs on HELLO)",
	       c->node[0] ? c->node : "client",
	       c->out_len < OPD_MAX_OUTQ ?
	       " (all clients' queues are full)" : "");
	opd.n.cut_slow++;
	client_close(c, true);
	return false;
}

/* One message of the procedure (or SHOW's answer) to a connection. */
static void client_send(struct client *c, const struct ctl_msg *m)
{
	if (c->dead)
		return;
	opd.n.sent++;
	client_write(c, m, CTL_MSG_LEN, false);
}

static void close_all_clients(bool tell)
{
	while (opd.clients)
		client_close(opd.clients, tell);
}

/* ---- the listening socket -------------------------------------------- */

/* mkdir -p for @path's directory; new directories get @mode. */
static int make_dirs(const char *path, mode_t mode)
{
	char *dir = strdup(path), *p;
	int err = 0;

	if (!dir)
		return -ENOMEM;
	p = strrchr(dir, '/');
	if (!p || p == dir)
		goto out;
	*p = '\0';
	for (p = dir + 1; ; p++) {
		char c = *p;

		if (c && c != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, mode) < 0 && errno != EEXIST) {
			err = -errno;
			goto out;
		}
		*p = c;
		if (!c)
			break;
	}
out:
	free(dir);
	return err;
}

/*
 * A socket file left by an instance that died is removed; one that still
 * answers belongs to a live controller, and two controllers on one path
 * (or one state file) must not both act, so that is an error.
 */
static int remove_stale_socket(const char *path)
{
	struct stat st;
	int fd;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		logmsg(CTL_LOG_ERR, "%s exists and is not a socket", path);
		return -EEXIST;
	}
	fd = ctl_connect(path);
	if (fd >= 0) {
		close(fd);
		logmsg(CTL_LOG_ERR, "%s: another controller is listening "
		       "there", path);
		return -EADDRINUSE;
	}
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static int start_listening(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const char *path = opd.o.socket;
	struct epoll_event ev = { .events = EPOLLIN };
	mode_t old;
	int fd, err;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	err = make_dirs(path, 0755);
	if (err) {
		logmsg(CTL_LOG_ERR, "%s: cannot create its directory: %s",
		       path, strerror(-err));
		return err;
	}
	err = remove_stale_socket(path);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -errno;
	/* Born 0600: no window in which anybody else may connect. */
	old = umask(0177);
	err = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (err < 0 || listen(fd, 128) < 0) {
		err = -errno;
		logmsg(CTL_LOG_ERR, "%s: %s", path, strerror(-err));
		close(fd);
		return err;
	}
	chmod(path, 0600);
	ev.data.ptr = &opd.lw;
	if (epoll_ctl(opd.epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		err = -errno;
		close(fd);
		unlink(path);
		return err;
	}
	opd.lfd = fd;
	logmsg(CTL_LOG_INFO, "listening on %s", path);
	return 0;
}

static void stop_listening(void)
{
	opd.lpaused = false;
	if (opd.lfd < 0)
		return;
	epoll_ctl(opd.epfd, EPOLL_CTL_DEL, opd.lfd, NULL);
	close(opd.lfd);
	opd.lfd = -1;
	unlink(opd.o.socket);
}

/*
 * Stop watching the listening socket (or watch it again).  Only when not
 * even the spare descriptor is left (shed_connection()): a connection
 * that cannot be accepted keeps the socket readable, and the loop would
 * spin on it.  Any closed connection frees a descriptor and resumes.
 */
static void listen_pause(bool pause)
{
	struct epoll_event ev = {
		.events = pause ? 0 : EPOLLIN,
		.data.ptr = &opd.lw,
	};

	if (opd.lfd < 0) {
		opd.lpaused = false;
		return;
	}
	epoll_ctl(opd.epfd, EPOLL_CTL_MOD, opd.lfd, &ev);
	opd.lpaused = pause;
}

/**
 * shed_connection() - refuse a connection when out of descriptors
 * @err: accept4()'s errno, EMFILE or ENFILE
 *
 * The pending connection keeps the listening socket readable, and epoll
 * would report it again at once, for ever.  So the spare descriptor kept
 * for this is given up, the connection taken and closed (its client
 * retries later, as it does after any disconnection) and the spare taken
 * back.  Logged at most once per OPD_FD_LOG_MS: a storm of connections
 * must not become a storm of log lines.
 *
 * Return: whether a connection was shed (there may be more).
 */
static bool shed_connection(int err)
{
	uint64_t now = now_ns();
	bool shed = false;
	int fd;

	if (opd.spare_fd >= 0) {
		close(opd.spare_fd);
		opd.spare_fd = -1;
		fd = accept4(opd.lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			shed = true;
			opd.n.fd_limit++;
			opd.fd_shed++;
		}
	}
	if (opd.spare_fd < 0)
		opd.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (opd.spare_fd < 0)
		listen_pause(true);
	if (!opd.fd_log_at ||
	    now - opd.fd_log_at >= OPD_FD_LOG_MS * NSEC_PER_MSEC) {
		logmsg(CTL_LOG_WARNING, "out of descriptors (%s): %llu new "
		       "connection(s) closed%s", strerror(err),
		       (unsigned long long)opd.fd_shed, opd.lpaused ?
		       "; none taken until a connection closes" : "");
		opd.fd_log_at = now;
		opd.fd_shed = 0;
	}
	return shed && !opd.lpaused;
}

/* Arm the hello timer for @when, unless it fires earlier already. */
static void hello_timer_arm(uint64_t when)
{
	if (opd.hello_at && opd.hello_at <= when)
		return;
	opd.hello_at = when;
	timer_at(opd.hello_tfd, when);
}

/*
 * Close the connections that said neither HELLO nor SHOW within
 * OPD_HELLO_TIMEOUT_MS of being accepted: each holds a slot out of
 * max_clients that an agent or a switch may need.  The timer then
 * follows the next such deadline.
 */
static void on_hello_timer(void)
{
	uint64_t now = now_ns(), next = 0, limit;
	struct client *c, *n;

	timer_drain(opd.hello_tfd);
	opd.hello_at = 0;
	limit = OPD_HELLO_TIMEOUT_MS * NSEC_PER_MSEC;
	for (c = opd.clients; c; c = n) {
		n = c->next;
		if (c->node[0] || c->show_only)
			continue;
		if (now - c->accepted_at >= limit) {
			opd.n.silent++;
			logmsg(CTL_LOG_INFO, "a client (pid %ld) said neither "
			       "HELLO nor SHOW within %u ms: closed",
			       (long)c->pid, OPD_HELLO_TIMEOUT_MS);
			client_close(c, true);
		} else if (!next || c->accepted_at + limit < next) {
			next = c->accepted_at + limit;
		}
	}
	if (next)
		hello_timer_arm(next);
}

static bool uid_allowed(uid_t uid)
{
	unsigned int i;

	if (uid == 0)
		return true;
	for (i = 0; i < opd.o.nallow; i++)
		if (opd.o.allow[i] == uid)
			return true;
	return false;
}

/*
 * Room for bursts of relays (CTL_DGRAM_MAX each) in the socket itself.
 * FORCE passes net.core.wmem_max, which root may; else best effort.
 */
static void set_sndbuf(int fd)
{
	int size = OPD_SNDBUF;

	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
}

static void accept_clients(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct ucred cred;
	socklen_t clen;
	struct client *c;
	int fd, err;

	for (;;) {
		fd = accept4(opd.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			err = errno;
			if (err == EMFILE || err == ENFILE) {
				if (shed_connection(err))
					continue;
				return;
			}
			if (err != EAGAIN && err != EINTR &&
			    err != ECONNABORTED)
				logmsg(CTL_LOG_WARNING, "accept: %s",
				       strerror(err));
			return;
		}
		/*
		 * The socket file is 0600 already; the check here also
		 * covers a descriptor passed to an unprivileged process.
		 */
		if (opd.nclients >= opd.max_clients) {
			/*
			 * Accept and close rather than leave it pending: a
			 * pending connection keeps the listening socket
			 * readable, and the loop would spin.
			 */
			opd.n.over_limit++;
			logmsg(CTL_LOG_WARNING, "%u connections already: "
			       "closing a new one", opd.nclients);
			close(fd);
			continue;
		}
		memset(&cred, 0, sizeof(cred));
		cred.uid = (uid_t)-1;
		clen = sizeof(cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 ||
		    !uid_allowed(cred.uid)) {
			opd.n.refused++;
			logmsg(CTL_LOG_WARNING, "refused a client (uid %ld, "
			       "pid %ld)", (long)cred.uid, (long)cred.pid);
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		set_sndbuf(fd);
		c->kind = OPD_W_CLIENT;
		c->fd = fd;
		c->uid = cred.uid;
		c->pid = cred.pid;
		c->accepted_at = now_ns();
		ev.data.ptr = c;
		if (epoll_ctl(opd.epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			free(c);
			continue;
		}
		c->next = opd.clients;
		opd.clients = c;
		opd.nclients++;
		opd.n.accepted++;
		hello_timer_arm(c->accepted_at +
				OPD_HELLO_TIMEOUT_MS * NSEC_PER_MSEC);
		logmsg(CTL_LOG_DEBUG, "client connected (pid %ld)",
		       (long)cred.pid);
	}
}

/* ---- actions ----------------------------------------------------------- */

/* A buffer of at least @need bytes in opd.buf. */
static int grow_buf(size_t need)
{
	char *b;

	if (need <= opd.buf_cap)
		return 0;
	b = realloc(opd.buf, need);
	if (!b)
		return -ENOMEM;
	opd.buf = b;
	opd.buf_cap = need;
	return 0;
}

/* ctl_encode() into opd.buf; returns the length or a negative errno. */
static long encode_state(void)
{
	size_t n;

	for (;;) {
		n = ctl_encode(opd.logic, opd.buf, opd.buf_cap);
		if (n < opd.buf_cap)
			return (long)n;
		if (grow_buf(n + 1 > 2 * opd.buf_cap ? n + 1 :
			     2 * opd.buf_cap))
			return -ENOMEM;
	}
}

static int save_state(void)
{
	long n = encode_state();
	int err;

	if (n < 0)
		err = (int)n;
	else
		err = opd.store->ops->save(opd.store, opd.buf, (size_t)n);
	if (err) {
		opd.n.save_errors++;
		logmsg(CTL_LOG_ERR, "cannot save the state (%s store): %s; "
		       "stepping down, nothing more is sent",
		       opd.store->ops->name, strerror(-err));
		return err;
	}
	opd.n.saves++;
	return 0;
}

static void send_action(const struct ctl_action *a)
{
	struct ctl_msg m = a->msg;
	struct client *c;

	/* Clients check messages with ctl_msg_check(): a node is needed. */
	if (!m.node[0])
		ctl_set_name(m.node, OPD_NAME);
	c = client_by_name(a->to);
	if (!c) {
		opd.n.unsent++;
		logmsg(CTL_LOG_DEBUG, "%s to %s: not connected",
		       ctl_type_name(m.type), a->to);
		return;
	}
	logmsg(CTL_LOG_DEBUG, "-> %s %s epoch %u host %u peer %s ts %llu",
	       a->to, ctl_type_name(m.type), m.epoch, m.host, m.peer,
	       (unsigned long long)m.ts);
	client_send(c, &m);
}

/**
 * drain_actions() - carry out what ctl_logic queued, in order
 *
 * On a failed SAVE the remaining actions are discarded (they may be
 * SENDs about the decision that was not saved) and the instance steps
 * down once the current epoll batch is over; until then, no event
 * reaches the logic (opd.demote).
 */
static void drain_actions(void)
{
	struct ctl_action a;

	if (!opd.logic)
		return;
	while (ctl_pop_action(opd.logic, &a)) {
		if (opd.demote)
			continue;
		switch (a.kind) {
		case CTL_ACT_SAVE:
			if (save_state())
				opd.demote = true;
			break;
		case CTL_ACT_SEND:
			send_action(&a);
			break;
		case CTL_ACT_LOG:
			logmsg(a.level, "%s", a.text);
			break;
		}
	}
	rearm_logic_timer();
}

/* ---- SHOW -------------------------------------------------------------- */

/* @s as the inside of a JSON string (the socket path is the operator's). */
static const char *json_str(const char *s)
{
	static char out[2 * PATH_MAX];
	size_t n = 0;

	for (; *s && n + 7 < sizeof(out); s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\') {
			out[n++] = '\\';
			out[n++] = (char)ch;
		} else if (ch < 0x20) {
			n += (size_t)sprintf(out + n, "\\u%04x", ch);
		} else {
			out[n++] = (char)ch;
		}
	}
	out[n] = '\0';
	return out;
}

static size_t show_daemon(char *p, size_t size)
{
	struct client *c;
	unsigned int named = 0;
	int n;

	for (c = opd.clients; c; c = c->next)
		named += !!c->node[0];
	n = snprintf(p, size,
		     "{\"daemon\":{\"role\":\"%s\",\"store\":\"%s\","
		     "\"socket\":\"%s\",\"pid\":%d,\"clients\":%u,"
		     "\"nodes\":%u,\"accepted\":%llu,\"refused\":%llu,"
		     "\"over_limit\":%llu,\"fd_limit\":%llu,\"silent\":%llu,"
		     "\"hello_refused\":%llu,"
		     "\"bad\":%llu,\"cut_bad\":%llu,\"cut_slow\":%llu,"
		     "\"replaced\":%llu,\"sent\":%llu,\"unsent\":%llu,"
		     "\"saves\":%llu,\"save_errors\":%llu,"
		     "\"activations\":%llu,\"relays\":%llu,"
		     "\"relay_unsent\":%llu},\"controller\":",
		     opd.active ? "active" : "standby",
		     opd.store->ops->name, json_str(opd.o.socket),
		     (int)getpid(),
		     opd.nclients, named,
		     (unsigned long long)opd.n.accepted,
		     (unsigned long long)opd.n.refused,
		     (unsigned long long)opd.n.over_limit,
		     (unsigned long long)opd.n.fd_limit,
		     (unsigned long long)opd.n.silent,
		     (unsigned long long)opd.n.hello_refused,
		     (unsigned long long)opd.n.bad,
		     (unsigned long long)opd.n.cut_bad,
		     (unsigned long long)opd.n.cut_slow,
		     (unsigned long long)opd.n.replaced,
		     (unsigned long long)opd.n.sent,
		     (unsigned long long)opd.n.unsent,
		     (unsigned long long)opd.n.saves,
		     (unsigned long long)opd.n.save_errors,
		     (unsigned long long)opd.n.activations,
		     (unsigned long long)opd.n.relays,
		     (unsigned long long)opd.n.relay_unsent);
	return n < 0 ? 0 : (size_t)n;
}

/*
 * The answer to SHOW: {"daemon":{counters},"controller":<ctl_logic's
 * view>}, sent in CTL_TEXT_LEN chunks (@host = chunk length), the last
 * with CTL_F_LAST.
 */
static void answer_show(struct client *c, uint64_t now)
{
	size_t head, body, len, off, k;
	struct ctl_msg m;

	for (;;) {
		head = show_daemon(opd.buf, opd.buf_cap);
		body = 0;
		if (head < opd.buf_cap)
			body = ctl_show_json(opd.logic, now, opd.buf + head,
					     opd.buf_cap - head);
		len = head + body + 1;	/* and the closing brace */
		if (len < opd.buf_cap)
			break;
		if (grow_buf(len + 1 > 2 * opd.buf_cap ? len + 1 :
			     2 * opd.buf_cap)) {
			logmsg(CTL_LOG_ERR, "SHOW: out of memory");
			return;
		}
	}
	/* ctl_show_json() may end in a newline: keep the JSON one value. */
	while (body && (opd.buf[head + body - 1] == '\n' ||
			opd.buf[head + body - 1] == ' '))
		body--;
	opd.buf[head + body] = '}';
	len = head + body + 1;
	off = 0;
	do {
		k = len - off < CTL_TEXT_LEN ? len - off : CTL_TEXT_LEN;
		ctl_msg_init(&m, CTL_SHOW_REPLY, OPD_NAME);
		memcpy(m.text, opd.buf + off, k);
		m.host = (uint32_t)k;
		off += k;
		if (off == len)
			m.flags = CTL_F_LAST;
		client_send(c, &m);
	} while (off < len && !c->dead);
}

/* ---- messages from clients ------------------------------------------- */

static void count_bad(struct client *c, const char *why)
{
	opd.n.bad++;
	c->bad++;
	if (opd.logic)
		ctl_count_bad(opd.logic);
	logmsg(c->bad == 1 ? CTL_LOG_WARNING : CTL_LOG_DEBUG,
	       "bad message from %s: %s", c->node[0] ? c->node : "a client",
	       why);
	if (c->bad >= OPD_MAX_BAD) {
		logmsg(CTL_LOG_WARNING, "%s sent %u bad messages: "
		       "disconnected", c->node[0] ? c->node : "a client",
		       c->bad);
		opd.n.cut_bad++;
		client_close(c, true);
	}
}

/*
 * HELLO names the connection.  A newer connection of a node replaces
 * the older one (an agent that restarted, or reconnected before the old
 * connection's end was seen): only one connection per node receives.
 * From another process that is worth a warning: two agents (or
 * switches) configured with one node name would keep replacing each
 * other.  A refused HELLO closes the connection: the client would
 * otherwise go on reporting into the void, never told.
 */
static void on_hello(struct client *c, const struct ctl_msg *m,
		     uint64_t now)
{
	struct client *old;
	int err;

	if (c->node[0]) {
		/* The logic counts connections: once per connection. */
		if (strcmp(c->node, m->node))
			count_bad(c, "HELLO with another name");
		return;
	}
	err = ctl_hello(opd.logic, now, m->node, m->host);
	if (err) {
		/* Unknown node or wrong host id (the logic says which). */
		logmsg(CTL_LOG_WARNING, "HELLO from %s (host %u, pid %ld) "
		       "refused: %s; connection closed", m->node, m->host,
		       (long)c->pid, strerror(-err));
		opd.n.hello_refused++;
		client_close(c, true);
		return;
	}
	old = client_by_name(m->node);
	if (old) {
		if (old->pid != c->pid)
			logmsg(CTL_LOG_WARNING, "%s: a connection from pid %ld "
			       "replaces the one from pid %ld (two processes "
			       "with one node name?)", m->node, (long)c->pid,
			       (long)old->pid);
		else
			logmsg(CTL_LOG_INFO, "%s reconnected: its older "
			       "connection is closed", m->node);
		opd.n.replaced++;
		client_close(old, true);
	}
	c->show_only = false;
	memcpy(c->node, m->node, CTL_NAME_LEN);
	c->hnext = opd.byname[name_hash(c->node)];
	opd.byname[name_hash(c->node)] = c;
}

/**
 * on_relay() - controller forwarding: pass a RELAY on
 * @c: the connection it came on
 * @m: the message, followed by the packet (ctl_msg_check() passed)
 * @len: the datagram's length
 * @now: current time
 *
 * The packet's header must agree with the message (its dst_host is
 * @m->host) and its src_host goes to ctl_relay() with the connection's
 * node, which refuses forged ones; then the datagram goes on unchanged
 * to the destination's connection.  Nothing is saved and nothing is
 * kept for later.
 */
static void on_relay(struct client *c, const struct ctl_msg *m, long len,
		     uint64_t now)
{
	char to[CTL_NAME_LEN];
	struct client *d;

	if (!c->node[0]) {
		count_bad(c, "relay before HELLO");
		return;
	}
	if (strcmp(c->node, m->node)) {
		count_bad(c, "relay in another node's name");
		return;
	}
	if (ctl_pkt_host(m + 1, CTL_RELAY_DST_OFF) != m->host) {
		count_bad(c, "relay whose packet is for another host");
		return;
	}
	if (ctl_relay(opd.logic, now, c->node,
		      ctl_pkt_host(m + 1, CTL_RELAY_SRC_OFF), m->host, to)) {
		/* refused, counted; its log line is rate-limited */
		if (ctl_pending_actions(opd.logic))
			drain_actions();
		return;
	}
	d = client_by_name(to);
	if (d && client_write(d, m, (size_t)len, true)) {
		opd.n.relays++;
		return;
	}
	opd.n.relay_unsent++;
	logmsg(CTL_LOG_DEBUG, "relay from %s to %s: %s", c->node, to,
	       d ? "its queue is full" : "not connected");
}

static void on_message(struct client *c, const struct ctl_msg *m, long len)
{
	uint64_t now = now_ns();
	int err;

	if (ctl_msg_check(m, len)) {
		count_bad(c, "malformed");
		return;
	}
	logmsg(CTL_LOG_DEBUG, "<- %s %s epoch %u host %u peer %s ts %llu",
	       c->node[0] ? c->node : m->node, ctl_type_name(m->type),
	       m->epoch, m->host, m->peer, (unsigned long long)m->ts);
	switch (m->type) {
	case CTL_SHOW:
		answer_show(c, now);
		/*
		 * Without a HELLO this is the CLI: it asks once, and its
		 * slot is wanted once the answer is out.
		 */
		if (!c->node[0] && !c->dead) {
			c->show_only = true;
			if (!c->out_len)
				client_close(c, true);
		}
		return;
	case CTL_HELLO:
		on_hello(c, m, now);
		break;
	case CTL_RELAY:
		/* A packet, not an event: nothing else to carry out. */
		on_relay(c, m, len, now);
		return;
	case CTL_LINK_DOWN:
	case CTL_LINK_UP:
	case CTL_UNREACH:
	case CTL_DONE:
	case CTL_REJOINED:
		/*
		 * Reports speak for the connection's node only: a client
		 * cannot report a link, or answer, in another's name.
		 */
		if (!c->node[0]) {
			count_bad(c, "report before HELLO");
			return;
		}
		if (strcmp(c->node, m->node)) {
			count_bad(c, "report in another node's name");
			return;
		}
		err = ctl_handle_msg(opd.logic, now, m);
		if (err)
			logmsg(CTL_LOG_DEBUG, "%s from %s ignored: %s",
			       ctl_type_name(m->type), c->node,
			       strerror(-err));
		break;
	default:
		/* FAIL, STATE, RESUME, SHOW_REPLY go the other way. */
		count_bad(c, "message type the controller does not take");
		return;
	}
	drain_actions();
}

static void on_client(struct client *c, uint32_t events)
{
	/* One thread: one receive buffer, big enough for a RELAY. */
	static union {
		struct ctl_msg m;
		char b[CTL_DGRAM_MAX];
	} rx;
	ssize_t r;
	int i;

	if (events & EPOLLOUT) {
		if (client_flush(c) < 0) {
			client_close(c, true);
			return;
		}
		if (c->show_only && !c->out_len) {
			client_close(c, true);	/* its answer is out */
			return;
		}
	}
	/* A bounded number per wakeup, so one client cannot starve all. */
	for (i = 0; i < 64 && !c->dead && !opd.demote; i++) {
		r = recv(c->fd, &rx, sizeof(rx), MSG_DONTWAIT | MSG_TRUNC);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			client_close(c, true);
			return;
		}
		if (r == 0) {
			client_close(c, true);
			return;
		}
		/* ctl_msg_check() refuses it; it reads the struct, though */
		if (r < (ssize_t)CTL_MSG_LEN)
			memset(rx.b + r, 0, CTL_MSG_LEN - (size_t)r);
		on_message(c, &rx.m, (long)r);
	}
	if (!c->dead && (events & (EPOLLHUP | EPOLLERR)) && !(events & EPOLLIN))
		client_close(c, true);
}

/* ---- active and standby --------------------------------------------- */

static void arm_store_timer(uint64_t period_ns)
{
	struct itimerspec its = { 0 };

	opd.store_period_ns = period_ns;
	if (period_ns) {
		its.it_value.tv_sec = (time_t)(period_ns / NSEC_PER_SEC);
		its.it_value.tv_nsec = (long)(period_ns % NSEC_PER_SEC);
		its.it_interval = its.it_value;
	}
	timerfd_settime(opd.store_tfd, 0, &its, NULL);
}

/* A third of the lease: etcd's keepalive and campaign period. */
static uint64_t lease_third_ns(void)
{
	uint64_t lease = opd.store->lease_ms ? opd.store->lease_ms :
			 opd.o.lease_s * 1000ULL;

	return lease * NSEC_PER_MSEC / 3;
}

static struct ctl_logic *new_logic(void)
{
	char err[256] = "";
	struct ctl_logic *l;

	l = ctl_new(opd.topo, opd.topo_len, &opd.cfg, err, sizeof(err));
	if (!l)
		logmsg(CTL_LOG_ERR, "%s: %s", opd.o.topology ?
		       opd.o.topology : "topology", err[0] ? err :
		       "cannot build the controller state");
	return l;
}

/**
 * become_active() - take over after winning the election
 *
 * Builds a fresh ctl_logic from the topology and loads into it what the
 * store holds (the predecessor's state, or our own from before a
 * restart); an empty store gets the initial state saved at once.  Only
 * then does it listen: a client never talks to an instance that has not
 * loaded the state.
 *
 * Return: 0, -EAGAIN to try again at the next store tick, or another
 * negative errno for an error that retrying cannot fix.
 */
static int become_active(void)
{
	uint64_t now = now_ns();
	char err[256] = "";
	char *blob = NULL;
	size_t len = 0;
	int ret;

	ret = opd.store->ops->load(opd.store, &blob, &len);
	if (ret && ret != -ENOENT) {
		logmsg(CTL_LOG_ERR, "cannot load the state (%s store): %s",
		       opd.store->ops->name, strerror(-ret));
		return -EAGAIN;
	}
	opd.logic = new_logic();
	if (!opd.logic) {
		free(blob);
		return -EINVAL;
	}
	if (blob) {
		ret = ctl_decode(opd.logic, now, blob, len, err, sizeof(err));
		free(blob);
		if (ret) {
			logmsg(CTL_LOG_ERR, "the stored state does not load: "
			       "%s", err[0] ? err : strerror(-ret));
			ctl_free(opd.logic);
			opd.logic = NULL;
			return -EINVAL;
		}
	} else {
		ret = save_state();
		if (ret) {
			ctl_free(opd.logic);
			opd.logic = NULL;
			return -EAGAIN;
		}
		logmsg(CTL_LOG_NOTICE, "new state from %s", opd.o.topology);
	}
	ret = start_listening();
	if (ret) {
		ctl_free(opd.logic);
		opd.logic = NULL;
		/*
		 * Instances sharing one path: the deposed one still
		 * answers there until it notices; it will, so wait.  In
		 * file mode a live socket is another daemon on the same
		 * state: an error.
		 */
		if (ret == -EADDRINUSE && opd.o.etcd)
			return -EAGAIN;
		return ret;
	}
	opd.active = true;
	opd.n.activations++;
	opd.last_keepalive = now;
	drain_actions();
	return 0;
}

/**
 * step_down() - stop acting: become a standby
 *
 * Every connection is closed and the logic dropped without a word: what
 * this instance decided but could not save was never sent, and the next
 * active instance (maybe this one again) starts from the store.
 */
static void step_down(void)
{
	close_all_clients(false);
	stop_listening();
	if (opd.logic) {
		while (ctl_pending_actions(opd.logic)) {
			struct ctl_action a;

			ctl_pop_action(opd.logic, &a);
		}
		ctl_free(opd.logic);
		opd.logic = NULL;
	}
	timer_at(opd.logic_tfd, 0);
	opd.active = false;
	opd.demote = false;
	logmsg(CTL_LOG_WARNING, "now a standby");
	arm_store_timer(opd.o.etcd ? lease_third_ns() :
			OPD_RETRY_MS * NSEC_PER_MSEC);
}

/*
 * Standby: campaign, and take over when elected.  An error that cannot
 * be fixed by waiting ends the daemon.
 */
static void campaign(void)
{
	int ret = opd.store->ops->campaign(opd.store);

	if (ret < 0) {
		logmsg(CTL_LOG_WARNING, "campaign (%s store): %s",
		       opd.store->ops->name, strerror(-ret));
		return;
	}
	if (!ret) {
		logmsg(CTL_LOG_DEBUG, "standby: another instance is active");
		return;
	}
	if (opd.o.etcd)
		logmsg(CTL_LOG_NOTICE, "elected active (etcd store)");
	ret = become_active();
	if (ret == -EAGAIN)
		return;
	if (ret) {
		opd.quit = true;
		opd.status = 1;
		return;
	}
	if (opd.demote) {
		/* The state loaded, but saving what it led to failed. */
		step_down();
		return;
	}
	arm_store_timer(opd.o.etcd ? lease_third_ns() : 0);
}

/*
 * Active: renew the lease.  A refusal means it is gone (a successor may
 * act already); an unanswered renewal is retried until the lease must
 * have run out.  Either way the simplest safe move is to exit: systemd
 * restarts the daemon, and it comes back as a standby.
 */
static void keepalive(void)
{
	uint64_t now = now_ns();
	int ret = opd.store->ops->keepalive(opd.store);

	if (!ret) {
		opd.last_keepalive = now;
		return;
	}
	if (ret != -EPERM &&
	    now - opd.last_keepalive < opd.store->lease_ms * NSEC_PER_MSEC) {
		logmsg(CTL_LOG_WARNING, "lease keepalive: %s (retrying)",
		       strerror(-ret));
		return;
	}
	logmsg(CTL_LOG_ERR, "lost the leadership (%s): exiting, a restart "
	       "comes back as a standby", ret == -EPERM ?
	       "the lease is gone" : strerror(-ret));
	close_all_clients(false);
	stop_listening();
	exit(3);
}

static void on_store_timer(void)
{
	timer_drain(opd.store_tfd);
	if (opd.active)
		keepalive();
	else
		campaign();
}

static void on_logic_timer(void)
{
	timer_drain(opd.logic_tfd);
	if (!opd.logic)
		return;
	ctl_tick(opd.logic, now_ns());
	drain_actions();
}

static void on_signal(void)
{
	struct signalfd_siginfo si;

	while (read(opd.sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			/* logrotate: reopen --log */
			if (!open_log())
				logmsg(CTL_LOG_INFO, "log reopened");
			continue;
		}
		logmsg(CTL_LOG_NOTICE, "signal %u: exiting", si.ssi_signo);
		opd.quit = true;
	}
}

/* ---- command line ------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: onepiped --topology FILE [--socket PATH]\n"
		"         [--state FILE | --etcd ENDPOINTS [--etcd-prefix P]\n"
		"          [--id NAME] [--lease-s N]]\n"
		"         [--settle-ms N] [--done-timeout-ms N]\n"
		"         [--allow-uid UID] [--log FILE] [-f] [-v]\n"
		"  Defaults: socket " CTL_DEFAULT_SOCKET ", state file\n"
		"  " OPD_DEFAULT_STATE ", etcd prefix " OPD_DEFAULT_PREFIX
		", lease 5 s,\n"
		"  settle 500 ms, done timeout 10000 ms, log to stderr.\n"
		"  Clients must be root or --allow-uid (repeatable).\n"
		"  See onepiped(8).\n");
}

static const struct option opd_long[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "topology", required_argument, NULL, 't' },
	{ "state", required_argument, NULL, 'S' },
	{ "etcd", required_argument, NULL, 'e' },
	{ "etcd-prefix", required_argument, NULL, 'P' },
	{ "id", required_argument, NULL, 'i' },
	{ "lease-s", required_argument, NULL, 'L' },
	{ "settle-ms", required_argument, NULL, 'm' },
	{ "done-timeout-ms", required_argument, NULL, 'd' },
	{ "allow-uid", required_argument, NULL, 'u' },
	{ "log", required_argument, NULL, 'l' },
	{ "foreground", no_argument, NULL, 'f' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_u64(const char *s, uint64_t min, uint64_t max,
		     uint64_t *v)
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

/* One option: 0, -1 for a bad value, -2 for a usage error. */
static int parse_opt(int c, struct opd_opts *o)
{
	uint64_t v;

	switch (c) {
	case 's':
		o->socket = optarg;
		return 0;
	case 't':
		o->topology = optarg;
		return 0;
	case 'S':
		o->state = optarg;
		return 0;
	case 'e':
		o->etcd = optarg;
		return 0;
	case 'P':
		o->prefix = optarg;
		return 0;
	case 'i':
		{
			char tmp[CTL_NAME_LEN];

			if (ctl_set_name(tmp, optarg))
				return -1;
		}
		o->id = optarg;
		return 0;
	case 'L':
		if (parse_u64(optarg, 2, 3600, &v))
			return -1;
		o->lease_s = (unsigned int)v;
		return 0;
	case 'm':
		return parse_u64(optarg, 0, 3600000, &o->settle_ms);
	case 'd':
		return parse_u64(optarg, 1, 3600000, &o->done_timeout_ms);
	case 'u':
		if (o->nallow == OPD_MAX_ALLOW_UIDS ||
		    parse_u64(optarg, 0, UINT32_MAX - 1, &v))
			return -1;
		o->allow[o->nallow++] = (uid_t)v;
		return 0;
	case 'l':
		o->log = optarg;
		return 0;
	case 'f':
		return 0;	/* always in the foreground */
	case 'v':
		o->verbose++;
		return 0;
	case 'h':
		usage(stdout);
		exit(0);
	default:
		return -2;
	}
}

static int parse_args(int argc, char **argv)
{
	struct opd_opts *o = &opd.o;
	int c, idx = -1, err;

	o->socket = CTL_DEFAULT_SOCKET;
	o->prefix = OPD_DEFAULT_PREFIX;
	o->lease_s = OPD_DEFAULT_LEASE_S;
	o->settle_ms = CTL_DEFAULT_SETTLE_NS / NSEC_PER_MSEC;
	o->done_timeout_ms = CTL_DEFAULT_DONE_TIMEOUT_NS / NSEC_PER_MSEC;
	while ((c = getopt_long(argc, argv, "fvh", opd_long, &idx)) != -1) {
		err = parse_opt(c, o);
		if (err == -1) {
			fprintf(stderr, "%s: bad value for --%s: %s\n",
				OPD_NAME, idx >= 0 ? opd_long[idx].name : "?",
				optarg);
			return -1;
		}
		if (err)
			goto bad_usage;
		idx = -1;
	}
	if (optind != argc)
		goto bad_usage;
	/*
	 * The stored state names nodes but does not hold the graph: every
	 * instance reads the same topology file.
	 */
	if (!o->topology) {
		fprintf(stderr, "%s: --topology is required\n", OPD_NAME);
		goto bad_usage;
	}
	if (o->etcd && o->state) {
		fprintf(stderr, "%s: --state and --etcd exclude each other\n",
			OPD_NAME);
		return -1;
	}
	if (!o->state)
		o->state = OPD_DEFAULT_STATE;
	opd.cfg.settle_ns = o->settle_ms * NSEC_PER_MSEC;
	opd.cfg.done_timeout_ns = o->done_timeout_ms * NSEC_PER_MSEC;
	return 0;
bad_usage:
	usage(stderr);
	return -1;
}

static int read_topology(void)
{
	size_t cap = 4096, n = 0;
	char *buf, *nb;
	size_t r;
	FILE *f;

	if (!opd.o.topology)
		return 0;
	f = fopen(opd.o.topology, "re");
	if (!f) {
		logmsg(CTL_LOG_ERR, "%s: %s", opd.o.topology, strerror(errno));
		return -1;
	}
	buf = malloc(cap);
	while (buf) {
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (n + 1 < cap)
			break;
		cap *= 2;
		nb = realloc(buf, cap);
		if (!nb)
			free(buf);
		buf = nb;
	}
	if (!buf || ferror(f)) {
		logmsg(CTL_LOG_ERR, "%s: cannot read it", opd.o.topology);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	buf[n] = '\0';
	opd.topo = buf;
	opd.topo_len = n;
	return 0;
}

/*
 * The default id of an etcd instance, stored as the leader key's value
 * so that an operator can see who leads: host name and pid.
 */
static const char *default_id(void)
{
	static char id[CTL_NAME_LEN];
	char host[64] = "onepiped";
	size_t i;

	gethostname(host, sizeof(host) - 1);
	snprintf(id, sizeof(id), "%.20s-%d", host, (int)getpid());
	for (i = 0; id[i]; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
			    "WXYZ0123456789_.-", id[i]))
			id[i] = '_';
	return id;
}

/*
 * Every node of the topology may be connected (twice, briefly, while a
 * reconnection replaces the old connection) plus a few CLIs; raise the
 * descriptor limit as far as allowed and keep connections within it.
 */
static void set_max_clients(void)
{
	struct rlimit rl;
	rlim_t want = 2 * CTL_MAX_NODES + 256;

	opd.max_clients = 2 * CTL_MAX_NODES + 64;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < want)
		opd.max_clients = rl.rlim_cur > 64 ?
				  (unsigned int)rl.rlim_cur - 64 : 8;
}

static int setup(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct ctl_logic *check;
	sigset_t mask;
	int err;

	if (read_topology())
		return -1;
	/* A topology that does not parse is an error now, not at takeover. */
	if (opd.topo) {
		check = new_logic();
		if (!check)
			return -1;
		ctl_free(check);
	}
	/* The state is the controller's alone: a new directory is 0700. */
	err = opd.o.etcd ? 0 : make_dirs(opd.o.state, 0700);
	if (err) {
		logmsg(CTL_LOG_ERR, "%s: cannot create its directory: %s",
		       opd.o.state, strerror(-err));
		return -1;
	}
	if (opd.o.etcd)
		opd.store = ctl_store_etcd_open(opd.o.etcd, opd.o.prefix,
						opd.o.id ? opd.o.id :
						default_id(), opd.o.lease_s);
	else
		opd.store = ctl_store_file_open(opd.o.state);
	if (!opd.store) {
		logmsg(CTL_LOG_ERR, "cannot open the %s store (%s): %s",
		       opd.o.etcd ? "etcd" : "file",
		       opd.o.etcd ? opd.o.etcd : opd.o.state, strerror(errno));
		return -1;
	}
	if (grow_buf(64 * 1024))
		return -1;
	set_max_clients();
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	opd.epfd = epoll_create1(EPOLL_CLOEXEC);
	opd.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	opd.logic_tfd = timerfd_create(CLOCK_MONOTONIC,
				       TFD_NONBLOCK | TFD_CLOEXEC);
	opd.store_tfd = timerfd_create(CLOCK_MONOTONIC,
				       TFD_NONBLOCK | TFD_CLOEXEC);
	opd.hello_tfd = timerfd_create(CLOCK_MONOTONIC,
				       TFD_NONBLOCK | TFD_CLOEXEC);
	/* Given up to shed a connection when out of descriptors. */
	opd.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (opd.epfd < 0 || opd.sigfd < 0 || opd.logic_tfd < 0 ||
	    opd.store_tfd < 0 || opd.hello_tfd < 0 || opd.spare_fd < 0) {
		logmsg(CTL_LOG_ERR, "setup: %s", strerror(errno));
		return -1;
	}
	opd.lw.kind = OPD_W_LISTEN;
	opd.ltw.kind = OPD_W_LOGIC_TIMER;
	opd.stw.kind = OPD_W_STORE_TIMER;
	opd.htw.kind = OPD_W_HELLO_TIMER;
	opd.sigw.kind = OPD_W_SIGNAL;
	ev.data.ptr = &opd.sigw;
	epoll_ctl(opd.epfd, EPOLL_CTL_ADD, opd.sigfd, &ev);
	ev.data.ptr = &opd.ltw;
	epoll_ctl(opd.epfd, EPOLL_CTL_ADD, opd.logic_tfd, &ev);
	ev.data.ptr = &opd.stw;
	epoll_ctl(opd.epfd, EPOLL_CTL_ADD, opd.store_tfd, &ev);
	ev.data.ptr = &opd.htw;
	epoll_ctl(opd.epfd, EPOLL_CTL_ADD, opd.hello_tfd, &ev);
	return 0;
}

static void run(void)
{
	struct epoll_event evs[OPD_MAX_EVENTS];
	struct watch *w;
	int n, i;

	while (!opd.quit) {
		n = epoll_wait(opd.epfd, evs, OPD_MAX_EVENTS, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			logmsg(CTL_LOG_ERR, "epoll_wait: %s", strerror(errno));
			opd.status = 1;
			break;
		}
		for (i = 0; i < n && !opd.quit; i++) {
			w = evs[i].data.ptr;
			switch (w->kind) {
			case OPD_W_SIGNAL:
				on_signal();
				break;
			case OPD_W_STORE_TIMER:
				on_store_timer();
				break;
			case OPD_W_LOGIC_TIMER:
				if (!opd.demote)
					on_logic_timer();
				break;
			case OPD_W_HELLO_TIMER:
				on_hello_timer();
				break;
			case OPD_W_LISTEN:
				if (opd.lfd >= 0 && !opd.demote)
					accept_clients();
				break;
			case OPD_W_CLIENT:
				if (!((struct client *)w)->dead &&
				    !opd.demote)
					on_client((struct client *)w,
						  evs[i].events);
				break;
			}
		}
		if (opd.demote)
			step_down();
		bury_clients();
	}
}

int main(int argc, char **argv)
{
	if (parse_args(argc, argv) || open_log() || setup())
		return 1;
	logmsg(CTL_LOG_NOTICE, "starting: %s store%s%s, socket %s",
	       opd.store->ops->name, opd.o.etcd ? " " : "",
	       opd.o.etcd ? opd.o.etcd : "", opd.o.socket);
	campaign();
	if (!opd.active && !opd.quit && !opd.store_period_ns) {
		arm_store_timer(opd.o.etcd ? lease_third_ns() :
				OPD_RETRY_MS * NSEC_PER_MSEC);
		logmsg(CTL_LOG_NOTICE, "standby: trying again every %llu ms",
		       (unsigned long long)(opd.store_period_ns /
					    NSEC_PER_MSEC));
	}
	if (!opd.quit)
		run();
	close_all_clients(false);
	bury_clients();
	stop_listening();
	if (opd.logic)
		ctl_free(opd.logic);
	/* Resigns the lease: a standby takes over without waiting. */
	opd.store->ops->close(opd.store);
	free(opd.topo);
	free(opd.buf);
	logmsg(CTL_LOG_NOTICE, "stopped");
	if (opd.logf)
		fclose(opd.logf);
	return opd.status;
}
