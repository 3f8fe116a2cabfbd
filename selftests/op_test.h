/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the AF_ONEPIPE socket tests share: addresses, sending, receiving
 * with control messages, the error queue, the onepipe tool, and the tests
 * of the admission rule (a scattering is admitted whole or not at all),
 * which both services run.  Included by socket_api.c (SOCK_DGRAM),
 * socket_rdm.c and admission_window.c (SOCK_RDM, which define
 * OP_TEST_TYPE first); each is one kselftest-harness binary.
 */
#ifndef OP_TEST_H
#define OP_TEST_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <linux/errqueue.h>
#include <linux/onepipe.h>
#include <linux/sockios.h>

/* Generous: the guest runs under TCG emulation and can be very slow. */
#define RX_TIMEOUT_MS	10000
/* Fixed ports for tests that need a known, unused port. */
#define PORT_A		7001
#define PORT_B		7002
/* sizeof() as ssize_t, to compare with syscall results. */
#define SZ(x)		((ssize_t)sizeof(x))

static inline __u32 test_host(void)
{
	const char *s = getenv("ONEPIPE_TEST_HOST");

	return s ? (__u32)strtoul(s, NULL, 0) : 0;
}

static inline struct sockaddr_onepipe op_addr(__u32 host, __u16 port)
{
	struct sockaddr_onepipe a;

	memset(&a, 0, sizeof(a));
	a.sop_family = AF_ONEPIPE;
	a.sop_host = host;
	a.sop_port = port;
	return a;
}

/* The socket type the including test file is about. */
#ifndef OP_TEST_TYPE
#define OP_TEST_TYPE	SOCK_DGRAM
#endif

static inline int op_socket(void)
{
	return socket(AF_ONEPIPE, OP_TEST_TYPE, 0);
}

static inline int op_bind(int fd, __u32 host, __u16 port)
{
	struct sockaddr_onepipe a = op_addr(host, port);

	return bind(fd, (struct sockaddr *)&a, sizeof(a));
}

/* Bound socket on an ephemeral port; fills in its full address. */
static inline int op_bound(struct sockaddr_onepipe *self_addr)
{
	socklen_t len = sizeof(*self_addr);
	int fd = op_socket();

	if (fd < 0)
		return -1;
	if (op_bind(fd, 0, 0) ||
	    getsockname(fd, (struct sockaddr *)self_addr, &len)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The three bound sockets a data-path fixture starts with, and their
 * addresses.  Returns 0, or -1 (errno set) after closing what it opened.
 */
static inline int op_bound3(int fd[3], struct sockaddr_onepipe addr[3])
{
	int i, j;

	for (i = 0; i < 3; i++) {
		fd[i] = op_bound(&addr[i]);
		if (fd[i] < 0) {
			for (j = 0; j < i; j++)
				close(fd[j]);
			return -1;
		}
	}
	return 0;
}

/*
 * A data-path fixture's host and sockets: a, b, c with addresses aa, ba,
 * ca, also seen as the arrays op_bound3() fills.
 */
#define OP_FIXTURE_SOCKETS						\
	__u32 host;							\
	union {								\
		int fd[3];						\
		struct { int a, b, c; };				\
	};								\
	union {								\
		struct sockaddr_onepipe addr[3];			\
		struct { struct sockaddr_onepipe aa, ba, ca; };		\
	}

/* Start a fixture: no sockets yet; returns the test host (0: none). */
static inline __u32 op_fixture_host(int fd[3])
{
	fd[0] = -1;
	fd[1] = -1;
	fd[2] = -1;
	return test_host();
}

/* Close the sockets of a fixture, skipping those never opened (-1). */
static inline void op_close3(int fd[3])
{
	int i;

	for (i = 0; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

static inline int op_sendto(int fd, const void *buf, size_t len, int flags,
		     const struct sockaddr_onepipe *to)
{
	return sendto(fd, buf, len, flags, (const struct sockaddr *)to,
		      sizeof(*to));
}

static inline int get_u64(int fd, int opt, __u64 *v)
{
	socklen_t len = sizeof(*v);

	if (getsockopt(fd, SOL_ONEPIPE, opt, v, &len))
		return -1;
	return len == sizeof(*v) ? 0 : -2;
}

/* 48-bit wrap-around "a is not after b" (a <= b). */
static inline int ts_le(__u64 a, __u64 b)
{
	return ((b - a) & ONEPIPE_TS_MASK) < (1ULL << (ONEPIPE_TS_BITS - 1));
}

static inline int wait_events(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n = poll(&p, 1, timeout_ms);

	return n > 0 ? p.revents : n;
}

struct rx {
	ssize_t len;
	int flags;
	struct sockaddr_onepipe src;
	socklen_t srclen;
	int have_ts;
	__u64 ts;
	int have_err;
	struct onepipe_recverr err;
};

/* Parse our control messages; anything unexpected is left for the test. */
static inline void parse_cmsgs(struct msghdr *mh, struct rx *r)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_ONEPIPE)
			continue;
		if (c->cmsg_type == ONEPIPE_CMSG_TS &&
		    c->cmsg_len == CMSG_LEN(sizeof(__u64))) {
			memcpy(&r->ts, CMSG_DATA(c), sizeof(r->ts));
			r->have_ts = 1;
		} else if (c->cmsg_type == ONEPIPE_CMSG_RECVERR &&
			   c->cmsg_len >= CMSG_LEN(sizeof(r->err))) {
			memcpy(&r->err, CMSG_DATA(c), sizeof(r->err));
			r->have_err = 1;
		}
	}
}

/*
 * Wait up to @timeout_ms (rx_msg(): RX_TIMEOUT_MS) for a message (or an
 * error-queue entry when flags has MSG_ERRQUEUE) and receive it with its
 * control messages.  Returns the recvmsg() result; on timeout -1 with
 * errno ETIMEDOUT.
 */
static inline ssize_t rx_msg_to(int fd, void *buf, size_t cap, int flags,
				struct rx *r, int timeout_ms)
{
	char cbuf[CMSG_SPACE(sizeof(struct onepipe_recverr)) +
		  CMSG_SPACE(sizeof(__u64)) + 64];
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr mh = {
		.msg_name = &r->src, .msg_namelen = sizeof(r->src),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	short ev = (flags & MSG_ERRQUEUE) ? POLLERR : POLLIN;
	int re;

	memset(r, 0, sizeof(*r));
	re = wait_events(fd, ev, timeout_ms);
	if (re <= 0 || !(re & ev)) {
		errno = ETIMEDOUT;
		return -1;
	}
	r->len = recvmsg(fd, &mh, flags | MSG_DONTWAIT);
	r->flags = mh.msg_flags;
	r->srclen = mh.msg_namelen;
	if (r->len >= 0)
		parse_cmsgs(&mh, r);
	return r->len;
}

static inline ssize_t rx_msg(int fd, void *buf, size_t cap, int flags,
			     struct rx *r)
{
	return rx_msg_to(fd, buf, cap, flags, r, RX_TIMEOUT_MS);
}

/*
 * For failure messages: what the sender's error queue says about a
 * message that did not arrive (the entry is consumed).
 */
static inline const char *sender_errq(int fd)
{
	static char out[128];
	char data[64];
	struct rx r;
	int re = wait_events(fd, POLLIN, 1000);

	if (re <= 0 || !(re & POLLERR))
		return "sender has no error queued";
	if (rx_msg(fd, data, sizeof(data), MSG_ERRQUEUE, &r) < 0 ||
	    !r.have_err)
		return "sender: POLLERR but no ONEPIPE_CMSG_RECVERR";
	snprintf(out, sizeof(out),
		 "sender notified: errno %u (%s) code %u offender %u:%u",
		 r.err.ee.ee_errno, strerror(r.err.ee.ee_errno),
		 r.err.ee.ee_code, r.err.offender.sop_host,
		 r.err.offender.sop_port);
	return out;
}

static inline void fill_pattern(unsigned char *p, size_t n,
				unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 131 + seed) ^ (i >> 8));
}

static inline int same_addr(const struct sockaddr_onepipe *x,
		     const struct sockaddr_onepipe *y)
{
	return x->sop_family == y->sop_family && x->sop_port == y->sop_port &&
	       x->sop_host == y->sop_host;
}

