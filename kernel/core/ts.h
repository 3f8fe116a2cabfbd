/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 1Pipe timestamps: 48-bit nanoseconds that wrap every ~78 hours.  Two
 * timestamps are compared by the sign of their 48-bit difference, as PAWS
 * does for TCP timestamps, so the order is right as long as the two are
 * less than 2^47 ns (~39 hours) apart.
 */
#ifndef _ONEPIPE_CORE_TS_H
#define _ONEPIPE_CORE_TS_H

#include "op_compat.h"

#define OP_TS_BITS	48
#define OP_TS_MASK	((((u64)1) << OP_TS_BITS) - 1)

static inline u64 op_ts(u64 ns)
{
	return ns & OP_TS_MASK;
}

/* Signed distance a - b, sign-extended from 48 bits. */
static inline s64 op_ts_diff(u64 a, u64 b)
{
	return (s64)((a - b) << (64 - OP_TS_BITS)) >> (64 - OP_TS_BITS);
}

static inline bool op_ts_before(u64 a, u64 b)
{
	return op_ts_diff(a, b) < 0;
}

static inline bool op_ts_after(u64 a, u64 b)
{
	return op_ts_diff(a, b) > 0;
}

static inline u64 op_ts_max(u64 a, u64 b)
{
	return op_ts_before(a, b) ? b : a;
}

static inline u64 op_ts_min(u64 a, u64 b)
{
	return op_ts_before(a, b) ? a : b;
}

static inline u64 op_ts_add(u64 a, s64 d)
{
	return (a + (u64)d) & OP_TS_MASK;
}

#endif /* _ONEPIPE_CORE_TS_H */
