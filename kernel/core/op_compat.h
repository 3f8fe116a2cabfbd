/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The protocol core (this folder) is plain C shared by onepipe.ko, the
 * software switch and the userspace unit tests.  This header gives it the
 * kernel's basic types in both worlds, and div_u64().
 */
#ifndef _ONEPIPE_CORE_COMPAT_H
#define _ONEPIPE_CORE_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/stddef.h>
#include <linux/math64.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;

/* The kernel's 64-by-32-bit division (linux/math64.h). */
static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}
#endif

#endif /* _ONEPIPE_CORE_COMPAT_H */
