// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 UD SEND framing and the ICRC; see roce.h.  Written from the
 * InfiniBand/RoCEv2 layouts and checked against frames captured from
 * Linux's rxe, which is what the hosts run (the known-answer tests).
 */
#include <string.h>

#include "roce.h"

/*
 * The ICRC starts as if 8 bytes of 0xff (the LRH of a RoCEv1 packet, all
 * masked) had been hashed into a CRC seeded with 0xffffffff; rxe starts
 * from the same constant, and the unit tests recompute it.
 */
#define ROCE_ICRC_SEED		0xdebb20e3U

/* Offsets of the invariant CRC's masked fields, from the IPv4 header. */
#define IP_TOS			1
#define IP_TTL			8
#define IP_CSUM			10
#define UDP_CSUM		(ROCE_IP_LEN + 6)
#define BTH_RESV8A		(ROCE_IP_LEN + ROCE_UDP_LEN + 4)
/* Headers hashed with masks; the DETH and the payload go in as they are. */
#define ICRC_MASKED_LEN		(ROCE_IP_LEN + ROCE_UDP_LEN + ROCE_BTH_LEN)

#define IP_PROTO_UDP		17
#define IP_DF			0x4000
#define IP_MF_OFFSET		0x3fff	/* more fragments, fragment offset */

static u32 crc_table[256];
static bool crc_ready;

static u16 get16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

static u32 get32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static void put16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static void put32(u8 *p, u32 v)
{
	put16(p, (u16)(v >> 16));
	put16(p + 2, (u16)v);
}

/* The ICRC alone is little endian: rxe stores the CPU's u32 on x86. */
static u32 get_le32(const u8 *p)
{
	return (u32)p[3] << 24 | (u32)p[2] << 16 | (u32)p[1] << 8 | p[0];
}

static void put_le32(u8 *p, u32 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
	p[2] = (u8)(v >> 16);
	p[3] = (u8)(v >> 24);
}

static void crc_init(void)
{
	u32 i, k, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320U & (0U - (c & 1)));
		crc_table[i] = c;
	}
	crc_ready = true;
}

/**
 * roce_crc32() - CRC-32 update as the kernel's crc32_le()
 * @crc: running value (no inversion is applied here)
 * @buf: bytes to hash
 * @len: their number
 *
 * Return: the new running value.
 */
u32 roce_crc32(u32 crc, const u8 *buf, size_t len)
{
	if (!crc_ready)
		crc_init();
	while (len--)
		crc = (crc >> 8) ^ crc_table[(crc ^ *buf++) & 0xff];
	return crc;
}

/**
 * roce_icrc() - invariant CRC of a RoCEv2 packet over IPv4
 * @ip: the IPv4 header (20 bytes, no options), UDP, BTH, the rest
 * @len: bytes from @ip up to the pad included, the ICRC excluded
 *
 * Return: the ICRC as a number; it goes on the wire little endian.
 */
u32 roce_icrc(const u8 *ip, size_t len)
{
	u8 ph[ICRC_MASKED_LEN];
	u32 crc;

	if (len < sizeof(ph))
		return 0;
	memcpy(ph, ip, sizeof(ph));
	ph[IP_TOS] = 0xff;
	ph[IP_TTL] = 0xff;
	ph[IP_CSUM] = 0xff;
	ph[IP_CSUM + 1] = 0xff;
	ph[UDP_CSUM] = 0xff;
	ph[UDP_CSUM + 1] = 0xff;
	ph[BTH_RESV8A] = 0xff;
	crc = roce_crc32(ROCE_ICRC_SEED, ph, sizeof(ph));
	crc = roce_crc32(crc, ip + sizeof(ph), len - sizeof(ph));
	return ~crc;
}

/**
 * roce_icrc_ok() - does a packet's ICRC check?
 * @ip: the IPv4 header
 * @len: IPv4 total length, the trailing ICRC included
 *
 * Return: true if the ICRC matches.
 */
bool roce_icrc_ok(const u8 *ip, size_t len)
{
	if (len < ICRC_MASKED_LEN + ROCE_ICRC_LEN)
		return false;
	len -= ROCE_ICRC_LEN;
	return roce_icrc(ip, len) == get_le32(ip + len);
}

