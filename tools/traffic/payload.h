/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test payload of op-traffic.  Every message starts with this header (host
 * byte order: all processes of a test run on one machine) followed by
 * filler bytes that are a pure function of (src_host, src_port, scat_id,
 * idx), so a receiver can tell a corrupted or misrouted message from a
 * good one without any shared state.
 *
 *  0 magic:32  4 src_host:32  8 src_port:16 pad:16  12 scat_id:64
 * 20 idx:32   24 len:32      28 send_time_ns:64    36 filler...
 */
#ifndef _OP_TRAFFIC_PAYLOAD_H
#define _OP_TRAFFIC_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#define OPT_MAGIC	0x31506970u	/* "piP1" in little endian */
#define OPT_HDR_LEN	36

struct opt_payload {
	uint32_t src_host;
	uint16_t src_port;
	uint64_t scat_id;
	uint32_t idx;
	uint32_t len;		/* whole message length, header included */
	uint64_t send_time_ns;	/* CLOCK_REALTIME just before sending */
};

enum opt_verify {
	OPT_OK,
	OPT_SHORT,	/* shorter than the header */
	OPT_MAGIC_BAD,
	OPT_LEN_BAD,	/* len field != received length */
	OPT_SRC_BAD,	/* src fields != the address it came from */
	OPT_FILL_BAD,	/* filler corrupted */
};

void opt_encode(void *buf, const struct opt_payload *p);
void opt_set_send_time(void *buf, uint64_t send_time_ns);
enum opt_verify opt_decode(const void *buf, size_t n, struct opt_payload *p);
const char *opt_verify_str(enum opt_verify v);

#endif /* _OP_TRAFFIC_PAYLOAD_H */
