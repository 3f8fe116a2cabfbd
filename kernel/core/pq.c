// SPDX-License-Identifier: GPL-2.0
/*
 * Pairing heap for the reorder queue; see pq.h.
 */
#include "pq.h"

/**
 * op_pq_cmp() - compare two messages in delivery order
 * @a: first message
 * @b: second message
 *
 * Return: <0 if @a is delivered before @b, >0 after, 0 for the same key.
 */
int op_pq_cmp(const struct op_pq_node *a, const struct op_pq_node *b)
{
	s64 d = op_ts_diff(a->ts, b->ts);

	if (d)
		return d < 0 ? -1 : 1;
	if (a->src_host != b->src_host)
		return a->src_host < b->src_host ? -1 : 1;
	if (a->src_port != b->src_port)
		return a->src_port < b->src_port ? -1 : 1;
	if (a->seq != b->seq)
		return (s32)(a->seq - b->seq) < 0 ? -1 : 1;
	return 0;
}

/* Link two heaps; the larger root becomes the first child of the smaller. */
static struct op_pq_node *meld(struct op_pq_node *a, struct op_pq_node *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (op_pq_cmp(b, a) < 0) {
		struct op_pq_node *t = a;

		a = b;
		b = t;
	}
	b->next = a->child;
	a->child = b;
	return a;
}

void op_pq_push(struct op_pq *q, struct op_pq_node *n)
{
	n->child = NULL;
	n->next = NULL;
	q->root = meld(q->root, n);
	q->count++;
}

/*
 * Standard two-pass merge of the root's children, done without recursion:
 * first pair siblings left to right, pushing each pair onto a reversed
 * list, then meld that list from right to left.
 */
static struct op_pq_node *merge_pairs(struct op_pq_node *first)
{
	struct op_pq_node *pairs = NULL, *res = NULL;

	while (first) {
		struct op_pq_node *a = first, *b = first->next, *m;

		first = b ? b->next : NULL;
		a->next = NULL;
		if (b)
			b->next = NULL;
		m = meld(a, b);
		m->next = pairs;
		pairs = m;
	}
	while (pairs) {
		struct op_pq_node *m = pairs;

		pairs = pairs->next;
		m->next = NULL;
		res = meld(res, m);
	}
	return res;
}

/**
 * op_pq_pop() - remove and return the first message in delivery order
 * @q: the queue
 *
 * Return: the node, or NULL when the queue is empty.
 */
struct op_pq_node *op_pq_pop(struct op_pq *q)
{
	struct op_pq_node *top = q->root;

	if (!top)
		return NULL;
	q->root = merge_pairs(top->child);
	top->child = NULL;
	q->count--;
	return top;
}
