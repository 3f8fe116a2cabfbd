// SPDX-License-Identifier: GPL-2.0
/*
 * A reliable scattering that asks a receiver host for more messages than
 * that host's net.onepipe.rdm_window grants: it can never be sent, so it
 * fails as a whole (every message back on the sender's error queue,
 * unstamped, EMSGSIZE / ONEPIPE_EE_ABORTED) within a bounded time, where
 * it used to wait for window forever.
 *
 * rdm_window is per network namespace, so this needs two hosts:
 * admission_window.sh runs this binary in h1 of a two-host fabric, and
 * the sockets "on h2" are made in op-h2's namespace (setns(), then back;
 * a socket stays in the namespace it was made in), where h2's
 * rdm_window is set too.
 *
 * Environment (set by admission_window.sh):
 *   ONEPIPE_TEST_HOST   host id of the host this binary runs in (1)
 *   ONEPIPE_PEER_HOST   host id of the other host (2)
 *   ONEPIPE_PEER_NETNS  its network namespace (/run/netns/op-h2)
 *
 * The tests run in the order they are written; the first one is the
 * first reliable traffic between h1 and h2 of the fabric.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/onepipe.h>

/* The 6.1 harness itself is not -Wextra clean (an unused handler arg). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define OP_TEST_TYPE	SOCK_RDM
#include "op_test.h"

#define RDM_WINDOW_DEFAULT	256
/* h2's window in these tests: a scattering of 3 to h2 can never fit. */
#define SMALL_WINDOW		2
/* "Bounded": the sender learns h2's window from the first ACK. */
#define FAIL_WITHIN_MS		20000

/*
 * Sockets a (sender) and l (receiver) in h1, r (receiver) in h2; the
 * fixture keeps them as fd[] = { a, l, r } for op_test.h's helpers,
 * which call them a, b, c.
 */
FIXTURE(win) {
	OP_FIXTURE_SOCKETS;
	__u32 peer;
	int self_ns, peer_ns;
};

/* Run in the peer's namespace: make r, or set its rdm_window. */
static int in_peer(FIXTURE_DATA(win) *self, int window)
{
	int err = 0;

	if (setns(self->peer_ns, CLONE_NEWNET))
		return -1;
	if (window)
		err = op_sysctl("rdm_window", window, NULL);
	else if (self->c < 0)
		self->c = op_bound(&self->ca);
	if (setns(self->self_ns, CLONE_NEWNET))
		return -1;
	return err || self->c < 0 ? -1 : 0;
}

FIXTURE_SETUP(win)
{
	const char *ns = getenv("ONEPIPE_PEER_NETNS");
	const char *peer = getenv("ONEPIPE_PEER_HOST");

	self->host = op_fixture_host(self->fd);
	self->self_ns = -1;
	self->peer_ns = -1;
	if (!self->host || !ns || !peer) {
		self->host = 0;
		return;
	}
	self->peer = (__u32)strtoul(peer, NULL, 0);
	self->self_ns = open("/proc/self/ns/net", O_RDONLY);
	ASSERT_LE(0, self->self_ns);
	self->peer_ns = open(ns, O_RDONLY);
	ASSERT_LE(0, self->peer_ns) TH_LOG("%s: %s", ns, strerror(errno));
	self->a = op_bound(&self->aa);
	ASSERT_LE(0, self->a);
	self->b = op_bound(&self->ba);
	ASSERT_LE(0, self->b);
	ASSERT_EQ(0, in_peer(self, 0)) TH_LOG("socket in %s: %s", ns,
					      strerror(errno));
	ASSERT_EQ(self->peer, self->ca.sop_host);
	ASSERT_EQ(0, in_peer(self, SMALL_WINDOW));
}

FIXTURE_TEARDOWN(win)
{
	if (self->peer_ns >= 0)
		in_peer(self, RDM_WINDOW_DEFAULT);
	op_close3(self->fd);
	if (self->peer_ns >= 0)
		close(self->peer_ns);
	if (self->self_ns >= 0)
		close(self->self_ns);
}

/*
 * @n messages to r (and, when @local, one to l first).  Sent with
 * @flags; the scattering must fail as a whole within FAIL_WITHIN_MS.
 * Either sendmmsg() accepts it and every message comes back on the error
 * queue, or sendmmsg() refuses an entry (at the earliest the one that
 * makes it too large for h2's window, SMALL_WINDOW + 1 messages to r; at
 * the latest the last, which closes it) and the entries before it come
 * back: in both cases exactly the count sendmmsg() returned, EMSGSIZE /
 * ONEPIPE_EE_ABORTED, timestamp 0.  r and
 * l never deliver any of it, and ONEPIPE_LAST_TS goes back to @prior.
 * Returns ONEPIPE_LAST_TS after the marker that shows it.
 */
