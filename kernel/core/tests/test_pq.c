// SPDX-License-Identifier: GPL-2.0
/*
 * pq.c: the reorder queue pops in (ts, host, port, seq) order.
 *
 * Keys are generated as offsets from a base just below the 48-bit ts wrap
 * and the 32-bit seq wrap, so the expected order is computable with plain
 * integer comparisons on the offsets (struct item's lin_* fields),
 * independently of op_pq_cmp().
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "pq.h"

/* ts offsets 0..1999 and seq offsets 0..511 both cross their wrap */
#define TS_BASE		(OP_TS_MASK - 999)
#define SEQ_BASE	0xffffff00u

struct item {
	struct op_pq_node node;
	u64 lin_ts;
	u32 lin_seq;
	bool queued;
};

static const u32 hosts[] = { 1, 2, 0x7fffffff, 0x80000000, 0xffffffff };
static const u16 ports[] = { 1, 2, 0x7fff, 0x8000, 0xffff };

#define ITEM(n)	\
	((struct item *)((char *)(n) - offsetof(struct item, node)))

static void set_key(struct item *it, u64 lin_ts, u32 host, u16 port,
		    u32 lin_seq)
{
	memset(it, 0, sizeof(*it));
	it->lin_ts = lin_ts;
	it->lin_seq = lin_seq;
	it->node.ts = op_ts_add(TS_BASE, (s64)lin_ts);
	it->node.src_host = host;
	it->node.src_port = port;
	it->node.seq = SEQ_BASE + lin_seq;
	/* junk in the links: push must not trust them */
	it->node.child = (struct op_pq_node *)it;
	it->node.next = (struct op_pq_node *)it;
}

enum keygen { KEYS_RANDOM, KEYS_ASCENDING, KEYS_DESCENDING, KEYS_SAME_TS };

static void random_key(struct tap_rng *r, struct item *it, enum keygen g,
		       unsigned int i, unsigned int n)
{
	u64 ts;

	switch (g) {
	case KEYS_ASCENDING:	/* the common case: nearly in order */
		ts = (u64)i * 2000 / n + tap_below(r, 3);
		break;
	case KEYS_DESCENDING:
		ts = (u64)(n - 1 - i) * 2000 / n;
		break;
	case KEYS_SAME_TS:
		ts = 1000;
		break;
	default:
		ts = tap_below(r, 2000);
		break;
	}
	set_key(it, ts, hosts[tap_below(r, 5)], ports[tap_below(r, 5)],
		(u32)tap_below(r, 512));
}

static int ref_cmp(const struct item *a, const struct item *b)
{
	if (a->lin_ts != b->lin_ts)
		return a->lin_ts < b->lin_ts ? -1 : 1;
	if (a->node.src_host != b->node.src_host)
		return a->node.src_host < b->node.src_host ? -1 : 1;
	if (a->node.src_port != b->node.src_port)
		return a->node.src_port < b->node.src_port ? -1 : 1;
	if (a->lin_seq != b->lin_seq)
		return a->lin_seq < b->lin_seq ? -1 : 1;
	return 0;
}

static int ref_qsort_cmp(const void *a, const void *b)
{
	return ref_cmp(a, b);
}

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

static void test_empty(void)
{
	struct op_pq q;
	struct item a;

	op_pq_init(&q);
	ok(op_pq_pop(&q) == NULL, "pop of an empty queue is NULL");
	ok(op_pq_peek(&q) == NULL && q.count == 0,
	   "empty queue: peek NULL, count 0");
	set_key(&a, 5, 1, 1, 0);
	op_pq_push(&q, &a.node);
	ok(op_pq_peek(&q) == &a.node && q.count == 1, "one node: peek it");
	ok(op_pq_pop(&q) == &a.node && q.count == 0, "one node: pop it");
	ok(op_pq_pop(&q) == NULL && q.count == 0,
	   "pop after draining is NULL and count stays 0");
	op_pq_push(&q, &a.node);
	ok(op_pq_pop(&q) == &a.node && !op_pq_pop(&q),
	   "a popped node can be pushed again");
}

