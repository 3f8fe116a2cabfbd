/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * AF_ONEPIPE: causally and totally ordered messaging (1Pipe).
 *
 * This is the whole user/kernel contract: the address family, the socket
 * address, socket options, control messages and the generic netlink family
 * used to configure a host.  All multi-byte fields in this file are in host
 * byte order (as AF_VSOCK does); only the wire format is big endian.
 */
#ifndef _UAPI_LINUX_ONEPIPE_H
#define _UAPI_LINUX_ONEPIPE_H

#include <linux/types.h>
#include <linux/socket.h>

/*
 * Address family.  23 was AF_IRDA, whose implementation left the kernel in
 * 4.17; no in-tree protocol registers it on 6.1, so sock_register() accepts
 * it.  The module carries MODULE_ALIAS_NETPROTO(23) so that socket(2)
 * autoloads it.
 */
#define AF_ONEPIPE		23
#define PF_ONEPIPE		AF_ONEPIPE

/* Socket option level; above every SOL_* in use on 6.1. */
#define SOL_ONEPIPE		299

/* Host ids are chosen by the operator; 0 means "this host" / unset. */
#define ONEPIPE_HOST_LOCAL	0
/* Port 0 in bind() picks a free port. */
#define ONEPIPE_PORT_ANY	0
/* Ports from here up are handed out by autobind / bind(port 0). */
#define ONEPIPE_PORT_EPHEMERAL	32768

/*
 * Scatterings and admission.  The messages of one sendmmsg() call, or of a
 * chain of sendmsg() calls with MSG_MORE ended by one without it, form one
 * scattering: one timestamp for all of them.  A scattering is admitted
 * whole or not at all:
 *
 * - Admission is decided at its first message.  The socket takes a new
 *   scattering while its send buffer is not full (SIOCOUTQ < SO_SNDBUF)
 *   and its previous scattering no longer waits for credits (below).
 *   Otherwise a non-blocking call fails with EAGAIN and a blocking one
 *   waits (SO_SNDTIMEO: EAGAIN; a signal: EINTR).  The later messages of an
 *   admitted scattering never wait and never see EAGAIN.  POLLOUT means the
 *   next scattering will be admitted.  While a thread builds a scattering,
 *   other threads' sends on the socket wait for it to close (or EAGAIN);
 *   if that thread exits first, its scattering is refused (ECONNABORTED).
 *   SIOCOUTQ is the send-buffer charge: a message keeps its share until
 *   it is settled (ACKed; SOCK_RDM: committed) or its send-failure
 *   notification is on the error queue, so once it reads 0 every such
 *   notification can be read, unless the error queue was full (it shares
 *   SO_RCVBUF with the receive queue, as on any socket) and it was dropped.
 * - A scattering that cannot be sent (a bad address or flag in any
 *   message, a message above ONEPIPE_MAX_MSG, more bytes than SO_SNDBUF,
 *   SOCK_RDM: more messages than net.onepipe.rdm_window, or a receiver
 *   the failure controller declared failed (EHOSTDOWN), host down, no
 *   memory) fails as a whole before it is stamped.  The failing call
 *   returns the error; the messages earlier calls (or the earlier entries
 *   of the same sendmmsg(), which then returns their count) had accepted
 *   are not sent but returned on the error queue with timestamp 0,
 *   ee_errno the error and ee_code ONEPIPE_EE_ABORTED (ONEPIPE_EE_DOWN when
 *   the host went down).  So sendmmsg() returning fewer than vlen means
 *   nothing of the scattering was sent.
 * - SOCK_RDM: a scattering with more messages for one host than that
 *   host's rdm_window grants fails the same way, with EMSGSIZE, once the
 *   sender learns the receiver's window.
 * - An admitted scattering is stamped and sent once each of its messages
 *   holds a credit towards its destination host: SOCK_RDM, the receiver's
 *   window and the congestion window; SOCK_DGRAM, net.onepipe.be_window
 *   messages in flight per destination host, not yet ACKed nor notified
 *   (all the host's sockets share them).  Until then it waits, unstamped:
 *   the call that closed it has returned (a blocking one returns once it
 *   is stamped), ONEPIPE_LAST_TS fails with EINPROGRESS and the socket is
 *   not writable.  So a best-effort sender faster than the fabric sees
 *   EAGAIN and then POLLOUT, rather than timeouts.  A scattering needing
 *   more credits from one host than its window holds goes once nothing
 *   else is in flight there.
 */

