// SPDX-License-Identifier: GPL-2.0
/*
 * Write a small seed corpus of valid packets (one per type and a few
 * DATA shapes) into the directory named by argv[1], so fuzz_wire starts
 * past the version/type checks instead of having to discover them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"
#include "ts.h"

static int write_seed(const char *dir, const char *name,
		      const struct op_hdr *h, size_t payload)
{
	size_t len = OP_HDR_LEN + payload;
	char path[4096];
	u8 *buf = calloc(1, len);
	FILE *f;
	int ret = 0;

	if (!buf)
		return -1;
	op_hdr_encode(h, buf);
	memset(buf + OP_HDR_LEN, 'x', payload);
	snprintf(path, sizeof(path), "%s/seed-%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len)
		ret = -1;
	if (f && fclose(f))
		ret = -1;
	free(buf);
	if (ret)
		perror(path);
	return ret;
}

int main(int argc, char **argv)
{
	struct op_hdr d = {
		.type = OP_PKT_DATA, .src_host = 1, .dst_host = 2,
		.src_port = 10, .dst_port = 20, .ts = 0x123456789abcULL,
		.barrier = 0x123456789000ULL, .seq = 1, .aux = 16,
		.frag_idx = 0, .frag_cnt = 1,
	};
	struct op_hdr f = d, b = { 0 }, a = { 0 }, n = { 0 };
	int err = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	f.aux = 3000;
	f.frag_idx = 1;
	f.frag_cnt = 3;
	f.flags = OP_F_UNORDERED;
	b.type = OP_PKT_BEACON;
	b.src_host = 1;
	b.barrier = OP_TS_MASK - 5;
	a.type = OP_PKT_ACK;
	a.src_host = 2;
	a.dst_host = 1;
	a.seq = 1;
	a.aux = 7;
	a.commit = 0x1000;
	n = a;
	n.type = OP_PKT_NAK;
	n.aux = 0;
	n.code = OP_NAK_NOPORT;
	n.flags = OP_F_NOBARRIER;

	err |= write_seed(argv[1], "data", &d, d.aux);
	err |= write_seed(argv[1], "frag", &f, 1000);
	err |= write_seed(argv[1], "beacon", &b, 0);
	err |= write_seed(argv[1], "ack", &a, 0);
	err |= write_seed(argv[1], "nak", &n, 0);
	return err ? 1 : 0;
}
