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

		if (l->heard && !l->dead && now - l->last_heard > timeout) {
			l->dead = true;
			died |= (u64)1 << i;
		}
	}
	return died;
}

/**
 * op_agg_update() - recompute an output group's barrier
 * @a: the group
 * @links: link array the group's mask indexes
 * @n: number of links
 *
 * Dead links leave the minimum; heard links that are not counted join it
 * once their register is at or above the output barrier.
 *
 * Return: true if the output barrier moved.
 */
bool op_agg_update(struct op_agg *a, const struct op_link *links,
		   unsigned int n)
{
	u64 min = 0, old = a->out;
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
		if (a->valid && op_ts_before(l->reg, a->out)) {
			/*
			 * Not yet at the output (new-link rule).  A counted
			 * link can only be here if it died and came back
			 * between two updates: it is new again.
			 */
			a->counted &= ~bit;
			continue;
		}
		a->counted |= bit;
		min = any ? op_ts_min(min, l->reg) : l->reg;
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
