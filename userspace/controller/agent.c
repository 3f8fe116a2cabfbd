// SPDX-License-Identifier: GPL-2.0
/*
 * onepipe-agent - relay between one host's onepipe module and onepiped.
 *
 *	onepipe-agent --node hN --uplink torT [--socket PATH] [-v]
 *
 * Runs in the host's network namespace.  It listens to the module's "ctl"
 * generic netlink multicast group and forwards what the host reports to
 * the failure controller (EV_LINK as LINK_DOWN/LINK_UP, EV_UNREACH as
 * UNREACH, EV_FAIL_DONE as DONE), and forwards the controller's FAIL
 * decisions to the module (ONEPIPE_CMD_FAIL).
 *
 * Controller forwarding: the module hands the packets for a peer it gets
 * no ACK from to the agent (event EV_RELAY), which sends them to the
 * daemon as RELAY; the daemon passes each on to the destination host's
 * agent, which gives it to its module (ONEPIPE_CMD_RELAY).  Relays are
 * packets, not reports: sent only while connected, never kept (the
 * module resends), and every loss is counted and logged rate-limited.
 *
 * The agent holds no decision of its own, but it must not lose one of the
 * host's reports: while onepiped is away (restart, standby taking over)
 * it keeps the uplink's last state and the DONE/UNREACH reports not sent
 * yet, reconnects every AGENT_RETRY_MS and re-sends them after HELLO.
 * The daemon re-sends the failures in force after HELLO, and the module
 * answers a FAIL it already applied with EV_FAIL_DONE again, so a DONE
 * lost anyway is recovered by the daemon's repeat.
 *
 * Everything is non-blocking and driven by one poll() loop; SIGTERM and
 * SIGINT end it cleanly.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/onepipe.h>

#include "ctl_proto.h"

#define AGENT_RETRY_MS		200
/*
 * Reports waiting for the daemon.  Only DONE and UNREACH are kept across
 * a disconnection, one per failed host or silent peer, so this is far
 * more than a fabric needs; past it the oldest are dropped (and logged).
 */
#define AGENT_OUTBOX_MAX	256
/* Netlink requests whose answer has not been read yet. */
#define AGENT_PENDING_MAX	64
/* HOST_GET of a verbs host with many peers is about 64K. */
#define AGENT_NL_RXBUF		131072
/* ONEPIPE_CMD_RELAY: the packet and room for the headers. */
#define AGENT_RELAY_NLBUF	(CTL_RELAY_MAX + 256)
/*
 * Most events are rare (a link change, a failure), but EV_RELAY comes
 * once per packet for a peer that is cut off, up to ONEPIPE_RELAY_MAX
 * bytes each, and in bursts (a window of data, its resends): room for
 * about a thousand of them.  An overflow anyway (ENOBUFS) is counted and
 * survived: the lost relays are resent by the module, and the state
 * that other lost events carried is re-read (resync()).
 */
#define AGENT_EV_RCVBUF		(16 << 20)
/* The daemon socket's send buffer: a burst of relays at once. */
#define AGENT_SNDBUF		(1 << 20)
/* Rate-limited log lines: at most one of a kind per this many ns. */
#define AGENT_LOG_INTERVAL_NS	1000000000ULL

enum link_state {
	AGENT_LINK_UNKNOWN,	/* no event yet: nothing to report */
	AGENT_LINK_UP,
	AGENT_LINK_DOWN,
};

/**
 * struct agent_ratelimit - one kind of rate-limited log line
 * @last: when one was last logged (CLOCK_MONOTONIC ns), 0: never
 * @suppressed: lines left out since
 */
struct agent_ratelimit {
	uint64_t last;
	unsigned long suppressed;
};

/**
 * struct agent_relay_stats - controller forwarding, counted
 * @out: EV_RELAYs sent to the daemon as RELAY
 * @in: RELAYs from the daemon handed to the module
 * @dropped_out: EV_RELAYs not sent: not connected, the socket full,
 *	malformed (no destination, bad length, header and destination
 *	disagree)
 * @dropped_in: RELAYs from the daemon not for this host
 * @refused: ONEPIPE_CMD_RELAY refused by the module (or not sent)
 * @ev_overruns: the event socket overflowed (ENOBUFS): events lost
 */
struct agent_relay_stats {
	unsigned long out;
	unsigned long in;
	unsigned long dropped_out;
	unsigned long dropped_in;
	unsigned long refused;
	unsigned long ev_overruns;
};

/* What a netlink request in flight was, to act on its answer. */
struct agent_req {
	uint32_t seq;
	uint8_t cmd;
	uint32_t epoch;		/* FAIL, REJOIN */
	uint32_t host;		/* FAIL, REJOIN */
	uint64_t ts;		/* FAIL; REJOIN of another host */
};

struct agent {
	/* command line */
	const char *node;
	const char *uplink;
	const char *path;
	bool verbose;

	/* generic netlink: requests, and the "ctl" multicast group */
	struct mnl_socket *req;
	struct mnl_socket *ev;
	uint32_t portid;
	uint32_t seq;
	uint16_t family;
	uint32_t mcgrp;
	char *rxbuf;
	struct agent_req pending[AGENT_PENDING_MAX];
	unsigned int npending;
	/* HOST_GET answered after an overflow re-reads the link too */
	bool resync;
	/* the event socket overflowed: resync() once it is drained */
	bool ev_lost;
	/*
	 * This host rejoined: REJOINED waits in @rejoined until the event
	 * socket is drained of the old incarnation's relays (@old_relays
	 * while it is), see rejoined_report()
	 */
	bool rejoined_due;
	bool old_relays;
	struct ctl_msg rejoined;
	/* ONEPIPE_CMD_RELAY requests: a packet and the headers */
	char *relay_nlbuf;
	/* a RELAY for the daemon; a message from it (RELAYs too) */
	char *dgram;
	struct agent_relay_stats rs;
	struct agent_ratelimit rl_out, rl_in, rl_refused, rl_overrun;

	uint32_t host_id;	/* 0 until HOST_GET has answered with one */
	bool host_get_sent;	/* a HOST_GET is in flight */

	/* the daemon */
	int dfd;		/* -1: not connected */
	bool dwant_out;		/* the outbox waits for POLLOUT */
	uint64_t retry_at;	/* CLOCK_MONOTONIC ns of the next attempt */
	bool retry_logged;	/* the daemon's absence was logged once */
	struct ctl_msg outbox[AGENT_OUTBOX_MAX];
	unsigned int ohead;
	unsigned int ocount;
	unsigned long bad_msgs;

	/* the uplink's last reported state, re-sent after HELLO */
	enum link_state link;
	bool link_has_ts;
	uint64_t link_ts;

