// SPDX-License-Identifier: GPL-2.0
/*
 * SOCK_RDM, the reliable 1Pipe service, through the socket API: exactly
 * once in order, scatterings that fail as a whole (recall), flow control
 * (a receiver that stops reading stops its sender, which gets EAGAIN and
 * loses nothing), the service boundary (reliable and best-effort
 * sockets do not take each other's messages), and the admission rule of
 * op_test.h, with a scattering waiting for window as what keeps a socket
 * from taking the next one.
 *
 * Like socket_api, it runs in host h1 of a one-host fabric
 * (ONEPIPE_TEST_HOST=1, see socket_rdm.sh): sockets send to each other
 * through the software switch.  Multi-host behaviour (loss, unreachable
 * receivers) is in the rdm_* scenario scripts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/errqueue.h>
#include <linux/onepipe.h>

/* The 6.1 harness itself is not -Wextra clean (an unused handler arg). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define OP_TEST_TYPE	SOCK_RDM
#include "op_test.h"

#define RDM_WINDOW_DEFAULT	256
/* Most messages the flow-control tests send before they must stall. */
#define STALL_MAX		5000
/* A sender not writable for this long is stalled for good. */
#define STALL_MS		500

static int set_window(int w)
{
	FILE *f = fopen("/proc/sys/net/onepipe/rdm_window", "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%d\n", w) > 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static int set_int_opt(int fd, int level, int opt, int val)
{
	return setsockopt(fd, level, opt, &val, sizeof(val));
}

/* --------------------------------------------------------------- family */

FIXTURE(family) {
	int unused;
};

FIXTURE_SETUP(family)
{
}

FIXTURE_TEARDOWN(family)
{
}

TEST_F(family, socket_rdm)
{
	int type = 0, fd = socket(AF_ONEPIPE, SOCK_RDM, 0);
	socklen_t len = sizeof(type);

	ASSERT_LE(0, fd) TH_LOG("socket(AF_ONEPIPE, SOCK_RDM): %s",
				strerror(errno));
	ASSERT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len));
	ASSERT_EQ(SOCK_RDM, type);
	close(fd);
}

TEST_F(family, socket_seqpacket_unsupported)
{
	ASSERT_EQ(-1, socket(AF_ONEPIPE, SOCK_SEQPACKET, 0));
	ASSERT_EQ(ESOCKTNOSUPPORT, errno);
}

/* ------------------------------------------------------ one-host fabric */

FIXTURE(rdm) {
	OP_FIXTURE_SOCKETS;
};

FIXTURE_SETUP(rdm)
{
	self->host = op_fixture_host(self->fd);
	if (!self->host)
		return;
	ASSERT_EQ(0, set_window(RDM_WINDOW_DEFAULT));
	ASSERT_EQ(0, op_bound3(self->fd, self->addr))
		TH_LOG("bound sockets: %s", strerror(errno));
}

/* rdm_retries to put back (see overshoot()), or -1. */
static int saved_retries = -1;

FIXTURE_TEARDOWN(rdm)
{
	op_close3(self->fd);
	if (self->host)
		set_window(RDM_WINDOW_DEFAULT);
	if (saved_retries >= 0)
		op_sysctl("rdm_retries", saved_retries, NULL);
}

TEST_F(rdm, round_trip)
{
	static const char msg[] = "reliably yours";
	char buf[64];
	struct rx r;
	__u64 last;

	NEED_HOST();
	ASSERT_EQ(SZ(msg), op_sendto(self->a, msg, sizeof(msg), 0, &self->ba));
	ASSERT_EQ(0, get_u64(self->a, ONEPIPE_LAST_TS, &last));
	ASSERT_EQ(SZ(msg), rx_msg(self->b, buf, sizeof(buf), 0, &r))
		TH_LOG("recv: %s", strerror(errno));
	ASSERT_EQ(0, memcmp(buf, msg, sizeof(msg)));
	ASSERT_TRUE(same_addr(&self->aa, &r.src));
	ASSERT_TRUE(r.have_ts);
	ASSERT_EQ(last, r.ts);
}

