// SPDX-License-Identifier: GPL-2.0
/*
 * deadline.c: the deadline a best-effort message gets from the delay
 * measured towards its receiver.
 */
#include "tap.h"
#include "deadline.h"
#include "ts.h"
#include "wire.h"

#define MS	1000000ULL	/* ns */
#define FLOOR	(100 * MS)	/* ack_timeout_ms's default */
#define CAP	(2000 * MS)	/* be_deadline_max_ms's default */
#define GRAN	(1 * MS)	/* a beacon interval */

static u64 need(const struct op_deadline *d, u64 ts)
{
	return op_deadline_need(d, ts, FLOOR, CAP, GRAN);
}

/* The deadline a message stamped @ts gets on the wire, given to @d. */
static u64 given(struct op_deadline *d, u64 ts)
{
	u8 code = op_deadline_pick(need(d, ts));
	u64 dl = op_ts_add(ts, (s64)op_deadline_ns(code));

	op_deadline_given(d, dl);
	return dl;
}

/* @n samples of a message stamped at @ts settled @delay later. */
static void samples(struct op_deadline *d, u64 ts, u64 delay, int n)
{
	while (n--)
		op_deadline_sample(d, ts, op_ts_add(ts, delay));
}

static void test_unmeasured(void)
{
	struct op_deadline d;

	op_deadline_init(&d);
	is_u64(need(&d, 5 * MS), FLOOR, "nothing measured: ack_timeout_ms");
	is_u64(op_deadline_need(&d, 5 * MS, FLOOR, 10 * MS, GRAN), FLOOR,
	       "a cap below the floor: the floor wins");
}

static void test_short_delay(void)
{
	struct op_deadline d;

	op_deadline_init(&d);
	samples(&d, 1000 * MS, 3 * MS, 50);
	ok(op_deadline_need(&d, 2000 * MS, 1 * MS, CAP, GRAN) < 10 * MS,
	   "with a 1 ms floor, a steady 3 ms delay asks for little");
	is_u64(need(&d, 2000 * MS), FLOOR,
	       "a delay well within ack_timeout_ms leaves the floor");
	is_u64(d.min_us, 3000, "the smallest delay is kept (us)");
}

static void test_long_delay(void)
{
	struct op_deadline d;
	u64 n;

	op_deadline_init(&d);
	samples(&d, 1000 * MS, 300 * MS, 100);
	n = need(&d, 2000 * MS);
	ok(n >= 600 * MS && n <= 620 * MS,
	   "a steady 300 ms delay: about 2 (srtt + the granularity) (%llu ms)",
	   (unsigned long long)(n / MS));

	op_deadline_init(&d);
	samples(&d, 1000 * MS, 150 * MS, 1);
	is_u64(need(&d, 2000 * MS), 2 * (150 * MS + 4 * 75 * MS),
	       "one 150 ms sample: 2 (srtt + 4 rttvar) = 2 (150 + 4 x 75) ms");

	op_deadline_init(&d);
	samples(&d, 1000 * MS, 5000 * MS, 3);
	is_u64(need(&d, 9000 * MS), CAP, "a delay beyond the cap: the cap");
	is_u64(op_deadline_need(&d, 9000 * MS, 3000 * MS, CAP, GRAN),
	       3000 * MS, "... unless the floor is above it");
}

static void test_varying(void)
{
	struct op_deadline d;
	u64 n;
	int i;

	op_deadline_init(&d);
	for (i = 0; i < 200; i++)
		samples(&d, 1000 * MS, (i % 2 ? 40 : 120) * MS, 1);
	n = need(&d, 2000 * MS);
	ok(n >= 200 * MS,
	   "delays of 40 and 120 ms: the deviation covers the long ones (%llu ms)",
	   (unsigned long long)(n / MS));
}

