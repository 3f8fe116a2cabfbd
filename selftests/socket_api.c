// SPDX-License-Identifier: GPL-2.0
/*
 * AF_ONEPIPE socket API selftest.
 *
 * The "sock" tests check the socket calls and their error codes.  The "fab"
 * tests exercise the data path on a one-host fabric: the host sends to
 * itself through a software switch, so every message really goes through
 * the transport, the switch's barrier rewriting and the reorder queue.
 * They include the admission rule of op_test.h (a scattering is admitted
 * whole or not at all), with a send buffer full of messages awaiting
 * their ACK as what keeps a socket from taking the next scattering.
 *
 * Environment:
 *   ONEPIPE_TEST_HOST  host id of the host this binary runs in (set by
 *                      socket_api.sh, which runs it in h1 of a one-host
 *                      fabric).  Without it the tests that need a
 *                      configured host are skipped, never passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <linux/errqueue.h>
#include <linux/onepipe.h>

/* The 6.1 harness itself is not -Wextra clean (an unused handler arg). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#include "op_test.h"

/* ---------------------------------------------------------------- socket */

/* Fixture-less tests; TEST() trips -Wunused-parameter in the 6.1 harness. */
FIXTURE(family) {
	int unused;
};

FIXTURE_SETUP(family)
{
}

FIXTURE_TEARDOWN(family)
{
}

TEST_F(family, socket_dgram)
{
	int fd = socket(AF_ONEPIPE, SOCK_DGRAM, 0);

	ASSERT_LE(0, fd) TH_LOG("socket(AF_ONEPIPE, SOCK_DGRAM): %s",
				strerror(errno));
	close(fd);
}

TEST_F(family, socket_stream_unsupported)
{
	ASSERT_EQ(-1, socket(AF_ONEPIPE, SOCK_STREAM, 0));
	ASSERT_EQ(ESOCKTNOSUPPORT, errno);
}

TEST_F(family, socket_bad_protocol)
{
	ASSERT_EQ(-1, socket(AF_ONEPIPE, SOCK_DGRAM, 1));
	ASSERT_EQ(EPROTONOSUPPORT, errno);
}

/*
 * A fresh network namespace has the module's per-netns state but no host
 * configuration: sending must fail with ENETDOWN.  Each harness test runs
 * in its own child, so unsharing here does not affect other tests.
 */
TEST_F(family, send_unconfigured_netns)
{
	struct sockaddr_onepipe to = op_addr(1, PORT_A);
	int fd;

	ASSERT_EQ(0, unshare(CLONE_NEWNET)) TH_LOG("unshare: %s",
						   strerror(errno));
	fd = op_socket();
	ASSERT_LE(0, fd);
	ASSERT_EQ(-1, op_sendto(fd, "x", 1, 0, &to));
	ASSERT_EQ(ENETDOWN, errno);
	close(fd);
}

/* ------------------------------------------------ one socket, API errors */

FIXTURE(sock) {
	int fd;
	__u32 host;
};

FIXTURE_SETUP(sock)
{
	self->host = test_host();
	self->fd = op_socket();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(sock)
{
	close(self->fd);
}

TEST_F(sock, bind_wrong_family)
{
	struct sockaddr_onepipe a = op_addr(0, PORT_A);

	a.sop_family = AF_INET;
	ASSERT_EQ(-1, bind(self->fd, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(EAFNOSUPPORT, errno);
}

TEST_F(sock, bind_short_addrlen)
{
	struct sockaddr_onepipe a = op_addr(0, PORT_A);

	ASSERT_EQ(-1, bind(self->fd, (struct sockaddr *)&a, sizeof(a) - 1));
	ASSERT_EQ(EINVAL, errno);
}

TEST_F(sock, bind_port_in_use)
{
	int fd2 = op_socket();

	NEED_HOST();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, op_bind(self->fd, 0, PORT_A)) TH_LOG("bind: %s",
							 strerror(errno));
	ASSERT_EQ(-1, op_bind(fd2, 0, PORT_A));
	ASSERT_EQ(EADDRINUSE, errno);
	close(fd2);
}

TEST_F(sock, bind_port_reusable_after_close)
{
	int fd2 = op_socket();

	NEED_HOST();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, op_bind(fd2, 0, PORT_B));
	close(fd2);
	ASSERT_EQ(0, op_bind(self->fd, 0, PORT_B)) TH_LOG("rebind: %s",
							 strerror(errno));
}

TEST_F(sock, bind_other_host)
{
	NEED_HOST();
	ASSERT_EQ(-1, op_bind(self->fd, self->host + 1, PORT_A));
	ASSERT_EQ(EADDRNOTAVAIL, errno);
}

TEST_F(sock, bind_own_host_id)
{
	NEED_HOST();
	ASSERT_EQ(0, op_bind(self->fd, self->host, PORT_A)) TH_LOG(
		"bind to own host id %u: %s", self->host, strerror(errno));
}

TEST_F(sock, bind_twice)
{
	NEED_HOST();
	ASSERT_EQ(0, op_bind(self->fd, 0, PORT_A));
	ASSERT_EQ(-1, op_bind(self->fd, 0, PORT_B));
	ASSERT_EQ(EINVAL, errno);
}

TEST_F(sock, bind_ephemeral)
{
	struct sockaddr_onepipe a;
	socklen_t len = sizeof(a);

	NEED_HOST();
	ASSERT_EQ(0, op_bind(self->fd, 0, ONEPIPE_PORT_ANY));
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, getsockname(self->fd, (struct sockaddr *)&a, &len));
	ASSERT_EQ(SZ(a), (ssize_t)len);
	ASSERT_EQ(AF_ONEPIPE, a.sop_family);
	ASSERT_LE(ONEPIPE_PORT_EPHEMERAL, a.sop_port);
}

