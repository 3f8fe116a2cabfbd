/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A host's 1Pipe clock: the synchronized wall clock, made non-decreasing
 * and kept above everything the host has promised or seen.
 *
 * @next is the lowest timestamp the host may still give a scattering.  It
 * only grows: stamping moves it past the stamp, advertising a barrier
 * moves it up to the barrier (so a clock that steps back cannot stamp
 * below a barrier already on the wire), and delivering a message moves it
 * above the message (causality: a process never sends below what it has
 * delivered).  Until one of those happened @next means nothing: a zero
 * @next would compare as later than half of all wall-clock values.
 * The caller serializes access.
 */
#ifndef _ONEPIPE_CORE_CLOCK_H
#define _ONEPIPE_CORE_CLOCK_H

#include "ts.h"

struct op_clock {
	u64 next;
	bool valid;
};

/* Lowest timestamp allowed at wall-clock time @now. */
static inline u64 op_clock_floor(const struct op_clock *c, u64 now)
{
	return c->valid ? op_ts_max(op_ts(now), c->next) : op_ts(now);
}

/* Timestamp for a new scattering at wall-clock time @now. */
static inline u64 op_clock_stamp(struct op_clock *c, u64 now)
{
	u64 ts = op_clock_floor(c, now);

	c->next = op_ts_add(ts, 1);
	c->valid = true;
	return ts;
}

/* Barrier to advertise at @now: no later stamp will be below it. */
static inline u64 op_clock_barrier(struct op_clock *c, u64 now)
{
	c->next = op_clock_floor(c, now);
	c->valid = true;
	return c->next;
}

/* The host delivered a message stamped @ts. */
static inline void op_clock_observe(struct op_clock *c, u64 ts)
{
	u64 after = op_ts_add(ts, 1);

	c->next = c->valid ? op_ts_max(c->next, after) : after;
	c->valid = true;
}

#endif /* _ONEPIPE_CORE_CLOCK_H */
