// SPDX-License-Identifier: GPL-2.0
/*
 * Integration test of onepipe-switch --controller: the real binary on
 * 127.0.0.1 with three ports (a and b down, u up) whose peers are UDP
 * sockets of this test, and a fake onepiped: a SOCK_SEQPACKET listener
 * of this test that the switch dials.  Checks that the switch
 *
 *  - starts and forwards without a controller, and dials it (HELLO) once
 *    the socket appears, then says LINK_UP for every port it has heard;
 *  - keeps a silent link's commit register in the minimum (the commit
 *    barrier on u's beacons stalls at a's last commit while the
 *    best-effort barrier moves on without a) and reports it once:
 *    LINK_DOWN {peer a, ts = a's commit, CTL_F_HAS_TS};
 *  - says HELLO again and repeats the LINK_DOWN (and the LINK_UPs) after
 *    the controller hung up;
 *  - answers RESUME with DONE, after which u's beacons carry a commit
 *    past the stall; a repeated RESUME is answered but not carried out
 *    twice; a RESUME for no port, a malformed message are counted and
 *    not answered, FAIL is ignored;
 *  - reports LINK_UP when a speaks again;
 *  - restarted (SIGKILL, then started again while the controller is
 *    there), says LINK_UP for the ports it hears, withdrawing what the
 *    controller may hold from the process before, and nothing about a
 *    port it does not hear;
 *  - counts it all in the stats file, and exits cleanly on SIGTERM.
 *
 * usage: ctl_loopback PATH-TO-onepipe-switch
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "harness.h"
#include "wire.h"

#define INTERVAL_MS	10
#define TIMEOUT_IVS	5		/* best effort: 50 ms */
#define CTIMEOUT_IVS	20		/* commit: 200 ms */
#define NPEER		3
#define NODE		"tor9"
#define A_COMMIT	5000		/* a's commit, before its silence */
#define LISTEN_KEY	"\"listen\":\"127.0.0.1:"

enum { PA, PB, PU };	/* down hosts=1, down hosts=2, up */

static int peer[NPEER];
static bool talking[NPEER];	/* peers pump() keeps beaconing */
static bool a_rising;		/* a says what b and u say, not A_COMMIT */
static u64 val = A_COMMIT + 1000;	/* what b and u say, rising */
static u64 u_barrier, u_commit;	/* last beacon the switch sent to u */
static bool u_nocommit;
static struct sockaddr_in sw_addr;
static char dir[] = "/tmp/onepipe-ctl-test.XXXXXX";
static char stats_path[256], sock_path[256];
static int lfd = -1, cfd = -1;	/* the fake controller: listener, conn */
static pid_t sw_pid;
static const char *self_path;	/* the switch binary, for a restart */

static void bail(const char *msg)
{
	printf("Bail out! %s: %s\n", msg, strerror(errno));
	if (sw_pid > 0)
		kill(sw_pid, SIGKILL);
	exit(1);
}

static int udp_socket(u16 *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len))
		bail("socket");
	*port = ntohs(sa.sin_port);
	return fd;
}

static void start_switch(const char *self)
{
	char ports[NPEER][96], iv[16], to[16], cto[16], *argv[24];
	u16 pp[NPEER];
	int i, n = 0;

	for (i = 0; i < NPEER; i++)
		peer[i] = udp_socket(&pp[i]);
	snprintf(ports[PA], sizeof(ports[PA]), "a,down,127.0.0.1:%u,hosts=1",
		 pp[PA]);
	snprintf(ports[PB], sizeof(ports[PB]), "b,down,127.0.0.1:%u,hosts=2",
		 pp[PB]);
	snprintf(ports[PU], sizeof(ports[PU]), "u,up,127.0.0.1:%u", pp[PU]);
	snprintf(iv, sizeof(iv), "%d", INTERVAL_MS * 1000);
	snprintf(to, sizeof(to), "%d", TIMEOUT_IVS);
	snprintf(cto, sizeof(cto), "%d", CTIMEOUT_IVS);
	argv[n++] = (char *)self;
	argv[n++] = "--listen";
	argv[n++] = "127.0.0.1:0";
	argv[n++] = "--interval-us";
	argv[n++] = iv;
	argv[n++] = "--timeout-intervals";
	argv[n++] = to;
	argv[n++] = "--commit-timeout-intervals";
	argv[n++] = cto;
	argv[n++] = "--stats";
	argv[n++] = stats_path;
	argv[n++] = "--name";
	argv[n++] = "ctl-test";
	argv[n++] = "--controller";
	argv[n++] = sock_path;
	argv[n++] = "--node";
	argv[n++] = NODE;
	for (i = 0; i < NPEER; i++) {
		argv[n++] = "--port";
		argv[n++] = ports[i];
	}
	argv[n] = NULL;
	sw_pid = fork();
	if (sw_pid < 0)
		bail("fork");
	if (!sw_pid) {
		execv(self, argv);
		perror(self);
		_exit(127);
	}
}

