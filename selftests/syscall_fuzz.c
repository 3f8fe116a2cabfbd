// SPDX-License-Identifier: GPL-2.0
/*
 * syscall_fuzz: a randomized, multi-threaded syscall exerciser for
 * AF_ONEPIPE.
 *
 * T threads share a table of AF_ONEPIPE sockets (SOCK_DGRAM and SOCK_RDM)
 * and run random calls on them for a bounded time: socket, bind, connect,
 * sendto/sendmsg/sendmmsg, recvfrom/recvmsg/recvmmsg, set/getsockopt,
 * ioctl, poll, epoll, shutdown, fcntl, close of sockets other threads are
 * using, and generic netlink requests of the "onepipe" family (dumps,
 * HOST_SET with valid and invalid attributes, HOST_DOWN, RELAY of
 * mutated 1Pipe packets).  Run in a
 * configured host (syscall_fuzz.sh: h1 of a one-host fabric), the sends
 * reach the transport: sockets bind a few well-known ports and most
 * messages go to those ports of this host, so data is delivered, errors
 * are queued, reliable windows fill and scatterings wait.
 *
 * What it reports (stdout):
 *   - "FINDING <kind>: ..." for results the API forbids: an errno that
 *     cannot happen with the arguments given (EFAULT with good pointers,
 *     EBADF on a socket held open), a call that succeeds with arguments
 *     the API rejects, a malformed error-queue entry, a payload that came
 *     back different from what was sent, a malformed netlink reply;
 *   - "HANG ..." when a thread spends more than --hang-secs in one call
 *     (every socket has short SO_SNDTIMEO/SO_RCVTIMEO and every wait is
 *     bounded, so nothing legitimate blocks that long), with the kernel
 *     stack of every thread;
 *   - per call: how often it ran and its errno histogram; last, the line
 *     "syscall_fuzz: execs N secs S rate R/s findings F hangs H".
 *
 * With --make-it-fail the worker threads (only they: not the setup, not
 * the watchdog) set their /proc/thread-self/make-it-fail, so that fault
 * injection with its task filter on (failslab, fail_page_alloc; see
 * fault_inject.sh) fails the kernel's allocations in their calls.  The
 * verdicts stay the same: an allocation failure may only surface as the
 * ENOMEM/ENOBUFS the API documents, never as a finding.
 *
 * --own-host-only sends to this host only, never to the absent hosts
 * 99, 1000 and 4242: a reliable message to one holds this host's commit
 * barrier, and so every reliable delivery in the fabric, until its
 * receiver is given up (seconds), which other traffic sharing the host
 * may not be able to wait for.
 *
 * --no-relay leaves out ONEPIPE_CMD_RELAY: a relayed packet counts as the
 * controller's, and a forged ACK or recall "from" a host that carries
 * other traffic rewrites what this host knows of it (a window of 1, a
 * message acknowledged that never arrived), which that traffic's checks
 * cannot tell from a defect.
 *
 * Exit status: 0 clean, 1 findings, 2 usage or setup error, 3 a hang.
 *
 * The seed is printed; a run with the same seed and --threads 1 repeats
 * the same calls (with more threads the interleaving differs).
 *
 * Findings are only judged on a socket that was held open (a per-slot
 * read lock) for the whole call; the "racy close" operation closes a
 * socket without that lock, and calls that overlapped it are not judged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <linux/errqueue.h>
#include <linux/filter.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <linux/onepipe.h>

#define MAX_THREADS	64
#define MAX_SLOTS	256
#define NPORTS		8	/* well-known ports: --port-base .. +7 */
#define MAX_VLEN	8
#define BUF_LEN		70000	/* above ONEPIPE_MAX_MSG on purpose */
#define NERR		134	/* errno values 1..133; 0 is success */
#define PAYLOAD_MAGIC	0x5a465a4fU
#define PAYLOAD_HDR	16	/* magic, length, seed */

/* ------------------------------------------------------------ options */

static unsigned int opt_secs = 30;
static unsigned int opt_threads = 4;
static unsigned int opt_slots = 24;
static unsigned int opt_hang_secs = 30;
static unsigned int opt_port_base = 7000;
static unsigned long long opt_seed;
static bool opt_no_host_set;
static bool opt_no_relay;
static bool opt_verbose;
static bool opt_make_it_fail;
static bool opt_own_host_only;
/* The host's valid configuration (--host-cfg ID,LOCAL,UPLINK). */
static bool cfg_known;
static uint32_t cfg_id = 1;
static uint32_t cfg_local, cfg_uplink;	/* network order */

/* ---------------------------------------------------------- the calls */

enum op {
	OP_SOCKET, OP_BIND, OP_CONNECT, OP_SENDTO, OP_SENDMSG, OP_SENDMMSG,
	OP_RECVFROM, OP_RECVMSG, OP_RECVMMSG, OP_SETSOCKOPT, OP_GETSOCKOPT,
	OP_IOCTL, OP_POLL, OP_EPOLL_CTL, OP_EPOLL_WAIT, OP_SHUTDOWN,
	OP_CLOSE, OP_FCNTL, OP_GETNAME, OP_NL_HOST_GET, OP_NL_DUMP,
	OP_NL_HOST_SET, OP_NL_HOST_DOWN, OP_NL_RELAY, OP_NL_BAD, NOPS
};

static const char *const op_name[NOPS] = {
	"socket", "bind", "connect", "sendto", "sendmsg", "sendmmsg",
	"recvfrom", "recvmsg", "recvmmsg", "setsockopt", "getsockopt",
	"ioctl", "poll", "epoll_ctl", "epoll_wait", "shutdown", "close",
	"fcntl", "getname", "nl_host_get", "nl_dump", "nl_host_set",
	"nl_host_down", "nl_relay", "nl_bad_cmd",
};

/* Relative weights of the calls in the random mix. */
static const unsigned int op_weight[NOPS] = {
	[OP_SOCKET] = 4, [OP_BIND] = 4, [OP_CONNECT] = 3, [OP_SENDTO] = 10,
	[OP_SENDMSG] = 10, [OP_SENDMMSG] = 12, [OP_RECVFROM] = 6,
	[OP_RECVMSG] = 12, [OP_RECVMMSG] = 8, [OP_SETSOCKOPT] = 6,
	[OP_GETSOCKOPT] = 5, [OP_IOCTL] = 4, [OP_POLL] = 4,
	[OP_EPOLL_CTL] = 3, [OP_EPOLL_WAIT] = 3, [OP_SHUTDOWN] = 1,
	[OP_CLOSE] = 3, [OP_FCNTL] = 2, [OP_GETNAME] = 2,
	[OP_NL_HOST_GET] = 1, [OP_NL_DUMP] = 2, [OP_NL_HOST_SET] = 1,
	[OP_NL_HOST_DOWN] = 1, [OP_NL_RELAY] = 2, [OP_NL_BAD] = 1,
};
static unsigned int weight_sum;

static unsigned long hist[NOPS][NERR];
/* Messages received from the receive queue and from the error queue. */
static unsigned long got_data, got_errq;

static void record(enum op op, long ret, int err)
{
	int e = ret < 0 ? err : 0;

	if (e < 0 || e >= NERR)
		e = NERR - 1;
	__atomic_fetch_add(&hist[op][e], 1, __ATOMIC_RELAXED);
}

/* ----------------------------------------------------------- findings */

#define MAX_KINDS	64

static pthread_mutex_t find_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	const char *kind;
	unsigned long n;
} kinds[MAX_KINDS];
static unsigned long findings;

/* Report one finding; the first 3 of each kind are printed in full. */
static void __attribute__((format(printf, 2, 3)))
finding(const char *kind, const char *fmt, ...)
{
	unsigned long n = 0;
	va_list ap;
	int i;

	pthread_mutex_lock(&find_lock);
	findings++;
	for (i = 0; i < MAX_KINDS && kinds[i].kind; i++)
		if (!strcmp(kinds[i].kind, kind))
			break;
	if (i < MAX_KINDS) {
		kinds[i].kind = kind;
		n = ++kinds[i].n;
	}
	if (n <= 3) {
		printf("FINDING %s: ", kind);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
		fflush(stdout);
	}
	pthread_mutex_unlock(&find_lock);
}

/* -------------------------------------------------------------- slots */

/*
 * A slot holds one socket.  Calls hold the slot's read lock, so the fd
 * stays the same socket for the whole call and its result can be judged;
 * a clean close takes the write lock; a racy close swaps the fd out and
 * closes it under whatever call is running, bumping gen so that those
 * calls are not judged.
 */
struct slot {
	pthread_rwlock_t lock;
	int fd;
	unsigned int gen;
	int type;
};

static struct slot slots[MAX_SLOTS];

struct held {
	struct slot *s;
	int fd;
	unsigned int gen;
	int type;
};

/* --------------------------------------------------------- the threads */

struct thr {
	int id;
	pid_t tid;
	pthread_t pt;
	uint64_t rng;
	int nl;		/* generic netlink socket */
	bool nl_dump_cut;	/* a dump on it ended in ENOBUFS/ENOMEM */
	uint32_t nl_seq;
	int ep;		/* epoll instance */
	unsigned long execs;
	/* What the watchdog looks at: the call in progress and since when. */
	const char *call;
	int call_fd;
	int64_t call_since;
	unsigned char *sbuf[MAX_VLEN];
	unsigned char *rbuf[MAX_VLEN];
	unsigned char nlbuf[65536];
};

static struct thr *thr;
static volatile int stop;
static uint16_t family_id;	/* "onepipe" generic netlink family */
static int64_t family_checked;
static int64_t restore_due;	/* ns; 0: the host config is as it should be */
static unsigned long hangs;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void call_begin(struct thr *t, const char *name, int fd)
{
	__atomic_store_n(&t->call_fd, fd, __ATOMIC_RELAXED);
	__atomic_store_n(&t->call_since, now_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&t->call, name, __ATOMIC_RELEASE);
}

static void call_end(struct thr *t)
{
	__atomic_store_n(&t->call, NULL, __ATOMIC_RELEASE);
	t->execs++;
}

/* Runs EXPR as call NAME on FD under the watchdog; keeps errno. */
#define CALL(t, name, fd, expr) ({				\
	long __r;						\
	int __e;						\
	call_begin(t, name, fd);				\
	__r = (long)(expr);					\
	__e = errno;						\
	call_end(t);						\
	errno = __e;						\
	__r;							\
})

/* xorshift64*: small, fast, and reproducible from the seed. */
static uint64_t rnd64(struct thr *t)
{
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 0x2545f4914f6cdd1dULL;
}

static unsigned int rnd(struct thr *t, unsigned int n)
{
	return n ? (unsigned int)(rnd64(t) >> 33) % n : 0;
}

static bool chance(struct thr *t, unsigned int pct)
{
	return rnd(t, 100) < pct;
}