/* Ethernet and IPv4; *@tot is the IPv4 total length. */
static int parse_ipv4(const u8 *f, size_t len, size_t *tot)
{
	const u8 *ip = f + ROCE_ETH_LEN;

	if (len < ROCE_ETH_LEN + ROCE_IP_LEN ||
	    get16(f + 12) != ROCE_ETHERTYPE_IPV4)
		return ROCE_E_NOT_IPV4;
	/* rxe hashes a 20-byte header: options would break the ICRC. */
	if (ip[0] != 0x45)
		return ROCE_E_BAD_IPV4;
	*tot = get16(ip + 2);
	/* Ethernet may pad a short frame: the IPv4 length is the truth. */
	if (*tot < ROCE_IP_LEN || *tot > len - ROCE_ETH_LEN ||
	    (get16(ip + 6) & IP_MF_OFFSET))
		return ROCE_E_BAD_IPV4;
	return ROCE_OK;
}

/* UDP to 4791 and the BTH of a UD SEND Only; *@pad from the BTH. */
static int parse_bth(const u8 *ip, size_t tot, size_t *pad)
{
	const u8 *udp = ip + ROCE_IP_LEN, *bth = udp + ROCE_UDP_LEN;

	if (ip[9] != IP_PROTO_UDP || tot < ROCE_IP_LEN + ROCE_UDP_LEN ||
	    get16(udp + 2) != ROCE_UDP_DPORT)
		return ROCE_E_NOT_ROCE;
	if (get16(udp + 4) != tot - ROCE_IP_LEN ||
	    tot < ROCE_IP_LEN + ROCE_UDP_LEN + ROCE_BTH_LEN ||
	    (bth[1] & 0x0f))	/* transport header version 0 */
		return ROCE_E_BAD_ROCE;
	if (bth[0] != ROCE_OP_UD_SEND_ONLY)
		return ROCE_E_NOT_UD_SEND;
	*pad = (bth[1] >> 4) & 3;
	if (tot < ICRC_MASKED_LEN + ROCE_DETH_LEN + *pad + ROCE_ICRC_LEN)
		return ROCE_E_BAD_ROCE;
	return ROCE_OK;
}

/**
 * roce_parse() - take a UD SEND Only frame apart
 * @frame: an Ethernet frame
 * @len: its length
 * @ud: its fields; @ud->payload points into @frame
 *
 * The ICRC is not checked here (roce_icrc_ok()): a switch that only
 * forwards a frame leaves that to the receiver.
 *
 * Return: ROCE_OK, or why the frame is not one.
 */
int roce_parse(const u8 *frame, size_t len, struct roce_ud *ud)
{
	const u8 *ip = frame + ROCE_ETH_LEN;
	const u8 *bth = ip + ROCE_IP_LEN + ROCE_UDP_LEN;
	const u8 *deth = bth + ROCE_BTH_LEN;
	size_t tot, pad;
	int err;

	err = parse_ipv4(frame, len, &tot);
	if (!err)
		err = parse_bth(ip, tot, &pad);
	if (err)
		return err;
	memcpy(ud->dmac, frame, 6);
	memcpy(ud->smac, frame + 6, 6);
	ud->id = get16(ip + 4);
	ud->tos = ip[1];
	ud->ttl = ip[8];
	memcpy(&ud->saddr, ip + 12, 4);
	memcpy(&ud->daddr, ip + 16, 4);
	ud->sport = get16(ip + ROCE_IP_LEN);
	ud->pkey = get16(bth + 2);
	ud->dqpn = get32(bth + 4) & ROCE_QPN_MASK;
	ud->psn = get32(bth + 8) & ROCE_PSN_MASK;
	ud->qkey = get32(deth);
	ud->sqpn = get32(deth + 4) & ROCE_QPN_MASK;
	ud->payload = deth + ROCE_DETH_LEN;
	ud->len = tot - ICRC_MASKED_LEN - ROCE_DETH_LEN - pad - ROCE_ICRC_LEN;
	ud->ip = ip;
	ud->ip_len = tot;
	return ROCE_OK;
}

