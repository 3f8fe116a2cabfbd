/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 1Pipe wire format.  Every packet, whatever the transport, starts with
 * this 52-byte header in big-endian order.  Every packet carries the
 * barrier of the link it travels on; switches rewrite that field (and only
 * that field) in the packets they forward, so it sits at a fixed offset.
 *
 *  0 version:8 type:8 flags:8 code:8
 *  4 src_host:32
 *  8 dst_host:32
 * 12 src_port:16 dst_port:16
 * 16 ts:64         message timestamp (48 bits used)
 * 24 barrier:64    every later best-effort DATA packet on this link has
 *                  ts >= barrier
 * 32 commit:64     commit barrier: every reliable message from behind this
 *                  link that is still to be delivered has ts >= commit
 * 40 seq:32        DATA/NAK/RECALL: message sequence number of src->dst
 *                  host (one space per service); ACK, QUERY: first of
 *                  the range
 * 44 aux:32        DATA: total message length; ACK, QUERY: last of it
 * 48 frag_idx:16 frag_cnt:16
 * 52 payload (DATA only)
 *
 * Reliable ACKs also carry the receive window in the ts field: the sender
 * may send reliable messages with seq < ts (mod 2^32); and the window's
 * size in messages in frag_cnt (0: not said), so that a sender fails a
 * scattering the window can never hold instead of waiting for it.  Switches rewrite
 * the barrier and commit fields and the flags that say whether they are
 * valid; a reliable DATA packet's ts is never taken as a barrier, since a
 * retransmission keeps its original, possibly old, timestamp.
 *
 * Best-effort DATA carries its deadline in code (op_deadline_code()): the
 * receiver delivers the message only until ts plus that, by its clock,
 * and otherwise drops and NAKs it (OP_NAK_EXPIRED); 0 means none.  A
 * best-effort NAK carries in ts when the receiver refused the message on
 * its way to delivery, by its clock; answering a QUERY, the instant of
 * the answer if that closes a message which was waiting there, else 0:
 * the sender times the delay towards the receiver with it.
 *
 * Reliable DATA carries its copy number in code (0: first sent, n: n-th
 * resend), and the reliable ACK of received messages echoes it in
 * frag_idx; a resent copy is ACKed alone.  So the sender knows which copy
 * an ACK is for (Karn's problem): only then does it time the round trip
 * or let RACK judge the messages sent before (kernel/rdm_tx.c).
 */
#ifndef _ONEPIPE_CORE_WIRE_H
#define _ONEPIPE_CORE_WIRE_H

#include "op_compat.h"

#define OP_WIRE_VERSION		1
#define OP_HDR_LEN		52
#define OP_HDR_DST_OFF		8
#define OP_HDR_BARRIER_OFF	24
#define OP_HDR_COMMIT_OFF	32

/*
 * Bundles.  On a datagram transport (UDP) one datagram may carry several
 * packets back to back, so that the per-datagram cost of the network
 * stacks and of the switches' I/O is paid once for all of them.  A bundle
 * starts with a 4-byte preamble whose first byte no header version has:
 *
 *  0 magic:8 (OP_BUNDLE_MAGIC) count:8 reserved:16 (0)
 *  4 count times: len:16, then len bytes: one packet, header first
 *
 * count is 2..OP_BUNDLE_MAX_PKTS (one packet travels bare), every len at
 * least OP_HDR_LEN, and the entries fill the datagram exactly.  A bundle
 * whose framing is wrong is dropped whole: receivers check it
 * (op_bundle_check()) before they look at any packet in it, then parse
 * each packet as if it had come alone (so a bundle within a bundle is an
 * unknown version).  A link's packets keep their order: the order of its
 * datagrams, and within a bundle the order of the entries.  Hosts bundle
 * the packets one send puts on the uplink, whatever their destinations;
 * software switches bundle what one receive batch forwards to one port,
 * each packet's barrier rewritten as if it had been forwarded alone.
 */
#define OP_BUNDLE_MAGIC		0x81
#define OP_BUNDLE_HDR_LEN	4
#define OP_BUNDLE_ENTRY_LEN	2	/* the len before each packet */
#define OP_BUNDLE_MAX_PKTS	255

enum op_pkt_type {
	OP_PKT_DATA = 1,	/* (a fragment of) a message */
	OP_PKT_BEACON = 2,	/* barrier only, hop by hop, never forwarded */
	OP_PKT_ACK = 3,		/* end-to-end ACK of messages [seq, aux] */
	OP_PKT_NAK = 4,		/* end-to-end NAK of message seq, code says why */
	OP_PKT_RECALL = 5,	/* reliable: discard message seq, then ACK it */
	/* reliable: send me your window; every message below seq is settled */
	OP_PKT_PROBE = 6,
	/*
	 * best effort: did you deliver [seq, aux]?  ACK those you did, NAK
	 * (OP_NAK_EXPIRED) and never deliver those you did not (seqrec.h)
	 */
	OP_PKT_QUERY = 7,
};

/* flags */
#define OP_F_UNORDERED	0x01	/* deliver on arrival, bypass the reorder queue */
#define OP_F_NOBARRIER	0x02	/* sender has no barrier yet: ignore the field */
#define OP_F_RELIABLE	0x04	/* reliable service (SOCK_RDM) and its seq space */
#define OP_F_NOCOMMIT	0x08	/* no commit barrier yet: ignore the field */
#define OP_F_ECE	0x10	/* ACK: some acknowledged packet was CE-marked */
/*
 * Reliable ACK/NAK: the packet it answers reached the receiver through the
 * failure controller, not the network (controller forwarding, relay.c).
 */
#define OP_F_VIA_CTL	0x20
#define OP_F_KNOWN	(OP_F_UNORDERED | OP_F_NOBARRIER | OP_F_RELIABLE | \
			 OP_F_NOCOMMIT | OP_F_ECE | OP_F_VIA_CTL)