static char *fresh_stats(void)
{
	return stats_fresh(stats_path, sw_pid);
}

/* Number after "key": in @s (the first occurrence), or -1. */
static long long json_num(const char *s, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = s ? strstr(s, k) : NULL;
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

static const char *port_line(const char *s, const char *name)
{
	char k[64];

	snprintf(k, sizeof(k), "{\"name\":\"%s\",", name);
	return s ? strstr(s, k) : NULL;
}

/* Does port @name's line of the stats hold @needle? */
static bool port_has(const char *s, const char *name, const char *needle)
{
	const char *l = port_line(s, name), *eol, *p;

	if (!l)
		return false;
	eol = strchr(l, '\n');
	p = strstr(l, needle);
	return p && (!eol || p < eol);
}

static void find_switch(const char *what)
{
	const char *s, *p;
	int i;

	for (i = 0; i < 500; i++) {
		s = stats_read(stats_path);
		p = s ? strstr(s, LISTEN_KEY) : NULL;
		if (p) {
			sw_addr.sin_family = AF_INET;
			sw_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			sw_addr.sin_port =
				htons((u16)atoi(p + strlen(LISTEN_KEY)));
			ok(true, "%s", what);
			return;
		}
		sleep_ms(10);
	}
	ok(false, "%s", what);
	bail("no stats file");
}

/* ---- the fabric side --------------------------------------------------- */

static void send_beacon(int from, u64 barrier, u64 commit)
{
	u8 buf[OP_HDR_LEN];
	struct op_hdr h;

	memset(&h, 0, sizeof(h));
	h.type = OP_PKT_BEACON;
	h.barrier = barrier;
	h.commit = commit;
	op_hdr_encode(&h, buf);
	if (sendto(peer[from], buf, sizeof(buf), 0,
		   (struct sockaddr *)&sw_addr, sizeof(sw_addr)) !=
	    (ssize_t)sizeof(buf))
		bail("sendto");
}

/* Read what the switch sent the peers; remember u's last beacon. */
static void drain_peers(void)
{
	u8 buf[2048];
	int i;

	for (i = 0; i < NPEER; i++) {
		ssize_t n;

		while ((n = recv(peer[i], buf, sizeof(buf),
				 MSG_DONTWAIT)) >= 0) {
			struct op_hdr h;

			if (i != PU || op_hdr_decode(&h, buf, (size_t)n) ||
			    h.type != OP_PKT_BEACON)
				continue;
			u_barrier = h.barrier;
			u_commit = h.commit;
			u_nocommit = h.flags & OP_F_NOCOMMIT;
		}
	}
}

/* ---- the fake controller ----------------------------------------------- */

static void ctl_listen(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	strcpy(sun.sun_path, sock_path);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    listen(lfd, 4))
		bail("controller socket");
}

/*
 * Run the fabric for up to @ms: the talking peers beacon every interval
 * (b and u with a rising value), the switch's beacons are read, and the
 * first control message (if @m) ends it.  Without a connection, one is
 * accepted when the switch dials.  Return: whether a message came.
 */
