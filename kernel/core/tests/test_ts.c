// SPDX-License-Identifier: GPL-2.0
/*
 * ts.h: 48-bit wrap-around timestamp arithmetic.
 */
#include "tap.h"
#include "ts.h"

#define WRAP	((u64)1 << OP_TS_BITS)
#define HALF	((u64)1 << (OP_TS_BITS - 1))

static void test_mask(void)
{
	is_u64(OP_TS_MASK, WRAP - 1, "OP_TS_MASK is 2^48 - 1");
	is_u64(op_ts(WRAP + 7), 7, "op_ts drops the bits above 48");
	is_u64(op_ts(OP_TS_MASK), OP_TS_MASK, "op_ts keeps the largest ts");
	is_u64(op_ts(1700000000123456789ULL), 1700000000123456789ULL % WRAP,
	       "op_ts of a CLOCK_REALTIME value is its residue mod 2^48");
}

static void test_plain_order(void)
{
	ok(op_ts_before(1, 2) && !op_ts_before(2, 1),
	   "1 is before 2, not after");
	ok(op_ts_after(2, 1) && !op_ts_after(1, 2), "2 is after 1, not before");
	ok(!op_ts_before(5, 5) && !op_ts_after(5, 5) && op_ts_diff(5, 5) == 0,
	   "equal timestamps are neither before nor after each other");
	is_s64(op_ts_diff(1000, 10), 990, "diff of ordinary values");
	is_s64(op_ts_diff(10, 1000), -990, "diff is negative when a < b");
}

static void test_wrap_order(void)
{
	u64 hi = OP_TS_MASK - 10, lo = 5;

	ok(op_ts_before(hi, lo), "2^48-11 is before 5 across the wrap");
	ok(op_ts_after(lo, hi), "5 is after 2^48-11 across the wrap");
	ok(!op_ts_after(hi, lo) && !op_ts_before(lo, hi),
	   "wrap order is not also the numeric order");
	is_s64(op_ts_diff(lo, hi), 16, "diff across the wrap is +16");
	is_s64(op_ts_diff(hi, lo), -16, "diff back across the wrap is -16");
	is_s64(op_ts_diff(0, OP_TS_MASK), 1, "0 is one tick after 2^48-1");
	is_s64(op_ts_diff(OP_TS_MASK, 0), -1, "2^48-1 is one tick before 0");
}

static void test_half_range(void)
{
	is_s64(op_ts_diff(HALF - 1, 0), (s64)(HALF - 1),
	       "2^47-1 is the largest forward distance");
	is_s64(op_ts_diff(0, HALF - 1), -(s64)(HALF - 1),
	       "2^47-1 is the largest backward distance");
	is_s64(op_ts_diff(HALF + 1, 0), -(s64)(HALF - 1),
	       "2^47+1 ahead reads as 2^47-1 behind (sign-extended)");
	is_s64(op_ts_diff(HALF, 0), -(s64)HALF,
	       "2^47 apart sign-extends to -2^47");
	is_s64(op_ts_diff(3 | (0x7fULL << 50), 1 | (0x15ULL << 49)), 2,
	       "diff ignores the bits above 48 of both operands");
}

static void test_min_max(void)
{
	u64 hi = OP_TS_MASK - 1, lo = 3;

	is_u64(op_ts_max(hi, lo), lo, "max across the wrap is the later ts");
	is_u64(op_ts_max(lo, hi), lo, "max is symmetric");
	is_u64(op_ts_min(hi, lo), hi, "min across the wrap is the earlier ts");
	is_u64(op_ts_min(lo, hi), hi, "min is symmetric");
	is_u64(op_ts_max(10, 20), 20, "max of ordinary values");
	is_u64(op_ts_min(10, 20), 10, "min of ordinary values");
	is_u64(op_ts_max(7, 7), 7, "max of equal values");
	is_u64(op_ts_min(7, 7), 7, "min of equal values");
}

static void test_add(void)
{
	is_u64(op_ts_add(OP_TS_MASK, 1), 0, "2^48-1 + 1 wraps to 0");
	is_u64(op_ts_add(OP_TS_MASK - 2, 10), 7, "2^48-3 + 10 wraps to 7");
	is_u64(op_ts_add(0, -1), OP_TS_MASK, "0 - 1 wraps to 2^48-1");
	is_u64(op_ts_add(5, -10), OP_TS_MASK - 4, "5 - 10 wraps to 2^48-5");
	is_u64(op_ts_add(123, 0), 123, "adding 0 is the identity");
	is_u64(op_ts_add(1, (s64)HALF - 1), HALF, "add of 2^47-1");
	is_u64(op_ts_add(OP_TS_MASK, (s64)WRAP), OP_TS_MASK,
	       "adding 2^48 is a full turn");
	is_u64(op_ts_add(WRAP + 4, 1), 5, "add masks an unmasked operand");
}

/* Every identity the helpers promise, on random pairs closer than 2^47. */
static void test_random(unsigned int seed)
{
	struct tap_rng r = { seed };
	unsigned int bad_range = 0, bad_diff = 0, bad_order = 0, bad_mm = 0;
	unsigned int i;

	for (i = 0; i < 200000; i++) {
		u64 a = tap_rand(&r) & OP_TS_MASK;
		s64 d = tap_range(&r, -(s64)(HALF - 1), (s64)(HALF - 1));
		u64 b;

		/* bias a third of the cases onto the wrap and tiny steps */
		if (i % 3 == 0)
			a = op_ts_add(0, tap_range(&r, -1000, 1000));
		if (i % 5 == 0)
			d = tap_range(&r, -3, 3);
		b = op_ts_add(a, d);

		bad_range += b > OP_TS_MASK;
		bad_diff += op_ts_diff(b, a) != d || op_ts_diff(a, b) != -d;
		bad_order += op_ts_before(a, b) != (d > 0) ||
			     op_ts_after(a, b) != (d < 0) ||
			     op_ts_before(b, a) != (d < 0) ||
			     (a == b) != (d == 0);
		bad_mm += op_ts_max(a, b) != (d >= 0 ? b : a) ||
			  op_ts_min(a, b) != (d >= 0 ? a : b) ||
			  op_ts_max(a, b) != op_ts_max(b, a) ||
			  op_ts_min(a, b) != op_ts_min(b, a);
	}
	ok(!bad_range, "seed %u: op_ts_add stays below 2^48 (%u bad)",
	   seed, bad_range);
	ok(!bad_diff, "seed %u: diff(a + d, a) == d for |d| < 2^47 (%u bad)",
	   seed, bad_diff);
	ok(!bad_order, "seed %u: before/after agree with the sign of d (%u bad)",
	   seed, bad_order);
	ok(!bad_mm, "seed %u: min/max pick by wrap order, symmetric (%u bad)",
	   seed, bad_mm);
}

int main(void)
{
	test_mask();
	test_plain_order();
	test_wrap_order();
	test_half_range();
	test_min_max();
	test_add();
	test_random(1);
	test_random(0xc0ffee);
	return tap_done();
}