	int sfd;		/* signalfd: SIGTERM, SIGINT */
};

/* Logging ------------------------------------------------------------------ */

static const char *log_node = "?";

static void __attribute__((format(printf, 1, 2))) logmsg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "onepipe-agent %s: ", log_node);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define dbg(a, ...) do { if ((a)->verbose) logmsg(__VA_ARGS__); } while (0)

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/*
 * Relays come once per packet: their troubles are logged at most once
 * per AGENT_LOG_INTERVAL_NS per kind, with the count left out since.
 */
static void __attribute__((format(printf, 2, 3)))
logmsg_rl(struct agent_ratelimit *rl, const char *fmt, ...)
{
	uint64_t now = now_ns();
	char text[512];
	va_list ap;

	if (rl->last && now - rl->last < AGENT_LOG_INTERVAL_NS) {
		rl->suppressed++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (rl->suppressed)
		logmsg("%s (and %lu more like it)", text, rl->suppressed);
	else
		logmsg("%s", text);
	rl->last = now;
	rl->suppressed = 0;
}

/* Netlink plumbing --------------------------------------------------------- */

/*
 * Expected payload length of the attributes the agent reads (0: not
 * read).  A kernel that sends another length is broken; such an
 * attribute is left out, as the CLI does.
 */
static const uint16_t attr_len[ONEPIPE_A_MAX + 1] = {
	[ONEPIPE_A_HOST_ID] = 4,
	[ONEPIPE_A_EPOCH] = 4,
	[ONEPIPE_A_FAIL_HOST] = 4,
	[ONEPIPE_A_FAIL_TS] = 8,
	[ONEPIPE_A_LINK_UP] = 4,
	[ONEPIPE_A_LINK_COMMIT] = 8,
	[ONEPIPE_A_PEER_HOST] = 4,
	[ONEPIPE_A_FAIL_PENDING] = 4,
	[ONEPIPE_A_LINK] = 0xffff,	/* a nest: any length */
	[ONEPIPE_A_PACKET] = 0xffff,	/* checked by ev_relay() */
};

static int attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	unsigned int type = mnl_attr_get_type(attr);
	uint16_t want;

	if (type > ONEPIPE_A_MAX || !attr_len[type])
		return MNL_CB_OK;
	want = attr_len[type];
	if (want != 0xffff && mnl_attr_get_payload_len(attr) != want) {
		logmsg("kernel sent attribute %u with %u bytes, expected %u; ignored",
		       type, mnl_attr_get_payload_len(attr), want);
		return MNL_CB_OK;
	}
	tb[type] = attr;
	return MNL_CB_OK;
}

static void parse_attrs(const struct nlmsghdr *nlh, const struct nlattr **tb)
{
	memset(tb, 0, (ONEPIPE_A_MAX + 1) * sizeof(*tb));
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), attr_cb, tb);
}

static uint32_t get_u32(const struct nlattr **tb, unsigned int type)
{
	return tb[type] ? mnl_attr_get_u32(tb[type]) : 0;
}

static uint64_t get_u64(const struct nlattr **tb, unsigned int type)
{
	return tb[type] ? mnl_attr_get_u64(tb[type]) : 0;
}

static struct nlmsghdr *put_request(struct agent *a, char *buf,
				    uint16_t family, uint8_t cmd,
				    uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *genl;

	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++a->seq;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = family == GENL_ID_CTRL ? 1 : ONEPIPE_GENL_VERSION;
	return nlh;
}

/* The extended ack's message, if the kernel sent one. */
static int extack_cb(const struct nlattr *attr, void *data)
{
	const char **msg = data;

	if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
	    !mnl_attr_validate(attr, MNL_TYPE_NUL_STRING))
		*msg = mnl_attr_get_str(attr);
	return MNL_CB_OK;
}

/**
 * nl_error() - decode an NLMSG_ERROR answer
 * @nlh: the answer
 * @msg: set to the extended ack's text, or "" (valid as long as @nlh)
 *
 * Return: 0 for an ack, -errno for an error.
 */
static int nl_error(const struct nlmsghdr *nlh, const char **msg)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t offset = sizeof(*e);

	*msg = "";
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e))
		return -EBADMSG;
	/* Unless capped, the request is echoed before the TLVs. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		offset += mnl_nlmsg_get_payload_len(&e->msg);
	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) &&
	    MNL_ALIGN(offset) <= mnl_nlmsg_get_payload_len(nlh))
		mnl_attr_parse(nlh, offset, extack_cb, msg);
	return e->error > 0 ? -e->error : e->error;
}

/* Startup: resolve the family and its "ctl" group (blocking) --------------- */

static int mcgrp_cb(const struct nlattr *attr, void *data)
{
	struct agent *a = data;
	const struct nlattr *name = NULL, *id = NULL;
	const struct nlattr *in;

	mnl_attr_for_each_nested(in, attr) {
		if (mnl_attr_get_type(in) == CTRL_ATTR_MCAST_GRP_NAME &&
		    !mnl_attr_validate(in, MNL_TYPE_NUL_STRING))
			name = in;
		else if (mnl_attr_get_type(in) == CTRL_ATTR_MCAST_GRP_ID &&
			 !mnl_attr_validate(in, MNL_TYPE_U32))
			id = in;
	}
	if (name && id &&
	    !strcmp(mnl_attr_get_str(name), ONEPIPE_GENL_MCGRP_CTL))
		a->mcgrp = mnl_attr_get_u32(id);
	return MNL_CB_OK;
}

static int family_attr_cb(const struct nlattr *attr, void *data)
{
	struct agent *a = data;

	switch (mnl_attr_get_type(attr)) {
	case CTRL_ATTR_FAMILY_ID:
		if (!mnl_attr_validate(attr, MNL_TYPE_U16))
			a->family = mnl_attr_get_u16(attr);
		break;
	case CTRL_ATTR_MCAST_GROUPS:
		if (!mnl_attr_validate(attr, MNL_TYPE_NESTED))
			mnl_attr_parse_nested(attr, mcgrp_cb, a);
		break;
	}
	return MNL_CB_OK;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), family_attr_cb, data);
	return MNL_CB_OK;
}

/**
 * resolve_family() - find the "onepipe" family's id and its "ctl" group
 * @a: the agent, with @a->req open and still blocking
 *
 * Runs once before the poll loop; the kernel answers GETFAMILY from
 * within sendmsg(), so blocking here costs nothing.
 *
 * Return: 0, or -1 after logging why.
 */