/* The port of a socket that just closed: nobody listens there. */
static inline __u16 free_port(void)
{
	struct sockaddr_onepipe a;
	int fd = op_bound(&a);

	if (fd < 0)
		return 0;
	close(fd);
	return a.sop_port;
}

/* Run the onepipe tool (next to this binary: ../tools/onepipe/) quietly. */
static inline int op_tool(const char *args)
{
	char exe[512], cmd[1024];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	snprintf(cmd, sizeof(cmd), "%s/../tools/onepipe/onepipe %s >/dev/null",
		 exe, args);
	return system(cmd);
}

/*
 * The 6.1 harness still runs the test body after SKIP() in a fixture
 * setup, so tests that need a configured host check it themselves.
 */
#define NEED_HOST() do {						\
	if (!self->host)						\
		SKIP(return, "ONEPIPE_TEST_HOST unset: no configured host"); \
} while (0)

/* ------------------------------------------------------------ admission */

/*
 * The admission rule (a scattering is admitted whole or not at all), as
 * both services share it: socket_api.c and socket_rdm.c run these with
 * their own socket type.  They use the harness's ASSERT macros, so they
 * exist only where kselftest_harness.h came first.
 */
#ifdef __KSELFTEST_HARNESS_H

/*
 * A host id no switch has a route to: messages sent there are dropped on
 * the way and wait for an ACK that never comes (best effort: until
 * ack_timeout_ms; reliable: until rdm_retries resends), and keep their
 * send-buffer charge meanwhile.  That is how the tests fill a send buffer
 * whatever the receivers do.
 */
#define NOWHERE_HOST	4000
/* ack_timeout_ms while filling: how long best-effort fill messages hold. */
#define HOLD_MS		4000
/*
 * How long a message of a refused scattering gets to show up (the test
 * fabric's beacons come every 2 ms).  Only a first, quick check: the one
 * that proves nothing was sent is the marker (expect_only_marker()).
 */
#define QUIET_MS	300
/* Waits for what must come; long, since a failure is the only cost. */
#define ADM_WAIT_MS	30000
#define SCAT_MAX	8

static inline long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Bytes charged to @fd's send buffer (SIOCOUTQ), -1 on error. */
static inline int outq(int fd)
{
	int q;

	return ioctl(fd, SIOCOUTQ, &q) ? -1 : q;
}

/* Read and drop what is on @fd's error queue; returns how many. */
static inline int drain_errq(int fd)
{
	char buf[64];
	int n = 0;

	while (recv(fd, buf, sizeof(buf), MSG_ERRQUEUE | MSG_DONTWAIT) >= 0)
		n++;
	return n;
}

/* Set SO_SNDBUF to @v; returns what the socket really has (2v or more). */
static inline int set_sndbuf(int fd, int v)
{
	socklen_t len = sizeof(v);

	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)) ||
	    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &len))
		return -1;
	return v;
}

static inline int set_rcvbuf(int fd, int v)
{
	return setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
}