static bool hold(struct thr *t, struct held *h)
{
	struct slot *s = &slots[rnd(t, opt_slots)];

	pthread_rwlock_rdlock(&s->lock);
	h->s = s;
	h->fd = __atomic_load_n(&s->fd, __ATOMIC_ACQUIRE);
	h->gen = __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE);
	h->type = s->type;
	if (h->fd < 0) {
		pthread_rwlock_unlock(&s->lock);
		return false;
	}
	return true;
}

static void unhold(struct held *h)
{
	pthread_rwlock_unlock(&h->s->lock);
}

/* The fd stayed the same socket for the whole call: judge the result. */
static bool judged(const struct held *h)
{
	return __atomic_load_n(&h->s->gen, __ATOMIC_ACQUIRE) == h->gen;
}

/* errnos that no call on a socket held open, with good pointers, gives. */
static void check_errno(const struct held *h, const char *call, long ret,
			int err)
{
	if (ret >= 0 || !judged(h))
		return;
	if (err == EBADF || err == ENOTSOCK)
		finding("ebadf-on-open-socket", "%s on open fd %d: %s", call,
			h->fd, strerror(err));
	else if (err == EFAULT)
		finding("efault-good-pointers", "%s on fd %d: EFAULT", call,
			h->fd);
}

/* ---------------------------------------------------------- addresses */

static uint16_t pick_port(struct thr *t)
{
	unsigned int r = rnd(t, 100);

	if (r < 75)
		return opt_port_base + rnd(t, NPORTS);
	if (r < 85)
		return ONEPIPE_PORT_EPHEMERAL + rnd(t, 64);
	if (r < 95)
		return 1 + rnd(t, 65535);
	return 0;
}

static uint32_t own_host(struct thr *t)
{
	return chance(t, 50) ? ONEPIPE_HOST_LOCAL : cfg_id;
}

/*
 * A destination or bind address, good or bad.  Returns its length and
 * sets *bad when the API must refuse it (for the call's purpose: port 0
 * is valid in bind, not as a destination).
 */
static socklen_t make_addr(struct thr *t, struct sockaddr_storage *ss,
			   bool dest, bool *bad)
{
	struct sockaddr_onepipe *sop = (void *)ss;
	unsigned int r = rnd(t, 100);

	memset(ss, 0, sizeof(*ss));
	sop->sop_family = AF_ONEPIPE;
	sop->sop_host = own_host(t);
	sop->sop_port = pick_port(t);
	*bad = dest && !sop->sop_port;
	if (r < 80)
		return sizeof(*sop);
	if (r < 84 && opt_own_host_only)
		return sizeof(*sop);
	if (r < 84) {
		/* Other hosts: a few ids only (peers are never freed). */
		/*
		 * Never 2..9, the ids a fuzzer HOST_SET may give this host;
		 * few of them, as peers are never freed.
		 */
		static const uint32_t others[] = { 99, 1000, 4242 };

		sop->sop_host = others[rnd(t, 3)];
		/* bind() refuses another host's id */
		*bad = *bad || !dest;
		return sizeof(*sop);
	}
	if (r < 88) {
		/* not AF_UNSPEC: connect() takes that as "disconnect" */
		sop->sop_family = chance(t, 50) ? AF_INET : 1 + rnd(t, 63);
		*bad = sop->sop_family != AF_ONEPIPE;
		return sizeof(*sop);
	}
	if (r < 92) {
		/* short; never 0, which means "no address" in sendmsg() */
		*bad = true;
		return 1 + rnd(t, sizeof(*sop) - 1);
	}
	if (r < 96)	/* long, still valid */
		return sizeof(*sop) + rnd(t, sizeof(*ss) - sizeof(*sop) + 1);
	/* garbage bytes */
	for (unsigned int i = 0; i < sizeof(*ss); i++)
		((unsigned char *)ss)[i] = rnd64(t);
	if (ss->ss_family == AF_UNSPEC)
		ss->ss_family = AF_INET;
	*bad = ((struct sockaddr_onepipe *)ss)->sop_family != AF_ONEPIPE ||
	       (dest && !sop->sop_port);
	if (!dest && sop->sop_host != ONEPIPE_HOST_LOCAL)
		*bad = true;	/* could be ours only by chance: don't judge */
	return sizeof(*sop);
}

/* ------------------------------------------------------------ payload */

/*
 * Seeds of messages whose scattering was refused (a send that failed, a
 * sendmmsg() that counted fewer than all): the API says no receiver ever
 * delivers them.  Direct-mapped, overwritten when full: messages arrive
 * within seconds, and a lost entry only misses a check.
 */
#define REFUSED_SLOTS	(1U << 20)
static uint64_t *refused;

static void refused_add(uint64_t seed)
{
	if (seed)
		__atomic_store_n(&refused[seed % REFUSED_SLOTS], seed,
				 __ATOMIC_RELAXED);
}

static bool refused_has(uint64_t seed)
{
	return __atomic_load_n(&refused[seed % REFUSED_SLOTS],
			       __ATOMIC_RELAXED) == seed;
}

/*
 * A message of 16 bytes or more starts with (magic, length, seed) and the
 * rest is a stream generated from the seed, so a receiver can check what
 * it got, even a truncated prefix.
 */
static uint64_t payload_fill(struct thr *t, unsigned char *p, size_t len)
{
	uint64_t seed = rnd64(t) | 1, x = seed;
	uint32_t hdr[2] = { PAYLOAD_MAGIC, (uint32_t)len };
	size_t i;

	if (len < PAYLOAD_HDR) {
		memset(p, 0xa5, len);
		return 0;
	}
	memcpy(p, hdr, 8);
	memcpy(p + 8, &seed, 8);
	for (i = PAYLOAD_HDR; i + 8 <= len; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	memcpy(p + i, &x, len - i);
	return seed;
}

/*
 * Checks GOT bytes of a message; FULL: they are the whole message; ERRQ:
 * it came back on the error queue (where refused messages belong).
 */
static void payload_check(const unsigned char *p, size_t got, bool full,
			  bool errq, const char *call)
{
	uint32_t hdr[2];
	uint64_t seed, x;
	size_t i, n;

	if (got < PAYLOAD_HDR)
		return;
	memcpy(hdr, p, 8);
	memcpy(&seed, p + 8, 8);
	if (hdr[0] != PAYLOAD_MAGIC) {
		finding("payload-corrupt", "%s: bad magic %#x", call, hdr[0]);
		return;
	}
	if (!errq && refused_has(seed))
		finding("refused-delivered", "%s: a %u-byte message of a "
			"refused scattering was delivered", call, hdr[1]);
	if ((full && hdr[1] != got) || hdr[1] < got) {
		finding("payload-length", "%s: message of %u bytes came back "
			"as %zu (%s)", call, hdr[1], got,
			full ? "whole" : "truncated");
		return;
	}
	x = seed;
	for (i = PAYLOAD_HDR; i < got; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		n = got - i < 8 ? got - i : 8;
		if (memcmp(p + i, &x, n)) {
			finding("payload-corrupt", "%s: %u-byte message differs "
				"at byte %zu", call, hdr[1], i);
			return;
		}
	}
}

/* --------------------------------------------------------------- cmsg */

/* Random control messages for a send; *len is 0 for none. */
static void make_cmsgs(struct thr *t, unsigned char *buf, size_t *len)
{
	static const int levels[] = { SOL_SOCKET, SOL_ONEPIPE, SOL_IP, 0, -1 };
	struct cmsghdr *c;
	size_t off = 0, dl;
	int n = 1 + rnd(t, 2);

	*len = 0;
	if (!chance(t, 10))
		return;
	while (n--) {
		dl = rnd(t, 17);
		c = (struct cmsghdr *)(buf + off);
		c->cmsg_level = levels[rnd(t, 5)];
		/* never SCM_RIGHTS/SCM_CREDENTIALS: they are not ours */
		c->cmsg_type = c->cmsg_level == SOL_SOCKET ?
			       SO_TIMESTAMP_OLD : (int)rnd(t, 5);
		c->cmsg_len = CMSG_LEN(dl);
		for (size_t i = 0; i < dl; i++)
			CMSG_DATA(c)[i] = rnd64(t);
		off += CMSG_SPACE(dl);
	}
	if (chance(t, 20))	/* inconsistent length: the kernel says EINVAL */
		((struct cmsghdr *)buf)->cmsg_len = off + 8 + rnd(t, 64);
	*len = off;
}

/* ------------------------------------------------------------- socket */

static void set_timeouts(int fd, struct thr *t)
{
	struct timeval tv = { 0, 1000 + rnd(t, 50000) };

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO_OLD, &tv, sizeof(tv));
	tv.tv_usec = 1000 + rnd(t, 50000);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO_OLD, &tv, sizeof(tv));
}

/* Put FD of TYPE into a random slot, closing whatever was there. */
static void place(struct thr *t, int fd, int type)
{
	struct slot *s = &slots[rnd(t, opt_slots)];
	int old;

	pthread_rwlock_wrlock(&s->lock);
	old = s->fd;
	__atomic_store_n(&s->fd, fd, __ATOMIC_RELEASE);
	__atomic_add_fetch(&s->gen, 1, __ATOMIC_ACQ_REL);
	s->type = type;
	pthread_rwlock_unlock(&s->lock);
	if (old >= 0)
		CALL(t, "close", old, close(old));
}

static void do_socket(struct thr *t)
{
	static const int odd_types[] = {
		SOCK_STREAM, SOCK_SEQPACKET, SOCK_RAW, SOCK_PACKET, 0, 7, 9,
	};
	static const int odd_protos[] = { 1, 6, 17, 23, 255, -1, 65536 };
	int type, proto = 0, flags = 0, fd, err;
	unsigned int r = rnd(t, 100);
	struct sockaddr_onepipe sop;
	bool good;

	type = r < 46 ? SOCK_DGRAM : r < 92 ? SOCK_RDM :
	       odd_types[rnd(t, 7)];
	if (chance(t, 5))
		proto = odd_protos[rnd(t, 7)];
	if (chance(t, 25))
		flags |= SOCK_NONBLOCK;
	if (chance(t, 25))
		flags |= SOCK_CLOEXEC;
	good = (type == SOCK_DGRAM || type == SOCK_RDM) && !proto;
	fd = CALL(t, "socket", -1, socket(AF_ONEPIPE, type | flags, proto));
	err = errno;
	record(OP_SOCKET, fd, err);
	if (fd >= 0 && !good)
		finding("socket-bad-args-accepted", "socket(AF_ONEPIPE, %d, %d) "
			"succeeded", type, proto);
	/* EAFNOSUPPORT: the module is being unloaded (the rmmod phase). */
	if (fd < 0 && good && err != EMFILE && err != ENFILE &&
	    err != ENOBUFS && err != ENOMEM && err != EAFNOSUPPORT)
		finding("socket-failed", "socket(AF_ONEPIPE, %d, 0): %s", type,
			strerror(err));
	if (fd < 0)
		return;
	if (!good) {
		close(fd);
		return;
	}
	set_timeouts(fd, t);
	if (chance(t, 70)) {
		memset(&sop, 0, sizeof(sop));
		sop.sop_family = AF_ONEPIPE;
		sop.sop_port = chance(t, 80) ? opt_port_base + rnd(t, NPORTS) :
			       0;
		CALL(t, "bind", fd, bind(fd, (void *)&sop, sizeof(sop)));
	}
	place(t, fd, type);
}

