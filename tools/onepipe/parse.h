/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Argument parsing for the onepipe tool.  Pure functions with no netlink
 * or kernel dependency, so that tests/test_parse.c can exercise them.
 */
#ifndef ONEPIPE_TOOL_PARSE_H
#define ONEPIPE_TOOL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

/* Largest host id: ~0U is kept back as "no host" / broadcast. */
#define OP_HOST_ID_MAX	4294967294U

/* "ADDR:PORT" of the longest form, plus NUL. */
#define OP_ADDR_STRLEN	(INET_ADDRSTRLEN + sizeof(":65535"))

struct op_udp_addr {
	struct in_addr addr;	/* network byte order, as the uapi wants */
	uint16_t port;		/* host byte order */
};

/* Was a host set keyword given, and with what value. */
struct op_host_set {
	uint32_t id;
	bool has_transport;
	uint32_t transport;		/* enum onepipe_transport_kind */
	bool has_local;
	struct op_udp_addr local;
	bool has_uplink;
	struct op_udp_addr uplink;
};

/* True if @arg is a non-empty prefix of @word ("sh" matches "show"). */
bool op_matches(const char *arg, const char *word);

/*
 * Unsigned numbers: decimal, or hexadecimal with a 0x prefix.  No sign, no
 * blanks, no trailing garbage.  Return 0, -EINVAL (not a number) or
 * -ERANGE (above @max).
 */
int op_parse_uint(const char *s, uint64_t max, uint64_t *out);
int op_parse_u32(const char *s, uint32_t *out);
/* 1..OP_HOST_ID_MAX */
int op_parse_host_id(const char *s, uint32_t *out);
/* 1..65535 */
int op_parse_port(const char *s, uint16_t *out);

/* "A.B.C.D" or "A.B.C.D:PORT"; @defport when the port is left out. */
int op_parse_udp_addr(const char *s, uint16_t defport,
		      struct op_udp_addr *out);
/* "A.B.C.D:PORT" into @buf of OP_ADDR_STRLEN bytes. */
void op_format_udp_addr(char *buf, size_t len, struct in_addr addr,
			uint16_t port);

/*
 * Arguments after "host set".  Returns 0, or -EINVAL with a one-line
 * reason in @err.  Giving local or uplink implies "transport udp".
 */
int op_parse_host_set(int argc, char **argv, struct op_host_set *req,
		      char *err, size_t errlen);

#endif /* ONEPIPE_TOOL_PARSE_H */