static bool pump(int ms, struct ctl_msg *m)
{
	u64 end = now_ms() + (u64)ms, next = 0;

	for (;;) {
		u64 now = now_ms();
		struct pollfd p = { .fd = cfd >= 0 ? cfd : lfd,
				    .events = POLLIN };
		int i, wait;

		if (now >= next) {
			val += 1000;
			for (i = 0; i < NPEER; i++) {
				u64 v = i == PA && !a_rising ? A_COMMIT : val;

				if (talking[i])
					send_beacon(i, v, v);
			}
			next = now + INTERVAL_MS;
		}
		drain_peers();
		if (now >= end)
			return false;
		wait = (int)((next < end ? next : end) - now) + 1;
		if (poll(&p, 1, wait) <= 0 || !(p.revents & (POLLIN | POLLHUP)))
			continue;
		if (cfd < 0) {
			cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			continue;
		}
		if (m) {
			ssize_t n = recv(cfd, m, sizeof(*m), MSG_DONTWAIT);

			if (n > 0 && !ctl_msg_check(m, n))
				return true;
			if (n > 0) {
				printf("# malformed message from the switch\n");
				return false;
			}
		}
	}
}

static void ctl_send(enum ctl_type type, u32 epoch, const char *peer_name)
{
	struct ctl_msg m;

	ctl_msg_init(&m, type, "onepiped");
	m.epoch = epoch;
	if (peer_name)
		ctl_set_name(m.peer, peer_name);
	if (send(cfd, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m))
		bail("send to the switch");
}

static bool is_msg(const struct ctl_msg *m, enum ctl_type type,
		   const char *peer_name)
{
	return m->type == type && !strcmp(m->node, NODE) &&
	       !strcmp(m->peer, peer_name ? peer_name : "");
}

static const char *describe(const struct ctl_msg *m, bool got)
{
	static char s[160];

	if (!got)
		return "nothing";
	snprintf(s, sizeof(s), "%s node %s peer %s epoch %u flags %u ts %llu",
		 ctl_type_name(m->type), m->node, m->peer, m->epoch, m->flags,
		 (unsigned long long)m->ts);
	return s;
}

/*
 * Collect the LINK_UPs the switch sends within @ms and check they are
 * exactly one for each port of @want ("a", "ab", ...), with a commit,
 * and that nothing else comes.  Return: whether they are.
 */
static bool expect_ups(int ms, const char *want, char *got, size_t len)
{
	u64 end = now_ms() + (u64)ms;
	char seen[NPEER + 1] = "";
	struct ctl_msg m;
	bool good = true;
	size_t used = 0;

	got[0] = 0;
	while (strlen(seen) < strlen(want) || now_ms() < end) {
		int left = (int)(end - now_ms());
		bool dup;

		if (left <= 0 || !pump(left, &m))
			break;
		if (used < len)
			used += (size_t)snprintf(got + used, len - used, "%s%s",
						 used ? "; " : "",
						 describe(&m, true));
		dup = m.peer[0] && strchr(seen, m.peer[0]);
		if (m.type != CTL_LINK_UP || strlen(m.peer) != 1 ||
		    !strchr(want, m.peer[0]) || dup ||
		    !(m.flags & CTL_F_HAS_TS) || !m.ts) {
			good = false;
			continue;
		}
		seen[strlen(seen)] = m.peer[0];
	}
	return good && strlen(seen) == strlen(want);
}

/* ---- the tests --------------------------------------------------------- */

static void test_hello(void)
{
	struct ctl_msg m;
	char buf[600];
	bool got;

	/* The switch forwards with no controller around; dials it later. */
	talking[PA] = talking[PB] = talking[PU] = true;
	pump(300, NULL);
	ok(u_barrier >= A_COMMIT && !u_nocommit && u_commit == A_COMMIT,
	   "beacons flow without the controller (u: %llu/%llu)",
	   (unsigned long long)u_barrier, (unsigned long long)u_commit);
	ctl_listen();
	got = pump(1000, &m);
	ok(got && is_msg(&m, CTL_HELLO, NULL) && !m.host,
	   "the switch dials the controller once it is there: %s",
	   describe(&m, got));
	got = expect_ups(200, "abu", buf, sizeof(buf));
	ok(got, "then LINK_UP for every port heard (a, b, u): %s", buf);
}

