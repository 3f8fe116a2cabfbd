// SPDX-License-Identifier: GPL-2.0
/*
 * onepipe link show: the host's input links and their barrier registers
 * (ONEPIPE_CMD_LINK_GET dump).
 */
#include <stdio.h>

#include "parse.h"
#include "tool.h"

const struct op_attr_spec op_link_attrs[ONEPIPE_L_MAX + 1] = {
	[ONEPIPE_L_INDEX]	= { "ONEPIPE_L_INDEX", 4 },
	[ONEPIPE_L_STATE]	= { "ONEPIPE_L_STATE", 4 },
	[ONEPIPE_L_BARRIER]	= { "ONEPIPE_L_BARRIER", 8 },
	[ONEPIPE_L_IDLE_NS]	= { "ONEPIPE_L_IDLE_NS", 8 },
};

static const char *link_state_name(uint32_t s, char *buf, size_t len)
{
	switch (s) {
	case ONEPIPE_LINK_NEW:
		return "new";
	case ONEPIPE_LINK_LIVE:
		return "live";
	case ONEPIPE_LINK_DEAD:
		return "dead";
	}
	snprintf(buf, len, "unknown(%u)", s);
	return buf;
}

void op_link_print(struct op_out *o, const struct nlattr **tb)
{
	char buf[32];

	if (tb[ONEPIPE_L_INDEX])
		out_uint(o, "index", "link",
			 mnl_attr_get_u32(tb[ONEPIPE_L_INDEX]));
	if (tb[ONEPIPE_L_STATE])
		out_str(o, "state", NULL,
			link_state_name(mnl_attr_get_u32(tb[ONEPIPE_L_STATE]),
					buf, sizeof(buf)));
	if (tb[ONEPIPE_L_BARRIER])
		out_uint(o, "barrier", NULL,
			 mnl_attr_get_u64(tb[ONEPIPE_L_BARRIER]));
	if (tb[ONEPIPE_L_IDLE_NS])
		out_uint(o, "idle_ns", NULL,
			 mnl_attr_get_u64(tb[ONEPIPE_L_IDLE_NS]));
}

void link_usage(FILE *f)
{
	fprintf(f,
		"Usage: onepipe link show\n"
		"       onepipe link help\n");
}

int do_link(struct op_ctx *ctx, int argc, char **argv)
{
	const char *cmd = argc > 0 ? argv[0] : "show";

	if (op_matches(cmd, "show") || op_matches(cmd, "list")) {
		if (argc > 1)
			return op_unexpected_arg("link", "show", argv[1]);
		return op_dump(ctx, ONEPIPE_CMD_LINK_GET, ONEPIPE_A_LINK,
			       op_link_attrs, ONEPIPE_L_MAX, op_link_print,
			       "link show");
	}
	if (op_matches(cmd, "help")) {
		link_usage(stdout);
		return 0;
	}
	return op_usage_error("link", "command \"%s\" is unknown", cmd);
}
