/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The summary figures op-traffic and tools/bench/op-cpg both report, the
 * same way so that op-bench compares like with like: latency percentiles
 * and message rates.
 */
#ifndef _OP_TRAFFIC_STATS_H
#define _OP_TRAFFIC_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Every latency of a run: percentiles need them all. */
struct lat_samples {
	int64_t *v;
	size_t n, cap;
};

void lat_add(struct lat_samples *l, int64_t lat);
void lat_sort(struct lat_samples *l);
int64_t lat_pct(const struct lat_samples *l, int p);
double msg_rate(uint64_t n, uint64_t from, uint64_t to);

#endif /* _OP_TRAFFIC_STATS_H */