static int resolve_family(struct agent *a)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	ssize_t n;
	int ret;

	nlh = put_request(a, buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
			  NLM_F_ACK);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ONEPIPE_GENL_NAME);
	if (mnl_socket_sendto(a->req, nlh, nlh->nlmsg_len) < 0) {
		logmsg("cannot ask for the generic netlink family: %s",
		       strerror(errno));
		return -1;
	}
	for (;;) {
		n = mnl_socket_recvfrom(a->req, a->rxbuf, AGENT_NL_RXBUF);
		if (n < 0) {
			logmsg("netlink: %s", strerror(errno));
			return -1;
		}
		ret = mnl_cb_run(a->rxbuf, n, nlh->nlmsg_seq, a->portid,
				 family_cb, a);
		if (ret == MNL_CB_ERROR) {
			if (errno == ENOENT)
				logmsg("generic netlink family \"%s\" not found (is onepipe.ko loaded?)",
				       ONEPIPE_GENL_NAME);
			else
				logmsg("resolving the generic netlink family: %s",
				       strerror(errno));
			return -1;
		}
		if (ret == MNL_CB_STOP)
			break;
	}
	if (!a->family) {
		logmsg("generic netlink family \"%s\" not found",
		       ONEPIPE_GENL_NAME);
		return -1;
	}
	if (!a->mcgrp) {
		logmsg("the module has no \"%s\" multicast group (too old?)",
		       ONEPIPE_GENL_MCGRP_CTL);
		return -1;
	}
	return 0;
}

