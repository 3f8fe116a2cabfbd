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

/* RDMA device names are at most IB_DEVICE_NAME_MAX - 1 characters. */
#define OP_VERBS_DEV_MAX	64
/* UD QP numbers are 24 bits; 0 is no QP. */
#define OP_QPN_MAX		0xffffffU
/* A Q_Key with the high bit set is a controlled one: not an address. */
#define OP_QKEY_MAX		0x7fffffffU
/*
 * Peers one "host set" may carry: the uplink and 1023 hosts.  It keeps
 * the request (about 48 bytes a peer) well inside OP_NL_TXBUF.
 */
#define OP_VERBS_PEERS_MAX	1024

/* How a verbs host reaches one peer ("peer ID gid GID qpn QPN [qkey K]"). */
struct op_verbs_peer {
	uint32_t host;			/* 0: the uplink switch */
	uint8_t gid[16];
	uint32_t qpn;
	bool has_qkey;
	uint32_t qkey;
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
	/* verbs transport */
	bool has_dev;
	char dev[OP_VERBS_DEV_MAX];
	bool has_port;
	uint32_t port;
	bool has_qkey;
	uint32_t qkey;
	unsigned int npeers;
	struct op_verbs_peer *peers;	/* npeers entries, malloc'd */
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
 * A GID as IPv6 text ("::ffff:10.77.1.2", "fe80::1"), or an IPv4 address
 * as a shorthand for its IPv4-mapped GID (RoCEv2 over IPv4).
 */
int op_parse_gid(const char *s, uint8_t gid[16]);
/* "::ffff:10.77.1.2" into @buf of INET6_ADDRSTRLEN bytes. */
void op_format_gid(char *buf, size_t len, const uint8_t gid[16]);
/* 1..OP_QPN_MAX */
int op_parse_qpn(const char *s, uint32_t *out);
/* 0..OP_QKEY_MAX */
int op_parse_qkey(const char *s, uint32_t *out);

/*
 * Arguments after "host set".  Returns 0, or -EINVAL with a one-line
 * reason in @err.  Giving local or uplink implies "transport udp"; dev,
 * port, qkey or a peer imply "transport verbs".  Free the result with
 * op_host_set_free(), whatever the return value.
 */
int op_parse_host_set(int argc, char **argv, struct op_host_set *req,
		      char *err, size_t errlen);
void op_host_set_free(struct op_host_set *req);

#endif /* ONEPIPE_TOOL_PARSE_H */
