// SPDX-License-Identifier: GPL-2.0
/*
 * rack.c: RTT estimate, retransmission timeout, tail-loss probe timeout
 * and RACK's time-based loss detection.
 */
#include "tap.h"
#include "rack.h"

#define MS	1000000ULL	/* ns */

/* What the kernel keeps per receiver for the round-trip estimate. */
struct rtt {
	u32 srtt_us;
	u32 rttvar_us;
	u32 min_us;
};

static void sample(struct rtt *r, u32 m_us)
{
	op_rtt_sample(&r->srtt_us, &r->rttvar_us, &r->min_us, m_us);
}

static u64 rto(const struct rtt *r, u64 gran_ns, u64 floor_ns,
	       unsigned int backoff)
{
	return op_rtt_rto_ns(r->srtt_us, r->rttvar_us, gran_ns, floor_ns,
			     backoff);
}

static u32 reo(const struct op_rack *k, const struct rtt *r, u32 floor_us)
{
	return op_rack_reo_wnd_us(k, r->min_us, r->srtt_us, floor_us);
}

static void test_rtt_first_sample(void)
{
	struct rtt r = { 0 };

	sample(&r, 800);
	is_u64(r.srtt_us, 800, "first sample sets srtt");
	is_u64(r.rttvar_us, 400, "first sample sets rttvar to half of it");
	is_u64(r.min_us, 800, "first sample sets the minimum");
	sample(&r, 0);
	is_u64(r.min_us, 1, "a zero sample counts as 1 us");
}

static void test_rtt_converges(void)
{
	struct rtt r = { 0 };
	int i;

	sample(&r, 1000);
	for (i = 0; i < 200; i++)
		sample(&r, 5000);
	ok(r.srtt_us >= 4950 && r.srtt_us <= 5000,
	   "srtt converges to a steady round trip (%u)", r.srtt_us);
	ok(r.rttvar_us < 50, "rttvar decays when the round trip holds (%u)",
	   r.rttvar_us);
	is_u64(r.min_us, 1000, "the minimum remembers the smallest sample");
}

static void test_rto(void)
{
	struct rtt r = { 0 };
	u64 t;

	is_u64(rto(&r, 0, 20 * MS, 0),
	       200 * MS, "no sample: the initial timeout");
	sample(&r, 1000);	/* srtt 1 ms, rttvar 0.5 ms */
	is_u64(rto(&r, 0, 0, 0), 3 * MS,
	       "srtt + 4 rttvar");
	is_u64(rto(&r, 0, 20 * MS, 0),
	       20 * MS, "the floor holds");
	is_u64(rto(&r, 0, 20 * MS, 2),
	       80 * MS, "each backoff doubles it");
	is_u64(rto(&r, 0, 20 * MS, 10),
	       2000 * MS, "the cap holds after backoff");
	is_u64(rto(&r, 0, 20 * MS, 63),
	       2000 * MS, "a huge backoff is the cap, not an overflow");
	r.rttvar_us = 0;
	is_u64(rto(&r, 2 * MS, 0, 0), 3 * MS,
	       "the deviation term is at least the timer granularity");

	/* A round trip that grows under load drags the timeout along. */
	r = (struct rtt){ 0 };
	sample(&r, 1000);
	sample(&r, 10000);
	sample(&r, 20000);
	sample(&r, 30000);
	t = rto(&r, 0, 20 * MS, 0);
	ok(t > 40 * MS, "a growing round trip raises the timeout (%llu us)",
	   (unsigned long long)t / 1000);
}

static void test_pto(void)
{
	struct rtt r = { 0 };

	is_u64(op_tlp_pto_us(r.srtt_us, 2000, 0), 0, "no probe before a sample");
	sample(&r, 1500);
	is_u64(op_tlp_pto_us(r.srtt_us, 2000, 0), 5000,
	       "2 srtt + the ACK delay");
	is_u64(op_tlp_pto_us(r.srtt_us, 2000, 10000), 10000, "at least the floor");
	r.srtt_us = 0xf0000000U;
	is_u64(op_tlp_pto_us(r.srtt_us, 0, 0), 0x7fffffffU,
	       "clamped, not wrapped");
}

static void test_rack_basic(void)
{
	struct rtt r = { 0 };
	struct op_rack k;

	op_rack_reset(&k);
	sample(&r, 1000);
	is_u64(op_rack_left_us(&k, 250, 100, 1, 5000), OP_RACK_UNKNOWN,
	       "nothing delivered: RACK cannot tell");
	/* Message 2, sent at 200, ACKed at 1200. */
	op_rack_update(&k, 200, 2, 1200);
	ok(k.valid, "the first ACK makes RACK valid");
	is_u64(k.rtt_us, 1000, "its round trip");
	is_u64(op_rack_left_us(&k, 250, 300, 3, 1200), OP_RACK_UNKNOWN,
	       "a message sent after the delivered one is not judged");
	is_u64(op_rack_left_us(&k, 250, 200, 2, 1200), OP_RACK_UNKNOWN,
	       "nor the delivered one itself");
	is_u64(op_rack_left_us(&k, 250, 190, 1, 1200), 240,
	       "sent 10 us earlier: lost in rtt + reo - its age");
	is_u64(op_rack_left_us(&k, 250, 190, 1, 1440), 0,
	       "and lost once that passed");
	is_u64(op_rack_left_us(&k, 250, 200, 1, 1200), 250,
	       "same microsecond, lower seq: sent earlier");
	/* An older ACK does not move RACK back. */
	op_rack_update(&k, 150, 0, 1300);
	ok(k.xmit_us == 200 && k.seq == 2 && k.rtt_us == 1000,
	   "an ACK of an older send does not move RACK back");
}

