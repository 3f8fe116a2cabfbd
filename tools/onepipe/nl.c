// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink plumbing for the onepipe tool (see nl.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "nl.h"

/* Spec entry of ONEPIPE_A_<x>, named as in the uapi header. */
#define ATTR(x, len, kw) \
	[ONEPIPE_A_##x] = { "ONEPIPE_A_" #x, len, kw }

const struct op_attr_spec op_attrs[ONEPIPE_A_MAX + 1] = {
	ATTR(HOST_ID,		4, "id"),
	ATTR(TRANSPORT,		4, "transport"),
	ATTR(UDP_LOCAL_ADDR,	4, "local"),
	ATTR(UDP_LOCAL_PORT,	2, "local"),
	ATTR(UDP_UPLINK_ADDR,	4, "uplink"),
	ATTR(UDP_UPLINK_PORT,	2, "uplink"),
	ATTR(STATE,		4, NULL),
	ATTR(CLOCK,		8, NULL),
	ATTR(TX_BARRIER,	8, NULL),
	ATTR(RX_BARRIER,	8, NULL),
	ATTR(REORDER_DEPTH,	4, NULL),
	ATTR(COUNTERS,		0, NULL),
	ATTR(LINK,		0, NULL),
	ATTR(SOCK,		0, NULL),
	ATTR(TX_COMMIT,		8, NULL),
	ATTR(RX_COMMIT,		8, NULL),
	ATTR(RDM_WAITING,	4, NULL),
	ATTR(RDM_UNACKED,	4, NULL),
	ATTR(PEER,		0, NULL),
	ATTR(VERBS_DEV,		0, "dev"),
	ATTR(VERBS_PORT,	4, "port"),
	ATTR(VERBS_QKEY,	4, "qkey"),
	ATTR(VERBS_GID,		16, NULL),
	ATTR(VERBS_QPN,		4, NULL),
	ATTR(VERBS_MTU,		4, NULL),
	ATTR(VERBS_STATE,	4, NULL),
	ATTR(VERBS_BOUND,	4, NULL),
	ATTR(VERBS_PEERS,	0, "peer"),
	ATTR(VERBS_PEER,	0, "peer"),
	ATTR(VERBS_COUNTERS,	0, NULL),
};

struct parse_ctx {
	const struct op_attr_spec *spec;
	unsigned int max;
	const struct nlattr **tb;
};

static int parse_attr_cb(const struct nlattr *attr, void *data)
{
	struct parse_ctx *ctx = data;
	unsigned int type = mnl_attr_get_type(attr);
	unsigned int len = mnl_attr_get_payload_len(attr);
	const struct op_attr_spec *spec;

	/* Newer kernels may add attributes: skip what we do not know. */
	if (type > ctx->max || !ctx->spec[type].name)
		return MNL_CB_OK;
	spec = &ctx->spec[type];
	if (spec->len && len != spec->len) {
		fprintf(stderr,
			"onepipe: warning: kernel sent %s with %u bytes, expected %u; ignored\n",
			spec->name, len, spec->len);
		return MNL_CB_OK;
	}
	ctx->tb[type] = attr;
	return MNL_CB_OK;
}

void op_nl_parse_msg(const struct nlmsghdr *nlh,
		     const struct op_attr_spec *spec, unsigned int max,
		     const struct nlattr **tb)
{
	struct parse_ctx ctx = { spec, max, tb };

	memset(tb, 0, (max + 1) * sizeof(*tb));
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), parse_attr_cb, &ctx);
}

void op_nl_parse_nest(const struct nlattr *nest,
		      const struct op_attr_spec *spec, unsigned int max,
		      const struct nlattr **tb)
{
	struct parse_ctx ctx = { spec, max, tb };

	memset(tb, 0, (max + 1) * sizeof(*tb));
	mnl_attr_parse_nested(nest, parse_attr_cb, &ctx);
}

/*
 * Type of the top-level attribute of the request that holds byte @offs,
 * or -1: an offset inside a nest (one peer's GID) names the nest.
 */
static int req_attr_at(const struct op_nl *nl, uint32_t offs)
{
	const struct nlattr *attr;

	if (!nl->req)
		return -1;
	mnl_attr_for_each(attr, nl->req, sizeof(struct genlmsghdr)) {
		long start = (const char *)attr - (const char *)nl->req;

		if ((long)offs >= start && (long)offs < start + attr->nla_len)
			return mnl_attr_get_type(attr);
	}
	return -1;
}