TEST_F(sock, getsockname_reports_host_id)
{
	struct sockaddr_onepipe a;
	socklen_t len = sizeof(a);

	NEED_HOST();
	ASSERT_EQ(0, op_bind(self->fd, 0, PORT_A));
	ASSERT_EQ(0, getsockname(self->fd, (struct sockaddr *)&a, &len));
	ASSERT_EQ(PORT_A, a.sop_port);
	ASSERT_EQ(self->host, a.sop_host);
}

TEST_F(sock, send_no_destination)
{
	ASSERT_EQ(-1, send(self->fd, "x", 1, 0));
	ASSERT_EQ(EDESTADDRREQ, errno);
}

TEST_F(sock, sendto_bad_family)
{
	struct sockaddr_onepipe to = op_addr(1, PORT_A);

	to.sop_family = AF_INET;
	ASSERT_EQ(-1, op_sendto(self->fd, "x", 1, 0, &to));
	ASSERT_EQ(EAFNOSUPPORT, errno);
}

TEST_F(sock, sendto_short_addr)
{
	struct sockaddr_onepipe to = op_addr(1, PORT_A);

	ASSERT_EQ(-1, sendto(self->fd, "x", 1, 0, (struct sockaddr *)&to,
			     sizeof(to) - 1));
	ASSERT_EQ(EINVAL, errno);
}

TEST_F(sock, send_too_big)
{
	struct sockaddr_onepipe to = op_addr(self->host, PORT_A);
	size_t n = ONEPIPE_MAX_MSG + 1;
	char *buf = calloc(1, n);

	NEED_HOST();
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(-1, op_sendto(self->fd, buf, n, 0, &to));
	ASSERT_EQ(EMSGSIZE, errno);
	free(buf);
}

TEST_F(sock, send_oob)
{
	struct sockaddr_onepipe to = op_addr(self->host, PORT_A);

	NEED_HOST();
	ASSERT_EQ(-1, op_sendto(self->fd, "x", 1, MSG_OOB, &to));
	ASSERT_EQ(EOPNOTSUPP, errno);
}

TEST_F(sock, recv_empty_dontwait)
{
	char buf[16];

	NEED_HOST();
	ASSERT_EQ(0, op_bind(self->fd, 0, 0));
	ASSERT_EQ(-1, recv(self->fd, buf, sizeof(buf), MSG_DONTWAIT));
	ASSERT_EQ(EAGAIN, errno);
	ASSERT_EQ(-1, recv(self->fd, buf, sizeof(buf),
			   MSG_DONTWAIT | MSG_ERRQUEUE));
	ASSERT_EQ(EAGAIN, errno);
}

TEST_F(sock, poll_idle)
{
	int re;

	NEED_HOST();
	ASSERT_EQ(0, op_bind(self->fd, 0, 0));
	re = wait_events(self->fd, POLLIN | POLLOUT, 0);
	ASSERT_LT(0, re);
	EXPECT_TRUE(re & POLLOUT);
	EXPECT_FALSE(re & POLLIN);
	EXPECT_FALSE(re & (POLLERR | POLLHUP));
}

TEST_F(sock, sndbuf_rcvbuf)
{
	int opts[] = { SO_RCVBUF, SO_SNDBUF };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(opts); i++) {
		int v = 96 * 1024, got = 0;
		socklen_t len = sizeof(got);

		ASSERT_EQ(0, setsockopt(self->fd, SOL_SOCKET, opts[i], &v,
					sizeof(v)));
		ASSERT_EQ(0, getsockopt(self->fd, SOL_SOCKET, opts[i], &got,
					&len));
		/* The core doubles the value for bookkeeping overhead. */
		ASSERT_LE(v, got) TH_LOG("option %d: set %d got %d",
					 opts[i], v, got);
	}
}

TEST_F(sock, timestamp_non_decreasing)
{
	__u64 prev = 0, ts;
	int i;

	NEED_HOST();
	ASSERT_EQ(0, get_u64(self->fd, ONEPIPE_TIMESTAMP, &prev));
	ASSERT_EQ(0ULL, prev & ~ONEPIPE_TS_MASK);
	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, get_u64(self->fd, ONEPIPE_TIMESTAMP, &ts));
		ASSERT_TRUE(ts_le(prev, ts)) TH_LOG("%llu then %llu",
			(unsigned long long)prev, (unsigned long long)ts);
		prev = ts;
	}
}

/* Timestamps are CLOCK_REALTIME ns masked to 48 bits (no skew set). */
TEST_F(sock, timestamp_tracks_realtime)
{
	struct timespec t;
	__u64 ts, now, d;

	NEED_HOST();
	ASSERT_EQ(0, get_u64(self->fd, ONEPIPE_TIMESTAMP, &ts));
	clock_gettime(CLOCK_REALTIME, &t);
	now = ((__u64)t.tv_sec * 1000000000ULL + t.tv_nsec) & ONEPIPE_TS_MASK;
	d = ts_le(ts, now) ? now - ts : ts - now;
	ASSERT_GT(1000000000ULL, d & ONEPIPE_TS_MASK) TH_LOG(
		"ts %llu realtime %llu", (unsigned long long)ts,
		(unsigned long long)now);
}

TEST_F(sock, last_ts_before_send)
{
	__u64 ts;

	ASSERT_EQ(-1, get_u64(self->fd, ONEPIPE_LAST_TS, &ts));
	ASSERT_EQ(ENOENT, errno);
}

