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
 * 24 barrier:64    every later packet on this link has ts >= barrier
 * 32 commit:64     commit barrier (reliable service; 0 until then)
 * 40 seq:32        DATA/NAK: message sequence number of src->dst host;
 *                  ACK: first sequence number acknowledged
 * 44 aux:32        DATA: total message length; ACK: last sequence number
 * 48 frag_idx:16 frag_cnt:16
 * 52 payload (DATA only)
 */
#ifndef _ONEPIPE_CORE_WIRE_H
#define _ONEPIPE_CORE_WIRE_H

#include "op_compat.h"

#define OP_WIRE_VERSION		1
#define OP_HDR_LEN		52
#define OP_HDR_BARRIER_OFF	24
#define OP_HDR_COMMIT_OFF	32

enum op_pkt_type {
	OP_PKT_DATA = 1,	/* (a fragment of) a message */
	OP_PKT_BEACON = 2,	/* barrier only, hop by hop, never forwarded */
	OP_PKT_ACK = 3,		/* end-to-end ACK of messages [seq, aux] */
	OP_PKT_NAK = 4,		/* end-to-end NAK of message seq, code says why */
};

/* flags */
#define OP_F_UNORDERED	0x01	/* deliver on arrival, bypass the reorder queue */
#define OP_F_NOBARRIER	0x02	/* sender has no barrier yet: ignore the field */
#define OP_F_KNOWN	(OP_F_UNORDERED | OP_F_NOBARRIER)

/* NAK codes, mirrored in enum onepipe_ee_code of the uapi header. */
enum op_nak_code {
	OP_NAK_LATE = 2,
	OP_NAK_NOPORT = 3,
	OP_NAK_NOBUFS = 4,
};

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
u64 op_hdr_get_barrier(const u8 *buf);
void op_hdr_set_barrier(u8 *buf, u64 barrier);

#endif /* _ONEPIPE_CORE_WIRE_H */