/*
 * Largest message one sendmsg() may carry.  Messages larger than the path
 * MTU are fragmented and reassembled; above this sendmsg() fails with
 * EMSGSIZE.
 */
#define ONEPIPE_MAX_MSG		65536

/* Timestamps are 48-bit nanoseconds that wrap around (PAWS-style compare). */
#define ONEPIPE_TS_BITS		48
#define ONEPIPE_TS_MASK		((((__u64)1) << ONEPIPE_TS_BITS) - 1)

/**
 * struct sockaddr_onepipe - address of a 1Pipe endpoint (a process)
 * @sop_family: AF_ONEPIPE
 * @sop_port: port of the socket on its host, host byte order
 * @sop_host: host id, host byte order; 0 in bind() means this host
 */
struct sockaddr_onepipe {
	__kernel_sa_family_t	sop_family;
	__u16			sop_port;
	__u32			sop_host;
};

/*
 * Socket options at SOL_ONEPIPE.
 *
 * ONEPIPE_TIMESTAMP (get, __u64): the host's current 1Pipe timestamp, the
 *	value the next scattering would get at the earliest
 *	(the paper's onepipe_get_timestamp()).
 * ONEPIPE_LAST_TS (get, __u64): timestamp of the last scattering this socket
 *	sent; ENOENT before the first one; EINPROGRESS while a SOCK_RDM
 *	scattering waits for window (not stamped yet; POLLOUT says when).
 * ONEPIPE_ORDERED (get/set, int): 1 (default) = messages this socket sends
 *	are delivered in total order; 0 = delivered on arrival, bypassing the
 *	reorder queue (for measuring what ordering costs).
 * ONEPIPE_BARRIER (get, __u64): the barrier below which this host has
 *	delivered everything (for a SOCK_RDM socket, the commit barrier).
 * ONEPIPE_FAILURE_ACK (set, __u32): SOCK_RDM: the application has handled
 *	the process-failure notifications (ONEPIPE_EE_PROC_FAILED) of every
 *	epoch up to this one (their ee_data); delivery of messages stamped
 *	at or after those failures, held since the notification, resumes.  Without
 *	it delivery resumes net.onepipe.failure_hold_ms after the
 *	notification.  EINVAL for an epoch not notified yet.
 */
#define ONEPIPE_TIMESTAMP	1
#define ONEPIPE_LAST_TS		2
#define ONEPIPE_ORDERED		3
#define ONEPIPE_BARRIER		4
#define ONEPIPE_FAILURE_ACK	5

/*
 * Control messages at SOL_ONEPIPE.
 *
 * ONEPIPE_CMSG_TS (__u64): on recvmsg() the message's timestamp; on the
 *	error queue the timestamp of the failed message, or 0 if it failed
 *	before its scattering was stamped (the scattering was refused as a
 *	whole: it never left).
 * ONEPIPE_CMSG_RECVERR (struct onepipe_recverr): on the error queue
 *	(MSG_ERRQUEUE) a send-failure notification.  The data returned with it
 *	is the payload of the failed message.
 */
#define ONEPIPE_CMSG_TS		1
#define ONEPIPE_CMSG_RECVERR	2

