// SPDX-License-Identifier: GPL-2.0
/*
 * onepipe peer show: the reliable service's state towards and from each
 * peer host (ONEPIPE_CMD_PEER_GET dump): windows, congestion control,
 * round-trip estimate, whether its packets also go through the controller,
 * and the receiving side's progress; and the best-effort delay measured
 * towards it with the deadline it gives a message now.
 */
#include <stdbool.h>
#include <stdio.h>

#include "parse.h"
#include "tool.h"

/* Spec entry of ONEPIPE_P_<x>: every peer attribute is a u32. */
#define PEER(x)	[ONEPIPE_P_##x] = { "ONEPIPE_P_" #x, 4 }

const struct op_attr_spec op_peer_attrs[ONEPIPE_P_MAX + 1] = {
	PEER(HOST),
	PEER(TX_NEXT),
	PEER(TX_EDGE),
	PEER(TX_INFLIGHT),
	PEER(TX_RESERVED),
	PEER(TX_QUEUED),
	PEER(CWND),
	PEER(ALPHA),
	PEER(SRTT_US),
	PEER(RTTVAR_US),
	PEER(BACKOFF),
	PEER(RX_NXT),
	PEER(RX_HELD),
	PEER(RX_ADV),
	PEER(RELAY),
	PEER(BE_DELAY_US),
	PEER(BE_DELAYVAR_US),
	PEER(BE_DEADLINE_US),
};

/* ONEPIPE_P_ALPHA is DCTCP's marked fraction in units of 1/1024. */
#define OP_ALPHA_ONE	1024

/*
 * Text labels of a peer's sending and receiving halves: "tx" and "rx"
 * lead the first item shown of their half, in the same item so that a
 * wrapped line never leaves them alone at its end.
 */
struct peer_half {
	const char *name;	/* "tx" until its first item is out */
	char label[32];
};

static const char *half_label(struct peer_half *h, const char *label)
{
	if (!h->name)
		return label;
	snprintf(h->label, sizeof(h->label), "%s %s", h->name, label);
	h->name = NULL;
	return h->label;
}

static uint32_t get(const struct nlattr **tb, unsigned int type)
{
	return mnl_attr_get_u32(tb[type]);
}

/* A plain u32 item of @half, if the kernel sent it. */
static void print_u32(struct op_out *o, const struct nlattr **tb,
		      unsigned int type, const char *key, const char *label,
		      struct peer_half *half)
{
	if (tb[type])
		out_uint(o, key, half_label(half, label), get(tb, type));
}

/* The round-trip estimate; both are left out until the first sample. */
static void print_rtt(struct op_out *o, const struct nlattr **tb,
		      struct peer_half *tx)
{
	if (!tb[ONEPIPE_P_SRTT_US] || !get(tb, ONEPIPE_P_SRTT_US))
		return;
	out_uint_unit(o, "srtt_us", half_label(tx, "srtt"),
		      get(tb, ONEPIPE_P_SRTT_US), "us");
	if (tb[ONEPIPE_P_RTTVAR_US])
		out_uint_unit(o, "rttvar_us", "rttvar",
			      get(tb, ONEPIPE_P_RTTVAR_US), "us");
}