TEST_F(sock, ordered_get_set)
{
	int v = -1;
	socklen_t len = sizeof(v);

	ASSERT_EQ(0, getsockopt(self->fd, SOL_ONEPIPE, ONEPIPE_ORDERED, &v,
				&len));
	ASSERT_EQ(1, v);
	v = 0;
	ASSERT_EQ(0, setsockopt(self->fd, SOL_ONEPIPE, ONEPIPE_ORDERED, &v,
				sizeof(v)));
	v = -1;
	ASSERT_EQ(0, getsockopt(self->fd, SOL_ONEPIPE, ONEPIPE_ORDERED, &v,
				&len));
	ASSERT_EQ(0, v);
	v = 1;
	ASSERT_EQ(0, setsockopt(self->fd, SOL_ONEPIPE, ONEPIPE_ORDERED, &v,
				sizeof(v)));
	ASSERT_EQ(0, getsockopt(self->fd, SOL_ONEPIPE, ONEPIPE_ORDERED, &v,
				&len));
	ASSERT_EQ(1, v);
}

TEST_F(sock, unknown_sockopt)
{
	int v = 0;
	socklen_t len = sizeof(v);

	ASSERT_EQ(-1, getsockopt(self->fd, SOL_ONEPIPE, 0x7fff, &v, &len));
	ASSERT_EQ(ENOPROTOOPT, errno);
	ASSERT_EQ(-1, setsockopt(self->fd, SOL_ONEPIPE, 0x7fff, &v,
				 sizeof(v)));
	ASSERT_EQ(ENOPROTOOPT, errno);
}

/* ------------------------------------------- data path, one-host fabric */

FIXTURE(fab) {
	OP_FIXTURE_SOCKETS;
};

/* net.onepipe.be_window before a test changed it; -1: unchanged. */
static int bew_saved = -1;

/* Set back what a test changed, also when an ASSERT ended it early. */
static void bew_restore(void)
{
	if (bew_saved >= 0)
		op_sysctl("be_window", bew_saved, NULL);
	bew_saved = -1;
}

FIXTURE_SETUP(fab)
{
	self->host = op_fixture_host(self->fd);
	if (!self->host)
		return;
	ASSERT_EQ(0, op_bound3(self->fd, self->addr))
		TH_LOG("bound sockets: %s", strerror(errno));
}

FIXTURE_TEARDOWN(fab)
{
	op_close3(self->fd);
	bew_restore();
}

TEST_F(fab, round_trip)
{
	static const char msg[] = "hello, one pipe";
	char buf[64];
	struct rx r;
	__u64 last;

	NEED_HOST();
	ASSERT_EQ(SZ(msg), op_sendto(self->a, msg, sizeof(msg), 0,
					 &self->ba)) TH_LOG("sendto: %s",
							    strerror(errno));
	ASSERT_EQ(0, get_u64(self->a, ONEPIPE_LAST_TS, &last));
	ASSERT_EQ(SZ(msg), rx_msg(self->b, buf, sizeof(buf), 0, &r))
		TH_LOG("recv: %s; %s", strerror(errno), sender_errq(self->a));
	ASSERT_EQ(0, memcmp(buf, msg, sizeof(msg)));
	ASSERT_EQ(SZ(struct sockaddr_onepipe), (ssize_t)r.srclen);
	ASSERT_TRUE(same_addr(&self->aa, &r.src)) TH_LOG(
		"src %u:%u expected %u:%u", r.src.sop_host, r.src.sop_port,
		self->aa.sop_host, self->aa.sop_port);
	ASSERT_TRUE(r.have_ts) TH_LOG("no ONEPIPE_CMSG_TS");
	ASSERT_EQ(last, r.ts);
	/* Exactly one copy. */
	ASSERT_EQ(-1, recv(self->b, buf, sizeof(buf), MSG_DONTWAIT));
	ASSERT_EQ(EAGAIN, errno);
}

TEST_F(fab, barrier_passes_delivered_ts)
{
	struct rx r;
	__u64 bar;
	char buf[8];

	NEED_HOST();
	ASSERT_EQ(1, op_sendto(self->a, "b", 1, 0, &self->ba));
	ASSERT_EQ(1, rx_msg(self->b, buf, sizeof(buf), 0, &r))
		TH_LOG("%s", sender_errq(self->a));
	ASSERT_TRUE(r.have_ts);
	ASSERT_EQ(0, get_u64(self->b, ONEPIPE_BARRIER, &bar));
	/* Delivered means the barrier has moved past the message's ts. */
	ASSERT_TRUE(ts_le(r.ts + 1, bar)) TH_LOG("barrier %llu, ts %llu",
		(unsigned long long)bar, (unsigned long long)r.ts);
}