/*
 * ee_code values of send-failure notifications (ee_origin is LOCAL).
 *
 * What a notification means: every code but ONEPIPE_EE_UNKNOWN,
 * ONEPIPE_EE_DOWN (this host went down: what it had sent may have
 * arrived) and ONEPIPE_EE_PROC_FAILED (not about one message) says that
 * the message was not delivered and never will be, and the receiver said
 * so or never got it; so a best-effort sender may send it again, or give
 * up on it, without it ever being delivered twice or behind its back.
 * ee_errno alone does not tell: ONEPIPE_EE_TIMEOUT and ONEPIPE_EE_UNKNOWN
 * are both ETIMEDOUT; look at ee_code.
 *
 * Best-effort deadlines.  A best-effort message carries a deadline: its
 * timestamp plus net.onepipe.ack_timeout_ms at least, and more when the
 * delay this host measured towards the receiver (from a message's stamp
 * to its ACK, or to when a NAK says it was refused or stopped waiting)
 * asks for it: twice what RFC 6298 would wait for an ACK, 2 (srtt +
 * 4 rttvar, the latter at least a beacon interval), up to
 * net.onepipe.be_deadline_max_ms (rounded up by at most an eighth).  Its
 * receiver delivers it only before that instant by its own clock, and
 * otherwise drops it (counted as rx_expired) and says so
 * (ONEPIPE_EE_TIMEOUT).  A sender with no ACK by the deadline by its own
 * clock asks the receiver, which answers from its record of what it
 * delivered, and closes the message if it had not: the answer is final
 * whatever the clocks say, so skewed clocks cost deliveries (a receiver
 * ahead drops early), never a false notification.  If no answer comes
 * (the receiver or the path is gone, or the message is older than the
 * receiver's record, OP_SEQREC_SPAN = 1024 messages from that sender)
 * the notification is ONEPIPE_EE_UNKNOWN: it may have been delivered.
 * A receiver that started anew (module or namespace) answers "not
 * delivered" only for messages stamped after it started.
 */
enum onepipe_ee_code {
	/*
	 * Best effort: not delivered by its deadline, and never will be
	 * (ETIMEDOUT)
	 */
	ONEPIPE_EE_TIMEOUT = 1,
	ONEPIPE_EE_LATE,	/* arrived below the receiver's barrier (ETIME) */
	ONEPIPE_EE_NOPORT,	/* no socket bound to the port (ECONNREFUSED) */
	ONEPIPE_EE_NOBUFS,	/* receiver's queue full (ENOBUFS) */
	ONEPIPE_EE_DOWN,	/* host unconfigured / transport gone (ENETDOWN) */
	ONEPIPE_EE_UNREACH,	/* SOCK_RDM: receiver unreachable (EHOSTUNREACH) */
	/* SOCK_RDM: another message of the scattering failed (ECANCELED) */
	ONEPIPE_EE_RECALLED,
	/*
	 * The scattering was refused before it was stamped (timestamp 0);
	 * ee_errno is the refusal's error (see "Scatterings and admission")
	 */
	ONEPIPE_EE_ABORTED,
	/*
	 * SOCK_RDM: process-failure notification (EHOSTDOWN).  The
	 * controller declared host offender.sop_host failed at the timestamp
	 * ONEPIPE_CMSG_TS carries: every correct receiver delivers its
	 * messages stamped below that and none at or after it.  ee_data is the
	 * failure's epoch, for ONEPIPE_FAILURE_ACK; no payload.
	 */
	ONEPIPE_EE_PROC_FAILED,
	/*
	 * Best effort: no ACK, and no answer from the receiver about it
	 * within its deadline's length again after the deadline (four
	 * queries): it may or may not have been delivered (ETIMEDOUT)
	 */
	ONEPIPE_EE_UNKNOWN,
};

/**
 * struct onepipe_recverr - payload of ONEPIPE_CMSG_RECVERR
 * @ee: ee_errno says why, ee_origin is SO_EE_ORIGIN_LOCAL, ee_code is an
 *	enum onepipe_ee_code, ee_info is the message length
 * @offender: the destination the message could not be delivered to
 */
struct onepipe_recverr {
	struct {
		__u32	ee_errno;
		__u8	ee_origin;
		__u8	ee_type;
		__u8	ee_code;
		__u8	ee_pad;
		__u32	ee_info;
		__u32	ee_data;
	} ee;	/* layout of struct sock_extended_err */
	struct sockaddr_onepipe offender;
};