static int nl_open(struct agent *a)
{
	int one = 1, size = AGENT_EV_RCVBUF, fd;

	a->rxbuf = malloc(AGENT_NL_RXBUF);
	a->relay_nlbuf = malloc(AGENT_RELAY_NLBUF);
	a->dgram = malloc(CTL_DGRAM_MAX);
	a->req = mnl_socket_open(NETLINK_GENERIC);
	a->ev = mnl_socket_open(NETLINK_GENERIC);
	if (!a->rxbuf || !a->relay_nlbuf || !a->dgram || !a->req || !a->ev) {
		logmsg("cannot open netlink sockets: %s", strerror(errno));
		return -1;
	}
	if (mnl_socket_bind(a->req, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_bind(a->ev, 0, MNL_SOCKET_AUTOPID) < 0) {
		logmsg("cannot bind netlink sockets: %s", strerror(errno));
		return -1;
	}
	a->portid = mnl_socket_get_portid(a->req);
	a->seq = time(NULL);
	/* Older kernels lack these: errors are then just less detailed. */
	mnl_socket_setsockopt(a->req, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(a->req, NETLINK_CAP_ACK, &one, sizeof(one));
	if (resolve_family(a))
		return -1;
	/*
	 * Two sockets: events on their own one never interleave with the
	 * answers to our requests, and an event overflow (ENOBUFS) is then
	 * unambiguous.
	 */
	if (mnl_socket_setsockopt(a->ev, NETLINK_ADD_MEMBERSHIP, &a->mcgrp,
				  sizeof(a->mcgrp)) < 0) {
		logmsg("cannot join multicast group \"%s\": %s",
		       ONEPIPE_GENL_MCGRP_CTL, strerror(errno));
		return -1;
	}
	fd = mnl_socket_get_fd(a->ev);
	/* FORCE needs CAP_NET_ADMIN, which the agent has; else best effort. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (fcntl(fd, F_SETFL, O_NONBLOCK) ||
	    fcntl(mnl_socket_get_fd(a->req), F_SETFL, O_NONBLOCK)) {
		logmsg("fcntl: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Requests, non-blocking --------------------------------------------------- */

static void req_handle(struct agent *a);

/**
 * req_send() - send a request and remember what to do with its answer
 * @a: the agent
 * @nlh: the request (NLM_F_ACK or NLM_F_DUMP set)
 * @r: what it is (@r->seq is filled in)
 *
 * The module answers from within sendmsg(), so the answer is read right
 * away; the poll loop reads whatever comes later (the rest of a dump).
 *
 * Return: 0, or -errno if the request could not be sent.
 */
static int req_send(struct agent *a, struct nlmsghdr *nlh,
		    struct agent_req *r)
{
	if (a->npending == AGENT_PENDING_MAX)
		req_handle(a);
	if (a->npending == AGENT_PENDING_MAX) {
		/* Answers lost somehow: forget the oldest. */
		logmsg("netlink: %u requests unanswered; forgetting them",
		       a->npending);
		a->npending = 0;
	}
	r->seq = nlh->nlmsg_seq;
	r->cmd = ((struct genlmsghdr *)mnl_nlmsg_get_payload(nlh))->cmd;
	if (mnl_socket_sendto(a->req, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	a->pending[a->npending++] = *r;
	req_handle(a);
	return 0;
}

static struct agent_req *req_find(struct agent *a, uint32_t seq)
{
	unsigned int i;

	for (i = 0; i < a->npending; i++)
		if (a->pending[i].seq == seq)
			return &a->pending[i];
	return NULL;
}

static void req_done(struct agent *a, struct agent_req *r)
{
	*r = a->pending[--a->npending];
}

static void host_get(struct agent *a)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct agent_req r = { .cmd = 0 };
	struct nlmsghdr *nlh;
	int err;

	if (a->host_get_sent)
		return;
	nlh = put_request(a, buf, a->family, ONEPIPE_CMD_HOST_GET, NLM_F_ACK);
	/* Before sending: the ack may be read within req_send(). */
	a->host_get_sent = true;
	err = req_send(a, nlh, &r);
	if (err) {
		logmsg("HOST_GET: %s", strerror(-err));
		a->host_get_sent = false;
	}
}

static void dump(struct agent *a, uint8_t cmd, const char *what)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct agent_req r = { .cmd = 0 };
	struct nlmsghdr *nlh;
	int err;

	nlh = put_request(a, buf, a->family, cmd, NLM_F_DUMP);
	err = req_send(a, nlh, &r);
	if (err)
		logmsg("%s: %s", what, strerror(-err));
}

/* The daemon --------------------------------------------------------------- */

static void daemon_disconnect(struct agent *a, const char *why);

/* Append @m to the outbox; the oldest report goes if it is full. */
static void outbox_push(struct agent *a, const struct ctl_msg *m)
{
	if (a->ocount == AGENT_OUTBOX_MAX) {
		const struct ctl_msg *old = &a->outbox[a->ohead];

		logmsg("outbox full: dropping %s epoch %u host %u",
		       ctl_type_name(old->type), old->epoch, old->host);
		a->ohead = (a->ohead + 1) % AGENT_OUTBOX_MAX;
		a->ocount--;
	}
	a->outbox[(a->ohead + a->ocount) % AGENT_OUTBOX_MAX] = *m;
	a->ocount++;
}

/* Send what the outbox holds until the socket is full. */
static void outbox_flush(struct agent *a)
{
	const struct ctl_msg *m;
	ssize_t n;

	a->dwant_out = false;
	while (a->dfd >= 0 && a->ocount) {
		m = &a->outbox[a->ohead];
		n = send(a->dfd, m, CTL_MSG_LEN, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			a->dwant_out = true;
			return;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)CTL_MSG_LEN) {
			daemon_disconnect(a, n < 0 ? strerror(errno) :
					  "short send");
			return;
		}
		dbg(a, "sent %s epoch %u host %u peer %s ts %" PRIu64,
		    ctl_type_name(m->type), m->epoch, m->host, m->peer, m->ts);
		a->ohead = (a->ohead + 1) % AGENT_OUTBOX_MAX;
		a->ocount--;
	}
}

/* A report for the daemon: sent now if connected, else kept if it must be. */
static void report(struct agent *a, const struct ctl_msg *m)
{
	if (a->dfd < 0) {
		/* The link's state is re-sent from a->link on reconnect. */
		if (m->type == CTL_LINK_DOWN || m->type == CTL_LINK_UP)
			return;
		outbox_push(a, m);
		return;
	}
	if (a->ocount == AGENT_OUTBOX_MAX) {
		/*
		 * The daemon does not read: start over with a new
		 * connection, which re-sends the link state.
		 */
		daemon_disconnect(a, "not reading");
		report(a, m);
		return;
	}
	outbox_push(a, m);
	outbox_flush(a);
}

/* The uplink's state as a LINK_DOWN/LINK_UP message. */
static void link_msg(const struct agent *a, struct ctl_msg *m)
{
	ctl_msg_init(m, a->link == AGENT_LINK_DOWN ? CTL_LINK_DOWN :
		     CTL_LINK_UP, a->node);
	ctl_set_name(m->peer, a->uplink);
	if (a->link == AGENT_LINK_DOWN && a->link_has_ts) {
		m->flags |= CTL_F_HAS_TS;
		m->ts = a->link_ts;
	}
}

/**
 * daemon_disconnect() - drop the connection to onepiped
 * @a: the agent
 * @why: for the log
 *
 * Keeps the reports that must survive (DONE, UNREACH, REJOINED); HELLO
 * and the link state are rebuilt on the next connection.
 */
static void daemon_disconnect(struct agent *a, const char *why)
{
	struct ctl_msg keep[AGENT_OUTBOX_MAX];
	unsigned int i, n = 0;

	if (a->dfd < 0)
		return;
	logmsg("lost onepiped (%s); reconnecting every %d ms", why,
	       AGENT_RETRY_MS);
	close(a->dfd);
	a->dfd = -1;
	a->dwant_out = false;
	for (i = 0; i < a->ocount; i++) {
		const struct ctl_msg *m =
			&a->outbox[(a->ohead + i) % AGENT_OUTBOX_MAX];

		if (m->type == CTL_DONE || m->type == CTL_UNREACH ||
		    m->type == CTL_REJOINED)
			keep[n++] = *m;
	}
	memcpy(a->outbox, keep, n * sizeof(keep[0]));
	a->ohead = 0;
	a->ocount = n;
	a->retry_at = now_ns() + AGENT_RETRY_MS * 1000000ULL;
	a->retry_logged = true;
}

/*
 * A non-blocking connect: AF_UNIX completes it at once unless the
 * daemon's backlog is full (EAGAIN), which is retried like its absence.
 */
static int daemon_socket(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, err, size = AGENT_SNDBUF;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* Relays (up to CTL_DGRAM_MAX each) go out in bursts. */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/**
 * daemon_connect() - (re)connect to onepiped and say who we are
 * @a: the agent, host id known
 *
 * The outbox is rebuilt as HELLO, the uplink's last state (so that a
 * LINK_DOWN sent to a daemon that died, or never sent, reaches the new
 * one), then the DONE/UNREACH reports kept while disconnected.
 */
static void daemon_connect(struct agent *a)
{
	struct ctl_msg kept[AGENT_OUTBOX_MAX];
	unsigned int i, skip = 0, n = a->ocount;
	struct ctl_msg m;
	int fd;

	fd = daemon_socket(a->path);
	if (fd < 0) {
		if (!a->retry_logged || a->verbose)
			logmsg("cannot connect to %s: %s; retrying every %d ms",
			       a->path, strerror(-fd), AGENT_RETRY_MS);
		a->retry_logged = true;
		a->retry_at = now_ns() + AGENT_RETRY_MS * 1000000ULL;
		return;
	}
	a->dfd = fd;
	a->retry_logged = false;
	logmsg("connected to %s as %s, host %u", a->path, a->node,
	       a->host_id);
	for (i = 0; i < n; i++)
		kept[i] = a->outbox[(a->ohead + i) % AGENT_OUTBOX_MAX];
	/* HELLO and the link state must fit: the oldest reports give way. */
	if (n > AGENT_OUTBOX_MAX - 2) {
		skip = n - (AGENT_OUTBOX_MAX - 2);
		logmsg("outbox full: dropping the %u oldest reports", skip);
	}
	a->ohead = 0;
	a->ocount = 0;
	ctl_msg_init(&m, CTL_HELLO, a->node);
	m.host = a->host_id;
	outbox_push(a, &m);
	if (a->link != AGENT_LINK_UNKNOWN) {
		link_msg(a, &m);
		outbox_push(a, &m);
	}
	for (i = skip; i < n; i++)
		outbox_push(a, &kept[i]);
	outbox_flush(a);
}

static void nl_fail(struct agent *a, const struct ctl_msg *m)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct agent_req r = {
		.epoch = m->epoch, .host = m->host, .ts = m->ts,
	};
	struct nlmsghdr *nlh;
	int err;

	nlh = put_request(a, buf, a->family, ONEPIPE_CMD_FAIL, NLM_F_ACK);
	mnl_attr_put_u32(nlh, ONEPIPE_A_EPOCH, m->epoch);
	mnl_attr_put_u32(nlh, ONEPIPE_A_FAIL_HOST, m->host);
	mnl_attr_put_u64(nlh, ONEPIPE_A_FAIL_TS, m->ts);
	err = req_send(a, nlh, &r);
	if (err)
		logmsg("FAIL epoch %u host %u ts %" PRIu64 ": cannot send: %s",
		       m->epoch, m->host, m->ts, strerror(-err));
}

/*
 * A failed host rejoins: this one (no timestamp: the module starts a new
 * incarnation and answers its first timestamp, which goes back to the
 * daemon as REJOINED), or another (with the new incarnation's first
 * timestamp: answered DONE once applied).
 */
static void nl_rejoin(struct agent *a, const struct ctl_msg *m)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct agent_req r = {
		.epoch = m->epoch, .host = m->host, .ts = m->ts,
	};
	struct nlmsghdr *nlh;
	int err;

	nlh = put_request(a, buf, a->family, ONEPIPE_CMD_REJOIN, NLM_F_ACK);
	mnl_attr_put_u32(nlh, ONEPIPE_A_EPOCH, m->epoch);
	mnl_attr_put_u32(nlh, ONEPIPE_A_FAIL_HOST, m->host);
	if (m->flags & CTL_F_HAS_TS)
		mnl_attr_put_u64(nlh, ONEPIPE_A_FAIL_TS, m->ts);
	err = req_send(a, nlh, &r);
	if (err)
		logmsg("REJOIN epoch %u host %u: cannot send: %s", m->epoch,
		       m->host, strerror(-err));
}

/**
 * nl_relay() - a RELAY from the daemon: the packet to the module
 * @a: the agent
 * @m: the message (ctl_msg_check() passed), the packet after it
 * @len: the datagram's length
 *
 * The module takes it as if from the network (ONEPIPE_CMD_RELAY); a
 * refusal comes back as the request's error (req_error()).
 */
static void nl_relay(struct agent *a, const struct ctl_msg *m, size_t len)
{
	const uint8_t *pkt = (const uint8_t *)(m + 1);
	size_t plen = len - CTL_MSG_LEN;
	struct agent_req r = { .host = m->host };
	struct nlmsghdr *nlh;
	int err;

	if (!a->host_id || m->host != a->host_id ||
	    ctl_pkt_host(pkt, CTL_RELAY_DST_OFF) != a->host_id) {
		a->rs.dropped_in++;
		logmsg_rl(&a->rl_in, "RELAY for host %u (packet for %u) from %s, but this is host %u: dropped (%lu so far)",
			  m->host, ctl_pkt_host(pkt, CTL_RELAY_DST_OFF),
			  m->node, a->host_id, a->rs.dropped_in);
		return;
	}
	nlh = put_request(a, a->relay_nlbuf, a->family, ONEPIPE_CMD_RELAY,
			  NLM_F_ACK);
	mnl_attr_put(nlh, ONEPIPE_A_PACKET, plen, pkt);
	/* Before sending: a refusal may be read within req_send(). */
	a->rs.in++;
	err = req_send(a, nlh, &r);
	if (err) {
		a->rs.in--;
		a->rs.refused++;
		logmsg_rl(&a->rl_refused, "RELAY from host %u: cannot send it to the module: %s (%lu so far)",
			  ctl_pkt_host(pkt, CTL_RELAY_SRC_OFF), strerror(-err),
			  a->rs.refused);
	}
}

/* One message from onepiped (@len bytes: RELAYs are longer). */
static void daemon_msg(struct agent *a, const struct ctl_msg *m, size_t len)
{
	switch (m->type) {
	case CTL_RELAY:
		nl_relay(a, m, len);
		break;
	case CTL_FAIL:
		logmsg("FAIL epoch %u host %u ts %" PRIu64, m->epoch, m->host,
		       m->ts);
		nl_fail(a, m);
		break;
	case CTL_REJOIN:
		logmsg("REJOIN epoch %u host %u%s", m->epoch, m->host,
		       m->host == a->host_id ? " (this host)" : "");
		if (m->host != a->host_id && !(m->flags & CTL_F_HAS_TS)) {
			logmsg("REJOIN of host %u without its first timestamp; ignored",
			       m->host);
			break;
		}
		nl_rejoin(a, m);
		break;
	case CTL_STATE:
		dbg(a, "in sync with onepiped at epoch %u", m->epoch);
		break;
	default:
		logmsg("unexpected %s from onepiped; ignored",
		       ctl_type_name(m->type));
		break;
	}
}

static void daemon_read(struct agent *a)
{
	struct ctl_msg *m = (struct ctl_msg *)a->dgram;
	ssize_t n;

	while (a->dfd >= 0) {
		/* MSG_TRUNC: the packet's real length, to reject oversize. */
		n = recv(a->dfd, a->dgram, CTL_DGRAM_MAX,
			 MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			daemon_disconnect(a, n ? strerror(errno) : "closed");
			return;
		}
		/* ctl_msg_check() refuses it, but reads the struct */
		if (n < (ssize_t)CTL_MSG_LEN)
			memset(a->dgram + n, 0, CTL_MSG_LEN - (size_t)n);
		if (ctl_msg_check(m, n)) {
			a->bad_msgs++;
			logmsg("malformed message from onepiped (%zd bytes); dropped (%lu so far)",
			       n, a->bad_msgs);
			continue;
		}
		daemon_msg(a, m, (size_t)n);
	}
}

/* Kernel events ------------------------------------------------------------ */

/*
 * The uplink's state changed, from an event or from a re-read: remember
 * it and report it.
 */
static void link_change(struct agent *a, bool up, bool has_ts, uint64_t ts)
{
	struct ctl_msg m;

	a->link = up ? AGENT_LINK_UP : AGENT_LINK_DOWN;
	a->link_has_ts = !up && has_ts;
	a->link_ts = a->link_has_ts ? ts : 0;
	if (up)
		logmsg("uplink %s heard again", a->uplink);
	else if (a->link_has_ts)
		logmsg("uplink %s silent, last commit barrier %" PRIu64,
		       a->uplink, a->link_ts);
	else
		logmsg("uplink %s silent, no commit barrier heard", a->uplink);
	link_msg(a, &m);
	report(a, &m);
}

/* A reply or event naming another host id: the host was reconfigured. */
static void host_changed(struct agent *a, uint32_t id)
{
	if (!id || id == a->host_id)
		return;
	logmsg("host id is now %u (was %u)", id, a->host_id);
	a->host_id = id;
	/* The daemon knows us by host id: HELLO again. */
	if (a->dfd >= 0)
		daemon_disconnect(a, "host id changed");
	a->retry_at = now_ns();
}

static void done_report(struct agent *a, uint32_t epoch, uint32_t host)
{
	struct ctl_msg m;

	ctl_msg_init(&m, CTL_DONE, a->node);
	m.epoch = epoch;
	m.host = host;
	report(a, &m);
}

/* An EV_RELAY not sent: counted, logged rate-limited. */
static void relay_out_drop(struct agent *a, uint32_t dst, const char *why)
{
	a->rs.dropped_out++;
	logmsg_rl(&a->rl_out, "relay to host %u dropped: %s (%lu so far; the module resends)",
		  dst, why, a->rs.dropped_out);
}

/**
 * ev_relay() - EV_RELAY: a packet for a peer, to go through the controller
 * @a: the agent
 * @tb: the event's attributes
 *
 * Sent as RELAY {node, host = destination} followed by the packet, only
 * while connected and after HELLO went out (the outbox is empty), and
 * never kept: the module resends until the peer ACKs, so a relay that
 * waited for a reconnection would only arrive late and twice.
 */
static void ev_relay(struct agent *a, const struct nlattr **tb)
{
	const struct nlattr *pa = tb[ONEPIPE_A_PACKET];
	struct ctl_msg *m = (struct ctl_msg *)a->dgram;
	uint32_t dst = get_u32(tb, ONEPIPE_A_PEER_HOST);
	const uint8_t *pkt;
	size_t plen;
	ssize_t n;

	if (!tb[ONEPIPE_A_PEER_HOST] || !pa) {
		relay_out_drop(a, dst, "EV_RELAY without peer or packet");
		return;
	}
	if (a->old_relays) {
		relay_out_drop(a, dst, "from this host's old incarnation");
		return;
	}
	plen = mnl_attr_get_payload_len(pa);
	pkt = mnl_attr_get_payload(pa);
	if (plen < CTL_RELAY_MIN || plen > CTL_RELAY_MAX) {
		relay_out_drop(a, dst, "packet length out of range");
		return;
	}
	if (a->dfd < 0 || a->ocount) {
		relay_out_drop(a, dst, a->dfd < 0 ? "onepiped not connected" :
			       "onepiped not reading");
		return;
	}
	/*
	 * The daemon counts a header that contradicts the message as bad
	 * (and cuts a connection after a few), and drops another source
	 * host as forged: neither is worth sending.
	 */
	if (ctl_pkt_host(pkt, CTL_RELAY_DST_OFF) != dst ||
	    ctl_pkt_host(pkt, CTL_RELAY_SRC_OFF) != a->host_id) {
		relay_out_drop(a, dst, "packet header and event disagree");
		return;
	}
	ctl_msg_init(m, CTL_RELAY, a->node);
	m->host = dst;
	memcpy(m + 1, pkt, plen);
	n = send(a->dfd, m, CTL_MSG_LEN + plen, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n == (ssize_t)(CTL_MSG_LEN + plen)) {
		a->rs.out++;
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
		      errno == EINTR)) {
		relay_out_drop(a, dst, "socket to onepiped full");
		return;
	}
	relay_out_drop(a, dst, n < 0 ? strerror(errno) : "short send");
	/* No memory for a big datagram is no broken connection. */
	if (n >= 0 || (errno != ENOBUFS && errno != ENOMEM))
		daemon_disconnect(a, n < 0 ? strerror(errno) : "short send");
}

