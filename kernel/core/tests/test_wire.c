// SPDX-License-Identifier: GPL-2.0
/*
 * wire.c: byte layout, encode/decode round trips, every rejection path of
 * op_hdr_decode(), the barrier accessors switches use, and bundles: their
 * layout, every rejection path of op_bundle_check(), the walk.
 *
 * Packets are built in buffers of exactly the decoded length on the heap,
 * so AddressSanitizer catches any read past @len.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "wire.h"
#include "ts.h"

static struct op_hdr data_hdr(void)
{
	struct op_hdr h = {
		.type = OP_PKT_DATA,
		.flags = 0,
		.src_host = 0x0a0b0c0d,
		.dst_host = 0x01020304,
		.src_port = 0x1234,
		.dst_port = 0x5678,
		.ts = 0x0000123456789abcULL,
		.barrier = 0x0000fedcba987654ULL,
		.commit = 0x0000111122223333ULL,
		.seq = 0xdeadbeef,
		.aux = 100,
		.frag_idx = 0,
		.frag_cnt = 1,
	};

	return h;
}

static struct op_hdr ctl_hdr(u8 type)
{
	struct op_hdr h = {
		.type = type,
		.src_host = 7,
		.dst_host = type == OP_PKT_BEACON ? 0 : 9,
		.ts = 0,
		.barrier = 0x0000aabbccddeeffULL,
		.seq = 10,
		.aux = type == OP_PKT_ACK ? 20 : 0,
		.code = type == OP_PKT_NAK ? OP_NAK_LATE : 0,
	};

	return h;
}

static bool hdr_eq(const struct op_hdr *a, const struct op_hdr *b)
{
	return a->type == b->type && a->flags == b->flags &&
	       a->code == b->code && a->src_host == b->src_host &&
	       a->dst_host == b->dst_host && a->src_port == b->src_port &&
	       a->dst_port == b->dst_port && a->ts == b->ts &&
	       a->barrier == b->barrier && a->commit == b->commit &&
	       a->seq == b->seq && a->aux == b->aux &&
	       a->frag_idx == b->frag_idx && a->frag_cnt == b->frag_cnt;
}

/* A heap packet of exactly OP_HDR_LEN + @payload bytes holding @h. */
static u8 *build(const struct op_hdr *h, size_t payload)
{
	size_t len = OP_HDR_LEN + payload;
	u8 *buf = malloc(len);

	if (!buf)
		abort();
	memset(buf, 0xa5, len);
	op_hdr_encode(h, buf);
	return buf;
}

static int decode_of(const struct op_hdr *h, size_t payload, struct op_hdr *out)
{
	u8 *buf = build(h, payload);
	int ret = op_hdr_decode(out, buf, OP_HDR_LEN + payload);

	free(buf);
	return ret;
}

/* Encode @h with @payload bytes and expect op_hdr_decode() to say @want. */
static void expect(const struct op_hdr *h, size_t payload, int want,
		   const char *desc)
{
	struct op_hdr out;

	is_s64(decode_of(h, payload, &out), want, "%s", desc);
}

static void test_layout(void)
{
	static const u8 want[OP_HDR_LEN] = {
		/* version, type, flags, code */
		0x01, 0x01, 0x03, 0x00,
		/* src_host, dst_host, src_port, dst_port */
		0x0a, 0x0b, 0x0c, 0x0d, 0x01, 0x02, 0x03, 0x04,
		0x12, 0x34, 0x56, 0x78,
		/* ts, barrier, commit */
		0x00, 0x00, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc,
		0x00, 0x00, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54,
		0x00, 0x00, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33,
		/* seq, aux, frag_idx, frag_cnt */
		0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x00, 0x64,
		0x00, 0x02, 0x00, 0x03,
	};
	struct op_hdr h = data_hdr();
	u8 buf[OP_HDR_LEN + 4];
	unsigned int i, diff = 0;

	h.flags = OP_F_UNORDERED | OP_F_NOBARRIER;
	h.frag_idx = 2;
	h.frag_cnt = 3;
	memset(buf, 0xee, sizeof(buf));
	op_hdr_encode(&h, buf);
	for (i = 0; i < OP_HDR_LEN; i++) {
		if (buf[i] != want[i]) {
			if (!diff)
				diag("  byte %u is 0x%02x, want 0x%02x", i,
				     buf[i], want[i]);
			diff++;
		}
	}
	ok(!diff, "encode writes the documented big-endian layout");
	ok(buf[52] == 0xee && buf[55] == 0xee,
	   "encode writes exactly OP_HDR_LEN bytes");
	is_u64(OP_HDR_LEN, 52, "header is 52 bytes");
	is_u64(OP_HDR_BARRIER_OFF, 24, "barrier at offset 24");
	is_u64(OP_HDR_COMMIT_OFF, 32, "commit at offset 32");
}