static void do_bind(struct thr *t)
{
	struct sockaddr_storage ss;
	struct held h;
	socklen_t len;
	bool bad;
	long r;

	if (!hold(t, &h))
		return do_socket(t);
	len = make_addr(t, &ss, false, &bad);
	if (chance(t, 3)) {
		len = sizeof(ss) + 1 + rnd(t, 64);	/* > sockaddr_storage */
		bad = true;
	}
	r = CALL(t, "bind", h.fd, bind(h.fd, (void *)&ss, len));
	record(OP_BIND, r, errno);
	check_errno(&h, "bind", r, errno);
	if (!r && bad && judged(&h))
		finding("bind-bad-addr-accepted", "bind(len %u family %u host "
			"%u port %u) succeeded", len, ss.ss_family,
			((struct sockaddr_onepipe *)&ss)->sop_host,
			((struct sockaddr_onepipe *)&ss)->sop_port);
	unhold(&h);
}

static void do_connect(struct thr *t)
{
	struct sockaddr_storage ss;
	struct held h;
	socklen_t len;
	bool bad;
	long r;

	if (!hold(t, &h))
		return do_socket(t);
	len = make_addr(t, &ss, true, &bad);
	if (chance(t, 15)) {	/* dissolve the association */
		memset(&ss, 0, sizeof(ss));
		ss.ss_family = AF_UNSPEC;
		len = chance(t, 50) ? sizeof(sa_family_t) : sizeof(ss);
		bad = false;
	}
	r = CALL(t, "connect", h.fd, connect(h.fd, (void *)&ss, len));
	record(OP_CONNECT, r, errno);
	check_errno(&h, "connect", r, errno);
	if (!r && bad && judged(&h))
		finding("connect-bad-addr-accepted", "connect(len %u family %u "
			"port %u) succeeded", len, ss.ss_family,
			((struct sockaddr_onepipe *)&ss)->sop_port);
	unhold(&h);
}

/* ----------------------------------------------------------------- send */

static size_t pick_len(struct thr *t)
{
	unsigned int r = rnd(t, 100);

	if (r < 10)
		return rnd(t, PAYLOAD_HDR);
	if (r < 50)
		return PAYLOAD_HDR + rnd(t, 200);
	if (r < 75)
		return 1000 + rnd(t, 3000);	/* around the MTU */
	if (r < 93)
		return 4000 + rnd(t, ONEPIPE_MAX_MSG - 4000 + 1);
	if (r < 96)
		return ONEPIPE_MAX_MSG;
	return ONEPIPE_MAX_MSG + 1 + rnd(t, BUF_LEN - ONEPIPE_MAX_MSG);
}

/* Send flags, and whether they are ones the API must refuse. */
static int pick_send_flags(struct thr *t, bool allow_more, bool *bad)
{
	static const int unknown[] = {
		MSG_PROXY, MSG_DONTROUTE, MSG_CTRUNC, MSG_WAITALL, MSG_SYN,
		MSG_CONFIRM, MSG_RST, MSG_ERRQUEUE, MSG_ZEROCOPY, MSG_FASTOPEN,
		1 << 23,
	};
	int f = 0;

	*bad = false;
	if (chance(t, 45))
		f |= MSG_DONTWAIT;
	if (allow_more && chance(t, 15))
		f |= MSG_MORE;
	if (chance(t, 5))
		f |= MSG_EOR;
	if (chance(t, 5))
		f |= MSG_NOSIGNAL;
	if (chance(t, 2)) {
		f |= MSG_OOB;
		*bad = true;
	}
	if (chance(t, 2)) {
		f |= unknown[rnd(t, 11)];
		*bad = true;
	}
	return f;
}

/*
 * One message: payload, iovec (1-4 consecutive pieces of the buffer),
 * address.  Returns the length; *bad when the API must refuse it.
 */
static size_t make_msg(struct thr *t, int i, struct msghdr *m,
		       struct iovec *iov, struct sockaddr_storage *ss,
		       unsigned char *cbuf, bool *bad, uint64_t *seed)
{
	size_t len = pick_len(t), off = 0, piece, clen;
	int niov = 1 + rnd(t, 4), k;

	*seed = payload_fill(t, t->sbuf[i], len);
	for (k = 0; k < niov; k++) {
		piece = k == niov - 1 ? len - off : rnd(t, len - off + 1);
		iov[k].iov_base = t->sbuf[i] + off;
		iov[k].iov_len = piece;
		off += piece;
	}
	memset(m, 0, sizeof(*m));
	m->msg_iov = iov;
	m->msg_iovlen = niov;
	*bad = len > ONEPIPE_MAX_MSG;
	if (!chance(t, 15)) {	/* else the connected peer, if any */
		bool b;

		m->msg_namelen = make_addr(t, ss, true, &b);
		m->msg_name = ss;
		*bad = *bad || b;
	}
	make_cmsgs(t, cbuf, &clen);
	if (clen) {
		m->msg_control = cbuf;
		m->msg_controllen = clen;
	}
	return len;
}

static void do_send(struct thr *t, enum op op)
{
	struct sockaddr_storage ss[MAX_VLEN];
	struct iovec iov[MAX_VLEN][4];
	struct mmsghdr mm[MAX_VLEN];
	unsigned char cbuf[MAX_VLEN][128];
	unsigned int vlen = 1, i, first_bad = MAX_VLEN + 1;
	uint64_t seed[MAX_VLEN];
	bool bad, fbad;
	struct held h;
	size_t len = 0;
	int flags;
	long r;

	if (!hold(t, &h))
		return do_socket(t);
	if (op == OP_SENDMMSG)
		vlen = 1 + rnd(t, MAX_VLEN);
	for (i = 0; i < vlen; i++) {
		len = make_msg(t, i, &mm[i].msg_hdr, iov[i], &ss[i], cbuf[i],
			       &bad, &seed[i]);
		if (bad && first_bad > MAX_VLEN)
			first_bad = i;
	}
	flags = pick_send_flags(t, true, &fbad);
	if (fbad)
		first_bad = 0;
	switch (op) {
	case OP_SENDTO:
		r = CALL(t, "sendto", h.fd, sendto(h.fd, t->sbuf[0], len,
			 flags, mm[0].msg_hdr.msg_name,
			 mm[0].msg_hdr.msg_namelen));
		break;
	case OP_SENDMSG:
		r = CALL(t, "sendmsg", h.fd, sendmsg(h.fd, &mm[0].msg_hdr,
							flags));
		break;
	default:
		r = CALL(t, "sendmmsg", h.fd, sendmmsg(h.fd, mm, vlen, flags));
		break;
	}
	record(op, r, errno);
	check_errno(&h, op_name[op], r, errno);
	/* refused: the whole scattering (this call's part of it) */
	if (op == OP_SENDMMSG ? r < (long)vlen : r < 0)
		for (i = 0; i < vlen; i++)
			refused_add(seed[i]);
	if (judged(&h) && r >= 0) {
		/*
		 * Whatever the admission rule, nothing at or after the first
		 * message the API refuses may be reported sent.
		 */
		if (op == OP_SENDMMSG && (r > vlen || r > first_bad))
			finding("sendmmsg-count", "sendmmsg(vlen %u, flags %#x) "
				"returned %ld, first invalid entry %u", vlen,
				flags, r, first_bad);
		if (op != OP_SENDMMSG && first_bad == 0)
			finding("send-bad-args-accepted", "%s(len %zu, flags "
				"%#x, namelen %u) returned %ld", op_name[op],
				len, flags, mm[0].msg_hdr.msg_namelen, r);
		if (op == OP_SENDMSG && r >= 0 && first_bad &&
		    (size_t)r != len)
			finding("send-short", "sendmsg of %zu bytes returned %ld",
				len, r);
	}
	unhold(&h);
}

/* -------------------------------------------------------------- receive */

static const size_t rlens[] = { 0, 1, 8, 15, 16, 100, 1500, 4096, 65536,
				BUF_LEN };

static int pick_recv_flags(struct thr *t, bool *bad)
{
	int f = 0;

	*bad = false;
	if (chance(t, 60))
		f |= MSG_DONTWAIT;
	if (chance(t, 15))
		f |= MSG_PEEK;
	if (chance(t, 15))
		f |= MSG_TRUNC;
	if (chance(t, 30))
		f |= MSG_ERRQUEUE;
	if (chance(t, 3))
		f |= MSG_WAITALL;
	if (chance(t, 2)) {
		f |= MSG_OOB;
		*bad = true;
	}
	if (chance(t, 2)) {
		f |= chance(t, 50) ? MSG_SYN : MSG_RST;
		*bad = true;
	}
	return f;
}

static const int code_errno[] = {
	[ONEPIPE_EE_TIMEOUT] = ETIMEDOUT, [ONEPIPE_EE_LATE] = ETIME,
	[ONEPIPE_EE_NOPORT] = ECONNREFUSED, [ONEPIPE_EE_NOBUFS] = ENOBUFS,
	[ONEPIPE_EE_DOWN] = ENETDOWN, [ONEPIPE_EE_UNREACH] = EHOSTUNREACH,
	[ONEPIPE_EE_RECALLED] = ECANCELED,
};

/*
 * Checks one received message: N bytes returned into a buffer of BUFLEN
 * (N is the real length when MSG_TRUNC was asked on the receive queue).
 */
