/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The protocol core (this folder) is plain C shared by onepipe.ko, the
 * software switch and the userspace unit tests.  This header gives it the
 * kernel's basic types in both worlds, and nothing else.
 */
#ifndef _ONEPIPE_CORE_COMPAT_H
#define _ONEPIPE_CORE_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/stddef.h>
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
#endif

#endif /* _ONEPIPE_CORE_COMPAT_H */
