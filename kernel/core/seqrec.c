// SPDX-License-Identifier: GPL-2.0
/*
 * The best-effort delivery record (seqrec.h): three bitmaps over a window
 * of sequence numbers that slides up, indexed by seq % OP_SEQREC_SPAN.
 */
#include "seqrec.h"
#include "ts.h"

static bool op_bit(const u64 *map, u32 seq)
{
	u32 i = seq % OP_SEQREC_SPAN;

	return map[i / 64] >> (i % 64) & 1;
}

static void op_bit_put(u64 *map, u32 seq, bool v)
{
	u32 i = seq % OP_SEQREC_SPAN;
	u64 m = (u64)1 << (i % 64);

	if (v)
		map[i / 64] |= m;
	else
		map[i / 64] &= ~m;
}

static void op_seqrec_clear(struct op_seqrec *r)
{
	u32 i;

	for (i = 0; i < OP_SEQREC_WORDS; i++) {
		r->delivered[i] = 0;
		r->closed[i] = 0;
		r->arrived[i] = 0;
	}
}

/**
 * op_seqrec_init() - an empty record: nothing delivered, closed or arrived
 * @r: the record
 */
void op_seqrec_init(struct op_seqrec *r)
{
	r->base = 0;
	r->top_ts = 0;
	r->valid = false;
	r->seen = false;
	op_seqrec_clear(r);
}

/**
 * op_seqrec_get() - what became of message @seq
 * @r: the sender's record
 * @seq: its sequence number
 *
 * Return: OP_SEQ_FORGOTTEN below the record; OP_SEQ_OPEN above it, or
 * with nothing recorded yet (this receiver delivered nothing of the
 * sender's); otherwise what was recorded.
 */
enum op_seq_state op_seqrec_get(const struct op_seqrec *r, u32 seq)
{
	if (!r->valid)
		return OP_SEQ_OPEN;
	if ((s32)(seq - r->base) < 0)
		return OP_SEQ_FORGOTTEN;
	if (seq - r->base >= OP_SEQREC_SPAN)
		return OP_SEQ_OPEN;
	if (op_bit(r->delivered, seq))
		return OP_SEQ_DELIVERED;
	return op_bit(r->closed, seq) ? OP_SEQ_CLOSED : OP_SEQ_OPEN;
}

/* Slide the record up so that @seq is its highest number. */
static void op_seqrec_slide(struct op_seqrec *r, u32 seq)
{
	u32 base = seq - (OP_SEQREC_SPAN - 1), s;

	if (base - r->base >= OP_SEQREC_SPAN) {
		op_seqrec_clear(r);
	} else {
		for (s = r->base; s != base; s++) {
			op_bit_put(r->delivered, s, false);
			op_bit_put(r->closed, s, false);
			op_bit_put(r->arrived, s, false);
		}
	}
	r->base = base;
}

/* Make room for @seq (see op_seqrec_set()); false if below the record. */
static bool op_seqrec_place(struct op_seqrec *r, u32 seq)
{
	if (!r->valid) {
		r->valid = true;
		r->base = seq - OP_SEQREC_SPAN / 2;
	}
	if ((s32)(seq - r->base) < 0)
		return false;
	if (seq - r->base >= OP_SEQREC_SPAN)
		op_seqrec_slide(r, seq);
	return true;
}

/**
 * op_seqrec_set() - record that message @seq was delivered or closed
 * @r: the sender's record
 * @seq: its sequence number
 * @st: OP_SEQ_DELIVERED or OP_SEQ_CLOSED
 *
 * The first entry (unless an arrival started the record) starts it half
 * a span below @seq: this receiver delivered none of those.  An entry
 * above the record slides it up, forgetting its oldest numbers.  Whether
 * the message arrived (op_seqrec_mark_arrived()) is left alone.
 *
 * Return: false, recording nothing, if @seq is below the record.
 */
bool op_seqrec_set(struct op_seqrec *r, u32 seq, enum op_seq_state st)
{
	if (!op_seqrec_place(r, seq))
		return false;
	op_bit_put(r->delivered, seq, st == OP_SEQ_DELIVERED);
	op_bit_put(r->closed, seq, st == OP_SEQ_CLOSED);
	return true;
}

