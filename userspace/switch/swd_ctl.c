// SPDX-License-Identifier: GPL-2.0
/*
 * onepipe-switch's client of the failure controller (onepiped), with
 * --controller PATH --node NAME.  The protocol is ctl_proto.h's: one
 * AF_UNIX SOCK_SEQPACKET connection, one struct ctl_msg per packet.
 *
 * The switch says HELLO {node}, reports its links (LINK_DOWN {peer =
 * port name, ts = commit register} when one is silent for the commit
 * timeout, LINK_UP when it is heard again: switch_logic's controlled
 * mode decides when) and answers RESUME {epoch, peer} with sw_resume()
 * and DONE {epoch, peer}.  FAIL and STATE are for hosts: ignored.
 *
 * The forwarding loop never waits for the controller: the socket is
 * non-blocking (connect included), a report or DONE that cannot be sent
 * now is remembered and sent again from the 200 ms retry timer, which
 * also reconnects when the controller is gone.  After every HELLO the
 * switch tells the current state, down or up, of every port heard since
 * it started (sw_heard_ports()), and repeats every DONE not yet
 * delivered; the controller treats repeats as no-ops.  Down ones because
 * a standby controller may not have heard of them; up ones because the
 * controller may hold a LINK_DOWN from before, sent by this process on
 * an earlier connection or by the process this one replaces (a killed
 * and revived switch starts with no memory of it), and only a LINK_UP
 * withdraws it.  A port not heard since the start says nothing: the
 * LINK_DOWN the controller holds for it may be true (a host cut off).
 * The first time a port is heard is a report of its own
 * (sw_take_reports()), since the HELLO usually comes first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "swd.h"

#define CTL_RETRY_NS	200000000ULL	/* redial and resend: 200 ms */
#define CTL_RX_BURST	64		/* messages per wakeup */

/**
 * swd_ctl_set() - the --controller and --node options
 * @path: the controller's socket
 * @node: this switch's node name in the controller's topology
 *
 * Return: 0, or -1 (logged) if either is unusable.
 */
int swd_ctl_set(const char *path, const char *node)
{
	struct sockaddr_un sun;
	struct ctl_msg m;

	if (!path[0] || strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "onepipe-switch: bad --controller path %s\n",
			path);
		return -1;
	}
	if (ctl_set_name(m.node, node)) {
		fprintf(stderr, "onepipe-switch: bad --node %s\n", node);
		return -1;
	}
	swd.ctl.path = path;
	swd.ctl.node = node;
	swd.ctl.fd = -1;
	return 0;
}

/* The connection is gone (or broken): close it, the retry timer redials. */
static void ctl_lost(const char *why)
{
	epoll_ctl(swd.ep, EPOLL_CTL_DEL, swd.ctl.fd, NULL);
	close(swd.ctl.fd);
	swd.ctl.fd = -1;
	fprintf(stderr, "onepipe-switch %s: controller %s: %s; retrying\n",
		swd.name, swd.ctl.path, why);
}

/*
 * Send one message without waiting.  A full socket (the controller is
 * slow) is not an error: the caller keeps what it could not send for the
 * retry timer.  Anything else breaks the connection.
 */
static bool ctl_send(const struct ctl_msg *m)
{
	ssize_t n;

	if (swd.ctl.fd < 0)
		return false;
	n = send(swd.ctl.fd, m, sizeof(*m), MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n == (ssize_t)sizeof(*m))
		return true;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	ctl_lost(n < 0 ? strerror(errno) : "short send");
	return false;
}

/*
 * Tell the controller the current state of @port's link.  The current
 * state, not the change that prompted it: a report resent after a
 * failure must not say what is no longer true.
 */