static void round_trip(const struct op_hdr *h, size_t payload,
		       const char *desc)
{
	struct op_hdr out;
	int ret;

	memset(&out, 0x5a, sizeof(out));
	ret = decode_of(h, payload, &out);
	ok(ret == OP_PARSE_OK && hdr_eq(h, &out), "round trip: %s", desc);
	if (ret != OP_PARSE_OK)
		diag("  decode returned %d", ret);
}

static void test_round_trips(void)
{
	struct op_hdr h = data_hdr();
	struct op_hdr m;
	int code;

	round_trip(&h, 100, "single-fragment DATA");
	h.aux = 0;
	round_trip(&h, 0, "empty DATA message");

	/* every field at its largest legal value */
	m = (struct op_hdr) {
		.type = OP_PKT_DATA, .flags = OP_F_KNOWN, .code = 0xff,
		.src_host = 0xffffffff, .dst_host = 0xffffffff,
		.src_port = 0xffff, .dst_port = 0xffff,
		.ts = OP_TS_MASK, .barrier = OP_TS_MASK, .commit = OP_TS_MASK,
		.seq = 0xffffffff, .aux = 65536,
		.frag_idx = OP_MAX_FRAGS - 1, .frag_cnt = OP_MAX_FRAGS,
	};
	round_trip(&m, 1, "DATA with every field at its maximum");
	m.frag_idx = 0;
	m.frag_cnt = 1;
	round_trip(&m, 65536, "single 64 KiB DATA fragment");

	h = ctl_hdr(OP_PKT_BEACON);
	round_trip(&h, 0, "BEACON");
	h.flags = OP_F_NOBARRIER;
	h.barrier = 0;
	round_trip(&h, 0, "BEACON without a barrier");

	h = ctl_hdr(OP_PKT_ACK);
	round_trip(&h, 0, "ACK [10, 20]");
	h.seq = 0xffffffff;
	h.aux = 0xffffffff;
	round_trip(&h, 0, "ACK of a single message");
	h.seq = 0xfffffff0;
	h.aux = 0x10;
	round_trip(&h, 0, "ACK range across the 32-bit seq wrap");
	h.commit = OP_TS_MASK;
	round_trip(&h, 0, "ACK with a commit barrier");

	h = ctl_hdr(OP_PKT_NAK);
	for (code = OP_NAK_EXPIRED; code <= OP_NAK_NOBUFS; code++) {
		h.code = code;
		round_trip(&h, 0, code == OP_NAK_EXPIRED ? "NAK EXPIRED" :
			   code == OP_NAK_LATE ? "NAK LATE" :
			   code == OP_NAK_NOPORT ? "NAK NOPORT" : "NAK NOBUFS");
	}
	/* A best-effort NAK's time (when the receiver refused it). */
	h.code = OP_NAK_EXPIRED;
	h.ts = OP_TS_MASK;
	round_trip(&h, 0, "NAK EXPIRED with the refusal's time");
}

static void test_short(void)
{
	struct op_hdr h = ctl_hdr(OP_PKT_BEACON), out;
	u8 *buf = build(&h, 0);
	u8 *exact;
	size_t len;
	unsigned int bad = 0;

	/* shorter buffers, each allocated to exactly its length */
	for (len = 0; len < OP_HDR_LEN; len++) {
		exact = malloc(len ? len : 1);
		if (!exact)
			abort();
		memcpy(exact, buf, len);
		bad += op_hdr_decode(&out, exact, len) != OP_PARSE_SHORT;
		free(exact);
	}
	free(buf);
	ok(!bad, "every length 0..51 is OP_PARSE_SHORT (%u bad)", bad);
}

