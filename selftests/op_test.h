/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the AF_ONEPIPE socket tests share: addresses, sending, receiving
 * with control messages, the error queue, the onepipe tool.  Included by
 * socket_api.c (SOCK_DGRAM) and socket_rdm.c (SOCK_RDM, which defines
 * OP_TEST_TYPE first); each is one kselftest-harness binary.
 */
#ifndef OP_TEST_H
#define OP_TEST_H

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/errqueue.h>
#include <linux/onepipe.h>

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
 * Wait up to RX_TIMEOUT_MS for a message (or an error-queue entry when
 * flags has MSG_ERRQUEUE) and receive it with its control messages.
 * Returns the recvmsg() result; on timeout -1 with errno ETIMEDOUT.
 */
static inline ssize_t rx_msg(int fd, void *buf, size_t cap, int flags,
			     struct rx *r)
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
	re = wait_events(fd, ev, RX_TIMEOUT_MS);
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

#endif /* OP_TEST_H */
