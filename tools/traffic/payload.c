// SPDX-License-Identifier: GPL-2.0
/*
 * Encoding and verification of op-traffic's test payload (see payload.h).
 */
#include <string.h>

#include "payload.h"

/* splitmix64: cheap, well mixed, and the same on every host. */
static uint64_t mix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t fill_seed(const struct opt_payload *p)
{
	uint64_t s = ((uint64_t)p->src_host << 16) | p->src_port;

	s = mix64(&s) ^ p->scat_id;
	s = mix64(&s) ^ p->idx;
	return s;
}

/* Filler bytes of message @p: 8 at a time from a stream seeded by its id. */
static void filler_write(uint8_t *b, size_t n, const struct opt_payload *p)
{
	uint64_t state = fill_seed(p);
	size_t i;

	for (i = OPT_HDR_LEN; i < n; i += 8) {
		uint64_t r = mix64(&state);

		memcpy(b + i, &r, n - i < 8 ? n - i : 8);
	}
}

static int filler_check(const uint8_t *b, size_t n,
			const struct opt_payload *p)
{
	uint64_t state = fill_seed(p);
	size_t i;

	for (i = OPT_HDR_LEN; i < n; i += 8) {
		uint64_t r = mix64(&state);

		if (memcmp(b + i, &r, n - i < 8 ? n - i : 8))
			return -1;
	}
	return 0;
}

void opt_encode(void *buf, const struct opt_payload *p)
{
	uint8_t *b = buf;
	uint32_t magic = OPT_MAGIC;
	uint16_t pad = 0;

	memcpy(b + 0, &magic, 4);
	memcpy(b + 4, &p->src_host, 4);
	memcpy(b + 8, &p->src_port, 2);
	memcpy(b + 10, &pad, 2);
	memcpy(b + 12, &p->scat_id, 8);
	memcpy(b + 20, &p->idx, 4);
	memcpy(b + 24, &p->len, 4);
	memcpy(b + 28, &p->send_time_ns, 8);
	filler_write(b, p->len, p);
}

/* Restamp a message whose send had to be retried (filler is unaffected). */
void opt_set_send_time(void *buf, uint64_t send_time_ns)
{
	memcpy((uint8_t *)buf + 28, &send_time_ns, 8);
}

/* Decode the header; check magic, length and filler (not the source). */
enum opt_verify opt_decode(const void *buf, size_t n, struct opt_payload *p)
{
	const uint8_t *b = buf;
	uint32_t magic;

	if (n < OPT_HDR_LEN)
		return OPT_SHORT;
	memcpy(&magic, b + 0, 4);
	if (magic != OPT_MAGIC)
		return OPT_MAGIC_BAD;
	memcpy(&p->src_host, b + 4, 4);
	memcpy(&p->src_port, b + 8, 2);
	memcpy(&p->scat_id, b + 12, 8);
	memcpy(&p->idx, b + 20, 4);
	memcpy(&p->len, b + 24, 4);
	memcpy(&p->send_time_ns, b + 28, 8);
	if (p->len != n)
		return OPT_LEN_BAD;
	if (filler_check(b, n, p))
		return OPT_FILL_BAD;
	return OPT_OK;
}

const char *opt_verify_str(enum opt_verify v)
{
	switch (v) {
	case OPT_OK:
		return "ok";
	case OPT_SHORT:
		return "short";
	case OPT_MAGIC_BAD:
		return "bad-magic";
	case OPT_LEN_BAD:
		return "bad-length";
	case OPT_SRC_BAD:
		return "bad-source";
	case OPT_FILL_BAD:
		return "bad-filler";
	}
	return "unknown";
}
