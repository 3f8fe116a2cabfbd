// SPDX-License-Identifier: GPL-2.0
/*
 * seqrec.c: the best-effort delivery record, against a reference model
 * that remembers every sequence number forever, over random walks that
 * cross the 32-bit wrap; and the rules a receiver's answers rest on.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "seqrec.h"

static void test_basics(void)
{
	struct op_seqrec r;

	op_seqrec_init(&r);
	ok(op_seqrec_get(&r, 7) == OP_SEQ_OPEN, "empty: open");
	ok(op_seqrec_set(&r, 7, OP_SEQ_DELIVERED), "first entry recorded");
	ok(op_seqrec_get(&r, 7) == OP_SEQ_DELIVERED, "delivered reads back");
	ok(op_seqrec_get(&r, 6) == OP_SEQ_OPEN &&
	   op_seqrec_get(&r, 8) == OP_SEQ_OPEN, "its neighbours are open");
	ok(op_seqrec_set(&r, 6, OP_SEQ_CLOSED) &&
	   op_seqrec_get(&r, 6) == OP_SEQ_CLOSED, "closed reads back");
	ok(op_seqrec_get(&r, 7 - OP_SEQREC_SPAN / 2) == OP_SEQ_OPEN,
	   "half a span below the first entry is still recorded (open)");
	ok(op_seqrec_get(&r, 7 - OP_SEQREC_SPAN / 2 - 1) == OP_SEQ_FORGOTTEN,
	   "below that: forgotten");
	ok(!op_seqrec_set(&r, 7 - OP_SEQREC_SPAN / 2 - 1, OP_SEQ_CLOSED),
	   "nothing is recorded below the record");
	ok(op_seqrec_set(&r, 7 + 3 * OP_SEQREC_SPAN, OP_SEQ_DELIVERED),
	   "far above: slides");
	ok(op_seqrec_get(&r, 7) == OP_SEQ_FORGOTTEN &&
	   op_seqrec_get(&r, 7 + 2 * OP_SEQREC_SPAN + 1) == OP_SEQ_OPEN,
	   "old entries forgotten, the new span starts open");
	ok(op_seqrec_get(&r, 7 + 3 * OP_SEQREC_SPAN + 1) == OP_SEQ_OPEN,
	   "above the record: open");
}

/* The model: every seq's state forever (256 K numbers around a start). */
#define MODEL_N		(1u << 18)

static unsigned char model[MODEL_N];

