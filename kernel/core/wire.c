// SPDX-License-Identifier: GPL-2.0
/*
 * Encode and parse the 1Pipe packet header.  Parsing refuses every field
 * value the protocol state could trip over (unknown types and flags,
 * timestamps beyond 48 bits, impossible fragment and length fields), so
 * garbage on the wire is counted and dropped before it reaches that
 * state.  Fields a type does not use are not checked.
 */
#include "wire.h"
#include "ts.h"

static void put16(u8 *p, u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(u8 *p, u32 v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void put64(u8 *p, u64 v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

static u16 get16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

static u32 get32(const u8 *p)
{
	return (u32)get16(p) << 16 | get16(p + 2);
}

static u64 get64(const u8 *p)
{
	return (u64)get32(p) << 32 | get32(p + 4);
}

/**
 * op_hdr_encode() - write @h to @buf in wire order
 * @h: header to encode
 * @buf: at least OP_HDR_LEN bytes
 */
void op_hdr_encode(const struct op_hdr *h, u8 *buf)
{
	buf[0] = OP_WIRE_VERSION;
	buf[1] = h->type;
	buf[2] = h->flags;
	buf[3] = h->code;
	put32(buf + 4, h->src_host);
	put32(buf + 8, h->dst_host);
	put16(buf + 12, h->src_port);
	put16(buf + 14, h->dst_port);
	put64(buf + 16, h->ts);
	put64(buf + 24, h->barrier);
	put64(buf + 32, h->commit);
	put32(buf + 40, h->seq);
	put32(buf + 44, h->aux);
	put16(buf + 48, h->frag_idx);
	put16(buf + 50, h->frag_cnt);
}

/**
 * op_hdr_decode() - parse and validate a packet header
 * @h: decoded header
 * @buf: packet start
 * @len: bytes available, payload included
 *
 * Return: OP_PARSE_OK, or the enum op_parse_err that describes the defect.
 */
int op_hdr_decode(struct op_hdr *h, const u8 *buf, size_t len)
{
	size_t payload;

	if (len < OP_HDR_LEN)
		return OP_PARSE_SHORT;
	if (buf[0] != OP_WIRE_VERSION)
		return OP_PARSE_VERSION;
	h->type = buf[1];
	h->flags = buf[2];
	h->code = buf[3];
	h->src_host = get32(buf + 4);
	h->dst_host = get32(buf + 8);
	h->src_port = get16(buf + 12);
	h->dst_port = get16(buf + 14);
	h->ts = get64(buf + 16);
	h->barrier = get64(buf + 24);
	h->commit = get64(buf + 32);
	h->seq = get32(buf + 40);
	h->aux = get32(buf + 44);
	h->frag_idx = get16(buf + 48);
	h->frag_cnt = get16(buf + 50);

	if (h->flags & ~OP_F_KNOWN)
		return OP_PARSE_TYPE;
	if ((h->ts | h->barrier | h->commit) & ~OP_TS_MASK)
		return OP_PARSE_FIELD;
	payload = len - OP_HDR_LEN;

	switch (h->type) {
	case OP_PKT_DATA:
		if (!h->src_host || !h->dst_host || !h->dst_port || !h->src_port)
			return OP_PARSE_FIELD;
		if (!h->frag_cnt || h->frag_cnt > OP_MAX_FRAGS ||
		    h->frag_idx >= h->frag_cnt)
			return OP_PARSE_FIELD;
		if (h->aux > OP_MAX_MSG || payload > h->aux)
			return OP_PARSE_FIELD;
		if (h->frag_cnt == 1 && payload != h->aux)
			return OP_PARSE_FIELD;
		if (!payload && h->aux)
			return OP_PARSE_FIELD;
		return OP_PARSE_OK;
	case OP_PKT_BEACON:
		return payload ? OP_PARSE_FIELD : OP_PARSE_OK;
	case OP_PKT_ACK:
		if (payload || !h->src_host || !h->dst_host)
			return OP_PARSE_FIELD;
		if (h->code > OP_ACK_WINDOW ||
		    (h->code != OP_ACK_RECEIVED && !(h->flags & OP_F_RELIABLE)))
			return OP_PARSE_FIELD;
		/* range [seq, aux] of at most 2^31 messages */
		if ((s32)(h->aux - h->seq) < 0)
			return OP_PARSE_FIELD;
		return OP_PARSE_OK;
	case OP_PKT_RECALL:
	case OP_PKT_PROBE:
		if (payload || !h->src_host || !h->dst_host ||
		    !(h->flags & OP_F_RELIABLE))
			return OP_PARSE_FIELD;
		return OP_PARSE_OK;
	case OP_PKT_QUERY:
		if (payload || !h->src_host || !h->dst_host ||
		    (h->flags & OP_F_RELIABLE))
			return OP_PARSE_FIELD;
		if (h->aux - h->seq >= OP_QUERY_MAX)
			return OP_PARSE_FIELD;
		return OP_PARSE_OK;
	case OP_PKT_NAK:
		if (payload || !h->src_host || !h->dst_host)
			return OP_PARSE_FIELD;
		if (h->code < OP_NAK_EXPIRED || h->code > OP_NAK_NOBUFS)
			return OP_PARSE_FIELD;
		/* Deadlines are best effort's. */
		if (h->code == OP_NAK_EXPIRED && (h->flags & OP_F_RELIABLE))
			return OP_PARSE_FIELD;
		return OP_PARSE_OK;
	default:
		return OP_PARSE_TYPE;
	}
}

/*
 * A best-effort deadline in the 8-bit code field: a 3-bit mantissa m
 * with an implied leading one and a 5-bit exponent E (0 is "no
 * deadline"), worth (8 + m) << (E - 1) eighths of a millisecond: from
 * 1 ms up, to within 1/8 above.  Exponents above OP_DL_E_MAX are read as
 * it (some 8.7 hours, far beyond ack_timeout_ms's 600 s and within half
 * the 48-bit timestamps' range).
 */
#define OP_DL_UNIT_NS	125000
#define OP_DL_E_MAX	25

/**
 * op_deadline_code() - the code of the smallest deadline of at least @ms
 * @ms: milliseconds, at least 1 (0 is taken as 1)
 *
 * Return: the code, never 0.
 */
u8 op_deadline_code(u32 ms)
{
	u64 t = (u64)(ms ? ms : 1) * 8;
	unsigned int e = 0;
	u64 m;

	while ((t >> e) > 15)
		e++;
	/* Round up: the mantissa may carry into the next exponent. */
	m = (t + ((1ULL << e) - 1)) >> e;
	if (m > 15) {
		e++;
		m = (t + ((1ULL << e) - 1)) >> e;
	}
	if (e + 1 > OP_DL_E_MAX)
		return OP_DL_E_MAX << 3 | 7;
	return (u8)((e + 1) << 3 | (m - 8));
}

/**
 * op_deadline_ns() - what a deadline code is worth
 * @code: from a best-effort DATA header
 *
 * Return: nanoseconds after the message's timestamp, 0 for no deadline.
 */
u64 op_deadline_ns(u8 code)
{
	unsigned int e = code >> 3;

	if (!e)
		return 0;
	if (e > OP_DL_E_MAX)
		e = OP_DL_E_MAX;
	return ((u64)(8 + (code & 7)) << (e - 1)) * OP_DL_UNIT_NS;
}

/* Barrier access for switches, which touch nothing else. */
u64 op_hdr_get_barrier(const u8 *buf)
{
	return get64(buf + OP_HDR_BARRIER_OFF);
}

void op_hdr_set_barrier(u8 *buf, u64 barrier)
{
	put64(buf + OP_HDR_BARRIER_OFF, barrier);
}

/* The commit barrier, for switches and for hosts stamping it at send. */
u32 op_hdr_get_dst_host(const u8 *buf)
{
	return get32(buf + OP_HDR_DST_OFF);
}

u64 op_hdr_get_commit(const u8 *buf)
{
	return get64(buf + OP_HDR_COMMIT_OFF);
}

void op_hdr_set_commit(u8 *buf, u64 commit)
{
	put64(buf + OP_HDR_COMMIT_OFF, commit);
}

/* Does the datagram @buf of @len bytes hold a bundle (or garbage)? */
bool op_is_bundle(const u8 *buf, size_t len)
{
	return len && buf[0] == OP_BUNDLE_MAGIC;
}

/**
 * op_bundle_check() - is @buf a well-formed bundle?
 * @buf: the datagram, starting with the bundle preamble
 * @len: its length
 *
 * Only the framing is checked: each packet is parsed by the receiver.
 *
 * Return: the number of packets in it, or -1 if the datagram is not a
 * bundle as the top of wire.h defines it.
 */
int op_bundle_check(const u8 *buf, size_t len)
{
	size_t off = OP_BUNDLE_HDR_LEN;
	unsigned int count, i;

	if (len < OP_BUNDLE_HDR_LEN || buf[0] != OP_BUNDLE_MAGIC ||
	    get16(buf + 2))
		return -1;
	count = buf[1];
	if (count < 2)
		return -1;
	for (i = 0; i < count; i++) {
		size_t plen;

		if (len - off < OP_BUNDLE_ENTRY_LEN)
			return -1;
		plen = get16(buf + off);
		off += OP_BUNDLE_ENTRY_LEN;
		if (plen < OP_HDR_LEN || plen > len - off)
			return -1;
		off += plen;
	}
	return off == len ? (int)count : -1;
}

/**
 * op_bundle_next() - the next packet of a bundle op_bundle_check() passed
 * @buf: the bundle
 * @off: offset of the next entry; OP_BUNDLE_HDR_LEN for the first, and
 *	moved past the entry returned
 * @plen: the packet's length is stored here
 *
 * Return: the packet's first byte.
 */
const u8 *op_bundle_next(const u8 *buf, size_t *off, u16 *plen)
{
	const u8 *pkt = buf + *off + OP_BUNDLE_ENTRY_LEN;

	*plen = get16(buf + *off);
	*off += OP_BUNDLE_ENTRY_LEN + *plen;
	return pkt;
}

/* Write a bundle's preamble for @count packets (2..OP_BUNDLE_MAX_PKTS). */
void op_bundle_put_hdr(u8 *buf, unsigned int count)
{
	buf[0] = OP_BUNDLE_MAGIC;
	buf[1] = (u8)count;
	put16(buf + 2, 0);
}

/* Write the length that comes before a packet in a bundle. */
void op_bundle_put_len(u8 *buf, u16 len)
{
	put16(buf, len);
}