static void test_skew_and_wrap(void)
{
	struct op_deadline d;
	u64 ts = OP_TS_MASK - 20 * MS;	/* 20 ms before the wrap */

	op_deadline_init(&d);
	op_deadline_sample(&d, 1000 * MS, 999 * MS);
	is_u64(d.srtt_us, 1, "a clock behind the stamp: the shortest delay");

	op_deadline_init(&d);
	samples(&d, ts, 250 * MS, 100);
	ok(d.srtt_us >= 249000 && d.srtt_us <= 250000,
	   "a delay across the timestamps' wrap is measured (%u us)",
	   d.srtt_us);
}

static void test_in_order(void)
{
	struct op_deadline d;
	u64 ts = 1000 * MS, dl;

	op_deadline_init(&d);
	samples(&d, 0, 200 * MS, 1);
	dl = op_ts_add(ts, (s64)need(&d, ts));
	op_deadline_given(&d, dl);
	/* The delay falls back: the next messages must not end earlier. */
	op_deadline_init(&d);
	op_deadline_given(&d, dl);
	is_u64(need(&d, ts + 10 * MS), dl - ts - 10 * MS,
	       "a shorter estimate keeps the next deadline at the last one");
	ok(op_ts_diff(op_ts_add(ts + 10 * MS, (s64)need(&d, ts + 10 * MS)),
		      dl) >= 0, "... never before it");
	is_u64(need(&d, dl + 5 * MS), FLOOR,
	       "once stamps pass it, the floor again");

	/*
	 * A capped deadline goes on the wire rounded up (2048 ms for
	 * 2000): the next, with a short estimate, still ends no earlier.
	 */
	op_deadline_init(&d);
	samples(&d, 0, 5000 * MS, 3);
	dl = given(&d, ts);
	ok(op_ts_diff(dl, ts) > (s64)CAP, "a capped deadline is rounded up");
	d.srtt_us = 0;
	ok(op_ts_diff(given(&d, ts + 10 * MS), dl) >= 0,
	   "the next deadline is not before a rounded-up capped one");

	/* The bound shrank below the last deadline: order gives way. */
	op_deadline_init(&d);
	op_deadline_given(&d, ts + 400 * MS);
	is_u64(op_deadline_need(&d, ts + 10 * MS, FLOOR, 200 * MS, GRAN),
	       FLOOR, "a last deadline beyond a shrunk bound is not kept");

	/*
	 * A peer idle for 40 hours: its last deadline, 2^47 ns and more
	 * behind, looks ahead of the stamps now.  It is out of bounds, so
	 * the floor, and the next deadline given replaces it.
	 */
	op_deadline_init(&d);
	op_deadline_given(&d, ts);
	is_u64(need(&d, op_ts_add(ts, (s64)(40 * 3600 * 1000 * MS))), FLOOR,
	       "a stale last deadline (stamps wrapped) is not kept");
	op_deadline_given(&d, op_ts_add(ts, (s64)(40 * 3600 * 1000 * MS)));
	is_u64(need(&d, op_ts_add(ts, (s64)(40 * 3600 * 1000 * MS + MS))),
	       FLOOR, "... and the next deadline given replaces it");
}

static void test_pick(void)
{
	u8 c;

	c = op_deadline_pick(FLOOR);
	ok(op_deadline_ns(c) >= FLOOR && op_deadline_ns(c) <= FLOOR / 8 * 9,
	   "100 ms on the wire: at least it, within an eighth (%llu ns)",
	   (unsigned long long)op_deadline_ns(c));
	c = op_deadline_pick(FLOOR + 1);
	ok(op_deadline_ns(c) >= FLOOR + 1,
	   "a need a nanosecond over is rounded up (%llu ns)",
	   (unsigned long long)op_deadline_ns(c));
	is_u64(op_deadline_ns(op_deadline_pick(0)), 1 * MS,
	       "no need at all: the shortest deadline, 1 ms");
	c = op_deadline_pick(~0ULL);
	ok(c != 0 && op_deadline_ns(c) >= 600000 * MS,
	   "an absurd need: the longest code, never 0 (no deadline)");
}

int main(void)
{
	test_unmeasured();
	test_short_delay();
	test_long_delay();
	test_varying();
	test_skew_and_wrap();
	test_in_order();
	test_pick();
	return tap_done();
}