TEST_F(fab, sendmmsg_one_scattering)
{
	struct sockaddr_onepipe to[2] = { self->ba, self->ca };
	const char *payload[2] = { "to-b", "to-c" };
	struct mmsghdr mm[2];
	struct iovec iov[2];
	struct rx rb, rc;
	char buf[16];
	__u64 last;
	int i;

	NEED_HOST();
	memset(mm, 0, sizeof(mm));
	for (i = 0; i < 2; i++) {
		iov[i].iov_base = (void *)payload[i];
		iov[i].iov_len = 5;
		mm[i].msg_hdr.msg_name = &to[i];
		mm[i].msg_hdr.msg_namelen = sizeof(to[i]);
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	ASSERT_EQ(2, sendmmsg(self->a, mm, 2, 0)) TH_LOG("sendmmsg: %s",
							 strerror(errno));
	ASSERT_EQ(0, get_u64(self->a, ONEPIPE_LAST_TS, &last));
	ASSERT_EQ(5, rx_msg(self->b, buf, sizeof(buf), 0, &rb))
		TH_LOG("%s", sender_errq(self->a));
	ASSERT_STREQ("to-b", buf);
	ASSERT_EQ(5, rx_msg(self->c, buf, sizeof(buf), 0, &rc))
		TH_LOG("%s", sender_errq(self->a));
	ASSERT_STREQ("to-c", buf);
	ASSERT_TRUE(rb.have_ts && rc.have_ts);
	ASSERT_EQ(rb.ts, rc.ts);
	ASSERT_EQ(last, rb.ts);
}

static int send_more(int fd, const char *s, const struct sockaddr_onepipe *to,
		     int flags)
{
	struct iovec iov = { .iov_base = (void *)s, .iov_len = strlen(s) + 1 };
	struct msghdr mh = {
		.msg_name = (void *)to, .msg_namelen = sizeof(*to),
		.msg_iov = &iov, .msg_iovlen = 1,
	};

	return sendmsg(fd, &mh, flags);
}

TEST_F(fab, msg_more_one_scattering)
{
	struct rx r1, r2, r3;
	char buf[16];
	__u64 last;

	NEED_HOST();
	ASSERT_EQ(3, send_more(self->a, "m1", &self->ba, MSG_MORE));
	ASSERT_EQ(3, send_more(self->a, "m2", &self->ca, MSG_MORE));
	ASSERT_EQ(3, send_more(self->a, "m3", &self->ba, 0));
	ASSERT_EQ(0, get_u64(self->a, ONEPIPE_LAST_TS, &last));
	ASSERT_EQ(3, rx_msg(self->b, buf, sizeof(buf), 0, &r1))
		TH_LOG("%s", sender_errq(self->a));
	ASSERT_STREQ("m1", buf);
	ASSERT_EQ(3, rx_msg(self->b, buf, sizeof(buf), 0, &r3))
		TH_LOG("%s", sender_errq(self->a));
	ASSERT_STREQ("m3", buf);
	ASSERT_EQ(3, rx_msg(self->c, buf, sizeof(buf), 0, &r2))
		TH_LOG("%s", sender_errq(self->a));
	ASSERT_STREQ("m2", buf);
	ASSERT_TRUE(r1.have_ts && r2.have_ts && r3.have_ts);
	ASSERT_EQ(last, r1.ts);
	ASSERT_EQ(last, r2.ts);
	ASSERT_EQ(last, r3.ts);
}

static void check_big(struct __test_metadata *_metadata,
		      FIXTURE_DATA(fab) *self, size_t n)
{
	unsigned char *out = malloc(n), *in = malloc(n + 16);
	int rcvbuf = 4 * (int)n;
	struct rx r;

	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, in);
	ASSERT_EQ(0, setsockopt(self->b, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				sizeof(rcvbuf)));
	fill_pattern(out, n, (unsigned int)n);
	ASSERT_EQ((ssize_t)n, op_sendto(self->a, out, n, 0, &self->ba))
		TH_LOG("sendto %zu bytes: %s", n, strerror(errno));
	ASSERT_EQ((ssize_t)n, rx_msg(self->b, in, n + 16, 0, &r))
		TH_LOG("recv %zu bytes: %s; %s", n, strerror(errno),
		       sender_errq(self->a));
	ASSERT_EQ(0, memcmp(in, out, n));
	ASSERT_FALSE(r.flags & MSG_TRUNC);
	free(out);
	free(in);
}

TEST_F(fab, fragmented_60000)
{
	NEED_HOST();
	check_big(_metadata, self, 60000);
}

TEST_F(fab, max_msg_size)
{
	NEED_HOST();
	check_big(_metadata, self, ONEPIPE_MAX_MSG);
}

TEST_F(fab, no_port_error_queue)
{
	static const char msg[] = "nobody home";
	struct sockaddr_onepipe to;
	char buf[64];
	struct rx r;
	__u64 last;
	int re;

	NEED_HOST();
	to = op_addr(self->host, free_port());
	ASSERT_NE(0, to.sop_port);
	ASSERT_EQ(SZ(msg), op_sendto(self->a, msg, sizeof(msg), 0, &to));
	ASSERT_EQ(0, get_u64(self->a, ONEPIPE_LAST_TS, &last));

	/* POLLERR is reported whatever events were asked for. */
	re = wait_events(self->a, POLLIN, RX_TIMEOUT_MS);
	ASSERT_LT(0, re) TH_LOG("no POLLERR within %d ms", RX_TIMEOUT_MS);
	ASSERT_TRUE(re & POLLERR);

	ASSERT_EQ(SZ(msg), rx_msg(self->a, buf, sizeof(buf),
				      MSG_ERRQUEUE, &r))
		TH_LOG("MSG_ERRQUEUE: %s", strerror(errno));
	ASSERT_TRUE(r.flags & MSG_ERRQUEUE);
	ASSERT_EQ(0, memcmp(buf, msg, sizeof(msg)));
	ASSERT_TRUE(r.have_err) TH_LOG("no ONEPIPE_CMSG_RECVERR");
	ASSERT_EQ(ECONNREFUSED, (int)r.err.ee.ee_errno);
	ASSERT_EQ(SO_EE_ORIGIN_LOCAL, (int)r.err.ee.ee_origin);
	ASSERT_EQ(ONEPIPE_EE_NOPORT, (int)r.err.ee.ee_code);
	ASSERT_EQ(SZ(msg), r.err.ee.ee_info);
	ASSERT_TRUE(same_addr(&to, &r.err.offender)) TH_LOG(
		"offender %u:%u expected %u:%u", r.err.offender.sop_host,
		r.err.offender.sop_port, to.sop_host, to.sop_port);
	ASSERT_TRUE(r.have_ts) TH_LOG("no ONEPIPE_CMSG_TS on error queue");
	ASSERT_EQ(last, r.ts);

	/* Consumed: no more error, and nothing on the normal queue. */
	re = wait_events(self->a, POLLIN, 0);
	ASSERT_FALSE(re & (POLLERR | POLLIN));
	ASSERT_EQ(-1, recv(self->a, buf, sizeof(buf),
			   MSG_DONTWAIT | MSG_ERRQUEUE));
	ASSERT_EQ(EAGAIN, errno);
}