/*
 * The kernel pulls only the header into the linear skb area and passes
 * skb->len: decode must never look at payload bytes.  The buffer here
 * holds exactly OP_HDR_LEN bytes while @len claims a payload.
 */
static void test_header_only(void)
{
	struct op_hdr h = data_hdr(), out;
	u8 *buf = build(&h, 0);

	ok(op_hdr_decode(&out, buf, OP_HDR_LEN + h.aux) == OP_PARSE_OK &&
	   hdr_eq(&h, &out),
	   "decode reads only the header, never the payload");
	free(buf);
}

static void test_version(void)
{
	static const u8 versions[] = { 0, 2, 0x81, 0xff };
	struct op_hdr h = ctl_hdr(OP_PKT_BEACON), out;
	unsigned int i;

	for (i = 0; i < sizeof(versions); i++) {
		u8 *buf = build(&h, 0);

		buf[0] = versions[i];
		is_s64(op_hdr_decode(&out, buf, OP_HDR_LEN), OP_PARSE_VERSION,
		       "version %u is refused", versions[i]);
		free(buf);
	}
}

static void test_type_flags(void)
{
	static const u8 types[] = { 0, 8, 0x7f, 0xff };
	struct op_hdr h;
	unsigned int i, bit;
	char desc[64];

	for (i = 0; i < sizeof(types); i++) {
		h = ctl_hdr(OP_PKT_BEACON);
		h.type = types[i];
		snprintf(desc, sizeof(desc), "type %u is refused", types[i]);
		expect(&h, 0, OP_PARSE_TYPE, desc);
	}
	for (bit = 0; bit < 8; bit++) {
		u8 f = 1u << bit;

		if (f & OP_F_KNOWN)
			continue;
		h = data_hdr();
		h.flags = f | OP_F_UNORDERED;
		snprintf(desc, sizeof(desc), "unknown flag 0x%02x is refused", f);
		expect(&h, 100, OP_PARSE_TYPE, desc);
	}
	h = data_hdr();
	h.flags = OP_F_UNORDERED;
	expect(&h, 100, OP_PARSE_OK, "flag UNORDERED is accepted");
	h.flags = OP_F_NOBARRIER;
	expect(&h, 100, OP_PARSE_OK, "flag NOBARRIER is accepted");
	h.flags = OP_F_RELIABLE | OP_F_NOCOMMIT;
	expect(&h, 100, OP_PARSE_OK, "flags RELIABLE and NOCOMMIT are accepted");
}

static void test_ts_fields(void)
{
	static const u64 bad_vals[] = {
		(u64)1 << 48, OP_TS_MASK + 1 + 5, (u64)1 << 63, ~(u64)0,
	};
	struct op_hdr h;
	unsigned int i, f;
	char desc[80];
	static const char *const names[] = { "ts", "barrier", "commit" };

	for (f = 0; f < 3; f++) {
		for (i = 0; i < ARRAY_SIZE(bad_vals); i++) {
			u64 *field;

			h = ctl_hdr(OP_PKT_BEACON);
			field = f == 0 ? &h.ts :
				f == 1 ? &h.barrier : &h.commit;
			*field = bad_vals[i];
			snprintf(desc, sizeof(desc),
				 "%s 0x%llx with bits above 48 is refused",
				 names[f], (unsigned long long)bad_vals[i]);
			expect(&h, 0, OP_PARSE_FIELD, desc);
		}
		h = data_hdr();
		if (f == 0)
			h.ts = OP_TS_MASK;
		else if (f == 1)
			h.barrier = OP_TS_MASK;
		else
			h.commit = OP_TS_MASK;
		snprintf(desc, sizeof(desc), "%s 2^48-1 is accepted", names[f]);
		expect(&h, 100, OP_PARSE_OK, desc);
	}
}

