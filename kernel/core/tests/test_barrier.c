// SPDX-License-Identifier: GPL-2.0
/*
 * barrier.c: input link registers, timeout removal, and output groups
 * with the new-link rule.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "barrier.h"

/* Link states as reported by op_agg_link_state() (uapi values). */
enum { LS_NEW = 0, LS_LIVE = 1, LS_DEAD = 2 };

#define BIT(i)		((u64)1 << (i))
#define TIMEOUT		1000

static void test_link_register(void)
{
	struct op_link l;

	memset(&l, 0, sizeof(l));
	op_link_heard(&l, 100, 10);
	ok(l.heard && !l.dead && l.reg == 100 && l.last_heard == 10,
	   "first packet sets the register and marks the link heard");
	op_link_heard(&l, 90, 20);
	is_u64(l.reg, 100, "a lower barrier (overtaken packet) is ignored");
	is_u64(l.last_heard, 20, "but the packet still counts as heard");
	op_link_heard(&l, 150, 30);
	is_u64(l.reg, 150, "a higher barrier raises the register");
	op_link_heard(&l, 150, 40);
	is_u64(l.reg, 150, "an equal barrier keeps it");

	memset(&l, 0, sizeof(l));
	op_link_heard(&l, OP_TS_MASK - 5, 0);
	op_link_heard(&l, 3, 1);
	is_u64(l.reg, 3, "register advances across the 48-bit wrap");
	op_link_heard(&l, OP_TS_MASK - 10, 2);
	is_u64(l.reg, 3, "a barrier from before the wrap is ignored");
}

static void test_link_revival(void)
{
	struct op_link l;

	memset(&l, 0, sizeof(l));
	op_link_heard(&l, 500, 0);
	is_u64(op_links_expire(&l, 1, TIMEOUT + 1, TIMEOUT), 1,
	       "link silent past the timeout dies");
	ok(l.dead, "and is marked dead");
	op_link_heard(&l, 50, TIMEOUT + 2);
	ok(!l.dead && l.heard, "a packet revives a dead link");
	is_u64(l.reg, 50, "revival resets the register, even to a lower value");
	op_link_heard(&l, 40, TIMEOUT + 3);
	is_u64(l.reg, 50, "after revival the register is monotonic again");
	is_u64(op_links_expire(&l, 1, 2 * TIMEOUT + 3, TIMEOUT), 0,
	       "revived link is not expired before its own timeout");
	is_u64(op_links_expire(&l, 1, 2 * TIMEOUT + 4, TIMEOUT), 1,
	       "revived link can die again");
}

static void test_expire(void)
{
	struct op_link links[4];

	memset(links, 0, sizeof(links));
	op_link_heard(&links[0], 10, 0);
	op_link_heard(&links[1], 10, 100);
	op_link_heard(&links[2], 10, 200);
	/* links[3] never heard */
	is_u64(op_links_expire(links, 4, TIMEOUT, TIMEOUT), 0,
	       "silence of exactly the timeout is not death");
	is_u64(op_links_expire(links, 4, TIMEOUT + 1, TIMEOUT), BIT(0),
	       "link 0 dies one ns past the timeout");
	is_u64(op_links_expire(links, 4, TIMEOUT + 1, TIMEOUT), 0,
	       "a dead link is reported only once");
	is_u64(op_links_expire(links, 4, TIMEOUT + 250, TIMEOUT),
	       BIT(1) | BIT(2), "links 1 and 2 die together, link 0 not again");
	ok(!links[3].dead && !links[3].heard,
	   "a never-heard link is not reported or marked dead");
	op_link_heard(&links[1], 20, TIMEOUT + 300);
	is_u64(op_links_expire(links, 4, 3 * TIMEOUT, TIMEOUT), BIT(1),
	       "a revived link is reported again when it dies again");
	op_link_heard(&links[2], 20, 3 * TIMEOUT);
	is_u64(op_links_expire(links, 2, 10 * TIMEOUT, TIMEOUT), 0,
	       "links at index >= n are not looked at");
	ok(!links[2].dead, "and not marked");
}