/* Is @ts above every stamp the record heard of?  Then keep it. */
static bool op_seqrec_newest(struct op_seqrec *r, u64 ts)
{
	if (r->seen && !op_ts_after(ts, r->top_ts))
		return false;
	r->top_ts = ts;
	r->seen = true;
	return true;
}

/**
 * op_seqrec_heard() - a query named messages stamped @ts and later
 * @r: their sender's record
 * @ts: the earliest stamp of the messages it named
 *
 * What the record closes on a query must not be taken for a restart when
 * an older message arrives: such a message is stamped at most @ts.
 */
void op_seqrec_heard(struct op_seqrec *r, u64 ts)
{
	op_seqrec_newest(r, ts);
}

/**
 * op_seqrec_arrive() - message @seq, stamped @ts, arrived: what became of it
 * @r: its sender's record
 * @seq: its sequence number
 * @ts: its timestamp
 *
 * As op_seqrec_get(), but first: a message the record forgot, or says was
 * delivered, stamped above every message and query heard of, means the
 * sender started its numbers over (a copy of a message carries its
 * stamp, which was heard of), and the record starts over (the message is
 * then open).  A closed one stamped so may belong to a query's range
 * (op_seqrec_heard() heard only the range's first stamp): it stays
 * closed.
 *
 * Return: the message's state.
 */
enum op_seq_state op_seqrec_arrive(struct op_seqrec *r, u32 seq, u64 ts)
{
	enum op_seq_state st = op_seqrec_get(r, seq);

	if (op_seqrec_newest(r, ts) &&
	    (st == OP_SEQ_FORGOTTEN || st == OP_SEQ_DELIVERED)) {
		op_seqrec_init(r);
		op_seqrec_newest(r, ts);
		st = OP_SEQ_OPEN;
	}
	return st;
}

/**
 * op_seqrec_mark_arrived() - a copy of open message @seq arrived and waits
 * @r: its sender's record
 * @seq: its sequence number
 *
 * An arrival never slides the record: a message far ahead (a scattering
 * larger than the record) must not make the ones before it, still
 * waiting, forgotten before they are delivered.  An empty record starts
 * with @seq at its top, so that it covers the messages before it.
 *
 * Return: false, recording nothing, if @seq is outside the record.
 */
bool op_seqrec_mark_arrived(struct op_seqrec *r, u32 seq)
{
	if (!r->valid) {
		r->valid = true;
		r->base = seq - (OP_SEQREC_SPAN - 1);
	}
	if ((s32)(seq - r->base) < 0 || seq - r->base >= OP_SEQREC_SPAN)
		return false;
	op_bit_put(r->arrived, seq, true);
	return true;
}

/**
 * op_seqrec_clear_arrived() - message @seq no longer waits here
 * @r: its sender's record
 * @seq: its sequence number
 *
 * For a message dropped without being closed (a partial given up, a
 * queue flushed): a query about it must not say that it waited.
 */
void op_seqrec_clear_arrived(struct op_seqrec *r, u32 seq)
{
	if (r->valid && (s32)(seq - r->base) >= 0 &&
	    seq - r->base < OP_SEQREC_SPAN)
		op_bit_put(r->arrived, seq, false);
}

/** op_seqrec_clear_arrivals() - nothing waits here any more */
void op_seqrec_clear_arrivals(struct op_seqrec *r)
{
	u32 i;

	for (i = 0; i < OP_SEQREC_WORDS; i++)
		r->arrived[i] = 0;
}

/**
 * op_seqrec_arrived() - did a copy of message @seq arrive here?
 * @r: its sender's record
 * @seq: its sequence number
 *
 * Return: true if it did since the record last started, false if not or
 * if @seq is outside the record.
 */
bool op_seqrec_arrived(const struct op_seqrec *r, u32 seq)
{
	if (!r->valid || (s32)(seq - r->base) < 0 ||
	    seq - r->base >= OP_SEQREC_SPAN)
		return false;
	return op_bit(r->arrived, seq);
}