static void ev_msg(struct agent *a, const struct nlmsghdr *nlh)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[ONEPIPE_A_MAX + 1];
	struct ctl_msg m;

	if (nlh->nlmsg_type != a->family ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*g))
		return;
	parse_attrs(nlh, tb);
	host_changed(a, get_u32(tb, ONEPIPE_A_HOST_ID));
	switch (g->cmd) {
	case ONEPIPE_CMD_EV_LINK:
		if (!tb[ONEPIPE_A_LINK_UP]) {
			logmsg("EV_LINK without ONEPIPE_A_LINK_UP; ignored");
			return;
		}
		link_change(a, get_u32(tb, ONEPIPE_A_LINK_UP),
			    tb[ONEPIPE_A_LINK_COMMIT],
			    get_u64(tb, ONEPIPE_A_LINK_COMMIT));
		break;
	case ONEPIPE_CMD_EV_UNREACH:
		if (!tb[ONEPIPE_A_PEER_HOST]) {
			logmsg("EV_UNREACH without ONEPIPE_A_PEER_HOST; ignored");
			return;
		}
		ctl_msg_init(&m, CTL_UNREACH, a->node);
		m.host = get_u32(tb, ONEPIPE_A_PEER_HOST);
		logmsg("host %u unreachable", m.host);
		report(a, &m);
		break;
	case ONEPIPE_CMD_EV_FAIL_DONE:
		if (!tb[ONEPIPE_A_EPOCH] || !tb[ONEPIPE_A_FAIL_HOST]) {
			logmsg("EV_FAIL_DONE without epoch or host; ignored");
			return;
		}
		logmsg("DONE epoch %u host %u", get_u32(tb, ONEPIPE_A_EPOCH),
		       get_u32(tb, ONEPIPE_A_FAIL_HOST));
		done_report(a, get_u32(tb, ONEPIPE_A_EPOCH),
			    get_u32(tb, ONEPIPE_A_FAIL_HOST));
		break;
	case ONEPIPE_CMD_EV_RELAY:
		ev_relay(a, tb);
		break;
	default:
		dbg(a, "event %u ignored", g->cmd);
		break;
	}
}