static void test_data_fields(void)
{
	struct op_hdr h;

	h = data_hdr();
	h.src_host = 0;
	expect(&h, 100, OP_PARSE_FIELD, "DATA from host 0 is refused");
	h = data_hdr();
	h.dst_host = 0;
	expect(&h, 100, OP_PARSE_FIELD, "DATA to host 0 is refused");
	h = data_hdr();
	h.src_port = 0;
	expect(&h, 100, OP_PARSE_FIELD, "DATA from port 0 is refused");
	h = data_hdr();
	h.dst_port = 0;
	expect(&h, 100, OP_PARSE_FIELD, "DATA to port 0 is refused");

	h = data_hdr();
	h.frag_cnt = 0;
	h.frag_idx = 0;
	expect(&h, 100, OP_PARSE_FIELD, "DATA with frag_cnt 0 is refused");
	h.frag_cnt = 4;
	h.frag_idx = 4;
	expect(&h, 10, OP_PARSE_FIELD, "frag_idx == frag_cnt is refused");
	h.frag_idx = 0xffff;
	expect(&h, 10, OP_PARSE_FIELD, "frag_idx 65535 of 4 is refused");
	h.frag_idx = 3;
	expect(&h, 10, OP_PARSE_OK, "last fragment frag_idx 3 of 4 is accepted");

	h.frag_cnt = OP_MAX_FRAGS + 1;
	h.frag_idx = 0;
	expect(&h, 10, OP_PARSE_FIELD, "frag_cnt OP_MAX_FRAGS + 1 is refused");
	h.frag_cnt = 0xffff;
	expect(&h, 10, OP_PARSE_FIELD, "frag_cnt 65535 is refused");
	h.frag_cnt = OP_MAX_FRAGS;
	h.frag_idx = OP_MAX_FRAGS - 1;
	expect(&h, 10, OP_PARSE_OK, "frag_cnt OP_MAX_FRAGS is accepted");

	h = data_hdr();
	h.frag_cnt = 2;
	h.aux = 10;
	expect(&h, 11, OP_PARSE_FIELD, "fragment payload > aux is refused");
	expect(&h, 10, OP_PARSE_OK, "fragment payload == aux is accepted");
	expect(&h, 1, OP_PARSE_OK, "fragment payload < aux is accepted");
	expect(&h, 0, OP_PARSE_FIELD,
	       "empty fragment of a non-empty message is refused");
	h.aux = 65537;
	expect(&h, 1, OP_PARSE_FIELD, "message length above 64 KiB is refused");
	h.aux = 0xffffffff;
	expect(&h, 1, OP_PARSE_FIELD, "message length 2^32-1 is refused");

	h = data_hdr();
	h.aux = 10;
	expect(&h, 9, OP_PARSE_FIELD, "single fragment payload < aux is refused");
	expect(&h, 11, OP_PARSE_FIELD, "single fragment payload > aux is refused");
	expect(&h, 0, OP_PARSE_FIELD, "single fragment missing its payload");
	expect(&h, 10, OP_PARSE_OK, "single fragment payload == aux is accepted");
}