static bool ctl_send_report(unsigned int port)
{
	u64 bit = (u64)1 << port;
	struct sw_report r;
	struct ctl_msg m;

	sw_port_report(&swd.sw, port, &r);
	ctl_msg_init(&m, r.down ? CTL_LINK_DOWN : CTL_LINK_UP,
		     swd.ctl.node);
	ctl_set_name(m.peer, swd.sw.ports[port].name);
	if (r.has_commit) {
		m.flags |= CTL_F_HAS_TS;
		m.ts = r.commit;
	}
	if (!ctl_send(&m)) {
		swd.ctl.dirty |= bit;
		return false;
	}
	swd.ctl.dirty &= ~bit;
	swd.ctl.reports[port]++;
	swd.ctl.sent_reports++;
	return true;
}

/* DONE for the RESUME of @port the switch last carried out. */
static bool ctl_send_done(unsigned int port)
{
	struct ctl_msg m;

	ctl_msg_init(&m, CTL_DONE, swd.ctl.node);
	m.epoch = swd.ctl.owed[port];
	ctl_set_name(m.peer, swd.sw.ports[port].name);
	if (!ctl_send(&m))
		return false;
	swd.ctl.owed[port] = 0;
	swd.ctl.dones++;
	return true;
}

/* Send what is owed: the reports of @ports, then every pending DONE. */
static void ctl_sync(u64 ports)
{
	unsigned int i;

	swd.ctl.dirty |= ports;
	for (i = 0; i < swd.sw.nports && swd.ctl.fd >= 0; i++)
		if (swd.ctl.dirty & ((u64)1 << i))
			ctl_send_report(i);
	for (i = 0; i < swd.sw.nports && swd.ctl.fd >= 0; i++)
		if (swd.ctl.owed[i])
			ctl_send_done(i);
}

/*
 * Dial the controller.  Not ctl_connect(): that one may wait in connect()
 * while the controller's listen backlog is full, and this runs in the
 * forwarding loop.  A non-blocking AF_UNIX connect either completes at
 * once or fails with EAGAIN, which is just another retry.
 */
static void ctl_dial(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct ctl_msg m;
	int fd;

	strcpy(sun.sun_path, swd.ctl.path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    swd_epoll_add(fd, SWD_EV_CTL)) {
		close(fd);
		return;
	}
	swd.ctl.fd = fd;
	swd.ctl.connects++;
	fprintf(stderr, "onepipe-switch %s: controller %s: connected as %s\n",
		swd.name, swd.ctl.path, swd.ctl.node);
	ctl_msg_init(&m, CTL_HELLO, swd.ctl.node);
	if (!ctl_send(&m)) {
		/* Not even HELLO fits: hang up, redial later. */
		if (swd.ctl.fd >= 0)
			ctl_lost("HELLO not sent");
		return;
	}
	/*
	 * A new controller instance knows nothing of our silent links, and
	 * any instance may hold stale LINK_DOWNs of ours: see the top.
	 */
	ctl_sync(sw_heard_ports(&swd.sw));
}

/*
 * RESUME: the hosts have dealt with the failure behind @m->peer, so its
 * commit register may leave the minimum.  Once per epoch and port: the
 * controller repeats RESUMEs (after a takeover, a HELLO, a timeout), and
 * a repeat must not throw out the register of a link that has come back
 * in the meantime.  Every RESUME is answered, repeats too.
 */
static void ctl_resume(const struct ctl_msg *m)
{
	int p = sw_find_port(&swd.sw, m->peer);

	if (p < 0 || !m->epoch) {
		swd.ctl.bad++;
		return;
	}
	if (swd.ctl.resumed[p] != m->epoch) {
		sw_resume(&swd.sw, (unsigned int)p,
			  swd_clock_ns(CLOCK_MONOTONIC));
		swd.ctl.resumed[p] = m->epoch;
		swd.ctl.resumes++;
		fprintf(stderr, "onepipe-switch %s: port %s resumed (epoch "
			"%u)\n", swd.name, m->peer, m->epoch);
		/* Push the commit advance now, not at the next tick. */
		swd_flush();
	}
	swd.ctl.owed[p] = m->epoch;
	ctl_send_done((unsigned int)p);
}