static void print_tx(struct op_out *o, const struct nlattr **tb)
{
	struct peer_half tx = { .name = "tx" };

	print_u32(o, tb, ONEPIPE_P_TX_NEXT, "tx_next", "next", &tx);
	print_u32(o, tb, ONEPIPE_P_TX_EDGE, "tx_edge", "edge", &tx);
	/*
	 * Messages the receiver's window still allows (reserved credits
	 * included); sequence numbers wrap, so the difference is signed.
	 */
	if (tb[ONEPIPE_P_TX_NEXT] && tb[ONEPIPE_P_TX_EDGE])
		out_int(o, "window", NULL,
			(int32_t)(get(tb, ONEPIPE_P_TX_EDGE) -
				  get(tb, ONEPIPE_P_TX_NEXT)));
	print_u32(o, tb, ONEPIPE_P_TX_INFLIGHT, "tx_inflight", "inflight",
		  &tx);
	print_u32(o, tb, ONEPIPE_P_TX_RESERVED, "tx_reserved", "reserved",
		  &tx);
	print_u32(o, tb, ONEPIPE_P_TX_QUEUED, "tx_queued", "queued", &tx);
	print_u32(o, tb, ONEPIPE_P_CWND, "cwnd", "cwnd", &tx);
	if (tb[ONEPIPE_P_ALPHA])
		out_frac(o, "alpha", half_label(&tx, "alpha"),
			 get(tb, ONEPIPE_P_ALPHA), OP_ALPHA_ONE, 3);
	print_rtt(o, tb, &tx);
	print_u32(o, tb, ONEPIPE_P_BACKOFF, "backoff", "backoff", &tx);
	/*
	 * Its packets go through the controller too (controller
	 * forwarding).  JSON always says, as the u32 it is like every
	 * peer attribute; text only while it does: the exception worth a
	 * glance, not a "relay no" on every peer.
	 */
	if (tb[ONEPIPE_P_RELAY] && out_json(o))
		out_uint(o, "relay", NULL, get(tb, ONEPIPE_P_RELAY));
	else if (tb[ONEPIPE_P_RELAY] && get(tb, ONEPIPE_P_RELAY))
		out_yesno(o, "relay", half_label(&tx, "relay"), true);
}

/*
 * Best effort: the delay from stamp to ACK (left out until measured) and
 * the deadline a message stamped now gets.
 */
static void print_be(struct op_out *o, const struct nlattr **tb)
{
	bool measured = tb[ONEPIPE_P_BE_DELAY_US] &&
			get(tb, ONEPIPE_P_BE_DELAY_US);

	if (measured) {
		out_uint_unit(o, "be_delay_us", "be delay",
			      get(tb, ONEPIPE_P_BE_DELAY_US), "us");
		if (tb[ONEPIPE_P_BE_DELAYVAR_US])
			out_uint_unit(o, "be_delayvar_us", "var",
				      get(tb, ONEPIPE_P_BE_DELAYVAR_US), "us");
	}
	if (tb[ONEPIPE_P_BE_DEADLINE_US])
		out_uint_unit(o, "be_deadline_us",
			      measured ? "deadline" : "be deadline",
			      get(tb, ONEPIPE_P_BE_DEADLINE_US), "us");
}

static void print_rx(struct op_out *o, const struct nlattr **tb)
{
	struct peer_half rx = { .name = "rx" };

	print_u32(o, tb, ONEPIPE_P_RX_NXT, "rx_nxt", "nxt", &rx);
	print_u32(o, tb, ONEPIPE_P_RX_HELD, "rx_held", "held", &rx);
	print_u32(o, tb, ONEPIPE_P_RX_ADV, "rx_adv", "adv", &rx);
}

void op_peer_print(struct op_out *o, const struct nlattr **tb)
{
	/* Up to two lines per peer: the items wrap at 80 columns. */
	out_wrap(o, 4);
	if (tb[ONEPIPE_P_HOST])
		out_uint(o, "host", "peer", get(tb, ONEPIPE_P_HOST));
	print_tx(o, tb);
	print_rx(o, tb);
	print_be(o, tb);
}

void peer_usage(FILE *f)
{
	fprintf(f,
		"Usage: onepipe peer show\n"
		"       onepipe peer help\n");
}

int do_peer(struct op_ctx *ctx, int argc, char **argv)
{
	const char *cmd = argc > 0 ? argv[0] : "show";

	if (op_matches(cmd, "show") || op_matches(cmd, "list")) {
		if (argc > 1)
			return op_unexpected_arg("peer", "show", argv[1]);
		return op_dump(ctx, ONEPIPE_CMD_PEER_GET, ONEPIPE_A_PEER,
			       op_peer_attrs, ONEPIPE_P_MAX, op_peer_print,
			       "peer show");
	}
	if (op_matches(cmd, "help")) {
		peer_usage(stdout);
		return 0;
	}
	return op_usage_error("peer", "command \"%s\" is unknown", cmd);
}