static void check_msg(const char *call, int flags, const struct msghdr *m,
		      socklen_t namecap, long n, size_t buflen)
{
	bool errq = flags & MSG_ERRQUEUE, truncd = m->msg_flags & MSG_TRUNC;
	bool got_ts = false, got_err = false, aborted = false;
	uint64_t err_ts = 0;
	unsigned int code;
	size_t got = (size_t)n < buflen ? (size_t)n : buflen;
	const struct sockaddr_onepipe *sop = m->msg_name;
	const struct onepipe_recverr *re;
	struct cmsghdr *c;
	uint64_t ts;

	if ((size_t)n > buflen && !(flags & MSG_TRUNC) && !errq)
		finding("recv-len", "%s returned %ld for a %zu-byte buffer",
			call, n, buflen);
	if ((size_t)n > buflen && !truncd)
		finding("recv-trunc-flag", "%s returned %ld > %zu without "
			"MSG_TRUNC", call, n, buflen);
	if (!errq != !(m->msg_flags & MSG_ERRQUEUE))
		finding("recv-errqueue-flag", "%s flags %#x: msg_flags %#x",
			call, flags, m->msg_flags);
	if (n > ONEPIPE_MAX_MSG)
		finding("recv-too-long", "%s returned a %ld-byte message", call,
			n);
	/* msg_namelen is the whole length; what fit is namecap bytes */
	if (sop && namecap >= sizeof(*sop) &&
	    (m->msg_namelen != sizeof(*sop) || sop->sop_family != AF_ONEPIPE))
		finding("recv-name", "%s: source family %u length %u", call,
			sop->sop_family, m->msg_namelen);
	for (c = CMSG_FIRSTHDR((struct msghdr *)m); c;
	     c = CMSG_NXTHDR((struct msghdr *)m, c)) {
		if (c->cmsg_level == SOL_SOCKET)
			continue;	/* generic ones (SO_TIMESTAMP...) */
		/* put_cmsg() cuts the last one to the room left */
		if ((m->msg_flags & MSG_CTRUNC) &&
		    (unsigned char *)c + CMSG_SPACE(sizeof(*re)) >
		    (unsigned char *)m->msg_control + m->msg_controllen)
			continue;
		if (c->cmsg_level != SOL_ONEPIPE) {
			finding("recv-cmsg", "%s: cmsg level %d type %d", call,
				c->cmsg_level, c->cmsg_type);
			continue;
		}
		if (c->cmsg_type == ONEPIPE_CMSG_TS &&
		    c->cmsg_len == CMSG_LEN(sizeof(ts))) {
			got_ts = true;
			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			err_ts = ts;
			if (ts > ONEPIPE_TS_MASK)
				finding("recv-ts", "%s: timestamp %#llx above "
					"48 bits", call,
					(unsigned long long)ts);
		} else if (c->cmsg_type == ONEPIPE_CMSG_RECVERR && errq &&
			   c->cmsg_len == CMSG_LEN(sizeof(*re))) {
			got_err = true;
			re = (const void *)CMSG_DATA(c);
			code = re->ee.ee_code;
			if (code == ONEPIPE_EE_ABORTED)
				aborted = true;
			if (re->ee.ee_origin != SO_EE_ORIGIN_LOCAL ||
			    !code || (code > ONEPIPE_EE_ABORTED &&
				      code != ONEPIPE_EE_UNKNOWN) ||
			    (code == ONEPIPE_EE_ABORTED && !re->ee.ee_errno) ||
			    (re->ee.ee_code <= ONEPIPE_EE_RECALLED &&
			     (int)re->ee.ee_errno !=
			     code_errno[re->ee.ee_code]) ||
			    (code == ONEPIPE_EE_UNKNOWN &&
			     re->ee.ee_errno != ETIMEDOUT) ||
			    re->offender.sop_family != AF_ONEPIPE)
				finding("errqueue-entry", "errno %u origin %u "
					"code %u offender family %u",
					re->ee.ee_errno, re->ee.ee_origin,
					re->ee.ee_code,
					re->offender.sop_family);
			if (!truncd && re->ee.ee_info != (size_t)n)
				finding("errqueue-info", "ee_info %u for a "
					"%ld-byte message", re->ee.ee_info, n);
		} else {
			finding("recv-cmsg", "%s: SOL_ONEPIPE cmsg type %d len "
				"%zu", call, c->cmsg_type,
				(size_t)c->cmsg_len);
		}
	}
	/* A refused scattering was never stamped. */
	if (errq && aborted && got_ts && err_ts)
		finding("errqueue-aborted-ts", "%s: ONEPIPE_EE_ABORTED entry "
			"with timestamp %#llx", call,
			(unsigned long long)err_ts);
	/* Room for every cmsg and none cut: they must all be there. */
	if (!(m->msg_flags & MSG_CTRUNC) && m->msg_control &&
	    m->msg_controllen >= 64) {
		if (!got_ts)
			finding("recv-no-ts", "%s: no ONEPIPE_CMSG_TS", call);
		if (errq && !got_err)
			finding("errqueue-no-recverr", "%s: no "
				"ONEPIPE_CMSG_RECVERR", call);
	}
	payload_check(m->msg_iov[0].iov_base, got, !truncd, errq, call);
}

/* Receive buffers: 1-3 consecutive pieces of the thread's buffer I. */
static size_t make_rmsg(struct thr *t, int i, struct msghdr *m,
			struct iovec *iov, struct sockaddr_storage *ss,
			unsigned char *cbuf)
{
	static const size_t clens[] = { 0, 8, CMSG_SPACE(8), 256, 256, 256 };
	size_t len = rlens[rnd(t, 10)], off = 0, piece;
	int niov = 1 + rnd(t, 3), k;

	memset(m, 0, sizeof(*m));
	for (k = 0; k < niov; k++) {
		piece = k == niov - 1 ? len - off : rnd(t, len - off + 1);
		iov[k].iov_base = t->rbuf[i] + off;
		iov[k].iov_len = piece;
		off += piece;
	}
	m->msg_iov = iov;
	m->msg_iovlen = niov;
	if (chance(t, 80)) {
		m->msg_name = ss;
		m->msg_namelen = chance(t, 85) ? sizeof(*ss) : rnd(t, 8);
	}
	m->msg_controllen = clens[rnd(t, 6)];
	if (m->msg_controllen)
		m->msg_control = cbuf;
	return len;
}

static void do_recv(struct thr *t, enum op op)
{
	struct sockaddr_storage ss[MAX_VLEN];
	struct iovec iov[MAX_VLEN][3];
	struct mmsghdr mm[MAX_VLEN];
	unsigned char cbuf[MAX_VLEN][256];
	size_t blen[MAX_VLEN];
	socklen_t ncap[MAX_VLEN];
	unsigned int vlen = 1, i;
	struct timespec tmo;
	socklen_t alen;
	struct held h;
	bool bad;
	int flags;
	long r;

	if (!hold(t, &h))
		return do_socket(t);
	if (op == OP_RECVMMSG)
		vlen = 1 + rnd(t, MAX_VLEN);
	for (i = 0; i < vlen; i++) {
		blen[i] = make_rmsg(t, i, &mm[i].msg_hdr, iov[i], &ss[i],
				    cbuf[i]);
		ncap[i] = mm[i].msg_hdr.msg_namelen;
	}
	flags = pick_recv_flags(t, &bad);
	switch (op) {
	case OP_RECVFROM:
		alen = mm[0].msg_hdr.msg_namelen;
		r = CALL(t, "recvfrom", h.fd, recvfrom(h.fd, t->rbuf[0], blen[0],
			 flags, mm[0].msg_hdr.msg_name,
			 mm[0].msg_hdr.msg_name ? &alen : NULL));
		break;
	case OP_RECVMSG:
		r = CALL(t, "recvmsg", h.fd, recvmsg(h.fd, &mm[0].msg_hdr,
							flags));
		break;
	default:
		if (chance(t, 30))
			flags |= MSG_WAITFORONE;
		tmo.tv_sec = 0;
		tmo.tv_nsec = 1000000 + rnd(t, 20000000);
		r = CALL(t, "recvmmsg", h.fd, recvmmsg(h.fd, mm, vlen, flags,
			 chance(t, 50) ? &tmo : NULL));
		break;
	}
	record(op, r, errno);
	check_errno(&h, op_name[op], r, errno);
	if (r >= 0)
		__atomic_fetch_add(flags & MSG_ERRQUEUE ? &got_errq : &got_data,
				   op == OP_RECVMMSG ? r : 1, __ATOMIC_RELAXED);
	if (r >= 0 && judged(&h)) {
		if (bad)
			finding("recv-bad-flags-accepted", "%s(flags %#x) "
				"returned %ld", op_name[op], flags, r);
		else if (op == OP_RECVMSG)
			check_msg("recvmsg", flags, &mm[0].msg_hdr, ncap[0], r,
				  blen[0]);
		else if (op == OP_RECVMMSG && r > vlen)
			finding("recvmmsg-count", "recvmmsg(vlen %u) returned "
				"%ld", vlen, r);
		else if (op == OP_RECVMMSG)
			for (i = 0; i < r; i++)
				check_msg("recvmmsg", flags, &mm[i].msg_hdr,
					  ncap[i], mm[i].msg_len, blen[i]);
		else	/* no msg_flags: whole if it did not fill the buffer */
			payload_check(t->rbuf[0], (size_t)r < blen[0] ?
				      (size_t)r : blen[0],
				      (flags & MSG_TRUNC) && !(flags & MSG_ERRQUEUE) ?
				      (size_t)r <= blen[0] : (size_t)r < blen[0],
				      flags & MSG_ERRQUEUE, "recvfrom");
	}
	unhold(&h);
}

/* ----------------------------------------------------------- sockopts */

static void do_setsockopt(struct thr *t)
{
	/* capped by [rw]mem_max, except the FORCE ones: at most 1 MB */
	static const int sizes[] = { 0, 1, 256, 2048, 65536, 1 << 20,
				     1 << 30, -1 };
	static const int olens[] = { 0, 1, 2, 3, 4, 8, 64 };
	/*
	 * Drop everything, or accept everything: sk_filter on delivery.  A
	 * filter's result is the length to keep (0xffff would cut a 64 KiB
	 * message by a byte, as on any socket), so "all" is 0xffffffff.
	 */
	static struct sock_filter drop[] = { BPF_STMT(BPF_RET | BPF_K, 0) };
	static struct sock_filter pass[] = {
		BPF_STMT(BPF_RET | BPF_K, 0xffffffff) };
	unsigned char val[64];
	struct sock_fprog prog;
	struct timeval tv;
	int level, name, ival;
	unsigned int olen, r = rnd(t, 100);
	const void *p = val;
	struct held h;
	bool bad = false;
	long ret;

	if (!hold(t, &h))
		return do_socket(t);
	for (unsigned int i = 0; i < sizeof(val); i++)
		val[i] = rnd64(t);
	if (r < 45) {
		level = SOL_ONEPIPE;
		name = rnd(t, 7);
		olen = olens[rnd(t, 7)];
		ival = chance(t, 50) ? (int)rnd(t, 2) : (int)rnd64(t);
		memcpy(val, &ival, sizeof(ival));
		/*
		 * Only ONEPIPE_ORDERED is settable, with an int; SOCK_RDM may
		 * refuse 0 (the reliable service is ordered).
		 * ONEPIPE_FAILURE_ACK is refused too: no process failure is
		 * ever notified here.
		 */
		bad = name != ONEPIPE_ORDERED || olen < sizeof(int);
	} else if (r < 90) {
		level = SOL_SOCKET;
		olen = sizeof(int);
		switch (rnd(t, 7)) {
		case 0:
		case 1:
			name = chance(t, 50) ? SO_SNDBUF : SO_RCVBUF;
			if (chance(t, 20))
				name = name == SO_SNDBUF ? SO_SNDBUFFORCE :
				       SO_RCVBUFFORCE;
			ival = sizes[rnd(t, 8)];
			if (name == SO_SNDBUFFORCE || name == SO_RCVBUFFORCE)
				ival = sizes[rnd(t, 6)];
			memcpy(val, &ival, sizeof(ival));
			break;
		case 2:
		case 3:
			/* tiny, never 0 (0 would mean "wait forever") */
			name = chance(t, 50) ? SO_SNDTIMEO_OLD : SO_RCVTIMEO_OLD;
			tv.tv_sec = 0;
			tv.tv_usec = 1 + rnd(t, 100000);
			memcpy(val, &tv, sizeof(tv));
			olen = chance(t, 95) ? sizeof(tv) : rnd(t, sizeof(tv));
			break;
		case 4:
			name = SO_ATTACH_FILTER;
			prog.len = 1;
			prog.filter = chance(t, 30) ? drop : pass;
			p = &prog;
			olen = sizeof(prog);
			break;
		case 5:
			name = SO_DETACH_FILTER;
			break;
		default: {
			static const int misc[] = {
				SO_PRIORITY, SO_RCVLOWAT, SO_PEEK_OFF,
				SO_TIMESTAMP_OLD, SO_ZEROCOPY, SO_MARK,
				SO_BROADCAST, SO_LINGER, SO_SNDLOWAT,
				SO_TXTIME, SO_RXQ_OVFL,
			};
			name = misc[rnd(t, 11)];
			olen = olens[rnd(t, 7)];
		}
		}
	} else {
		static const int lvls[] = { SOL_IP, IPPROTO_UDP, 0, 298, 300, -1 };

		level = lvls[rnd(t, 6)];
		name = rnd(t, 64);
		olen = olens[rnd(t, 7)];
		bad = true;
	}
	ret = CALL(t, "setsockopt", h.fd, setsockopt(h.fd, level, name, p,
							olen));
	record(OP_SETSOCKOPT, ret, errno);
	check_errno(&h, "setsockopt", ret, errno);
	if (!ret && bad && judged(&h))
		finding("setsockopt-bad-accepted", "setsockopt(level %d, name "
			"%d, len %u) succeeded", level, name, olen);
	unhold(&h);
}