/* One scattering to two sockets: one timestamp, both get their part. */
TEST_F(rdm, sendmmsg_one_scattering)
{
	struct iovec iov[2] = {
		{ .iov_base = "to-b", .iov_len = 4 },
		{ .iov_base = "to-c", .iov_len = 4 },
	};
	struct mmsghdr mm[2];
	char buf[16];
	struct rx rb, rc;
	__u64 last;

	NEED_HOST();
	memset(mm, 0, sizeof(mm));
	mm[0].msg_hdr.msg_name = &self->ba;
	mm[0].msg_hdr.msg_namelen = sizeof(self->ba);
	mm[0].msg_hdr.msg_iov = &iov[0];
	mm[0].msg_hdr.msg_iovlen = 1;
	mm[1].msg_hdr.msg_name = &self->ca;
	mm[1].msg_hdr.msg_namelen = sizeof(self->ca);
	mm[1].msg_hdr.msg_iov = &iov[1];
	mm[1].msg_hdr.msg_iovlen = 1;
	ASSERT_EQ(2, sendmmsg(self->a, mm, 2, 0));
	ASSERT_EQ(0, get_u64(self->a, ONEPIPE_LAST_TS, &last));
	ASSERT_EQ(4, rx_msg(self->b, buf, sizeof(buf), 0, &rb));
	ASSERT_EQ(0, memcmp(buf, "to-b", 4));
	ASSERT_EQ(4, rx_msg(self->c, buf, sizeof(buf), 0, &rc));
	ASSERT_EQ(0, memcmp(buf, "to-c", 4));
	ASSERT_EQ(last, rb.ts);
	ASSERT_EQ(last, rc.ts);
}

/*
 * Receive @n messages "<i>" on @fd and check they are 0..n-1 in order,
 * each a scattering of its own (so with a later stamp than the one
 * before) unless @one_scattering.
 */
