/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Barrier aggregation, the heart of 1Pipe, shared by hosts and switches.
 *
 * Every input link has a register holding the last barrier heard on it.
 * An output's barrier is the minimum over the registers of the links that
 * feed it, with two rules from the paper:
 *
 *  - a link silent for longer than the timeout is dead and leaves the
 *    minimum (a failed or idle-and-broken neighbour must not stall the
 *    fabric); it comes back as a new link when heard again;
 *  - a new link is counted only once its register has reached the
 *    output barrier, so an output barrier never goes backwards (switches
 *    relax this for links that lag by construction, see
 *    op_agg_update_slack()).
 *
 * A switch feeds each output from a set of links (with up-down routing an
 * upward output only aggregates downward-facing inputs, which keeps the
 * barrier graph a DAG); struct op_agg is one such output group.  Links are
 * numbered 0..OP_MAX_LINKS-1 and groups name their members with a mask.
 * The caller serializes access.
 */
#ifndef _ONEPIPE_CORE_BARRIER_H
#define _ONEPIPE_CORE_BARRIER_H

#include "ts.h"

#define OP_MAX_LINKS	64

/*
 * A silent link leaves the commit-barrier minimum this many times later
 * than the barrier minimum.  Removing a live link's commit register lets
 * the commit barrier pass reliable messages still on their way, which
 * receivers must then refuse, possibly after other receivers delivered
 * the rest of their scatterings: the timeout is a failure decision.  A
 * longer one keeps a slow (rather than failed) neighbour from breaking
 * the reliable service, at the price of stalling it longer when the
 * neighbour did fail.
 */
#define OP_COMMIT_TIMEOUT_FACTOR	10

/**
 * struct op_link - one input link
 * @reg: last barrier heard (never decreases)
 * @last_heard: local monotonic time (ns) of the last packet
 * @heard: a packet has been heard since start or since it died
 * @dead: silent for longer than the timeout
 */
struct op_link {
	u64 reg;
	u64 last_heard;
	bool heard;
	bool dead;
};

/**
 * struct op_agg - one output group
 * @out: output barrier, valid once @valid
 * @members: links feeding this group
 * @counted: members currently in the minimum
 * @valid: @out has been computed from at least one link
 */
struct op_agg {
	u64 out;
	u64 members;
	u64 counted;
	bool valid;
};

void op_link_heard(struct op_link *l, u64 barrier, u64 now);
u64 op_links_expire(struct op_link *links, unsigned int n, u64 now,
		    u64 timeout);
bool op_agg_update_slack(struct op_agg *a, const struct op_link *links,
			 unsigned int n, u64 slack);

/* op_agg_update_slack() with the paper's strict new-link rule. */
static inline bool op_agg_update(struct op_agg *a, const struct op_link *links,
				 unsigned int n)
{
	return op_agg_update_slack(a, links, n, 0);
}

int op_agg_link_state(const struct op_agg *a, const struct op_link *links,
		      unsigned int i);

#endif /* _ONEPIPE_CORE_BARRIER_H */
