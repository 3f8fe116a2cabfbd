// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of roce.c, TAP output.  The known answers are frames that
 * Linux 6.1's rxe sent (ibv_ud_pingpong between two rxe devices on veths
 * in the test VM, captured with an AF_PACKET socket; see
 * tests/roce_rxe.sh): parsing them, checking their ICRC and rebuilding
 * them byte for byte proves that the switch speaks rxe's RoCEv2, not
 * merely its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce.h"

#define FRAME_MAX	2048
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/**
 * struct kat - a frame captured from rxe, and what it says
 * @what: where it came from
 * @hex: the Ethernet frame
 * @len: payload length (pad excluded)
 * @pad: BTH pad count
 * @fill: every payload byte (ibv_ud_pingpong fills its buffer alike)
 */
struct kat {
	const char *what;
	const char *hex;
	u32 dqpn;
	u32 psn;
	u32 qkey;
	u32 sqpn;
	size_t len;
	unsigned int pad;
	u8 fill;
};

static const struct kat kats[] = {
	{
		"rxe1 -> rxe2, 53-byte UD SEND (pad 3)",
		"ce14e55697bbee146b39d7a308004500006c2a9840004011f84b0a4d0102"
		"0a4d0202df9412b7005800006430ffff0000001100f6d0e8111111110000"
		"00117b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b"
		"7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b000000fc08"
		"0a7a",
		0x11, 0xf6d0e8, 0x11111111, 0x11, 53, 3, 0x7b,
	},
	{
		"rxe2 -> rxe1, 53-byte UD SEND (pad 3)",
		"ee146b39d7a3ce14e55697bb08004500006c684540004011ba9e0a4d0202"
		"0a4d0102df9412b7005800006430ffff00000011003e6798111111110000"
		"00117b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b"
		"7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b0000009b76"
		"c73c",
		0x11, 0x3e6798, 0x11111111, 0x11, 53, 3, 0x7b,
	},
	{
		"rxe1 -> rxe2, 52-byte UD SEND (pad 0, a beacon's size)",
		"16645cd5cd5d0681ffe1f6ed08004500006808dd400040111a0b0a4d0102"
		"0a4d0202df9412b7005400006400ffff00000011007aeb07111111110000"
		"00117b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b"
		"7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b16267b69",
		0x11, 0x7aeb07, 0x11111111, 0x11, 52, 0, 0x7b,
	},
};

static unsigned int tests, fails;

static void ok(bool cond, const char *what, const char *detail)
{
	tests++;
	if (!cond)
		fails++;
	printf("%sok %u - %s%s%s\n", cond ? "" : "not ", tests, what,
	       detail ? ": " : "", detail ? detail : "");
}

static size_t unhex(const char *s, u8 *buf, size_t room)
{
	size_t n = strlen(s) / 2, i;

	if (n > room) {
		printf("Bail out! known answer too long\n");
		exit(1);
	}
	for (i = 0; i < n; i++) {
		unsigned int b;

		if (sscanf(s + 2 * i, "%2x", &b) != 1) {
			printf("Bail out! bad hex in a known answer\n");
			exit(1);
		}
		buf[i] = (u8)b;
	}
	return n;
}

static void test_crc(void)
{
	static const u8 ones[8] = { 0xff, 0xff, 0xff, 0xff,
				    0xff, 0xff, 0xff, 0xff };
	const u8 *check = (const u8 *)"123456789";

	/* The standard check value of CRC-32 (zlib, Ethernet). */
	ok((roce_crc32(~0U, check, 9) ^ ~0U) == 0xcbf43926,
	   "crc32 of \"123456789\" is 0xcbf43926", NULL);
	/* The ICRC seed that rxe hard-codes: a masked LRH hashed first. */
	ok(roce_crc32(~0U, ones, sizeof(ones)) == 0xdebb20e3,
	   "crc32 of 8 x 0xff from ~0 is rxe's seed 0xdebb20e3", NULL);
}

static bool payload_is(const struct roce_ud *ud, u8 fill)
{
	size_t i;

	for (i = 0; i < ud->len; i++)
		if (ud->payload[i] != fill)
			return false;
	return true;
}