static int extack_cb(const struct nlattr *attr, void *data)
{
	struct op_nl *nl = data;

	switch (mnl_attr_get_type(attr)) {
	case NLMSGERR_ATTR_MSG:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			snprintf(nl->ext_msg, sizeof(nl->ext_msg), "%s",
				 mnl_attr_get_str(attr));
		break;
	case NLMSGERR_ATTR_OFFS:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
			nl->ext_offs_type =
				req_attr_at(nl, mnl_attr_get_u32(attr));
		break;
	case NLMSGERR_ATTR_MISS_TYPE:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
			nl->ext_miss_type = mnl_attr_get_u32(attr);
		break;
	}
	return MNL_CB_OK;
}

/* The TLVs of an extended ack start @offset bytes into the payload. */
static void parse_extack(struct op_nl *nl, const struct nlmsghdr *nlh,
			 size_t offset)
{
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) ||
	    MNL_ALIGN(offset) > mnl_nlmsg_get_payload_len(nlh))
		return;
	mnl_attr_parse(nlh, offset, extack_cb, nl);
}

struct talk_ctx {
	struct op_nl *nl;
	op_nl_cb cb;
	void *data;
};

static int data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct talk_ctx *ctx = data;

	return ctx->cb ? ctx->cb(nlh, ctx->data) : MNL_CB_OK;
}

static void clear_extack(struct op_nl *nl)
{
	nl->ext_msg[0] = '\0';
	nl->ext_offs_type = -1;
	nl->ext_miss_type = -1;
}

int op_nl_ack(struct op_nl *nl, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t offset = sizeof(*e);

	clear_extack(nl);
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e))
		return -EBADMSG;
	/* Unless capped, the whole request is echoed before the TLVs. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		offset += mnl_nlmsg_get_payload_len(&e->msg);
	parse_extack(nl, nlh, offset);
	return e->error > 0 ? -e->error : e->error;
}

static int error_cb(const struct nlmsghdr *nlh, void *data)
{
	struct talk_ctx *ctx = data;
	int err = op_nl_ack(ctx->nl, nlh);

	if (err) {
		errno = -err;
		return MNL_CB_ERROR;
	}
	if (ctx->nl->ext_msg[0])
		fprintf(stderr, "onepipe: warning: %s\n", ctx->nl->ext_msg);
	return MNL_CB_STOP;
}

/* A failed dump ends with an NLMSG_DONE carrying the error. */
static int done_cb(const struct nlmsghdr *nlh, void *data)
{
	struct talk_ctx *ctx = data;
	int err;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(err))
		return MNL_CB_STOP;
	memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
	if (err >= 0)
		return MNL_CB_STOP;
	parse_extack(ctx->nl, nlh, sizeof(err));
	errno = -err;
	return MNL_CB_ERROR;
}

int op_nl_talk(struct op_nl *nl, struct nlmsghdr *nlh, op_nl_cb cb,
	       void *data)
{
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
		[NLMSG_ERROR] = error_cb,
		[NLMSG_DONE] = done_cb,
	};
	struct talk_ctx ctx = { nl, cb, data };
	ssize_t n;
	int ret;

	nl->req = nlh;
	clear_extack(nl);
	if (mnl_socket_sendto(nl->sk, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		n = mnl_socket_recvfrom(nl->sk, nl->rxbuf, OP_NL_RXBUF);
		if (n < 0)
			return -errno;
		errno = 0;
		ret = mnl_cb_run2(nl->rxbuf, n, nlh->nlmsg_seq, nl->portid,
				  data_cb, &ctx, ctl, NLMSG_MIN_TYPE);
		if (ret == MNL_CB_ERROR)
			return errno ? -errno : -EIO;
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

static struct nlmsghdr *put_request(struct op_nl *nl, uint16_t family,
				    uint8_t cmd, uint8_t version,
				    uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->txbuf);
	struct genlmsghdr *genl;

	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++nl->seq;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = version;
	return nlh;
}

struct nlmsghdr *op_nl_request(struct op_nl *nl, uint8_t cmd,
			       uint16_t flags)
{
	return put_request(nl, nl->family, cmd, ONEPIPE_GENL_VERSION, flags);
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	static const struct op_attr_spec spec[CTRL_ATTR_VERSION + 1] = {
		[CTRL_ATTR_FAMILY_ID] = { "CTRL_ATTR_FAMILY_ID", 2 },
		[CTRL_ATTR_VERSION] = { "CTRL_ATTR_VERSION", 4 },
	};
	const struct nlattr *tb[CTRL_ATTR_VERSION + 1];
	struct op_nl *nl = data;

	op_nl_parse_msg(nlh, spec, CTRL_ATTR_VERSION, tb);
	if (tb[CTRL_ATTR_FAMILY_ID])
		nl->family = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (tb[CTRL_ATTR_VERSION])
		nl->version = mnl_attr_get_u32(tb[CTRL_ATTR_VERSION]);
	return MNL_CB_OK;
}

static int resolve_family(struct op_nl *nl)
{
	struct nlmsghdr *nlh;
	int err;

	nlh = put_request(nl, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1,
			  NLM_F_ACK);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ONEPIPE_GENL_NAME);
	err = op_nl_talk(nl, nlh, family_cb, nl);
	if (err == -ENOENT || (!err && !nl->family)) {
		fprintf(stderr,
			"onepipe: generic netlink family '%s' not found (is onepipe.ko loaded?)\n",
			ONEPIPE_GENL_NAME);
		return -1;
	}
	if (err) {
		op_nl_perror(nl, "resolving the generic netlink family", err);
		return -1;
	}
	return 0;
}