/*
 * SIOCOUTQ 0 means every failure report can be read: the module keeps a
 * unit of the charge until the report is on the error queue (the kernel
 * uncharges before it queues).  Spinning on SIOCOUTQ, as op-traffic
 * --drain does more slowly, gives a report still in flight when the
 * charge drops its best chance to be caught.  A report can take up to
 * the ACK timeout (a lost NAK ends as ETIMEDOUT), which the sanitizer
 * guest's fabric stretches to 20 s: each round waits that long, and the
 * spinner yields, as a switch process may need its CPU.
 */
TEST_F_TIMEOUT(fab, outq_zero_reports_queued, 360)
{
	static const char msg[] = "nobody home";
	struct sockaddr_onepipe to;
	int round, i, q, wait_ms;
	long long end;

	NEED_HOST();
	ASSERT_EQ(0, op_sysctl_get("ack_timeout_ms", &wait_ms));
	wait_ms += RX_TIMEOUT_MS;
	to = op_addr(self->host, free_port());
	ASSERT_NE(0, to.sop_port);
	for (round = 0; round < 10; round++) {
		for (i = 0; i < 10; i++)
			ASSERT_EQ(SZ(msg), op_sendto(self->a, msg, sizeof(msg),
						     0, &to));
		end = now_ms() + wait_ms;
		while ((q = outq(self->a)) > 0 && now_ms() < end)
			sched_yield();
		ASSERT_EQ(0, q) TH_LOG("round %d: SIOCOUTQ %d after %d ms",
				       round, q, wait_ms);
		ASSERT_EQ(10, drain_errq(self->a))
			TH_LOG("round %d: SIOCOUTQ 0 before every report",
			       round);
	}
}

TEST_F(fab, epoll_wakes_receiver)
{
	struct epoll_event ev = { .events = EPOLLIN }, out[4];
	char buf[8];
	int ep;

	NEED_HOST();
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ev.data.fd = self->b;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->b, &ev));
	ASSERT_EQ(0, epoll_wait(ep, out, 4, 0));
	ASSERT_EQ(2, op_sendto(self->a, "e", 2, 0, &self->ba));
	ASSERT_EQ(1, epoll_wait(ep, out, 4, RX_TIMEOUT_MS));
	ASSERT_EQ(self->b, out[0].data.fd);
	ASSERT_TRUE(!!(out[0].events & EPOLLIN));
	ASSERT_EQ(2, recv(self->b, buf, sizeof(buf), MSG_DONTWAIT));
	ASSERT_EQ(0, epoll_wait(ep, out, 4, 0));
	close(ep);
}

TEST_F(fab, connect_default_destination)
{
	struct sockaddr_onepipe peer;
	socklen_t len = sizeof(peer);
	char buf[16];
	struct rx r;

	NEED_HOST();
	ASSERT_EQ(0, connect(self->a, (struct sockaddr *)&self->ba,
			     sizeof(self->ba))) TH_LOG("connect: %s",
						       strerror(errno));
	ASSERT_EQ(0, getpeername(self->a, (struct sockaddr *)&peer, &len));
	ASSERT_TRUE(same_addr(&self->ba, &peer));
	ASSERT_EQ(6, send(self->a, "dflt!", 6, 0)) TH_LOG("send: %s",
							  strerror(errno));
	ASSERT_EQ(6, rx_msg(self->b, buf, sizeof(buf), 0, &r))
		TH_LOG("%s", sender_errq(self->a));
	ASSERT_STREQ("dflt!", buf);
	ASSERT_TRUE(same_addr(&self->aa, &r.src));
}

/*
 * Two senders interleave; the receiver must see (ts, src host, src port)
 * non-decreasing and each sender's messages in the order it sent them.
 */
TEST_F(fab, delivery_order_two_senders)
{
	const int per_sender = 40;
	__u32 next[2] = { 0, 0 };
	__u64 pts = 0;
	__u16 pport = 0;
	int i;

	NEED_HOST();
	for (i = 0; i < 2 * per_sender; i++) {
		int s = i & 1;
		__u32 seq = i / 2;

		ASSERT_EQ(SZ(seq), op_sendto(s ? self->c : self->a, &seq,
						 sizeof(seq), 0, &self->ba));
	}
	for (i = 0; i < 2 * per_sender; i++) {
		struct rx r;
		__u32 seq;
		int s;

		ASSERT_EQ(SZ(seq), rx_msg(self->b, &seq, sizeof(seq), 0,
					      &r)) TH_LOG("message %d: %s; a: %s",
							  i, strerror(errno),
							  sender_errq(self->a));
		ASSERT_TRUE(r.have_ts);
		s = r.src.sop_port == self->ca.sop_port;
		ASSERT_EQ(next[s], seq);
		next[s]++;
		if (i) {
			ASSERT_TRUE(ts_le(pts, r.ts));
			if (pts == r.ts)
				ASSERT_LE(pport, r.src.sop_port);
		}
		pts = r.ts;
		pport = r.src.sop_port;
	}
}