static void do_getsockopt(struct thr *t)
{
	static const int olens[] = { -1, 0, 1, 4, 7, 8, 16, 64 };
	static const int sol[] = {
		SO_TYPE, SO_DOMAIN, SO_PROTOCOL, SO_ERROR, SO_SNDBUF,
		SO_RCVBUF, SO_RCVTIMEO_OLD, SO_PEEK_OFF, SO_MEMINFO,
		SO_COOKIE, SO_ACCEPTCONN, SO_PEERNAME,
	};
	unsigned char val[64];
	int level, name, want, ival;
	socklen_t olen;
	struct held h;
	uint64_t v64;
	long r;

	if (!hold(t, &h))
		return do_socket(t);
	if (chance(t, 55)) {
		level = SOL_ONEPIPE;
		name = rnd(t, 7);
	} else {
		level = SOL_SOCKET;
		name = sol[rnd(t, 12)];
	}
	olen = want = olens[rnd(t, 8)];
	memset(val, 0xee, sizeof(val));
	r = CALL(t, "getsockopt", h.fd, getsockopt(h.fd, level, name, val,
						      &olen));
	record(OP_GETSOCKOPT, r, errno);
	check_errno(&h, "getsockopt", r, errno);
	if (!judged(&h) || r) {
		if (r && judged(&h) && level == SOL_ONEPIPE &&
		    name == ONEPIPE_LAST_TS && want >= 8 &&
		    errno != ENOENT && errno != EINPROGRESS)
			finding("last-ts-errno", "ONEPIPE_LAST_TS: %s",
				strerror(errno));
		unhold(&h);
		return;
	}
	if (want >= 0 && (int)olen > want)
		finding("getsockopt-len", "level %d name %d: %u bytes into %d",
			level, name, olen, want);
	if (level == SOL_ONEPIPE) {
		if (name < ONEPIPE_TIMESTAMP || name > ONEPIPE_BARRIER)
			finding("getsockopt-unknown-accepted", "SOL_ONEPIPE "
				"option %d succeeded", name);
		memcpy(&ival, val, sizeof(ival));
		memcpy(&v64, val, sizeof(v64));
		if (name == ONEPIPE_ORDERED && olen == sizeof(int) &&
		    ival != 0 && ival != 1)
			finding("ordered-value", "ONEPIPE_ORDERED = %d", ival);
		if (name != ONEPIPE_ORDERED && olen == 8 &&
		    v64 > ONEPIPE_TS_MASK)
			finding("ts-value", "option %d = %#llx above 48 bits",
				name, (unsigned long long)v64);
	} else if (olen == sizeof(int)) {
		memcpy(&ival, val, sizeof(ival));
		if ((name == SO_TYPE && ival != h.type) ||
		    (name == SO_DOMAIN && ival != AF_ONEPIPE) ||
		    (name == SO_PROTOCOL && ival != 0))
			finding("so-identity", "SOL_SOCKET option %d = %d "
				"(type %d)", name, ival, h.type);
	}
	unhold(&h);
}

/* ---------------------------------------------------------------- ioctl */

/*
 * Random ioctl numbers, but none that the VFS or the networking core
 * would act on for real (FIFREEZE on sockfs, SIOCSIF* on our interfaces,
 * FIOASYNC, SIOCGSKNS opening an fd...): the type byte is one nobody uses
 * on a socket, or a protocol-private number, which only the family sees.
 */
static unsigned long pick_ioctl(struct thr *t, bool *known)
{
	static const unsigned char types[] = { 0xab, 0xee, 0xe1, 0x4f };
	unsigned int r = rnd(t, 100);

	*known = true;
	if (r < 30)
		return SIOCINQ;
	if (r < 55)
		return SIOCOUTQ;
	if (r < 60)
		return FIONBIO;
	if (r < 65)
		return SIOCGSTAMP_OLD;
	if (r < 70)
		return SIOCATMARK;
	*known = false;
	if (r < 80)
		return SIOCPROTOPRIVATE + rnd(t, 16);
	return (unsigned long)(rnd(t, 4) << 30 | rnd(t, 64) << 16 |
			       types[rnd(t, 4)] << 8 | rnd(t, 256));
}

static void do_ioctl(struct thr *t)
{
	unsigned char arg[128];
	unsigned long cmd;
	struct held h;
	bool known;
	int v;
	long r;

	if (!hold(t, &h))
		return do_socket(t);
	cmd = pick_ioctl(t, &known);
	memset(arg, 0, sizeof(arg));
	if (cmd == FIONBIO)
		arg[0] = rnd(t, 2);
	r = CALL(t, "ioctl", h.fd, ioctl(h.fd, cmd, arg));
	record(OP_IOCTL, r, errno);
	check_errno(&h, "ioctl", r, errno);
	memcpy(&v, arg, sizeof(v));
	if (!r && judged(&h)) {
		if (cmd == SIOCINQ && (v < 0 || v > ONEPIPE_MAX_MSG))
			finding("siocinq", "SIOCINQ = %d", v);
		if (cmd == SIOCOUTQ && v < 0)
			finding("siocoutq", "SIOCOUTQ = %d", v);
		if (!known)
			finding("ioctl-unknown-accepted", "ioctl %#lx "
				"succeeded", cmd);
	}
	unhold(&h);
}

/* ------------------------------------------------------ poll and epoll */

static void do_poll(struct thr *t)
{
	struct pollfd p[4];
	unsigned int n = 1 + rnd(t, 4), i;
	struct held h;
	long r;

	if (!hold(t, &h))
		return do_socket(t);
	p[0].fd = h.fd;
	for (i = 1; i < n; i++)	/* others unlocked: may be closed, -1 */
		p[i].fd = __atomic_load_n(&slots[rnd(t, opt_slots)].fd,
					  __ATOMIC_RELAXED);
	for (i = 0; i < n; i++) {
		p[i].events = rnd(t, 0x400);
		p[i].revents = 0;
	}
	r = CALL(t, "poll", h.fd, poll(p, n, rnd(t, 20)));
	record(OP_POLL, r, errno);
	if (r > 0 && (p[0].revents & POLLNVAL) && judged(&h))
		finding("poll-nval", "POLLNVAL on open fd %d", h.fd);
	if (r < 0 && errno != EINTR && errno != ENOMEM)
		finding("poll-errno", "poll: %s", strerror(errno));
	unhold(&h);
}

static void do_epoll_ctl(struct thr *t)
{
	static const int ops[] = { EPOLL_CTL_ADD, EPOLL_CTL_MOD, EPOLL_CTL_DEL };
	struct epoll_event ev;
	struct held h;
	long r;

	if (!hold(t, &h))
		return do_socket(t);
	ev.events = rnd(t, 0x400) | (chance(t, 20) ? EPOLLET : 0) |
		    (chance(t, 10) ? EPOLLONESHOT : 0);
	ev.data.u64 = rnd64(t);
	r = CALL(t, "epoll_ctl", h.fd, epoll_ctl(t->ep, ops[rnd(t, 3)], h.fd,
						 &ev));
	record(OP_EPOLL_CTL, r, errno);
	check_errno(&h, "epoll_ctl", r, errno);
	unhold(&h);
}

static void do_epoll_wait(struct thr *t)
{
	struct epoll_event ev[8];
	long r;

	r = CALL(t, "epoll_wait", t->ep, epoll_wait(t->ep, ev, 1 + rnd(t, 8),
						    rnd(t, 10)));
	record(OP_EPOLL_WAIT, r, errno);
	if (r < 0 && errno != EINTR)
		finding("epoll-errno", "epoll_wait: %s", strerror(errno));
}

/* ------------------------------------------------ shutdown, fcntl, name */

static void do_shutdown(struct thr *t)
{
	struct held h;
	long r;

	if (!hold(t, &h))
		return do_socket(t);
	r = CALL(t, "shutdown", h.fd, shutdown(h.fd, rnd(t, 4)));
	record(OP_SHUTDOWN, r, errno);
	check_errno(&h, "shutdown", r, errno);
	unhold(&h);
}

static void do_fcntl(struct thr *t)
{
	struct held h;
	long fl, r;

	if (!hold(t, &h))
		return do_socket(t);
	fl = CALL(t, "fcntl", h.fd, fcntl(h.fd, F_GETFL));
	r = fl < 0 ? fl : CALL(t, "fcntl", h.fd,
			       fcntl(h.fd, F_SETFL, fl ^ O_NONBLOCK));
	record(OP_FCNTL, r, errno);
	check_errno(&h, "fcntl", r, errno);
	unhold(&h);
}

static void do_getname(struct thr *t)
{
	static const socklen_t lens[] = { 0, 2, 7, 8, 16, 128 };
	struct sockaddr_storage ss;
	bool peer = chance(t, 50);
	socklen_t want = lens[rnd(t, 6)], len = want;
	struct held h;
	long r;

	if (!hold(t, &h))
		return do_socket(t);
	memset(&ss, 0, sizeof(ss));
	r = CALL(t, "getname", h.fd, peer ?
		 getpeername(h.fd, (void *)&ss, &len) :
		 getsockname(h.fd, (void *)&ss, &len));
	record(OP_GETNAME, r, errno);
	check_errno(&h, peer ? "getpeername" : "getsockname", r, errno);
	/* the whole length is returned; the family if there was room */
	if (!r && judged(&h) &&
	    (len != sizeof(struct sockaddr_onepipe) ||
	     (want >= sizeof(sa_family_t) && ss.ss_family != AF_ONEPIPE)))
		finding("getname", "%s: len %u family %u",
			peer ? "getpeername" : "getsockname", len,
			ss.ss_family);
	unhold(&h);
}