static __u64 too_big_for_peer(struct __test_metadata *_metadata,
			     FIXTURE_DATA(win) *self, int n, int local,
			     int flags, __u64 prior)
{
	long long t0, el;
	struct scat s;
	__u64 ts = 0;
	int i, r, st;

	scat_init(&s);
	if (local)
		ASSERT_EQ(0, scat_add(&s, "toobig-", &self->ba, 64));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, scat_add(&s, "toobig-", &self->ca, 64));
	t0 = now_ms();
	r = scat_send(self->a, &s, flags);
	el = now_ms() - t0;
	TH_LOG("sendmmsg of %d (%d to a host with rdm_window %d) returned %d "
	       "after %lld ms", s.n, n, SMALL_WINDOW, r, el);
	ASSERT_LT(0, r) TH_LOG("%s", strerror(errno));
	ASSERT_LE(local + SMALL_WINDOW, r) TH_LOG(
		"sendmmsg refused entry %d, before the scattering was too "
		"large for h2's window", r);
	ASSERT_GT(FAIL_WITHIN_MS, el) TH_LOG("sendmmsg returned after %lld ms",
					     el);
	/* Until it fails it may wait for window (EINPROGRESS); never sent. */
	st = last_ts(self->a, &ts);
	ASSERT_TRUE(st == EINPROGRESS || (!st && ts == prior)) TH_LOG(
		"ONEPIPE_LAST_TS: %s, %llu (before: %llu)", strerror(st),
		(unsigned long long)ts, (unsigned long long)prior);
	expect_aborted(_metadata, self->a, &s, r, EMSGSIZE);
	TH_LOG("failed after %lld ms", now_ms() - t0);
	ASSERT_GT(FAIL_WITHIN_MS, now_ms() - t0);
	st = last_ts(self->a, &ts);
	ASSERT_EQ(0, st) TH_LOG("ONEPIPE_LAST_TS after the failure: %s",
				strerror(st));
	ASSERT_EQ(prior, ts) TH_LOG("ONEPIPE_LAST_TS %llu, before %llu",
				    (unsigned long long)ts,
				    (unsigned long long)prior);
	ASSERT_TRUE(wait_events(self->a, POLLOUT, RX_TIMEOUT_MS) & POLLOUT);
	expect_only_marker(_metadata, self->a, self->fd, self->addr, prior);
	scat_free(&s);
	ASSERT_EQ(0, last_ts(self->a, &ts));
	return ts;
}

/*
 * First traffic h1 -> h2: a scattering of SMALL_WINDOW messages fits and
 * arrives (and shows h1 what h2 grants); then one of SMALL_WINDOW + 1, to
 * h2 alone and with a message to h1 as well, non-blocking: fails whole.
 */
TEST_F_TIMEOUT(win, nonblocking_fails_whole, 120)
{
	struct scat s;
	__u64 prior;
	int i;

	if (!self->host)
		SKIP(return, "no two-host fabric (see admission_window.sh)");
	scat_init(&s);
	for (i = 0; i < SMALL_WINDOW; i++)
		ASSERT_EQ(0, scat_add(&s, "fits-", &self->ca, 64));
	ASSERT_EQ(SMALL_WINDOW, scat_send(self->a, &s, 0)) TH_LOG(
		"%s", strerror(errno));
	expect_delivered(_metadata, self->a, self->fd, self->addr, &s);
	scat_free(&s);
	ASSERT_EQ(0, last_ts(self->a, &prior));

	prior = too_big_for_peer(_metadata, self, SMALL_WINDOW + 1, 0,
				 MSG_DONTWAIT, prior);
	prior = too_big_for_peer(_metadata, self, SMALL_WINDOW + 1, 1,
				 MSG_DONTWAIT, prior);
	/* Further over the window: the same. */
	too_big_for_peer(_metadata, self, SMALL_WINDOW + 3, 1, MSG_DONTWAIT,
			 prior);
}

/* The same from a blocking sender: it returns, and nothing was sent. */
TEST_F_TIMEOUT(win, blocking_fails_whole, 120)
{
	__u64 prior;

	if (!self->host)
		SKIP(return, "no two-host fabric (see admission_window.sh)");
	prior = adm_prior(_metadata, self->a, self->c, &self->ca);
	prior = too_big_for_peer(_metadata, self, SMALL_WINDOW + 1, 0, 0,
				 prior);
	too_big_for_peer(_metadata, self, SMALL_WINDOW + 1, 1, 0, prior);
}

/*
 * A MSG_MORE chain of SMALL_WINDOW + 1 messages to h2: the chain is
 * accepted (or its last call refused with EMSGSIZE), and fails whole.
 */