/* Generic netlink family for host configuration and introspection. */
#define ONEPIPE_GENL_NAME	"onepipe"
#define ONEPIPE_GENL_VERSION	1
/*
 * Multicast group of the events a host reports to the failure controller
 * (ONEPIPE_CMD_EV_*); onepipe-agent listens to it.
 */
#define ONEPIPE_GENL_MCGRP_CTL	"ctl"
/*
 * Largest packet the controller relays (ONEPIPE_A_PACKET): a jumbo
 * frame's worth; larger packets (a transport MTU above it) are not relayed.
 */
#define ONEPIPE_RELAY_MAX	9216

enum onepipe_cmd {
	ONEPIPE_CMD_UNSPEC,
	ONEPIPE_CMD_HOST_GET,	/* host config, clock, barriers, counters */
	ONEPIPE_CMD_HOST_SET,	/* set host id / transport (CAP_NET_ADMIN) */
	ONEPIPE_CMD_HOST_DOWN,	/* stop the transport (CAP_NET_ADMIN) */
	ONEPIPE_CMD_LINK_GET,	/* dump: per input link state */
	ONEPIPE_CMD_SOCK_GET,	/* dump: sockets of this netns */
	ONEPIPE_CMD_PEER_GET,	/* dump: reliable-service state per peer host */
	ONEPIPE_CMD_DEV_GET,	/* dump: RDMA device ports of the verbs transport */
	/*
	 * Failure handling (the controller's decisions, see README).
	 * FAIL: the controller declared a host failed at a timestamp
	 * (ONEPIPE_A_EPOCH, ONEPIPE_A_FAIL_HOST, ONEPIPE_A_FAIL_TS;
	 * CAP_NET_ADMIN): discard its reliable messages stamped at or after
	 * it, deliver those before it, recall scatterings
	 * that included it, notify SOCK_RDM sockets.  Idempotent for the
	 * same host and timestamp.  FAIL_GET dumps the failures applied.
	 */
	ONEPIPE_CMD_FAIL,
	ONEPIPE_CMD_FAIL_GET,
	/*
	 * Events, multicast on ONEPIPE_GENL_MCGRP_CTL only (joining it takes
	 * CAP_NET_ADMIN); each carries ONEPIPE_A_HOST_ID, the reporting host.
	 */
	/*
	 * The uplink's commit register fell silent for the commit timeout
	 * (ONEPIPE_A_LINK_UP 0, ONEPIPE_A_LINK_COMMIT the last commit
	 * barrier heard on it, if any) or was heard again (ONEPIPE_A_LINK_UP
	 * 1).  Only while net.onepipe.controlled is set; the link then stays
	 * in the commit minimum.
	 */
	ONEPIPE_CMD_EV_LINK,
	/*
	 * SOCK_RDM: ONEPIPE_A_PEER_HOST did not ACK within the retry
	 * budget (while controlled: resends go on at the longest interval).
	 */
	ONEPIPE_CMD_EV_UNREACH,
	/*
	 * A FAIL is complete here: messages discarded, the recalls it
	 * started ACKed or given up (ONEPIPE_A_EPOCH, ONEPIPE_A_FAIL_HOST).
	 */
	ONEPIPE_CMD_EV_FAIL_DONE,
	/*
	 * A failed host rejoins as a new incarnation (ONEPIPE_A_FAIL_HOST,
	 * ONEPIPE_A_EPOCH; CAP_NET_ADMIN).  Sent first to the host itself
	 * (its own id; the same epoch again only repeats the answer): its
	 * reliable state starts over, what it had sent fails with
	 * ONEPIPE_EE_DOWN, what it had not delivered is dropped, and the
	 * reply carries ONEPIPE_A_FAIL_TS, the new incarnation's first
	 * timestamp.  Then to the others with that ONEPIPE_A_FAIL_TS: their
	 * reliable state about it starts over, and what the old incarnation
	 * stamped from its failure timestamp until then stays discarded.
	 */
	ONEPIPE_CMD_REJOIN,
	/*
	 * Controller forwarding (SOCK_RDM, while controlled).  A sender
	 * that gets no ACK from a peer within the retry budget, and
	 * reports it (ONEPIPE_CMD_EV_UNREACH), also hands every reliable
	 * packet for that peer to the controller, as event EV_RELAY
	 * (ONEPIPE_A_PEER_HOST the destination, ONEPIPE_A_PACKET the
	 * packet from its 1Pipe header on), besides sending it on the
	 * network, until an ACK that came over the network says the
	 * network carried the data too.  A receiver hands back the ACKs of
	 * what reached it that way.  The controller delivers them to the
	 * destination with ONEPIPE_CMD_RELAY {ONEPIPE_A_PACKET}
	 * (CAP_NET_ADMIN): it is received as if from the network, except
	 * that its barrier and commit fields, which no switch aggregated,
	 * are ignored.
	 */
	ONEPIPE_CMD_EV_RELAY,
	ONEPIPE_CMD_RELAY,
	__ONEPIPE_CMD_MAX,
};

