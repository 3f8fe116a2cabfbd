// SPDX-License-Identifier: GPL-2.0
/*
 * onepipe sock show: the AF_ONEPIPE sockets of this network namespace
 * (ONEPIPE_CMD_SOCK_GET dump).
 */
#include <stdio.h>
#include <sys/socket.h>

#include "parse.h"
#include "tool.h"

const struct op_attr_spec op_sock_attrs[ONEPIPE_S_MAX + 1] = {
	[ONEPIPE_S_PORT]	= { "ONEPIPE_S_PORT", 2 },
	[ONEPIPE_S_TYPE]	= { "ONEPIPE_S_TYPE", 4 },
	[ONEPIPE_S_RX_QUEUED]	= { "ONEPIPE_S_RX_QUEUED", 4 },
	[ONEPIPE_S_TX_QUEUED]	= { "ONEPIPE_S_TX_QUEUED", 4 },
	[ONEPIPE_S_ORDERED]	= { "ONEPIPE_S_ORDERED", 1 },
	[ONEPIPE_S_INODE]	= { "ONEPIPE_S_INODE", 8 },
};

static const char *sock_type_name(uint32_t t, char *buf, size_t len)
{
	switch (t) {
	case SOCK_DGRAM:
		return "dgram";
	case SOCK_RDM:
		return "rdm";
	}
	snprintf(buf, len, "unknown(%u)", t);
	return buf;
}

void op_sock_print(struct op_out *o, const struct nlattr **tb)
{
	char buf[32];

	if (tb[ONEPIPE_S_PORT])
		out_uint(o, "port", "sock",
			 mnl_attr_get_u16(tb[ONEPIPE_S_PORT]));
	if (tb[ONEPIPE_S_TYPE])
		out_str(o, "type", NULL,
			sock_type_name(mnl_attr_get_u32(tb[ONEPIPE_S_TYPE]),
				       buf, sizeof(buf)));
	if (tb[ONEPIPE_S_ORDERED])
		out_onoff(o, "ordered", NULL,
			  mnl_attr_get_u8(tb[ONEPIPE_S_ORDERED]));
	if (tb[ONEPIPE_S_RX_QUEUED])
		out_uint(o, "rx_queued", NULL,
			 mnl_attr_get_u32(tb[ONEPIPE_S_RX_QUEUED]));
	if (tb[ONEPIPE_S_TX_QUEUED])
		out_uint(o, "tx_queued", NULL,
			 mnl_attr_get_u32(tb[ONEPIPE_S_TX_QUEUED]));
	if (tb[ONEPIPE_S_INODE])
		out_uint(o, "inode", NULL,
			 mnl_attr_get_u64(tb[ONEPIPE_S_INODE]));
}

void sock_usage(FILE *f)
{
	fprintf(f,
		"Usage: onepipe sock show\n"
		"       onepipe sock help\n");
}

int do_sock(struct op_ctx *ctx, int argc, char **argv)
{
	const char *cmd = argc > 0 ? argv[0] : "show";

	if (op_matches(cmd, "show") || op_matches(cmd, "list")) {
		if (argc > 1)
			return op_unexpected_arg("sock", "show", argv[1]);
		return op_dump(ctx, ONEPIPE_CMD_SOCK_GET, ONEPIPE_A_SOCK,
			       op_sock_attrs, ONEPIPE_S_MAX, op_sock_print,
			       "sock show");
	}
	if (op_matches(cmd, "help")) {
		sock_usage(stdout);
		return 0;
	}
	return op_usage_error("sock", "command \"%s\" is unknown", cmd);
}
