/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a receiver did with each best-effort message of one sender: the
 * record that makes a send-failure notification true.
 *
 * A sender that has no ACK for a message by its deadline asks the
 * receiver (OP_PKT_QUERY) instead of guessing.  The receiver answers
 * from this record: delivered (an ACK), or not delivered, and then it
 * closes the message, so that it is never delivered afterwards (a NAK,
 * OP_NAK_EXPIRED).  The sender reports a failure only on that NAK, which
 * is then true whatever the clocks and the network did.
 *
 * The record covers OP_SEQREC_SPAN sequence numbers, sliding up with the
 * highest one delivered or closed.  Below it the receiver knows nothing:
 * it delivers no message from there (it could not answer for it) and
 * leaves queries for it unanswered, so that the sender reports the fate
 * as unknown.  Senders keep far fewer messages in flight (be_window;
 * only a single scattering may hold more), so that takes a message
 * overtaken by a whole span of later ones.
 *
 * It also notes which messages arrived and wait (for the barrier, or
 * for their other fragments): a query that closes one of those is
 * answered with the time it waited until, which its sender's deadlines
 * learn from (core/deadline.h).
 *
 * A sender whose numbers start over (a new incarnation of its host, which
 * starts them at random) is told apart from such a straggler by its
 * stamps: along one sender's numbers the stamps never go down, so a
 * message below the record (or on a delivered number) stamped above
 * everything heard of comes from a sender that started over, and the
 * record starts over with it.
 *
 * A receiver that started over itself (its module or namespace is new)
 * has an empty record, which says nothing of what the one before it
 * delivered: it answers "not delivered" only for messages stamped after
 * it started (op_net.born_ts), and leaves the others to be reported as
 * unknown.
 *
 * Pure: no locks, no clocks; the caller serializes (rx_lock).
 */
#ifndef _ONEPIPE_CORE_SEQREC_H
#define _ONEPIPE_CORE_SEQREC_H

#include "op_compat.h"

#define OP_SEQREC_SPAN	1024
#define OP_SEQREC_WORDS	(OP_SEQREC_SPAN / 64)

enum op_seq_state {
	OP_SEQ_OPEN,		/* neither delivered nor closed: may be */
	OP_SEQ_DELIVERED,	/* delivered to a socket */
	OP_SEQ_CLOSED,		/* will never be delivered */
	OP_SEQ_FORGOTTEN,	/* below the record: nothing is known */
};

/**
 * struct op_seqrec - delivery record of one sender's best-effort messages
 * @base: lowest sequence number recorded, once @valid
 * @top_ts: the highest stamp of the sender's messages that arrived, once
 *	@seen
 * @valid: something was recorded
 * @seen: a message of the sender arrived
 * @delivered: bit (seq % OP_SEQREC_SPAN) for seqs in [base, base + SPAN)
 * @closed: likewise
 * @arrived: likewise: a copy of it arrived (it may still wait for the
 *	barrier or for its other fragments); whatever became of it since
 */
struct op_seqrec {
	u32 base;
	u64 top_ts;
	bool valid;
	bool seen;
	u64 delivered[OP_SEQREC_WORDS];
	u64 closed[OP_SEQREC_WORDS];
	u64 arrived[OP_SEQREC_WORDS];
};

void op_seqrec_init(struct op_seqrec *r);
enum op_seq_state op_seqrec_get(const struct op_seqrec *r, u32 seq);
bool op_seqrec_set(struct op_seqrec *r, u32 seq, enum op_seq_state st);
enum op_seq_state op_seqrec_arrive(struct op_seqrec *r, u32 seq, u64 ts);
bool op_seqrec_mark_arrived(struct op_seqrec *r, u32 seq);
void op_seqrec_clear_arrived(struct op_seqrec *r, u32 seq);
void op_seqrec_clear_arrivals(struct op_seqrec *r);
bool op_seqrec_arrived(const struct op_seqrec *r, u32 seq);
void op_seqrec_heard(struct op_seqrec *r, u64 ts);

#endif /* _ONEPIPE_CORE_SEQREC_H */