#define ONEPIPE_CMD_MAX (__ONEPIPE_CMD_MAX - 1)

enum onepipe_transport_kind {
	ONEPIPE_TRANSPORT_NONE,
	ONEPIPE_TRANSPORT_UDP,
	ONEPIPE_TRANSPORT_VERBS,
};

enum onepipe_attr {
	ONEPIPE_A_UNSPEC,
	ONEPIPE_A_HOST_ID,		/* u32 */
	ONEPIPE_A_TRANSPORT,		/* u32, enum onepipe_transport_kind */
	ONEPIPE_A_UDP_LOCAL_ADDR,	/* be32 IPv4 address */
	ONEPIPE_A_UDP_LOCAL_PORT,	/* u16, host order */
	ONEPIPE_A_UDP_UPLINK_ADDR,	/* be32 IPv4 address of the switch */
	ONEPIPE_A_UDP_UPLINK_PORT,	/* u16, host order */
	ONEPIPE_A_STATE,		/* u32: 0 down, 1 up */
	ONEPIPE_A_CLOCK,		/* u64: current timestamp */
	ONEPIPE_A_TX_BARRIER,		/* u64: barrier last sent on the uplink */
	ONEPIPE_A_RX_BARRIER,		/* u64: barrier delivered up to */
	ONEPIPE_A_REORDER_DEPTH,	/* u32: messages in the reorder queue */
	ONEPIPE_A_COUNTERS,		/* nest of ONEPIPE_C_* u64 */
	ONEPIPE_A_LINK,			/* nest of ONEPIPE_L_* */
	ONEPIPE_A_SOCK,			/* nest of ONEPIPE_S_* */
	ONEPIPE_A_PAD,
	ONEPIPE_A_TX_COMMIT,		/* u64: commit barrier last sent */
	ONEPIPE_A_RX_COMMIT,		/* u64: commit barrier delivered up to */
	ONEPIPE_A_RDM_WAITING,		/* u32: scatterings waiting for credits */
	ONEPIPE_A_RDM_UNACKED,		/* u32: reliable messages not yet ACKed */
	ONEPIPE_A_PEER,			/* nest of ONEPIPE_P_* */
	/* verbs transport (HOST_SET, HOST_GET, DEV_GET) */
	ONEPIPE_A_VERBS_DEV,		/* string: RDMA device name */
	ONEPIPE_A_VERBS_PORT,		/* u32: port number, default 1 */
	ONEPIPE_A_VERBS_QKEY,		/* u32: Q_Key of the host's QP */
	ONEPIPE_A_VERBS_GID,		/* binary, 16 bytes: the host's GID */
	ONEPIPE_A_VERBS_QPN,		/* u32: the host's UD QP number */
	ONEPIPE_A_VERBS_MTU,		/* u32: largest 1Pipe packet */
	ONEPIPE_A_VERBS_STATE,		/* u32: enum ib_port_state (4: active) */
	ONEPIPE_A_VERBS_BOUND,		/* u32: 1 if a host uses the port */
	ONEPIPE_A_VERBS_PEERS,		/* nest of ONEPIPE_A_VERBS_PEER */
	ONEPIPE_A_VERBS_PEER,		/* nest of ONEPIPE_V_* */
	ONEPIPE_A_VERBS_COUNTERS,	/* nest of ONEPIPE_VC_* u64 */
	/* failure handling */
	ONEPIPE_A_EPOCH,		/* u32: the controller's decision number */
	ONEPIPE_A_FAIL_HOST,		/* u32: the failed host */
	ONEPIPE_A_FAIL_TS,		/* u64: its failure timestamp */
	/* u32: 0 silent, 1 heard again (EV_LINK; HOST_GET: the uplink) */
	ONEPIPE_A_LINK_UP,
	ONEPIPE_A_LINK_COMMIT,		/* u64: last commit barrier heard */
	ONEPIPE_A_PEER_HOST,		/* u32: the peer an event is about */
	ONEPIPE_A_CONTROLLED,		/* u32: net.onepipe.controlled (HOST_GET) */
	ONEPIPE_A_FAIL_PENDING,		/* u32: 1 while its recalls run (dump) */
	ONEPIPE_A_PACKET,		/* binary: a relayed 1Pipe packet */
	__ONEPIPE_A_MAX,
};