/* Parse a captured frame, check it, rebuild it from its fields. */
static void test_kat(const struct kat *k)
{
	u8 f[FRAME_MAX], g[FRAME_MAX];
	struct roce_ud ud;
	size_t n = unhex(k->hex, f, sizeof(f)), gl;
	char d[160];
	int err;

	err = roce_parse(f, n, &ud);
	ok(!err, k->what, roce_err_name(err));
	if (err)
		return;
	snprintf(d, sizeof(d), "dqpn %#x psn %#x qkey %#x sqpn %#x len %zu",
		 ud.dqpn, ud.psn, ud.qkey, ud.sqpn, ud.len);
	ok(ud.dqpn == k->dqpn && ud.psn == k->psn && ud.qkey == k->qkey &&
	   ud.sqpn == k->sqpn && ud.len == k->len && ud.pkey == 0xffff &&
	   payload_is(&ud, k->fill) && ud.ip_len == n - ROCE_ETH_LEN,
	   "  its fields", d);
	ok(((f[ROCE_ETH_LEN + ROCE_IP_LEN + ROCE_UDP_LEN + 1] >> 4) & 3) ==
	   k->pad, "  its pad count", NULL);
	ok(roce_icrc_ok(ud.ip, ud.ip_len), "  rxe's ICRC checks", NULL);
	/* Everything but the IPv4 header checksum is hashed or masked. */
	gl = roce_build(g, sizeof(g), &ud);
	ok(gl == n && !memcmp(f, g, n), "  rebuilt byte for byte", NULL);
}

/*
 * Which bytes does the ICRC cover?  Offsets from the IPv4 header, and
 * whether changing that byte must break the ICRC.
 */
static void test_coverage(void)
{
	static const struct {
		const char *what;
		size_t off;
		bool covered;
	} b[] = {
		{ "IPv4 TOS (ECN)", 1, false },
		{ "IPv4 TTL", 8, false },
		{ "IPv4 checksum", 10, false },
		{ "UDP checksum", 27, false },
		{ "BTH resv8a", 32, false },
		{ "IPv4 identification", 4, true },
		{ "IPv4 source", 12, true },
		{ "IPv4 destination", 19, true },
		{ "UDP source port", 20, true },
		{ "BTH opcode flags", 29, true },
		{ "BTH P_Key", 30, true },
		{ "BTH destination QPN", 35, true },
		{ "BTH PSN", 39, true },
		{ "DETH Q_Key", 40, true },
		{ "DETH source QPN", 47, true },
		{ "payload", 50, true },
		{ "pad", 101, true },
	};
	u8 f[FRAME_MAX];
	size_t n = unhex(kats[0].hex, f, sizeof(f)), i;
	char what[96];

	for (i = 0; i < ARRAY_SIZE(b); i++) {
		u8 *p = f + ROCE_ETH_LEN + b[i].off;
		bool good;

		*p ^= 0x01;
		good = roce_icrc_ok(f + ROCE_ETH_LEN, n - ROCE_ETH_LEN);
		*p ^= 0x01;
		snprintf(what, sizeof(what), "a changed %s %s the ICRC",
			 b[i].what, b[i].covered ? "breaks" : "keeps");
		ok(good != b[i].covered, what, NULL);
	}
}

/* A frame built around @len payload bytes of 0xa5, for the tests below. */
static size_t sample(u8 *f, size_t room, size_t len)
{
	static u8 pl[FRAME_MAX];
	struct roce_ud ud = {
		.dmac = { 0x02, 0, 0, 0, 0, 2 },
		.smac = { 0x02, 0, 0, 0, 0, 1 },
		.saddr = 0x01014d0a,	/* 10.77.1.1 in network order */
		.daddr = 0x02014d0a,
		.tos = 0x02,
		.ttl = 64,
		.sport = ROCE_SPORT_BASE,
		.pkey = ROCE_DEFAULT_PKEY,
		.dqpn = 0x123456,
		.psn = 0xabcdef,
		.qkey = 0x0001f1fe,
		.sqpn = 1,
		.payload = pl,
		.len = len,
	};

	memset(pl, 0xa5, sizeof(pl));
	return roce_build(f, room, &ud);
}