static void test_cmp(void)
{
	struct item a, b;
	struct tap_rng r = { 99 };
	unsigned int i, bad = 0;

	set_key(&a, 998, 0xffffffff, 0xffff, 511);	/* ts 2^48-2 */
	set_key(&b, 1001, 1, 1, 0);			/* ts 1 */
	ok(op_pq_cmp(&a.node, &b.node) < 0 && op_pq_cmp(&b.node, &a.node) > 0,
	   "cmp: ts decides first, wrap-aware (2^48-2 before 1)");
	set_key(&a, 7, 1, 0xffff, 511);
	set_key(&b, 7, 0x80000000, 1, 0);
	ok(op_pq_cmp(&a.node, &b.node) < 0 && op_pq_cmp(&b.node, &a.node) > 0,
	   "cmp: then src_host, unsigned (1 before 2^31)");
	set_key(&a, 7, 2, 1, 511);
	set_key(&b, 7, 2, 0x8000, 0);
	ok(op_pq_cmp(&a.node, &b.node) < 0 && op_pq_cmp(&b.node, &a.node) > 0,
	   "cmp: then src_port, unsigned (1 before 0x8000)");
	set_key(&a, 7, 2, 3, 200);	/* seq 0xffffffc8 */
	set_key(&b, 7, 2, 3, 300);	/* seq 0x2c */
	ok(op_pq_cmp(&a.node, &b.node) < 0 && op_pq_cmp(&b.node, &a.node) > 0,
	   "cmp: then seq, wrap-aware (0xffffffc8 before 0x2c)");
	set_key(&b, 7, 2, 3, 200);
	ok(op_pq_cmp(&a.node, &b.node) == 0, "cmp: equal keys compare 0");

	for (i = 0; i < 200000; i++) {
		random_key(&r, &a, KEYS_RANDOM, 0, 1);
		random_key(&r, &b, KEYS_RANDOM, 0, 1);
		/* often share the ts, to reach the later fields */
		if (i & 1)
			set_key(&b, a.lin_ts, b.node.src_host,
				b.node.src_port, b.lin_seq);
		bad += sign(op_pq_cmp(&a.node, &b.node)) != ref_cmp(&a, &b);
	}
	ok(!bad, "cmp agrees with the reference order on random keys (%u bad)",
	   bad);
}

/* Push @n keys from @g, pop them all, compare with qsort. */
static void test_sorted(unsigned int seed, enum keygen g, unsigned int n,
			const char *what)
{
	struct tap_rng r = { seed };
	struct item *items = calloc(n, sizeof(*items));
	struct item *sorted = calloc(n, sizeof(*sorted));
	struct op_pq q;
	struct op_pq_node *nd;
	unsigned int i, bad_order = 0, bad_count = 0, popped = 0;

	if (!items || !sorted)
		abort();
	op_pq_init(&q);
	for (i = 0; i < n; i++) {
		random_key(&r, &items[i], g, i, n);
		op_pq_push(&q, &items[i].node);
		bad_count += q.count != i + 1;
	}
	memcpy(sorted, items, n * sizeof(*items));
	qsort(sorted, n, sizeof(*sorted), ref_qsort_cmp);

	while ((nd = op_pq_pop(&q))) {
		struct item *it = ITEM(nd);

		if (popped < n && ref_cmp(it, &sorted[popped]))
			bad_order++;
		if (it->queued)	/* popped twice */
			bad_order++;
		it->queued = true;
		popped++;
		bad_count += q.count != n - popped;
		if (popped > n)
			break;
	}
	ok(popped == n && !bad_count && q.count == 0,
	   "%s, seed %u: %u pushed, %u popped, count tracked (%u bad)",
	   what, seed, n, popped, bad_count);
	ok(!bad_order, "%s, seed %u: pops match qsort order (%u bad)",
	   what, seed, bad_order);
	free(items);
	free(sorted);
}

/*
 * Random interleaving of pushes and pops; every pop must be the minimum
 * of what is queued at that moment (checked by a linear scan).
 */