static void test_ctl_fields(void)
{
	struct op_hdr h;
	int code;
	char desc[64];

	h = ctl_hdr(OP_PKT_BEACON);
	expect(&h, 1, OP_PARSE_FIELD, "BEACON with a 1-byte payload is refused");
	expect(&h, 100, OP_PARSE_FIELD, "BEACON with a payload is refused");

	h = ctl_hdr(OP_PKT_ACK);
	h.seq = 10;
	h.aux = 9;
	expect(&h, 0, OP_PARSE_FIELD, "ACK range [10, 9] (reversed) is refused");
	h.seq = 5;
	h.aux = 0xfffffff0;
	expect(&h, 0, OP_PARSE_FIELD,
	       "ACK range reversed across the seq wrap is refused");
	h.seq = 0;
	h.aux = 0x7fffffff;
	expect(&h, 0, OP_PARSE_OK, "ACK range of 2^31 messages is accepted");
	h.aux = 0x80000000;
	expect(&h, 0, OP_PARSE_FIELD, "ACK range of 2^31 + 1 messages is refused");
	h = ctl_hdr(OP_PKT_ACK);
	expect(&h, 4, OP_PARSE_FIELD, "ACK with a payload is refused");
	h.src_host = 0;
	expect(&h, 0, OP_PARSE_FIELD, "ACK from host 0 is refused");
	h = ctl_hdr(OP_PKT_ACK);
	h.dst_host = 0;
	expect(&h, 0, OP_PARSE_FIELD, "ACK to host 0 is refused");

	for (code = 0; code < 256; code++) {
		bool good = code >= OP_NAK_EXPIRED && code <= OP_NAK_NOBUFS;

		if (!good && code != 0 && code != 5 &&
		    code != 0x80 && code != 0xff)
			continue;
		h = ctl_hdr(OP_PKT_NAK);
		h.code = code;
		snprintf(desc, sizeof(desc), "NAK code %d is %s", code,
			 good ? "accepted" : "refused");
		expect(&h, 0, good ? OP_PARSE_OK : OP_PARSE_FIELD, desc);
	}
	h = ctl_hdr(OP_PKT_NAK);
	h.flags = OP_F_RELIABLE;
	h.code = OP_NAK_EXPIRED;
	expect(&h, 0, OP_PARSE_FIELD, "reliable NAK EXPIRED is refused");
	h.code = OP_NAK_NOBUFS;
	expect(&h, 0, OP_PARSE_OK, "reliable NAK NOBUFS is accepted");
	h = ctl_hdr(OP_PKT_ACK);
	h.flags = OP_F_RELIABLE;
	for (code = 0; code <= 3; code++) {
		h.code = code;
		snprintf(desc, sizeof(desc), "reliable ACK code %d is %s", code,
			 code <= OP_ACK_WINDOW ? "accepted" : "refused");
		expect(&h, 0, code <= OP_ACK_WINDOW ? OP_PARSE_OK :
		       OP_PARSE_FIELD, desc);
	}
	h.flags = 0;
	h.code = OP_ACK_RECALLED;
	expect(&h, 0, OP_PARSE_FIELD, "best-effort ACK of a recall is refused");
	h.code = OP_ACK_WINDOW;
	expect(&h, 0, OP_PARSE_FIELD, "best-effort window ACK is refused");

	for (code = OP_PKT_RECALL; code <= OP_PKT_PROBE; code++) {
		const char *name = code == OP_PKT_RECALL ? "RECALL" : "PROBE";

		h = ctl_hdr(code);
		h.flags = OP_F_RELIABLE;
		snprintf(desc, sizeof(desc), "%s is accepted", name);
		expect(&h, 0, OP_PARSE_OK, desc);
		snprintf(desc, sizeof(desc), "%s with a payload is refused", name);
		expect(&h, 1, OP_PARSE_FIELD, desc);
		h.flags = 0;
		snprintf(desc, sizeof(desc), "best-effort %s is refused", name);
		expect(&h, 0, OP_PARSE_FIELD, desc);
		h.flags = OP_F_RELIABLE;
		h.dst_host = 0;
		snprintf(desc, sizeof(desc), "%s to host 0 is refused", name);
		expect(&h, 0, OP_PARSE_FIELD, desc);
	}

	h = ctl_hdr(OP_PKT_QUERY);
	h.seq = 0xfffffff0;
	h.aux = h.seq + OP_QUERY_MAX - 1;
	expect(&h, 0, OP_PARSE_OK, "QUERY of OP_QUERY_MAX across the wrap");
	round_trip(&h, 0, "QUERY round trip");
	h.aux++;
	expect(&h, 0, OP_PARSE_FIELD, "QUERY of more is refused");
	h.aux = h.seq - 1;
	expect(&h, 0, OP_PARSE_FIELD, "QUERY of a backward range is refused");
	h.aux = h.seq;
	expect(&h, 4, OP_PARSE_FIELD, "QUERY with a payload is refused");
	h.flags = OP_F_RELIABLE;
	expect(&h, 0, OP_PARSE_FIELD, "reliable QUERY is refused");
	h.flags = 0;
	h.src_host = 0;
	expect(&h, 0, OP_PARSE_FIELD, "QUERY from host 0 is refused");

	h = ctl_hdr(OP_PKT_NAK);
	expect(&h, 8, OP_PARSE_FIELD, "NAK with a payload is refused");
	h.src_host = 0;
	expect(&h, 0, OP_PARSE_FIELD, "NAK from host 0 is refused");
	h = ctl_hdr(OP_PKT_NAK);
	h.dst_host = 0;
	expect(&h, 0, OP_PARSE_FIELD, "NAK to host 0 is refused");
}

