// SPDX-License-Identifier: GPL-2.0
/*
 * clock.h: the host clock never stamps backwards, never undercuts a
 * barrier it advertised, and stays above everything it delivered.
 */
#include "tap.h"
#include "clock.h"

#define WRAP	((u64)1 << OP_TS_BITS)
#define HALF	((u64)1 << (OP_TS_BITS - 1))

/* A clock that has caught up with the wall clock at @now. */
static struct op_clock clock_at(u64 now)
{
	struct op_clock c = { .next = op_ts(now) };

	return c;
}

/*
 * A zeroed clock (kzalloc'ed per-netns state, a static) must stamp at
 * the wall clock whatever the wall clock's residue mod 2^48 is.
 */
static void test_fresh_clock(void)
{
	static const u64 nows[] = {
		1000, HALF - 1, HALF, HALF + 1, OP_TS_MASK,
		1700000000123456789ULL,	/* 2023-11-14, residue >= 2^47 */
	};
	unsigned int i;

	for (i = 0; i < sizeof(nows) / sizeof(nows[0]); i++) {
		struct op_clock c = { 0 }, d = { 0 };
		u64 now = nows[i];

		is_u64(op_clock_stamp(&c, now), op_ts(now),
		       "zeroed clock stamps the wall clock (now %% 2^48 = 0x%llx)",
		       (unsigned long long)op_ts(now));
		is_u64(op_clock_barrier(&d, now), op_ts(now),
		       "zeroed clock advertises the wall clock (now %% 2^48 = 0x%llx)",
		       (unsigned long long)op_ts(now));
	}
}

static void test_follows_wall_clock(void)
{
	u64 t = 5000000000ULL;
	struct op_clock c = clock_at(t);
	u64 raw = 1700000000123456789ULL;

	is_u64(op_clock_stamp(&c, t), t, "stamp at the wall clock");
	is_u64(op_clock_stamp(&c, t + 1000), t + 1000,
	       "stamp follows a wall clock that moved forward");
	c = clock_at(raw - 10);
	is_u64(op_clock_stamp(&c, raw), op_ts(raw),
	       "stamp of a raw 64-bit CLOCK_REALTIME value is masked to 48 bits");
	is_u64(op_clock_barrier(&c, raw + 50), op_ts(raw + 50),
	       "barrier of a raw 64-bit value is masked to 48 bits");
}

static void test_backwards_wall_clock(void)
{
	u64 t = 5000000000ULL, s1, s2, s3, s4;
	struct op_clock c = clock_at(t);

	s1 = op_clock_stamp(&c, t);
	s2 = op_clock_stamp(&c, t);
	is_u64(s2, s1 + 1, "two stamps at the same wall time differ by 1 ns");
	s3 = op_clock_stamp(&c, t - 1000000);
	is_u64(s3, s2 + 1, "a clock that steps back 1 ms still stamps above");
	s4 = op_clock_stamp(&c, t + 5);
	ok(op_ts_after(s4, s3), "stamps strictly increase after the step back");
	is_u64(s4, t + 5, "once the wall clock catches up, stamps follow it");
}

static void test_barrier_promise(void)
{
	u64 t = 5000000000ULL, b, b2, b3, s;
	struct op_clock c = clock_at(t);

	b = op_clock_barrier(&c, t + 1000);
	is_u64(b, t + 1000, "barrier at the wall clock");
	s = op_clock_stamp(&c, t);
	ok(!op_ts_before(s, b),
	   "stamp after a wall clock step back is not below the barrier");
	is_u64(s, b, "and is exactly the barrier (ts >= barrier is allowed)");
	b2 = op_clock_barrier(&c, t);
	ok(op_ts_after(b2, s),
	   "barrier after a stamp is above it, so the message can be delivered");
	b3 = op_clock_barrier(&c, t - 5000);
	ok(!op_ts_before(b3, b2), "barriers never go backwards");
	s = op_clock_stamp(&c, t - 6000);
	ok(!op_ts_before(s, b3), "a later stamp does not undercut it either");
}

static void test_observe(void)
{
	u64 t = 5000000000ULL, s;
	struct op_clock c = clock_at(t);

	op_clock_observe(&c, t + 5000);
	s = op_clock_stamp(&c, t);
	is_u64(s, t + 5001, "after delivering ts, the next stamp is ts + 1");
	op_clock_observe(&c, t);
	is_u64(op_clock_stamp(&c, t), s + 1,
	       "observing an older ts does not move the clock back");
	op_clock_observe(&c, t + 9000);
	ok(op_ts_after(op_clock_barrier(&c, t), t + 9000),
	   "barrier after observe is above the observed ts");
}

