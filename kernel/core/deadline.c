// SPDX-License-Identifier: GPL-2.0
/*
 * Best-effort deadlines from the measured delay; see deadline.h.
 */
#include "deadline.h"
#include "rack.h"
#include "ts.h"
#include "wire.h"

#define OP_NS_PER_US	1000U
#define OP_NS_PER_MS	1000000U
/* The longest sample taken, in microseconds (u32: some 71 minutes). */
#define OP_DEADLINE_SAMPLE_MAX_US	0xffffffffU

void op_deadline_init(struct op_deadline *d)
{
	d->srtt_us = 0;
	d->rttvar_us = 0;
	d->min_us = 0;
	d->given = false;
	d->last = 0;
}

/**
 * op_deadline_sample() - a message stamped @ts was settled at @now
 * @d: the receiver's state
 * @ts: the message's timestamp
 * @now: this host's 1Pipe clock when its ACK arrived, or the receiver's
 *	when it refused the message or stopped its wait (a NAK's time)
 *
 * The caller keeps to Karn's rule (deadline.h).  A clock behind the
 * stamp (skew) counts as the shortest delay.
 */
void op_deadline_sample(struct op_deadline *d, u64 ts, u64 now)
{
	s64 ns = op_ts_diff(now, ts);
	u64 us = ns > 0 ? div_u64((u64)ns, OP_NS_PER_US) : 0;

	if (us > OP_DEADLINE_SAMPLE_MAX_US)
		us = OP_DEADLINE_SAMPLE_MAX_US;
	op_rtt_sample(&d->srtt_us, &d->rttvar_us, &d->min_us, (u32)us);
}

/**
 * op_deadline_need() - how long after its stamp a message must be
 *	deliverable
 * @d: its receiver's state
 * @ts: the message's timestamp
 * @floor_ns: ack_timeout_ms: never less
 * @cap_ns: be_deadline_max_ms: the measured delay asks for no more
 *	(a floor above it wins)
 * @gran_ns: the timers' granularity (a beacon interval): the deviation
 *	term is at least this
 *
 * Twice what RFC 6298 would wait for an ACK: a retransmission timeout
 * that fires early costs a needless resend, a deadline that does costs
 * the message, so the margin over the measured delay is wider.
 *
 * Return: 2 (srtt + max(4 rttvar, @gran_ns)) within [@floor_ns, the
 * larger of @floor_ns and @cap_ns], and no less than what keeps the
 * deadline at or after the last one given towards this receiver, if that
 * is within the same bound.
 */
u64 op_deadline_need(const struct op_deadline *d, u64 ts, u64 floor_ns,
		     u64 cap_ns, u64 gran_ns)
{
	u64 most = cap_ns > floor_ns ? cap_ns : floor_ns;
	/* What the wire makes of the bound: last deadlines were rounded up. */
	u64 most_given = op_deadline_ns(op_deadline_pick(most));
	u64 need = floor_ns;

	if (d->srtt_us) {
		u64 var = 4ULL * d->rttvar_us * OP_NS_PER_US;
		u64 est = 2 * ((u64)d->srtt_us * OP_NS_PER_US +
			       (var > gran_ns ? var : gran_ns));

		if (est > need)
			need = est;
	}
	/*
	 * Beyond the bound, the last deadline is no longer one this bound
	 * could have given (a bound that shrank, or a peer idle long enough
	 * for the stamps to wrap): order gives way.
	 */
	if (d->given && op_ts_after(d->last, ts)) {
		u64 keep = (u64)op_ts_diff(d->last, ts);

		if (keep > need && keep <= most_given)
			need = keep;
	}
	/* @most goes on the wire as @most_given, at least any kept @last. */
	return need < most ? need : most;
}

/**
 * op_deadline_given() - a message towards the receiver got @deadline
 * @d: the receiver's state
 * @deadline: its timestamp plus op_deadline_ns() of its code
 *
 * Taken as it is: op_deadline_need() made it no earlier than the last
 * one unless that was out of bounds, which is then forgotten.
 */
void op_deadline_given(struct op_deadline *d, u64 deadline)
{
	d->last = deadline;
	d->given = true;
}

/**
 * op_deadline_pick() - the wire's deadline code for a need
 * @need_ns: from op_deadline_need()
 *
 * Return: the code of the shortest deadline the wire can say that is at
 * least @need_ns (op_deadline_code(), whole milliseconds rounded up).
 */
u8 op_deadline_pick(u64 need_ns)
{
	u64 ms = div_u64(need_ns, OP_NS_PER_MS);

	if (ms * OP_NS_PER_MS < need_ns)
		ms++;

	return op_deadline_code(ms > 0xffffffffULL ? 0xffffffffU : (u32)ms);
}