/* Read /proc/sys/net/onepipe/@name of this netns into *@v. */
static inline int op_sysctl_get(const char *name, int *v)
{
	char path[128];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/sys/net/onepipe/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* Read /proc/sys/net/onepipe/@name of this netns into *@old, write @v. */
static inline int op_sysctl(const char *name, int v, int *old)
{
	char path[128];
	FILE *f;
	int ok;

	if (old && op_sysctl_get(name, old))
		return -1;
	snprintf(path, sizeof(path), "/proc/sys/net/onepipe/%s", name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ok = fprintf(f, "%d\n", v) > 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* ONEPIPE_LAST_TS: 0 and *@ts, or the errno (ENOENT, EINPROGRESS). */
static inline int last_ts(int fd, __u64 *ts)
{
	int r = get_u64(fd, ONEPIPE_LAST_TS, ts);

	return r == -1 ? errno : r;
}

/*
 * One scattering: up to SCAT_MAX messages, each "<tag>" (with its NUL)
 * padded with a pattern to its length, ready for sendmmsg() or for a
 * MSG_MORE chain of sendmsg() calls.
 */
struct scat {
	int n;
	struct mmsghdr mm[SCAT_MAX];
	struct iovec iov[SCAT_MAX];
	struct sockaddr_onepipe to[SCAT_MAX];
	unsigned char *buf[SCAT_MAX];
};

static inline void scat_init(struct scat *s)
{
	memset(s, 0, sizeof(*s));
}

/* Append a message of @len bytes tagged "<prefix><index>"; 0 or -1. */
static inline int scat_add(struct scat *s, const char *prefix,
			   const struct sockaddr_onepipe *to, size_t len)
{
	char tag[32];
	int i = s->n, tl;

	tl = snprintf(tag, sizeof(tag), "%s%d", prefix, i) + 1;
	if (i >= SCAT_MAX || len < (size_t)tl)
		return -1;
	s->buf[i] = malloc(len);
	if (!s->buf[i])
		return -1;
	fill_pattern(s->buf[i], len, (unsigned int)(len + i));
	memcpy(s->buf[i], tag, tl);
	s->to[i] = *to;
	s->iov[i].iov_base = s->buf[i];
	s->iov[i].iov_len = len;
	s->mm[i].msg_hdr.msg_name = &s->to[i];
	s->mm[i].msg_hdr.msg_namelen = sizeof(s->to[i]);
	s->mm[i].msg_hdr.msg_iov = &s->iov[i];
	s->mm[i].msg_hdr.msg_iovlen = 1;
	s->n++;
	return 0;
}

static inline void scat_free(struct scat *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		free(s->buf[i]);
	s->n = 0;
}

static inline int scat_send(int fd, struct scat *s, int flags)
{
	return sendmmsg(fd, s->mm, s->n, flags);
}

/*
 * Send @s as a MSG_MORE chain (@flags on every call, @last_more: the last
 * call has MSG_MORE too).  Returns the index of the first call that
 * failed (errno set), or s->n.
 */
static inline int scat_chain(int fd, struct scat *s, int flags, int last_more)
{
	int i;

	for (i = 0; i < s->n; i++) {
		int f = flags | (i < s->n - 1 || last_more ? MSG_MORE : 0);

		if (sendmsg(fd, &s->mm[i].msg_hdr, f) !=
		    (ssize_t)s->iov[i].iov_len)
			return i;
	}
	return s->n;
}

/* The ways an entry of a scattering can be refused, and their errno. */
enum adm_bad {
	BAD_FAMILY,	/* sop_family AF_INET: EAFNOSUPPORT */
	BAD_ADDRLEN,	/* msg_namelen one byte short: EINVAL */
	BAD_PORT0,	/* port 0: EINVAL */
	BAD_NONAME,	/* no address, not connected: EDESTADDRREQ */
	BAD_TOO_BIG,	/* ONEPIPE_MAX_MSG + 1 bytes: EMSGSIZE */
	BAD_FLAGS,	/* MSG_CONFIRM (chains only): EINVAL */
};

static inline int bad_errno(enum adm_bad bad)
{
	switch (bad) {
	case BAD_FAMILY:
		return EAFNOSUPPORT;
	case BAD_NONAME:
		return EDESTADDRREQ;
	case BAD_TOO_BIG:
		return EMSGSIZE;
	default:
		return EINVAL;
	}
}

/* Spoil entry @i of @s the @bad way (BAD_TOO_BIG is built, not spoilt). */
static inline void scat_spoil(struct scat *s, int i, enum adm_bad bad)
{
	switch (bad) {
	case BAD_FAMILY:
		s->to[i].sop_family = AF_INET;
		break;
	case BAD_ADDRLEN:
		s->mm[i].msg_hdr.msg_namelen = sizeof(s->to[i]) - 1;
		break;
	case BAD_PORT0:
		s->to[i].sop_port = 0;
		break;
	case BAD_NONAME:
		s->mm[i].msg_hdr.msg_name = NULL;
		s->mm[i].msg_hdr.msg_namelen = 0;
		break;
	default:
		break;
	}
}

static inline const char *bad_name(enum adm_bad bad)
{
	static const char *const names[] = {
		"wrong family", "short addrlen", "port 0", "no address",
		"message > ONEPIPE_MAX_MSG", "bad flag",
	};

	return names[bad];
}

/*
 * The first @k messages of @s, refused with @err before anything was
 * stamped, are on @fd's error queue (in any order), each with its payload,
 * ONEPIPE_CMSG_TS 0, ee_errno @err, ee_code ONEPIPE_EE_ABORTED, its length
 * and destination; and nothing else is (within QUIET_MS).
 */
static inline void expect_aborted(struct __test_metadata *_metadata, int fd,
				  struct scat *s, int k, int err)
{
	size_t cap = ONEPIPE_MAX_MSG + 64;
	unsigned char *buf = malloc(cap);
	int seen[SCAT_MAX] = { 0 };
	struct rx r;
	int e, i;

	ASSERT_NE(NULL, buf);
	for (e = 0; e < k; e++) {
		ssize_t len = rx_msg_to(fd, buf, cap, MSG_ERRQUEUE, &r,
					ADM_WAIT_MS);

		ASSERT_LE(0, len) TH_LOG("error-queue entry %d of the %d "
					 "refused messages: %s", e, k,
					 strerror(errno));
		for (i = 0; i < k; i++)
			if (!seen[i] && (size_t)len == s->iov[i].iov_len &&
			    !memcmp(buf, s->buf[i], len))
				break;
		ASSERT_GT(k, i) TH_LOG("error-queue entry %d (%zd bytes, "
				       "\"%.12s\") is none of the %d refused "
				       "messages", e, len, (char *)buf, k);
		seen[i] = 1;
		ASSERT_TRUE(r.have_err) TH_LOG("message %d: no "
					       "ONEPIPE_CMSG_RECVERR", i);
		ASSERT_EQ(err, (int)r.err.ee.ee_errno) TH_LOG(
			"message %d: ee_errno %u (%s), expected %s", i,
			r.err.ee.ee_errno, strerror(r.err.ee.ee_errno),
			strerror(err));
		ASSERT_EQ(SO_EE_ORIGIN_LOCAL, (int)r.err.ee.ee_origin);
		ASSERT_EQ(ONEPIPE_EE_ABORTED, (int)r.err.ee.ee_code) TH_LOG(
			"message %d: ee_code %u", i, r.err.ee.ee_code);
		ASSERT_EQ(len, (ssize_t)r.err.ee.ee_info);
		ASSERT_TRUE(same_addr(&s->to[i], &r.err.offender)) TH_LOG(
			"message %d: offender %u:%u, sent to %u:%u", i,
			r.err.offender.sop_host, r.err.offender.sop_port,
			s->to[i].sop_host, s->to[i].sop_port);
		ASSERT_TRUE(r.have_ts) TH_LOG("message %d: no ONEPIPE_CMSG_TS",
					      i);
		ASSERT_EQ(0ULL, (unsigned long long)r.ts) TH_LOG(
			"message %d was stamped", i);
	}
	ASSERT_FALSE(wait_events(fd, 0, QUIET_MS) & POLLERR) TH_LOG(
		"more on the error queue than the %d refused messages: %s", k,
		sender_errq(fd));
	free(buf);
}

/*
 * @from sends "<tag>" to b; it arrives, stamped ONEPIPE_LAST_TS, which is
 * returned.  It gives a refused scattering a timestamp to leave alone.
 */
static inline __u64 adm_prior(struct __test_metadata *_metadata, int from,
			      int b, const struct sockaddr_onepipe *ba)
{
	char buf[16];
	struct rx r;
	__u64 ts = 0;

	ASSERT_EQ(6, op_sendto(from, "prior", 6, 0, ba)) TH_LOG(
		"sendto: %s", strerror(errno));
	ASSERT_EQ(0, last_ts(from, &ts));
	ASSERT_EQ(6, rx_msg_to(b, buf, sizeof(buf), 0, &r, ADM_WAIT_MS))
		TH_LOG("prior message: %s; %s", strerror(errno),
		       sender_errq(from));
	ASSERT_STREQ("prior", buf);
	ASSERT_EQ(ts, r.ts);
	return ts;
}

/*
 * @fd (b or c) receives, within ADM_WAIT_MS and in order, the messages of
 * @s addressed to @self, each stamped @ts; then nothing more is queued.
 */
static inline void expect_part(struct __test_metadata *_metadata, int fd,
			       const struct sockaddr_onepipe *self,
			       struct scat *s, __u64 ts, const char *who)
{
	size_t cap = ONEPIPE_MAX_MSG + 64;
	unsigned char *buf = malloc(cap);
	struct rx r;
	int i;

	ASSERT_NE(NULL, buf);
	for (i = 0; i < s->n; i++) {
		ssize_t len;

		if (!same_addr(&s->to[i], self))
			continue;
		len = rx_msg_to(fd, buf, cap, 0, &r, ADM_WAIT_MS);
		ASSERT_EQ((ssize_t)s->iov[i].iov_len, len) TH_LOG(
			"%s, message %d (\"%s\"): got %zd bytes (%s)", who, i,
			(char *)s->buf[i], len,
			len < 0 ? strerror(errno) : (char *)buf);
		ASSERT_EQ(0, memcmp(buf, s->buf[i], len)) TH_LOG(
			"%s: got \"%.12s\" where \"%s\" was due", who,
			(char *)buf, (char *)s->buf[i]);
		ASSERT_TRUE(r.have_ts);
		ASSERT_EQ(ts, r.ts) TH_LOG("%s: \"%s\" has another timestamp "
					   "than its scattering", who,
					   (char *)s->buf[i]);
	}
	ASSERT_EQ(-1, recv(fd, buf, cap, MSG_DONTWAIT)) TH_LOG(
		"%s: a message after the scattering: \"%.12s\"", who,
		(char *)buf);
	ASSERT_EQ(EAGAIN, errno);
	free(buf);
}

/*
 * All of @s, sent by @from, reached b and c with one timestamp.  (A
 * reliable scattering sent non-blocking may wait for window first:
 * ONEPIPE_LAST_TS says EINPROGRESS until it is stamped.)
 */
static inline void expect_delivered(struct __test_metadata *_metadata,
				    int from, int fd[3],
				    struct sockaddr_onepipe addr[3],
				    struct scat *s)
{
	long long end = now_ms() + ADM_WAIT_MS;
	__u64 ts = 0;
	int st;

	while ((st = last_ts(from, &ts)) == EINPROGRESS && now_ms() < end)
		usleep(10 * 1000);
	ASSERT_EQ(0, st) TH_LOG("ONEPIPE_LAST_TS: %s", strerror(st));
	expect_part(_metadata, fd[1], &addr[1], s, ts, "b");
	expect_part(_metadata, fd[2], &addr[2], s, ts, "c");
}

/*
 * Nothing of a refused scattering reached b or c: nothing arrives within
 * QUIET_MS, and a marker scattering @from sends to both afterwards is the
 * first and only thing each of them receives.  Delivery is in timestamp
 * order, so a message of the refused scattering, had it gone out, would
 * arrive before the marker.  The marker is stamped after @after (if not
 * 0): the refused scattering did not move the clock back either.
 */
static inline void expect_only_marker(struct __test_metadata *_metadata,
				      int from, int fd[3],
				      struct sockaddr_onepipe addr[3],
				      __u64 after)
{
	struct scat m;
	__u64 ts = 0;

	ASSERT_FALSE(wait_events(fd[1], POLLIN, QUIET_MS) & POLLIN) TH_LOG(
		"b received a message of a refused scattering");
	ASSERT_FALSE(wait_events(fd[2], POLLIN, 0) & POLLIN) TH_LOG(
		"c received a message of a refused scattering");
	scat_init(&m);
	ASSERT_EQ(0, scat_add(&m, "marker-", &addr[1], 16));
	ASSERT_EQ(0, scat_add(&m, "marker-", &addr[2], 16));
	ASSERT_EQ(2, scat_send(from, &m, 0)) TH_LOG("marker: %s",
						    strerror(errno));
	ASSERT_EQ(0, last_ts(from, &ts));
	if (after) {
		ASSERT_TRUE(ts_le(after, ts) && after != ts) TH_LOG(
			"marker stamped %llu, not after %llu",
			(unsigned long long)ts, (unsigned long long)after);
	}
	expect_part(_metadata, fd[1], &addr[1], &m, ts, "b (marker)");
	expect_part(_metadata, fd[2], &addr[2], &m, ts, "c (marker)");
	scat_free(&m);
}

/*
 * sendmmsg() b, c, b whose entry @pos is bad the @bad way: it counts the
 * @pos entries before it (-1 with the errno when @pos is 0), those come
 * back on the error queue, and nothing is delivered or stamped.
 */
static inline void adm_refuse_entry(struct __test_metadata *_metadata,
				    int fd[3], struct sockaddr_onepipe addr[3],
				    enum adm_bad bad, int pos)
{
	int err = bad_errno(bad), i, r;
	__u64 prior, ts = 0;
	struct scat s;

	prior = adm_prior(_metadata, fd[0], fd[1], &addr[1]);
	scat_init(&s);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, scat_add(&s, "refused-", &addr[i == 1 ? 2 : 1],
				      bad == BAD_TOO_BIG && i == pos ?
				      ONEPIPE_MAX_MSG + 1 : 64));
	scat_spoil(&s, pos, bad);
	r = scat_send(fd[0], &s, 0);
	if (pos) {
		ASSERT_EQ(pos, r) TH_LOG("%s in entry %d of 3: sendmmsg "
					 "returned %d (%s)", bad_name(bad),
					 pos, r, r < 0 ? strerror(errno) : "");
	} else {
		ASSERT_EQ(-1, r) TH_LOG("%s in entry 0: sendmmsg returned %d",
					bad_name(bad), r);
		ASSERT_EQ(err, errno) TH_LOG("%s in entry 0: %s",
					     bad_name(bad), strerror(errno));
	}
	expect_aborted(_metadata, fd[0], &s, pos, err);
	ASSERT_EQ(0, last_ts(fd[0], &ts));
	ASSERT_EQ(prior, ts) TH_LOG("ONEPIPE_LAST_TS moved: the refused "
				    "scattering was stamped");
	expect_only_marker(_metadata, fd[0], fd, addr, prior);
	scat_free(&s);
}

/* The same, with the bad entry 1st, 2nd and 3rd. */
static inline void adm_refuse(struct __test_metadata *_metadata, int fd[3],
			      struct sockaddr_onepipe addr[3],
			      enum adm_bad bad)
{
	int pos;

	for (pos = 0; pos < 3; pos++)
		adm_refuse_entry(_metadata, fd, addr, bad, pos);
}

/*
 * A MSG_MORE chain to b and c, then a call to b that fails the @bad way
 * (itself with MSG_MORE when @last_more): that call fails with its errno,
 * the two messages the chain had accepted come back on the error queue,
 * nothing is delivered or stamped, and the socket's next scattering
 * starts afresh (the marker arrives alone).
 */
static inline void adm_refuse_chain(struct __test_metadata *_metadata,
				    int fd[3],
				    struct sockaddr_onepipe addr[3],
				    enum adm_bad bad, int last_more)
{
	int err = bad_errno(bad), flags = last_more ? MSG_MORE : 0, i;
	__u64 prior, ts = 0;
	struct scat s;

	prior = adm_prior(_metadata, fd[0], fd[1], &addr[1]);
	scat_init(&s);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, scat_add(&s, "chain-", &addr[i == 1 ? 2 : 1],
				      bad == BAD_TOO_BIG && i == 2 ?
				      ONEPIPE_MAX_MSG + 1 : 64));
	scat_spoil(&s, 2, bad);
	if (bad == BAD_FLAGS)
		flags |= MSG_CONFIRM;
	for (i = 0; i < 2; i++)
		ASSERT_EQ(64, sendmsg(fd[0], &s.mm[i].msg_hdr, MSG_MORE))
			TH_LOG("chain call %d: %s", i, strerror(errno));
	ASSERT_EQ(-1, sendmsg(fd[0], &s.mm[2].msg_hdr, flags)) TH_LOG(
		"%s accepted", bad_name(bad));
	ASSERT_EQ(err, errno) TH_LOG("%s: %s", bad_name(bad),
				     strerror(errno));
	expect_aborted(_metadata, fd[0], &s, 2, err);
	ASSERT_EQ(0, last_ts(fd[0], &ts));
	ASSERT_EQ(prior, ts) TH_LOG("ONEPIPE_LAST_TS moved: the refused "
				    "chain was stamped");
	expect_only_marker(_metadata, fd[0], fd, addr, prior);
	scat_free(&s);
}

static inline void adm_refuse_chains(struct __test_metadata *_metadata,
				     int fd[3],
				     struct sockaddr_onepipe addr[3],
				     enum adm_bad bad)
{
	adm_refuse_chain(_metadata, fd, addr, bad, 0);
	adm_refuse_chain(_metadata, fd, addr, bad, 1);
}

/*
 * Three entries b, c, b of @total bytes in all, the first two half of it
 * and the third small.
 */
static inline void adm_sized3(struct __test_metadata *_metadata,
			      struct scat *s, const char *prefix,
			      struct sockaddr_onepipe addr[3], int total)
{
	scat_init(s);
	ASSERT_EQ(0, scat_add(s, prefix, &addr[1], total / 2));
	ASSERT_EQ(0, scat_add(s, prefix, &addr[2], total / 2 - 64));
	ASSERT_EQ(0, scat_add(s, prefix, &addr[1],
			      total - 2 * (total / 2) + 64));
}

/*
 * SO_SNDBUF S (as getsockopt() reports it): a scattering of exactly S
 * bytes is admitted whole and delivered; one of S + 1 bytes fails as a
 * whole at its third message (EMSGSIZE), as sendmmsg() and as a chain.
 */
static inline void adm_refuse_over_sndbuf(struct __test_metadata *_metadata,
					  int fd[3],
					  struct sockaddr_onepipe addr[3])
{
	int S = set_sndbuf(fd[0], 16384), r;
	__u64 prior, ts = 0;
	struct scat s;

	ASSERT_LT(0, S);
	ASSERT_GE(2 * ONEPIPE_MAX_MSG, S) TH_LOG("SO_SNDBUF %d", S);
	ASSERT_EQ(0, set_rcvbuf(fd[1], 4 * S));
	ASSERT_EQ(0, set_rcvbuf(fd[2], 4 * S));

	adm_sized3(_metadata, &s, "fits-", addr, S);
	ASSERT_EQ(3, scat_send(fd[0], &s, 0)) TH_LOG(
		"a scattering of exactly SO_SNDBUF (%d) bytes: %s", S,
		strerror(errno));
	expect_delivered(_metadata, fd[0], fd, addr, &s);
	scat_free(&s);

	prior = adm_prior(_metadata, fd[0], fd[1], &addr[1]);
	adm_sized3(_metadata, &s, "over-", addr, S + 1);
	r = scat_send(fd[0], &s, 0);
	ASSERT_EQ(2, r) TH_LOG("SO_SNDBUF + 1 (%d) bytes: sendmmsg returned "
			       "%d (%s)", S + 1, r, strerror(errno));
	expect_aborted(_metadata, fd[0], &s, 2, EMSGSIZE);
	ASSERT_EQ(0, last_ts(fd[0], &ts));
	ASSERT_EQ(prior, ts);
	expect_only_marker(_metadata, fd[0], fd, addr, prior);
	ASSERT_EQ(0, last_ts(fd[0], &prior));

	ASSERT_EQ(2, scat_chain(fd[0], &s, 0, 0)) TH_LOG(
		"SO_SNDBUF + 1 bytes as a chain: %s", strerror(errno));
	ASSERT_EQ(EMSGSIZE, errno) TH_LOG("%s", strerror(errno));
	expect_aborted(_metadata, fd[0], &s, 2, EMSGSIZE);
	ASSERT_EQ(0, last_ts(fd[0], &ts));
	ASSERT_EQ(prior, ts);
	expect_only_marker(_metadata, fd[0], fd, addr, prior);
	scat_free(&s);
}

/* close() with a MSG_MORE chain under way sends none of it. */
static inline void adm_close_chain(struct __test_metadata *_metadata,
				   int fd[3], struct sockaddr_onepipe addr[3])
{
	struct sockaddr_onepipe da;
	struct scat s;
	int d;

	scat_init(&s);
	ASSERT_EQ(0, scat_add(&s, "closed-", &addr[1], 64));
	ASSERT_EQ(0, scat_add(&s, "closed-", &addr[2], 64));
	ASSERT_EQ(2, scat_chain(fd[0], &s, 0, 1)) TH_LOG("%s",
							strerror(errno));
	close(fd[0]);
	fd[0] = -1;
	d = op_bound(&da);
	ASSERT_LE(0, d);
	expect_only_marker(_metadata, d, fd, addr, 0);
	close(d);
	scat_free(&s);
}

/*
 * A send buffer charged above half of SO_SNDBUF (no POLLOUT) but below it
 * admits a scattering, and its later messages overshoot SO_SNDBUF instead
 * of failing with EAGAIN; after it the socket is full.  The charge is
 * small messages to NOWHERE_HOST, counted with SIOCOUTQ.  @chain: the
 * scattering is a MSG_MORE chain of non-blocking calls.
 */
static inline void adm_overshoot(struct __test_metadata *_metadata,
				 int fd[3], struct sockaddr_onepipe addr[3],
				 int chain)
{
	int a = fd[0], S, q = 0, inc = 0, saved = 0, i, r, err = 0, type;
	socklen_t tl;
	char small[200];
	struct scat s;

	S = set_sndbuf(a, 12000);
	ASSERT_LE(9000, S);
	memset(small, 'h', sizeof(small));
	ASSERT_EQ(0, op_sysctl("ack_timeout_ms", HOLD_MS, &saved));
	for (i = 0; i < 1000; i++) {
		int q1;

		/*
		 * A host never heard from gets one reliable message at a
		 * time: one host id each.
		 */
		struct sockaddr_onepipe nowhere = op_addr(NOWHERE_HOST + i,
							  PORT_A);

		q = outq(a);
		if (q < 0 || q + inc >= S)
			break;
		if (op_sendto(a, small, sizeof(small), MSG_DONTWAIT,
			      &nowhere) != SZ(small)) {
			err = errno;
			break;
		}
		q1 = outq(a);
		if (q1 - q > inc)
			inc = q1 - q;
	}
	op_sysctl("ack_timeout_ms", saved, NULL);
	ASSERT_EQ(0, err) TH_LOG("filling to %d of %d bytes: %s", q, S,
				 strerror(err));
	ASSERT_GT(S, q);
	ASSERT_LE(S / 2, q) TH_LOG("filled only %d of %d bytes", q, S);
	ASSERT_FALSE(wait_events(a, POLLOUT, 0) & POLLOUT) TH_LOG(
		"POLLOUT with %d of %d bytes charged", q, S);

	scat_init(&s);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, scat_add(&s, "over-", &addr[i == 1 ? 2 : 1],
				      3000));
	/*
	 * Best effort gives a message's charge back at its ACK, and b's
	 * and c's may come before the check below (CI, 2026-11-27: "a full
	 * socket (36096 of 24000 bytes) took a scattering"): one more
	 * message, to a host that never answers, keeps the socket full
	 * until its ACK timeout.  A reliable charge stays until the commit,
	 * which the charge's own messages to NOWHERE_HOST hold back.
	 */
	tl = sizeof(type);
	ASSERT_EQ(0, getsockopt(a, SOL_SOCKET, SO_TYPE, &type, &tl));
	if (type == SOCK_DGRAM) {
		struct sockaddr_onepipe held = op_addr(NOWHERE_HOST + 1000,
						       PORT_A);

		ASSERT_EQ(0, scat_add(&s, "over-", &held, 3000));
	}
	r = chain ? scat_chain(a, &s, MSG_DONTWAIT, 0) :
		    scat_send(a, &s, MSG_DONTWAIT);
	ASSERT_EQ(s.n, r) TH_LOG("%d of %d bytes charged: %d of %d messages "
				 "accepted (%s)", q, S, r, s.n,
				 strerror(errno));
	q = outq(a);
	ASSERT_LT(S, q) TH_LOG("the scattering took the charge only to %d of "
			       "%d bytes: nothing was tested", q, S);
	ASSERT_EQ(-1, op_sendto(a, "x", 1, MSG_DONTWAIT, &addr[1])) TH_LOG(
		"a full socket (%d of %d bytes) took a scattering", q, S);
	ASSERT_EQ(EAGAIN, errno);
	expect_delivered(_metadata, a, fd, addr, &s);
	scat_free(&s);
}