/**
 * resync() - events were lost (multicast overflow): re-read what we can
 * @a: the agent
 *
 * HOST_GET re-reads the host id (and the commit link's state, if the
 * module reports it there); FAIL_GET finds failures completed meanwhile,
 * whose DONE is then re-sent (the daemon ignores repeats); LINK_GET says
 * whether the uplink is heard, which can only confirm LINK_UP: that the
 * commit register fell silent for the commit timeout is not visible in
 * LINK_GET, so a LINK_DOWN lost in the overflow is logged, not guessed.
 */
static void resync(struct agent *a)
{
	logmsg_rl(&a->rl_overrun, "netlink events lost (socket overflow, %lu so far); re-reading state",
		  a->rs.ev_overruns);
	a->resync = true;
	a->host_get_sent = false;
	host_get(a);
	dump(a, ONEPIPE_CMD_FAIL_GET, "FAIL_GET");
	dump(a, ONEPIPE_CMD_LINK_GET, "LINK_GET");
}

static void ev_read(struct agent *a)
{
	const struct nlmsghdr *nlh;
	ssize_t n;
	int len;

	for (;;) {
		n = recv(mnl_socket_get_fd(a->ev), a->rxbuf, AGENT_NL_RXBUF,
			 MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS) {
			/*
			 * Events were lost: relays (resent by the module)
			 * or reports.  Re-read the state once the socket
			 * is drained, not once per overflow: a burst of
			 * relays may overflow it again and again.
			 */
			a->rs.ev_overruns++;
			a->ev_lost = true;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				logmsg("netlink events: %s", strerror(errno));
			if (a->ev_lost) {
				a->ev_lost = false;
				resync(a);
			}
			return;
		}
		len = n;
		for (nlh = (const struct nlmsghdr *)a->rxbuf;
		     mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len))
			ev_msg(a, nlh);
	}
}

/* Answers to our requests -------------------------------------------------- */

