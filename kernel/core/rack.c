// SPDX-License-Identifier: GPL-2.0
/*
 * Loss detection arithmetic for the reliable service; see rack.h.
 */
#include "rack.h"

/* Did (@t1, @s1) go out after (@t2, @s2)?  The sequence breaks ties. */
static bool op_rack_sent_after(u32 t1, u32 s1, u32 t2, u32 s2)
{
	return (s32)(t1 - t2) > 0 || (t1 == t2 && (s32)(s1 - s2) > 0);
}

/**
 * op_rtt_sample() - take one round-trip measurement
 * @srtt_us: the smoothed round trip, 0 before the first sample
 * @rttvar_us: its mean deviation
 * @min_us: the smallest sample, 0 before the first
 * @m_us: the measurement; it must come from an ACK that can only be of
 *	the transmission it is timed from (Karn's rule)
 *
 * RFC 6298's gains: the mean moves 1/8 of the way, the deviation 1/4.
 */
void op_rtt_sample(u32 *srtt_us, u32 *rttvar_us, u32 *min_us, u32 m_us)
{
	u32 err;

	if (!m_us)
		m_us = 1;
	if (!*min_us || m_us < *min_us)
		*min_us = m_us;
	if (!*srtt_us) {
		*srtt_us = m_us;
		*rttvar_us = m_us / 2;
		return;
	}
	err = m_us > *srtt_us ? m_us - *srtt_us : *srtt_us - m_us;
	*rttvar_us = *rttvar_us - *rttvar_us / 4 + err / 4;
	*srtt_us = *srtt_us - *srtt_us / 8 + m_us / 8;
}

/**
 * op_rtt_rto_ns() - the retransmission timeout
 * @srtt_us: the smoothed round trip, 0 before the first sample
 * @rttvar_us: its mean deviation
 * @gran_ns: how coarse the timer is: the deviation term is at least this
 * @floor_ns: the timeout is at least this
 * @backoff: doublings, one per timeout not answered since
 *
 * Return: srtt + max(granularity, 4 rttvar) (OP_RTO_INIT_NS before the
 * first sample), at least @floor_ns, doubled @backoff times, at most
 * OP_RTO_MAX_NS.
 */
u64 op_rtt_rto_ns(u32 srtt_us, u32 rttvar_us, u64 gran_ns, u64 floor_ns,
		  unsigned int backoff)
{
	u64 var = 4ULL * rttvar_us * 1000, rto;

	if (srtt_us)
		rto = (u64)srtt_us * 1000 + (var > gran_ns ? var : gran_ns);
	else
		rto = OP_RTO_INIT_NS;
	if (rto < floor_ns)
		rto = floor_ns;
	if (backoff > 16 || rto > (OP_RTO_MAX_NS >> backoff))
		return OP_RTO_MAX_NS;
	return rto << backoff;
}

/**
 * op_tlp_pto_us() - how long after the last transmission or ACK the tail
 *	of what is in flight is probed
 * @srtt_us: the smoothed round trip, 0 before the first sample
 * @ack_delay_us: the longest the receiver may hold an ACK back
 * @floor_us: the probe timeout is at least this
 *
 * Two round trips and the receiver's ACK delay: an ACK that does not
 * come by then is probably not coming.  The floor keeps a scheduling
 * hiccup on a short path from costing a probe, as Linux's 10 ms does.
 *
 * Return: the probe timeout, 0 (no probe) before the first sample.
 */
u32 op_tlp_pto_us(u32 srtt_us, u32 ack_delay_us, u32 floor_us)
{
	u64 pto = 2ULL * srtt_us + ack_delay_us;

	if (!srtt_us)
		return 0;
	if (pto < floor_us)
		pto = floor_us;
	return pto > 0x7fffffffU ? 0x7fffffffU : (u32)pto;
}

/**
 * op_rack_reset() - forget what was delivered (the receiver restarted)
 * @k: the state
 */
void op_rack_reset(struct op_rack *k)
{
	k->valid = false;
	k->reo_mult = 1;
	k->reo_calm = 0;
}

/**
 * op_rack_update() - a message was newly ACKed
 * @k: the state
 * @sent_us: when the ACKed copy of the message was sent
 * @seq: its sequence number
 * @now_us: now
 *
 * The caller knows which copy was ACKed (Karn's problem): an ACK that
 * may be an earlier copy's tells nothing of when the ACKed copy left and
 * must not come here.
 */
void op_rack_update(struct op_rack *k, u32 sent_us, u32 seq, u32 now_us)
{
	if (k->valid && !op_rack_sent_after(sent_us, seq, k->xmit_us, k->seq))
		return;
	k->xmit_us = sent_us;
	k->seq = seq;
	k->rtt_us = (s32)(now_us - sent_us) > 0 ? now_us - sent_us : 0;
	k->valid = true;
}

/**
 * op_rack_reo_wnd_us() - the reordering window
 * @k: the state
 * @min_rtt_us: the smallest round trip measured
 * @srtt_us: the smoothed round trip, 0 before the first sample
 * @floor_us: the window is at least this
 *
 * A quarter of the minimum round trip per step of @k->reo_mult, at most
 * the smoothed round trip, at least @floor_us: ACKs that overtake one
 * another by less are not taken for loss.
 *
 * Return: the window in microseconds.
 */
u32 op_rack_reo_wnd_us(const struct op_rack *k, u32 min_rtt_us, u32 srtt_us,
		       u32 floor_us)
{
	u64 w = (u64)(k->reo_mult ? k->reo_mult : 1) * (min_rtt_us / 4);

	if (srtt_us && w > srtt_us)
		w = srtt_us;
	return w > floor_us ? (u32)w : floor_us;
}

/**
 * op_rack_left_us() - how long until RACK takes a message for lost
 * @k: the state
 * @reo_us: the reordering window
 * @sent_us: when the message was last sent
 * @seq: its sequence number
 * @now_us: now
 *
 * A message sent before the most recently sent delivered one is lost
 * once it has been out for that one's round trip plus the reordering
 * window: on a FIFO path its ACK would have come first.
 *
 * Return: 0 if it is lost now, OP_RACK_UNKNOWN if it was not sent before
 * the most recently sent delivered message (RACK cannot tell yet), else
 * the microseconds left.
 */
u32 op_rack_left_us(const struct op_rack *k, u32 reo_us, u32 sent_us,
		    u32 seq, u32 now_us)
{
	s32 left;

	if (!k->valid ||
	    !op_rack_sent_after(k->xmit_us, k->seq, sent_us, seq))
		return OP_RACK_UNKNOWN;
	left = (s32)(sent_us + k->rtt_us + reo_us - now_us);
	return left > 0 ? (u32)left : 0;
}

/**
 * op_rack_spurious() - a resend turned out needless: widen the window
 * @k: the state
 */
void op_rack_spurious(struct op_rack *k)
{
	if (k->reo_mult < OP_RACK_REO_MULT_MAX)
		k->reo_mult++;
	k->reo_calm = OP_RACK_REO_CALM;
}

/**
 * op_rack_detected() - RACK took messages for lost: after enough such
 *	detections without a needless resend, the window shrinks back
 * @k: the state
 */
void op_rack_detected(struct op_rack *k)
{
	if (k->reo_calm && !--k->reo_calm)
		k->reo_mult = 1;
}