/* ONEPIPE_ORDERED=0 bypasses the reorder queue but still delivers. */
TEST_F(fab, unordered_still_delivers)
{
	int off = 0;
	char buf[8];
	struct rx r;

	NEED_HOST();
	ASSERT_EQ(0, setsockopt(self->a, SOL_ONEPIPE, ONEPIPE_ORDERED, &off,
				sizeof(off)));
	ASSERT_EQ(3, op_sendto(self->a, "u!", 3, 0, &self->ba));
	ASSERT_EQ(3, rx_msg(self->b, buf, sizeof(buf), 0, &r))
		TH_LOG("%s", sender_errq(self->a));
	ASSERT_STREQ("u!", buf);
	ASSERT_TRUE(same_addr(&self->aa, &r.src));
}

/*
 * A host taken down while a scattering is being built: the call that
 * closes it fails with ENETDOWN, and the messages earlier calls accepted
 * are reported on the error queue rather than vanishing.  They were never
 * stamped: their notifications carry timestamp 0 (and, unlike the other
 * refusals, keep ONEPIPE_EE_DOWN), and ONEPIPE_LAST_TS still has nothing
 * to name.
 */
TEST_F(family, scattering_cut_by_host_down)
{
	struct sockaddr_onepipe to = op_addr(9, PORT_A);
	char buf[16];
	socklen_t len = sizeof(__u64);
	struct rx r;
	__u64 ts;
	int fd, i;

	ASSERT_EQ(0, unshare(CLONE_NEWNET)) TH_LOG("unshare: %s",
						   strerror(errno));
	ASSERT_EQ(0, system("ip link set lo up"));
	ASSERT_EQ(0, op_tool("host set id 9 transport udp local 127.0.0.1 "
			     "uplink 127.0.0.1:5999"));
	fd = op_socket();
	ASSERT_LE(0, fd);
	ASSERT_EQ(5, op_sendto(fd, "msg-0", 5, MSG_MORE, &to));
	ASSERT_EQ(5, op_sendto(fd, "msg-1", 5, MSG_MORE, &to));
	ASSERT_EQ(0, op_tool("host down"));
	ASSERT_EQ(-1, op_sendto(fd, "msg-2", 5, 0, &to));
	ASSERT_EQ(ENETDOWN, errno);

	for (i = 0; i < 2; i++) {
		char want[6];

		snprintf(want, sizeof(want), "msg-%d", i);
		ASSERT_EQ(5, rx_msg(fd, buf, sizeof(buf), MSG_ERRQUEUE, &r))
			TH_LOG("error queue entry %d: %s", i, strerror(errno));
		ASSERT_EQ(0, memcmp(buf, want, 5));
		ASSERT_TRUE(r.have_err);
		ASSERT_EQ(ENETDOWN, (int)r.err.ee.ee_errno);
		ASSERT_EQ(ONEPIPE_EE_DOWN, (int)r.err.ee.ee_code);
		ASSERT_TRUE(same_addr(&to, &r.err.offender));
		ASSERT_TRUE(r.have_ts);
		ASSERT_EQ((__u64)0, r.ts);
	}
	ASSERT_EQ(-1, recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_ERRQUEUE));
	ASSERT_EQ(EAGAIN, errno);
	ASSERT_EQ(-1, getsockopt(fd, SOL_ONEPIPE, ONEPIPE_LAST_TS, &ts, &len));
	ASSERT_EQ(ENOENT, errno);
	close(fd);
}

/* ------------------------------------------------ admission (op_test.h) */

/*
 * Best effort: a's send buffer full of messages to NOWHERE_HOST, which
 * keep their charge for HOLD_MS (their ACK never comes); a takes no more.
 */
static void adm_fill(struct __test_metadata *_metadata, struct adm *x)
{
	struct sockaddr_onepipe nowhere = op_addr(NOWHERE_HOST, PORT_A);
	int a = x->fd[0], saved = 0, err = 0, i, S;
	char buf[2000];

	S = set_sndbuf(a, 8192);
	ASSERT_LT(0, S);
	memset(buf, 'f', sizeof(buf));
	ASSERT_EQ(0, op_sysctl("ack_timeout_ms", HOLD_MS, &saved));
	for (i = 0; i < 1000; i++) {
		if (op_sendto(a, buf, sizeof(buf), MSG_DONTWAIT, &nowhere) !=
		    SZ(buf)) {
			err = errno;
			break;
		}
	}
	op_sysctl("ack_timeout_ms", saved, NULL);
	ASSERT_EQ(EAGAIN, err) TH_LOG("filling: %s after %d messages",
				      strerror(err), i);
	ASSERT_LT(0, i);
	ASSERT_LE(S, outq(a)) TH_LOG("EAGAIN with %d of %d bytes charged",
				     outq(a), S);
	x->held = 0;
}

/* The fill's messages time out on their own, HOLD_MS after they left. */
static const char *adm_release(struct adm *x)
{
	(void)x;
	return NULL;
}

#define ADM_SELF	{ .fd = self->fd, .addr = self->addr,		\
			  .fill = adm_fill, .release = adm_release }

TEST_F(fab, refuse_bad_family)
{
	NEED_HOST();
	adm_refuse(_metadata, self->fd, self->addr, BAD_FAMILY);
}

TEST_F(fab, refuse_short_addrlen)
{
	NEED_HOST();
	adm_refuse(_metadata, self->fd, self->addr, BAD_ADDRLEN);
}

TEST_F(fab, refuse_port0)
{
	NEED_HOST();
	adm_refuse(_metadata, self->fd, self->addr, BAD_PORT0);
}

TEST_F(fab, refuse_no_address)
{
	NEED_HOST();
	adm_refuse(_metadata, self->fd, self->addr, BAD_NONAME);
}

