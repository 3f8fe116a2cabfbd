/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control channel between onepiped (the failure controller) and its
 * clients: one onepipe-agent per host, every switch, and the onepipe CLI.
 *
 * Transport: an AF_UNIX SOCK_SEQPACKET socket (default
 * CTL_DEFAULT_SOCKET), one message per packet, so that framing is the
 * kernel's.  The socket file is 0600 and the daemon checks SO_PEERCRED
 * too: only root (or CAP_NET_ADMIN holders who can open it) may report
 * or show; an unprivileged process cannot inject failures.  Unix sockets
 * with a path cross network namespaces, which is what the test fabric
 * needs; see the README for other machines.
 *
 * Every message is one struct ctl_msg, exactly CTL_MSG_LEN bytes, host
 * byte order (the channel never leaves the machine); only CTL_RELAY is
 * longer: the struct followed by a 1Pipe packet of CTL_RELAY_MIN to
 * CTL_RELAY_MAX bytes (a datagram of up to CTL_DGRAM_MAX).  Anything
 * else (bad length, magic, version, type, a name that is not
 * NUL-terminated or not [A-Za-z0-9_.-]) is dropped and counted by the
 * receiver, never answered.
 *
 * Conversation:
 *  client -> daemon  HELLO        node = own node name ("h3", "tor1"),
 *				   host = host id (hosts) or 0 (switches)
 *  daemon -> client  FAIL ...     every failure in force, then one STATE
 *				   (epoch) so the client is in sync; again
 *				   for every new decision
 *  client -> daemon  LINK_DOWN    node = reporter, peer = node at the far
 *				   end of the silent input link, ts = last
 *				   commit barrier heard on it, if
 *				   CTL_F_HAS_TS (commit register silent for
 *				   the commit timeout)
 *  client -> daemon  LINK_UP      the same link was heard again
 *  client -> daemon  UNREACH      host: no reliable ACK from host @host
 *				   within the retry budget
 *  daemon -> hosts   FAIL         epoch, host = failed host, ts = its
 *				   failure timestamp
 *  host -> daemon    DONE         epoch, host = failed host: discarded,
 *				   recalled, recalls ACKed
 *  daemon -> switch  RESUME       epoch, peer = the port (its far-end
 *				   node name) whose commit register leaves
 *				   the minimum now
 *  switch -> daemon  DONE         epoch, peer: resumed
 *  daemon -> host   REJOIN       epoch, host: a failed host that is
 *				   connected again rejoins as a new
 *				   incarnation; to the host itself first
 *				   (no ts), which answers REJOINED {epoch,
 *				   host, ts = its first timestamp}; then to
 *				   every other correct host with that ts,
 *				   which answer DONE {epoch, host}
 *  cli -> daemon     SHOW         the daemon answers with SHOW_REPLY
 *				   packets (text: JSON, chunked in @text),
 *				   the last one with CTL_F_LAST
 *  host -> daemon    RELAY        controller forwarding: node = the
 *				   sending host, host = the destination host
 *				   id, followed by the packet (from its
 *				   52-byte 1Pipe header on, whose dst_host
 *				   is @host and src_host the sender's id);
 *				   the daemon passes the datagram on
 *				   unchanged:
 *  daemon -> host    RELAY        to the destination host's agent, which
 *				   hands the packet to its module.  Never
 *				   stored, never queued for a client that
 *				   is not connected: the module resends
 */
#ifndef ONEPIPE_CTL_PROTO_H
#define ONEPIPE_CTL_PROTO_H

#include <stdint.h>

#define CTL_MAGIC		0x4f504331u	/* "OPC1" */
#define CTL_VERSION		1
#define CTL_NAME_LEN		32
#define CTL_TEXT_LEN		960
#define CTL_DEFAULT_SOCKET	"/run/onepipe/onepiped.sock"
/*
 * A relayed packet: at least a 1Pipe header (kernel/core/wire.h), at
 * most ONEPIPE_RELAY_MAX of the uapi (a jumbo frame).  Offsets of the
 * header fields the controller reads (big-endian u32s).
 */
#define CTL_RELAY_MIN		52
#define CTL_RELAY_MAX		9216
#define CTL_RELAY_SRC_OFF	4
#define CTL_RELAY_DST_OFF	8

enum ctl_type {
	CTL_HELLO = 1,
	CTL_LINK_DOWN,
	CTL_LINK_UP,
	CTL_UNREACH,
	CTL_FAIL,
	CTL_STATE,
	CTL_DONE,
	CTL_RESUME,
	CTL_SHOW,
	CTL_SHOW_REPLY,
	CTL_REJOIN,
	CTL_REJOINED,
	CTL_RELAY,
	__CTL_TYPE_MAX,
};

/* ctl_msg.flags */
#define CTL_F_HAS_TS	0x1u	/* @ts is valid */
#define CTL_F_LAST	0x2u	/* last SHOW_REPLY chunk */

/**
 * struct ctl_msg - one control message
 * @magic: CTL_MAGIC
 * @version: CTL_VERSION
 * @type: enum ctl_type
 * @flags: CTL_F_*
 * @epoch: the controller's decision number (FAIL, STATE, DONE, RESUME)
 * @host: a host id: the sender's (HELLO), the failed one (FAIL, DONE),
 *	the unreachable one (UNREACH), the destination (RELAY)
 * @pad: zero
 * @ts: a timestamp, see the conversation above
 * @node: the sender's node name (NUL-terminated)
 * @peer: the other end of a link, or a switch port (NUL-terminated)
 * @text: SHOW_REPLY: a chunk of the JSON answer (@host is its length)
 */
struct ctl_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t flags;
	uint32_t epoch;
	uint32_t host;
	uint32_t pad;
	uint64_t ts;
	char node[CTL_NAME_LEN];
	char peer[CTL_NAME_LEN];
	char text[CTL_TEXT_LEN];
};

#define CTL_MSG_LEN	sizeof(struct ctl_msg)
/* The largest datagram of the channel: a RELAY of CTL_RELAY_MAX bytes. */
#define CTL_DGRAM_MAX	(CTL_MSG_LEN + CTL_RELAY_MAX)

void ctl_msg_init(struct ctl_msg *m, enum ctl_type type, const char *node);
int ctl_msg_check(const struct ctl_msg *m, long len);
uint32_t ctl_pkt_host(const void *pkt, unsigned int off);
int ctl_set_name(char *dst, const char *src);
const char *ctl_type_name(unsigned int type);
int ctl_connect(const char *path);

#endif /* ONEPIPE_CTL_PROTO_H */