static void expect_messages(struct __test_metadata *_metadata, int fd,
			    int n, int one_scattering)
{
	__u64 prev = 0;
	char buf[32];
	struct rx r;
	int i;

	for (i = 0; i < n; i++) {
		ssize_t len = rx_msg(fd, buf, sizeof(buf) - 1, 0, &r);

		ASSERT_LT(0, len) TH_LOG("message %d of %d: %s", i, n,
					 strerror(errno));
		buf[len] = '\0';
		ASSERT_EQ(i, atoi(buf)) TH_LOG("got \"%s\" as message %d",
					       buf, i);
		if (i && one_scattering)
			ASSERT_EQ(prev, r.ts);
		if (i && !one_scattering)
			ASSERT_TRUE(ts_le(prev, r.ts) && prev != r.ts);
		prev = r.ts;
	}
	ASSERT_EQ(-1, recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
	ASSERT_EQ(EAGAIN, errno) TH_LOG("a message after the last one");
}

static void expect_sequence(struct __test_metadata *_metadata, int fd,
			    int n)
{
	expect_messages(_metadata, fd, n, 0);
}

/*
 * Send "<i>" messages from @fd (non-blocking) until it stalls: EAGAIN,
 * and no POLLOUT within STALL_MS.  (EAGAIN alone may be the congestion
 * window, which the next ACK opens, or a window granted before the test
 * lowered rdm_window, which a receiver never takes back.)  Returns how
 * many were accepted.
 */
static int send_until_stalled(int fd, const struct sockaddr_onepipe *to)
{
	char buf[32];
	int i = 0, len;

	while (i < STALL_MAX) {
		len = snprintf(buf, sizeof(buf), "%d", i);
		if (op_sendto(fd, buf, len, MSG_DONTWAIT, to) == len) {
			i++;
			continue;
		}
		if (errno != EAGAIN)
			return -1;
		if (!(wait_events(fd, POLLOUT, STALL_MS) & POLLOUT))
			return i;
	}
	return -1;
}

/*
 * Make b a receiver that does not read (with a tiny receive buffer and a
 * window of 4) and send to it from a (with a send buffer that is not the
 * limit) until a stalls.  Returns the messages a accepted.
 */
static int stall(struct __test_metadata *_metadata,
		 FIXTURE_DATA(rdm) *self)
{
	int sent;

	EXPECT_EQ(0, set_window(4));
	EXPECT_EQ(0, set_int_opt(self->b, SOL_SOCKET, SO_RCVBUF, 1));
	EXPECT_EQ(0, set_int_opt(self->a, SOL_SOCKET, SO_SNDBUF, 4 << 20));
	sent = send_until_stalled(self->a, &self->ba);
	EXPECT_LT(0, sent) TH_LOG("no stall within %d messages", STALL_MAX);
	return sent;
}

/*
 * A receiver that stops reading: its receive buffer, then the sender's
 * window, fill up; the sender's next scattering waits for window (not
 * writable, ONEPIPE_LAST_TS says EINPROGRESS) and the one after it gets
 * EAGAIN.  Once the receiver reads, everything arrives once, in order.
 */
TEST_F(rdm, stalled_receiver_blocks_sender)
{
	__u64 last;
	int sent;

	NEED_HOST();
	sent = stall(_metadata, self);
	ASSERT_LT(0, sent);
	ASSERT_EQ(-1, get_u64(self->a, ONEPIPE_LAST_TS, &last));
	ASSERT_EQ(EINPROGRESS, errno) TH_LOG("EAGAIN without a scattering "
					     "waiting for window");
	ASSERT_FALSE(wait_events(self->a, POLLOUT, 0) & POLLOUT);

	expect_sequence(_metadata, self->b, sent);
	ASSERT_TRUE(wait_events(self->a, POLLOUT, RX_TIMEOUT_MS) & POLLOUT);
	ASSERT_EQ(0, get_u64(self->a, ONEPIPE_LAST_TS, &last));
}

/* A blocking sender waits for window instead, and nothing is lost. */
TEST_F(rdm, blocking_sender_waits)
{
	int i, n, status;
	pid_t pid;

	NEED_HOST();
	n = stall(_metadata, self);
	ASSERT_LT(0, n);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Blocks until the parent reads; then sends 50 more. */
		for (i = n; i < n + 50; i++) {
			char buf[32];
			int len = snprintf(buf, sizeof(buf), "%d", i);

			if (op_sendto(self->a, buf, len, 0, &self->ba) != len)
				_exit(100 + (i - n));
		}
		_exit(0);
	}
	/* The child is stuck: b is not reading. */
	usleep(200 * 1000);
	ASSERT_EQ(0, waitpid(pid, &status, WNOHANG))
		TH_LOG("the blocked sender exited with %d",
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	expect_sequence(_metadata, self->b, n + 50);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Closing a sender whose scattering waits drops just that scattering. */
TEST_F(rdm, close_while_waiting)
{
	int sent;

	NEED_HOST();
	sent = stall(_metadata, self);
	ASSERT_LT(0, sent);
	close(self->a);
	self->a = -1;
	/* The last accepted one was never stamped. */
	expect_sequence(_metadata, self->b, sent - 1);
}

/*
 * A scattering must fit the window of every destination at once: the
 * MSG_MORE call that adds message rdm_window + 1 fails with EMSGSIZE, and
 * the chain fails as a whole: the messages it had accepted come back on
 * the error queue, unstamped, and none is delivered.
 */
TEST_F(rdm, scattering_larger_than_window)
{
	struct scat s;
	__u64 prior;
	int i;

	NEED_HOST();
	ASSERT_EQ(0, set_window(4));
	prior = adm_prior(_metadata, self->a, self->b, &self->ba);
	scat_init(&s);
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, scat_add(&s, "win-", i & 1 ? &self->ca : &self->ba,
				      16));
	ASSERT_EQ(4, scat_chain(self->a, &s, 0, 1)) TH_LOG("%s",
							  strerror(errno));
	ASSERT_EQ(EMSGSIZE, errno) TH_LOG("%s", strerror(errno));
	expect_aborted(_metadata, self->a, &s, 4, EMSGSIZE);
	expect_only_marker(_metadata, self->a, self->fd, self->addr, prior);
	scat_free(&s);
}

/* The same with sendmmsg(): it counts the rdm_window entries refused. */
TEST_F(rdm, refuse_over_window)
{
	__u64 prior, ts = 0;
	struct scat s;
	int i, r;

	NEED_HOST();
	ASSERT_EQ(0, set_window(4));
	prior = adm_prior(_metadata, self->a, self->b, &self->ba);
	scat_init(&s);
	for (i = 0; i < 6; i++)
		ASSERT_EQ(0, scat_add(&s, "win-", i & 1 ? &self->ca : &self->ba,
				      16));
	r = scat_send(self->a, &s, 0);
	ASSERT_EQ(4, r) TH_LOG("6 messages, rdm_window 4: sendmmsg returned "
			       "%d (%s)", r, strerror(errno));
	expect_aborted(_metadata, self->a, &s, 4, EMSGSIZE);
	ASSERT_EQ(0, last_ts(self->a, &ts));
	ASSERT_EQ(prior, ts);
	expect_only_marker(_metadata, self->a, self->fd, self->addr, prior);
	/* Exactly rdm_window messages fit. */
	s.n = 4;
	ASSERT_EQ(4, scat_send(self->a, &s, 0)) TH_LOG("%s", strerror(errno));
	expect_delivered(_metadata, self->a, self->fd, self->addr, &s);
	s.n = 6;
	scat_free(&s);
}

/*
 * One message of a scattering is refused (no socket on its port): the
 * sender hears ECONNREFUSED for it and ECANCELED for the other, which is
 * recalled and never delivered.
 */
TEST_F(rdm, refused_message_recalls_scattering)
{
	struct sockaddr_onepipe nobody;
	int i, refused = 0, recalled = 0;
	char buf[16];
	struct rx r;
	__u64 last;

	NEED_HOST();
	nobody = op_addr(self->host, free_port());
	ASSERT_NE(0, nobody.sop_port);
	ASSERT_EQ(4, op_sendto(self->a, "to-b", 4, MSG_MORE, &self->ba));
	ASSERT_EQ(6, op_sendto(self->a, "nobody", 6, 0, &nobody));
	ASSERT_EQ(0, get_u64(self->a, ONEPIPE_LAST_TS, &last));

	for (i = 0; i < 2; i++) {
		ssize_t len = rx_msg(self->a, buf, sizeof(buf), MSG_ERRQUEUE,
				     &r);

		ASSERT_LT(0, len) TH_LOG("error queue entry %d: %s", i,
					 strerror(errno));
		ASSERT_TRUE(r.have_err && r.have_ts);
		ASSERT_EQ(last, r.ts);
		if (r.err.ee.ee_code == ONEPIPE_EE_NOPORT) {
			ASSERT_EQ(ECONNREFUSED, (int)r.err.ee.ee_errno);
			ASSERT_TRUE(same_addr(&nobody, &r.err.offender));
			ASSERT_EQ(0, memcmp(buf, "nobody", 6));
			refused++;
		} else {
			ASSERT_EQ(ONEPIPE_EE_RECALLED, (int)r.err.ee.ee_code);
			ASSERT_EQ(ECANCELED, (int)r.err.ee.ee_errno);
			ASSERT_TRUE(same_addr(&self->ba, &r.err.offender));
			ASSERT_EQ(0, memcmp(buf, "to-b", 4));
			recalled++;
		}
	}
	ASSERT_EQ(1, refused);
	ASSERT_EQ(1, recalled);
	/* A later message from a is delivered; the recalled one never is. */
	ASSERT_EQ(4, op_sendto(self->a, "next", 4, 0, &self->ba));
	ASSERT_EQ(4, rx_msg(self->b, buf, sizeof(buf), 0, &r));
	ASSERT_EQ(0, memcmp(buf, "next", 4));
	ASSERT_EQ(-1, recv(self->b, buf, sizeof(buf), MSG_DONTWAIT));
	ASSERT_EQ(EAGAIN, errno);
}

/* The services do not take each other's messages. */
TEST_F(rdm, services_do_not_mix)
{
	struct sockaddr_onepipe da;
	socklen_t len = sizeof(da);
	char buf[16];
	struct rx r;
	int d;

	NEED_HOST();
	d = socket(AF_ONEPIPE, SOCK_DGRAM, 0);
	ASSERT_LE(0, d);
	ASSERT_EQ(0, op_bind(d, 0, 0));
	ASSERT_EQ(0, getsockname(d, (struct sockaddr *)&da, &len));
	/* reliable -> best-effort socket: refused */
	ASSERT_EQ(3, op_sendto(self->a, "r2d", 3, 0, &da));
	ASSERT_EQ(3, rx_msg(self->a, buf, sizeof(buf), MSG_ERRQUEUE, &r));
	ASSERT_EQ(ECONNREFUSED, (int)r.err.ee.ee_errno);
	/* best-effort -> reliable socket: refused */
	ASSERT_EQ(3, op_sendto(d, "d2r", 3, 0, &self->ba));
	ASSERT_EQ(3, rx_msg(d, buf, sizeof(buf), MSG_ERRQUEUE, &r));
	ASSERT_EQ(ECONNREFUSED, (int)r.err.ee.ee_errno);
	ASSERT_EQ(-1, recv(d, buf, sizeof(buf), MSG_DONTWAIT));
	ASSERT_EQ(-1, recv(self->b, buf, sizeof(buf), MSG_DONTWAIT));
	close(d);
}

/* ONEPIPE_BARRIER of a reliable socket is the commit barrier. */
TEST_F(rdm, barrier_is_commit_barrier)
{
	char buf[8];
	struct rx r;
	__u64 b;

	NEED_HOST();
	ASSERT_EQ(1, op_sendto(self->a, "x", 1, 0, &self->ba));
	ASSERT_EQ(1, rx_msg(self->b, buf, sizeof(buf), 0, &r));
	ASSERT_EQ(0, get_u64(self->b, ONEPIPE_BARRIER, &b));
	ASSERT_TRUE(ts_le(r.ts, b) && r.ts != b)
		TH_LOG("commit barrier %llu not above delivered %llu",
		       (unsigned long long)b, (unsigned long long)r.ts);
}

/*
 * The reliable service is always ordered: a message delivered on arrival
 * could not be recalled any more.
 */
TEST_F(rdm, always_ordered)
{
	int val = -1;
	socklen_t len = sizeof(val);

	NEED_HOST();
	ASSERT_EQ(-1, set_int_opt(self->a, SOL_ONEPIPE, ONEPIPE_ORDERED, 0));
	ASSERT_EQ(EOPNOTSUPP, errno);
	ASSERT_EQ(0, set_int_opt(self->a, SOL_ONEPIPE, ONEPIPE_ORDERED, 1));
	ASSERT_EQ(0, getsockopt(self->a, SOL_ONEPIPE, ONEPIPE_ORDERED, &val,
				&len));
	ASSERT_EQ(1, val);
}

/* ------------------------------------------------ admission (op_test.h) */

/*
 * Reliable: a's previous scattering waits for window (see stall()); a
 * takes no new one until b reads.
 */
static void adm_fill(struct __test_metadata *_metadata, struct adm *x)
{
	__u64 ts;

	ASSERT_EQ(0, set_window(4));
	ASSERT_EQ(0, set_int_opt(x->fd[1], SOL_SOCKET, SO_RCVBUF, 1));
	ASSERT_EQ(0, set_int_opt(x->fd[0], SOL_SOCKET, SO_SNDBUF, 4 << 20));
	x->held = send_until_stalled(x->fd[0], &x->addr[1]);
	ASSERT_LT(0, x->held) TH_LOG("no stall within %d messages",
				     STALL_MAX);
	ASSERT_EQ(EINPROGRESS, last_ts(x->fd[0], &ts));
}

/* b reads what the stall sent ("0", "1", ...), which lets a go. */
static const char *adm_release(struct adm *x)
{
	static char why[128];
	char buf[32];
	struct rx r;
	int i;

	for (i = 0; i < x->held; i++) {
		ssize_t len = rx_msg_to(x->fd[1], buf, sizeof(buf) - 1, 0, &r,
					ADM_WAIT_MS);

		if (len <= 0) {
			snprintf(why, sizeof(why), "b: message %d of the %d "
				 "the stall sent: %s", i, x->held,
				 strerror(errno));
			return why;
		}
		buf[len] = '\0';
		if (atoi(buf) != i) {
			snprintf(why, sizeof(why), "b: \"%s\" where %d was "
				 "due", buf, i);
			return why;
		}
	}
	x->held = 0;
	return NULL;
}

#define ADM_SELF	{ .fd = self->fd, .addr = self->addr,		\
			  .fill = adm_fill, .release = adm_release }