static void test_bounds(void)
{
	/* exactly OP_MAX_LINKS on the heap: ASan catches any index >= 64 */
	struct op_link *links = calloc(OP_MAX_LINKS, sizeof(*links));
	struct op_agg a = { .members = ~(u64)0 };
	unsigned int i;

	if (!links)
		abort();
	for (i = 0; i < OP_MAX_LINKS; i++)
		op_link_heard(&links[i], 1000 + i, 0);
	ok(op_agg_update(&a, links, 100) && a.out == 1000 &&
	   a.counted == ~(u64)0, "n > OP_MAX_LINKS: all 64 links counted");
	is_u64(op_links_expire(links, 100, TIMEOUT + 1, TIMEOUT), ~(u64)0,
	       "n > OP_MAX_LINKS: all 64 links expire, none beyond");
	is_s64(op_agg_link_state(&a, links, OP_MAX_LINKS), LS_DEAD,
	       "link state of index 64 is dead, not out of bounds");
	free(links);
}

static void test_agg_basic(void)
{
	struct op_link links[8];
	struct op_agg a = { .members = BIT(0) | BIT(1) | BIT(2) };

	memset(links, 0, sizeof(links));
	ok(!op_agg_update(&a, links, 8) && !a.valid,
	   "no link heard: update reports nothing, group invalid");
	op_link_heard(&links[5], 10, 0);
	ok(!op_agg_update(&a, links, 8) && !a.valid && !a.counted,
	   "only a non-member heard: group still invalid");

	op_link_heard(&links[0], 300, 0);
	op_link_heard(&links[1], 100, 0);
	op_link_heard(&links[2], 200, 0);
	ok(op_agg_update(&a, links, 8) && a.valid,
	   "first update makes it valid");
	is_u64(a.out, 100, "output is the min of the members");
	is_u64(a.counted, BIT(0) | BIT(1) | BIT(2),
	       "first update counts every heard member");
	ok(op_agg_link_state(&a, links, 0) == LS_LIVE &&
	   op_agg_link_state(&a, links, 1) == LS_LIVE &&
	   op_agg_link_state(&a, links, 2) == LS_LIVE, "members are live");
	is_s64(op_agg_link_state(&a, links, 3), LS_DEAD,
	       "a never-heard link is reported dead");

	op_link_heard(&links[5], 5, 1);
	ok(!op_agg_update(&a, links, 8) && a.out == 100,
	   "a lower non-member is ignored");
	op_link_heard(&links[1], 250, 2);
	ok(op_agg_update(&a, links, 8) && a.out == 200,
	   "raising the min link moves the output to the next min");
	ok(!op_agg_update(&a, links, 8) && a.out == 200,
	   "update without news reports no move");
	op_link_heard(&links[2], 150, 3);
	ok(!op_agg_update(&a, links, 8) && a.out == 200,
	   "a lower barrier on a counted link does not pull the output back");
	op_link_heard(&links[0], 260, 4);
	op_link_heard(&links[2], 400, 4);
	ok(op_agg_update(&a, links, 8) && a.out == 250,
	   "output follows the min as all links advance");
}

static void test_new_link_rule(void)
{
	struct op_link links[4];
	struct op_agg a = { .members = BIT(0) | BIT(1) | BIT(2) };

	memset(links, 0, sizeof(links));
	op_link_heard(&links[0], 200, 0);
	op_link_heard(&links[1], 300, 0);
	op_agg_update(&a, links, 4);
	is_u64(a.out, 200, "two links: output 200");

	op_link_heard(&links[2], 150, 1);
	ok(!op_agg_update(&a, links, 4) && a.out == 200,
	   "a new link below the output does not pull it back");
	is_s64(op_agg_link_state(&a, links, 2), LS_NEW,
	       "and is reported new, not counted");
	ok(!(a.counted & BIT(2)), "its counted bit is clear");

	op_link_heard(&links[0], 400, 2);
	op_link_heard(&links[1], 400, 2);
	ok(op_agg_update(&a, links, 4) && a.out == 400,
	   "the output advances past a new link that is not counted");
	is_s64(op_agg_link_state(&a, links, 2), LS_NEW, "it stays new");

	op_link_heard(&links[2], 399, 3);
	ok(!op_agg_update(&a, links, 4) && !(a.counted & BIT(2)),
	   "one ns below the output is still not enough");
	op_link_heard(&links[2], 400, 4);
	ok(!op_agg_update(&a, links, 4) && (a.counted & BIT(2)),
	   "reaching the output exactly counts the link");
	is_s64(op_agg_link_state(&a, links, 2), LS_LIVE, "and it is live");

	op_link_heard(&links[0], 900, 5);
	op_link_heard(&links[1], 900, 5);
	ok(!op_agg_update(&a, links, 4) && a.out == 400,
	   "once counted, the slow link holds the output back");
	op_link_heard(&links[2], 700, 6);
	ok(op_agg_update(&a, links, 4) && a.out == 700,
	   "and releases it as it advances");
}

