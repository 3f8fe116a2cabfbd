// SPDX-License-Identifier: GPL-2.0
/*
 * Argument parsing for the onepipe tool (see parse.h).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/onepipe.h>

#include "parse.h"

bool op_matches(const char *arg, const char *word)
{
	size_t len = strlen(arg);

	return len > 0 && len <= strlen(word) && !strncmp(arg, word, len);
}

int op_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	int base = 10;
	char *end;

	/* strtoull() would accept blanks, a sign and "0x" on its own. */
	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!isxdigit((unsigned char)s[0]))
			return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, base);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int op_parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;
	int err = op_parse_uint(s, UINT32_MAX, &v);

	if (!err)
		*out = v;
	return err;
}

int op_parse_host_id(const char *s, uint32_t *out)
{
	uint64_t v;
	int err = op_parse_uint(s, OP_HOST_ID_MAX, &v);

	if (err)
		return err;
	if (v == ONEPIPE_HOST_LOCAL)
		return -ERANGE;
	*out = v;
	return 0;
}

int op_parse_port(const char *s, uint16_t *out)
{
	uint64_t v;
	int err = op_parse_uint(s, UINT16_MAX, &v);

	if (err)
		return err;
	if (v == 0)
		return -ERANGE;
	*out = v;
	return 0;
}

int op_parse_udp_addr(const char *s, uint16_t defport,
		      struct op_udp_addr *out)
{
	char host[INET_ADDRSTRLEN];
	const char *colon = strchr(s, ':');
	size_t len = colon ? (size_t)(colon - s) : strlen(s);
	struct op_udp_addr a = { .port = defport };

	if (len == 0 || len >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, len);
	host[len] = '\0';
	/* inet_pton() takes only full dotted quads: no "10.1", no names. */
	if (inet_pton(AF_INET, host, &a.addr) != 1)
		return -EINVAL;
	if (colon && op_parse_port(colon + 1, &a.port))
		return -EINVAL;
	*out = a;
	return 0;
}

void op_format_udp_addr(char *buf, size_t len, struct in_addr addr,
			uint16_t port)
{
	char host[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &addr, host, sizeof(host));
	snprintf(buf, len, "%s:%u", host, port);
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_transport(const char *s, uint32_t *out)
{
	/* Only UDP can be configured from here; verbs needs a device. */
	if (!strcmp(s, "udp")) {
		*out = ONEPIPE_TRANSPORT_UDP;
		return 0;
	}
	return -EINVAL;
}

int op_parse_host_set(int argc, char **argv, struct op_host_set *req,
		      char *err, size_t errlen)
{
	bool has_id = false;
	int i;

	memset(req, 0, sizeof(*req));
	for (i = 0; i < argc; i += 2) {
		const char *key = argv[i], *val;

		if (i + 1 >= argc)
			return fail(err, errlen, "\"%s\" needs a value", key);
		val = argv[i + 1];
		if (op_matches(key, "id")) {
			if (has_id)
				return fail(err, errlen, "duplicate \"id\"");
			if (op_parse_host_id(val, &req->id))
				return fail(err, errlen,
					    "invalid host id \"%s\" (1..%u)",
					    val, OP_HOST_ID_MAX);
			has_id = true;
		} else if (op_matches(key, "transport")) {
			if (req->has_transport)
				return fail(err, errlen,
					    "duplicate \"transport\"");
			if (parse_transport(val, &req->transport))
				return fail(err, errlen,
					    "unknown transport \"%s\" (udp)",
					    val);
			req->has_transport = true;
		} else if (op_matches(key, "local")) {
			if (req->has_local)
				return fail(err, errlen, "duplicate \"local\"");
			if (op_parse_udp_addr(val, ONEPIPE_UDP_PORT,
					      &req->local))
				return fail(err, errlen,
					    "invalid local address \"%s\" (ADDR[:PORT])",
					    val);
			req->has_local = true;
		} else if (op_matches(key, "uplink")) {
			if (req->has_uplink)
				return fail(err, errlen,
					    "duplicate \"uplink\"");
			if (op_parse_udp_addr(val, ONEPIPE_UDP_PORT,
					      &req->uplink))
				return fail(err, errlen,
					    "invalid uplink address \"%s\" (ADDR[:PORT])",
					    val);
			req->has_uplink = true;
		} else {
			return fail(err, errlen, "unknown keyword \"%s\"", key);
		}
	}
	if (!has_id)
		return fail(err, errlen, "\"id\" is required");
	/* The addresses are UDP transport attributes: say so explicitly. */
	if ((req->has_local || req->has_uplink) && !req->has_transport) {
		req->has_transport = true;
		req->transport = ONEPIPE_TRANSPORT_UDP;
	}
	return 0;
}