/* The IPv4 header checksum (RFC 791), which the ICRC does not cover. */
static u16 ip_csum(const u8 *ip)
{
	u32 sum = 0;
	unsigned int i;

	for (i = 0; i < ROCE_IP_LEN; i += 2)
		sum += get16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)~sum;
}

static void build_ipv4(u8 *ip, const struct roce_ud *ud, size_t tot)
{
	memset(ip, 0, ROCE_IP_LEN);
	ip[0] = 0x45;
	ip[1] = ud->tos;
	put16(ip + 2, (u16)tot);
	put16(ip + 4, ud->id);
	put16(ip + 6, IP_DF);
	ip[8] = ud->ttl;
	ip[9] = IP_PROTO_UDP;
	memcpy(ip + 12, &ud->saddr, 4);
	memcpy(ip + 16, &ud->daddr, 4);
	put16(ip + IP_CSUM, ip_csum(ip));
}

/* UDP (checksum 0: none, as rxe sends), BTH and DETH. */
static void build_transport(u8 *udp, const struct roce_ud *ud, size_t ulen,
			    size_t pad)
{
	u8 *bth = udp + ROCE_UDP_LEN, *deth = bth + ROCE_BTH_LEN;

	put16(udp, ud->sport);
	put16(udp + 2, ROCE_UDP_DPORT);
	put16(udp + 4, (u16)ulen);
	put16(udp + 6, 0);
	bth[0] = ROCE_OP_UD_SEND_ONLY;
	bth[1] = (u8)(pad << 4);	/* no SE, no MigReq, version 0 */
	put16(bth + 2, ud->pkey);
	put32(bth + 4, ud->dqpn & ROCE_QPN_MASK);	/* resv8a = 0 */
	put32(bth + 8, ud->psn & ROCE_PSN_MASK);	/* no AckReq */
	put32(deth, ud->qkey);
	put32(deth + 4, ud->sqpn & ROCE_QPN_MASK);
}

/**
 * roce_build() - build a UD SEND Only frame
 * @frame: where to build it
 * @room: bytes available at @frame
 * @ud: the fields and the payload (@ip and @ip_len are not used)
 *
 * The payload is padded to a multiple of 4 bytes and the pad count put
 * in the BTH, as the IBA wants; the IPv4 checksum and the ICRC are
 * computed.
 *
 * Return: the frame's length, or 0 if it does not fit in @room or IPv4.
 */
size_t roce_build(u8 *frame, size_t room, const struct roce_ud *ud)
{
	size_t pad = (4 - (ud->len & 3)) & 3;
	size_t ulen = ROCE_UDP_LEN + ROCE_BTH_LEN + ROCE_DETH_LEN + ud->len +
		      pad + ROCE_ICRC_LEN;
	size_t tot = ROCE_IP_LEN + ulen;
	u8 *ip = frame + ROCE_ETH_LEN, *pl = frame + ROCE_HDRS_LEN;

	if (tot > 0xffff || ROCE_ETH_LEN + tot > room)
		return 0;
	memcpy(frame, ud->dmac, 6);
	memcpy(frame + 6, ud->smac, 6);
	put16(frame + 12, ROCE_ETHERTYPE_IPV4);
	build_ipv4(ip, ud, tot);
	build_transport(ip + ROCE_IP_LEN, ud, ulen, pad);
	memcpy(pl, ud->payload, ud->len);
	memset(pl + ud->len, 0, pad);
	put_le32(pl + ud->len + pad, roce_icrc(ip, tot - ROCE_ICRC_LEN));
	return ROCE_ETH_LEN + tot;
}

const char *roce_err_name(int err)
{
	switch (err) {
	case ROCE_OK:
		return "ok";
	case ROCE_E_NOT_IPV4:
		return "not IPv4";
	case ROCE_E_BAD_IPV4:
		return "bad IPv4";
	case ROCE_E_NOT_ROCE:
		return "not RoCEv2";
	case ROCE_E_BAD_ROCE:
		return "bad RoCEv2";
	case ROCE_E_NOT_UD_SEND:
		return "not a UD SEND Only";
	default:
		return "?";
	}
}