static void test_dead_removal(void)
{
	struct op_link links[3];
	struct op_agg a = { .members = BIT(0) | BIT(1) | BIT(2) };

	memset(links, 0, sizeof(links));
	op_link_heard(&links[0], 100, 0);
	op_link_heard(&links[1], 500, 0);
	op_link_heard(&links[2], 600, 0);
	op_agg_update(&a, links, 3);
	is_u64(a.out, 100, "slow link 0 holds the output at 100");

	/* links 1 and 2 keep talking, link 0 goes silent */
	op_link_heard(&links[1], 900, 800);
	op_link_heard(&links[2], 950, 800);
	ok(!op_agg_update(&a, links, 3) && a.out == 100,
	   "while it is within the timeout, it still holds the output");
	is_u64(op_links_expire(links, 3, TIMEOUT + 1, TIMEOUT), BIT(0),
	       "link 0 times out");
	ok(op_agg_update(&a, links, 3) && a.out == 900,
	   "removing the dead link lets the output advance");
	ok(!(a.counted & BIT(0)) &&
	   op_agg_link_state(&a, links, 0) == LS_DEAD,
	   "dead link is uncounted and reported dead");

	op_link_heard(&links[0], 120, TIMEOUT + 2);
	ok(!op_agg_update(&a, links, 3) && a.out == 900,
	   "revived link far behind does not pull the output back");
	is_s64(op_agg_link_state(&a, links, 0), LS_NEW,
	       "it comes back as a new link");
	op_link_heard(&links[0], 1000, TIMEOUT + 3);
	op_agg_update(&a, links, 3);
	is_s64(op_agg_link_state(&a, links, 0), LS_LIVE,
	       "and is counted once it catches up");

	is_u64(op_links_expire(links, 3, 10 * TIMEOUT, TIMEOUT),
	       BIT(0) | BIT(1) | BIT(2), "all links time out");
	ok(!op_agg_update(&a, links, 3) && a.valid && a.out == 900 &&
	   !a.counted, "a group that lost every link keeps its output");
	op_link_heard(&links[1], 800, 10 * TIMEOUT + 1);
	ok(!op_agg_update(&a, links, 3) && a.out == 900 && !a.counted,
	   "a link coming back below it is not counted");
	op_link_heard(&links[1], 950, 10 * TIMEOUT + 2);
	ok(op_agg_update(&a, links, 3) && a.out == 950 &&
	   a.counted == BIT(1), "and drives the output once it passes it");
}

/*
 * Up-down routing: an upward output aggregates only the downward-facing
 * inputs, a downward output aggregates all of them.  Same links, two
 * groups, two different answers.
 */
static void test_up_down(void)
{
	struct op_link links[4];
	struct op_agg up = { .members = BIT(0) | BIT(1) };
	struct op_agg down = { .members = BIT(0) | BIT(1) | BIT(2) | BIT(3) };

	memset(links, 0, sizeof(links));
	op_link_heard(&links[0], 100, 0);	/* from host 1 */
	op_link_heard(&links[1], 200, 0);	/* from host 2 */
	op_link_heard(&links[2], 50, 0);	/* from spine 1 */
	op_link_heard(&links[3], 300, 0);	/* from spine 2 */
	op_agg_update(&up, links, 4);
	op_agg_update(&down, links, 4);
	is_u64(up.out, 100, "upward group: min over host links");
	is_u64(down.out, 50, "downward group: min over all links");
	is_s64(op_agg_link_state(&down, links, 2), LS_LIVE,
	       "spine link is live in the downward group");
	ok(!(up.counted & BIT(2)), "and not counted in the upward group");

	op_link_heard(&links[0], 1000, 800);
	op_link_heard(&links[1], 1000, 800);
	op_link_heard(&links[3], 1000, 800);
	op_links_expire(links, 4, TIMEOUT + 1, TIMEOUT);
	ok(op_agg_update(&up, links, 4) && up.out == 1000,
	   "upward group advances with its own links");
	ok(op_agg_update(&down, links, 4) && down.out == 1000,
	   "downward group advances once the silent spine link is removed");

	op_link_heard(&links[2], 600, TIMEOUT + 2);
	op_agg_update(&up, links, 4);
	op_agg_update(&down, links, 4);
	is_s64(op_agg_link_state(&down, links, 2), LS_NEW,
	       "revived spine link is new in the downward group");
	ok(up.out == 1000 && down.out == 1000, "neither group moved back");
}