#define ONEPIPE_A_MAX (__ONEPIPE_A_MAX - 1)

/* Per-host counters, all u64. */
enum onepipe_counter {
	ONEPIPE_C_UNSPEC,
	ONEPIPE_C_TX_MSGS,		/* messages sent */
	ONEPIPE_C_TX_SCATTERINGS,	/* scatterings stamped */
	ONEPIPE_C_TX_PKTS,		/* packets handed to the transport */
	ONEPIPE_C_TX_BEACONS,		/* beacons sent */
	ONEPIPE_C_TX_ACKS,		/* ACK packets sent */
	ONEPIPE_C_TX_NAKS,		/* NAK packets sent */
	ONEPIPE_C_TX_ERRORS,		/* transport refused a packet */
	ONEPIPE_C_RX_PKTS,		/* packets received */
	ONEPIPE_C_RX_BEACONS,		/* beacons received */
	ONEPIPE_C_RX_MSGS,		/* messages delivered to sockets */
	ONEPIPE_C_RX_LATE,		/* dropped: below the delivered barrier */
	ONEPIPE_C_RX_NOPORT,		/* dropped: no socket on the port */
	ONEPIPE_C_RX_NOBUFS,		/* dropped: socket receive queue full */
	ONEPIPE_C_RX_BAD,		/* dropped: malformed packet */
	ONEPIPE_C_RX_DUP,		/* dropped: duplicate fragment / message */
	ONEPIPE_C_RX_REASM_DROP,	/* partial messages given up */
	ONEPIPE_C_ACKED,		/* messages acknowledged end to end */
	ONEPIPE_C_SEND_FAILURES,	/* send-failure notifications raised */
	ONEPIPE_C_LINK_TIMEOUTS,	/* input links removed after silence */
	ONEPIPE_C_RETRANSMITS,		/* reliable messages sent again */
	ONEPIPE_C_RECALLS,		/* reliable messages recalled (sender) */
	ONEPIPE_C_RX_RECALLS,		/* buffered messages discarded on recall */
	ONEPIPE_C_WINDOW_STALLS,	/* scatterings that waited for credits */
	ONEPIPE_C_WINDOW_PROBES,	/* window probes sent */
	ONEPIPE_C_ECN_MARKS,		/* CE-marked packets received */
	ONEPIPE_C_CWND_CUTS,		/* congestion window reductions */
	ONEPIPE_C_RX_RDM_MSGS,		/* reliable messages delivered */
	/* sum over reliable deliveries of (delivery time - message ts) */
	ONEPIPE_C_COMMIT_LAG_NS,
	ONEPIPE_C_TX_ABORTED,		/* scatterings refused whole, unstamped */
	ONEPIPE_C_RX_OVERWINDOW,	/* reliable msgs dropped: window full */
	ONEPIPE_C_FAILURES,		/* process failures applied (FAIL) */
	ONEPIPE_C_FAIL_DISCARDS,	/* reliable msgs of failed hosts dropped */
	ONEPIPE_C_FAIL_NOTIFIES,	/* process-failure notifications queued */
	ONEPIPE_C_CTL_EVENTS,		/* events multicast to the controller */
	ONEPIPE_C_RELAY_OUT,		/* packets handed to the controller */
	ONEPIPE_C_RELAY_IN,		/* packets the controller delivered */
	ONEPIPE_C_RELAY_DROPS,		/* copies for it dropped (queue, size) */
	/*
	 * best effort, packets dropped: past their message's deadline, or
	 * of a message a query closed or the record forgot
	 */
	ONEPIPE_C_RX_EXPIRED,
	ONEPIPE_C_TX_QUERIES,		/* queries about msgs past deadline */
	ONEPIPE_C_TX_UNKNOWN,		/* msgs no query answer settled */
	ONEPIPE_C_TX_BUNDLES,		/* datagrams sent carrying >1 packet */
	ONEPIPE_C_RX_BUNDLES,		/* such datagrams received */
	__ONEPIPE_C_MAX,
};

