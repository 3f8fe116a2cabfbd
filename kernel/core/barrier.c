// SPDX-License-Identifier: GPL-2.0
/*
 * Barrier registers and output groups; see barrier.h for the rules.
 */
#include "barrier.h"

/* States reported by op_agg_link_state(), as in the uapi header. */
#define OP_LS_NEW	0
#define OP_LS_LIVE	1
#define OP_LS_DEAD	2

/**
 * op_link_heard() - record a packet on an input link
 * @l: the link
 * @barrier: barrier carried by the packet
 * @now: local monotonic time in ns
 *
 * Registers never decrease: a packet overtaken on a non-FIFO path must not
 * pull the link's promise back.
 */
void op_link_heard(struct op_link *l, u64 barrier, u64 now)
{
	if (!l->heard || l->dead) {
		l->reg = barrier;
		l->heard = true;
		l->dead = false;
	} else {
		l->reg = op_ts_max(l->reg, barrier);
	}
	l->last_heard = now;
}

/**
 * op_links_expire() - mark links silent for more than @timeout as dead
 * @links: link array
 * @n: number of links
 * @now: local monotonic time in ns
 * @timeout: silence after which a link is removed, in ns
 *
 * Return: mask of links that died in this call.
 */
u64 op_links_expire(struct op_link *links, unsigned int n, u64 now,
		    u64 timeout)
{
	u64 died = 0;
	unsigned int i;

	for (i = 0; i < n && i < OP_MAX_LINKS; i++) {
		struct op_link *l = &links[i];

		/*
		 * Signed: a packet heard on another CPU after the caller
		 * read @now is not silence.
		 */
		if (l->heard && !l->dead &&
		    (s64)(now - l->last_heard) > (s64)timeout) {
			l->dead = true;
			died |= (u64)1 << i;
		}
	}
	return died;
}

/**
 * op_agg_update_slack() - recompute an output group's barrier
 * @a: the group
 * @links: link array the group's mask indexes
 * @n: number of links
 * @slack: how far (ns) below the output a link may be and still count
 *
 * Dead links leave the minimum; heard links join it once their register
 * is at or above the output barrier (the new-link rule).
 *
 * @slack relaxes that rule for links whose barrier is late by
 * construction: seen from a ToR, the spine's barrier is a minimum over
 * the ToR's own barriers of an interval or two ago, so it never reaches
 * the ToR's current output and would never be counted.  A link at most
 * @slack below the output is counted as if it sat exactly at the output:
 * the output holds still until the link really catches up, and still
 * never goes backwards.  0 is the strict rule.
 *
 * Return: true if the output barrier moved.
 */
bool op_agg_update_slack(struct op_agg *a, const struct op_link *links,
			 unsigned int n, u64 slack)
{
	u64 min = 0, old = a->out, reg;
	bool any = false;
	unsigned int i;

	for (i = 0; i < n && i < OP_MAX_LINKS; i++) {
		const struct op_link *l = &links[i];
		u64 bit = (u64)1 << i;

		if (!(a->members & bit))
			continue;
		if (!l->heard || l->dead) {
			a->counted &= ~bit;
			continue;
		}
		reg = l->reg;
		if (a->valid && op_ts_before(reg, a->out)) {
			/*
			 * Below the output: a new link, or a counted one that
			 * died and came back between two updates, or one
			 * admitted within @slack that has not caught up yet.
			 */
			if (op_ts_diff(a->out, reg) > (s64)slack) {
				a->counted &= ~bit;
				continue;
			}
			reg = a->out;
		}
		a->counted |= bit;
		min = any ? op_ts_min(min, reg) : reg;
		any = true;
	}
	if (!any)
		return false;
	if (!a->valid) {
		a->out = min;
		a->valid = true;
		return true;
	}
	a->out = op_ts_max(a->out, min);
	return a->out != old;
}

/**
 * op_agg_link_state() - how group @a sees link @i
 * @a: the group
 * @links: link array
 * @i: link index
 *
 * Return: 0 new (heard, not counted), 1 live (counted), 2 dead or never heard.
 */
int op_agg_link_state(const struct op_agg *a, const struct op_link *links,
		      unsigned int i)
{
	if (i >= OP_MAX_LINKS || !links[i].heard || links[i].dead)
		return OP_LS_DEAD;
	return (a->counted >> i) & 1 ? OP_LS_LIVE : OP_LS_NEW;
}