static void test_wrap(void)
{
	struct op_link links[3];
	struct op_agg a = { .members = BIT(0) | BIT(1) | BIT(2) };

	memset(links, 0, sizeof(links));
	op_link_heard(&links[0], OP_TS_MASK - 10, 0);
	op_link_heard(&links[1], 5, 0);
	op_agg_update(&a, links, 3);
	is_u64(a.out, OP_TS_MASK - 10, "min across the wrap is the earlier ts");
	op_link_heard(&links[0], 20, 1);
	ok(op_agg_update(&a, links, 3) && a.out == 5,
	   "output advances across the wrap");
	op_link_heard(&links[2], OP_TS_MASK - 1, 2);
	ok(!op_agg_update(&a, links, 3) && !(a.counted & BIT(2)),
	   "new link from before the wrap is below the output, not counted");
	op_link_heard(&links[2], 6, 3);
	ok(!op_agg_update(&a, links, 3) && (a.counted & BIT(2)) && a.out == 5,
	   "counted once past the output after the wrap");
}

/*
 * Random traffic on 10 links feeding 4 groups, with links that go silent
 * and come back below the output.  After every event every group is
 * updated, and the whole state is checked against the rules:
 *  - the output never goes backwards, and update() says when it moved;
 *  - counted == live members whose register is at or above the output;
 *  - the output equals the min over the counted registers;
 *  - op_agg_link_state() agrees.
 */
#define RL	10
#define RG	4

struct rstate {
	struct op_link links[RL];
	struct op_agg groups[RG];
	u64 val[RL];		/* each link's own barrier */
	bool silent[RL];
	unsigned int bad_mono, bad_ret, bad_counted, bad_min, bad_state;
	unsigned int moves, news, deaths;
};

static void check_group(struct rstate *s, unsigned int g, u64 old,
			bool was_valid, bool moved)
{
	struct op_agg *a = &s->groups[g];
	u64 want = 0, min = 0;
	bool any = false;
	unsigned int i;

	s->bad_ret += moved != (a->valid && (!was_valid || a->out != old));
	s->bad_mono += was_valid && (!a->valid || op_ts_before(a->out, old));
	s->moves += moved;
	for (i = 0; i < RL; i++) {
		const struct op_link *l = &s->links[i];
		bool member = a->members & BIT(i);
		bool live = l->heard && !l->dead;
		int st = op_agg_link_state(a, s->links, i);

		if (member && live && a->valid && !op_ts_before(l->reg, a->out))
			want |= BIT(i);
		if (!member)
			continue;
		s->bad_state += !live ? st != LS_DEAD :
			((a->counted & BIT(i)) ? st != LS_LIVE : st != LS_NEW);
		s->news += live && st == LS_NEW;
		if (a->counted & BIT(i)) {
			min = any ? op_ts_min(min, l->reg) : l->reg;
			any = true;
		}
	}
	s->bad_counted += a->counted != want;
	s->bad_min += any && min != a->out;
}

static void update_all(struct rstate *s)
{
	unsigned int g;

	for (g = 0; g < RG; g++) {
		struct op_agg *a = &s->groups[g];
		u64 old = a->out;
		bool was_valid = a->valid;
		bool moved = op_agg_update(a, s->links, RL);

		check_group(s, g, old, was_valid, moved);
	}
}

