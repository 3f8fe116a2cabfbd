// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection into the module's own allocations, on kernels built
 * with CONFIG_FAULT_INJECTION (../shared/debug-kernel; Debian's has none,
 * and there this file is not built).
 *
 * One fault attribute, /sys/kernel/debug/fail_onepipe/ (probability,
 * interval, times, task-filter, verbose...: the kernel's
 * Documentation/fault-injection/fault-injection.rst), fails the
 * allocations of the data path: every packet op_pkt_alloc() builds
 * (data, beacons, ACKs, NAKs, recalls, probes) or op_msg_packets()
 * clones (best-effort data), peers, reassembly buffers and recall
 * records, in whatever context they run: process, softirq, timers.
 * Not covered: relay copies, error-queue notifications, the verbs
 * transport's receive buffers and what configuration allocates.  Like
 * any fault point it also counts down a task's fail-nth.  The kernel's
 * other tools miss those paths: failslab's task filter never matches in
 * softirq (and without it every allocation of the kernel fails), and
 * fail_function draws its random number in a kprobe's int3 handler,
 * which lockdep on 6.1 reports as an NMI taking the entropy batch's
 * lock.  selftests/fault_inject.sh drives it.
 */
#include <linux/dcache.h>
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fault-inject.h>

#include "onepipe.h"

static DECLARE_FAULT_ATTR(op_fail_alloc);
static struct dentry *op_fault_dir;

/**
 * op_fault_alloc() - should the allocation about to be made fail?
 *
 * Called right before the data path's allocations; a true answer is
 * handled as that allocation returning NULL.
 *
 * Return: true to fail it.
 */
bool op_fault_alloc(void)
{
	return should_fail(&op_fail_alloc, 1);
}

/* Without debugfs the attribute stays at probability 0: nothing fails. */
void op_fault_init(void)
{
	struct dentry *d;

	d = fault_create_debugfs_attr("fail_onepipe", NULL, &op_fail_alloc);
	op_fault_dir = IS_ERR(d) ? NULL : d;
}

void op_fault_exit(void)
{
	debugfs_remove_recursive(op_fault_dir);
	/* fault_create_debugfs_attr() kept a reference for its messages. */
	dput(op_fail_alloc.dname);
}