/* Another thread's send while a chain is being built (adm_chain_owned). */
struct other_send {
	pthread_t tid;
	int fd;
	struct sockaddr_onepipe to;
	int r_nb, err_nb;	/* non-blocking send */
	int pollout;		/* poll() right after it */
	int tried;		/* set once those two are done */
	int r, err;		/* blocking send */
	long long done_ms;
};

static inline void *other_send_fn(void *arg)
{
	struct other_send *o = arg;

	o->r_nb = op_sendto(o->fd, "other", 6, MSG_DONTWAIT, &o->to);
	o->err_nb = errno;
	o->pollout = wait_events(o->fd, POLLOUT, 0) & POLLOUT;
	__atomic_store_n(&o->tried, 1, __ATOMIC_RELEASE);
	o->r = op_sendto(o->fd, "other", 6, 0, &o->to);
	o->err = errno;
	o->done_ms = now_ms();
	return NULL;
}

/*
 * A scattering belongs to the thread that builds it: while the main thread
 * has a MSG_MORE chain open on a, another thread's non-blocking send gets
 * EAGAIN, poll() shows it no POLLOUT (or its poll loop would spin until
 * the chain closes), and its blocking send waits until the chain closes.
 * The chain arrives whole with one timestamp, the other message after it
 * with a later one.
 */