/*
 * Never on the wire (op_hdr_decode() refuses it): set on a decoded header
 * when the packet came through the controller.
 */
#define OP_F_RELAYED	0x80

/* NAK codes, mirrored in enum onepipe_ee_code of the uapi header. */
enum op_nak_code {
	OP_NAK_EXPIRED = 1,	/* best effort: its deadline passed before delivery */
	OP_NAK_LATE = 2,
	OP_NAK_NOPORT = 3,
	OP_NAK_NOBUFS = 4,
};

/* ACK codes */
enum op_ack_code {
	OP_ACK_RECEIVED = 0,	/* [seq, aux] arrived (reliable: is buffered) */
	OP_ACK_RECALLED = 1,	/* reliable: [seq, aux] discarded on RECALL */
	OP_ACK_WINDOW = 2,	/* reliable: only the window (ts) is news */
};

/* Most messages one QUERY asks about. */
#define OP_QUERY_MAX	64

/* Largest message (ONEPIPE_MAX_MSG in the uapi header). */
#define OP_MAX_MSG	65536

/* Most fragments one message may be cut into. */
#define OP_MAX_FRAGS	1024

/**
 * struct op_hdr - decoded packet header, CPU byte order
 *
 * Field meanings follow the layout comment at the top of this file.
 */
struct op_hdr {
	u8 type;
	u8 flags;
	u8 code;
	u32 src_host;
	u32 dst_host;
	u16 src_port;
	u16 dst_port;
	u64 ts;
	u64 barrier;
	u64 commit;
	u32 seq;
	u32 aux;
	u16 frag_idx;
	u16 frag_cnt;
};

enum op_parse_err {
	OP_PARSE_OK = 0,
	OP_PARSE_SHORT,		/* shorter than the header */
	OP_PARSE_VERSION,	/* unknown version */
	OP_PARSE_TYPE,		/* unknown type or flags */
	OP_PARSE_FIELD,		/* a field out of range */
};

void op_hdr_encode(const struct op_hdr *h, u8 *buf);
int op_hdr_decode(struct op_hdr *h, const u8 *buf, size_t len);
u8 op_deadline_code(u32 ms);
u64 op_deadline_ns(u8 code);
u64 op_hdr_get_barrier(const u8 *buf);
void op_hdr_set_barrier(u8 *buf, u64 barrier);
u32 op_hdr_get_dst_host(const u8 *buf);
u64 op_hdr_get_commit(const u8 *buf);
void op_hdr_set_commit(u8 *buf, u64 commit);
bool op_is_bundle(const u8 *buf, size_t len);
int op_bundle_check(const u8 *buf, size_t len);
const u8 *op_bundle_next(const u8 *buf, size_t *off, u16 *plen);
void op_bundle_put_hdr(u8 *buf, unsigned int count);
void op_bundle_put_len(u8 *buf, u16 len);

#endif /* _ONEPIPE_CORE_WIRE_H */
