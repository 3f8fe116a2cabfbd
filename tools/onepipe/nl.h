/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Generic netlink plumbing for the onepipe tool, on top of libmnl: resolve
 * the "onepipe" family, send one request, run a callback on each reply,
 * and keep the kernel's extended ack so errors can be explained.
 */
#ifndef ONEPIPE_TOOL_NL_H
#define ONEPIPE_TOOL_NL_H

#include <stdbool.h>
#include <stdint.h>
#include <libmnl/libmnl.h>
#include <linux/onepipe.h>

/*
 * Dump replies can be larger than a page (the kernel caps them at 32K),
 * and HOST_GET of a verbs host with 1024 peers takes about 64K.
 */
#define OP_NL_RXBUF	131072
/*
 * Requests are a few attributes long, but a verbs "host set" carries up
 * to OP_VERBS_PEERS_MAX peers of 48 bytes each.
 */
#define OP_NL_TXBUF	65536

/* What an attribute is called and how long its payload must be. */
struct op_attr_spec {
	const char *name;
	uint16_t len;		/* exact payload length, 0 = any (nests) */
	const char *keyword;	/* command-line keyword that sets it */
};

/* The top-level ONEPIPE_A_* attributes. */
extern const struct op_attr_spec op_attrs[ONEPIPE_A_MAX + 1];

struct op_nl {
	struct mnl_socket *sk;
	uint32_t portid;
	uint32_t seq;
	uint16_t family;		/* resolved id of "onepipe" */
	uint32_t version;		/* the kernel family's version */
	struct nlmsghdr *req;		/* request in flight */
	char txbuf[OP_NL_TXBUF];
	char *rxbuf;
	/* Extended ack of the last error or warning. */
	char ext_msg[256];
	int ext_offs_type;		/* attribute at the offset, or -1 */
	int ext_miss_type;		/* missing attribute, or -1 */
};

/* Callback for each reply message; return MNL_CB_OK/STOP/ERROR. */
typedef int (*op_nl_cb)(const struct nlmsghdr *nlh, void *data);

/*
 * Open a generic netlink socket and resolve the "onepipe" family.
 * Prints why on failure and returns -1; 0 on success.
 */
int op_nl_open(struct op_nl *nl);
void op_nl_close(struct op_nl *nl);

/* Start a request for @cmd of the onepipe family in nl->txbuf. */
struct nlmsghdr *op_nl_request(struct op_nl *nl, uint8_t cmd,
			       uint16_t flags);

/*
 * Send @nlh and run @cb on every reply until the ack (NLM_F_ACK) or the end
 * of the dump.  Returns 0 or -errno (the kernel's or our own).
 */
int op_nl_talk(struct op_nl *nl, struct nlmsghdr *nlh, op_nl_cb cb,
	       void *data);

/*
 * Decode an NLMSG_ERROR answer to nl->req: returns its error (0 for an
 * ack) and keeps its extended ack in nl->ext_*.
 */
int op_nl_ack(struct op_nl *nl, const struct nlmsghdr *nlh);

/* "onepipe: WHAT: kernel message: strerror(-err)" on stderr. */
void op_nl_perror(const struct op_nl *nl, const char *what, int err);

/*
 * Fill @tb (max + 1 entries) with the attributes of a generic netlink
 * message or of a nest.  An attribute whose length does not match @spec is
 * reported on stderr and left out; unknown types are ignored.
 */
void op_nl_parse_msg(const struct nlmsghdr *nlh,
		     const struct op_attr_spec *spec, unsigned int max,
		     const struct nlattr **tb);
void op_nl_parse_nest(const struct nlattr *nest,
		      const struct op_attr_spec *spec, unsigned int max,
		      const struct nlattr **tb);

#endif /* ONEPIPE_TOOL_NL_H */
