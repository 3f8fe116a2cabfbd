/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The deadline a best-effort message is given: at least ack_timeout_ms
 * after its timestamp, and longer when the delay measured towards its
 * receiver says that would not be enough.
 *
 * A receiver delivers a best-effort message only until its deadline and
 * drops it after (wire.h), so a deadline shorter than the time messages
 * really take to be delivered throws away messages that were on their
 * way.  Under load that time grows (the queues the window allows fill,
 * an emulated or busy host is descheduled), and a fixed deadline turns
 * a slower fabric into lost messages.  So the sender measures, per
 * receiver, the delay from a message's timestamp to the ACK saying it
 * was delivered, with the reliable service's round-trip estimator
 * (rack.h, RFC 6298), and gives each message at least twice the
 * timeout that estimate yields, 2 (srtt + 4 rttvar), up to a cap
 * (be_deadline_max_ms) that bounds how late a sender learns of a
 * failure.
 *
 * ACK samples follow Karn's rule as the reliable service does: only from
 * a message not yet asked about (op_tx_expire()), whose ACK can only be
 * the one its delivery sent; so they never time more than the deadline
 * the message had.  A NAK of a message refused on its way to delivery
 * (late, or no socket, or no room), or closed by a query while it waited
 * at the receiver for the barrier, says when, by the receiver's clock
 * (wire.h): that is a sample too, asked about or not.  It times the
 * delay that made a message late (at least), so a fabric that slows
 * down beyond the deadline costs the messages in flight, not every
 * message from then on.  A lost message gives no sample: loss alone does
 * not stretch deadlines.
 *
 * The deadlines given towards one receiver do not go down along its
 * sequence numbers (op_deadline_need() keeps them at least the last one
 * given, unless the bounds shrank), so that the sender's outstanding
 * queue stays in deadline order and op_tx_expire() can stop at the first
 * one still ahead.
 *
 * Times are 1Pipe timestamps (ts.h).  Pure: no locks, no clocks; the
 * kernel keeps one struct op_deadline per peer under tx_lock.
 */
#ifndef _ONEPIPE_CORE_DEADLINE_H
#define _ONEPIPE_CORE_DEADLINE_H

#include "op_compat.h"

/**
 * struct op_deadline - what a sender knows of one receiver's delays
 * @srtt_us: smoothed delay from a message's timestamp to its ACK, 0
 *	before the first sample
 * @rttvar_us: its mean deviation
 * @min_us: the smallest sample
 * @given: @last holds a deadline
 * @last: the latest deadline given to a message towards the receiver
 */
struct op_deadline {
	u32 srtt_us;
	u32 rttvar_us;
	u32 min_us;
	bool given;
	u64 last;
};

void op_deadline_init(struct op_deadline *d);
void op_deadline_sample(struct op_deadline *d, u64 ts, u64 now);
u64 op_deadline_need(const struct op_deadline *d, u64 ts, u64 floor_ns,
		     u64 cap_ns, u64 gran_ns);
void op_deadline_given(struct op_deadline *d, u64 deadline);
u8 op_deadline_pick(u64 need_ns);

#endif /* _ONEPIPE_CORE_DEADLINE_H */
