// SPDX-License-Identifier: GPL-2.0
/*
 * The best-effort window (bewin.h): delay-based growth and shrinking,
 * and the wait between queries.
 */
#include "bewin.h"
#include "rack.h"

/** op_bewin_init() - a destination not heard from yet */
void op_bewin_init(struct op_bewin *w)
{
	w->cwnd = OP_BEWIN_START;
	w->acked = 0;
	w->srtt_us = 0;
	w->rttvar_us = 0;
	w->min_us = 0;
	w->slow = true;
}

/**
 * op_bewin_acked() - a message was ACKed @delay_us after it was sent
 * @w: its destination's window
 * @delay_us: send to ACK; only for messages not asked about (the answer
 *	to a query says nothing of the path's delay)
 * @target_us: the delay the window aims to stay within
 * @max: the ceiling (net.onepipe.be_window)
 */
void op_bewin_acked(struct op_bewin *w, u32 delay_us, u32 target_us,
		    u32 max)
{
	op_rtt_sample(&w->srtt_us, &w->rttvar_us, &w->min_us, delay_us);
	if (delay_us <= target_us) {
		if (w->slow) {
			if (w->cwnd < max)
				w->cwnd++;
			return;
		}
		if (++w->acked >= w->cwnd) {
			w->acked = 0;
			if (w->cwnd < max)
				w->cwnd++;
		}
		return;
	}
	w->slow = false;
	if (++w->acked >= w->cwnd) {
		w->acked = 0;
		w->cwnd -= w->cwnd > 8 ? w->cwnd / 8 : (w->cwnd > 1);
	}
}

/**
 * op_bewin_late() - a message's deadline passed without its ACK
 * @w: its destination's window
 *
 * Called once per look at the destination's messages that finds some,
 * not per message: one queue that overflowed halves the window once.
 */
void op_bewin_late(struct op_bewin *w)
{
	w->slow = false;
	w->acked = 0;
	w->cwnd = w->cwnd > 1 ? w->cwnd / 2 : 1;
}

/** op_bewin_cwnd() - the window as admission uses it: 1 .. @max */
u32 op_bewin_cwnd(const struct op_bewin *w, u32 max)
{
	u32 c = w->cwnd < max ? w->cwnd : max;

	return c ? c : 1;
}

/**
 * op_bewin_query_gap_ns() - how long to wait for a query's answer
 * @w: the destination's window, whose ACK delays are the estimate
 * @floor_ns: the least wait (a quarter of the ACK timeout)
 *
 * Return: a retransmission timeout over the measured ACK delay (RFC 6298,
 * core/rack.c), at least @floor_ns: an answer crosses the same queues.
 */
u64 op_bewin_query_gap_ns(const struct op_bewin *w, u64 floor_ns)
{
	u64 rto = w->srtt_us ? op_rtt_rto_ns(w->srtt_us, w->rttvar_us, 0,
					     floor_ns, 0) : 0;

	return rto > floor_ns ? rto : floor_ns;
}
