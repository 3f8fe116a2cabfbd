/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loss detection for the reliable service, the way modern TCP does it:
 * a retransmission timeout from the measured round trip and its variance
 * (RFC 6298), RACK's time-based detection with a reordering window and
 * the tail-loss probe (RFC 8985).  Pure arithmetic on microsecond clocks
 * that wrap at 2^32 (about 71 minutes; every interval compared here is
 * far shorter): the kernel keeps the state and the timers, the unit tests
 * drive the same code.  The round-trip estimate is three numbers that
 * the caller keeps: srtt (smoothed round trip, 0 until the first
 * sample), rttvar (its mean deviation) and the minimum.
 *
 * Why time and not sequence numbers: a message is lost when one sent
 * sufficiently later to the same receiver was ACKed, whatever the
 * sequence numbers say (a retransmission carries its old one).  "Later"
 * is by a reordering window, so that ACKs overtaking each other (two
 * CPUs sending them, a receiver merging ACKs into ranges) and a queue
 * that grows under load are not mistaken for loss.
 */
#ifndef _ONEPIPE_CORE_RACK_H
#define _ONEPIPE_CORE_RACK_H

#include "op_compat.h"

/**
 * struct op_rack - RACK state towards one receiver
 * @xmit_us: when the most recently sent of the messages known to be
 *	delivered was (last) sent
 * @seq: its sequence number, to order messages sent in the same microsecond
 * @rtt_us: its round trip
 * @valid: something was delivered since the state was reset
 * @reo_mult: the reordering window in quarters of the minimum round trip;
 *	grows when a resend turns out to have been needless
 * @reo_calm: loss detections left before @reo_mult decays back to 1
 */
struct op_rack {
	u32 xmit_us;
	u32 seq;
	u32 rtt_us;
	bool valid;
	u8 reo_mult;
	u8 reo_calm;
};

/* Retransmission timeout before the first round-trip sample. */
#define OP_RTO_INIT_NS		(200ULL * 1000 * 1000)
/* Longest retransmission timeout, backoff included. */
#define OP_RTO_MAX_NS		(2000ULL * 1000 * 1000)

/* op_rack_left_us(): RACK cannot tell, the message was not sent earlier. */
#define OP_RACK_UNKNOWN		0xffffffffU

/* Most quarters of the minimum round trip the reordering window grows to. */
#define OP_RACK_REO_MULT_MAX	16
/* Loss detections without a needless resend before the window shrinks. */
#define OP_RACK_REO_CALM	16

void op_rtt_sample(u32 *srtt_us, u32 *rttvar_us, u32 *min_us, u32 m_us);
u64 op_rtt_rto_ns(u32 srtt_us, u32 rttvar_us, u64 gran_ns, u64 floor_ns,
		  unsigned int backoff);
u32 op_tlp_pto_us(u32 srtt_us, u32 ack_delay_us, u32 floor_us);

void op_rack_reset(struct op_rack *k);
void op_rack_update(struct op_rack *k, u32 sent_us, u32 seq, u32 now_us);
u32 op_rack_reo_wnd_us(const struct op_rack *k, u32 min_rtt_us, u32 srtt_us,
		       u32 floor_us);
u32 op_rack_left_us(const struct op_rack *k, u32 reo_us, u32 sent_us,
		    u32 seq, u32 now_us);
void op_rack_spurious(struct op_rack *k);
void op_rack_detected(struct op_rack *k);

#endif /* _ONEPIPE_CORE_RACK_H */
