/* SPDX-License-Identifier: GPL-2.0 */
/*
 * When to push a barrier advance down one output link: a switch port, or
 * a host's uplink.  Shared by the software switch (switch_logic.c) and
 * the hosts (tx.c), so both follow one rule.
 *
 * A barrier used to move only with the beacon ticks.  Every switch and
 * host ticks at the same instants, so a host's tick-t beacon reached its
 * ToR just after the ToR's own tick-t beacon had left, and each tier
 * added an interval.  Pushing an advance at once removes that, but a
 * minimum can move with every packet; the output is then paced:
 *
 *  - a link that carried one of our packets within @busy is busy: its
 *    next packet will carry the new value, so it gets that long for one
 *    before a push goes out (a busy link sees almost no beacons);
 *  - pushes follow a token bucket of two tokens refilled one per @gap
 *    (GCRA, one u64 per link): two advances in quick succession both go
 *    out at once, and in the long run a link gets at most one push per
 *    @gap however fast the minimum moves.
 *
 * Times are the caller's monotonic clock in ns.  The caller serializes
 * access.  No clock reads here.
 */
#ifndef _ONEPIPE_CORE_PUSH_H
#define _ONEPIPE_CORE_PUSH_H

#include "op_compat.h"

/*
 * Pacing both switches and hosts use, as fractions of the beacon
 * interval: half an interval per token lets through the one advance per
 * interval of an idle fabric and a second one, whatever the load; an
 * eighth of an interval without a packet is long enough to call a link
 * idle and short against the interval a barrier used to wait.
 */
#define OP_PUSH_GAP_DIV		2
#define OP_PUSH_BUSY_DIV	8

/**
 * struct op_push - push pacing of one output link
 * @last_carried: when a packet carrying our barrier last left, if @carried
 * @tat: when the bucket is full again (GCRA's theoretical arrival time)
 * @carried: a packet carrying our barrier has left
 */
struct op_push {
	u64 last_carried;
	u64 tat;
	bool carried;
};

/**
 * op_push_time() - earliest time a push may leave
 * @p: the link
 * @now: the time the advance happened
 * @gap: refill time of one token, ns
 * @busy: busy window, ns; 0 if the link's packets carry no barrier
 *
 * Return: @now, or later if the link is busy or out of tokens.
 */
static inline u64 op_push_time(const struct op_push *p, u64 now, u64 gap,
			       u64 busy)
{
	u64 at = now;

	if (busy && p->carried && (s64)(p->last_carried + busy - at) > 0)
		at = p->last_carried + busy;
	/* Two tokens: a push may leave up to one @gap before @tat. */
	if ((s64)(p->tat - gap - at) > 0)
		at = p->tat - gap;
	return at;
}

/* A packet carrying the current barrier left at @now. */
static inline void op_push_carried(struct op_push *p, u64 now)
{
	p->last_carried = now;
	p->carried = true;
}

/* A push left at @now: it takes a token. */
static inline void op_push_sent(struct op_push *p, u64 now, u64 gap)
{
	p->tat = ((s64)(p->tat - now) > 0 ? p->tat : now) + gap;
}

#endif /* _ONEPIPE_CORE_PUSH_H */