static inline void adm_chain_owned(struct __test_metadata *_metadata,
				   int fd[3], struct sockaddr_onepipe addr[3])
{
	struct other_send o = { .fd = fd[0], .to = addr[2] };
	unsigned char buf[64];
	struct rx r, rb;
	long long closed;
	struct scat s;
	__u64 ts = 0;

	scat_init(&s);
	ASSERT_EQ(0, scat_add(&s, "owned-", &addr[1], 64));
	ASSERT_EQ(0, scat_add(&s, "owned-", &addr[2], 64));
	ASSERT_EQ(64, sendmsg(fd[0], &s.mm[0].msg_hdr, MSG_MORE));
	ASSERT_EQ(0, pthread_create(&o.tid, NULL, other_send_fn, &o));
	/* Then give it time to block in its blocking send. */
	closed = now_ms() + ADM_WAIT_MS;
	while (!__atomic_load_n(&o.tried, __ATOMIC_ACQUIRE) &&
	       now_ms() < closed)
		usleep(10 * 1000);
	usleep(300 * 1000);
	closed = now_ms();
	ASSERT_EQ(64, sendmsg(fd[0], &s.mm[1].msg_hdr, 0)) TH_LOG(
		"closing the chain: %s", strerror(errno));
	pthread_join(o.tid, NULL);
	ASSERT_EQ(-1, o.r_nb) TH_LOG("another thread's message was taken "
				     "while a chain was open");
	ASSERT_EQ(EAGAIN, o.err_nb) TH_LOG("%s", strerror(o.err_nb));
	ASSERT_EQ(6, o.r) TH_LOG("blocking send: %s", strerror(o.err));
	ASSERT_LE(closed, o.done_ms) TH_LOG("the blocking send returned "
					    "before the chain closed");
	ASSERT_FALSE(o.pollout) TH_LOG("POLLOUT for a thread whose send gets "
				       "EAGAIN until another thread's chain "
				       "closes: its poll loop spins");
	/* The chain, then "other" on its own, stamped later. */
	ASSERT_EQ(0, last_ts(fd[0], &ts));
	ASSERT_EQ(64, rx_msg_to(fd[1], buf, sizeof(buf), 0, &rb,
				ADM_WAIT_MS));
	ASSERT_EQ(0, memcmp(buf, s.buf[0], 64));
	ASSERT_EQ(64, rx_msg_to(fd[2], buf, sizeof(buf), 0, &r, ADM_WAIT_MS));
	ASSERT_EQ(0, memcmp(buf, s.buf[1], 64)) TH_LOG(
		"c's first message is \"%.12s\"", (char *)buf);
	ASSERT_EQ(rb.ts, r.ts) TH_LOG("the chain has two timestamps");
	ASSERT_EQ(6, rx_msg_to(fd[2], buf, sizeof(buf), 0, &r, ADM_WAIT_MS));
	ASSERT_STREQ("other", (char *)buf);
	ASSERT_TRUE(ts_le(rb.ts, r.ts) && rb.ts != r.ts);
	ASSERT_EQ(ts, r.ts) TH_LOG("ONEPIPE_LAST_TS is not the last "
				   "scattering's");
	scat_free(&s);
}