static void host_reply(struct agent *a, const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[ONEPIPE_A_MAX + 1];
	uint32_t id;

	parse_attrs(nlh, tb);
	id = get_u32(tb, ONEPIPE_A_HOST_ID);
	if (!id) {
		/* Not configured yet; the poll loop asks again. */
		if (!a->retry_logged)
			logmsg("host not configured yet; waiting");
		a->retry_logged = true;
		return;
	}
	if (!a->host_id) {
		logmsg("host id %u", id);
		a->host_id = id;
		a->retry_logged = false;
		a->retry_at = now_ns();
	} else {
		host_changed(a, id);
	}
	/*
	 * After an overflow: a module that reports the commit link's state
	 * in HOST_GET settles the question exactly.
	 */
	if (a->resync && tb[ONEPIPE_A_LINK_UP]) {
		bool up = get_u32(tb, ONEPIPE_A_LINK_UP);

		a->resync = false;
		if (a->link != (up ? AGENT_LINK_UP : AGENT_LINK_DOWN))
			link_change(a, up, tb[ONEPIPE_A_LINK_COMMIT],
				    get_u64(tb, ONEPIPE_A_LINK_COMMIT));
	}
}

static void fail_reply(struct agent *a, const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[ONEPIPE_A_MAX + 1];

	parse_attrs(nlh, tb);
	if (!tb[ONEPIPE_A_EPOCH] || !tb[ONEPIPE_A_FAIL_HOST])
		return;
	if (get_u32(tb, ONEPIPE_A_FAIL_PENDING)) {
		dbg(a, "failure of host %u (epoch %u) still pending",
		    get_u32(tb, ONEPIPE_A_FAIL_HOST),
		    get_u32(tb, ONEPIPE_A_EPOCH));
		return;
	}
	done_report(a, get_u32(tb, ONEPIPE_A_EPOCH),
		    get_u32(tb, ONEPIPE_A_FAIL_HOST));
}

/* LINK_GET after an overflow (see resync()). */
static void link_reply(struct agent *a, const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[ONEPIPE_A_MAX + 1];
	const struct nlattr *in;
	uint32_t state = ONEPIPE_LINK_DEAD;

	if (!a->resync)
		return;		/* HOST_GET has settled it */
	a->resync = false;
	parse_attrs(nlh, tb);
	if (!tb[ONEPIPE_A_LINK])
		return;
	mnl_attr_for_each_nested(in, tb[ONEPIPE_A_LINK])
		if (mnl_attr_get_type(in) == ONEPIPE_L_STATE &&
		    !mnl_attr_validate(in, MNL_TYPE_U32))
			state = mnl_attr_get_u32(in);
	if (state == ONEPIPE_LINK_LIVE && a->link == AGENT_LINK_DOWN)
		link_change(a, true, false, 0);
	else if (state != ONEPIPE_LINK_LIVE && a->link != AGENT_LINK_DOWN)
		logmsg("uplink is silent after the overflow: a LINK_DOWN lost in it cannot be re-read (only %s's report of the link stands)",
		       a->uplink);
}

/* This host's new incarnation: its first timestamp goes to the daemon. */
static void rejoin_reply(struct agent *a, const struct agent_req *r,
			 const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[ONEPIPE_A_MAX + 1];
	struct ctl_msg m;

	parse_attrs(nlh, tb);
	if (!tb[ONEPIPE_A_FAIL_TS])
		return;
	ctl_msg_init(&m, CTL_REJOINED, a->node);
	m.epoch = r->epoch;
	m.host = r->host;
	m.flags = CTL_F_HAS_TS;
	m.ts = get_u64(tb, ONEPIPE_A_FAIL_TS);
	logmsg("rejoined: epoch %u, first timestamp %" PRIu64, m.epoch, m.ts);
	a->rejoined = m;
	a->rejoined_due = true;
}

/**
 * rejoined_report() - tell the daemon this host rejoined, once it is safe
 * @a: the agent
 *
 * The module dropped the old incarnation's relays before it answered
 * REJOIN, but those it had already multicast wait on the event socket,
 * which is not the socket the answer came on.  Sent after REJOINED, they
 * could reach the daemon once the rejoin is complete, and a late ACK of
 * an old sequence number would ACK a message of the new incarnation
 * that never arrived.  So the event socket is drained first (other
 * events handled as usual), its relays dropped.  Not from
 * rejoin_reply(): that runs while req_handle() walks @rxbuf, which
 * ev_read() fills too.
 */
static void rejoined_report(struct agent *a)
{
	a->rejoined_due = false;
	a->old_relays = true;
	ev_read(a);
	a->old_relays = false;
	report(a, &a->rejoined);
}

static void req_error(struct agent *a, struct agent_req *r,
		      const struct nlmsghdr *nlh)
{
	const char *msg;
	int err = nl_error(nlh, &msg);

	switch (r->cmd) {
	case ONEPIPE_CMD_FAIL:
		if (err)
			logmsg("FAIL epoch %u host %u ts %" PRIu64 " refused: %s%s%s",
			       r->epoch, r->host, r->ts, msg,
			       *msg ? ": " : "", strerror(-err));
		else
			dbg(a, "FAIL epoch %u host %u applied", r->epoch,
			    r->host);
		break;
	case ONEPIPE_CMD_REJOIN:
		if (err) {
			logmsg("REJOIN epoch %u host %u refused: %s%s%s",
			       r->epoch, r->host, msg, *msg ? ": " : "",
			       strerror(-err));
		} else if (r->host != a->host_id) {
			/* Ours answered REJOINED with the reply itself. */
			done_report(a, r->epoch, r->host);
		}
		break;
	case ONEPIPE_CMD_HOST_GET:
		a->host_get_sent = false;
		if (err)
			logmsg("HOST_GET: %s%s%s", msg, *msg ? ": " : "",
			       strerror(-err));
		break;
	case ONEPIPE_CMD_RELAY:
		if (err) {
			/* counted in "in" when sent: it did not get in */
			a->rs.in--;
			a->rs.refused++;
			logmsg_rl(&a->rl_refused, "RELAY refused by the module: %s%s%s (%lu so far)",
				  msg, *msg ? ": " : "", strerror(-err),
				  a->rs.refused);
		}
		break;
	default:
		if (err)
			logmsg("dump %u: %s%s%s", r->cmd, msg, *msg ? ": " : "",
			       strerror(-err));
		break;
	}
	/* A dump's error ends it too; an ack ends a request. */
	req_done(a, r);
}