TEST_F_TIMEOUT(win, chain_fails_whole, 120)
{
	long long t0;
	struct scat s;
	__u64 prior, ts = 0;
	int i, r;

	if (!self->host)
		SKIP(return, "no two-host fabric (see admission_window.sh)");
	prior = adm_prior(_metadata, self->a, self->c, &self->ca);
	scat_init(&s);
	for (i = 0; i < SMALL_WINDOW + 1; i++)
		ASSERT_EQ(0, scat_add(&s, "chain-", &self->ca, 64));
	t0 = now_ms();
	r = scat_chain(self->a, &s, MSG_DONTWAIT, 0);
	TH_LOG("chain: %d of %d calls accepted (%s)", r, s.n,
	       r < s.n ? strerror(errno) : "ok");
	if (r < s.n) {
		ASSERT_EQ(SMALL_WINDOW, r);
		ASSERT_EQ(EMSGSIZE, errno);
	}
	expect_aborted(_metadata, self->a, &s, r, EMSGSIZE);
	ASSERT_GT(FAIL_WITHIN_MS, now_ms() - t0);
	ASSERT_EQ(0, last_ts(self->a, &ts));
	ASSERT_EQ(prior, ts);
	expect_only_marker(_metadata, self->a, self->fd, self->addr, prior);
	scat_free(&s);
}

/*
 * The case that used to hang for good: a scattering of 3 waits for window
 * at h2 (which grants 4 and whose r does not read), then h2's rdm_window
 * drops to 2 and r reads.  Once h1 hears h2's new window, the waiting
 * scattering can never fit: it fails whole (its 3 messages on the error
 * queue, EMSGSIZE / ONEPIPE_EE_ABORTED, timestamp 0), ONEPIPE_LAST_TS goes
 * back to the scattering before it, a may send again, and r gets nothing
 * of it.
 */
TEST_F_TIMEOUT(win, waiting_fails_when_window_shrinks, 120)
{
	struct scat s[10];
	unsigned char buf[1100];
	long long t0;
	__u64 prior, ts = 0;
	int i, k, st = 0, n;
	struct rx r;

	if (!self->host)
		SKIP(return, "no two-host fabric (see admission_window.sh)");
	ASSERT_EQ(0, in_peer(self, 4));
	/* h1 learns the larger window from the ACK of this one. */
	prior = adm_prior(_metadata, self->a, self->c, &self->ca);
	ASSERT_LT(0, set_sndbuf(self->a, 1 << 20));
	ASSERT_EQ(0, set_rcvbuf(self->c, 1));
	for (k = 0; k < 10; k++) {
		char prefix[8];

		snprintf(prefix, sizeof(prefix), "s%d-", k);
		scat_init(&s[k]);
		for (i = 0; i < 3; i++)
			ASSERT_EQ(0, scat_add(&s[k], prefix, &self->ca, 1000));
		ASSERT_EQ(3, scat_send(self->a, &s[k], MSG_DONTWAIT)) TH_LOG(
			"scattering %d: %s", k, strerror(errno));
		st = last_ts(self->a, &ts);
		if (st == EINPROGRESS)
			break;
		ASSERT_EQ(0, st);
		prior = ts;
	}
	ASSERT_EQ(EINPROGRESS, st) TH_LOG("no scattering waited for window "
					  "in %d", k);
	TH_LOG("scattering %d waits for window", k);

	ASSERT_EQ(0, in_peer(self, SMALL_WINDOW));
	t0 = now_ms();
	/* r reads the k scatterings before it, in order, and no more. */
	for (n = 0; n < 3 * k; n++) {
		char want[16];

		snprintf(want, sizeof(want), "s%d-%d", n / 3, n % 3);
		ASSERT_EQ(1000, rx_msg_to(self->c, buf, sizeof(buf), 0, &r,
					  ADM_WAIT_MS)) TH_LOG(
			"message %d of %d: %s", n, 3 * k, strerror(errno));
		ASSERT_STREQ(want, (char *)buf);
	}
	expect_aborted(_metadata, self->a, &s[k], 3, EMSGSIZE);
	TH_LOG("failed %lld ms after the window shrank", now_ms() - t0);
	ASSERT_GT(FAIL_WITHIN_MS, now_ms() - t0);
	st = last_ts(self->a, &ts);
	ASSERT_EQ(0, st) TH_LOG("ONEPIPE_LAST_TS: %s", strerror(st));
	ASSERT_EQ(prior, ts);
	ASSERT_TRUE(wait_events(self->a, POLLOUT, RX_TIMEOUT_MS) & POLLOUT);
	expect_only_marker(_metadata, self->a, self->fd, self->addr, prior);
	for (i = 0; i <= k; i++)
		scat_free(&s[i]);
}

TEST_HARNESS_MAIN