static void set_flag(struct op_nl *nl, int opt)
{
	int one = 1;

	/* Older kernels lack these; errors are then just less detailed. */
	mnl_socket_setsockopt(nl->sk, opt, &one, sizeof(one));
}

int op_nl_open(struct op_nl *nl)
{
	memset(nl, 0, sizeof(*nl));
	nl->rxbuf = malloc(OP_NL_RXBUF);
	if (!nl->rxbuf) {
		fprintf(stderr, "onepipe: out of memory\n");
		return -1;
	}
	nl->sk = mnl_socket_open(NETLINK_GENERIC);
	if (!nl->sk) {
		fprintf(stderr, "onepipe: cannot open netlink socket: %s\n",
			strerror(errno));
		goto err_free;
	}
	if (mnl_socket_bind(nl->sk, 0, MNL_SOCKET_AUTOPID) < 0) {
		fprintf(stderr, "onepipe: cannot bind netlink socket: %s\n",
			strerror(errno));
		goto err_close;
	}
	nl->portid = mnl_socket_get_portid(nl->sk);
	/* Distinct sequence numbers across runs help when reading traces. */
	nl->seq = time(NULL);
	set_flag(nl, NETLINK_EXT_ACK);
	set_flag(nl, NETLINK_CAP_ACK);
	if (resolve_family(nl))
		goto err_close;
	return 0;

err_close:
	mnl_socket_close(nl->sk);
	nl->sk = NULL;
err_free:
	free(nl->rxbuf);
	nl->rxbuf = NULL;
	return -1;
}

void op_nl_close(struct op_nl *nl)
{
	if (nl->sk)
		mnl_socket_close(nl->sk);
	free(nl->rxbuf);
	nl->sk = NULL;
	nl->rxbuf = NULL;
}

/* "ONEPIPE_A_X" of an attribute of our last request, with its keyword. */
static const char *attr_name(const struct op_nl *nl, int type)
{
	static char buf[64];
	bool ours = nl->req && nl->family &&
		    nl->req->nlmsg_type == nl->family;
	const struct op_attr_spec *spec;

	/* Only requests of our family use the ONEPIPE_A_* numbering. */
	if (!ours || type < 0 || type > ONEPIPE_A_MAX || !op_attrs[type].name) {
		snprintf(buf, sizeof(buf), "attribute %d", type);
		return buf;
	}
	spec = &op_attrs[type];
	if (!spec->keyword)
		return spec->name;
	snprintf(buf, sizeof(buf), "\"%s\": %s", spec->keyword, spec->name);
	return buf;
}

void op_nl_perror(const struct op_nl *nl, const char *what, int err)
{
	fflush(stdout);
	fprintf(stderr, "onepipe: %s: ", what);
	if (nl->ext_msg[0])
		fprintf(stderr, "%s: ", nl->ext_msg);
	fputs(strerror(-err), stderr);
	if (nl->ext_miss_type >= 0)
		fprintf(stderr, " (missing %s)",
			attr_name(nl, nl->ext_miss_type));
	else if (nl->ext_offs_type >= 0)
		fprintf(stderr, " (attribute %s)",
			attr_name(nl, nl->ext_offs_type));
	fputc('\n', stderr);
}