static void test_reo_wnd(void)
{
	struct rtt r = { 0 };
	struct op_rack k;
	int i;

	op_rack_reset(&k);
	sample(&r, 800);
	is_u64(reo(&k, &r, 0), 200, "a quarter of min RTT");
	is_u64(reo(&k, &r, 500), 500, "at least the floor");
	op_rack_spurious(&k);
	op_rack_spurious(&k);
	is_u64(reo(&k, &r, 0), 600,
	       "each needless resend widens it by a quarter");
	for (i = 0; i < 40; i++)
		op_rack_spurious(&k);
	is_u64(reo(&k, &r, 0), 800, "at most srtt");
	for (i = 0; i < OP_RACK_REO_CALM - 1; i++)
		op_rack_detected(&k);
	ok(k.reo_mult > 1, "still wide before enough calm detections");
	op_rack_detected(&k);
	is_u64(k.reo_mult, 1, "back to a quarter after them");
}

static void test_wrap(void)
{
	struct rtt r = { 0 };
	struct op_rack k;
	u32 t0 = 0xffffff00U;

	op_rack_reset(&k);
	sample(&r, 1000);
	op_rack_update(&k, t0 + 0x200, 9, t0 + 0x200 + 1000);
	is_u64(k.rtt_us, 1000, "round trip across the wrap");
	is_u64(op_rack_left_us(&k, 0, t0, 8, t0 + 0x200 + 1000), 0,
	       "a message sent before the wrap is judged lost after it");
}

/*
 * A burst of @n messages drains through a FIFO queue at one per @svc_us
 * and the receiver ACKs them in ranges of @batch: with nothing lost, the
 * ACKs arrive in send order and RACK must take nothing for lost, however
 * long the queue makes the round trip; with message @lost dropped, RACK
 * must find it (and only it) once the next range is ACKed.
 */
static unsigned int sim_detect(const struct op_rack *k,
			       const struct rtt *r, const u32 *sent,
			       bool *acked, unsigned int n, u32 now,
			       u32 *found_at)
{
	u32 w = reo(k, r, 0);
	unsigned int j, flagged = 0;

	for (j = 0; j < n; j++) {
		if (acked[j] || op_rack_left_us(k, w, sent[j], j, now))
			continue;
		if (!*found_at)
			*found_at = now;
		acked[j] = true;	/* resent: counted once */
		flagged++;
	}
	return flagged;
}

static unsigned int sim_burst(unsigned int n, unsigned int svc_us,
			      unsigned int batch, int lost, u32 *found_at)
{
	u32 sent[512], now = 1000;
	bool acked[512] = { 0 };
	struct rtt r = { 0 };
	unsigned int i, j, flagged = 0;
	struct op_rack k;

	op_rack_reset(&k);
	sample(&r, 300);		/* the idle round trip */
	for (i = 0; i < n; i++)
		sent[i] = 1000 + i / 8;	/* 8 per microsecond */
	*found_at = 0;
	for (i = 0; i < n; i += batch) {
		unsigned int end = i + batch < n ? i + batch : n;

		now = 1000 + 300 + end * svc_us;
		for (j = i; j < end; j++) {
			if ((int)j == lost)
				continue;
			acked[j] = true;
			sample(&r, now - sent[j]);
			op_rack_update(&k, sent[j], j, now);
		}
		/* At the ACK, then when the reordering timer would fire. */
		flagged += sim_detect(&k, &r, sent, acked, n, now, found_at);
		now += reo(&k, &r, 0);
		flagged += sim_detect(&k, &r, sent, acked, n, now, found_at);
	}
	return flagged;
}

static void test_sim(void)
{
	u32 at;

	is_u64(sim_burst(256, 100, 64, -1, &at), 0,
	       "no loss, queue of 256 x 100 us, ACK ranges of 64: nothing lost");
	is_u64(sim_burst(256, 100, 1, -1, &at), 0,
	       "no loss, one ACK per message: nothing lost");
	is_u64(sim_burst(256, 100, 64, 10, &at), 1,
	       "message 10 dropped: exactly one found lost");
	ok(at && at <= 1000 + 300 + 64 * 100 + 300,
	   "found a reordering window after the next range's ACK (at %u)",
	   at);
}

int main(void)
{
	test_rtt_first_sample();
	test_rtt_converges();
	test_rto();
	test_pto();
	test_rack_basic();
	test_reo_wnd();
	test_wrap();
	test_sim();
	return tap_done();
}