static void test_random(unsigned int seed)
{
	struct tap_rng r = { seed };
	struct rstate *s = calloc(1, sizeof(*s));
	u64 now = 0;
	unsigned int i, step;

	if (!s)
		abort();
	for (i = 0; i < RL; i++)
		s->val[i] = OP_TS_MASK - 100000 + tap_below(&r, 1000);
	s->groups[0].members = (BIT(RL) - 1);
	for (i = 1; i < RG; i++)
		s->groups[i].members = (tap_rand(&r) & (BIT(RL) - 1)) | BIT(i);

	for (step = 0; step < 200000; step++) {
		unsigned int l = tap_below(&r, RL);

		now += tap_below(&r, 60);
		if (!tap_below(&r, 2000)) {
			/* go silent, or come back below where we were */
			s->silent[l] = !s->silent[l];
			if (!s->silent[l])
				s->val[l] = op_ts_add(s->val[l],
						      -(s64)tap_below(&r, 3000));
		}
		s->val[l] = op_ts_add(s->val[l], tap_range(&r, -20, 100));
		if (!s->silent[l]) {
			/* occasionally an overtaken, older barrier */
			u64 b = tap_below(&r, 8) ? s->val[l] :
				op_ts_add(s->val[l], -(s64)tap_below(&r, 500));

			op_link_heard(&s->links[l], b, now);
			update_all(s);
		}
		if (!(step % 16)) {
			u64 died = op_links_expire(s->links, RL, now, TIMEOUT);

			s->deaths += __builtin_popcountll(died);
			update_all(s);
		}
	}
	ok(!s->bad_mono && !s->bad_ret,
	   "random %u: output never goes back, update reports moves (%u moves)",
	   seed, s->moves);
	ok(!s->bad_counted,
	   "random %u: counted == live members at/above the output (%u bad)",
	   seed, s->bad_counted);
	ok(!s->bad_min, "random %u: output == min of counted registers (%u bad)",
	   seed, s->bad_min);
	ok(!s->bad_state,
	   "random %u: link states agree (%u deaths, %u checks of a new link)",
	   seed, s->deaths, s->news);
	ok(s->deaths > 10 && s->news > 10,
	   "random %u: the run exercised deaths and new links", seed);
	free(s);
}

/*
 * Admission slack: a link that lags by construction (the spine seen from
 * a ToR) is counted at once if within the slack, holds the output still
 * until it catches up, and never pulls it back.
 */
static void test_slack(void)
{
	struct op_link links[2];
	struct op_agg a;

	memset(links, 0, sizeof(links));
	memset(&a, 0, sizeof(a));
	a.members = BIT(0) | BIT(1);
	op_link_heard(&links[0], 1000, 0);
	op_agg_update_slack(&a, links, 2, 50);
	is_u64(a.out, 1000, "slack: output from the first link");

	op_link_heard(&links[1], 960, 0);
	op_link_heard(&links[0], 1100, 1);
	op_agg_update_slack(&a, links, 2, 50);
	ok(a.counted == (BIT(0) | BIT(1)) && a.out == 1000,
	   "slack: a link 40 below the output is counted and holds it still");
	op_agg_update(&a, links, 2);
	ok(a.counted == BIT(0) && a.out == 1100,
	   "slack 0 is the strict rule: the lagging link is not counted");

	memset(&a, 0, sizeof(a));
	a.members = BIT(0) | BIT(1);
	op_agg_update_slack(&a, links, 2, 0);
	op_link_heard(&links[1], 1040, 2);
	op_agg_update_slack(&a, links, 2, 100);
	ok(a.counted == (BIT(0) | BIT(1)) && a.out == 1040,
	   "slack: output follows the lagging link once it is counted");
	op_link_heard(&links[1], 1500, 3);
	op_agg_update_slack(&a, links, 2, 100);
	is_u64(a.out, 1100, "slack: min over both once the lagging link passes");

	memset(&a, 0, sizeof(a));
	a.members = BIT(0) | BIT(1);
	links[1].heard = false;
	op_agg_update_slack(&a, links, 2, 0);
	op_link_heard(&links[1], 900, 4);
	op_agg_update_slack(&a, links, 2, 100);
	ok(a.counted == BIT(0) && a.out == 1100,
	   "slack: a link further behind than the slack still waits");
}

int main(void)
{
	test_link_register();
	test_link_revival();
	test_expire();
	test_bounds();
	test_agg_basic();
	test_new_link_rule();
	test_dead_removal();
	test_up_down();
	test_wrap();
	test_slack();
	test_random(1);
	test_random(777);
	return tap_done();
}
