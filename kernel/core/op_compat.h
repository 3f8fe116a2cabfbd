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
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
typedef int32_t s32;
#endif

#endif /* _ONEPIPE_CORE_COMPAT_H */