static u32 rnd(u32 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/*
 * Random walk: the highest seq moves up in steps, entries land within
 * a window behind it (reordering), queries look anywhere around it.
 * Every answer the record gives must agree with the model, or be
 * "forgotten" for a number more than a span below the highest entry; and
 * it is never "open" for something delivered or closed.
 */
static void test_model(u32 start, u32 seed, u32 lag)
{
	unsigned int wrong = 0, forgotten = 0, steps = 200000, i;
	struct op_seqrec r;
	u32 hi = 0, s = seed;

	op_seqrec_init(&r);
	memset(model, 0, sizeof(model));
	for (i = 0; i < steps; i++) {
		u32 off, seq;
		enum op_seq_state got, want;

		if (hi < MODEL_N - 4096 && rnd(&s) % 4 == 0)
			hi += rnd(&s) % 8;
		off = hi >= lag ? hi - rnd(&s) % lag : hi;
		seq = start + off;
		if (rnd(&s) % 2) {
			enum op_seq_state st = rnd(&s) % 2 ? OP_SEQ_DELIVERED :
							     OP_SEQ_CLOSED;

			if (model[off])
				continue;	/* a receiver records once */
			if (op_seqrec_set(&r, seq, st))
				model[off] = (unsigned char)st;
			else if (hi - off < OP_SEQREC_SPAN / 2)
				wrong++;	/* refused too near the top */
			continue;
		}
		off = hi + 64 >= lag + 64 ? hi + 64 - rnd(&s) % (lag + 64) :
					    rnd(&s) % (hi + 64);
		seq = start + off;
		got = op_seqrec_get(&r, seq);
		want = (enum op_seq_state)model[off];
		if (got == OP_SEQ_FORGOTTEN) {
			forgotten++;
			if (hi - off < OP_SEQREC_SPAN / 2 && off <= hi)
				wrong++;
		} else if (got != want) {
			wrong++;
		}
	}
	ok(!wrong, "start %#x lag %u: %u wrong answers, %u forgotten",
	   start, lag, wrong, forgotten);
}

/* A sender that starts its numbers over is told from a straggler. */
static void test_restart(void)
{
	struct op_seqrec r;
	u32 s;

	op_seqrec_init(&r);
	for (s = 5000; s < 5000 + 2 * OP_SEQREC_SPAN; s++) {
		op_seqrec_arrive(&r, s, 1000 + s);
		op_seqrec_set(&r, s, OP_SEQ_DELIVERED);
	}
	ok(op_seqrec_arrive(&r, 5000, 1000 + 5000) == OP_SEQ_FORGOTTEN,
	   "an old straggler (old stamp) stays forgotten");
	ok(op_seqrec_get(&r, 5000 + 2 * OP_SEQREC_SPAN - 1) ==
	   OP_SEQ_DELIVERED, "and the record is kept");
	ok(op_seqrec_arrive(&r, 0, 1000000) == OP_SEQ_OPEN,
	   "seq 0 stamped above all: the sender started over, open");
	ok(op_seqrec_set(&r, 0, OP_SEQ_DELIVERED) &&
	   op_seqrec_get(&r, 0) == OP_SEQ_DELIVERED &&
	   op_seqrec_get(&r, 1) == OP_SEQ_OPEN,
	   "the new record starts at it");
	ok(op_seqrec_get(&r, 5000 + 2 * OP_SEQREC_SPAN - 1) == OP_SEQ_OPEN,
	   "the old incarnation's numbers are gone");
	ok(op_seqrec_arrive(&r, 1, 999999) == OP_SEQ_OPEN,
	   "a later message stamped lower within the record is just open");

	/* A short-lived incarnation: its numbers land inside the record. */
	op_seqrec_init(&r);
	for (s = 0; s < 100; s++) {
		op_seqrec_arrive(&r, s, 1000 + s);
		op_seqrec_set(&r, s, OP_SEQ_DELIVERED);
	}
	ok(op_seqrec_arrive(&r, 10, 1000 + 10) == OP_SEQ_DELIVERED,
	   "a copy of a delivered message is delivered (a duplicate)");
	ok(op_seqrec_arrive(&r, 10, 5000) == OP_SEQ_OPEN &&
	   op_seqrec_get(&r, 11) == OP_SEQ_OPEN,
	   "a delivered number stamped above all: started over, open");
}

/*
 * A record a query made: a straggler older than what the query named
 * must not reset it, or what the query closed could be delivered.
 */
static void test_query_first(void)
{
	struct op_seqrec r;

	op_seqrec_init(&r);
	op_seqrec_heard(&r, 50000);
	ok(op_seqrec_set(&r, 3000, OP_SEQ_CLOSED), "a query closes 3000");
	ok(op_seqrec_arrive(&r, 3000 - OP_SEQREC_SPAN, 40000) ==
	   OP_SEQ_FORGOTTEN, "an older straggler below the record: forgotten");
	ok(op_seqrec_get(&r, 3000) == OP_SEQ_CLOSED, "3000 stays closed");
	ok(op_seqrec_arrive(&r, 3000, 50010) == OP_SEQ_CLOSED,
	   "3000 itself, stamped after the query's first, stays closed");
	/* Queries slide the record far past the last arrival. */
	ok(op_seqrec_set(&r, 3000 + 3 * OP_SEQREC_SPAN, OP_SEQ_CLOSED),
	   "a later query slides the record");
	op_seqrec_heard(&r, 60000);
	ok(op_seqrec_arrive(&r, 3000 + OP_SEQREC_SPAN, 55000) ==
	   OP_SEQ_FORGOTTEN &&
	   op_seqrec_get(&r, 3000 + 3 * OP_SEQREC_SPAN) == OP_SEQ_CLOSED,
	   "a straggler between the two: forgotten, the record kept");
}

/*
 * Arrivals: marked whatever the state, never sliding the record, cleared
 * when the message stops waiting, forgotten as the record slides.
 */
static void test_arrived(void)
{
	struct op_seqrec r;
	u32 s, n;

	op_seqrec_init(&r);
	ok(!op_seqrec_arrived(&r, 5000), "an empty record: nothing arrived");
	ok(op_seqrec_mark_arrived(&r, 5000), "an arrival starts the record");
	ok(op_seqrec_arrived(&r, 5000), "... and is recorded");
	is_u64(op_seqrec_get(&r, 5000), OP_SEQ_OPEN, "... still open");
	is_u64(op_seqrec_get(&r, 5000 - OP_SEQREC_SPAN + 1), OP_SEQ_OPEN,
	       "... at the record's top: a span of older ones stays open");
	ok(!op_seqrec_arrived(&r, 5001), "another number did not arrive");
	ok(op_seqrec_set(&r, 5000, OP_SEQ_CLOSED), "closed by a query");
	ok(op_seqrec_arrived(&r, 5000), "closing keeps that it had arrived");
	op_seqrec_clear_arrived(&r, 5000);
	ok(!op_seqrec_arrived(&r, 5000), "cleared: it no longer waits");

	/* A scattering larger than the record, all waiting. */
	op_seqrec_init(&r);
	for (s = 0; s < OP_SEQREC_SPAN + 100; s++)
		op_seqrec_mark_arrived(&r, 7000 + s);
	is_u64(op_seqrec_get(&r, 7000), OP_SEQ_OPEN,
	       "arrivals beyond the record do not slide it: the first waits on");
	ok(!op_seqrec_arrived(&r, 7000 + OP_SEQREC_SPAN),
	   "... and are not marked");
	for (s = 0, n = 0; s < OP_SEQREC_SPAN + 100; s++)
		n += op_seqrec_set(&r, 7000 + s, OP_SEQ_DELIVERED);
	is_u64(n, OP_SEQREC_SPAN + 100, "every delivery in order recorded");
	is_u64(op_seqrec_get(&r, 7000 + OP_SEQREC_SPAN + 99),
	       OP_SEQ_DELIVERED, "deliveries slide it as before");
	ok(!op_seqrec_arrived(&r, 7000 + 99), "the slide forgot old arrivals");

	op_seqrec_mark_arrived(&r, 7000 + OP_SEQREC_SPAN + 50);
	op_seqrec_clear_arrivals(&r);
	ok(!op_seqrec_arrived(&r, 7000 + OP_SEQREC_SPAN + 50),
	   "a flush clears every arrival");

	/* A sender that started over (op_seqrec_arrive() restarts it). */
	op_seqrec_mark_arrived(&r, 7000 + OP_SEQREC_SPAN + 60);
	is_u64(op_seqrec_arrive(&r, 50, 1000), OP_SEQ_OPEN,
	       "a forgotten number stamped above all: the sender started over");
	ok(!op_seqrec_arrived(&r, 7000 + OP_SEQREC_SPAN + 60),
	   "a record that starts over forgets arrivals");
}

int main(void)
{
	test_basics();
	test_arrived();
	test_restart();
	test_query_first();
	test_model(0, 1, 64);
	test_model(0xffffff00u, 2, 64);
	test_model(12345, 3, 900);
	test_model(0x7ffffff0u, 4, 2000);
	return tap_done();
}