static void req_msg(struct agent *a, const struct nlmsghdr *nlh)
{
	struct agent_req *r = req_find(a, nlh->nlmsg_seq);
	int err;

	if (!r)
		return;		/* forgotten; nothing to do with it */
	switch (nlh->nlmsg_type) {
	case NLMSG_ERROR:
		req_error(a, r, nlh);
		return;
	case NLMSG_DONE:
		if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(err)) {
			memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
			if (err < 0)
				logmsg("dump %u: %s", r->cmd, strerror(-err));
		}
		req_done(a, r);
		return;
	case NLMSG_NOOP:
	case NLMSG_OVERRUN:
		return;
	}
	if (nlh->nlmsg_type != a->family)
		return;
	switch (r->cmd) {
	case ONEPIPE_CMD_HOST_GET:
		host_reply(a, nlh);
		break;
	case ONEPIPE_CMD_FAIL_GET:
		fail_reply(a, nlh);
		break;
	case ONEPIPE_CMD_LINK_GET:
		link_reply(a, nlh);
		break;
	case ONEPIPE_CMD_REJOIN:
		rejoin_reply(a, r, nlh);
		break;
	}
}

/* Read the answers that are there; never waits. */
static void req_handle(struct agent *a)
{
	const struct nlmsghdr *nlh;
	ssize_t n;
	int len;

	for (;;) {
		n = recv(mnl_socket_get_fd(a->req), a->rxbuf, AGENT_NL_RXBUF,
			 MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			/*
			 * Answers lost (the socket overflowed): their
			 * requests stay pending until req_send() forgets
			 * them; an error of a RELAY is then not seen.
			 */
			a->rs.ev_overruns++;
			logmsg_rl(&a->rl_overrun, "netlink answers lost (socket overflow)");
			continue;
		}
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				logmsg("netlink: %s", strerror(errno));
			return;
		}
		len = n;
		for (nlh = (const struct nlmsghdr *)a->rxbuf;
		     mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len))
			req_msg(a, nlh);
	}
}

/* The loop ----------------------------------------------------------------- */

static int signals_open(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -1;
	return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* Timed work: ask for the host id, or reconnect, when it is due. */
static void tick(struct agent *a)
{
	if (now_ns() < a->retry_at)
		return;
	if (!a->host_id) {
		a->retry_at = now_ns() + AGENT_RETRY_MS * 1000000ULL;
		host_get(a);
		return;
	}
	if (a->dfd < 0)
		daemon_connect(a);
}

static int poll_timeout(const struct agent *a)
{
	uint64_t now = now_ns();

	if (a->host_id && a->dfd >= 0)
		return -1;
	if (a->retry_at <= now)
		return 0;
	return (a->retry_at - now + 999999) / 1000000;
}

static int run(struct agent *a)
{
	enum { P_SIG, P_EV, P_REQ, P_DAEMON, P_N };
	struct pollfd p[P_N];
	struct signalfd_siginfo si;
	int n;

	for (;;) {
		tick(a);
		p[P_SIG] = (struct pollfd){ .fd = a->sfd, .events = POLLIN };
		p[P_EV] = (struct pollfd){ .fd = mnl_socket_get_fd(a->ev),
					   .events = POLLIN };
		p[P_REQ] = (struct pollfd){ .fd = mnl_socket_get_fd(a->req),
					    .events = POLLIN };
		p[P_DAEMON] = (struct pollfd){
			.fd = a->dfd,
			.events = POLLIN | (a->dwant_out ? POLLOUT : 0),
		};
		n = poll(p, P_N, poll_timeout(a));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			logmsg("poll: %s", strerror(errno));
			return 1;
		}
		if (p[P_SIG].revents &&
		    read(a->sfd, &si, sizeof(si)) == sizeof(si)) {
			logmsg("signal %u: exiting", si.ssi_signo);
			return 0;
		}
		if (p[P_EV].revents)
			ev_read(a);
		if (p[P_REQ].revents)
			req_handle(a);
		if (a->rejoined_due)
			rejoined_report(a);
		if (a->dfd >= 0 && p[P_DAEMON].fd == a->dfd &&
		    p[P_DAEMON].revents) {
			if (p[P_DAEMON].revents & (POLLIN | POLLHUP | POLLERR))
				daemon_read(a);
			if (a->dfd >= 0 && (p[P_DAEMON].revents & POLLOUT))
				outbox_flush(a);
		}
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: onepipe-agent --node NODE --uplink SWITCH [--socket PATH] [-v]\n"
		"  --node NODE      this host's node name in the topology (h1)\n"
		"  --uplink SWITCH  the node name of its uplink switch (tor1)\n"
		"  --socket PATH    onepiped's socket (default %s)\n"
		"  -v, --verbose    log every message\n",
		CTL_DEFAULT_SOCKET);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "node",	required_argument,	NULL, 'n' },
		{ "uplink",	required_argument,	NULL, 'u' },
		{ "socket",	required_argument,	NULL, 's' },
		{ "verbose",	no_argument,		NULL, 'v' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct agent a = {
		.path = CTL_DEFAULT_SOCKET,
		.dfd = -1,
		.sfd = -1,
	};
	char name[CTL_NAME_LEN];
	int opt, ret = 1;

	while ((opt = getopt_long(argc, argv, "n:u:s:vh", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'n':
			a.node = optarg;
			break;
		case 'u':
			a.uplink = optarg;
			break;
		case 's':
			a.path = optarg;
			break;
		case 'v':
			a.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || !a.node || !a.uplink) {
		usage(stderr);
		return 2;
	}
	if (ctl_set_name(name, a.node) || ctl_set_name(name, a.uplink)) {
		fprintf(stderr,
			"onepipe-agent: node names are 1..%d of [A-Za-z0-9_.-]\n",
			CTL_NAME_LEN - 1);
		return 2;
	}
	log_node = a.node;
	/* Line by line, so that logs of several agents interleave cleanly. */
	setvbuf(stderr, NULL, _IOLBF, 0);

	a.sfd = signals_open();
	if (a.sfd < 0) {
		logmsg("signalfd: %s", strerror(errno));
		return 1;
	}
	if (nl_open(&a))
		goto out;
	host_get(&a);
	ret = run(&a);
	logmsg("relays: %lu out, %lu in, %lu not sent, %lu not for us, %lu refused by the module; %lu netlink overflows",
	       a.rs.out, a.rs.in, a.rs.dropped_out, a.rs.dropped_in,
	       a.rs.refused, a.rs.ev_overruns);
out:
	if (a.dfd >= 0)
		close(a.dfd);
	if (a.req)
		mnl_socket_close(a.req);
	if (a.ev)
		mnl_socket_close(a.ev);
	free(a.rxbuf);
	free(a.relay_nlbuf);
	free(a.dgram);
	close(a.sfd);
	return ret;
}
