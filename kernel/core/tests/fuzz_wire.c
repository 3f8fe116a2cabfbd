// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the packet parser.  op_hdr_decode() sees untrusted
 * bytes from the network in softirq, so on any input it must not crash or
 * read out of bounds, and whatever it accepts must satisfy the invariants
 * the rest of the protocol relies on:
 *  - every accepted header re-encodes to the same 52 bytes and decodes to
 *    the same struct (nothing is lost or invented by the parser);
 *  - frag_idx < frag_cnt <= OP_MAX_FRAGS and payload <= aux for DATA,
 *    ts/barrier/commit below 2^48, and the per-type rules;
 *  - a switch rewriting the barrier to any 48-bit value keeps the packet
 *    valid and changes no other field;
 *  - no accepted packet looks like a bundle.
 * The same bytes are a datagram that may hold a bundle, which
 * op_bundle_check() must take apart just as safely: if it accepts, the
 * count is 2..OP_BUNDLE_MAX_PKTS, each entry is a header or more and lies
 * inside the input, the walk (op_bundle_next()) ends exactly at its end,
 * and each entry goes through the packet checks above.  An accepted
 * packet, bundled twice, makes a bundle that is accepted and walks back
 * to the same bytes.
 * Violations abort(), which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"
#include "ts.h"

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz_wire: invariant failed: %s (line %d)\n", \
			#cond, __LINE__);				\
		abort();						\
	}								\
} while (0)

static int hdr_eq(const struct op_hdr *a, const struct op_hdr *b)
{
	return a->type == b->type && a->flags == b->flags &&
	       a->code == b->code && a->src_host == b->src_host &&
	       a->dst_host == b->dst_host && a->src_port == b->src_port &&
	       a->dst_port == b->dst_port && a->ts == b->ts &&
	       a->barrier == b->barrier && a->commit == b->commit &&
	       a->seq == b->seq && a->aux == b->aux &&
	       a->frag_idx == b->frag_idx && a->frag_cnt == b->frag_cnt;
}

static void check_accepted(const struct op_hdr *h, size_t payload)
{
	CHECK(h->ts <= OP_TS_MASK);
	CHECK(h->barrier <= OP_TS_MASK);
	CHECK(h->commit <= OP_TS_MASK);
	CHECK(!(h->flags & ~OP_F_KNOWN));

	switch (h->type) {
	case OP_PKT_DATA:
		CHECK(h->src_host && h->dst_host);
		CHECK(h->src_port && h->dst_port);
		CHECK(h->frag_cnt >= 1 && h->frag_cnt <= OP_MAX_FRAGS);
		CHECK(h->frag_idx < h->frag_cnt);
		CHECK(payload <= h->aux);
		CHECK(h->aux <= 65536);
		CHECK(h->frag_cnt != 1 || payload == h->aux);
		CHECK(payload || !h->aux);
		break;
	case OP_PKT_BEACON:
		CHECK(payload == 0);
		break;
	case OP_PKT_ACK:
		CHECK(payload == 0 && h->src_host && h->dst_host);
		CHECK((int32_t)(h->aux - h->seq) >= 0);
		break;
	case OP_PKT_QUERY:
		CHECK(payload == 0 && h->src_host && h->dst_host);
		CHECK(!(h->flags & OP_F_RELIABLE));
		CHECK(h->aux - h->seq < OP_QUERY_MAX);
		break;
	case OP_PKT_NAK:
		CHECK(payload == 0 && h->src_host && h->dst_host);
		CHECK(h->code >= OP_NAK_EXPIRED && h->code <= OP_NAK_NOBUFS);
		CHECK(h->code != OP_NAK_EXPIRED ||
		      !(h->flags & OP_F_RELIABLE));
		break;
	case OP_PKT_RECALL:
	case OP_PKT_PROBE:
		CHECK(payload == 0 && h->src_host && h->dst_host);
		CHECK(h->flags & OP_F_RELIABLE);
		break;
	default:
		CHECK(!"accepted an unknown type");
	}
}

