/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The receiver's reorder queue: an intrusive pairing heap ordered by
 * (timestamp, sender host, sender port, sequence number), the total order
 * in which every receiver delivers.
 *
 * Intrusive so that inserting never allocates (it runs in softirq for
 * every message); a pairing heap because insertion is O(1) and messages
 * mostly arrive nearly in order, which keeps the root's child list short.
 * The caller serializes access.
 */
#ifndef _ONEPIPE_CORE_PQ_H
#define _ONEPIPE_CORE_PQ_H

#include "ts.h"

/**
 * struct op_pq_node - a queued message's place in the heap and its key
 * @child: first child
 * @next: next sibling
 * @ts: message timestamp
 * @src_host: sender host
 * @seq: sender's sequence number towards this host
 * @src_port: sender port
 */
struct op_pq_node {
	struct op_pq_node *child;
	struct op_pq_node *next;
	u64 ts;
	u32 src_host;
	u32 seq;
	u16 src_port;
};

struct op_pq {
	struct op_pq_node *root;
	unsigned int count;
};

static inline void op_pq_init(struct op_pq *q)
{
	q->root = NULL;
	q->count = 0;
}

static inline struct op_pq_node *op_pq_peek(const struct op_pq *q)
{
	return q->root;
}

int op_pq_cmp(const struct op_pq_node *a, const struct op_pq_node *b);
void op_pq_push(struct op_pq *q, struct op_pq_node *n);
struct op_pq_node *op_pq_pop(struct op_pq *q);

#endif /* _ONEPIPE_CORE_PQ_H */