/* ----------------------------------------------------------------- close */

static void do_close(struct thr *t)
{
	struct slot *s = &slots[rnd(t, opt_slots)];
	bool racy = chance(t, 35);
	int fd;

	if (!racy)
		pthread_rwlock_wrlock(&s->lock);
	fd = __atomic_exchange_n(&s->fd, -1, __ATOMIC_ACQ_REL);
	__atomic_add_fetch(&s->gen, 1, __ATOMIC_ACQ_REL);
	if (!racy)
		pthread_rwlock_unlock(&s->lock);
	if (fd < 0)
		return do_socket(t);
	record(OP_CLOSE, CALL(t, "close", fd, close(fd)), errno);
	if (chance(t, 50))
		do_socket(t);
}

/* -------------------------------------------------------------- netlink */

struct nlreq {
	unsigned char b[2048];
	size_t len;
};

static void nl_start(struct nlreq *q, uint16_t type, uint16_t flags,
		     uint8_t cmd)
{
	struct nlmsghdr *n = (void *)q->b;
	struct genlmsghdr *g = NLMSG_DATA(n);

	memset(q->b, 0, NLMSG_SPACE(GENL_HDRLEN));
	n->nlmsg_type = type;
	n->nlmsg_flags = NLM_F_REQUEST | flags;
	g->cmd = cmd;
	g->version = ONEPIPE_GENL_VERSION;
	q->len = NLMSG_SPACE(GENL_HDRLEN);
}

static void nl_put(struct nlreq *q, uint16_t type, const void *d, size_t len)
{
	struct nlattr *a = (void *)(q->b + q->len);

	if (q->len + NLA_ALIGN(NLA_HDRLEN + len) > sizeof(q->b))
		return;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((unsigned char *)a + NLA_HDRLEN, d, len);
	memset((unsigned char *)a + NLA_HDRLEN + len, 0,
	       NLA_ALIGN(len) - len);
	q->len += NLA_ALIGN(NLA_HDRLEN + len);
}

static void nl_put_u32(struct nlreq *q, uint16_t type, uint32_t v)
{
	nl_put(q, type, &v, sizeof(v));
}

/* Attributes of one message are well formed (lengths within bounds). */
static bool nl_attrs_ok(const unsigned char *p, size_t len, int depth)
{
	const struct nlattr *a;

	while (len >= NLA_HDRLEN) {
		a = (const void *)p;
		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			return false;
		/* the onepipe family's nests (and nested arrays) */
		if ((a->nla_type & NLA_F_NESTED) && depth < 3 &&
		    !nl_attrs_ok(p + NLA_HDRLEN, a->nla_len - NLA_HDRLEN,
				 depth + 1))
			return false;
		if ((size_t)NLA_ALIGN(a->nla_len) >= len)
			return true;
		len -= NLA_ALIGN(a->nla_len);
		p += NLA_ALIGN(a->nla_len);
	}
	return len == 0;
}

/*
 * Sends the request and reads its replies until the ACK, NLMSG_DONE or an
 * error.  Returns 0 or a negative errno (-EAGAIN: no answer in 10 s).
 */