TEST_F(fab, refuse_too_big)
{
	NEED_HOST();
	adm_refuse(_metadata, self->fd, self->addr, BAD_TOO_BIG);
}

TEST_F(fab, refuse_over_sndbuf)
{
	NEED_HOST();
	adm_refuse_over_sndbuf(_metadata, self->fd, self->addr);
}

TEST_F(fab, chain_refused_bad_family)
{
	NEED_HOST();
	adm_refuse_chains(_metadata, self->fd, self->addr, BAD_FAMILY);
}

TEST_F(fab, chain_refused_port0)
{
	NEED_HOST();
	adm_refuse_chains(_metadata, self->fd, self->addr, BAD_PORT0);
}

TEST_F(fab, chain_refused_too_big)
{
	NEED_HOST();
	adm_refuse_chains(_metadata, self->fd, self->addr, BAD_TOO_BIG);
}

TEST_F(fab, chain_refused_bad_flags)
{
	NEED_HOST();
	adm_refuse_chains(_metadata, self->fd, self->addr, BAD_FLAGS);
}

TEST_F(fab, chain_owned_by_its_thread)
{
	NEED_HOST();
	adm_chain_owned(_metadata, self->fd, self->addr);
}

TEST_F(fab, orphaned_chain_aborted)
{
	NEED_HOST();
	adm_orphan_chain(_metadata, self->fd, self->addr);
}

TEST_F(fab, close_discards_chain)
{
	NEED_HOST();
	adm_close_chain(_metadata, self->fd, self->addr);
}

TEST_F(fab, overshoot_sendmmsg)
{
	NEED_HOST();
	adm_overshoot(_metadata, self->fd, self->addr, 0);
}

TEST_F(fab, overshoot_chain)
{
	NEED_HOST();
	adm_overshoot(_metadata, self->fd, self->addr, 1);
}

TEST_F(fab, full_eagain_whole)
{
	struct adm x = ADM_SELF;

	NEED_HOST();
	adm_eagain(_metadata, &x);
}

TEST_F(fab, full_blocking_waits)
{
	struct adm x = ADM_SELF;

	NEED_HOST();
	adm_blocking(_metadata, &x);
}

TEST_F(fab, full_sndtimeo)
{
	struct adm x = ADM_SELF;

	NEED_HOST();
	adm_sndtimeo(_metadata, &x);
}

TEST_F(fab, full_signal_eintr)
{
	struct adm x = ADM_SELF;

	NEED_HOST();
	adm_signal(_metadata, &x, 0);
}

TEST_F(fab, full_signal_restart)
{
	struct adm x = ADM_SELF;

	NEED_HOST();
	adm_signal(_metadata, &x, 1);
}

TEST_F_TIMEOUT(fab, poll_loop_whole, 240)
{
	NEED_HOST();
	adm_poll_loop(_metadata, self->fd, self->addr, 0);
}

/*
 * A message to a host nobody answers for (NOWHERE_HOST): no ACK, and no
 * answer to the queries about it either, so its notification says that
 * its fate is unknown (ONEPIPE_EE_UNKNOWN, ETIMEDOUT), never that it was
 * not delivered; and not before its deadline.
 */
TEST_F_TIMEOUT(fab, unanswered_is_unknown, 120)
{
	static const char msg[] = "anyone?";
	struct sockaddr_onepipe to = op_addr(NOWHERE_HOST, PORT_A);
	long long t0, el;
	int saved = 0, re;
	char buf[64];
	struct rx r;

	NEED_HOST();
	ASSERT_EQ(0, op_sysctl("ack_timeout_ms", 300, &saved));
	t0 = now_ms();
	ASSERT_EQ(SZ(msg), op_sendto(self->a, msg, sizeof(msg), 0, &to));
	re = wait_events(self->a, POLLIN, RX_TIMEOUT_MS);
	el = now_ms() - t0;
	op_sysctl("ack_timeout_ms", saved, NULL);
	ASSERT_TRUE(re > 0 && (re & POLLERR)) TH_LOG(
		"no notification within %d ms", RX_TIMEOUT_MS);
	ASSERT_EQ(SZ(msg), rx_msg(self->a, buf, sizeof(buf), MSG_ERRQUEUE,
				  &r));
	ASSERT_TRUE(r.have_err);
	ASSERT_EQ(ONEPIPE_EE_UNKNOWN, (int)r.err.ee.ee_code) TH_LOG(
		"ee_code %u errno %u", r.err.ee.ee_code, r.err.ee.ee_errno);
	ASSERT_EQ(ETIMEDOUT, (int)r.err.ee.ee_errno);
	ASSERT_TRUE(same_addr(&to, &r.err.offender));
	ASSERT_LE(300, el) TH_LOG("notified after %lld ms, before the "
				  "message's deadline", el);
}

/*
 * net.onepipe.be_deadline_max_ms, how far the measured delay may stretch
 * a best-effort deadline: 2000 ms in a new namespace, 1 .. 600000 ms like
 * ack_timeout_ms, refused outside (EINVAL, which fclose() reports).  In a
 * namespace of its own (the test's child), so nothing needs restoring.
 */
TEST_F(family, be_deadline_max_range)
{
	int v;

	ASSERT_EQ(0, unshare(CLONE_NEWNET)) TH_LOG("unshare: %s",
						   strerror(errno));
	ASSERT_EQ(0, op_sysctl_get("be_deadline_max_ms", &v));
	EXPECT_EQ(2000, v);
	EXPECT_EQ(-1, op_sysctl("be_deadline_max_ms", 0, NULL));
	EXPECT_EQ(-1, op_sysctl("be_deadline_max_ms", 600001, NULL));
	ASSERT_EQ(0, op_sysctl_get("be_deadline_max_ms", &v));
	EXPECT_EQ(2000, v);
	EXPECT_EQ(0, op_sysctl("be_deadline_max_ms", 1, NULL));
	ASSERT_EQ(0, op_sysctl_get("be_deadline_max_ms", &v));
	EXPECT_EQ(1, v);
	EXPECT_EQ(0, op_sysctl("be_deadline_max_ms", 600000, NULL));
	ASSERT_EQ(0, op_sysctl_get("be_deadline_max_ms", &v));
	EXPECT_EQ(600000, v);
}

