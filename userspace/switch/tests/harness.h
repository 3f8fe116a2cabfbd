/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the switch's integration tests (loopback, roce_peer) share: TAP
 * output, milliseconds, and reading the stats file of the switch they run.
 */
#ifndef ONEPIPE_SWITCH_TEST_HARNESS_H
#define ONEPIPE_SWITCH_TEST_HARNESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "wire.h"

void ok(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tap_end(void);

u64 now_ms(void);
void sleep_ms(unsigned int ms);

char *stats_read(const char *path);
char *stats_fresh(const char *path, pid_t pid);

#endif