static int nl_transact(struct thr *t, struct nlreq *q, const char *what)
{
	struct nlmsghdr *n = (void *)q->b;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	bool ack = n->nlmsg_flags & NLM_F_ACK;
	bool dump = (n->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
	uint32_t seq = ++t->nl_seq;
	int err = 0;
	long r;

	n->nlmsg_len = q->len;
	n->nlmsg_seq = seq;
	r = CALL(t, what, t->nl, sendto(t->nl, q->b, q->len, 0, (void *)&sa,
					sizeof(sa)));
	if (r < 0)
		return -errno;
	for (;;) {
		r = CALL(t, what, t->nl, recv(t->nl, t->nlbuf,
					      sizeof(t->nlbuf), 0));
		if (r < 0) {
			if (errno == EAGAIN)
				finding("netlink-no-reply", "%s: nothing in 10 s",
					what);
			return errno == ENOBUFS ? -ENOBUFS : -errno;
		}
		for (n = (void *)t->nlbuf; NLMSG_OK(n, (size_t)r);
		     n = NLMSG_NEXT(n, r)) {
			if (n->nlmsg_seq != seq)
				continue;	/* an earlier request's */
			if (n->nlmsg_type == NLMSG_DONE)
				return err;
			if (n->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(n);

				if (e->error > 0 || e->error < -4095)
					finding("netlink-error", "%s: error %d",
						what, e->error);
				return e->error;
			}
			if (n->nlmsg_len < NLMSG_SPACE(GENL_HDRLEN) ||
			    !nl_attrs_ok((unsigned char *)NLMSG_DATA(n) +
					 GENL_HDRLEN, n->nlmsg_len -
					 NLMSG_SPACE(GENL_HDRLEN), 0))
				finding("netlink-malformed", "%s: reply of %u "
					"bytes", what, n->nlmsg_len);
			/* a doit's reply, with no ACK asked for */
			if (!(n->nlmsg_flags & NLM_F_MULTI) && !ack && !dump)
				return 0;
		}
		if (r)
			finding("netlink-truncated", "%s: %ld bytes left over",
				what, r);
	}
}

/* Finds the family id; 0 while the module is not loaded. */
static void nl_resolve(struct thr *t)
{
	struct nlreq q;
	struct nlmsghdr *n;
	struct nlattr *a;
	size_t left;
	long r;

	nl_start(&q, GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY);
	((struct genlmsghdr *)NLMSG_DATA((struct nlmsghdr *)q.b))->version = 1;
	nl_put(&q, CTRL_ATTR_FAMILY_NAME, ONEPIPE_GENL_NAME,
	       sizeof(ONEPIPE_GENL_NAME));
	n = (void *)q.b;
	n->nlmsg_len = q.len;
	n->nlmsg_seq = ++t->nl_seq;
	__atomic_store_n(&family_checked, now_ns(), __ATOMIC_RELAXED);
	if (send(t->nl, q.b, q.len, 0) < 0)
		return;
	do {
		r = recv(t->nl, t->nlbuf, sizeof(t->nlbuf), 0);
		if (r < 0)
			return;
		n = (void *)t->nlbuf;
	} while (n->nlmsg_seq != t->nl_seq);
	if (n->nlmsg_type == NLMSG_ERROR) {
		__atomic_store_n(&family_id, 0, __ATOMIC_RELAXED);
		return;
	}
	a = (void *)((unsigned char *)NLMSG_DATA(n) + GENL_HDRLEN);
	left = n->nlmsg_len - NLMSG_SPACE(GENL_HDRLEN);
	while (left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= left) {
		if (a->nla_type == CTRL_ATTR_FAMILY_ID) {
			uint16_t id;

			memcpy(&id, (unsigned char *)a + NLA_HDRLEN, 2);
			__atomic_store_n(&family_id, id, __ATOMIC_RELAXED);
			return;
		}
		if ((size_t)NLA_ALIGN(a->nla_len) >= left)
			break;
		left -= NLA_ALIGN(a->nla_len);
		a = (void *)((unsigned char *)a + NLA_ALIGN(a->nla_len));
	}
}

/* The family id, looked up again now and then (rmmod/insmod change it). */
static uint16_t nl_family(struct thr *t)
{
	uint16_t id = __atomic_load_n(&family_id, __ATOMIC_RELAXED);
	int64_t last = __atomic_load_n(&family_checked, __ATOMIC_RELAXED);

	if (!id && now_ns() - last > 1000000000LL)
		nl_resolve(t);
	return __atomic_load_n(&family_id, __ATOMIC_RELAXED);
}

static void nl_result(struct thr *t, enum op op, int err)
{
	record(op, err, -err);
	if (err == -ENOENT) {
		/* the family went away (rmmod), or a new one is there */
		__atomic_store_n(&family_id, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&family_checked, 0, __ATOMIC_RELAXED);
		nl_family(t);
	}
}

/* Puts the fabric's configuration back (after a down or a foreign set). */
static int nl_host_restore(struct thr *t)
{
	uint16_t fam = nl_family(t);
	struct nlreq q;
	uint16_t port = ONEPIPE_UDP_PORT;

	if (!fam || !cfg_known)
		return -ENOENT;
	nl_start(&q, fam, NLM_F_ACK, ONEPIPE_CMD_HOST_SET);
	nl_put_u32(&q, ONEPIPE_A_HOST_ID, cfg_id);
	nl_put_u32(&q, ONEPIPE_A_TRANSPORT, ONEPIPE_TRANSPORT_UDP);
	nl_put(&q, ONEPIPE_A_UDP_LOCAL_ADDR, &cfg_local, 4);
	nl_put(&q, ONEPIPE_A_UDP_UPLINK_ADDR, &cfg_uplink, 4);
	if (chance(t, 50)) {
		nl_put(&q, ONEPIPE_A_UDP_LOCAL_PORT, &port, 2);
		nl_put(&q, ONEPIPE_A_UDP_UPLINK_PORT, &port, 2);
	}
	return nl_transact(t, &q, "nl_host_set");
}

/* A HOST_SET or HOST_DOWN changed the host: restore it within 20-200 ms. */
static void schedule_restore(struct thr *t)
{
	int64_t due = now_ns() + 20000000LL + rnd(t, 180000000);

	__atomic_store_n(&restore_due, due, __ATOMIC_RELAXED);
}

static void maybe_restore(struct thr *t)
{
	int64_t due = __atomic_load_n(&restore_due, __ATOMIC_RELAXED);
	int err;

	if (!due || now_ns() < due ||
	    !__atomic_compare_exchange_n(&restore_due, &due, 0, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	err = nl_host_restore(t);
	nl_result(t, OP_NL_HOST_SET, err);
	if (err && err != -ENOENT)
		schedule_restore(t);	/* try again */
}

static void do_nl_host_get(struct thr *t)
{
	uint16_t fam = nl_family(t);
	struct nlreq q;

	if (!fam)
		return;
	nl_start(&q, fam, chance(t, 50) ? NLM_F_ACK : 0, ONEPIPE_CMD_HOST_GET);
	if (chance(t, 10))	/* attributes a GET ignores */
		nl_put_u32(&q, ONEPIPE_A_HOST_ID, rnd64(t));
	nl_result(t, OP_NL_HOST_GET, nl_transact(t, &q, "nl_host_get"));
}

static void do_nl_dump(struct thr *t)
{
	static const uint8_t cmds[] = {
		ONEPIPE_CMD_LINK_GET, ONEPIPE_CMD_SOCK_GET,
		ONEPIPE_CMD_PEER_GET, ONEPIPE_CMD_DEV_GET, ONEPIPE_CMD_HOST_GET,
	};
	uint16_t fam = nl_family(t);
	uint8_t cmd = cmds[rnd(t, 5)];
	struct nlreq q;
	bool was_cut;
	int err;

	if (!fam)
		return;
	nl_start(&q, fam, NLM_F_DUMP, cmd);
	err = nl_transact(t, &q, "nl_dump");
	nl_result(t, OP_NL_DUMP, err);
	/*
	 * A dump the kernel found no memory to continue (ENOBUFS on the
	 * socket) stays in progress until the socket is read on, and the
	 * netlink core refuses a new dump on it meanwhile with EBUSY.
	 */
	was_cut = t->nl_dump_cut;
	if (err == -ENOBUFS || err == -ENOMEM)
		t->nl_dump_cut = true;
	else if (!err)
		t->nl_dump_cut = false;
	if (err == -EBUSY && was_cut)
		return;
	if (cmd != ONEPIPE_CMD_HOST_GET && err && err != -ENOBUFS &&
	    err != -EAGAIN && err != -ENOENT && err != -EOPNOTSUPP &&
	    err != -ENOMEM)
		finding("netlink-dump", "dump of command %u: %s", cmd,
			strerror(-err));
}

static void do_nl_host_set(struct thr *t)
{
	uint16_t fam = nl_family(t), port;
	unsigned int v = rnd(t, 10), i, n;
	bool bad = false;
	struct nlreq q;
	int err;

	/* rare: every set that passes validation resets the host */
	if (!fam || opt_no_host_set || !chance(t, 5))
		return;
	nl_start(&q, fam, NLM_F_ACK, ONEPIPE_CMD_HOST_SET);
	switch (v) {
	case 0: case 1: case 2:
		nl_result(t, OP_NL_HOST_SET, nl_host_restore(t));
		return;
	case 3:		/* valid, another id: works, restored later */
		nl_put_u32(&q, ONEPIPE_A_HOST_ID, 2 + rnd(t, 8));
		nl_put(&q, ONEPIPE_A_UDP_LOCAL_ADDR, &cfg_local, 4);
		nl_put(&q, ONEPIPE_A_UDP_UPLINK_ADDR, &cfg_uplink, 4);
		break;
	case 4:		/* no host id */
		nl_put(&q, ONEPIPE_A_UDP_UPLINK_ADDR, &cfg_uplink, 4);
		bad = true;
		break;
	case 5:		/* host id out of range */
		nl_put_u32(&q, ONEPIPE_A_HOST_ID, chance(t, 50) ? 0 :
			   0xffffffffU);
		nl_put(&q, ONEPIPE_A_UDP_UPLINK_ADDR, &cfg_uplink, 4);
		bad = true;
		break;
	case 6:		/* no such transport */
		nl_put_u32(&q, ONEPIPE_A_HOST_ID, cfg_id);
		nl_put_u32(&q, ONEPIPE_A_TRANSPORT, chance(t, 50) ? 0 :
			   3 + rnd(t, 100));
		nl_put(&q, ONEPIPE_A_UDP_UPLINK_ADDR, &cfg_uplink, 4);
		bad = true;
		break;
	case 7:		/* UDP without uplink, or port 0 */
		nl_put_u32(&q, ONEPIPE_A_HOST_ID, cfg_id);
		if (chance(t, 50)) {
			port = 0;
			nl_put(&q, ONEPIPE_A_UDP_UPLINK_ADDR, &cfg_uplink, 4);
			nl_put(&q, ONEPIPE_A_UDP_LOCAL_PORT, &port, 2);
		}
		bad = true;
		break;
	case 8:		/* verbs: no such device, bad peers */
		nl_put_u32(&q, ONEPIPE_A_HOST_ID, cfg_id);
		nl_put_u32(&q, ONEPIPE_A_TRANSPORT, ONEPIPE_TRANSPORT_VERBS);
		if (chance(t, 70))
			nl_put(&q, ONEPIPE_A_VERBS_DEV, "opfz0", 6);
		if (chance(t, 50)) {
			unsigned char nest[64];

			for (i = 0; i < sizeof(nest); i++)
				nest[i] = rnd64(t);
			nl_put(&q, ONEPIPE_A_VERBS_PEERS | NLA_F_NESTED, nest,
			       rnd(t, sizeof(nest)));
		}
		bad = true;
		break;
	default:	/* garbage attributes */
		n = 1 + rnd(t, 6);
		for (i = 0; i < n; i++) {
			unsigned char d[24];

			for (unsigned int k = 0; k < sizeof(d); k++)
				d[k] = rnd64(t);
			nl_put(&q, rnd(t, ONEPIPE_A_MAX + 3), d, rnd(t, 24));
		}
		break;
	}
	err = nl_transact(t, &q, "nl_host_set");
	nl_result(t, OP_NL_HOST_SET, err);
	if (!err && bad)
		finding("host-set-bad-accepted", "HOST_SET variant %u "
			"succeeded", v);
	/*
	 * A set that got past the attribute checks took the host down
	 * (and up with another id, or not at all): put it back soon.
	 */
	if (!err || v >= 8)
		schedule_restore(t);
}

static void do_nl_host_down(struct thr *t)
{
	uint16_t fam = nl_family(t);
	struct nlreq q;

	/* rarer than the others: the host must be up most of the time */
	if (!fam || opt_no_host_set || !chance(t, 3))
		return;
	nl_start(&q, fam, NLM_F_ACK, ONEPIPE_CMD_HOST_DOWN);
	nl_result(t, OP_NL_HOST_DOWN, nl_transact(t, &q, "nl_host_down"));
	schedule_restore(t);
}

static void put_be(unsigned char *p, uint64_t v, unsigned int n)
{
	while (n--) {
		p[n] = v & 0xff;
		v >>= 8;
	}
}

/*
 * ONEPIPE_CMD_RELAY: a packet "from the controller", taken in as if from
 * the network.  Mostly a well-formed header for this host with one or
 * two fields mutated (type, flags, hosts, sequence numbers, fragments,
 * lengths), sometimes random bytes or a cut header.  A packet that is
 * not for the reliable service, or a beacon, must be refused.
 */
static void do_nl_relay(struct thr *t)
{
	static const uint32_t hosts[] = { 1, 2, 3, 0, 0xfffffffe };
	unsigned char pkt[1200];
	uint16_t fam = nl_family(t);
	unsigned int len, plen, i;
	uint8_t type, flags;
	struct nlreq q;
	int err;

	if (!fam || opt_no_relay)
		return;
	plen = chance(t, 50) ? 0 : rnd(t, sizeof(pkt) - 52);
	len = 52 + plen;
	for (i = 0; i < len; i++)
		pkt[i] = rnd(t, 256);
	type = chance(t, 90) ? 1 + rnd(t, 6) : rnd(t, 256);
	flags = chance(t, 80) ? 0x04 | (rnd(t, 256) & 0x3b) : rnd(t, 256);
	pkt[0] = chance(t, 95) ? 1 : rnd(t, 256);
	pkt[1] = type;
	pkt[2] = flags;
	pkt[3] = rnd(t, 4);
	put_be(pkt + 4, chance(t, 80) ? hosts[rnd(t, 3)] : hosts[rnd(t, 5)],
	       4);
	put_be(pkt + 8, chance(t, 80) ? cfg_id : hosts[rnd(t, 5)], 4);
	put_be(pkt + 12, rnd(t, 65536), 2);
	/* Below every port it binds: random data must not reach its sockets. */
	put_be(pkt + 14, 100 + rnd(t, 4), 2);
	put_be(pkt + 16, rnd64(t) & 0xffffffffffffULL, 8);
	/* barrier and commit: ignored when relayed, but checked */
	put_be(pkt + 24, chance(t, 90) ? rnd64(t) & 0xffffffffffffULL :
	       rnd64(t), 8);
	put_be(pkt + 32, chance(t, 90) ? rnd64(t) & 0xffffffffffffULL :
	       rnd64(t), 8);
	put_be(pkt + 40, chance(t, 70) ? rnd(t, 64) : rnd64(t), 4);
	put_be(pkt + 44, chance(t, 70) ? plen : rnd64(t), 4);
	put_be(pkt + 48, chance(t, 80) ? 0 : rnd(t, 4), 2);
	put_be(pkt + 50, chance(t, 80) ? 1 : rnd(t, 4), 2);
	if (chance(t, 5))
		len = rnd(t, 52);
	nl_start(&q, fam, NLM_F_ACK, ONEPIPE_CMD_RELAY);
	nl_put(&q, ONEPIPE_A_PACKET, pkt, len);
	err = nl_transact(t, &q, "nl_relay");
	nl_result(t, OP_NL_RELAY, err);
	if (!err && len >= 52 && (!(flags & 0x04) || type == 2))
		finding("netlink-relay-accepted",
			"type %u flags 0x%02x taken in", type, flags);
}

static void do_nl_bad(struct thr *t)
{
	/* No such command, or an event's (multicast only, never a request). */
	static const uint8_t cmds[] = {
		0, ONEPIPE_CMD_MAX + 1, ONEPIPE_CMD_EV_LINK, 100, 255,
	};
	uint16_t fam = nl_family(t);
	uint8_t cmd = cmds[rnd(t, 5)];
	struct nlreq q;
	int err;

	if (!fam)
		return;
	nl_start(&q, fam, NLM_F_ACK | (chance(t, 50) ? NLM_F_DUMP : 0), cmd);
	err = nl_transact(t, &q, "nl_bad_cmd");
	nl_result(t, OP_NL_BAD, err);
	if (!err)
		finding("netlink-unknown-cmd", "command %u succeeded", cmd);
}

/* ------------------------------------------------------------ the loop */

static void one_op(struct thr *t)
{
	unsigned int w = rnd(t, weight_sum);
	enum op op;

	for (op = 0; op < NOPS - 1 && w >= op_weight[op]; op++)
		w -= op_weight[op];
	switch (op) {
	case OP_SOCKET: do_socket(t); break;
	case OP_BIND: do_bind(t); break;
	case OP_CONNECT: do_connect(t); break;
	case OP_SENDTO:
	case OP_SENDMSG:
	case OP_SENDMMSG: do_send(t, op); break;
	case OP_RECVFROM:
	case OP_RECVMSG:
	case OP_RECVMMSG: do_recv(t, op); break;
	case OP_SETSOCKOPT: do_setsockopt(t); break;
	case OP_GETSOCKOPT: do_getsockopt(t); break;
	case OP_IOCTL: do_ioctl(t); break;
	case OP_POLL: do_poll(t); break;
	case OP_EPOLL_CTL: do_epoll_ctl(t); break;
	case OP_EPOLL_WAIT: do_epoll_wait(t); break;
	case OP_SHUTDOWN: do_shutdown(t); break;
	case OP_CLOSE: do_close(t); break;
	case OP_FCNTL: do_fcntl(t); break;
	case OP_GETNAME: do_getname(t); break;
	case OP_NL_HOST_GET: do_nl_host_get(t); break;
	case OP_NL_DUMP: do_nl_dump(t); break;
	case OP_NL_HOST_SET: do_nl_host_set(t); break;
	case OP_NL_HOST_DOWN: do_nl_host_down(t); break;
	case OP_NL_RELAY: do_nl_relay(t); break;
	default: do_nl_bad(t); break;
	}
}

/* Marks the calling thread for task-filtered faults. */
static void make_it_fail(void)
{
	int fd = open("/proc/thread-self/make-it-fail", O_WRONLY);

	if (fd < 0 || write(fd, "1", 1) != 1) {
		fprintf(stderr, "syscall_fuzz: make-it-fail: %s\n",
			strerror(errno));
		exit(2);
	}
	close(fd);
}

static void *worker(void *arg)
{
	struct thr *t = arg;

	t->tid = gettid();
	if (opt_make_it_fail)
		make_it_fail();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		maybe_restore(t);
		one_op(t);
	}
	/* No unmarking: that write could fail too, and the thread ends. */
	return NULL;
}

/* Prints the kernel stack of every thread (root only). */
static void dump_stacks(void)
{
	char path[64], buf[4096];
	unsigned int i;
	FILE *f;
	size_t n;

	for (i = 0; i < opt_threads; i++) {
		snprintf(path, sizeof(path), "/proc/self/task/%d/stack",
			 thr[i].tid);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = '\0';
		fclose(f);
		printf("thread %u (tid %d) in %s; kernel stack:\n%s", i,
		       thr[i].tid, thr[i].call ? thr[i].call : "(no call)",
		       buf);
	}
}

static void print_stats(double secs)
{
	unsigned long execs = 0, tot;
	unsigned int i, e;

	for (i = 0; i < opt_threads; i++)
		execs += thr[i].execs;
	printf("calls and their results (errno: count):\n");
	for (i = 0; i < NOPS; i++) {
		tot = 0;
		for (e = 0; e < NERR; e++)
			tot += hist[i][e];
		if (!tot)
			continue;
		printf("  %-13s %9lu  ok %lu", op_name[i], tot, hist[i][0]);
		for (e = 1; e < NERR; e++)
			if (hist[i][e])
				printf("  %s %lu", strerrorname_np(e) ?:
				       "E?", hist[i][e]);
		printf("\n");
	}
	for (i = 0; i < MAX_KINDS && kinds[i].kind; i++)
		printf("finding %s: %lu\n", kinds[i].kind, kinds[i].n);
	printf("received: %lu messages, %lu error-queue entries\n", got_data,
	       got_errq);
	printf("syscall_fuzz: execs %lu secs %.1f rate %.0f/s findings %lu "
	       "hangs %lu\n", execs, secs, execs / (secs > 0 ? secs : 1),
	       findings, hangs);
	fflush(stdout);
}

/*
 * Every call is bounded (socket timeouts of at most 100 ms, poll and
 * epoll of 20 ms, netlink replies 10 s), so a call that takes more than
 * --hang-secs is stuck in the kernel: report it with every thread's
 * kernel stack and exit without waiting for it.
 */
static void *watchdog(void *arg)
{
	int64_t t0 = *(int64_t *)arg, limit = opt_hang_secs * 1000000000LL;
	const char *call;
	unsigned int i;
	int64_t since;

	for (;;) {
		usleep(200000);
		for (i = 0; i < opt_threads; i++) {
			call = __atomic_load_n(&thr[i].call, __ATOMIC_ACQUIRE);
			since = __atomic_load_n(&thr[i].call_since,
						__ATOMIC_RELAXED);
			if (!call || now_ns() - since < limit)
				continue;
			hangs++;
			printf("HANG: thread %u (tid %d) stuck in %s on fd %d "
			       "for %.1f s\n", i, thr[i].tid, call,
			       thr[i].call_fd, (now_ns() - since) / 1e9);
			dump_stacks();
			print_stats((now_ns() - t0) / 1e9);
			_exit(3);
		}
	}
	return NULL;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--seconds N] [--seed S] [--threads T] [--slots K]\n"
		"	[--host-cfg ID,LOCAL,UPLINK] [--port-base P]\n"
		"	[--no-host-set] [--hang-secs N] [--make-it-fail]\n"
		"	[--own-host-only] [--no-relay] [--verbose]\n", prog);
	exit(2);
}