static void test_barrier_access(void)
{
	u8 buf[OP_HDR_LEN + 16], ref[OP_HDR_LEN + 16];
	static const u8 want[8] = {
		0x00, 0x00, 0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6,
	};
	struct op_hdr h = data_hdr(), out;
	unsigned int i, touched = 0;
	u8 *pkt;

	for (i = 0; i < sizeof(buf); i++) {
		buf[i] = (u8)(i * 37 + 11);
		ref[i] = buf[i];
	}
	op_hdr_set_barrier(buf, 0x0000a1b2c3d4e5f6ULL);
	ok(!memcmp(buf + OP_HDR_BARRIER_OFF, want, 8),
	   "set_barrier writes big-endian at offset 24");
	for (i = 0; i < sizeof(buf); i++)
		touched += (i < OP_HDR_BARRIER_OFF ||
			    i >= OP_HDR_BARRIER_OFF + 8) && buf[i] != ref[i];
	ok(!touched, "set_barrier touches no other byte (%u touched)", touched);
	is_u64(op_hdr_get_barrier(buf), 0x0000a1b2c3d4e5f6ULL,
	       "get_barrier reads back what set_barrier wrote");
	op_hdr_set_barrier(buf, 0xffffffffffffffffULL);
	is_u64(op_hdr_get_barrier(buf), 0xffffffffffffffffULL,
	       "get/set carry all 64 bits");

	pkt = build(&h, 100);
	ok(op_hdr_get_dst_host(pkt) == h.dst_host,
	   "get_dst_host of an encoded packet is its destination");
	is_u64(op_hdr_get_barrier(pkt), h.barrier,
	       "get_barrier of an encoded packet is its barrier");
	op_hdr_set_barrier(pkt, 0x0000000000000042ULL);
	h.barrier = 0x42;
	ok(op_hdr_decode(&out, pkt, OP_HDR_LEN + 100) == OP_PARSE_OK &&
	   hdr_eq(&out, &h),
	   "a rewritten packet decodes with the new barrier, all else equal");
	op_hdr_set_commit(pkt, 0x0000123456789abcULL);
	h.commit = 0x0000123456789abcULL;
	is_u64(op_hdr_get_commit(pkt), h.commit,
	       "get_commit reads back what set_commit wrote");
	ok(op_hdr_decode(&out, pkt, OP_HDR_LEN + 100) == OP_PARSE_OK &&
	   hdr_eq(&out, &h),
	   "a packet with a rewritten commit decodes with it, all else equal");
	free(pkt);
}

/*
 * Deadline codes: every millisecond value up to the sysctl's bound, and
 * some beyond, gets the smallest code whose deadline is at least it and
 * at most 1/8 above it; codes order like their deadlines.
 */
static void test_deadline(void)
{
	unsigned int bad = 0, ms, c;
	u64 prev = 0;

	ok(op_deadline_ns(0) == 0, "deadline code 0 is no deadline");
	ok(op_deadline_code(0) == op_deadline_code(1),
	   "0 ms is taken as 1 ms");
	ok(op_deadline_ns(op_deadline_code(1)) == 1000000,
	   "1 ms is exact");
	ok(op_deadline_ns(op_deadline_code(1024)) == 1024000000ULL &&
	   op_deadline_ns(op_deadline_code(3 << 12)) == 12288000000ULL,
	   "1024 ms and 12288 ms are exact");
	ok(op_deadline_ns(op_deadline_code(100)) == 104000000,
	   "100 ms rounds up to 104 ms");
	for (ms = 1; ms <= 20000000; ms += ms < 4096 ? 1 : 97) {
		u8 code = op_deadline_code(ms);
		u64 ns = op_deadline_ns(code), want = (u64)ms * 1000000;

		if (!code || ns < want || ns > want + want / 8 ||
		    (code > 1 && op_deadline_ns(code - 1) >= want &&
		     op_deadline_ns(code - 1) != 0))
			bad++;
	}
	ok(!bad, "1 ms .. 2000 s: smallest code at least the value, within 1/8 (%u bad)",
	   bad);
	for (c = 8; c < (25 + 1) << 3; c++) {
		if (op_deadline_ns(c) <= prev)
			bad++;
		prev = op_deadline_ns(c);
	}
	ok(!bad, "codes 8..207 grow strictly");
	ok(op_deadline_code(0xffffffff) == op_deadline_code(40000000) &&
	   op_deadline_ns(0xff) == op_deadline_ns(op_deadline_code(0xffffffff)),
	   "huge values and codes saturate");
	ok(op_deadline_ns(0xff) < (1ULL << 47),
	   "the largest deadline is within half the timestamps' range");
}