static void test_link_down(void)
{
	u64 stall_barrier;
	struct ctl_msg m;
	bool got;

	talking[PA] = false;
	got = pump(CTIMEOUT_IVS * INTERVAL_MS * 3, &m);
	ok(got && is_msg(&m, CTL_LINK_DOWN, "a") &&
	   (m.flags & CTL_F_HAS_TS) && m.ts == A_COMMIT,
	   "a silent for the commit timeout: LINK_DOWN a ts %d: %s",
	   A_COMMIT, describe(&m, got));
	got = pump(5 * INTERVAL_MS, NULL);
	stall_barrier = u_barrier;
	ok(u_commit == A_COMMIT && !u_nocommit && u_barrier > A_COMMIT,
	   "u's beacons: the commit stalls at a's %d, the best-effort barrier moves on (%llu/%llu)",
	   A_COMMIT, (unsigned long long)u_barrier,
	   (unsigned long long)u_commit);
	got = pump(CTIMEOUT_IVS * INTERVAL_MS, &m);
	ok(!got && u_commit == A_COMMIT && u_barrier > stall_barrier,
	   "reported once, still stalled (%s; u %llu/%llu)",
	   describe(&m, got), (unsigned long long)u_barrier,
	   (unsigned long long)u_commit);
}

static void test_reconnect(void)
{
	struct ctl_msg m;
	char buf[600];
	bool got;

	close(cfd);
	cfd = -1;
	got = pump(1000, &m);
	ok(got && is_msg(&m, CTL_HELLO, NULL),
	   "controller hung up: the switch dials again: %s",
	   describe(&m, got));
	got = pump(500, &m);
	ok(got && is_msg(&m, CTL_LINK_DOWN, "a") &&
	   (m.flags & CTL_F_HAS_TS) && m.ts == A_COMMIT,
	   "and repeats its LINK_DOWN a ts %d: %s", A_COMMIT,
	   describe(&m, got));
	got = expect_ups(200, "bu", buf, sizeof(buf));
	ok(got, "and LINK_UP for the other ports heard (b, u): %s", buf);
}

static void test_resume(void)
{
	struct ctl_msg m;
	const char *s;
	bool got;

	ctl_send(CTL_FAIL, 1, NULL);		/* the hosts' business */
	ctl_send(CTL_RESUME, 1, "a");
	got = pump(500, &m);
	ok(got && is_msg(&m, CTL_DONE, "a") && m.epoch == 1,
	   "RESUME a: DONE epoch 1 a: %s", describe(&m, got));
	pump(5 * INTERVAL_MS, NULL);
	ok(u_commit > A_COMMIT && !u_nocommit,
	   "u's commit barrier moves past the stall (%llu > %d)",
	   (unsigned long long)u_commit, A_COMMIT);
	ctl_send(CTL_RESUME, 1, "a");
	got = pump(500, &m);
	ok(got && is_msg(&m, CTL_DONE, "a") && m.epoch == 1,
	   "a repeated RESUME is answered too: %s", describe(&m, got));
	/* A RESUME for no port of ours, a malformed message: no answer. */
	ctl_send(CTL_RESUME, 1, "zz");
	if (send(cfd, "junk", 4, MSG_NOSIGNAL) != 4)
		bail("send junk");
	got = pump(200, &m);
	ok(!got, "unknown port, junk: no answer (%s)", describe(&m, got));
	s = fresh_stats();
	ok(json_num(port_line(s, "a"), "resumes") == 1 &&
	   json_num(s, "ctl_resumes") == 1 && json_num(s, "ctl_dones") == 2 &&
	   json_num(s, "ctl_bad") == 2 && json_num(s, "ctl_connects") == 2 &&
	   strstr(s, "\"controlled\":true") &&
	   strstr(s, "\"ctl_connected\":true"),
	   "stats: resumes a %lld, ctl_resumes %lld, ctl_dones %lld, ctl_bad %lld, ctl_connects %lld",
	   json_num(port_line(s, "a"), "resumes"), json_num(s, "ctl_resumes"),
	   json_num(s, "ctl_dones"), json_num(s, "ctl_bad"),
	   json_num(s, "ctl_connects"));
	ok(port_has(s, "a", "\"link_down\":true") &&
	   port_has(s, "a", "\"commit_state\":\"dead\"") &&
	   port_has(s, "b", "\"link_down\":false"),
	   "stats: a link_down, its commit register dead; b not down");
}