TEST_F(rdm, refuse_bad_family)
{
	NEED_HOST();
	adm_refuse(_metadata, self->fd, self->addr, BAD_FAMILY);
}

TEST_F(rdm, refuse_short_addrlen)
{
	NEED_HOST();
	adm_refuse(_metadata, self->fd, self->addr, BAD_ADDRLEN);
}

TEST_F(rdm, refuse_port0)
{
	NEED_HOST();
	adm_refuse(_metadata, self->fd, self->addr, BAD_PORT0);
}

TEST_F(rdm, refuse_no_address)
{
	NEED_HOST();
	adm_refuse(_metadata, self->fd, self->addr, BAD_NONAME);
}

TEST_F(rdm, refuse_too_big)
{
	NEED_HOST();
	adm_refuse(_metadata, self->fd, self->addr, BAD_TOO_BIG);
}

TEST_F(rdm, refuse_over_sndbuf)
{
	NEED_HOST();
	adm_refuse_over_sndbuf(_metadata, self->fd, self->addr);
}

TEST_F(rdm, chain_refused_bad_family)
{
	NEED_HOST();
	adm_refuse_chains(_metadata, self->fd, self->addr, BAD_FAMILY);
}

TEST_F(rdm, chain_refused_port0)
{
	NEED_HOST();
	adm_refuse_chains(_metadata, self->fd, self->addr, BAD_PORT0);
}