static void parse_cfg(const char *s)
{
	char buf[128], *local, *uplink;
	struct in_addr a, b;

	snprintf(buf, sizeof(buf), "%s", s);
	local = strchr(buf, ',');
	uplink = local ? strchr(local + 1, ',') : NULL;
	if (!uplink)
		usage("syscall_fuzz");
	*local++ = '\0';
	*uplink++ = '\0';
	if (inet_pton(AF_INET, local, &a) != 1 ||
	    inet_pton(AF_INET, uplink, &b) != 1)
		usage("syscall_fuzz");
	cfg_id = strtoul(buf, NULL, 0);
	cfg_local = a.s_addr;
	cfg_uplink = b.s_addr;
	cfg_known = true;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "threads", required_argument, NULL, 't' },
		{ "slots", required_argument, NULL, 'k' },
		{ "host-cfg", required_argument, NULL, 'c' },
		{ "port-base", required_argument, NULL, 'p' },
		{ "no-host-set", no_argument, NULL, 'n' },
		{ "hang-secs", required_argument, NULL, 'H' },
		{ "make-it-fail", no_argument, NULL, 'F' },
		{ "own-host-only", no_argument, NULL, 'O' },
		{ "no-relay", no_argument, NULL, 'R' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct timeval nltv = { 10, 0 };
	pthread_rwlockattr_t rwa;
	pthread_t wd;
	int64_t t0, end, next;
	unsigned int i, k;
	int c;

	opt_seed = (unsigned long long)now_ns() ^ getpid();
	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 's': opt_secs = strtoul(optarg, NULL, 0); break;
		case 'S': opt_seed = strtoull(optarg, NULL, 0); break;
		case 't': opt_threads = strtoul(optarg, NULL, 0); break;
		case 'k': opt_slots = strtoul(optarg, NULL, 0); break;
		case 'c': parse_cfg(optarg); break;
		case 'p': opt_port_base = strtoul(optarg, NULL, 0); break;
		case 'n': opt_no_host_set = true; break;
		case 'H': opt_hang_secs = strtoul(optarg, NULL, 0); break;
		case 'F': opt_make_it_fail = true; break;
		case 'O': opt_own_host_only = true; break;
		case 'R': opt_no_relay = true; break;
		case 'v': opt_verbose = true; break;
		default: usage(argv[0]);
		}
	}
	if (optind != argc || !opt_threads || opt_threads > MAX_THREADS ||
	    !opt_slots || opt_slots > MAX_SLOTS || !opt_hang_secs ||
	    opt_port_base < 1 || opt_port_base + NPORTS > 65536)
		usage(argv[0]);
	/* A valid HOST_SET needs the host's real configuration. */
	if (!cfg_known)
		opt_no_host_set = true;
	/* FIONBIO/fcntl games must not kill us with SIGIO/SIGPIPE/SIGURG. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGIO, SIG_IGN);
	signal(SIGURG, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("syscall_fuzz: seed %llu threads %u seconds %u slots %u%s\n",
	       opt_seed, opt_threads, opt_secs, opt_slots,
	       opt_no_host_set ? " (no HOST_SET/HOST_DOWN)" : "");

	for (i = 0; i < NOPS; i++)
		weight_sum += op_weight[i];
	pthread_rwlockattr_init(&rwa);
	/* closers must not starve behind a stream of readers */
	pthread_rwlockattr_setkind_np(&rwa,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	for (i = 0; i < opt_slots; i++) {
		pthread_rwlock_init(&slots[i].lock, &rwa);
		slots[i].fd = -1;
	}
	thr = calloc(opt_threads, sizeof(*thr));
	refused = calloc(REFUSED_SLOTS, sizeof(*refused));
	if (!thr || !refused)
		return 2;
	/*
	 * Everything that is not a slot socket is opened now, so that the
	 * fd numbers slots reuse after a racy close only ever name other
	 * AF_ONEPIPE sockets, never the netlink or epoll fds.
	 */
	for (i = 0; i < opt_threads; i++) {
		struct thr *t = &thr[i];

		t->id = i;
		t->rng = (opt_seed + 1) * 0x9e3779b97f4a7c15ULL ^
			 (i + 1) * 0xbf58476d1ce4e5b9ULL;
		if (!t->rng)
			t->rng = 1;
		t->nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
			       NETLINK_GENERIC);
		t->ep = epoll_create1(EPOLL_CLOEXEC);
		if (t->nl < 0 || t->ep < 0) {
			perror("netlink/epoll socket");
			return 2;
		}
		setsockopt(t->nl, SOL_SOCKET, SO_RCVTIMEO_OLD, &nltv,
			   sizeof(nltv));
		for (k = 0; k < MAX_VLEN; k++) {
			/*
			 * Touched now: a page fault whose allocation fails
			 * under --make-it-fail is only retried, but slowly.
			 */
			t->sbuf[k] = malloc(BUF_LEN);
			t->rbuf[k] = malloc(BUF_LEN);
			if (!t->sbuf[k] || !t->rbuf[k])
				return 2;
			memset(t->sbuf[k], 0, BUF_LEN);
			memset(t->rbuf[k], 0, BUF_LEN);
		}
	}
	nl_resolve(&thr[0]);
	if (!family_id)
		printf("syscall_fuzz: no \"%s\" generic netlink family\n",
		       ONEPIPE_GENL_NAME);

	t0 = now_ns();
	if (pthread_create(&wd, NULL, watchdog, &t0))
		return 2;
	pthread_detach(wd);
	for (i = 0; i < opt_threads; i++)
		if (pthread_create(&thr[i].pt, NULL, worker, &thr[i]))
			return 2;
	end = t0 + opt_secs * 1000000000LL;
	for (next = t0 + 10000000000LL; now_ns() < end; usleep(100000)) {
		if (!opt_verbose || now_ns() < next)
			continue;
		next += 10000000000LL;
		for (i = 0, k = 0; i < opt_threads; i++)
			k += thr[i].execs;
		printf("syscall_fuzz: %.0f s, %u execs, %lu findings\n",
		       (now_ns() - t0) / 1e9, k, findings);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < opt_threads; i++)
		pthread_join(thr[i].pt, NULL);

	/* Leave the host as the fabric configured it. */
	if (!opt_no_host_set && nl_host_restore(&thr[0]))
		printf("syscall_fuzz: could not restore the host's "
		       "configuration\n");
	for (i = 0; i < opt_slots; i++)
		if (slots[i].fd >= 0)
			close(slots[i].fd);
	print_stats((now_ns() - t0) / 1e9);
	return findings ? 1 : 0;
}