/* Starts a MSG_MORE chain of one message and exits without closing it. */
struct orphan_chain {
	int fd;
	struct scat *s;
	int r;
};

static inline void *orphan_chain_fn(void *arg)
{
	struct orphan_chain *o = arg;

	o->r = sendmsg(o->fd, &o->s->mm[0].msg_hdr, MSG_MORE);
	return NULL;
}

/*
 * A thread that starts a scattering and exits without closing it does not
 * hold the socket for good: poll() shows POLLOUT again (at once, or within
 * a second for a thread already blocked), the next send goes out, and the
 * orphaned message comes back, unsent, with ECONNABORTED.
 */
static inline void adm_orphan_chain(struct __test_metadata *_metadata,
				    int fd[3], struct sockaddr_onepipe addr[3])
{
	struct orphan_chain o = { .fd = fd[0] };
	unsigned char buf[64];
	pthread_t tid;
	struct scat s;
	struct rx r;

	scat_init(&s);
	ASSERT_EQ(0, scat_add(&s, "orphan-", &addr[1], 64));
	o.s = &s;
	ASSERT_EQ(0, pthread_create(&tid, NULL, orphan_chain_fn, &o));
	ASSERT_EQ(0, pthread_join(tid, NULL));
	ASSERT_EQ(64, o.r) TH_LOG("the thread's MSG_MORE send: %s",
				  strerror(errno));
	ASSERT_TRUE(wait_events(fd[0], POLLOUT, ADM_WAIT_MS) & POLLOUT) TH_LOG(
		"no POLLOUT after the chain's thread exited");
	ASSERT_EQ(6, op_sendto(fd[0], "after", 6, MSG_DONTWAIT, &addr[2]))
		TH_LOG("send after the chain's thread exited: %s",
		       strerror(errno));
	ASSERT_EQ(6, rx_msg_to(fd[2], buf, sizeof(buf), 0, &r, ADM_WAIT_MS));
	ASSERT_STREQ("after", (char *)buf);
	expect_aborted(_metadata, fd[0], &s, 1, ECONNABORTED);
	ASSERT_EQ(-1, recv(fd[1], buf, sizeof(buf), MSG_DONTWAIT)) TH_LOG(
		"the orphaned message was delivered");
	scat_free(&s);
}

/*
 * A socket a whose next scattering cannot be admitted, made so and undone
 * by each service's own means (socket_api.c: a send buffer full of
 * messages to NOWHERE_HOST; socket_rdm.c: a scattering waiting for
 * window).
 */
struct adm {
	int *fd;
	struct sockaddr_onepipe *addr;
	int held;	/* what the filling sent to b, to be read back */
	/* Make a unable to take a scattering (or fail the test). */
	void (*fill)(struct __test_metadata *_metadata, struct adm *x);
	/*
	 * Let a send again, or start to: NULL, or what went wrong (no
	 * ASSERT: it runs in threads too).
	 */
	const char *(*release)(struct adm *x);
};

struct adm_thread {
	pthread_t tid;
	struct adm *x;
	int delay_ms;
	const char *why;
};

static inline void *adm_release_later(void *arg)
{
	struct adm_thread *t = arg;

	usleep(t->delay_ms * 1000);
	t->why = t->x->release(t->x);
	return NULL;
}