static void test_build(void)
{
	static const size_t lens[] = { 0, 1, 2, 3, 4, 5, 51, 52, 53, 1000 };
	u8 f[FRAME_MAX];
	unsigned int i;
	bool good = true;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		size_t len = lens[i], pad = (4 - (len & 3)) & 3, n;
		struct roce_ud ud;

		n = sample(f, sizeof(f), len);
		if (n != ROCE_HDRS_LEN + len + pad + ROCE_ICRC_LEN ||
		    roce_parse(f, n, &ud) || ud.len != len ||
		    !payload_is(&ud, 0xa5) || ud.dqpn != 0x123456 ||
		    ud.psn != 0xabcdef || ud.qkey != 0x0001f1fe ||
		    ud.sqpn != 1 || ud.tos != 0x02 || ud.ttl != 64 ||
		    ud.saddr != 0x01014d0a || ud.daddr != 0x02014d0a ||
		    !roce_icrc_ok(ud.ip, ud.ip_len)) {
			printf("# round trip failed for %zu payload bytes\n",
			       len);
			good = false;
		}
	}
	ok(good, "build/parse round trip, payloads of 0-5, 51-53, 1000 bytes",
	   NULL);
	ok(sample(f, ROCE_HDRS_LEN + 52 + ROCE_ICRC_LEN, 52) != 0 &&
	   sample(f, ROCE_HDRS_LEN + 52 + ROCE_ICRC_LEN - 1, 52) == 0,
	   "build refuses a frame that does not fit", NULL);
}

/* IPv4 header checksum: the sum over the header, checksum included. */
static bool ip_csum_ok(const u8 *ip)
{
	u32 sum = 0;
	unsigned int i;

	for (i = 0; i < ROCE_IP_LEN; i += 2)
		sum += (u32)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

static void test_ip_csum(void)
{
	u8 f[FRAME_MAX];

	sample(f, sizeof(f), 52);
	ok(ip_csum_ok(f + ROCE_ETH_LEN), "built IPv4 header checksum", NULL);
}

/* Break one thing in a good frame; roce_parse() must say what. */
static void test_reject(const char *what, size_t off, u8 val, int len_delta,
			int want)
{
	u8 f[FRAME_MAX];
	struct roce_ud ud;
	size_t n = sample(f, sizeof(f), 52);
	char d[64];
	int err;

	if (off != (size_t)-1)
		f[off] = val;
	err = roce_parse(f, (size_t)((long)n + len_delta), &ud);
	snprintf(d, sizeof(d), "got %s", roce_err_name(err));
	ok(err == want, what, d);
}

static void test_parse_errors(void)
{
	const size_t ip = ROCE_ETH_LEN, udp = ip + ROCE_IP_LEN;
	const size_t bth = udp + ROCE_UDP_LEN;

	test_reject("ARP is not IPv4", 13, 0x06, 0, ROCE_E_NOT_IPV4);
	test_reject("a runt frame is not IPv4", -1, 0, -(int)(ROCE_HDRS_LEN +
		    52 + ROCE_ICRC_LEN - 20), ROCE_E_NOT_IPV4);
	test_reject("IPv4 options are refused", ip, 0x46, 0, ROCE_E_BAD_IPV4);
	test_reject("IPv6 version nibble is refused", ip, 0x65, 0,
		    ROCE_E_BAD_IPV4);
	test_reject("a fragment is refused", ip + 6, 0x60, 0,
		    ROCE_E_BAD_IPV4);
	test_reject("a truncated frame is refused", -1, 0, -1,
		    ROCE_E_BAD_IPV4);
	test_reject("Ethernet padding after the packet is fine", -1, 0, 6,
		    ROCE_OK);
	test_reject("TCP is not RoCE", ip + 9, 6, 0, ROCE_E_NOT_ROCE);
	test_reject("UDP port 4792 is not RoCE", udp + 3, 0xb8, 0,
		    ROCE_E_NOT_ROCE);
	test_reject("a UDP length that disagrees is refused", udp + 5, 0x10,
		    0, ROCE_E_BAD_ROCE);
	test_reject("BTH transport version 1 is refused", bth + 1, 0x01, 0,
		    ROCE_E_BAD_ROCE);
	test_reject("RC SEND Only is not a UD SEND", bth, 0x04, 0,
		    ROCE_E_NOT_UD_SEND);
	test_reject("UD SEND Only with immediate is not taken", bth, 0x65, 0,
		    ROCE_E_NOT_UD_SEND);
}

int main(void)
{
	unsigned int i;

	printf("TAP version 13\n");
	test_crc();
	for (i = 0; i < ARRAY_SIZE(kats); i++)
		test_kat(&kats[i]);
	test_coverage();
	test_build();
	test_ip_csum();
	test_parse_errors();
	printf("1..%u\n", tests);
	if (fails)
		printf("# %u of %u failed\n", fails, tests);
	return fails ? 1 : 0;
}