#define ONEPIPE_C_MAX (__ONEPIPE_C_MAX - 1)

/* Per input link state (ONEPIPE_A_LINK nest). */
enum onepipe_link_attr {
	ONEPIPE_L_UNSPEC,
	ONEPIPE_L_INDEX,		/* u32 */
	ONEPIPE_L_STATE,		/* u32: enum onepipe_link_state */
	ONEPIPE_L_BARRIER,		/* u64: last barrier heard (if heard) */
	ONEPIPE_L_IDLE_NS,		/* u64: time since last packet (if heard) */
	ONEPIPE_L_PAD,
	__ONEPIPE_L_MAX,
};

#define ONEPIPE_L_MAX (__ONEPIPE_L_MAX - 1)

enum onepipe_link_state {
	ONEPIPE_LINK_NEW,	/* heard, not counted yet (new-link rule) */
	ONEPIPE_LINK_LIVE,	/* counted in the min */
	ONEPIPE_LINK_DEAD,	/* never heard, or silent too long: not in the min */
};

/* Per socket state (ONEPIPE_A_SOCK nest). */
enum onepipe_sock_attr {
	ONEPIPE_S_UNSPEC,
	ONEPIPE_S_PORT,			/* u16 */
	ONEPIPE_S_TYPE,			/* u32: SOCK_DGRAM / SOCK_RDM */
	ONEPIPE_S_RX_QUEUED,		/* u32: bytes in the receive queue */
	ONEPIPE_S_TX_QUEUED,		/* u32: bytes awaiting ACK */
	ONEPIPE_S_ORDERED,		/* u8 */
	ONEPIPE_S_INODE,		/* u64 */
	ONEPIPE_S_PAD,
	__ONEPIPE_S_MAX,
};

#define ONEPIPE_S_MAX (__ONEPIPE_S_MAX - 1)

/*
 * Reliable-service state towards and from one peer host (ONEPIPE_A_PEER
 * nest), and the best-effort deadline towards it; all u32.  Sequence
 * numbers count messages, per direction.
 */