static void test_wrap(void)
{
	static const u64 want[] = {
		OP_TS_MASK - 2, OP_TS_MASK - 1, OP_TS_MASK, 0, 1,
	};
	struct op_clock c = clock_at(OP_TS_MASK - 2);
	unsigned int i, bad = 0;
	u64 prev = 0, s;

	for (i = 0; i < 5; i++) {
		s = op_clock_stamp(&c, OP_TS_MASK - 2);
		bad += s != want[i] || (i && !op_ts_after(s, prev));
		prev = s;
	}
	ok(!bad, "stamps on a stuck clock cross 2^48 -> 0 in order");

	c = clock_at(OP_TS_MASK - 1);
	is_u64(op_clock_stamp(&c, OP_TS_MASK - 1), OP_TS_MASK - 1,
	       "stamp just below the wrap");
	is_u64(op_clock_stamp(&c, WRAP + 3), 3,
	       "wall clock crossing 2^48 stamps the wrapped value");
	is_u64(op_clock_stamp(&c, OP_TS_MASK - 100), 4,
	       "wall clock stepping back across the wrap does not undo it");
	is_u64(op_clock_barrier(&c, OP_TS_MASK), 5,
	       "barrier across the wrap is the wrapped next value");
	op_clock_observe(&c, OP_TS_MASK - 7);
	is_u64(op_clock_stamp(&c, OP_TS_MASK - 7), 5,
	       "observing a ts from before the wrap does not move the clock");
	op_clock_observe(&c, 10);
	is_u64(op_clock_stamp(&c, 0), 11,
	       "observing a ts after the wrap moves the clock past it");
}

/*
 * Random walk of a jittery wall clock across the wrap, with stamps,
 * barriers and deliveries interleaved; checks every promise each step.
 */
static void test_random_walk(unsigned int seed)
{
	struct tap_rng r = { seed };
	u64 now = OP_TS_MASK - 5000000;
	struct op_clock c = clock_at(now);
	u64 last_stamp = 0, max_barrier = 0, max_seen = 0;
	bool stamped = false, barriered = false, seen = false;
	unsigned int bad_stamp = 0, bad_barrier = 0, bad_range = 0;
	unsigned int wrapped = 0, i;

	for (i = 0; i < 300000; i++) {
		u64 old = now, v;

		now = op_ts_add(now, tap_range(&r, -2000, 3000));
		wrapped += now < old && old - now > HALF;
		switch (tap_below(&r, 10)) {
		case 0 ... 4:
			v = op_clock_stamp(&c, now);
			bad_range += v > OP_TS_MASK;
			bad_stamp +=
				(stamped && !op_ts_after(v, last_stamp)) ||
				(barriered && op_ts_before(v, max_barrier)) ||
				(seen && !op_ts_after(v, max_seen)) ||
				op_ts_before(v, now);
			last_stamp = v;
			stamped = true;
			break;
		case 5 ... 7:
			v = op_clock_barrier(&c, now);
			bad_range += v > OP_TS_MASK;
			bad_barrier +=
				(barriered && op_ts_before(v, max_barrier)) ||
				(stamped && !op_ts_after(v, last_stamp)) ||
				(seen && !op_ts_after(v, max_seen)) ||
				op_ts_before(v, now);
			max_barrier = barriered ? op_ts_max(max_barrier, v) : v;
			barriered = true;
			break;
		default:
			/*
			 * a message stamped by someone with a slightly
			 * different clock, possibly ahead of ours
			 */
			v = op_ts_add(now, tap_range(&r, -5000, 5000));
			op_clock_observe(&c, v);
			max_seen = seen ? op_ts_max(max_seen, v) : v;
			seen = true;
			break;
		}
	}
	ok(wrapped >= 1, "seed %u: the walk crossed the 48-bit wrap (%u times)",
	   seed, wrapped);
	ok(!bad_range, "seed %u: all values below 2^48 (%u bad)", seed, bad_range);
	ok(!bad_stamp,
	   "seed %u: stamps increase, stay >= barriers, > delivered, >= now (%u bad)",
	   seed, bad_stamp);
	ok(!bad_barrier,
	   "seed %u: barriers non-decreasing, > stamps and delivered, >= now (%u bad)",
	   seed, bad_barrier);
}

int main(void)
{
	test_fresh_clock();
	test_follows_wall_clock();
	test_backwards_wall_clock();
	test_barrier_promise();
	test_observe();
	test_wrap();
	test_random_walk(7);
	test_random_walk(20240601);
	return tap_done();
}
