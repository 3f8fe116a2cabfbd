/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared declarations of the onepipe tool: global options, the per-object
 * entry points, and the parse/print halves of each object that the unit
 * tests drive without a kernel.
 */
#ifndef ONEPIPE_TOOL_H
#define ONEPIPE_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <netinet/in.h>
#include <libmnl/libmnl.h>
#include <linux/onepipe.h>

#include "nl.h"
#include "out.h"
#include "parse.h"

#ifndef OP_TOOL_VERSION
#define OP_TOOL_VERSION	"1.0"
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Global options. */
struct op_ctx {
	bool json;
	bool pretty;
	FILE *out;
};

/* Entry points: @argv starts at the command after the object. */
int do_host(struct op_ctx *ctx, int argc, char **argv);
int do_link(struct op_ctx *ctx, int argc, char **argv);
int do_sock(struct op_ctx *ctx, int argc, char **argv);
int do_peer(struct op_ctx *ctx, int argc, char **argv);
int do_dev(struct op_ctx *ctx, int argc, char **argv);
int do_controller(struct op_ctx *ctx, int argc, char **argv);
int do_fail(struct op_ctx *ctx, int argc, char **argv);

/* Usage of each object, for "OBJECT help" (stdout) and errors. */
void host_usage(FILE *f);
void link_usage(FILE *f);
void sock_usage(FILE *f);
void peer_usage(FILE *f);
void dev_usage(FILE *f);
void controller_usage(FILE *f);
void fail_usage(FILE *f);

/*
 * Report a command-line error as "onepipe: ..." plus a pointer to
 * "onepipe OBJECT help", and return the exit status (1).
 */