TEST_F(rdm, chain_refused_too_big)
{
	NEED_HOST();
	adm_refuse_chains(_metadata, self->fd, self->addr, BAD_TOO_BIG);
}

TEST_F(rdm, chain_refused_bad_flags)
{
	NEED_HOST();
	adm_refuse_chains(_metadata, self->fd, self->addr, BAD_FLAGS);
}

TEST_F(rdm, chain_owned_by_its_thread)
{
	NEED_HOST();
	adm_chain_owned(_metadata, self->fd, self->addr);
}

TEST_F(rdm, orphaned_chain_aborted)
{
	NEED_HOST();
	adm_orphan_chain(_metadata, self->fd, self->addr);
}

TEST_F(rdm, close_discards_chain)
{
	NEED_HOST();
	adm_close_chain(_metadata, self->fd, self->addr);
}

/*
 * The fill's reliable messages to NOWHERE_HOST hold the commit barrier
 * back until they are declared unreachable; three resends (about 3 s)
 * instead of rdm_retries' default keep that short.
 */
static void overshoot(struct __test_metadata *_metadata,
		      FIXTURE_DATA(rdm) *self, int chain)
{
	ASSERT_EQ(0, op_sysctl("rdm_retries", 3, &saved_retries));
	adm_overshoot(_metadata, self->fd, self->addr, chain);
	ASSERT_EQ(0, op_sysctl("rdm_retries", saved_retries, NULL));
	saved_retries = -1;
}