enum onepipe_peer_attr {
	ONEPIPE_P_UNSPEC,
	ONEPIPE_P_HOST,			/* the peer's host id */
	ONEPIPE_P_TX_NEXT,		/* sequence number of the next message */
	ONEPIPE_P_TX_EDGE,		/* its window: may send seq < edge */
	ONEPIPE_P_TX_INFLIGHT,		/* sent, not yet ACKed */
	ONEPIPE_P_TX_RESERVED,		/* credits held by waiting scatterings */
	ONEPIPE_P_TX_QUEUED,		/* sent, not yet committed */
	ONEPIPE_P_CWND,			/* congestion window, messages */
	ONEPIPE_P_ALPHA,		/* DCTCP marked fraction, in 1/1024 */
	ONEPIPE_P_SRTT_US,		/* smoothed ACK round trip (0: none) */
	ONEPIPE_P_RTTVAR_US,		/* its mean deviation */
	ONEPIPE_P_BACKOFF,		/* timeout doublings in force */
	ONEPIPE_P_RX_NXT,		/* every message below arrived */
	ONEPIPE_P_RX_HELD,		/* held here, charged to its window */
	ONEPIPE_P_RX_ADV,		/* window edge last advertised to it */
	ONEPIPE_P_RELAY,		/* 1: packets to it go via the controller */
	/*
	 * Best effort: the smoothed delay from a message's timestamp to
	 * its delivery (its ACK, or the time a NAK gives; 0: none
	 * measured), its mean deviation, and the deadline a message to
	 * this peer alone stamped now would get (after its timestamp).
	 */
	ONEPIPE_P_BE_DELAY_US,
	ONEPIPE_P_BE_DELAYVAR_US,
	ONEPIPE_P_BE_DEADLINE_US,
	__ONEPIPE_P_MAX,
};

#define ONEPIPE_P_MAX (__ONEPIPE_P_MAX - 1)

/*
 * How a host reaches a peer over the verbs transport (ONEPIPE_A_VERBS_PEER
 * nest).  Peer host 0 is the uplink switch: beacons go there.
 */
enum onepipe_verbs_peer_attr {
	ONEPIPE_V_UNSPEC,
	ONEPIPE_V_HOST,			/* u32: host id, 0 for the uplink */
	ONEPIPE_V_GID,			/* binary, 16 bytes */
	ONEPIPE_V_QPN,			/* u32: UD QP number */
	ONEPIPE_V_QKEY,			/* u32: default ONEPIPE_VERBS_QKEY */
	__ONEPIPE_V_MAX,
};

#define ONEPIPE_V_MAX (__ONEPIPE_V_MAX - 1)

/* Per RDMA device port counters of the verbs transport, all u64. */
enum onepipe_verbs_counter {
	ONEPIPE_VC_UNSPEC,
	ONEPIPE_VC_TX_POSTS,		/* send work requests posted */
	ONEPIPE_VC_TX_INLINE,		/* of which with inline data */
	ONEPIPE_VC_TX_COMPLETIONS,	/* sends completed */
	ONEPIPE_VC_TX_ERRORS,		/* sends failed (post or completion) */
	ONEPIPE_VC_TX_QUEUED,		/* packets that waited for a send slot */
	ONEPIPE_VC_TX_NOPEER,		/* dropped: no address for the host */
	ONEPIPE_VC_RX_COMPLETIONS,	/* packets received */
	ONEPIPE_VC_RX_ERRORS,		/* receive completions in error */
	ONEPIPE_VC_RX_REFILLS,		/* receive buffers replaced */
	ONEPIPE_VC_RX_COPIED,		/* small packets copied out */
	ONEPIPE_VC_RX_DROPS,		/* dropped: no memory, or no host */
	/*
	 * completions that found the receive ring empty: the device may
	 * have dropped packets meanwhile (UD's receiver-not-ready)
	 */
	ONEPIPE_VC_RX_EMPTY,
	ONEPIPE_VC_RX_POSTED,		/* receive buffers posted (gauge) */
	ONEPIPE_VC_RX_FOREIGN,		/* beacons not from the uplink, dropped */
	ONEPIPE_VC_QP_RESETS,		/* QP errors recovered by a reset */
	__ONEPIPE_VC_MAX,
};

#define ONEPIPE_VC_MAX (__ONEPIPE_VC_MAX - 1)

/* Default Q_Key of the verbs transport's UD QPs. */
#define ONEPIPE_VERBS_QKEY	0x0001f1feU

/* Default UDP port of the UDP transport (hosts and switches). */
#define ONEPIPE_UDP_PORT	5640

#endif /* _UAPI_LINUX_ONEPIPE_H */