int op_usage_error(const char *object, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "OBJECT CMD: unexpected argument "ARG"", for commands without any. */
int op_unexpected_arg(const char *object, const char *cmd, const char *arg);

/*
 * Dump @cmd and print the @nest attribute of every reply with @print:
 * one line each in text, a JSON array of objects otherwise.  @nest
 * ONEPIPE_A_UNSPEC prints each reply's top-level attributes (@spec is
 * then op_attrs).
 */
typedef void (*op_print_fn)(struct op_out *o, const struct nlattr **tb);
int op_dump(struct op_ctx *ctx, uint8_t cmd, uint16_t nest,
	    const struct op_attr_spec *spec, unsigned int max,
	    op_print_fn print, const char *what);
/* One dumped item: a line of text or a JSON object. */
void op_print_item(struct op_out *o, op_print_fn print,
		   const struct nlattr **tb);

/* A nest of u64 counters, decoded. */
#define OP_MAX_COUNTERS	64
struct op_counters {
	uint64_t present;		/* bit (1ULL << id) */
	uint64_t v[OP_MAX_COUNTERS];
};

void op_counters_parse(const struct nlattr *nest, struct op_counters *c);
/*
 * "  LABEL name value ..." on a line of its own, wrapped; a JSON object
 * member @key.  Counters without a name show as counter_N.
 */
void op_counters_print(struct op_out *o, const char *key, const char *label,
		       const struct op_counters *c,
		       const char *(*name_of)(unsigned int id));

/* Everything ONEPIPE_CMD_HOST_GET can report, decoded. */
struct op_host_info {
	uint64_t present;		/* bit (1ULL << ONEPIPE_A_*) */
	uint32_t host_id;
	uint32_t transport;
	struct in_addr local_addr;
	uint16_t local_port;
	struct in_addr uplink_addr;
	uint16_t uplink_port;
	uint32_t state;
	uint64_t clock;
	uint64_t tx_barrier;
	uint64_t rx_barrier;
	uint32_t reorder_depth;
	uint64_t tx_commit;
	uint64_t rx_commit;
	uint32_t rdm_waiting;
	uint32_t rdm_unacked;
	uint32_t controlled;		/* net.onepipe.controlled */
	struct op_counters counters;	/* ONEPIPE_C_* */
	/* verbs transport */
	char verbs_dev[OP_VERBS_DEV_MAX];
	uint32_t verbs_port;
	uint8_t verbs_gid[16];
	uint32_t verbs_qpn;
	uint32_t verbs_qkey;
	uint32_t verbs_mtu;
	struct op_counters verbs_counters;	/* ONEPIPE_VC_* */
	unsigned int npeers;
	struct op_verbs_peer *peers;	/* malloc'd */
};

/* Fills @hi; release it with op_host_free(). */
void op_host_parse(const struct nlmsghdr *nlh, struct op_host_info *hi);
void op_host_free(struct op_host_info *hi);
void op_host_print(struct op_out *o, const struct op_host_info *hi);
/*
 * @now - @then for 48-bit wrap-around timestamps, in nanoseconds;
 * negative if @then is ahead.
 */
int64_t op_ts_lag(uint64_t now, uint64_t then);
/* "tx_msgs" for ONEPIPE_C_TX_MSGS; NULL if unknown. */
const char *op_counter_name(unsigned int id);
/* "tx_posts" for ONEPIPE_VC_TX_POSTS; NULL if unknown. */
const char *op_verbs_counter_name(unsigned int id);

/* A NUL-terminated string attribute, or NULL. */
const char *op_attr_str(const struct nlattr *attr);

/* The ONEPIPE_A_VERBS_PEERS nest: malloc'd array in *@peers. */
int op_verbs_peers_parse(const struct nlattr *nest,
			 struct op_verbs_peer **peers, unsigned int *npeers);
/* One line per peer in text, a "peers" array in JSON. */
void op_verbs_peers_print(struct op_out *o, const struct op_verbs_peer *p,
			  unsigned int n);
/* Append ONEPIPE_A_VERBS_PEERS to a request; -EMSGSIZE if it is full. */
int op_verbs_peers_put(struct nlmsghdr *nlh, size_t buflen,
		       const struct op_verbs_peer *p, unsigned int n);

/*
 * One ONEPIPE_A_LINK / ONEPIPE_A_SOCK / ONEPIPE_A_PEER nest, parsed with
 * these specs.
 */
extern const struct op_attr_spec op_link_attrs[ONEPIPE_L_MAX + 1];
extern const struct op_attr_spec op_sock_attrs[ONEPIPE_S_MAX + 1];
extern const struct op_attr_spec op_peer_attrs[ONEPIPE_P_MAX + 1];
extern const struct op_attr_spec op_verbs_peer_attrs[ONEPIPE_V_MAX + 1];
void op_link_print(struct op_out *o, const struct nlattr **tb);
void op_sock_print(struct op_out *o, const struct nlattr **tb);
void op_peer_print(struct op_out *o, const struct nlattr **tb);
/* One ONEPIPE_CMD_DEV_GET reply's top-level attributes. */
void op_dev_print(struct op_out *o, const struct nlattr **tb);

/* One ONEPIPE_CMD_FAIL_GET reply: a failure this host applied. */
extern const struct op_attr_spec op_fail_attrs[ONEPIPE_A_MAX + 1];
void op_fail_print(struct op_out *o, const struct nlattr **tb);

/*
 * "controller show" and "fail show" take the output options after the
 * command too ("onepipe controller show -j"); @socket only if allowed.
 */
struct op_show_opts {
	bool json;
	bool pretty;
	const char *socket;	/* onepiped's socket */
};

int op_parse_show_opts(int argc, char **argv, bool allow_socket,
		       struct op_show_opts *opts, char *err, size_t errlen);

/* onepiped's answer to CTL_SHOW, reassembled from its chunks. */
struct ctl_msg;
#define OP_CTL_TEXT_MAX	(16 << 20)
struct op_ctl_text {
	char *buf;		/* NUL-terminated */
	size_t len;
	size_t cap;
	unsigned int chunks;
};

/*
 * Append a CTL_SHOW_REPLY chunk.  Returns 1 after the last one
 * (CTL_F_LAST), 0 if more follow, -EBADMSG (not a SHOW_REPLY) or
 * -EFBIG (beyond OP_CTL_TEXT_MAX) or -ENOMEM.
 */
int op_ctl_text_add(struct op_ctl_text *t, const struct ctl_msg *m);
void op_ctl_text_free(struct op_ctl_text *t);

/* A parsed JSON document; numbers keep their text. */
enum op_jtype {
	OP_J_NULL,
	OP_J_FALSE,
	OP_J_TRUE,
	OP_J_NUM,
	OP_J_STR,
	OP_J_ARR,
	OP_J_OBJ,
};

struct op_jval {
	enum op_jtype type;
	char *key;		/* member name, inside an object */
	char *str;		/* OP_J_STR (decoded), OP_J_NUM (as sent) */
	struct op_jval *child;	/* first element or member */
	struct op_jval *next;	/* next sibling */
};

/* Deeper than any answer of onepiped, well within the JSON writer's. */
#define OP_JSON_MAX_DEPTH	12

/* NULL on error, with the reason and its offset in @err. */
struct op_jval *op_json_parse(const char *s, size_t len, char *err,
			      size_t errlen);
void op_json_free(struct op_jval *v);
struct jw;
void op_json_write(struct jw *jw, const struct op_jval *v);
/*
 * The controller's state: @v re-written as JSON, or as text that follows
 * the document's shape (scalars as "key value", objects and arrays of
 * objects as indented blocks).
 */
void op_controller_print(struct op_out *o, const struct op_jval *v);

#endif /* ONEPIPE_TOOL_H */
