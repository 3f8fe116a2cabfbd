/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The best-effort window towards one destination host: how many messages
 * may be in flight there, sent and neither ACKed nor notified.
 *
 * Best effort retransmits nothing; what it must do is deliver within the
 * deadline (core/wire.h), and tell the truth about what it did not
 * (core/seqrec.h).  What it puts in flight beyond what the path carries
 * within the deadline only waits in queues and expires there, and a
 * queue longer than the deadline also delays the answers to the queries
 * about it: a static window that one fabric carries can collapse another
 * (in the test guest, 4 hosts broadcasting to each other: 128 per
 * destination delivered 5 %, 32 delivered everything).
 *
 * So the window follows the ACKs' delay, as delay-based congestion
 * control does (TCP Vegas, LEDBAT): from OP_BEWIN_START it doubles per
 * round trip while ACKs come back within a target (a quarter of the
 * deadline), then grows by one per window of such ACKs, shrinks by an
 * eighth per window of later ones, and halves when a message had to be
 * asked about (no ACK by its deadline).  It never goes below 1, and the
 * admission rule (admit.c) lets a scattering go when nothing is in
 * flight whatever the window says.  The ACKs' delay is also what the
 * queries wait for before asking again (op_bewin_query_gap_ns()).
 *
 * Pure: the caller keeps the state (tx_lock) and the clocks.
 */
#ifndef _ONEPIPE_CORE_BEWIN_H
#define _ONEPIPE_CORE_BEWIN_H

#include "op_compat.h"

#define OP_BEWIN_START	8

/**
 * struct op_bewin - best-effort window towards one destination
 * @cwnd: messages that may be in flight
 * @acked: ACKs counted towards the next step of @cwnd
 * @srtt_us: smoothed ACK delay (send to ACK), 0 until measured
 * @rttvar_us: its mean deviation
 * @min_us: the smallest ACK delay seen
 * @slow: still doubling (no late ACK yet)
 */
struct op_bewin {
	u32 cwnd;
	u32 acked;
	u32 srtt_us;
	u32 rttvar_us;
	u32 min_us;
	bool slow;
};

void op_bewin_init(struct op_bewin *w);
void op_bewin_acked(struct op_bewin *w, u32 delay_us, u32 target_us,
		    u32 max);
void op_bewin_late(struct op_bewin *w);
u32 op_bewin_cwnd(const struct op_bewin *w, u32 max);
u64 op_bewin_query_gap_ns(const struct op_bewin *w, u64 floor_ns);

#endif /* _ONEPIPE_CORE_BEWIN_H */