/*
 * Write a bundle of @n DATA packets, of @plen[i] bytes each (at least
 * OP_HDR_LEN), into @buf: packet i has seq i and payload bytes 'a' + i.
 * Return: the bundle's length.
 */
static size_t put_bundle(u8 *buf, const u16 *plen, unsigned int n)
{
	struct op_hdr h = data_hdr();
	size_t off = OP_BUNDLE_HDR_LEN;
	unsigned int i;

	op_bundle_put_hdr(buf, n);
	for (i = 0; i < n; i++) {
		op_bundle_put_len(buf + off, plen[i]);
		off += OP_BUNDLE_ENTRY_LEN;
		h.seq = i;
		h.aux = plen[i] - OP_HDR_LEN;
		op_hdr_encode(&h, buf + off);
		memset(buf + off + OP_HDR_LEN, 'a' + i, h.aux);
		off += plen[i];
	}
	return off;
}

/* op_bundle_check() of a heap copy of exactly @len bytes of @b (ASan). */
static int check_exact(const u8 *b, size_t len)
{
	u8 *buf = malloc(len ? len : 1);
	int ret;

	if (!buf)
		abort();
	memcpy(buf, b, len);
	ret = op_bundle_check(buf, len);
	free(buf);
	return ret;
}

static void test_bundle_format(void)
{
	static const u16 two[] = { 52, 60 };
	static const u8 want[] = { 0x81, 0x03, 0x00, 0x00, 0x12, 0x34 };
	struct op_hdr h = ctl_hdr(OP_PKT_BEACON), out;
	u8 buf[OP_BUNDLE_HDR_LEN + OP_BUNDLE_ENTRY_LEN], *pkt;
	u8 b[256];
	size_t len;

	op_bundle_put_hdr(buf, 3);
	op_bundle_put_len(buf + OP_BUNDLE_HDR_LEN, 0x1234);
	ok(!memcmp(buf, want, sizeof(want)),
	   "preamble 0x81, count, 0, 0; entry length big-endian");
	is_u64(OP_BUNDLE_MAGIC, 0x81, "bundle magic is 0x81");

	pkt = malloc(1);
	if (!pkt)
		abort();
	pkt[0] = OP_BUNDLE_MAGIC;
	ok(!op_is_bundle(pkt, 0), "an empty datagram is no bundle");
	free(pkt);
	pkt = build(&h, 0);
	ok(!op_is_bundle(pkt, OP_HDR_LEN), "a packet is no bundle");
	free(pkt);
	len = put_bundle(b, two, 2);
	ok(op_is_bundle(b, len), "a bundle is a bundle");
	/* So a bundle within a bundle is refused by the packet parser. */
	is_s64(op_hdr_decode(&out, b, len), OP_PARSE_VERSION,
	       "a bundle parsed as a packet is an unknown version");
}