/* ------------------------------------- best-effort window (be_window) */

#define BEW_MSGS	300
#define BEW_WAIT_MS	10000


static void bew_set(struct __test_metadata *_metadata, int w)
{
	int old;

	ASSERT_EQ(0, op_sysctl("be_window", w, &old)) TH_LOG(
		"net.onepipe.be_window: %s", strerror(errno));
	if (bew_saved < 0)
		bew_saved = old;
}


/* Room for every message at once, whatever net.core.rmem_max says. */
static int bew_rcvbuf(int fd)
{
	int v = 4 << 20;

	return setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v));
}

/*
 * Read @n messages "bew-<i>" from @fd, in order, within BEW_WAIT_MS; none
 * of @sender's is reported failed.
 */
static void bew_expect(struct __test_metadata *_metadata, int fd, int sender,
		       int n)
{
	char buf[64], want[32];
	struct rx r;
	int i;

	for (i = 0; i < n; i++) {
		ssize_t len = rx_msg_to(fd, buf, sizeof(buf) - 1, 0, &r,
					BEW_WAIT_MS);

		ASSERT_LT(0, len) TH_LOG("message %d of %d: %s; %s", i, n,
					 strerror(errno), sender_errq(sender));
		buf[len] = 0;
		snprintf(want, sizeof(want), "bew-%d", i);
		ASSERT_STREQ(want, buf);
	}
	ASSERT_EQ(-1, recv(sender, buf, sizeof(buf),
			   MSG_ERRQUEUE | MSG_DONTWAIT)) TH_LOG(
		"a notification on the sender: %s", sender_errq(sender));
}

/*
 * A non-blocking best-effort sender faster than its ACKs (be_window 4)
 * gets EAGAIN, not a stream of timeouts: its scattering waits for
 * credits, unstamped (ONEPIPE_LAST_TS says EINPROGRESS while it does),
 * POLLOUT comes once ACKs let it go, and every message is delivered in
 * order with no notification.
 */
TEST_F_TIMEOUT(fab, be_window_eagain_pollout, 240)
{
	int a = self->a, eagain = 0, inprogress = 0, i = 0, re;
	char msg[32];
	__u64 ts;

	NEED_HOST();
	bew_set(_metadata, 4);
	/* b reads only once all were sent: room for all of them. */
	ASSERT_EQ(0, bew_rcvbuf(self->b));
	while (i < BEW_MSGS) {
		int len = snprintf(msg, sizeof(msg), "bew-%d", i);

		if (op_sendto(a, msg, len + 1, MSG_DONTWAIT, &self->ba) ==
		    len + 1) {
			i++;
			if (last_ts(a, &ts) == EINPROGRESS)
				inprogress++;
			continue;
		}
		ASSERT_EQ(EAGAIN, errno) TH_LOG("message %d: %s", i,
						strerror(errno));
		eagain++;
		re = wait_events(a, POLLOUT, BEW_WAIT_MS);
		ASSERT_TRUE(re > 0 && (re & POLLOUT)) TH_LOG(
			"no POLLOUT within %d ms (revents %d); %s",
			BEW_WAIT_MS, re, sender_errq(a));
		ASSERT_FALSE(re & POLLERR) TH_LOG("%s", sender_errq(a));
	}
	TH_LOG("%d messages: %d EAGAIN, %d left waiting for credits",
	       BEW_MSGS, eagain, inprogress);
	ASSERT_LT(0, eagain) TH_LOG("the window never filled");
	ASSERT_LT(0, inprogress);
	bew_expect(_metadata, self->b, a, BEW_MSGS);
}

/* The same, blocking: every send returns once its message is stamped. */
TEST_F_TIMEOUT(fab, be_window_blocking, 240)
{
	char msg[32];
	__u64 ts;
	int i;

	NEED_HOST();
	bew_set(_metadata, 4);
	ASSERT_EQ(0, bew_rcvbuf(self->b));
	for (i = 0; i < BEW_MSGS; i++) {
		int len = snprintf(msg, sizeof(msg), "bew-%d", i);

		ASSERT_EQ(len + 1, op_sendto(self->a, msg, len + 1, 0,
					     &self->ba)) TH_LOG(
			"message %d: %s", i, strerror(errno));
		ASSERT_EQ(0, last_ts(self->a, &ts)) TH_LOG(
			"a blocking send returned before its stamp");
	}
	bew_expect(_metadata, self->b, self->a, BEW_MSGS);
}

/*
 * A scattering with more messages to one host than the whole window goes
 * all the same, once nothing else is in flight there.
 */
TEST_F_TIMEOUT(fab, be_window_bigger_scattering, 120)
{
	struct scat s;
	int i, r;

	NEED_HOST();
	bew_set(_metadata, 2);
	scat_init(&s);
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, scat_add(&s, "big-", &self->addr[1], 100));
	r = scat_send(self->a, &s, 0);
	ASSERT_EQ(5, r) TH_LOG("sendmmsg: %d (%s)", r, strerror(errno));
	expect_delivered(_metadata, self->a, self->fd, self->addr, &s);
	scat_free(&s);
}

TEST_HARNESS_MAIN
