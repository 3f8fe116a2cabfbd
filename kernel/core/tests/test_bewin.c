// SPDX-License-Identifier: GPL-2.0
/*
 * bewin.c: the best-effort window grows while ACKs come back within the
 * target and shrinks when they do not, within 1 .. max; the query gap
 * follows the ACK delay.
 */
#include "tap.h"
#include "bewin.h"

#define MS	1000000ULL	/* ns */

/* @n ACKs of delay @d_us against a 25 ms target, ceiling @max. */
static void acks(struct op_bewin *w, unsigned int n, u32 d_us, u32 max)
{
	while (n--)
		op_bewin_acked(w, d_us, 25000, max);
}

int main(void)
{
	struct op_bewin w;
	u32 c;

	op_bewin_init(&w);
	ok(op_bewin_cwnd(&w, 512) == OP_BEWIN_START, "starts at %u",
	   OP_BEWIN_START);
	ok(op_bewin_cwnd(&w, 4) == 4, "the ceiling caps it");
	acks(&w, 8, 5000, 512);
	ok(w.cwnd == 16, "prompt ACKs: doubles per window (%u)", w.cwnd);
	acks(&w, 2000, 5000, 512);
	ok(w.cwnd == 512, "and stops at the ceiling (%u)", w.cwnd);
	op_bewin_acked(&w, 40000, 25000, 512);
	ok(!w.slow, "a late ACK ends the doubling");
	c = w.cwnd;
	acks(&w, c - 2, 40000, 512);
	ok(w.cwnd == c, "late ACKs: nothing until a window of them");
	acks(&w, 1, 40000, 512);
	ok(w.cwnd == c - c / 8, "then an eighth off (%u -> %u)", c, w.cwnd);
	c = w.cwnd;
	acks(&w, c, 5000, 512);
	ok(w.cwnd == c + 1, "prompt again: one more per window");
	op_bewin_late(&w);
	ok(w.cwnd == (c + 1) / 2, "a deadline missed halves it");
	for (c = 0; c < 20; c++)
		op_bewin_late(&w);
	ok(w.cwnd == 1 && op_bewin_cwnd(&w, 512) == 1,
	   "never below one");
	acks(&w, 100, 40000, 512);
	ok(w.cwnd == 1, "late ACKs at one: stays one");
	acks(&w, 3, 5000, 512);
	ok(w.cwnd == 3, "and grows back by one per window (%u)", w.cwnd);

	op_bewin_init(&w);
	ok(op_bewin_query_gap_ns(&w, 25 * MS) == 25 * MS,
	   "no ACK delay measured: the floor");
	acks(&w, 50, 5000, 512);
	ok(op_bewin_query_gap_ns(&w, 25 * MS) == 25 * MS,
	   "short delays: still the floor");
	acks(&w, 200, 80000, 512);
	ok(op_bewin_query_gap_ns(&w, 25 * MS) >= 80 * MS,
	   "long delays: at least the delay (%llu ms)",
	   (unsigned long long)(op_bewin_query_gap_ns(&w, 25 * MS) / MS));
	return tap_done();
}