static void test_bundle_check(void)
{
	static const u16 two[] = { 52, 60 }, three[] = { 52, 100, 53 };
	static u16 most[OP_BUNDLE_MAX_PKTS];
	static u8 b[OP_BUNDLE_HDR_LEN +
		    OP_BUNDLE_MAX_PKTS * (OP_BUNDLE_ENTRY_LEN + 100)];
	size_t len, off;
	unsigned int i;

	len = put_bundle(b, two, 2);
	is_s64(check_exact(b, len), 2, "a good bundle of 2 packets");
	len = put_bundle(b, three, 3);
	is_s64(check_exact(b, len), 3, "a good bundle of 3 packets");
	for (i = 0; i < OP_BUNDLE_MAX_PKTS; i++)
		most[i] = OP_HDR_LEN;
	len = put_bundle(b, most, OP_BUNDLE_MAX_PKTS);
	is_s64(check_exact(b, len), OP_BUNDLE_MAX_PKTS,
	       "a good bundle of 255 packets");

	for (i = 0; i < OP_BUNDLE_HDR_LEN; i++)
		is_s64(check_exact(b, i), -1,
		       "shorter than the preamble (%u bytes)", i);
	len = put_bundle(b, two, 2);
	b[1] = 0;
	is_s64(check_exact(b, OP_BUNDLE_HDR_LEN), -1, "count 0, no entries");
	is_s64(check_exact(b, len), -1, "count 0, two entries");
	b[1] = 1;
	is_s64(check_exact(b, OP_BUNDLE_HDR_LEN + OP_BUNDLE_ENTRY_LEN + two[0]),
	       -1, "count 1: one packet travels bare");

	len = put_bundle(b, two, 2);
	b[0] = OP_WIRE_VERSION;
	is_s64(check_exact(b, len), -1, "wrong magic");
	put_bundle(b, two, 2);
	b[2] = 1;
	is_s64(check_exact(b, len), -1, "reserved byte 2 set");
	put_bundle(b, two, 2);
	b[3] = 0x80;
	is_s64(check_exact(b, len), -1, "reserved byte 3 set");

	put_bundle(b, two, 2);
	off = OP_BUNDLE_HDR_LEN + OP_BUNDLE_ENTRY_LEN + two[0];
	is_s64(check_exact(b, off + 1), -1,
	       "truncated in the second entry's length");
	is_s64(check_exact(b, off), -1,
	       "truncated before the second entry (count 2, one entry)");
	is_s64(check_exact(b, off - 1), -1,
	       "the first entry overruns the datagram by a byte");
	is_s64(check_exact(b, len - 1), -1,
	       "the last entry overruns the datagram by a byte");
	is_s64(check_exact(b, len + 1), -1, "a trailing byte");
	op_bundle_put_len(b + off, OP_HDR_LEN - 1);
	is_s64(check_exact(b, off + OP_BUNDLE_ENTRY_LEN + OP_HDR_LEN - 1), -1,
	       "an entry of 51 bytes, shorter than a header");
	op_bundle_put_len(b + off, 0);
	is_s64(check_exact(b, off + OP_BUNDLE_ENTRY_LEN), -1,
	       "an entry of 0 bytes");
	op_bundle_put_len(b + off, 0xffff);
	is_s64(check_exact(b, len), -1, "an entry of 65535 bytes overruns");

	len = put_bundle(b, three, 3);
	b[1] = 4;
	is_s64(check_exact(b, len), -1, "count 4 with 3 entries");
	b[1] = 2;
	is_s64(check_exact(b, len), -1,
	       "count 2 with 3 entries (trailing bytes)");
}

static void test_bundle_walk(void)
{
	static const u16 three[] = { 52, 100, 53 };
	u8 b[OP_BUNDLE_HDR_LEN + 3 * OP_BUNDLE_ENTRY_LEN + 205], *buf;
	size_t len = put_bundle(b, three, 3), off = OP_BUNDLE_HDR_LEN;
	size_t at = OP_BUNDLE_HDR_LEN;
	unsigned int i, bad = 0;
	struct op_hdr out;

	buf = malloc(len);
	if (!buf)
		abort();
	memcpy(buf, b, len);
	for (i = 0; i < 3; i++) {
		const u8 *p;
		u16 plen;

		p = op_bundle_next(buf, &off, &plen);
		at += OP_BUNDLE_ENTRY_LEN;
		if (p != buf + at || plen != three[i] ||
		    op_hdr_decode(&out, p, plen) != OP_PARSE_OK ||
		    out.seq != i || (plen > OP_HDR_LEN &&
				     (p[OP_HDR_LEN] != 'a' + i ||
				      p[plen - 1] != 'a' + i)))
			bad++;
		at += plen;
		if (off != at)
			bad++;
	}
	ok(!bad, "op_bundle_next: each packet where it lies, its length, in order (%u bad)",
	   bad);
	ok(off == len, "the walk ends at the end of the bundle");
	free(buf);
}

int main(void)
{
	test_layout();
	test_round_trips();
	test_short();
	test_header_only();
	test_version();
	test_type_flags();
	test_ts_fields();
	test_data_fields();
	test_ctl_fields();
	test_barrier_access();
	test_deadline();
	test_bundle_format();
	test_bundle_check();
	test_bundle_walk();
	return tap_done();
}