/* An exact-size heap copy, so that ASan bounds what reads it. */
static u8 *dup_exact(const u8 *data, size_t size)
{
	u8 *buf = malloc(size ? size : 1);

	if (!buf)
		abort();
	memcpy(buf, data, size);
	return buf;
}

/* The packet checks; return whether op_hdr_decode() accepted it. */
static bool fuzz_pkt(const u8 *data, size_t size)
{
	struct op_hdr h, h2;
	u64 nb;
	u8 *buf;
	int ret;

	ret = op_hdr_decode(&h, data, size);
	CHECK(ret >= OP_PARSE_OK && ret <= OP_PARSE_FIELD);
	CHECK((size < OP_HDR_LEN) == (ret == OP_PARSE_SHORT));
	if (ret != OP_PARSE_OK)
		return false;
	check_accepted(&h, size - OP_HDR_LEN);
	CHECK(!op_is_bundle(data, size));

	buf = dup_exact(data, size);
	memset(buf, 0, OP_HDR_LEN);
	op_hdr_encode(&h, buf);
	CHECK(!memcmp(buf, data, OP_HDR_LEN));
	CHECK(op_hdr_decode(&h2, buf, size) == OP_PARSE_OK);
	CHECK(hdr_eq(&h, &h2));
	CHECK(op_hdr_get_barrier(buf) == h.barrier);

	/* a switch stamps a new barrier; derive one from the input */
	nb = op_ts(h.barrier * 0x9e3779b97f4a7c15ULL + h.ts);
	op_hdr_set_barrier(buf, nb);
	CHECK(op_hdr_decode(&h2, buf, size) == OP_PARSE_OK);
	h.barrier = nb;
	CHECK(hdr_eq(&h, &h2));
	CHECK(!memcmp(buf + OP_HDR_LEN, data + OP_HDR_LEN, size - OP_HDR_LEN));
	free(buf);
	return true;
}

static void fuzz_bundle(const u8 *data, size_t size)
{
	int n = op_bundle_check(data, size), i;
	size_t off = OP_BUNDLE_HDR_LEN;

	if (n < 0)
		return;
	CHECK(op_is_bundle(data, size));
	CHECK(n >= 2 && n <= OP_BUNDLE_MAX_PKTS);
	for (i = 0; i < n; i++) {
		size_t at = off;
		const u8 *p;
		u16 plen;
		u8 *pkt;

		CHECK(at + OP_BUNDLE_ENTRY_LEN <= size);
		p = op_bundle_next(data, &off, &plen);
		CHECK(p == data + at + OP_BUNDLE_ENTRY_LEN);
		CHECK(plen >= OP_HDR_LEN);
		CHECK(off == at + OP_BUNDLE_ENTRY_LEN + plen && off <= size);
		pkt = dup_exact(p, plen);
		fuzz_pkt(pkt, plen);
		free(pkt);
	}
	CHECK(off == size);
}

/* An accepted packet of @size bytes, twice in a bundle. */
static void fuzz_wrap(const u8 *data, size_t size)
{
	size_t len = OP_BUNDLE_HDR_LEN + 2 * (OP_BUNDLE_ENTRY_LEN + size);
	size_t off = OP_BUNDLE_HDR_LEN;
	u8 *b = malloc(len);
	const u8 *p;
	u16 plen;
	int i;

	if (!b)
		abort();
	op_bundle_put_hdr(b, 2);
	for (i = 0; i < 2; i++) {
		op_bundle_put_len(b + off, (u16)size);
		memcpy(b + off + OP_BUNDLE_ENTRY_LEN, data, size);
		off += OP_BUNDLE_ENTRY_LEN + size;
	}
	CHECK(op_bundle_check(b, len) == 2);
	for (off = OP_BUNDLE_HDR_LEN, i = 0; i < 2; i++) {
		p = op_bundle_next(b, &off, &plen);
		CHECK(plen == size && !memcmp(p, data, size));
	}
	CHECK(off == len);
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_pkt(data, size) && size <= 0xffff)
		fuzz_wrap(data, size);
	fuzz_bundle(data, size);
	return 0;
}