static void test_link_up(void)
{
	struct ctl_msg m;
	const char *s;
	bool got;

	/* a comes back with what b says: it rejoins as a new link. */
	a_rising = true;
	talking[PA] = true;
	got = pump(500, &m);
	ok(got && is_msg(&m, CTL_LINK_UP, "a") &&
	   (m.flags & CTL_F_HAS_TS) && m.ts > A_COMMIT,
	   "a speaks again: LINK_UP a, with its new commit register: %s",
	   describe(&m, got));
	s = fresh_stats();
	ok(port_has(s, "a", "\"link_down\":false") &&
	   port_has(s, "a", "\"commit_state\":\"live\""),
	   "stats: a up, its commit register live again");
	s = fresh_stats();
	ok(json_num(port_line(s, "a"), "reports") == 4 &&
	   json_num(s, "ctl_reports") == 8,
	   "stats: reports a %lld (up, down, down again, up), ctl_reports %lld",
	   json_num(port_line(s, "a"), "reports"),
	   json_num(s, "ctl_reports"));
}

/*
 * The switch process dies and a new one starts (fabric kill/revive, a
 * crash and a restart) while the controller runs: the new process knows
 * nothing of the LINK_DOWNs its predecessor sent, and must still
 * withdraw them for the links it hears, or the nodes behind them could
 * never rejoin.  b stays silent: its LINK_DOWN (if any) may be true.
 */
static void test_restart(void)
{
	struct ctl_msg m;
	char buf[600];
	int status, i;
	bool got;

	kill(sw_pid, SIGKILL);
	waitpid(sw_pid, &status, 0);
	if (cfd >= 0)
		close(cfd);
	cfd = -1;
	for (i = 0; i < NPEER; i++)
		close(peer[i]);
	unlink(stats_path);
	start_switch(self_path);
	find_switch("switch restarted with its controller there");
	talking[PA] = talking[PU] = true;
	talking[PB] = false;
	got = pump(1000, &m);
	ok(got && is_msg(&m, CTL_HELLO, NULL),
	   "the restarted switch says HELLO: %s", describe(&m, got));
	got = expect_ups(CTIMEOUT_IVS * INTERVAL_MS, "au", buf, sizeof(buf));
	ok(got, "and LINK_UP for the ports it hears (a, u), none for b: %s",
	   buf);
}

static void test_exit(void)
{
	int status = -1, i;

	kill(sw_pid, SIGTERM);
	for (i = 0; i < 100; i++) {
		if (waitpid(sw_pid, &status, WNOHANG) == sw_pid)
			break;
		sleep_ms(10);
	}
	if (i == 100) {
		kill(sw_pid, SIGKILL);
		waitpid(sw_pid, &status, 0);
	}
	sw_pid = 0;
	ok(i < 100 && WIFEXITED(status) && !WEXITSTATUS(status),
	   "SIGTERM: clean exit");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: ctl_loopback ONEPIPE-SWITCH\n");
		return 2;
	}
	if (!mkdtemp(dir))
		bail("mkdtemp");
	snprintf(stats_path, sizeof(stats_path), "%s/stats.json", dir);
	snprintf(sock_path, sizeof(sock_path), "%s/onepiped.sock", dir);
	printf("TAP version 13\n");
	self_path = argv[1];
	start_switch(argv[1]);
	find_switch("switch started without its controller");
	test_hello();
	test_link_down();
	test_reconnect();
	test_resume();
	test_link_up();
	test_restart();
	test_exit();
	if (cfd >= 0)
		close(cfd);
	close(lfd);
	unlink(sock_path);
	unlink(stats_path);
	rmdir(dir);
	return tap_end();
}
