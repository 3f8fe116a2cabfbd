// SPDX-License-Identifier: GPL-2.0
/* Summary figures shared by op-traffic and tools/bench/op-cpg (stats.h). */
#include <stdlib.h>

#include "stats.h"
#include "tool.h"

void lat_add(struct lat_samples *l, int64_t lat)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4096;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			die("out of memory");
	}
	l->v[l->n++] = lat;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Once, after the run: lat_pct() needs the samples sorted. */
void lat_sort(struct lat_samples *l)
{
	qsort(l->v, l->n, sizeof(*l->v), cmp_i64);
}

/* The @p-th percentile (nearest rank below), 0 without samples. */
int64_t lat_pct(const struct lat_samples *l, int p)
{
	if (!l->n)
		return 0;
	return l->v[(l->n - 1) * p / 100];
}

/* Messages per second between the first and the last of @n, 0 if unknown. */
double msg_rate(uint64_t n, uint64_t from, uint64_t to)
{
	if (n < 2 || to <= from)
		return 0;
	return (double)(n - 1) * NSEC / (double)(to - from);
}