/* @x->release() after @delay_ms, in a thread that never takes SIGALRM. */
static inline int adm_release_start(struct adm_thread *t, struct adm *x,
				    int delay_ms)
{
	sigset_t block, old;
	int r;

	t->x = x;
	t->delay_ms = delay_ms;
	t->why = NULL;
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	r = pthread_create(&t->tid, NULL, adm_release_later, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* The scattering these tests try to send: b, c, b. */
static inline void adm_three(struct __test_metadata *_metadata,
			     struct adm *x, struct scat *s,
			     const char *prefix)
{
	int i;

	scat_init(s);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, scat_add(s, prefix, &x->addr[i == 1 ? 2 : 1],
				      100));
}

/*
 * Let a go and wait until poll() says it takes a scattering again.  What
 * the filling left on the error queue (best effort: its messages timing
 * out) is read and dropped, or poll() would keep returning POLLERR.
 */
static inline void adm_unfill(struct __test_metadata *_metadata,
			      struct adm *x)
{
	long long end = now_ms() + ADM_WAIT_MS;
	const char *why = x->release(x);
	int re = 0, left;

	ASSERT_EQ(NULL, why) TH_LOG("%s", why);
	while (!(re & POLLOUT) && (left = (int)(end - now_ms())) > 0) {
		re = wait_events(x->fd[0], POLLOUT, left);
		if (re > 0 && (re & POLLERR))
			drain_errq(x->fd[0]);
	}
	ASSERT_TRUE(re & POLLOUT) TH_LOG("no POLLOUT within %d ms",
					 ADM_WAIT_MS);
}

/*
 * Non-blocking, no room: sendmmsg() of 3 gets -1 EAGAIN (never a count of
 * 1 or 2), so does the first call of a MSG_MORE chain, and nothing is
 * stamped; once poll() reports POLLOUT the same scattering goes out
 * whole, with one timestamp, and is the first thing b and c receive.
 */
static inline void adm_eagain(struct __test_metadata *_metadata,
			      struct adm *x)
{
	int a = x->fd[0], st0, st1, r;
	__u64 t0 = 0, t1 = 0;
	struct scat s;

	x->fill(_metadata, x);
	st0 = last_ts(a, &t0);
	ASSERT_FALSE(wait_events(a, POLLOUT, 0) & POLLOUT) TH_LOG(
		"POLLOUT on a socket that cannot take a scattering");
	adm_three(_metadata, x, &s, "eagain-");
	r = scat_send(a, &s, MSG_DONTWAIT);
	ASSERT_EQ(-1, r) TH_LOG("sendmmsg of 3 returned %d", r);
	ASSERT_EQ(EAGAIN, errno) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(-1, sendmsg(a, &s.mm[0].msg_hdr, MSG_MORE | MSG_DONTWAIT))
		TH_LOG("the first call of a chain was admitted");
	ASSERT_EQ(EAGAIN, errno) TH_LOG("%s", strerror(errno));
	st1 = last_ts(a, &t1);
	ASSERT_EQ(st0, st1) TH_LOG("ONEPIPE_LAST_TS: %s, then %s",
				   strerror(st0), strerror(st1));
	ASSERT_EQ(t0, t1) TH_LOG("ONEPIPE_LAST_TS moved");
	adm_unfill(_metadata, x);
	r = scat_send(a, &s, MSG_DONTWAIT);
	ASSERT_EQ(3, r) TH_LOG("after POLLOUT: sendmmsg returned %d (%s)", r,
			       strerror(errno));
	expect_delivered(_metadata, a, x->fd, x->addr, &s);
	scat_free(&s);
}

/*
 * Blocking, no room: sendmmsg() waits until another thread lets a go
 * (after 500 ms), then sends the whole scattering.
 */
static inline void adm_blocking(struct __test_metadata *_metadata,
				struct adm *x)
{
	struct adm_thread t;
	struct scat s;
	long long t0, el;
	int r;

	x->fill(_metadata, x);
	adm_three(_metadata, x, &s, "blocked-");
	ASSERT_EQ(0, adm_release_start(&t, x, 500));
	t0 = now_ms();
	r = scat_send(x->fd[0], &s, 0);
	el = now_ms() - t0;
	pthread_join(t.tid, NULL);
	ASSERT_EQ(3, r) TH_LOG("blocking sendmmsg returned %d after %lld ms "
			       "(%s)", r, el, strerror(errno));
	ASSERT_EQ(NULL, t.why) TH_LOG("%s", t.why);
	ASSERT_LE(400, el) TH_LOG("returned after %lld ms: it did not wait "
				  "for room", el);
	expect_delivered(_metadata, x->fd[0], x->fd, x->addr, &s);
	scat_free(&s);
}

/* SO_SNDTIMEO 500 ms, no room: -1 EAGAIN after about that, nothing sent. */
static inline void adm_sndtimeo(struct __test_metadata *_metadata,
				struct adm *x)
{
	struct timeval tv = { .tv_usec = 500000 };
	int a = x->fd[0], st0, st1, r;
	__u64 t0 = 0, t1 = 0;
	long long start, el;
	struct scat s;

	x->fill(_metadata, x);
	st0 = last_ts(a, &t0);
	adm_three(_metadata, x, &s, "timeout-");
	ASSERT_EQ(0, setsockopt(a, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	start = now_ms();
	r = scat_send(a, &s, 0);
	el = now_ms() - start;
	ASSERT_EQ(-1, r) TH_LOG("sendmmsg returned %d after %lld ms", r, el);
	ASSERT_EQ(EAGAIN, errno) TH_LOG("%s after %lld ms", strerror(errno),
					el);
	ASSERT_LE(400, el) TH_LOG("gave up after %lld ms", el);
	ASSERT_GT(ADM_WAIT_MS, el);
	st1 = last_ts(a, &t1);
	ASSERT_EQ(st0, st1);
	ASSERT_EQ(t0, t1) TH_LOG("ONEPIPE_LAST_TS moved");
	adm_unfill(_metadata, x);
	expect_only_marker(_metadata, a, x->fd, x->addr, st0 ? 0 : t0);
	scat_free(&s);
}

static volatile sig_atomic_t adm_alarms;

static inline void adm_on_alarm(int sig)
{
	(void)sig;
	adm_alarms++;
}

/*
 * No room, blocking, and a SIGALRM 300 ms into the wait.  Its handler
 * without SA_RESTART: sendmmsg() fails with EINTR, nothing sent or
 * stamped.  With SA_RESTART: the call goes on waiting, and once another
 * thread lets a go (after 1.5 s) sends the whole scattering.
 */
static inline void adm_signal(struct __test_metadata *_metadata,
			      struct adm *x, int restart)
{
	struct itimerval it = { .it_value = { .tv_usec = 300000 } };
	struct sigaction sa = {
		.sa_handler = adm_on_alarm,
		.sa_flags = restart ? SA_RESTART : 0,
	};
	int a = x->fd[0], st0, st1, r, alarms;
	__u64 t0 = 0, t1 = 0;
	struct adm_thread t;
	long long start, el;
	struct scat s;

	x->fill(_metadata, x);
	st0 = last_ts(a, &t0);
	adm_three(_metadata, x, &s, "signal-");
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	adm_alarms = 0;
	if (restart) {
		ASSERT_EQ(0, adm_release_start(&t, x, 1500));
	}
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	start = now_ms();
	r = scat_send(a, &s, 0);
	el = now_ms() - start;
	alarms = adm_alarms;
	if (restart) {
		pthread_join(t.tid, NULL);
		ASSERT_EQ(1, alarms) TH_LOG("no signal while sendmmsg waited "
					    "(it returned %d after %lld ms)",
					    r, el);
		ASSERT_EQ(3, r) TH_LOG("sendmmsg returned %d after %lld ms "
				       "(%s)", r, el, strerror(errno));
		ASSERT_EQ(NULL, t.why) TH_LOG("%s", t.why);
		expect_delivered(_metadata, a, x->fd, x->addr, &s);
		scat_free(&s);
		return;
	}
	ASSERT_EQ(-1, r) TH_LOG("sendmmsg returned %d after %lld ms, %d "
				"signals", r, el, alarms);
	ASSERT_EQ(EINTR, errno) TH_LOG("%s after %lld ms", strerror(errno),
				       el);
	ASSERT_EQ(1, alarms);
	st1 = last_ts(a, &t1);
	ASSERT_EQ(st0, st1);
	ASSERT_EQ(t0, t1) TH_LOG("ONEPIPE_LAST_TS moved");
	adm_unfill(_metadata, x);
	expect_only_marker(_metadata, a, x->fd, x->addr, st0 ? 0 : t0);
	scat_free(&s);
}

/*
 * The loop a program is meant to write: non-blocking sendmmsg(), on
 * EAGAIN poll(POLLOUT) and retry.  ST_THREADS threads send ST_QUOTA
 * scatterings each, of 1 to 3 messages of up to ST_MAX_LEN bytes to b
 * and c; threads 0 and 1 share socket a, threads 2 and 3 have one each.
 */
#define ST_THREADS	4
#define ST_QUOTA	75
#define ST_MAX_LEN	3000
#define ST_MAGIC	0x1b1e5ca7u
/* A thread that has not sent its quota by then is stuck. */
#define ST_DEADLINE_MS	90000
#define ST_POLL_MS	10000

struct st_hdr {
	__u32 magic;
	__u16 thread;
	__u16 nmsgs;
	__u32 scat;
	__u32 idx;
};

struct st_sender {
	pthread_t tid;
	int fd, id;
	int partner;		/* the thread sharing fd, or -1 */
	struct sockaddr_onepipe dst[2];
	int admitted;		/* scatterings sent whole */
	int eagain;		/* calls refused with EAGAIN */
	int pollout;		/* polls that reported POLLOUT */
	int lost;		/* ... and yet the next call got EAGAIN */
	int shorts;		/* calls that sent part of a scattering */
	int errq;		/* error-queue entries read */
	long msgs;
	int nmsgs[ST_QUOTA];
	char why[96];
};

struct st_got {
	__u16 thread, nmsgs;
	__u32 scat, idx;
	__u64 ts;
};

#define ST_GOT_MAX	(ST_THREADS * ST_QUOTA * 3)

struct st_receiver {
	pthread_t tid;
	int fd;
	int stop;
	int n, bad;
	struct st_got got[ST_GOT_MAX];
};

static inline void *st_send(void *arg)
{
	struct st_sender *t = arg;
	static const size_t hl = sizeof(struct st_hdr);
	unsigned char buf[3][ST_MAX_LEN];
	unsigned int seed = 0x9e3779b9u * (t->id + 1);
	long long deadline = now_ms() + ST_DEADLINE_MS;
	struct sockaddr_onepipe to[3];
	int after_pollout = 0, n = 0;
	struct mmsghdr mm[3];
	struct iovec iov[3];

	memset(mm, 0, sizeof(mm));
	while (t->admitted < ST_QUOTA) {
		int i, r, re;

		if (now_ms() > deadline) {
			snprintf(t->why, sizeof(t->why), "%d of %d "
				 "scatterings sent in %d ms", t->admitted,
				 ST_QUOTA, ST_DEADLINE_MS);
			break;
		}
		/* A new scattering; a refused one is tried again as is. */
		if (!n) {
			n = 1 + rand_r(&seed) % 3;
			for (i = 0; i < n; i++) {
				struct st_hdr h = {
					.magic = ST_MAGIC, .thread = t->id,
					.nmsgs = n, .scat = t->admitted,
					.idx = i,
				};
				size_t len = hl + rand_r(&seed) %
					     (ST_MAX_LEN - hl + 1);

				fill_pattern(buf[i], len, i);
				memcpy(buf[i], &h, hl);
				to[i] = t->dst[rand_r(&seed) % 2];
				iov[i].iov_base = buf[i];
				iov[i].iov_len = len;
				mm[i].msg_hdr.msg_name = &to[i];
				mm[i].msg_hdr.msg_namelen = sizeof(to[i]);
				mm[i].msg_hdr.msg_iov = &iov[i];
				mm[i].msg_hdr.msg_iovlen = 1;
			}
		}
		r = sendmmsg(t->fd, mm, n, MSG_DONTWAIT);
		if (r == n) {
			t->nmsgs[t->admitted++] = n;
			t->msgs += n;
			n = 0;
			after_pollout = 0;
			continue;
		}
		if (r >= 0) {
			t->shorts++;
			snprintf(t->why, sizeof(t->why), "sendmmsg sent %d of "
				 "a scattering of %d", r, n);
			break;
		}
		if (errno != EAGAIN) {
			snprintf(t->why, sizeof(t->why), "sendmmsg: %s",
				 strerror(errno));
			break;
		}
		t->eagain++;
		t->lost += after_pollout;
		after_pollout = 0;
		re = wait_events(t->fd, POLLOUT, ST_POLL_MS);
		if (re > 0 && (re & POLLERR))
			t->errq += drain_errq(t->fd);
		if (re > 0 && (re & POLLOUT)) {
			t->pollout++;
			after_pollout = 1;
		} else if (re <= 0) {
			snprintf(t->why, sizeof(t->why), "EAGAIN, then no "
				 "POLLOUT within %d ms", ST_POLL_MS);
			break;
		}
	}
	return NULL;
}

static inline void *st_recv(void *arg)
{
	struct st_receiver *rc = arg;
	unsigned char buf[ST_MAX_LEN + 16];
	struct st_hdr h;
	struct rx r;

	for (;;) {
		ssize_t len = rx_msg_to(rc->fd, buf, sizeof(buf), 0, &r, 100);

		if (len < 0) {
			if (__atomic_load_n(&rc->stop, __ATOMIC_ACQUIRE))
				break;
			continue;
		}
		memcpy(&h, buf, sizeof(h));
		if ((size_t)len < sizeof(h) || h.magic != ST_MAGIC ||
		    !r.have_ts || rc->n >= ST_GOT_MAX) {
			rc->bad++;
			continue;
		}
		rc->got[rc->n].thread = h.thread;
		rc->got[rc->n].nmsgs = h.nmsgs;
		rc->got[rc->n].scat = h.scat;
		rc->got[rc->n].idx = h.idx;
		rc->got[rc->n].ts = r.ts;
		__atomic_store_n(&rc->n, rc->n + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * Every call sends a whole scattering or gets EAGAIN (no short count),
 * every thread gets through its quota, and there is no spinning: after a
 * poll() that reported POLLOUT the next call is admitted; for the two
 * threads that share a socket, unless the other one took the room in
 * between, which costs the loser one more poll() per scattering the other
 * sent at most.  A receiver sees one timestamp per scattering, never two;
 * on the reliable service every message of every scattering, once.
 * @reliable: SOCK_RDM.
 */
static inline void adm_poll_loop(struct __test_metadata *_metadata,
				 int fd[3], struct sockaddr_onepipe addr[3],
				 int reliable)
{
	struct st_sender t[ST_THREADS];
	struct st_receiver *rx = calloc(2, sizeof(*rx));
	__u64 (*ts)[ST_QUOTA] = calloc(ST_THREADS, sizeof(*ts));
	__u8 (*seen)[ST_QUOTA] = calloc(ST_THREADS, sizeof(*seen));
	struct sockaddr_onepipe own;
	int own_fd[2], i, j, eagain = 0, pollout = 0, got, last_got;
	long total = 0, complete = 0;
	long long idle_since;

	ASSERT_TRUE(rx && ts && seen);
	for (i = 0; i < 2; i++) {
		own_fd[i] = op_bound(&own);
		ASSERT_LE(0, own_fd[i]);
	}
	memset(t, 0, sizeof(t));
	for (i = 0; i < ST_THREADS; i++) {
		t[i].id = i;
		t[i].fd = i < 2 ? fd[0] : own_fd[i - 2];
		t[i].partner = i < 2 ? 1 - i : -1;
		t[i].dst[0] = addr[1];
		t[i].dst[1] = addr[2];
		/* Room for the largest scattering, and not much more. */
		ASSERT_LE(3 * ST_MAX_LEN, set_sndbuf(t[i].fd, 6000));
	}
	for (i = 0; i < 2; i++) {
		rx[i].fd = fd[1 + i];
		ASSERT_EQ(0, set_rcvbuf(rx[i].fd, 4 << 20));
		ASSERT_EQ(0, pthread_create(&rx[i].tid, NULL, st_recv, &rx[i]));
	}
	for (i = 0; i < ST_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&t[i].tid, NULL, st_send, &t[i]));
	for (i = 0; i < ST_THREADS; i++) {
		pthread_join(t[i].tid, NULL);
		total += t[i].msgs;
		eagain += t[i].eagain;
		pollout += t[i].pollout;
	}
	/* Wait for the receivers: all of it, or (best effort) no progress. */
	last_got = -1;
	idle_since = now_ms();
	for (;;) {
		got = __atomic_load_n(&rx[0].n, __ATOMIC_ACQUIRE) +
		      __atomic_load_n(&rx[1].n, __ATOMIC_ACQUIRE);
		if (got >= total)
			break;
		if (got != last_got) {
			last_got = got;
			idle_since = now_ms();
		}
		if (now_ms() - idle_since > (reliable ? ADM_WAIT_MS : 3000))
			break;
		usleep(20 * 1000);
	}
	for (i = 0; i < 2; i++) {
		__atomic_store_n(&rx[i].stop, 1, __ATOMIC_RELEASE);
		pthread_join(rx[i].tid, NULL);
	}
	for (i = 0; i < ST_THREADS; i++)
		TH_LOG("thread %d (socket %s): %d scatterings (%ld messages), "
		       "%d EAGAIN, %d POLLOUT, %d EAGAIN right after POLLOUT, "
		       "%d error-queue entries%s%s", i,
		       t[i].partner < 0 ? "of its own" : "shared",
		       t[i].admitted, t[i].msgs, t[i].eagain, t[i].pollout,
		       t[i].lost, t[i].errq, t[i].why[0] ? "; " : "",
		       t[i].why);

	for (i = 0; i < ST_THREADS; i++) {
		ASSERT_EQ(0, t[i].shorts) TH_LOG("thread %d: %s", i, t[i].why);
		ASSERT_EQ(ST_QUOTA, t[i].admitted) TH_LOG("thread %d: %s", i,
							 t[i].why);
		if (t[i].partner < 0) {
			ASSERT_EQ(0, t[i].lost) TH_LOG(
				"thread %d: POLLOUT, then EAGAIN, %d times on "
				"a socket nobody else used", i, t[i].lost);
		} else {
			ASSERT_LE(t[i].lost, t[t[i].partner].admitted);
		}
		if (reliable) {
			ASSERT_EQ(0, t[i].errq) TH_LOG("thread %d: %d send "
						       "failures", i,
						       t[i].errq);
		}
	}
	ASSERT_LT(0, eagain) TH_LOG("no send buffer ever filled: the poll "
				    "loop was not tested");
	ASSERT_LT(0, pollout);

	/* One timestamp per scattering, each message once. */
	for (j = 0; j < 2; j++) {
		ASSERT_EQ(0, rx[j].bad) TH_LOG("receiver %d: %d foreign or "
					       "unstamped messages", j,
					       rx[j].bad);
		for (i = 0; i < rx[j].n; i++) {
			struct st_got *g = &rx[j].got[i];

			ASSERT_GT(ST_THREADS, g->thread);
			ASSERT_GT(t[g->thread].admitted, (int)g->scat) TH_LOG(
				"a scattering that was never admitted arrived");
			ASSERT_EQ(t[g->thread].nmsgs[g->scat], g->nmsgs);
			ASSERT_GT(g->nmsgs, g->idx);
			ASSERT_FALSE(seen[g->thread][g->scat] & (1 << g->idx))
				TH_LOG("thread %d scattering %u message %u "
				       "twice", g->thread, g->scat, g->idx);
			seen[g->thread][g->scat] |= 1 << g->idx;
			if (!ts[g->thread][g->scat])
				ts[g->thread][g->scat] = g->ts;
			ASSERT_EQ(ts[g->thread][g->scat], g->ts) TH_LOG(
				"thread %d scattering %u: two timestamps",
				g->thread, g->scat);
		}
	}
	for (i = 0; i < ST_THREADS; i++)
		for (j = 0; j < t[i].admitted; j++)
			complete += seen[i][j] == (1 << t[i].nmsgs[j]) - 1;
	TH_LOG("%ld of %ld messages delivered; %ld of %d scatterings whole",
	       (long)(rx[0].n + rx[1].n), total, complete,
	       ST_THREADS * ST_QUOTA);
	if (reliable) {
		ASSERT_EQ(total, (long)(rx[0].n + rx[1].n));
		ASSERT_EQ(ST_THREADS * ST_QUOTA, complete);
	}
	close(own_fd[0]);
	close(own_fd[1]);
	free(rx);
	free(ts);
	free(seen);
}

#endif /* __KSELFTEST_HARNESS_H */

#endif /* OP_TEST_H */