static void ctl_rx(void)
{
	struct ctl_msg m;
	int i;

	for (i = 0; i < CTL_RX_BURST; i++) {
		/* MSG_TRUNC: the real length, so oversized ones are bad. */
		ssize_t n = recv(swd.ctl.fd, &m, sizeof(m),
				 MSG_DONTWAIT | MSG_TRUNC);

		if (!n) {
			ctl_lost("connection closed");
			return;
		}
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				ctl_lost(strerror(errno));
			return;
		}
		if (ctl_msg_check(&m, n)) {
			swd.ctl.bad++;
			continue;
		}
		switch (m.type) {
		case CTL_RESUME:
			ctl_resume(&m);
			if (swd.ctl.fd < 0)
				return;
			break;
		case CTL_FAIL:
		case CTL_STATE:
			break;		/* the hosts' business */
		default:
			swd.ctl.bad++;
			break;
		}
	}
}

static void ctl_retry(void)
{
	u64 exp;

	if (read(swd.ctl.retry_fd, &exp, sizeof(exp)) < 0 && errno == EAGAIN)
		return;
	if (swd.ctl.fd < 0)
		ctl_dial();
	else
		ctl_sync(0);
}

/* One of the control channel's epoll tags fired. */
void swd_ctl_event(unsigned int tag)
{
	if (tag == SWD_EV_CTL_RETRY)
		ctl_retry();
	else if (swd.ctl.fd >= 0)
		ctl_rx();
}

/* After every tick: the links whose state changed, to the controller. */
void swd_ctl_tick(void)
{
	struct sw_report r[SW_MAX_PORTS];
	unsigned int n, i;

	if (!swd.ctl.path)
		return;
	n = sw_take_reports(&swd.sw, r);
	for (i = 0; i < n; i++) {
		const struct sw_port *p = &swd.sw.ports[r[i].port];

		fprintf(stderr, "onepipe-switch %s: port %s link %s\n",
			swd.name, p->name, r[i].down ? "down" : "up");
		swd.ctl.dirty |= (u64)1 << r[i].port;
	}
	if (n)
		ctl_sync(0);
}

/**
 * swd_ctl_open() - start talking to the controller, if there is one
 *
 * A controller that is not there yet is not an error: the retry timer
 * dials it every 200 ms, and the switch forwards meanwhile.
 *
 * Return: 0, or -1 if the retry timer cannot be set up.
 */
int swd_ctl_open(void)
{
	struct itimerspec its = {
		.it_value = { 0, CTL_RETRY_NS },
		.it_interval = { 0, CTL_RETRY_NS },
	};

	if (!swd.ctl.path)
		return 0;
	swd.ctl.retry_fd = timerfd_create(CLOCK_MONOTONIC,
					  TFD_NONBLOCK | TFD_CLOEXEC);
	if (swd.ctl.retry_fd < 0 ||
	    timerfd_settime(swd.ctl.retry_fd, 0, &its, NULL) ||
	    swd_epoll_add(swd.ctl.retry_fd, SWD_EV_CTL_RETRY))
		return -1;
	ctl_dial();
	if (swd.ctl.fd < 0)
		fprintf(stderr, "onepipe-switch %s: controller %s: not there "
			"yet; retrying every 200 ms\n", swd.name,
			swd.ctl.path);
	return 0;
}

/* Stats: the controller's top-level fields, each preceded by ','. */
void swd_ctl_put_tail(FILE *f)
{
	fprintf(f, ",\"ctl_connected\":%s,\"ctl_connects\":%llu,"
		"\"ctl_reports\":%llu,\"ctl_resumes\":%llu,"
		"\"ctl_dones\":%llu,\"ctl_bad\":%llu",
		swd.ctl.fd >= 0 ? "true" : "false",
		(unsigned long long)swd.ctl.connects,
		(unsigned long long)swd.ctl.sent_reports,
		(unsigned long long)swd.ctl.resumes,
		(unsigned long long)swd.ctl.dones,
		(unsigned long long)swd.ctl.bad);
}