static void test_interleaved(unsigned int seed, unsigned int pool,
			     unsigned int ops)
{
	struct tap_rng r = { seed };
	struct item *items = calloc(pool, sizeof(*items));
	struct item **present = calloc(pool, sizeof(*present));
	struct item **spare = calloc(pool, sizeof(*spare));
	unsigned int npresent = 0, nspare = pool, i, j;
	unsigned int bad_min = 0, bad_count = 0, bad_peek = 0, pops = 0;
	unsigned int max_present = 0;
	struct op_pq q;

	if (!items || !present || !spare)
		abort();
	for (i = 0; i < pool; i++)
		spare[i] = &items[i];
	op_pq_init(&q);

	for (i = 0; i < ops; i++) {
		/* phases of net growth and net shrinking */
		unsigned int push_pct = (i / 2000) & 1 ? 35 : 65;

		if (nspare && tap_below(&r, 100) < push_pct) {
			struct item *it = spare[--nspare];

			random_key(&r, it, KEYS_RANDOM, 0, 1);
			it->queued = true;
			present[npresent++] = it;
			op_pq_push(&q, &it->node);
		} else {
			struct op_pq_node *peek = op_pq_peek(&q);
			struct op_pq_node *nd = op_pq_pop(&q);
			struct item *it;
			unsigned int at = npresent;

			pops++;
			bad_peek += peek != nd;
			if (!nd) {
				bad_min += npresent != 0;
				continue;
			}
			it = ITEM(nd);
			for (j = 0; j < npresent; j++) {
				if (present[j] == it)
					at = j;
				else if (ref_cmp(present[j], it) < 0)
					bad_min++;
			}
			if (at == npresent || !it->queued) {
				bad_min++;	/* not a queued node */
				continue;
			}
			it->queued = false;
			present[at] = present[--npresent];
			spare[nspare++] = it;
		}
		bad_count += q.count != npresent;
		if (npresent > max_present)
			max_present = npresent;
	}
	ok(!bad_min,
	   "interleaved, seed %u: %u ops, %u pops, each pop is the minimum (%u bad)",
	   seed, ops, pops, bad_min);
	ok(!bad_count && !bad_peek,
	   "interleaved, seed %u: count and peek right (peak %u queued)",
	   seed, max_present);
	free(items);
	free(present);
	free(spare);
}

static void test_identical_keys(void)
{
	struct item items[100];
	struct op_pq q;
	struct op_pq_node *nd;
	unsigned int i, popped = 0, dup = 0;

	op_pq_init(&q);
	for (i = 0; i < 100; i++) {
		set_key(&items[i], 5, 3, 3, 3);
		op_pq_push(&q, &items[i].node);
	}
	while ((nd = op_pq_pop(&q)) && popped <= 100) {
		dup += ITEM(nd)->queued;
		ITEM(nd)->queued = true;
		popped++;
	}
	ok(popped == 100 && !dup && q.count == 0,
	   "100 identical keys: each node popped exactly once");
}

/* Many children under one root: the iterative merge must cope. */
static void test_deep(void)
{
	unsigned int n = 300000;

	test_sorted(5, KEYS_ASCENDING, n, "300k nearly in order");
	test_sorted(6, KEYS_DESCENDING, n, "300k in reverse order");
}

int main(void)
{
	test_empty();
	test_cmp();
	test_sorted(1, KEYS_RANDOM, 5000, "random keys");
	test_sorted(42, KEYS_RANDOM, 5000, "random keys");
	test_sorted(0xdeadbeef, KEYS_RANDOM, 20000, "random keys");
	test_sorted(3, KEYS_ASCENDING, 5000, "nearly in order");
	test_sorted(4, KEYS_DESCENDING, 5000, "reverse order");
	test_sorted(8, KEYS_SAME_TS, 5000, "one ts, host/port/seq decide");
	test_interleaved(11, 4000, 40000);
	test_interleaved(12345, 1000, 40000);
	test_identical_keys();
	test_deep();
	return tap_done();
}
