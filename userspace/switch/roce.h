/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RoCEv2 framing for the switch's --roce mode: parse and build Ethernet /
 * IPv4 / UDP (port 4791) / BTH / DETH frames of the one kind 1Pipe uses,
 * a UD SEND Only, and compute the invariant CRC the way Linux's Soft-RoCE
 * (drivers/infiniband/sw/rxe) computes and checks it.  Plain C, no I/O.
 *
 *  Ethernet 14 | IPv4 20 (no options) | UDP 8 | BTH 12 | DETH 8 |
 *  payload | pad 0-3 (BTH pad count) | ICRC 4
 *
 * The ICRC is a CRC-32 (the Ethernet polynomial, reflected, as
 * crc32_le()) that covers everything from the IPv4 header to the pad,
 * with the fields routers may change masked to all ones: IPv4 TOS, TTL
 * and header checksum, the UDP checksum and the BTH reserved byte after
 * the flags.  It is seeded as if an all-ones 8-byte InfiniBand LRH had
 * been hashed first, and its complement goes on the wire least
 * significant byte first.  Since ECN lives in the masked TOS, a hop may
 * mark CE without breaking the ICRC; it may change nothing else.
 */
#ifndef ONEPIPE_SWITCH_ROCE_H
#define ONEPIPE_SWITCH_ROCE_H

#include "op_compat.h"

#define ROCE_ETH_LEN		14
#define ROCE_IP_LEN		20
#define ROCE_UDP_LEN		8
#define ROCE_BTH_LEN		12
#define ROCE_DETH_LEN		8
#define ROCE_ICRC_LEN		4
/* Ethernet to DETH: what comes before the payload */
#define ROCE_HDRS_LEN		(ROCE_ETH_LEN + ROCE_IP_LEN + ROCE_UDP_LEN + \
				 ROCE_BTH_LEN + ROCE_DETH_LEN)
/* Largest frame around a payload of @n bytes (pad included). */
#define ROCE_FRAME_LEN(n)	(ROCE_HDRS_LEN + (n) + 3 + ROCE_ICRC_LEN)

#define ROCE_ETHERTYPE_IPV4	0x0800
#define ROCE_UDP_DPORT		4791
#define ROCE_OP_UD_SEND_ONLY	0x64
#define ROCE_DEFAULT_PKEY	0xffff
#define ROCE_QPN_MASK		0x00ffffff
#define ROCE_PSN_MASK		0x00ffffff
/* rxe's source ports are 0xc000 + a hash of the QPN; any port will do. */
#define ROCE_SPORT_BASE		0xc000

/**
 * struct roce_ud - the fields of a UD SEND Only frame
 * @dmac: destination MAC
 * @smac: source MAC
 * @saddr: IPv4 source, network byte order
 * @daddr: IPv4 destination, network byte order
 * @id: IPv4 identification (rxe numbers its packets; 0 is fine with DF)
 * @tos: IPv4 TOS byte (DSCP and ECN)
 * @ttl: IPv4 TTL
 * @sport: UDP source port
 * @pkey: BTH partition key
 * @dqpn: BTH destination QP number (24 bits)
 * @psn: BTH packet sequence number (24 bits)
 * @qkey: DETH queue key
 * @sqpn: DETH source QP number (24 bits)
 * @payload: the payload (parse: points into the frame)
 * @len: its length, without the pad
 * @ip: parse only: the IPv4 header in the frame
 * @ip_len: parse only: IPv4 total length, ICRC included
 */
struct roce_ud {
	u8 dmac[6];
	u8 smac[6];
	u32 saddr;
	u32 daddr;
	u16 id;
	u8 tos;
	u8 ttl;
	u16 sport;
	u16 pkey;
	u32 dqpn;
	u32 psn;
	u32 qkey;
	u32 sqpn;
	const u8 *payload;
	size_t len;
	const u8 *ip;
	size_t ip_len;
};

enum roce_err {
	ROCE_OK = 0,
	ROCE_E_NOT_IPV4,	/* not an IPv4 frame (ARP, IPv6, VLAN...) */
	ROCE_E_BAD_IPV4,	/* options, a fragment, lengths that disagree */
	ROCE_E_NOT_ROCE,	/* not UDP to port 4791 */
	ROCE_E_BAD_ROCE,	/* too short for its headers, or BTH version */
	ROCE_E_NOT_UD_SEND,	/* another opcode */
};

u32 roce_crc32(u32 crc, const u8 *buf, size_t len);
u32 roce_icrc(const u8 *ip, size_t len);
bool roce_icrc_ok(const u8 *ip, size_t len);
int roce_parse(const u8 *frame, size_t len, struct roce_ud *ud);
size_t roce_build(u8 *frame, size_t room, const struct roce_ud *ud);
const char *roce_err_name(int err);

#endif /* ONEPIPE_SWITCH_ROCE_H */