TEST_F_TIMEOUT(rdm, overshoot_sendmmsg, 90)
{
	NEED_HOST();
	overshoot(_metadata, self, 0);
}

TEST_F_TIMEOUT(rdm, overshoot_chain, 90)
{
	NEED_HOST();
	overshoot(_metadata, self, 1);
}

TEST_F(rdm, full_eagain_whole)
{
	struct adm x = ADM_SELF;

	NEED_HOST();
	adm_eagain(_metadata, &x);
}

TEST_F(rdm, full_blocking_waits)
{
	struct adm x = ADM_SELF;

	NEED_HOST();
	adm_blocking(_metadata, &x);
}

TEST_F(rdm, full_sndtimeo)
{
	struct adm x = ADM_SELF;

	NEED_HOST();
	adm_sndtimeo(_metadata, &x);
}

TEST_F(rdm, full_signal_eintr)
{
	struct adm x = ADM_SELF;

	NEED_HOST();
	adm_signal(_metadata, &x, 0);
}

TEST_F(rdm, full_signal_restart)
{
	struct adm x = ADM_SELF;

	NEED_HOST();
	adm_signal(_metadata, &x, 1);
}

TEST_F_TIMEOUT(rdm, poll_loop_whole, 240)
{
	NEED_HOST();
	adm_poll_loop(_metadata, self->fd, self->addr, 1);
}

TEST_HARNESS_MAIN
