/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure helpers of the barrier program: wrap-around time comparison
 * (kernel/core/ts.h) and the merge step of the minimum tree.
 *
 * A tree value (one 64-bit word, see op_tree_val()) is what an input
 * contributes to a group's minimum:
 *   [47:0]  its register
 *   [48]    counted: the register takes part in the minimum
 * Merging two values keeps the earlier counted register, so the root of
 * a tree says at once what the minimum is and whether there is one.
 */
#ifndef OP_COMMON_P4
#define OP_COMMON_P4

/* a is before b: the 48-bit distance a - b is negative. */
bool op_before(in bit<48> a, in bit<48> b)
{
	bit<48> d = a - b;

	return d[47:47] == 1;
}

bit<64> op_tree_val(in bit<1> counted, in bit<48> reg)
{
	return 15w0 ++ counted ++ reg;
}

bit<64> op_merge(in bit<64> a, in bit<64> b)
{
	bit<64> r;

	if (a[48:48] == 0)
		r = b;
	else if (b[48:48] == 0)
		r = a;
	else if (op_before(b[47:0], a[47:0]))
		r = b;
	else
		r = a;
	return r;
}

/*
 * op_hdr_decode() of kernel/core/wire.c: is @h a valid 1Pipe header in a
 * datagram of @udp_len bytes?  RoCE frames (@roce) also hold the BTH,
 * DETH and ICRC.
 */
bool op_valid(in op_h h, in bit<16> udp_len, in bool roce)
{
	bit<16> over = roce ? 16w8 + 12 + 8 + 4 + OP_HDR_LEN :
			      16w8 + OP_HDR_LEN;
	bit<32> payload;

	if (udp_len < over)
		return false;
	payload = (bit<32>)(udp_len - over);
	if (h.version != OP_WIRE_VERSION || (h.flags & OP_F_UNKNOWN) != 0)
		return false;
	if (h.ts_hi != 0 || h.barrier_hi != 0 || h.commit_hi != 0)
		return false;
	if (h.type == OP_PKT_DATA) {
		if (h.src_host == 0 || h.dst_host == 0 || h.dst_port == 0 ||
		    h.src_port == 0)
			return false;
		if (h.frag_cnt == 0 || h.frag_cnt > OP_MAX_FRAGS ||
		    h.frag_idx >= h.frag_cnt)
			return false;
		if (h.aux > OP_MAX_MSG || payload > h.aux)
			return false;
		if (h.frag_cnt == 1 && payload != h.aux)
			return false;
		return payload != 0 || h.aux == 0;
	}
	if (h.type == OP_PKT_BEACON)
		return payload == 0;
	if (payload != 0 || h.src_host == 0 || h.dst_host == 0)
		return false;
	if (h.type == OP_PKT_ACK) {
		bit<32> span = h.aux - h.seq;

		if (h.code > OP_ACK_WINDOW)
			return false;
		if (h.code != 0 && (h.flags & OP_F_RELIABLE) == 0)
			return false;
		return span[31:31] == 0;
	}
	if (h.type == OP_PKT_NAK) {
		if (h.code == OP_NAK_EXPIRED && (h.flags & OP_F_RELIABLE) != 0)
			return false;
		return h.code >= OP_NAK_EXPIRED && h.code <= OP_NAK_NOBUFS;
	}
	if (h.type == OP_PKT_RECALL || h.type == OP_PKT_PROBE)
		return (h.flags & OP_F_RELIABLE) != 0;
	if (h.type == OP_PKT_QUERY) {
		bit<32> qspan = h.aux - h.seq;

		return (h.flags & OP_F_RELIABLE) == 0 && qspan < OP_QUERY_MAX;
	}
	return false;
}

#endif /* OP_COMMON_P4 */
