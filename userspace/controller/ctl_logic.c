// SPDX-License-Identifier: GPL-2.0
/*
 * onepiped's decision logic; the rules are at the top of ctl_logic.h.
 *
 * Layout: the graph is fixed once parsed (nodes, links, an adjacency
 * array, name and host id hash tables), everything else is the state
 * that ctl_encode() persists plus scratch for the graph searches.  The
 * failure log is one array of every failed node (hosts and switches) in
 * decision order; the hosts failed in the current procedure are its tail
 * from @ep_start, and a correct host's pending DONEs are a bitmap over
 * that tail.  A node may fail again after it rejoined, so the log holds
 * entries, not nodes: a node's current failure is the entry at its
 * @flog_idx, its older entries are rejoined history.  The rejoin in
 * progress needs no bitmap: a host owes at most one DONE for it, counted
 * in @owes like the procedure's.  Only the action queue and log lines
 * are malloc'd.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_logic.h"

#define CTL_HASH_SIZE	(2 * CTL_MAX_NODES)	/* power of two */
#define CTL_NO_NODE	0xffffu
#define CTL_OWE_WORDS	(CTL_MAX_NODES / 64)
/*
 * Failure log entries: at most one failure in force per node, and the
 * rejoined history is pruned to fewer than CTL_MAX_NODES entries before
 * each rejoin (prune_history()), so twice the node count always fits.
 */
#define CTL_FLOG_MAX	(2 * CTL_MAX_NODES)
#define CTL_LINE_MAX	1024
#define CTL_OWE_CHUNK	16	/* names per "owe" line of the blob */
#define CTL_STATE_MAGIC	"onepipe-ctl-state 1"
/* REJOINs without ts (the first and at done timeouts) before giving up */
#define CTL_REJOIN_TRIES	3
/*
 * Dropped relays are logged at most once per this many ns: a broken
 * path relays every packet, and each drop is one of them.
 */
#define CTL_RELAY_LOG_NS	(1000ULL * 1000 * 1000)

/* The procedure, SETTLING aside (that is @settling). */
enum ctl_proc {
	CTL_PROC_IDLE,
	CTL_PROC_BROADCAST,
	CTL_PROC_RESUMING,
	CTL_PROC_REJOINING,
};

/**
 * struct ctl_fentry - one entry of the failure log
 * @node: the failed node
 * @rejoined: the node rejoined since (the entry is history: no FAIL)
 * @epoch: the epoch that failed it
 * @ts: its failure timestamp
 * @rj_epoch: @rejoined: the epoch of the rejoin
 * @rj_ts: @rejoined: the new incarnation's first timestamp
 */
struct ctl_fentry {
	uint16_t node;
	bool rejoined;
	uint32_t epoch;
	uint64_t ts;
	uint32_t rj_epoch;
	uint64_t rj_ts;
};

/**
 * struct ctl_report - one end's last word about a link
 * @down: its last report was LINK_DOWN
 * @has_ts: @ts is valid
 * @ts: its last commit barrier on the link
 */
struct ctl_report {
	bool down;
	bool has_ts;
	uint64_t ts;
};

/**
 * struct ctl_link - an undirected link
 * @end: its two nodes
 * @rep: @rep[i] is what @end[i] reported
 * @resume_owed: @end[i] (a switch) owes DONE for RESUME of its port
 *	facing @end[!i]
 */
struct ctl_link {
	uint16_t end[2];
	struct ctl_report rep[2];
	bool resume_owed[2];
};

/**
 * struct ctl_node - a host or a switch
 * @name: node name
 * @kind: enum ctl_node_kind
 * @host: host id (hosts)
 * @controller: the controller is attached here
 * @failed: decided failed (until it rejoins)
 * @reached: connected to a controller node (last graph search)
 * @fail_epoch: @failed: the epoch that failed it
 * @fail_ts: @failed: its failure timestamp
 * @flog_idx: @failed or @hist: its latest entry in the failure log (in
 *	force while @failed, else rejoined)
 * @hist: it has an entry in the failure log
 * @rj_owed: @hist, correct: hosts that still owe DONE for the REJOIN of
 *	its latest (rejoined) entry, bits in ctl_logic.rj_owe[node]
 * @rj_defer: rejoin candidate order: 0, or the host was put at the back
 *	(its rejoin was aborted: no REJOINED after CTL_REJOIN_TRIES asks);
 *	a larger value is further back.  Not persisted.
 * @conn: connections that said HELLO
 * @owes: DONEs this (correct) host owes in the current epoch (REJOINING:
 *	0 or 1, about the rejoining host)
 * @unreach: UNREACH reports it sent
 * @relays: RELAYs from it passed on (not persisted)
 * @adj: first entry in ctl_logic.adj (its links)
 * @deg: number of its links
 * @mark: scratch for the component search
 */
struct ctl_node {
	char name[CTL_NAME_LEN];
	enum ctl_node_kind kind;
	uint32_t host;
	bool controller;
	bool failed;
	bool reached;
	uint32_t fail_epoch;
	uint64_t fail_ts;
	unsigned int flog_idx;
	bool hist;
	unsigned int rj_owed;
	uint32_t rj_defer;
	unsigned int conn;
	unsigned int owes;
	uint64_t unreach;
	uint64_t relays;
	unsigned int adj;
	unsigned int deg;
	unsigned int mark;
};

/* A queued action, compact: struct ctl_action is built when popped. */
struct ctl_qent {
	uint8_t kind;
	uint8_t type;
	uint8_t level;
	uint8_t flags;
	uint16_t to;
	uint16_t peer;
	uint32_t epoch;
	uint32_t host;
	uint64_t ts;
	char *text;
};

struct ctl_logic {
	struct ctl_config cfg;

	/* the graph, fixed by ctl_new() */
	struct ctl_node nodes[CTL_MAX_NODES];
	unsigned int nnodes;
	struct ctl_link links[CTL_MAX_LINKS];
	unsigned int nlinks;
	uint16_t adj[2 * CTL_MAX_LINKS];	/* link indices by node */
	uint16_t ctrl[CTL_MAX_CONTROLLERS];
	unsigned int nctrl;
	uint16_t name_hash[CTL_HASH_SIZE];
	uint16_t host_hash[CTL_HASH_SIZE];
	unsigned int nhosts;

	/* decided state (persisted) */
	uint32_t epoch;
	enum ctl_proc proc;
	uint32_t first_epoch;		/* first epoch of the procedure */
	struct ctl_fentry flog[CTL_FLOG_MAX];	/* in decision order */
	unsigned int nflog;
	unsigned int ep_start;		/* the procedure's part of @flog */
	uint64_t owe[CTL_MAX_NODES][CTL_OWE_WORDS];
	unsigned int owed_total;
	unsigned int resume_total;
	uint16_t rj_node;		/* REJOINING: the host */
	bool rj_has_ts;			/* it answered REJOINED ... */
	uint64_t rj_ts;			/* ... with this first ts */
	/* rj_owe[h]: who owes DONE for host h's last, committed rejoin */
	uint64_t rj_owe[CTL_MAX_NODES][CTL_OWE_WORDS];
	unsigned int rj_tries;		/* REJOINs without ts sent (timer) */
	uint32_t defer_gen;		/* last ctl_node.rj_defer given */

	/* timers (not persisted) */
	bool settling;
	uint64_t settle_since;
	uint64_t phase_deadline;

	unsigned int ndisc;		/* disconnected, not yet decided */
	unsigned int mark_gen;
	uint16_t stack[CTL_MAX_NODES];
	uint16_t members[CTL_MAX_NODES];

	struct ctl_stats st;
	/* rate limit of the "relay dropped" log line (not persisted) */
	bool relay_logged;
	uint64_t relay_log_at;
	uint64_t relay_unlogged;	/* drops since that line */

	struct ctl_qent *q;
	size_t qhead;
	size_t qlen;
	size_t qcap;
	uint64_t qlost;
};

/* ---- small helpers ------------------------------------------------------- */

/* Names go into JSON, logs and the state blob unquoted: keep them plain. */
static bool name_ok(const char *s, size_t n)
{
	size_t i;

	if (!n || n >= CTL_NAME_LEN)
		return false;
	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
		      ch == '-'))
			return false;
	}
	return true;
}

static unsigned int hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h & (CTL_HASH_SIZE - 1);
}

static unsigned int hash_u32(uint32_t v)
{
	return ((v * 2654435761u) >> 8) & (CTL_HASH_SIZE - 1);
}

static int find_node(const struct ctl_logic *c, const char *name)
{
	unsigned int h = hash_str(name);
	uint16_t i;

	while ((i = c->name_hash[h]) != CTL_NO_NODE) {
		if (!strcmp(c->nodes[i].name, name))
			return i;
		h = (h + 1) & (CTL_HASH_SIZE - 1);
	}
	return -1;
}

static int find_host(const struct ctl_logic *c, uint32_t id)
{
	unsigned int h = hash_u32(id);
	uint16_t i;

	while ((i = c->host_hash[h]) != CTL_NO_NODE) {
		if (c->nodes[i].host == id)
			return i;
		h = (h + 1) & (CTL_HASH_SIZE - 1);
	}
	return -1;
}

/* Link @k of node @n. */
static const struct ctl_link *nlink(const struct ctl_logic *c,
				    const struct ctl_node *n, unsigned int k)
{
	return &c->links[c->adj[n->adj + k]];
}

/* The link between nodes @a and @b, -1 if none: O(degree of @a). */
static int find_link(const struct ctl_logic *c, unsigned int a,
		     unsigned int b)
{
	const struct ctl_node *n = &c->nodes[a];
	unsigned int i;

	for (i = 0; i < n->deg; i++) {
		const struct ctl_link *l = nlink(c, n, i);

		if (l->end[0] + l->end[1] - a == b)
			return c->adj[n->adj + i];
	}
	return -1;
}

static unsigned int link_end(const struct ctl_link *l, unsigned int node)
{
	return l->end[0] == node ? 0 : 1;
}

static bool link_is_down(const struct ctl_link *l)
{
	return l->rep[0].down || l->rep[1].down;
}

static bool correct(const struct ctl_node *n)
{
	return n->reached && !n->failed;
}

static bool disconnected(const struct ctl_node *n)
{
	return !n->reached && !n->failed;
}

/* A failure procedure (not a rejoin) is under way. */
static bool failing(const struct ctl_logic *c)
{
	return c->proc == CTL_PROC_BROADCAST || c->proc == CTL_PROC_RESUMING;
}

/* In the current procedure's failure set (and so in every FAIL of it). */
static bool in_proc(const struct ctl_logic *c, const struct ctl_node *n)
{
	return n->failed && failing(c) && n->fail_epoch >= c->first_epoch;
}

/* Host @x owes DONE for the REJOIN of host @h's last, committed rejoin. */
static bool rj_owes(const struct ctl_logic *c, unsigned int h, unsigned int x)
{
	return c->rj_owe[h][x / 64] & 1ULL << (x % 64);
}

static void rj_owe_set(struct ctl_logic *c, unsigned int h, unsigned int x)
{
	if (rj_owes(c, h, x))
		return;
	c->rj_owe[h][x / 64] |= 1ULL << (x % 64);
	c->nodes[h].rj_owed++;
}

static void rj_owe_clear(struct ctl_logic *c, unsigned int h, unsigned int x)
{
	if (!rj_owes(c, h, x))
		return;
	c->rj_owe[h][x / 64] &= ~(1ULL << (x % 64));
	c->nodes[h].rj_owed--;
}

/*
 * Host @x fails: it owes nothing any more (a new incarnation starts
 * clean), and nobody is told of its last rejoin again (a REJOIN now would
 * undo the new failure).  O(N).
 */
static void rj_owe_forget(struct ctl_logic *c, unsigned int x)
{
	unsigned int h;

	for (h = 0; h < c->nnodes; h++)
		if (c->nodes[h].rj_owed)
			rj_owe_clear(c, h, x);
	memset(c->rj_owe[x], 0, sizeof(c->rj_owe[x]));
	c->nodes[x].rj_owed = 0;
}

/* The latest entry of a correct node that has history (rejoined), or NULL. */
static const struct ctl_fentry *last_rejoin(const struct ctl_logic *c,
					    unsigned int h)
{
	const struct ctl_node *n = &c->nodes[h];

	if (n->failed || !n->hist || !c->flog[n->flog_idx].rejoined)
		return NULL;
	return &c->flog[n->flog_idx];
}

/* ---- the action queue ---------------------------------------------------- */

static struct ctl_qent *q_add(struct ctl_logic *c, enum ctl_action_kind kind)
{
	struct ctl_qent *e;

	if (c->qlen == c->qcap) {
		size_t ncap = c->qcap ? 2 * c->qcap : 256;
		struct ctl_qent *nq = realloc(c->q, ncap * sizeof(*nq));

		if (!nq) {
			/* Reported by ctl_pop_action(); nothing else to do. */
			c->qlost++;
			return NULL;
		}
		c->q = nq;
		c->qcap = ncap;
	}
	e = &c->q[c->qlen++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->peer = CTL_NO_NODE;
	return e;
}

/*
 * A SAVE covers every change made before the caller handles it (it
 * encodes the state as it is then), so one pending SAVE at the tail is
 * enough.
 */
static void q_save(struct ctl_logic *c)
{
	if (c->qlen > c->qhead && c->q[c->qlen - 1].kind == CTL_ACT_SAVE)
		return;
	q_add(c, CTL_ACT_SAVE);
}

static struct ctl_qent *q_send(struct ctl_logic *c, unsigned int to,
			       enum ctl_type type, uint32_t epoch,
			       uint32_t host, uint64_t ts, int peer)
{
	struct ctl_qent *e = q_add(c, CTL_ACT_SEND);

	if (!e)
		return NULL;
	e->to = to;
	e->type = type;
	e->epoch = epoch;
	e->host = host;
	e->ts = ts;
	e->peer = peer < 0 ? CTL_NO_NODE : (uint16_t)peer;
	/* a FAIL's ts always counts, even 0 (no boundary report had one) */
	if (type == CTL_FAIL)
		e->flags = CTL_F_HAS_TS;
	return e;
}

/* REJOIN {@epoch, @host} to node @to, with @ts (CTL_F_HAS_TS) or not. */
static void q_rejoin_msg(struct ctl_logic *c, unsigned int to, uint32_t epoch,
			 uint32_t host, bool with_ts, uint64_t ts)
{
	struct ctl_qent *e = q_send(c, to, CTL_REJOIN, epoch, host,
				    with_ts ? ts : 0, -1);

	if (e && with_ts)
		e->flags = CTL_F_HAS_TS;
}

/*
 * REJOIN about the rejoining host to node @to: without ts to the host
 * itself (it answers its first timestamp), with it to the others.
 */
static void q_rejoin(struct ctl_logic *c, unsigned int to, bool with_ts)
{
	q_rejoin_msg(c, to, c->epoch, c->nodes[c->rj_node].host, with_ts,
		     c->rj_ts);
}

__attribute__((format(printf, 3, 4)))
static void q_log(struct ctl_logic *c, int level, const char *fmt, ...)
{
	struct ctl_qent *e;
	va_list ap;
	char *text = malloc(CTL_LOG_LEN);

	if (!text) {
		c->qlost++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(text, CTL_LOG_LEN, fmt, ap);
	va_end(ap);
	e = q_add(c, CTL_ACT_LOG);
	if (!e) {
		free(text);
		return;
	}
	e->level = (uint8_t)level;
	e->text = text;
}

/**
 * ctl_pop_action() - take the next action
 * @c: the controller
 * @a: filled in
 *
 * Actions must be handled in order: a SAVE before the SENDs that follow
 * it.  If actions were lost (out of memory), one CTL_LOG_ERR says so.
 *
 * Return: true if @a was filled in, false if the queue is empty.
 */
bool ctl_pop_action(struct ctl_logic *c, struct ctl_action *a)
{
	struct ctl_qent *e;

	memset(a, 0, sizeof(*a));
	if (c->qhead == c->qlen) {
		if (!c->qlost)
			return false;
		a->kind = CTL_ACT_LOG;
		a->level = CTL_LOG_ERR;
		snprintf(a->text, sizeof(a->text),
			 "out of memory: %" PRIu64 " actions lost", c->qlost);
		c->qlost = 0;
		return true;
	}
	e = &c->q[c->qhead++];
	a->kind = e->kind;
	switch (e->kind) {
	case CTL_ACT_SAVE:
		break;
	case CTL_ACT_SEND:
		strcpy(a->to, c->nodes[e->to].name);
		a->msg.magic = CTL_MAGIC;
		a->msg.version = CTL_VERSION;
		a->msg.type = e->type;
		a->msg.epoch = e->epoch;
		a->msg.host = e->host;
		a->msg.ts = e->ts;
		a->msg.flags = e->flags;
		if (e->peer != CTL_NO_NODE)
			strcpy(a->msg.peer, c->nodes[e->peer].name);
		break;
	case CTL_ACT_LOG:
		a->level = e->level;
		snprintf(a->text, sizeof(a->text), "%s", e->text);
		free(e->text);
		break;
	}
	if (c->qhead == c->qlen)
		c->qhead = c->qlen = 0;
	return true;
}

/**
 * ctl_pending_actions() - how many actions wait in the queue
 * @c: the controller
 *
 * Return: the number of queued actions.
 */
size_t ctl_pending_actions(const struct ctl_logic *c)
{
	return c->qlen - c->qhead + (c->qlost ? 1 : 0);
}

/* ---- topology ------------------------------------------------------------ */

/* Split @line (modified) into at most @max words; '#' starts a comment. */
static int split_words(char *line, char **w, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p || *p == '#')
			return n;
		if (n == max)
			return max + 1;
		w[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' &&
		       *p != '#')
			p++;
		if (*p == '#') {
			*p = 0;
			return n;
		}
		if (*p)
			*p++ = 0;
	}
}

/* Decimal u64 (the whole string), no sign. */
static bool parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return true;
}

static bool parse_u32(const char *s, uint32_t *v)
{
	uint64_t x;

	if (!parse_u64(s, &x) || x > UINT32_MAX)
		return false;
	*v = (uint32_t)x;
	return true;
}

/*
 * Iterate over the lines of a text of @len bytes: copies the next line
 * into @buf (NUL-terminated) and advances *@pos.  Returns 0 at the end,
 * -1 if the line is too long, 1 otherwise.
 */
static int next_line(const char *text, size_t len, size_t *pos, char *buf)
{
	size_t start = *pos, n;
	const char *nl;

	if (start >= len)
		return 0;
	nl = memchr(text + start, '\n', len - start);
	n = nl ? (size_t)(nl - (text + start)) : len - start;
	*pos = start + n + 1;
	if (n >= CTL_LINE_MAX)
		return -1;
	memcpy(buf, text + start, n);
	buf[n] = 0;
	if (memchr(buf, 0, n))	/* an embedded NUL */
		return -1;
	return 1;
}

__attribute__((format(printf, 4, 5)))
static void set_err(char *err, size_t errlen, unsigned int line,
		    const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!err || !errlen)
		return;
	if (line)
		n = snprintf(err, errlen, "line %u: ", line);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

static int add_node(struct ctl_logic *c, const char *name,
		    enum ctl_node_kind kind, uint32_t host)
{
	struct ctl_node *n;
	unsigned int h;

	if (c->nnodes == CTL_MAX_NODES)
		return -ENOSPC;
	if (find_node(c, name) >= 0)
		return -EEXIST;
	if (kind == CTL_NODE_HOST && find_host(c, host) >= 0)
		return -EADDRINUSE;
	n = &c->nodes[c->nnodes];
	memset(n, 0, sizeof(*n));
	strcpy(n->name, name);
	n->kind = kind;
	n->host = host;
	for (h = hash_str(name); c->name_hash[h] != CTL_NO_NODE;
	     h = (h + 1) & (CTL_HASH_SIZE - 1))
		;
	c->name_hash[h] = (uint16_t)c->nnodes;
	if (kind == CTL_NODE_HOST) {
		for (h = hash_u32(host); c->host_hash[h] != CTL_NO_NODE;
		     h = (h + 1) & (CTL_HASH_SIZE - 1))
			;
		c->host_hash[h] = (uint16_t)c->nnodes;
		c->nhosts++;
	}
	c->nnodes++;
	return 0;
}

/* Pass 1: nodes.  Pass 2: links and controllers (may name later nodes). */
static int parse_topology(struct ctl_logic *c, const char *text, size_t len,
			  char *err, size_t errlen)
{
	char line[CTL_LINE_MAX];
	unsigned int lineno, i, pass;
	char *w[4];
	size_t pos;
	int n, r;

	for (pass = 1; pass <= 2; pass++) {
		pos = 0;
		lineno = 0;
		while ((r = next_line(text, len, &pos, line))) {
			lineno++;
			if (r < 0) {
				set_err(err, errlen, lineno,
					"line too long or has a NUL");
				return -EINVAL;
			}
			n = split_words(line, w, 3);
			if (!n)
				continue;
			if (!strcmp(w[0], "host") || !strcmp(w[0], "switch")) {
				bool host = w[0][0] == 'h';
				uint32_t id = 0;

				if (pass == 2)
					continue;
				if (n != (host ? 3 : 2)) {
					set_err(err, errlen, lineno,
						"usage: %s", host ?
						"host NAME ID" : "switch NAME");
					return -EINVAL;
				}
				if (!name_ok(w[1], strlen(w[1]))) {
					set_err(err, errlen, lineno,
						"bad node name '%.40s'", w[1]);
					return -EINVAL;
				}
				if (host && (!parse_u32(w[2], &id) || !id)) {
					set_err(err, errlen, lineno,
						"bad host id '%.40s'", w[2]);
					return -EINVAL;
				}
				r = add_node(c, w[1], host ? CTL_NODE_HOST :
					     CTL_NODE_SWITCH, id);
				if (r == -ENOSPC)
					set_err(err, errlen, lineno,
						"too many nodes (max %u)",
						CTL_MAX_NODES);
				else if (r == -EEXIST)
					set_err(err, errlen, lineno,
						"duplicate node '%s'", w[1]);
				else if (r == -EADDRINUSE)
					set_err(err, errlen, lineno,
						"duplicate host id %" PRIu32,
						id);
				if (r)
					return -EINVAL;
			} else if (!strcmp(w[0], "link")) {
				int a, b;
				struct ctl_link *l;

				if (pass == 1)
					continue;
				if (n != 3) {
					set_err(err, errlen, lineno,
						"usage: link NODE NODE");
					return -EINVAL;
				}
				a = find_node(c, w[1]);
				b = find_node(c, w[2]);
				if (a < 0 || b < 0) {
					set_err(err, errlen, lineno,
						"unknown node '%.40s'",
						a < 0 ? w[1] : w[2]);
					return -EINVAL;
				}
				if (a == b) {
					set_err(err, errlen, lineno,
						"link from '%s' to itself",
						w[1]);
					return -EINVAL;
				}
				/* adjacency not built yet: a linear scan */
				for (i = 0; i < c->nlinks; i++) {
					l = &c->links[i];
					if (l->end[0] + l->end[1] == a + b &&
					    (l->end[0] == a || l->end[0] == b))
						break;
				}
				if (i < c->nlinks) {
					set_err(err, errlen, lineno,
						"duplicate link %s %s",
						w[1], w[2]);
					return -EINVAL;
				}
				if (c->nlinks == CTL_MAX_LINKS) {
					set_err(err, errlen, lineno,
						"too many links (max %u)",
						CTL_MAX_LINKS);
					return -EINVAL;
				}
				l = &c->links[c->nlinks++];
				memset(l, 0, sizeof(*l));
				l->end[0] = (uint16_t)a;
				l->end[1] = (uint16_t)b;
				c->nodes[a].deg++;
				c->nodes[b].deg++;
			} else if (!strcmp(w[0], "controller")) {
				int a;

				if (pass == 1)
					continue;
				if (n != 2) {
					set_err(err, errlen, lineno,
						"usage: controller NODE");
					return -EINVAL;
				}
				a = find_node(c, w[1]);
				if (a < 0) {
					set_err(err, errlen, lineno,
						"unknown node '%.40s'", w[1]);
					return -EINVAL;
				}
				if (c->nodes[a].controller) {
					set_err(err, errlen, lineno,
						"duplicate controller '%s'",
						w[1]);
					return -EINVAL;
				}
				if (c->nctrl == CTL_MAX_CONTROLLERS) {
					set_err(err, errlen, lineno,
						"too many controller nodes (max %u)",
						CTL_MAX_CONTROLLERS);
					return -EINVAL;
				}
				c->nodes[a].controller = true;
				c->ctrl[c->nctrl++] = (uint16_t)a;
			} else if (pass == 1) {
				set_err(err, errlen, lineno,
					"unknown keyword '%.40s'", w[0]);
				return -EINVAL;
			}
		}
	}
	if (!c->nctrl) {
		set_err(err, errlen, 0, "no controller node");
		return -EINVAL;
	}
	return 0;
}

/* Build the adjacency array (counting sort of link ends by node). */
static void build_adj(struct ctl_logic *c)
{
	unsigned int i, e, pos = 0;

	for (i = 0; i < c->nnodes; i++) {
		c->nodes[i].adj = pos;
		pos += c->nodes[i].deg;
		c->nodes[i].deg = 0;
	}
	for (i = 0; i < c->nlinks; i++) {
		for (e = 0; e < 2; e++) {
			struct ctl_node *n = &c->nodes[c->links[i].end[e]];

			c->adj[n->adj + n->deg++] = (uint16_t)i;
		}
	}
}

/*
 * Mark the nodes connected to a controller node through up links and
 * correct nodes; count the disconnected ones.  O(N + L).
 */
static void search(struct ctl_logic *c)
{
	unsigned int i, k, sp = 0, nreached = 0, nfailed = 0;

	for (i = 0; i < c->nnodes; i++) {
		c->nodes[i].reached = false;
		if (c->nodes[i].failed)
			nfailed++;
	}
	for (i = 0; i < c->nctrl; i++) {
		struct ctl_node *n = &c->nodes[c->ctrl[i]];

		if (!n->failed && !n->reached) {
			n->reached = true;
			c->stack[sp++] = c->ctrl[i];
		}
	}
	while (sp) {
		struct ctl_node *n = &c->nodes[c->stack[--sp]];

		nreached++;
		for (k = 0; k < n->deg; k++) {
			const struct ctl_link *l = nlink(c, n, k);
			uint16_t o = l->end[0] == n - c->nodes ? l->end[1] :
				     l->end[0];

			if (link_is_down(l) || c->nodes[o].reached ||
			    c->nodes[o].failed)
				continue;
			c->nodes[o].reached = true;
			c->stack[sp++] = o;
		}
	}
	c->ndisc = c->nnodes - nreached - nfailed;
}

/**
 * ctl_config_default() - the defaults of onepiped's options
 * @cfg: filled in
 */
void ctl_config_default(struct ctl_config *cfg)
{
	cfg->settle_ns = CTL_DEFAULT_SETTLE_NS;
	cfg->done_timeout_ns = CTL_DEFAULT_DONE_TIMEOUT_NS;
}

/**
 * ctl_new() - a controller for a topology
 * @topo: the topology file's text (need not be NUL-terminated)
 * @len: its length
 * @cfg: tunables, NULL for the defaults
 * @err: where to write why the topology was rejected ("line N: ..."),
 *	may be NULL
 * @errlen: room in @err
 *
 * The controller starts idle at epoch 0 with every link up and nobody
 * connected.
 *
 * Return: the controller (ctl_free() it), or NULL (@err says why).
 */
struct ctl_logic *ctl_new(const char *topo, size_t len,
			  const struct ctl_config *cfg, char *err,
			  size_t errlen)
{
	struct ctl_logic *c = calloc(1, sizeof(*c));
	unsigned int i;

	if (!c) {
		set_err(err, errlen, 0, "out of memory");
		return NULL;
	}
	if (cfg)
		c->cfg = *cfg;
	else
		ctl_config_default(&c->cfg);
	memset(c->name_hash, 0xff, sizeof(c->name_hash));
	memset(c->host_hash, 0xff, sizeof(c->host_hash));
	if (parse_topology(c, topo, len, err, errlen)) {
		free(c);
		return NULL;
	}
	build_adj(c);
	search(c);
	if (c->ndisc) {
		for (i = 0; i < c->nnodes && c->nodes[i].reached; i++)
			;
		set_err(err, errlen, 0,
			"node '%s' is not connected to a controller node",
			c->nodes[i].name);
		free(c);
		return NULL;
	}
	return c;
}

/**
 * ctl_free() - free a controller and its queued actions
 * @c: the controller, or NULL
 */
void ctl_free(struct ctl_logic *c)
{
	size_t i;

	if (!c)
		return;
	for (i = c->qhead; i < c->qlen; i++)
		free(c->q[i].text);
	free(c->q);
	free(c);
}

/* ---- the procedure ------------------------------------------------------- */

/* The epoch a FAIL about failed node @f carries now (see the header). */
static uint32_t fail_msg_epoch(const struct ctl_logic *c,
			       const struct ctl_node *f)
{
	return in_proc(c, f) ? c->epoch : f->fail_epoch;
}

/*
 * Every failure in force, the REJOIN with ts while one is owed (FAIL
 * first: the REJOIN undoes it), then STATE, to host @h.  Rejoined
 * entries are history and are not sent, except a correct host's latest
 * one whose REJOIN @h still owes DONE for: FAIL {its epoch, ts}, then
 * REJOIN {rejoin epoch, first ts} (@h may have missed both, and its
 * kernel needs the pair to accept the new incarnation).  Older entries
 * and those of hosts failed again are never replayed: a FAIL now would
 * fail the new incarnation, a REJOIN undo the new failure.
 */
static void send_log(struct ctl_logic *c, unsigned int h)
{
	unsigned int i;

	for (i = 0; i < c->nflog; i++) {
		const struct ctl_fentry *fe = &c->flog[i];
		const struct ctl_node *f = &c->nodes[fe->node];

		if (f->kind != CTL_NODE_HOST)
			continue;
		if (!fe->rejoined) {
			q_send(c, h, CTL_FAIL, fail_msg_epoch(c, f), f->host,
			       fe->ts, -1);
		} else if (last_rejoin(c, fe->node) == fe &&
			   rj_owes(c, fe->node, h)) {
			q_send(c, h, CTL_FAIL, fe->epoch, f->host, fe->ts, -1);
			q_rejoin_msg(c, h, fe->rj_epoch, f->host, true,
				     fe->rj_ts);
		}
	}
	if (c->proc == CTL_PROC_REJOINING && c->rj_has_ts && h != c->rj_node)
		q_rejoin(c, h, true);
	q_send(c, h, CTL_STATE, c->epoch, 0, 0, -1);
}

/* The current procedure's FAILs, then STATE, to host @h. */
static void send_proc_fails(struct ctl_logic *c, unsigned int h)
{
	unsigned int i;

	for (i = c->ep_start; i < c->nflog; i++) {
		const struct ctl_node *f = &c->nodes[c->flog[i].node];

		if (f->kind == CTL_NODE_HOST)
			q_send(c, h, CTL_FAIL, c->epoch, f->host, f->fail_ts,
			       -1);
	}
	q_send(c, h, CTL_STATE, c->epoch, 0, 0, -1);
}

/* RESUMEs switch @s still owes a DONE for. */
static void send_resumes(struct ctl_logic *c, unsigned int s)
{
	const struct ctl_node *n = &c->nodes[s];
	unsigned int k;

	for (k = 0; k < n->deg; k++) {
		const struct ctl_link *l = nlink(c, n, k);
		unsigned int e = link_end(l, s);

		if (l->resume_owed[e])
			q_send(c, s, CTL_RESUME, c->epoch, 0, 0, l->end[!e]);
	}
}

static void clear_owes(struct ctl_logic *c)
{
	unsigned int i, words = (c->nflog - c->ep_start + 63) / 64;

	for (i = 0; i < c->nnodes; i++) {
		if (c->nodes[i].owes)
			memset(c->owe[i], 0, words * sizeof(uint64_t));
		c->nodes[i].owes = 0;
	}
	c->owed_total = 0;
}

static void clear_resumes(struct ctl_logic *c)
{
	unsigned int i;

	for (i = 0; i < c->nlinks; i++)
		c->links[i].resume_owed[0] = c->links[i].resume_owed[1] = false;
	c->resume_total = 0;
}

static void go_idle(struct ctl_logic *c)
{
	c->proc = CTL_PROC_IDLE;
	q_save(c);
	q_log(c, CTL_LOG_NOTICE, "epoch %" PRIu32 ": procedure complete",
	      c->epoch);
}

/*
 * Every correct switch's ports that face a node failed in the current
 * procedure leave its commit minimum.
 */
static void enter_resuming(struct ctl_logic *c, uint64_t now)
{
	unsigned int i, e;

	clear_owes(c);
	clear_resumes(c);
	c->proc = CTL_PROC_RESUMING;
	c->phase_deadline = now + c->cfg.done_timeout_ns;
	for (i = 0; i < c->nlinks; i++) {
		struct ctl_link *l = &c->links[i];

		for (e = 0; e < 2; e++) {
			const struct ctl_node *s = &c->nodes[l->end[e]];
			const struct ctl_node *f = &c->nodes[l->end[!e]];

			if (s->kind == CTL_NODE_SWITCH && !s->failed &&
			    in_proc(c, f)) {
				l->resume_owed[e] = true;
				c->resume_total++;
			}
		}
	}
	if (!c->resume_total) {
		go_idle(c);
		return;
	}
	q_save(c);
	q_log(c, CTL_LOG_INFO, "epoch %" PRIu32 ": resuming %u switch ports",
	      c->epoch, c->resume_total);
	for (i = 0; i < c->nlinks; i++) {
		const struct ctl_link *l = &c->links[i];

		for (e = 0; e < 2; e++)
			if (l->resume_owed[e] && c->nodes[l->end[e]].conn)
				q_send(c, l->end[e], CTL_RESUME, c->epoch, 0, 0,
				       l->end[!e]);
	}
}

/* Let every correct host owe a DONE for every host of the procedure. */
static void set_owes(struct ctl_logic *c)
{
	unsigned int i, k, nep = c->nflog - c->ep_start;

	for (i = 0; i < c->nnodes; i++) {
		struct ctl_node *h = &c->nodes[i];

		if (h->kind != CTL_NODE_HOST || h->failed)
			continue;
		for (k = 0; k < nep; k++) {
			if (c->nodes[c->flog[c->ep_start + k].node].kind !=
			    CTL_NODE_HOST)
				continue;
			c->owe[i][k / 64] |= 1ULL << (k % 64);
			h->owes++;
		}
		c->owed_total += h->owes;
	}
}

/*
 * One component of disconnected nodes from @start (through topology
 * links, up or down: a dead ToR's hosts may have reported their uplinks
 * down, yet they fail with the ToR).  Fills @c->members; returns the
 * component's timestamp, and logs the boundary reports that are missing.
 */
static uint64_t component(struct ctl_logic *c, unsigned int start,
			  unsigned int *nmem)
{
	unsigned int sp = 0, nm = 0, k;
	uint64_t ts = 0;

	c->nodes[start].mark = c->mark_gen;
	c->stack[sp++] = (uint16_t)start;
	while (sp) {
		unsigned int m = c->stack[--sp];
		const struct ctl_node *n = &c->nodes[m];

		c->members[nm++] = (uint16_t)m;
		for (k = 0; k < n->deg; k++) {
			const struct ctl_link *l = nlink(c, n, k);
			unsigned int e = link_end(l, m);
			struct ctl_node *o = &c->nodes[l->end[!e]];

			if (disconnected(o)) {
				if (o->mark != c->mark_gen) {
					o->mark = c->mark_gen;
					c->stack[sp++] = l->end[!e];
				}
				continue;
			}
			if (!correct(o))
				continue;
			/* a boundary link: its correct end must report */
			if (!l->rep[!e].down)
				q_log(c, CTL_LOG_WARNING,
				      "epoch %" PRIu32 ": %s did not report its link to %s: atomicity may be lost there",
				      c->epoch + 1, o->name, n->name);
			else if (l->rep[!e].has_ts && l->rep[!e].ts > ts)
				ts = l->rep[!e].ts;
		}
	}
	*nmem = nm;
	return ts;
}

static void commit_rejoin(struct ctl_logic *c);

/* Decide every disconnected node failed: one new epoch. */
static void decide(struct ctl_logic *c, uint64_t now)
{
	unsigned int i, k, nm, nhf = 0;
	uint32_t epoch = c->epoch + 1;

	if (c->proc == CTL_PROC_REJOINING && c->rj_has_ts) {
		/* evaluate() commits it first; never abandon it */
		commit_rejoin(c);
		search(c);
	}
	/* old owes are indexed by the old set: clear before it changes */
	clear_owes(c);
	clear_resumes(c);
	if (c->proc == CTL_PROC_REJOINING) {
		/*
		 * Failures first: they cannot wait, a rejoin can.  The host
		 * stays failed; once idle it is a candidate again and gets a
		 * new epoch (a new incarnation, harmless).
		 */
		q_log(c, CTL_LOG_NOTICE,
		      "epoch %" PRIu32 ": rejoin of %s abandoned for the failures of epoch %" PRIu32 ": retried once idle",
		      c->epoch, c->nodes[c->rj_node].name, epoch);
		c->rj_has_ts = false;
		c->rj_ts = 0;
	}
	if (!failing(c)) {
		c->first_epoch = epoch;
		c->ep_start = c->nflog;
	}
	c->mark_gen++;
	for (i = 0; i < c->nnodes; i++) {
		struct ctl_node *n = &c->nodes[i];
		uint64_t ts;

		if (!disconnected(n) || n->mark == c->mark_gen)
			continue;
		ts = component(c, i, &nm);
		for (k = 0; k < nm; k++) {
			struct ctl_node *m = &c->nodes[c->members[k]];
			const struct ctl_fentry *rj = last_rejoin(c,
								  c->members[k]);
			uint64_t mts = ts;

			/*
			 * A rejoined incarnation's failure is never before
			 * its start (the component's ts may be 0: a ToR's
			 * commit register dead since the resume).
			 */
			if (rj && rj->rj_ts > mts)
				mts = rj->rj_ts;
			if (rj && rj->rj_ts > ts)
				q_log(c, CTL_LOG_INFO,
				      "epoch %" PRIu32 ": %s's ts raised from %" PRIu64 " to its first ts %" PRIu64 " (rejoin of epoch %" PRIu32 ")",
				      epoch, m->name, ts, mts, rj->rj_epoch);
			if (m->kind == CTL_NODE_HOST) {
				if (m->rj_owed)
					q_log(c, CTL_LOG_INFO,
					      "epoch %" PRIu32 ": %s fails again: its rejoin is no longer replayed to the %u hosts that did not answer it",
					      epoch, m->name, m->rj_owed);
				rj_owe_forget(c, c->members[k]);
			}
			m->failed = true;
			m->hist = true;
			m->fail_epoch = epoch;
			m->fail_ts = mts;
			m->flog_idx = c->nflog;
			/* fits: see CTL_FLOG_MAX */
			memset(&c->flog[c->nflog], 0, sizeof(c->flog[0]));
			c->flog[c->nflog].node = c->members[k];
			c->flog[c->nflog].epoch = epoch;
			c->flog[c->nflog++].ts = mts;
			if (m->kind == CTL_NODE_HOST) {
				nhf++;
				q_log(c, CTL_LOG_NOTICE,
				      "epoch %" PRIu32 ": host %s (%" PRIu32 ") failed at ts %" PRIu64,
				      epoch, m->name, m->host, mts);
			} else {
				q_log(c, CTL_LOG_NOTICE,
				      "epoch %" PRIu32 ": switch %s failed",
				      epoch, m->name);
			}
		}
	}
	c->epoch = epoch;
	c->st.decisions++;
	c->settling = false;
	c->ndisc = 0;
	c->proc = CTL_PROC_BROADCAST;
	c->phase_deadline = now + c->cfg.done_timeout_ns;
	set_owes(c);
	q_save(c);
	q_log(c, CTL_LOG_NOTICE,
	      "epoch %" PRIu32 ": decided, hosts failed: %u new, %u in the procedure since epoch %" PRIu32,
	      epoch, nhf, c->nflog - c->ep_start, c->first_epoch);
	for (i = 0; i < c->nnodes; i++) {
		const struct ctl_node *h = &c->nodes[i];

		if (h->kind == CTL_NODE_HOST && !h->failed && h->conn)
			send_proc_fails(c, i);
	}
	if (!c->owed_total) {
		q_log(c, CTL_LOG_INFO,
		      "epoch %" PRIu32 ": no DONE to wait for", epoch);
		enter_resuming(c, now);
	}
}

/* Every boundary link has a LINK_DOWN from its correct end. */
static bool boundary_reported(const struct ctl_logic *c)
{
	unsigned int i, e;

	for (i = 0; i < c->nlinks; i++) {
		const struct ctl_link *l = &c->links[i];

		for (e = 0; e < 2; e++)
			if (correct(&c->nodes[l->end[e]]) &&
			    disconnected(&c->nodes[l->end[!e]]) &&
			    !l->rep[e].down)
				return false;
	}
	return true;
}

/* After links changed: settle, decide, or call off a determination. */
static void evaluate(struct ctl_logic *c, uint64_t now)
{
	search(c);
	if (c->ndisc && c->proc == CTL_PROC_REJOINING && c->rj_has_ts) {
		/*
		 * Its ts went out: hosts reset their state about it, so
		 * the rejoin is committed.  Finish it before deciding
		 * anything new (the rejoined host may be cut off itself).
		 */
		q_log(c, CTL_LOG_NOTICE,
		      "epoch %" PRIu32 ": %u nodes disconnected: the rejoin of %s is committed, finished first",
		      c->epoch, c->ndisc, c->nodes[c->rj_node].name);
		commit_rejoin(c);
		search(c);
	}
	if (!c->ndisc) {
		if (c->settling) {
			c->settling = false;
			c->st.flaps++;
			q_log(c, CTL_LOG_NOTICE,
			      "everything reconnected before a decision: nobody fails");
		}
		return;
	}
	if (!c->settling) {
		c->settling = true;
		c->settle_since = now;
	}
	if (boundary_reported(c) ||
	    now >= c->settle_since + c->cfg.settle_ns) {
		decide(c, now);
		return;
	}
	q_log(c, CTL_LOG_INFO,
	      "%u nodes disconnected: waiting for boundary reports",
	      c->ndisc);
}

/* ---- rejoin -------------------------------------------------------------- */

/*
 * Failed host @h has a link to a node that is not failed and whose end
 * does not report it down (and, with @need_correct, that node is
 * connected now).  Only the far end's word counts: @h's own reports are
 * its old incarnation's, ignored since it failed, and a host that
 * restarted would never withdraw them.
 */
static bool attached(const struct ctl_logic *c, unsigned int h,
		     bool need_correct)
{
	const struct ctl_node *n = &c->nodes[h];
	unsigned int k;

	for (k = 0; k < n->deg; k++) {
		const struct ctl_link *l = nlink(c, n, k);
		unsigned int e = link_end(l, h);
		const struct ctl_node *o = &c->nodes[l->end[!e]];

		if (o->failed || l->rep[!e].down)
			continue;
		if (!need_correct || o->reached)
			return true;
	}
	return false;
}

/* A failed host that can rejoin now (the procedure being idle). */
static bool rejoin_candidate(const struct ctl_logic *c, unsigned int h)
{
	const struct ctl_node *n = &c->nodes[h];

	return n->kind == CTL_NODE_HOST && n->failed && n->conn &&
	       attached(c, h, true);
}

/*
 * Keep fewer than CTL_MAX_NODES rejoined entries (the oldest go) so that
 * the log cannot overflow however often hosts fail and rejoin.  A correct
 * host's latest entry stays (its rejoin may still be replayed, and its
 * first ts bounds its next failure's ts): there are fewer than
 * CTL_MAX_NODES of those, as the host about to rejoin is failed.  Only
 * while idle: entries move, and the procedure's owes index them.
 */
static void prune_history(struct ctl_logic *c)
{
	unsigned int i, j, nrj = 0, drop;

	for (i = 0; i < c->nflog; i++)
		nrj += c->flog[i].rejoined;
	if (nrj < CTL_MAX_NODES)
		return;
	drop = nrj - (CTL_MAX_NODES - 1);
	for (i = j = 0; i < c->nflog; i++) {
		struct ctl_node *n = &c->nodes[c->flog[i].node];

		if (drop && c->flog[i].rejoined &&
		    last_rejoin(c, c->flog[i].node) != &c->flog[i]) {
			drop--;
			continue;
		}
		if (n->hist && n->flog_idx == i)
			n->flog_idx = j;
		c->flog[j++] = c->flog[i];
	}
	q_log(c, CTL_LOG_NOTICE,
	      "failure log: the %u oldest rejoined entries dropped from the history",
	      c->nflog - j);
	c->nflog = j;
	c->ep_start = j;
}

/* A new epoch for failed host @h's rejoin: ask it for its first ts. */
static void start_rejoin(struct ctl_logic *c, uint64_t now, unsigned int h)
{
	const struct ctl_node *n = &c->nodes[h];

	prune_history(c);
	clear_owes(c);
	c->epoch++;
	c->first_epoch = c->epoch;
	c->ep_start = c->nflog;
	c->proc = CTL_PROC_REJOINING;
	c->rj_node = (uint16_t)h;
	c->rj_has_ts = false;
	c->rj_ts = 0;
	c->rj_tries = 1;
	c->phase_deadline = now + c->cfg.done_timeout_ns;
	q_save(c);
	q_log(c, CTL_LOG_NOTICE,
	      "epoch %" PRIu32 ": host %s (%" PRIu32 "), failed in epoch %" PRIu32 ", rejoins: asking it for its first timestamp",
	      c->epoch, n->name, n->host, n->fail_epoch);
	q_rejoin(c, h, false);
}

/* The rejoin is over, one way or the other: idle again. */
static void end_rejoin(struct ctl_logic *c)
{
	clear_owes(c);
	c->proc = CTL_PROC_IDLE;
	c->rj_has_ts = false;
	c->rj_ts = 0;
	q_save(c);
}

static void abort_rejoin(struct ctl_logic *c, const char *why)
{
	q_log(c, CTL_LOG_NOTICE,
	      "epoch %" PRIu32 ": rejoin of %s aborted (%s): it stays failed",
	      c->epoch, c->nodes[c->rj_node].name, why);
	end_rejoin(c);
}

/*
 * Every correct host was told, the done timeout passed, or something
 * new must be decided: the host is correct again (its ts went out, so
 * this cannot be undone).  Its failure stays in the log as history; the
 * hosts that did not answer yet keep owing DONE for it (ctl_logic.rj_owe)
 * and get the REJOIN again at their HELLO.  No graph search: the caller
 * runs one.
 */
static void commit_rejoin(struct ctl_logic *c)
{
	unsigned int hi = c->rj_node, k;
	struct ctl_node *h = &c->nodes[hi];
	struct ctl_fentry *fe = &c->flog[h->flog_idx];

	fe->rejoined = true;
	fe->rj_epoch = c->epoch;
	fe->rj_ts = c->rj_ts;
	h->failed = false;
	h->fail_epoch = 0;
	h->fail_ts = 0;
	h->rj_defer = 0;
	/* @flog_idx and @hist stay: the entry is its latest */
	/* its end's reports were the old incarnation's: start clean */
	for (k = 0; k < h->deg; k++) {
		struct ctl_link *l = &c->links[c->adj[h->adj + k]];

		memset(&l->rep[link_end(l, hi)], 0, sizeof(l->rep[0]));
	}
	memset(c->rj_owe[hi], 0, sizeof(c->rj_owe[hi]));
	h->rj_owed = 0;
	for (k = 0; k < c->nnodes; k++)
		if (c->nodes[k].owes)
			rj_owe_set(c, hi, k);
	c->st.rejoins++;
	q_log(c, CTL_LOG_NOTICE,
	      "epoch %" PRIu32 ": host %s (%" PRIu32 ") rejoined, first ts %" PRIu64,
	      c->epoch, h->name, h->host, c->rj_ts);
	if (h->rj_owed)
		q_log(c, CTL_LOG_NOTICE,
		      "epoch %" PRIu32 ": %u hosts still owe DONE for the rejoin of %s: REJOIN again at their HELLO",
		      c->epoch, h->rj_owed, h->name);
	end_rejoin(c);
	/* what any correct host gets at HELLO: it said HELLO while failed */
	if (h->conn)
		send_log(c, hi);
}

static void finish_rejoin(struct ctl_logic *c, uint64_t now)
{
	commit_rejoin(c);
	evaluate(c, now);
}

/*
 * After every event: abort a rejoin whose host is cut off again, and
 * start one when the procedure is idle and nothing settles.  Rejoins go
 * one at a time, oldest failure first: the kernel tells REJOINs apart by
 * their epoch, so every rejoin needs its own.
 */
static void rejoin_check(struct ctl_logic *c, uint64_t now)
{
	unsigned int i;
	int best = -1;

	if (c->proc == CTL_PROC_REJOINING &&
	    !attached(c, c->rj_node, false)) {
		if (!c->rj_has_ts) {
			abort_rejoin(c, "its links are reported down again");
		} else {
			/* committed: finished, then it fails anew */
			q_log(c, CTL_LOG_NOTICE,
			      "epoch %" PRIu32 ": %s is cut off again, but its first ts went out: rejoin finished first",
			      c->epoch, c->nodes[c->rj_node].name);
			finish_rejoin(c, now);
		}
	}
	if (c->proc != CTL_PROC_IDLE || c->settling)
		return;
	/* oldest failure first; hosts put at the back (rj_defer) last */
	for (i = 0; i < c->nflog; i++) {
		const struct ctl_node *n = &c->nodes[c->flog[i].node];

		if (c->flog[i].rejoined || !rejoin_candidate(c, c->flog[i].node))
			continue;
		if (!n->rj_defer) {
			start_rejoin(c, now, c->flog[i].node);
			return;
		}
		if (best < 0 || n->rj_defer < c->nodes[best].rj_defer)
			best = c->flog[i].node;
	}
	if (best >= 0)
		start_rejoin(c, now, (unsigned int)best);
}

/* ---- events -------------------------------------------------------------- */

static int ignore(struct ctl_logic *c, int err)
{
	c->st.ignored++;
	return err;
}

/**
 * ctl_hello() - a client said HELLO
 * @c: the controller
 * @now: current time (ns)
 * @node: its node name
 * @host: its host id (hosts; ignored for switches)
 *
 * Call once per connection (a repeated HELLO on the same connection need
 * not be passed on), and ctl_disconnect() when that connection closes.
 * A correct host gets the failure log (rejoined entries left out, but
 * for the FAIL and REJOIN pair of a committed rejoin it still owes DONE
 * for), the REJOIN it owes a DONE for (while REJOINING) and STATE; a
 * switch gets the RESUMEs it owes (while RESUMING) and STATE.  A failed host gets
 * nothing but may become a rejoin candidate; the rejoining host gets its
 * REJOIN again until it answered.
 *
 * Return: 0; -ENOENT for an unknown node, -EINVAL for a host id that is
 * not the node's (both ignored and counted).
 */
int ctl_hello(struct ctl_logic *c, uint64_t now, const char *node,
	      uint32_t host)
{
	int i = find_node(c, node);
	struct ctl_node *n;

	if (i < 0) {
		q_log(c, CTL_LOG_WARNING, "hello from unknown node '%.31s'",
		      node);
		return ignore(c, -ENOENT);
	}
	n = &c->nodes[i];
	if (n->kind == CTL_NODE_HOST && host != n->host) {
		q_log(c, CTL_LOG_WARNING,
		      "hello from %s with host id %" PRIu32 ", expected %" PRIu32,
		      n->name, host, n->host);
		return ignore(c, -EINVAL);
	}
	n->conn++;
	if (n->failed && c->proc == CTL_PROC_REJOINING && c->rj_node == i) {
		/* the same epoch again only repeats the kernel's answer */
		q_log(c, CTL_LOG_INFO, "%s connected while rejoining%s",
		      n->name, c->rj_has_ts ? "" : ": REJOIN again");
		if (!c->rj_has_ts)
			q_rejoin(c, i, false);
		return 0;
	}
	if (n->failed) {
		q_log(c, CTL_LOG_NOTICE,
		      "%s connected but failed in epoch %" PRIu32 ": it rejoins when connected through up links and nothing else is under way",
		      n->name, n->fail_epoch);
		rejoin_check(c, now);
		return 0;
	}
	q_log(c, CTL_LOG_INFO, "%s connected", n->name);
	if (n->kind == CTL_NODE_HOST) {
		send_log(c, i);
	} else {
		if (c->proc == CTL_PROC_RESUMING)
			send_resumes(c, i);
		q_send(c, i, CTL_STATE, c->epoch, 0, 0, -1);
	}
	return 0;
}

/**
 * ctl_disconnect() - a connection that said HELLO closed
 * @c: the controller
 * @now: current time (ns)
 * @node: its node name
 *
 * Only the control channel: the graph does not change.
 *
 * Return: 0, or -ENOENT for an unknown node.
 */
int ctl_disconnect(struct ctl_logic *c, uint64_t now, const char *node)
{
	int i = find_node(c, node);

	(void)now;
	if (i < 0)
		return -ENOENT;
	if (c->nodes[i].conn)
		c->nodes[i].conn--;
	q_log(c, CTL_LOG_INFO, "%s disconnected", c->nodes[i].name);
	return 0;
}

/* Common part of LINK_DOWN and LINK_UP. */
static int link_report(struct ctl_logic *c, uint64_t now, const char *reporter,
		       const char *peer, bool down, bool has_ts, uint64_t ts)
{
	int r = find_node(c, reporter), p = find_node(c, peer), li;
	struct ctl_link *l;
	struct ctl_report *rep;
	bool was_down, new_report, changed;
	unsigned int e;

	if (r < 0 || p < 0) {
		q_log(c, CTL_LOG_WARNING, "link report from %.31s about %.31s: unknown node",
		      reporter, peer);
		return ignore(c, -ENOENT);
	}
	li = find_link(c, r, p);
	if (li < 0) {
		q_log(c, CTL_LOG_WARNING, "link report from %s about %s: no such link",
		      reporter, peer);
		return ignore(c, -ENOENT);
	}
	if (c->nodes[r].failed) {
		q_log(c, CTL_LOG_DEBUG, "link report from failed node %s ignored",
		      reporter);
		return ignore(c, -ESRCH);
	}
	l = &c->links[li];
	e = link_end(l, r);
	rep = &l->rep[e];
	was_down = link_is_down(l);
	new_report = rep->down != down;
	has_ts = down && has_ts;
	ts = has_ts ? ts : 0;
	changed = new_report || rep->has_ts != has_ts || rep->ts != ts;
	rep->down = down;
	rep->has_ts = has_ts;
	rep->ts = ts;
	c->st.reports++;
	if (has_ts)
		q_log(c, changed ? CTL_LOG_INFO : CTL_LOG_DEBUG,
		      "%s: link to %s down, commit %" PRIu64 "%s",
		      reporter, peer, ts, changed ? "" : " (again)");
	else
		q_log(c, changed ? CTL_LOG_INFO : CTL_LOG_DEBUG,
		      "%s: link to %s %s%s", reporter, peer,
		      down ? "down" : "up", changed ? "" : " (again)");
	/*
	 * A standby must know of a change (a reporter does not repeat
	 * itself until it reconnects); a repeat changes nothing to save.
	 */
	if (changed)
		q_save(c);
	if (was_down != link_is_down(l) || (new_report && c->settling))
		evaluate(c, now);
	/* a failed node's far end may hear it again, or lose it again */
	rejoin_check(c, now);
	return 0;
}

/**
 * ctl_link_down() - LINK_DOWN: @reporter's link to @peer is silent
 * @c: the controller
 * @now: current time (ns)
 * @reporter: the reporting node
 * @peer: the node at the far end
 * @has_ts: @ts is valid
 * @ts: the reporter's last commit barrier on that link
 *
 * A repeated report replaces the previous one (its @ts too).
 *
 * Return: 0; -ENOENT (unknown node or link) or -ESRCH (the reporter has
 * failed): ignored and counted.
 */
int ctl_link_down(struct ctl_logic *c, uint64_t now, const char *reporter,
		  const char *peer, bool has_ts, uint64_t ts)
{
	return link_report(c, now, reporter, peer, true, has_ts, ts);
}

/**
 * ctl_link_up() - LINK_UP: @reporter hears @peer again
 * @c: the controller
 * @now: current time (ns)
 * @reporter: the reporting node
 * @peer: the node at the far end
 *
 * Withdraws @reporter's LINK_DOWN; before a decision this can call the
 * determination off.  Nodes already failed stay failed.
 *
 * Return: as ctl_link_down().
 */
int ctl_link_up(struct ctl_logic *c, uint64_t now, const char *reporter,
		const char *peer)
{
	return link_report(c, now, reporter, peer, false, false, 0);
}

/* ctl_host_done() while REJOINING: correct host @i is done with it. */
static int rejoin_done(struct ctl_logic *c, uint64_t now, unsigned int i,
		       uint32_t failed_host)
{
	struct ctl_node *h = &c->nodes[i];
	const struct ctl_node *r = &c->nodes[c->rj_node];

	if (failed_host != r->host || !c->rj_has_ts) {
		/* nobody was told yet, or it answers for another host */
		q_log(c, CTL_LOG_WARNING,
		      "done from %s for host %" PRIu32 ", not rejoining in epoch %" PRIu32 "%s",
		      h->name, failed_host, c->epoch,
		      c->rj_has_ts ? "" : " (no REJOIN sent yet)");
		return ignore(c, -ENOENT);
	}
	if (!h->owes)
		return 0;	/* a repeat: the REJOIN may be sent twice */
	h->owes = 0;
	if (!--c->owed_total) {
		q_log(c, CTL_LOG_INFO,
		      "epoch %" PRIu32 ": every correct host knows %s rejoined",
		      c->epoch, r->name);
		finish_rejoin(c, now);
		rejoin_check(c, now);
	}
	return 0;
}

/*
 * DONE {@epoch, host @h} from correct host @x for @h's last, committed
 * rejoin, which @x still owed: it is no longer replayed to @x.
 */
static bool rejoin_owed_done(struct ctl_logic *c, unsigned int x,
			     unsigned int h, uint32_t epoch)
{
	const struct ctl_fentry *fe = last_rejoin(c, h);

	if (!fe || !rj_owes(c, h, x) || fe->rj_epoch != epoch)
		return false;
	rj_owe_clear(c, h, x);
	q_log(c, CTL_LOG_INFO,
	      "%s is done with the rejoin of %s (epoch %" PRIu32 "), %u hosts still owe it",
	      c->nodes[x].name, c->nodes[h].name, epoch, c->nodes[h].rj_owed);
	q_save(c);
	return true;
}

/**
 * ctl_host_done() - DONE from a host's agent
 * @c: the controller
 * @now: current time (ns)
 * @node: the host's node name
 * @epoch: the epoch it answers
 * @failed_host: the failed host's id it is done with
 *
 * While REJOINING, @failed_host is the rejoining host: the DONE answers
 * the REJOIN with its first timestamp.  During BROADCAST, a DONE for a
 * host failed in the procedure counts for any epoch from that failure's
 * own to the current one (the kernel answers a repeated FAIL with the
 * epoch of the FAIL it applied first).  In any phase, a DONE for the
 * epoch of a committed rejoin that the sender still owes counts.
 *
 * Return: 0 (also for repeated DONEs); -ESTALE for an earlier epoch
 * (counted in @stale); -ENOENT, -EINVAL, -ERANGE (a later epoch) or
 * -ESRCH (failed sender): ignored and counted.
 */
int ctl_host_done(struct ctl_logic *c, uint64_t now, const char *node,
		  uint32_t epoch, uint32_t failed_host)
{
	int i = find_node(c, node), f;
	struct ctl_node *h;
	unsigned int k;
	bool earlier;

	if (i < 0)
		return ignore(c, -ENOENT);
	h = &c->nodes[i];
	if (h->kind != CTL_NODE_HOST)
		return ignore(c, -EINVAL);
	if (h->failed)
		return ignore(c, -ESRCH);
	if (epoch > c->epoch) {
		q_log(c, CTL_LOG_WARNING,
		      "done from %s for epoch %" PRIu32 " (current %" PRIu32 ")",
		      h->name, epoch, c->epoch);
		return ignore(c, -ERANGE);
	}
	f = find_host(c, failed_host);
	if (f >= 0 && rejoin_owed_done(c, (unsigned int)i, (unsigned int)f,
				       epoch))
		return 0;
	/* the kernel's answer to a FAIL it applied in an earlier epoch */
	earlier = epoch < c->epoch && c->proc == CTL_PROC_BROADCAST &&
		  f >= 0 && in_proc(c, &c->nodes[f]) &&
		  c->nodes[f].fail_epoch <= epoch;
	if ((epoch < c->epoch && !earlier) ||
	    (c->proc != CTL_PROC_BROADCAST && c->proc != CTL_PROC_REJOINING)) {
		c->st.stale++;
		return -ESTALE;
	}
	if (c->proc == CTL_PROC_REJOINING)
		return rejoin_done(c, now, i, failed_host);
	if (f < 0 || !in_proc(c, &c->nodes[f])) {
		q_log(c, CTL_LOG_WARNING,
		      "done from %s for host %" PRIu32 ", not failed in epoch %" PRIu32,
		      h->name, failed_host, epoch);
		return ignore(c, -ENOENT);
	}
	k = c->nodes[f].flog_idx - c->ep_start;
	if (!(c->owe[i][k / 64] & 1ULL << (k % 64)))
		return 0;	/* a repeat: FAILs may be sent twice */
	c->owe[i][k / 64] &= ~(1ULL << (k % 64));
	h->owes--;
	c->owed_total--;
	if (!c->owed_total) {
		q_log(c, CTL_LOG_INFO,
		      "epoch %" PRIu32 ": every correct host is done", epoch);
		enter_resuming(c, now);
		rejoin_check(c, now);
	}
	return 0;
}

/**
 * ctl_switch_done() - DONE from a switch: RESUME of @port applied
 * @c: the controller
 * @now: current time (ns)
 * @node: the switch's node name
 * @epoch: the epoch it answers
 * @port: the port (its far-end node name)
 *
 * Return: as ctl_host_done().
 */
int ctl_switch_done(struct ctl_logic *c, uint64_t now, const char *node,
		    uint32_t epoch, const char *port)
{
	int i = find_node(c, node), p, li;
	struct ctl_link *l;
	unsigned int e;

	if (i < 0)
		return ignore(c, -ENOENT);
	if (c->nodes[i].kind != CTL_NODE_SWITCH)
		return ignore(c, -EINVAL);
	if (c->nodes[i].failed)
		return ignore(c, -ESRCH);
	if (epoch > c->epoch) {
		q_log(c, CTL_LOG_WARNING,
		      "done from %s for epoch %" PRIu32 " (current %" PRIu32 ")",
		      node, epoch, c->epoch);
		return ignore(c, -ERANGE);
	}
	if (epoch < c->epoch || c->proc != CTL_PROC_RESUMING) {
		c->st.stale++;
		return -ESTALE;
	}
	p = find_node(c, port);
	li = p < 0 ? -1 : find_link(c, i, p);
	if (li < 0) {
		q_log(c, CTL_LOG_WARNING, "done from %s for unknown port %.31s",
		      node, port);
		return ignore(c, -ENOENT);
	}
	l = &c->links[li];
	e = link_end(l, i);
	if (!l->resume_owed[e])
		return in_proc(c, &c->nodes[p]) ? 0 : ignore(c, -ENOENT);
	l->resume_owed[e] = false;
	if (!--c->resume_total) {
		go_idle(c);
		rejoin_check(c, now);
	}
	return 0;
}

/**
 * ctl_rejoined() - REJOINED from the rejoining host's agent
 * @c: the controller
 * @now: current time (ns)
 * @node: the sender's node name
 * @epoch: the epoch of the REJOIN it answers
 * @host: the host id it rejoined as
 * @has_ts: @ts is valid
 * @ts: the new incarnation's first timestamp
 *
 * The answer is saved, then every connected correct host gets REJOIN
 * with @ts and owes a DONE for it.  Only the first answer counts: the
 * kernel answers a repeated REJOIN with the same timestamp.
 *
 * Return: 0 (also for a repeat); -ESTALE for an earlier epoch or when no
 * rejoin is under way (counted in @stale); -ENOENT (unknown node),
 * -EINVAL (not the rejoining host, or no ts), -ERANGE (a later epoch),
 * -EEXIST (another ts than the first answer's): ignored and counted.
 */
int ctl_rejoined(struct ctl_logic *c, uint64_t now, const char *node,
		 uint32_t epoch, uint32_t host, bool has_ts, uint64_t ts)
{
	int i = find_node(c, node);
	unsigned int k;

	if (i < 0)
		return ignore(c, -ENOENT);
	if (epoch > c->epoch) {
		q_log(c, CTL_LOG_WARNING,
		      "rejoined from %s for epoch %" PRIu32 " (current %" PRIu32 ")",
		      c->nodes[i].name, epoch, c->epoch);
		return ignore(c, -ERANGE);
	}
	if (epoch < c->epoch || c->proc != CTL_PROC_REJOINING) {
		c->st.stale++;
		return -ESTALE;
	}
	if ((unsigned int)i != c->rj_node || host != c->nodes[i].host ||
	    !has_ts) {
		q_log(c, CTL_LOG_WARNING,
		      "rejoined from %s (host %" PRIu32 "%s) in epoch %" PRIu32 ": %s is rejoining",
		      c->nodes[i].name, host, has_ts ? "" : ", no ts", epoch,
		      c->nodes[c->rj_node].name);
		return ignore(c, -EINVAL);
	}
	if (c->rj_has_ts) {
		if (ts == c->rj_ts)
			return 0;
		q_log(c, CTL_LOG_WARNING,
		      "epoch %" PRIu32 ": %s answered first ts %" PRIu64 ", then %" PRIu64 ": the first counts",
		      epoch, node, c->rj_ts, ts);
		return ignore(c, -EEXIST);
	}
	c->rj_has_ts = true;
	c->rj_ts = ts;
	clear_owes(c);
	for (k = 0; k < c->nnodes; k++) {
		struct ctl_node *h = &c->nodes[k];

		if (h->kind == CTL_NODE_HOST && !h->failed) {
			h->owes = 1;
			c->owed_total++;
		}
	}
	c->phase_deadline = now + c->cfg.done_timeout_ns;
	/* the ts is the decision now: saved before anybody hears of it */
	q_save(c);
	q_log(c, CTL_LOG_NOTICE,
	      "epoch %" PRIu32 ": %s rejoins with first ts %" PRIu64 ": telling %u hosts",
	      epoch, node, ts, c->owed_total);
	for (k = 0; k < c->nnodes; k++)
		if (c->nodes[k].owes && c->nodes[k].conn)
			q_rejoin(c, k, true);
	if (!c->owed_total)
		finish_rejoin(c, now);
	rejoin_check(c, now);
	return 0;
}

/**
 * ctl_unreach() - UNREACH: @reporter gets no reliable ACK from @host
 * @c: the controller
 * @now: current time (ns)
 * @reporter: the reporting host's node name
 * @host: the unreachable host's id
 *
 * Recorded and logged only.  Reachability is the link reports' business;
 * what UNREACH starts happens in the reporter's module: while controlled,
 * it relays its reliable packets for @host through the controller
 * (RELAY, ctl_relay()) besides the network, until the network carries
 * them again.  Nothing here needs to be told.
 *
 * Return: 0, or -ENOENT for an unknown reporter (ignored and counted).
 */
int ctl_unreach(struct ctl_logic *c, uint64_t now, const char *reporter,
		uint32_t host)
{
	int r = find_node(c, reporter), t = find_host(c, host);

	(void)now;
	if (r < 0)
		return ignore(c, -ENOENT);
	c->st.unreach++;
	c->nodes[r].unreach++;
	q_log(c, CTL_LOG_NOTICE,
	      "%s gets no ACK from host %" PRIu32 " (%s): its module relays its packets for it through the controller",
	      c->nodes[r].name, host, t < 0 ? "unknown" : c->nodes[t].name);
	return 0;
}

/*
 * A relay refused: counted, and logged at most once per CTL_RELAY_LOG_NS
 * with the number refused since the last line (each broken path relays
 * every packet, so one line per drop would flood the log).
 */
__attribute__((format(printf, 4, 5)))
static int relay_drop(struct ctl_logic *c, uint64_t now, int err,
		      const char *fmt, ...)
{
	char text[CTL_LOG_LEN];
	va_list ap;

	c->st.relay_dropped++;
	if (c->relay_logged && now - c->relay_log_at < CTL_RELAY_LOG_NS) {
		c->relay_unlogged++;
		return err;
	}
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (c->relay_unlogged)
		q_log(c, CTL_LOG_WARNING,
		      "relay dropped: %s (and %" PRIu64 " more since the last such line)",
		      text, c->relay_unlogged);
	else
		q_log(c, CTL_LOG_WARNING, "relay dropped: %s", text);
	c->relay_logged = true;
	c->relay_log_at = now;
	c->relay_unlogged = 0;
	return err;
}

/**
 * ctl_relay() - where a RELAY goes: controller forwarding
 * @c: the controller
 * @now: current time (ns), only for the rate limit of its log line
 * @from: the node name of the connection it came on
 * @src_host: the source host id in the relayed packet's header
 * @dst_host: its destination host id (the daemon has checked that the
 *	header and the message agree)
 * @to: set to the destination's node name when it is to be passed on
 *
 * A host whose module gets no ACK from a peer relays its reliable
 * packets for it through the controller (ctl_proto.h, CTL_RELAY); the
 * daemon passes the datagram on unchanged to the destination host's
 * connection.  This decides whether it may: the sender must be a correct
 * host speaking for itself (a failed one is out of the reliable service
 * until it rejoins: what it sends now must reach nobody, or recalls done
 * for its failure would be undone), and the destination another host of
 * the topology, not failed, with a connection.  No state changes and
 * nothing is saved: a relay is a packet, which the module resends if it
 * is lost.  O(1).
 *
 * Return: 0 (counted in relayed), or, counted in relay_dropped and logged
 * rate-limited: -ENOENT (the sender is not in the topology), -EINVAL (it
 * is a switch, or sends to itself), -EPERM (@src_host is not the sender's
 * host id: forged), -EHOSTUNREACH (no host @dst_host), -EHOSTDOWN (the
 * sender or the destination is failed and has not rejoined), -ENOTCONN
 * (the destination has no connection).
 */
int ctl_relay(struct ctl_logic *c, uint64_t now, const char *from,
	      uint32_t src_host, uint32_t dst_host, char to[CTL_NAME_LEN])
{
	int s = find_node(c, from), d;
	struct ctl_node *sn, *dn;

	if (s < 0)
		return relay_drop(c, now, -ENOENT, "from unknown node '%.31s'",
				  from);
	sn = &c->nodes[s];
	if (sn->kind != CTL_NODE_HOST)
		return relay_drop(c, now, -EINVAL,
				  "from %s, which is not a host", sn->name);
	if (src_host != sn->host)
		return relay_drop(c, now, -EPERM,
				  "from %s (host %" PRIu32 ") with source host %" PRIu32 " (forged)",
				  sn->name, sn->host, src_host);
	if (sn->failed)
		return relay_drop(c, now, -EHOSTDOWN,
				  "from %s, failed in epoch %" PRIu32,
				  sn->name, sn->fail_epoch);
	d = find_host(c, dst_host);
	if (d < 0 || c->nodes[d].kind != CTL_NODE_HOST)
		return relay_drop(c, now, -EHOSTUNREACH,
				  "from %s to unknown host %" PRIu32,
				  sn->name, dst_host);
	dn = &c->nodes[d];
	if (d == s)
		return relay_drop(c, now, -EINVAL, "from %s to itself",
				  sn->name);
	if (dn->failed)
		return relay_drop(c, now, -EHOSTDOWN,
				  "from %s to %s, failed in epoch %" PRIu32,
				  sn->name, dn->name, dn->fail_epoch);
	if (!dn->conn)
		return relay_drop(c, now, -ENOTCONN,
				  "from %s to %s, not connected", sn->name,
				  dn->name);
	memcpy(to, dn->name, CTL_NAME_LEN);
	c->st.relayed++;
	sn->relays++;
	return 0;
}

/*
 * The done timeout while REJOINING.  Hosts' DONEs are not waited for any
 * longer (logged; they stay owed and get the REJOIN at their HELLO).
 * Without the rejoining host's first ts nobody can be told: it is asked
 * again while connected, up to CTL_REJOIN_TRIES REJOINs in all; if it is
 * gone or never answers, the rejoin is called off (it is a candidate
 * again, at its next HELLO or behind the other candidates) rather than
 * blocking other rejoins.
 */
static void rejoin_timeout(struct ctl_logic *c, uint64_t now)
{
	const struct ctl_node *r = &c->nodes[c->rj_node];
	unsigned int i;

	if (c->rj_has_ts) {
		for (i = 0; i < c->nnodes; i++)
			if (c->nodes[i].owes)
				q_log(c, CTL_LOG_WARNING,
				      "epoch %" PRIu32 ": host %s did not answer DONE for the rejoin of %s: still owed, REJOIN again at its HELLO",
				      c->epoch, c->nodes[i].name, r->name);
		finish_rejoin(c, now);
	} else if (!r->conn) {
		abort_rejoin(c, "no REJOINED, not connected");
	} else if (c->rj_tries >= CTL_REJOIN_TRIES) {
		char why[64];

		snprintf(why, sizeof(why),
			 "no REJOINED after %u REJOINs: others go first",
			 c->rj_tries);
		abort_rejoin(c, why);
		c->nodes[c->rj_node].rj_defer = ++c->defer_gen;
	} else {
		c->rj_tries++;
		q_log(c, CTL_LOG_WARNING,
		      "epoch %" PRIu32 ": %s has not answered REJOINED: asking again",
		      c->epoch, r->name);
		q_rejoin(c, c->rj_node, false);
		c->phase_deadline = now + c->cfg.done_timeout_ns;
	}
}

/**
 * ctl_tick() - time passed: settle and done timeouts
 * @c: the controller
 * @now: current time (ns)
 *
 * Call at ctl_next_deadline() (earlier or later is harmless).
 *
 * Return: 0.
 */
int ctl_tick(struct ctl_logic *c, uint64_t now)
{
	unsigned int i, e;

	if (c->settling && now >= c->settle_since + c->cfg.settle_ns)
		evaluate(c, now);
	if (c->proc == CTL_PROC_BROADCAST && now >= c->phase_deadline) {
		for (i = 0; i < c->nnodes; i++)
			if (c->nodes[i].owes)
				q_log(c, CTL_LOG_WARNING,
				      "epoch %" PRIu32 ": host %s did not answer DONE for %u failed hosts",
				      c->epoch, c->nodes[i].name,
				      c->nodes[i].owes);
		enter_resuming(c, now);
	} else if (c->proc == CTL_PROC_REJOINING &&
		   now >= c->phase_deadline) {
		rejoin_timeout(c, now);
	} else if (c->proc == CTL_PROC_RESUMING && now >= c->phase_deadline) {
		/* never given up on: ask again whoever can hear it */
		for (i = 0; i < c->nlinks; i++) {
			const struct ctl_link *l = &c->links[i];

			for (e = 0; e < 2; e++) {
				if (!l->resume_owed[e])
					continue;
				q_log(c, CTL_LOG_WARNING,
				      "epoch %" PRIu32 ": switch %s has not resumed port %s",
				      c->epoch, c->nodes[l->end[e]].name,
				      c->nodes[l->end[!e]].name);
				if (c->nodes[l->end[e]].conn)
					q_send(c, l->end[e], CTL_RESUME,
					       c->epoch, 0, 0, l->end[!e]);
			}
		}
		c->phase_deadline = now + c->cfg.done_timeout_ns;
	}
	rejoin_check(c, now);
	return 0;
}

/**
 * ctl_next_deadline() - when ctl_tick() must be called next
 * @c: the controller
 * @when: the time (ns), if any
 *
 * Return: false if no timer runs (then only events change anything).
 */
bool ctl_next_deadline(const struct ctl_logic *c, uint64_t *when)
{
	bool any = false;
	uint64_t t = UINT64_MAX;

	if (c->settling) {
		t = c->settle_since + c->cfg.settle_ns;
		any = true;
	}
	if (c->proc != CTL_PROC_IDLE) {
		if (c->phase_deadline < t)
			t = c->phase_deadline;
		any = true;
	}
	if (any)
		*when = t;
	return any;
}

/**
 * ctl_handle_msg() - dispatch a well-formed message from a client
 * @c: the controller
 * @now: current time (ns)
 * @m: the message (ctl_msg_check() passed)
 *
 * HELLO, LINK_DOWN, LINK_UP, UNREACH, DONE (from a host or a switch,
 * by the sender's node kind) and REJOINED.  HELLO: see ctl_hello() about
 * connections.
 *
 * Return: what the event's function returned; -EOPNOTSUPP for other
 * types (ignored and counted).
 */
int ctl_handle_msg(struct ctl_logic *c, uint64_t now, const struct ctl_msg *m)
{
	char node[CTL_NAME_LEN], peer[CTL_NAME_LEN];
	int i;

	/* names are checked by ctl_msg_check(); be safe anyway */
	memcpy(node, m->node, CTL_NAME_LEN);
	memcpy(peer, m->peer, CTL_NAME_LEN);
	node[CTL_NAME_LEN - 1] = peer[CTL_NAME_LEN - 1] = 0;
	switch (m->type) {
	case CTL_HELLO:
		return ctl_hello(c, now, node, m->host);
	case CTL_LINK_DOWN:
		return ctl_link_down(c, now, node, peer,
				     m->flags & CTL_F_HAS_TS, m->ts);
	case CTL_LINK_UP:
		return ctl_link_up(c, now, node, peer);
	case CTL_UNREACH:
		return ctl_unreach(c, now, node, m->host);
	case CTL_DONE:
		i = find_node(c, node);
		if (i >= 0 && c->nodes[i].kind == CTL_NODE_SWITCH)
			return ctl_switch_done(c, now, node, m->epoch, peer);
		return ctl_host_done(c, now, node, m->epoch, m->host);
	case CTL_REJOINED:
		return ctl_rejoined(c, now, node, m->epoch, m->host,
				    m->flags & CTL_F_HAS_TS, m->ts);
	default:
		return ignore(c, -EOPNOTSUPP);
	}
}

/**
 * ctl_count_bad() - count a malformed message (ctl_msg_check() failed)
 * @c: the controller
 */
void ctl_count_bad(struct ctl_logic *c)
{
	c->st.bad++;
}

/* ---- text output --------------------------------------------------------- */

/* An snprintf-style appender: @len counts what was needed. */
struct tbuf {
	char *p;
	size_t size;
	size_t len;
};

__attribute__((format(printf, 2, 3)))
static void tb_printf(struct tbuf *b, const char *fmt, ...)
{
	va_list ap;
	size_t room = b->len < b->size ? b->size - b->len : 0;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? b->p + b->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len += (size_t)n;
}

static const char *const proc_names[] = {
	[CTL_PROC_IDLE] = "idle",
	[CTL_PROC_BROADCAST] = "broadcast",
	[CTL_PROC_RESUMING] = "resuming",
	[CTL_PROC_REJOINING] = "rejoining",
};

#define CTL_NPROC	(sizeof(proc_names) / sizeof(proc_names[0]))

/* "owe"-style lines: @key, then up to CTL_OWE_CHUNK names a line. */
static void tb_names(struct tbuf *b, const char *key, const char *name,
		     unsigned int *words)
{
	if (!*words)
		tb_printf(b, "%s", key);
	tb_printf(b, " %s", name);
	if (++*words == CTL_OWE_CHUNK) {
		tb_printf(b, "\n");
		*words = 0;
	}
}

/**
 * ctl_encode() - the state as a text blob, for the store
 * @c: the controller
 * @buf: where to write it (NUL-terminated, truncated to @size), may be
 *	NULL if @size is 0
 * @size: room in @buf
 *
 * The blob holds the epoch, the procedure (phase, first epoch, owed DONEs
 * and RESUMEs, the rejoin under way and its first ts), the failure log
 * in decision order (epoch, ts; rejoined entries with the rejoin's epoch
 * and first ts), the hosts that still owe DONE for a committed rejoin
 * and every LINK_DOWN in force (with its ts).  Not connections, timers,
 * counters, the rejoin tries and candidate order.
 *
 * Return: the blob's length (without the NUL), as snprintf().
 */
size_t ctl_encode(const struct ctl_logic *c, char *buf, size_t size)
{
	struct tbuf b = { buf, size, 0 };
	unsigned int i, k, e, nep = c->nflog - c->ep_start;

	if (size)
		buf[0] = 0;
	tb_printf(&b, "%s\n", CTL_STATE_MAGIC);
	tb_printf(&b, "epoch %" PRIu32 "\n", c->epoch);
	tb_printf(&b, "phase %s\n", proc_names[c->proc]);
	tb_printf(&b, "first-epoch %" PRIu32 "\n", c->first_epoch);
	for (i = 0; i < c->nflog; i++) {
		const struct ctl_fentry *fe = &c->flog[i];

		tb_printf(&b, "fail %s %" PRIu32 " %" PRIu64,
			  c->nodes[fe->node].name, fe->epoch, fe->ts);
		if (fe->rejoined)
			tb_printf(&b, " rejoined %" PRIu32 " %" PRIu64,
				  fe->rj_epoch, fe->rj_ts);
		tb_printf(&b, "\n");
	}
	if (c->proc == CTL_PROC_REJOINING) {
		tb_printf(&b, "rejoin %s", c->nodes[c->rj_node].name);
		if (c->rj_has_ts)
			tb_printf(&b, " %" PRIu64, c->rj_ts);
		tb_printf(&b, "\n");
	}
	for (i = 0; i < c->nlinks; i++) {
		const struct ctl_link *l = &c->links[i];

		for (e = 0; e < 2; e++) {
			if (!l->rep[e].down)
				continue;
			tb_printf(&b, "down %s %s", c->nodes[l->end[e]].name,
				  c->nodes[l->end[!e]].name);
			if (l->rep[e].has_ts)
				tb_printf(&b, " %" PRIu64, l->rep[e].ts);
			tb_printf(&b, "\n");
		}
	}
	for (i = 0; c->proc != CTL_PROC_REJOINING && i < c->nnodes; i++) {
		unsigned int words = 0;
		char key[CTL_NAME_LEN + 4];

		/* CTL_OWE_CHUNK names a line, to bound the line length */
		snprintf(key, sizeof(key), "owe %s", c->nodes[i].name);
		for (k = 0; k < nep && c->nodes[i].owes; k++) {
			const struct ctl_fentry *fe = &c->flog[c->ep_start + k];

			if (c->owe[i][k / 64] & 1ULL << (k % 64))
				tb_names(&b, key, c->nodes[fe->node].name,
					 &words);
		}
		if (words)
			tb_printf(&b, "\n");
	}
	if (c->proc == CTL_PROC_REJOINING) {
		unsigned int words = 0;

		for (i = 0; i < c->nnodes; i++)
			if (c->nodes[i].owes)
				tb_names(&b, "rejoin-wait", c->nodes[i].name,
					 &words);
		if (words)
			tb_printf(&b, "\n");
	}
	for (i = 0; i < c->nnodes; i++) {
		unsigned int words = 0;
		char key[CTL_NAME_LEN + 12];

		if (!c->nodes[i].rj_owed)
			continue;
		snprintf(key, sizeof(key), "rejoin-owe %s", c->nodes[i].name);
		for (k = 0; k < c->nnodes; k++)
			if (rj_owes(c, i, k))
				tb_names(&b, key, c->nodes[k].name, &words);
		if (words)
			tb_printf(&b, "\n");
	}
	for (i = 0; i < c->nlinks; i++) {
		const struct ctl_link *l = &c->links[i];

		for (e = 0; e < 2; e++)
			if (l->resume_owed[e])
				tb_printf(&b, "resume %s %s\n",
					  c->nodes[l->end[e]].name,
					  c->nodes[l->end[!e]].name);
	}
	tb_printf(&b, "end\n");
	return b.len;
}

/* Forget every decision and report (the graph stays). */
static void reset_state(struct ctl_logic *c)
{
	unsigned int i;

	for (i = 0; i < c->nnodes; i++) {
		struct ctl_node *n = &c->nodes[i];

		memset(c->owe[i], 0, sizeof(c->owe[i]));
		n->failed = false;
		n->fail_epoch = 0;
		n->fail_ts = 0;
		n->flog_idx = 0;
		n->hist = false;
		n->rj_owed = 0;
		n->rj_defer = 0;
		n->owes = 0;
	}
	memset(c->rj_owe, 0, sizeof(c->rj_owe));
	c->rj_tries = 0;
	c->defer_gen = 0;
	for (i = 0; i < c->nlinks; i++) {
		memset(c->links[i].rep, 0, sizeof(c->links[i].rep));
		c->links[i].resume_owed[0] = c->links[i].resume_owed[1] = false;
	}
	c->epoch = 0;
	c->proc = CTL_PROC_IDLE;
	c->first_epoch = 0;
	c->nflog = 0;
	c->ep_start = 0;
	c->owed_total = 0;
	c->resume_total = 0;
	c->settling = false;
	c->rj_node = 0;
	c->rj_has_ts = false;
	c->rj_ts = 0;
}

/* The parser of ctl_decode(); the state is reset first. */
static int decode_lines(struct ctl_logic *c, const char *blob, size_t len,
			char *err, size_t errlen)
{
	char line[CTL_LINE_MAX];
	unsigned int lineno = 0, i, k;
	bool seen_end = false, seen_magic = false, seen_rejoin = false;
	size_t pos = 0;
	char *w[CTL_OWE_CHUNK + 3];
	int n, r, a, b;
	uint64_t v;

	while ((r = next_line(blob, len, &pos, line))) {
		lineno++;
		if (r < 0) {
			set_err(err, errlen, lineno, "line too long");
			return -EINVAL;
		}
		n = split_words(line, w, CTL_OWE_CHUNK + 2);
		if (!n)
			continue;
		if (n > CTL_OWE_CHUNK + 2) {
			set_err(err, errlen, lineno, "too many words");
			return -EINVAL;
		}
		if (seen_end) {
			set_err(err, errlen, lineno, "text after 'end'");
			return -EINVAL;
		}
		if (!seen_magic) {
			if (n != 2 || strcmp(w[0], "onepipe-ctl-state") ||
			    strcmp(w[1], "1")) {
				set_err(err, errlen, lineno,
					"not a controller state (version 1)");
				return -EINVAL;
			}
			seen_magic = true;
		} else if (!strcmp(w[0], "epoch") && n == 2 &&
			   parse_u32(w[1], &c->epoch)) {
		} else if (!strcmp(w[0], "first-epoch") && n == 2 &&
			   parse_u32(w[1], &c->first_epoch)) {
		} else if (!strcmp(w[0], "phase") && n == 2) {
			for (i = 0; i < CTL_NPROC &&
			     strcmp(w[1], proc_names[i]); i++)
				;
			if (i == CTL_NPROC) {
				set_err(err, errlen, lineno, "bad phase '%.20s'",
					w[1]);
				return -EINVAL;
			}
			c->proc = (enum ctl_proc)i;
		} else if (!strcmp(w[0], "fail") &&
			   (n == 4 || (n == 7 && !strcmp(w[4], "rejoined")))) {
			struct ctl_fentry *fe = &c->flog[c->nflog];
			struct ctl_node *f;
			uint32_t ep, rj_ep = 0;
			uint64_t rj_ts = 0;

			/*
			 * In decision order; a node's entries before its
			 * last are rejoined, and a rejoin follows its failure.
			 */
			a = find_node(c, w[1]);
			if (a < 0 || c->nodes[a].failed ||
			    c->nflog == CTL_FLOG_MAX ||
			    !parse_u32(w[2], &ep) || !ep ||
			    !parse_u64(w[3], &v) ||
			    (n == 7 && (!parse_u32(w[5], &rj_ep) ||
					rj_ep <= ep ||
					!parse_u64(w[6], &rj_ts))) ||
			    (c->nflog && ep < c->flog[c->nflog - 1].epoch)) {
				set_err(err, errlen, lineno,
					"bad failure '%.40s'", w[1]);
				return -EINVAL;
			}
			memset(fe, 0, sizeof(*fe));
			fe->node = (uint16_t)a;
			fe->epoch = ep;
			fe->ts = v;
			fe->rejoined = n == 7;
			fe->rj_epoch = rj_ep;
			fe->rj_ts = rj_ts;
			f = &c->nodes[a];
			f->hist = true;
			f->flog_idx = c->nflog;
			if (!fe->rejoined) {
				f->failed = true;
				f->fail_epoch = ep;
				f->fail_ts = v;
			}
			c->nflog++;
		} else if (!strcmp(w[0], "rejoin") && (n == 2 || n == 3) &&
			   !seen_rejoin) {
			a = find_node(c, w[1]);
			if (a < 0 || (n == 3 && !parse_u64(w[2], &v))) {
				set_err(err, errlen, lineno,
					"bad rejoin '%.40s'", w[1]);
				return -EINVAL;
			}
			seen_rejoin = true;
			c->rj_node = (uint16_t)a;
			c->rj_has_ts = n == 3;
			c->rj_ts = n == 3 ? v : 0;
		} else if (!strcmp(w[0], "down") && (n == 3 || n == 4)) {
			struct ctl_report *rep;
			int li;

			a = find_node(c, w[1]);
			b = find_node(c, w[2]);
			li = a < 0 || b < 0 ? -1 : find_link(c, a, b);
			if (li < 0 || (n == 4 && !parse_u64(w[3], &v))) {
				set_err(err, errlen, lineno,
					"bad report %.40s %.40s", w[1], w[2]);
				return -EINVAL;
			}
			rep = &c->links[li].rep[link_end(&c->links[li], a)];
			rep->down = true;
			rep->has_ts = n == 4;
			rep->ts = n == 4 ? v : 0;
		} else if ((!strcmp(w[0], "owe") && n >= 3) ||
			   (!strcmp(w[0], "rejoin-owe") && n >= 3) ||
			   (!strcmp(w[0], "rejoin-wait") && n >= 2)) {
			/* resolved once every failure is known */
		} else if (!strcmp(w[0], "resume") && n == 3) {
			/* likewise */
		} else if (!strcmp(w[0], "end") && n == 1) {
			seen_end = true;
		} else {
			set_err(err, errlen, lineno, "bad line '%.40s'", w[0]);
			return -EINVAL;
		}
	}
	if (!seen_end) {
		set_err(err, errlen, lineno, "truncated state (no 'end')");
		return -EINVAL;
	}
	for (i = 0; i < c->nflog; i++) {
		const struct ctl_fentry *fe = &c->flog[i];

		if (fe->epoch > c->epoch ||
		    (fe->rejoined && fe->rj_epoch > c->epoch)) {
			set_err(err, errlen, 0, "a failure after the epoch");
			return -EINVAL;
		}
	}
	if (c->proc != CTL_PROC_IDLE &&
	    (!c->first_epoch || c->first_epoch > c->epoch)) {
		set_err(err, errlen, 0, "bad first epoch");
		return -EINVAL;
	}
	/* a rejoin is its own epoch: the last one, of a failed host */
	if (seen_rejoin != (c->proc == CTL_PROC_REJOINING) ||
	    (seen_rejoin && (c->first_epoch != c->epoch ||
			     c->nodes[c->rj_node].kind != CTL_NODE_HOST ||
			     !c->nodes[c->rj_node].failed ||
			     c->nodes[c->rj_node].fail_epoch >= c->epoch))) {
		set_err(err, errlen, 0, "bad rejoin");
		return -EINVAL;
	}
	for (i = 0; i < c->nflog && c->flog[i].epoch < c->first_epoch; i++)
		;
	c->ep_start = failing(c) ? i : c->nflog;

	/* second pass: what is owed, now that the failures are known */
	pos = 0;
	lineno = 0;
	while ((r = next_line(blob, len, &pos, line)) > 0) {
		lineno++;
		n = split_words(line, w, CTL_OWE_CHUNK + 2);
		if (n >= 3 && !strcmp(w[0], "owe")) {
			struct ctl_node *h;

			a = find_node(c, w[1]);
			if (c->proc != CTL_PROC_BROADCAST || a < 0 ||
			    c->nodes[a].kind != CTL_NODE_HOST ||
			    c->nodes[a].failed) {
				set_err(err, errlen, lineno, "bad owe '%.40s'",
					w[1]);
				return -EINVAL;
			}
			h = &c->nodes[a];
			for (i = 2; i < (unsigned int)n; i++) {
				b = find_node(c, w[i]);
				if (b < 0 ||
				    c->nodes[b].kind != CTL_NODE_HOST ||
				    !in_proc(c, &c->nodes[b])) {
					set_err(err, errlen, lineno,
						"bad owe '%.40s'", w[i]);
					return -EINVAL;
				}
				k = c->nodes[b].flog_idx - c->ep_start;
				if (c->owe[a][k / 64] & 1ULL << (k % 64))
					continue;
				c->owe[a][k / 64] |= 1ULL << (k % 64);
				h->owes++;
				c->owed_total++;
			}
		} else if (n >= 2 && !strcmp(w[0], "rejoin-wait")) {
			if (c->proc != CTL_PROC_REJOINING || !c->rj_has_ts) {
				set_err(err, errlen, lineno,
					"rejoin-wait without a rejoin's ts");
				return -EINVAL;
			}
			for (i = 1; i < (unsigned int)n; i++) {
				a = find_node(c, w[i]);
				if (a < 0 ||
				    c->nodes[a].kind != CTL_NODE_HOST ||
				    c->nodes[a].failed) {
					set_err(err, errlen, lineno,
						"bad rejoin-wait '%.40s'",
						w[i]);
					return -EINVAL;
				}
				if (c->nodes[a].owes)
					continue;
				c->nodes[a].owes = 1;
				c->owed_total++;
			}
		} else if (n >= 3 && !strcmp(w[0], "rejoin-owe")) {
			/* a correct host whose latest entry is rejoined */
			a = find_node(c, w[1]);
			if (a < 0 || c->nodes[a].kind != CTL_NODE_HOST ||
			    !last_rejoin(c, (unsigned int)a)) {
				set_err(err, errlen, lineno,
					"bad rejoin-owe '%.40s'", w[1]);
				return -EINVAL;
			}
			for (i = 2; i < (unsigned int)n; i++) {
				b = find_node(c, w[i]);
				if (b < 0 || b == a ||
				    c->nodes[b].kind != CTL_NODE_HOST ||
				    c->nodes[b].failed) {
					set_err(err, errlen, lineno,
						"bad rejoin-owe '%.40s'",
						w[i]);
					return -EINVAL;
				}
				rj_owe_set(c, (unsigned int)a, (unsigned int)b);
			}
		} else if (n == 3 && !strcmp(w[0], "resume")) {
			struct ctl_link *l;
			int li;

			a = find_node(c, w[1]);
			b = find_node(c, w[2]);
			li = a < 0 || b < 0 ? -1 : find_link(c, a, b);
			if (li < 0 || c->proc != CTL_PROC_RESUMING ||
			    c->nodes[a].kind != CTL_NODE_SWITCH ||
			    c->nodes[a].failed || !in_proc(c, &c->nodes[b])) {
				set_err(err, errlen, lineno,
					"bad resume %.40s %.40s", w[1], w[2]);
				return -EINVAL;
			}
			l = &c->links[li];
			if (!l->resume_owed[link_end(l, a)]) {
				l->resume_owed[link_end(l, a)] = true;
				c->resume_total++;
			}
		}
	}
	return 0;
}

/**
 * ctl_decode() - load a state saved by ctl_encode()
 * @c: a controller made from the same topology (connections are kept)
 * @now: current time (ns): timers restart here
 * @blob: the blob (need not be NUL-terminated)
 * @len: its length
 * @err: why it was rejected ("line N: ..."), may be NULL
 * @errlen: room in @err
 *
 * On success the procedure goes on from where the blob left it: a
 * finished phase moves on, disconnected nodes settle (from @now) and may
 * be decided at once (the last instance saved the reports but died
 * before deciding), and pending FAILs, RESUMEs and REJOINs go to whoever
 * says HELLO (a rejoin goes on in its epoch; if the blob has its host's
 * links reported down, it is aborted before its first ts, else finished
 * and the host fails anew).  On failure the state is reset
 * to nothing decided.
 *
 * Return: 0, or -EINVAL (@err says why).
 */
int ctl_decode(struct ctl_logic *c, uint64_t now, const char *blob,
	       size_t len, char *err, size_t errlen)
{
	reset_state(c);
	if (decode_lines(c, blob, len, err, errlen)) {
		reset_state(c);
		search(c);
		return -EINVAL;
	}
	q_log(c, CTL_LOG_NOTICE, "state loaded: epoch %" PRIu32 ", %s, %u failed nodes",
	      c->epoch, proc_names[c->proc], c->nflog);
	c->phase_deadline = now + c->cfg.done_timeout_ns;
	if (c->proc == CTL_PROC_BROADCAST && !c->owed_total)
		enter_resuming(c, now);
	else if (c->proc == CTL_PROC_RESUMING && !c->resume_total)
		go_idle(c);
	else if (c->proc == CTL_PROC_REJOINING &&
		 !attached(c, c->rj_node, false) && !c->rj_has_ts)
		abort_rejoin(c, "its links are reported down");
	else if (c->proc == CTL_PROC_REJOINING &&
		 !attached(c, c->rj_node, false))
		finish_rejoin(c, now);	/* committed; it fails anew */
	else if (c->proc == CTL_PROC_REJOINING && c->rj_has_ts &&
		 !c->owed_total)
		finish_rejoin(c, now);
	evaluate(c, now);
	rejoin_check(c, now);
	return 0;
}

/* ---- queries ------------------------------------------------------------- */

/**
 * ctl_phase() - the procedure's phase
 * @c: the controller
 *
 * Return: BROADCAST or RESUMING during a procedure, REJOINING during a
 * rejoin, else SETTLING while disconnected nodes wait for a decision,
 * else IDLE.
 */
enum ctl_phase ctl_phase(const struct ctl_logic *c)
{
	switch (c->proc) {
	case CTL_PROC_BROADCAST:
		return CTL_PH_BROADCAST;
	case CTL_PROC_RESUMING:
		return CTL_PH_RESUMING;
	case CTL_PROC_REJOINING:
		return CTL_PH_REJOINING;
	default:
		return c->settling ? CTL_PH_SETTLING : CTL_PH_IDLE;
	}
}

const char *ctl_phase_name(enum ctl_phase p)
{
	switch (p) {
	case CTL_PH_IDLE:
		return "idle";
	case CTL_PH_SETTLING:
		return "settling";
	case CTL_PH_BROADCAST:
		return "broadcast";
	case CTL_PH_RESUMING:
		return "resuming";
	case CTL_PH_REJOINING:
		return "rejoining";
	}
	return "?";
}

/* A determination is under way (whatever the procedure's phase). */
bool ctl_settling(const struct ctl_logic *c)
{
	return c->settling;
}

/* The last epoch decided (0: none yet). */
uint32_t ctl_epoch(const struct ctl_logic *c)
{
	return c->epoch;
}

void ctl_get_stats(const struct ctl_logic *c, struct ctl_stats *st)
{
	*st = c->st;
}

/**
 * ctl_node_kind() - what a node is
 * @c: the controller
 * @node: its name
 * @host: its host id (0 for switches), may be NULL
 *
 * Return: enum ctl_node_kind, or -ENOENT if there is no such node.
 */
int ctl_node_kind(const struct ctl_logic *c, const char *node, uint32_t *host)
{
	int i = find_node(c, node);

	if (i < 0)
		return -ENOENT;
	if (host)
		*host = c->nodes[i].host;
	return c->nodes[i].kind;
}

/**
 * ctl_node_failed() - whether a node was decided failed
 * @c: the controller
 * @node: its name
 * @epoch: the epoch that failed it, may be NULL
 * @ts: its failure timestamp, may be NULL
 *
 * Return: 1 if failed, 0 if not (correct or waiting for a decision),
 * -ENOENT if there is no such node.
 */
int ctl_node_failed(const struct ctl_logic *c, const char *node,
		    uint32_t *epoch, uint64_t *ts)
{
	int i = find_node(c, node);

	if (i < 0)
		return -ENOENT;
	if (!c->nodes[i].failed)
		return 0;
	if (epoch)
		*epoch = c->nodes[i].fail_epoch;
	if (ts)
		*ts = c->nodes[i].fail_ts;
	return 1;
}

/* Entries in the failure log (hosts and switches). */
unsigned int ctl_nfailures(const struct ctl_logic *c)
{
	return c->nflog;
}

/**
 * ctl_failure() - an entry of the failure log, in decision order
 * @c: the controller
 * @i: its index, < ctl_nfailures()
 * @host: the host id (0 for a switch), may be NULL
 * @node: the node name, may be NULL
 * @ts: its failure timestamp, may be NULL
 * @epoch: the epoch that decided it, may be NULL
 *
 * Return: enum ctl_node_kind, or -ENOENT if @i is out of range.
 */
int ctl_failure(const struct ctl_logic *c, unsigned int i, uint32_t *host,
		const char **node, uint64_t *ts, uint32_t *epoch)
{
	const struct ctl_node *f;

	if (i >= c->nflog)
		return -ENOENT;
	f = &c->nodes[c->flog[i].node];
	if (host)
		*host = f->host;
	if (node)
		*node = f->name;
	if (ts)
		*ts = c->flog[i].ts;
	if (epoch)
		*epoch = c->flog[i].epoch;
	return f->kind;
}

/**
 * ctl_failure_rejoin() - whether an entry of the failure log rejoined
 * @c: the controller
 * @i: its index, < ctl_nfailures()
 * @epoch: the epoch of the rejoin, may be NULL
 * @ts: the new incarnation's first timestamp, may be NULL
 *
 * Return: 1 if the node rejoined since (@epoch and @ts set), 0 if the
 * failure is in force, -ENOENT if @i is out of range.
 */
int ctl_failure_rejoin(const struct ctl_logic *c, unsigned int i,
		       uint32_t *epoch, uint64_t *ts)
{
	const struct ctl_fentry *fe;

	if (i >= c->nflog)
		return -ENOENT;
	fe = &c->flog[i];
	if (!fe->rejoined)
		return 0;
	if (epoch)
		*epoch = fe->rj_epoch;
	if (ts)
		*ts = fe->rj_ts;
	return 1;
}

/**
 * ctl_rejoining() - the rejoin under way
 * @c: the controller
 * @node: the rejoining host's node name, may be NULL
 * @ts: its first timestamp once it answered, may be NULL
 *
 * Return: 0 if no rejoin is under way, 1 while waiting for the host's
 * REJOINED, 2 once it answered (@ts set: waiting for the others' DONEs).
 */
int ctl_rejoining(const struct ctl_logic *c, const char **node, uint64_t *ts)
{
	if (c->proc != CTL_PROC_REJOINING)
		return 0;
	if (node)
		*node = c->nodes[c->rj_node].name;
	if (!c->rj_has_ts)
		return 1;
	if (ts)
		*ts = c->rj_ts;
	return 2;
}

/*
 * DONEs the current phase still waits for (hosts' or switches'); while
 * REJOINING, before the host's REJOINED: 1 (that answer).
 */
unsigned int ctl_waiting(const struct ctl_logic *c)
{
	if (c->proc == CTL_PROC_BROADCAST)
		return c->owed_total;
	if (c->proc == CTL_PROC_RESUMING)
		return c->resume_total;
	if (c->proc == CTL_PROC_REJOINING)
		return c->rj_has_ts ? c->owed_total : 1;
	return 0;
}

/* Milliseconds from @now to @t, 0 if past. */
static uint64_t ms_until(uint64_t now, uint64_t t)
{
	return t > now ? (t - now) / 1000000 : 0;
}

/**
 * ctl_show_json() - the controller's view as JSON
 * @c: the controller
 * @now: current time (ns), for the timers
 * @buf: where to write it (NUL-terminated, truncated to @size), may be
 *	NULL if @size is 0
 * @size: room in @buf
 *
 * One object: epoch, phase, settling, what the phase waits for, the
 * rejoin under way, nodes (kind, state correct/failed/disconnected,
 * connected), links (up/down and each end's report), the failure log
 * (rejoined or not; who still owes DONE for a host's last rejoin) and
 * the counters.  While REJOINING, "waiting" lists
 * the rejoining host as owing its own REJOINED until it answered, then
 * every host that owes DONE about it.  Names need no escaping (they are
 * [A-Za-z0-9_.-]).
 *
 * Return: the text's length (without the NUL), as snprintf().
 */
size_t ctl_show_json(const struct ctl_logic *c, uint64_t now, char *buf,
		     size_t size)
{
	struct tbuf b = { buf, size, 0 };
	unsigned int i, k, e, nep = c->nflog - c->ep_start;
	const char *sep = "";

	if (size)
		buf[0] = 0;
	tb_printf(&b, "{\"epoch\":%" PRIu32 ",\"phase\":\"%s\",\"settling\":%s",
		  c->epoch, ctl_phase_name(ctl_phase(c)),
		  c->settling ? "true" : "false");
	if (c->settling)
		tb_printf(&b, ",\"settle_left_ms\":%" PRIu64,
			  ms_until(now, c->settle_since + c->cfg.settle_ns));
	if (c->proc != CTL_PROC_IDLE)
		tb_printf(&b, ",\"first_epoch\":%" PRIu32 ",\"timeout_left_ms\":%" PRIu64,
			  c->first_epoch, ms_until(now, c->phase_deadline));
	tb_printf(&b, ",\"settle_ms\":%" PRIu64 ",\"done_timeout_ms\":%" PRIu64,
		  c->cfg.settle_ns / 1000000, c->cfg.done_timeout_ns / 1000000);

	/* what the phase waits for */
	tb_printf(&b, ",\"waiting\":{\"count\":%u,\"hosts\":[", ctl_waiting(c));
	for (i = 0; c->proc == CTL_PROC_BROADCAST && i < c->nnodes; i++) {
		if (!c->nodes[i].owes)
			continue;
		tb_printf(&b, "%s{\"node\":\"%s\",\"owes\":[", sep,
			  c->nodes[i].name);
		sep = ",";
		for (k = 0, e = 0; k < nep; k++) {
			const struct ctl_node *f =
				&c->nodes[c->flog[c->ep_start + k].node];

			if (c->owe[i][k / 64] & 1ULL << (k % 64))
				tb_printf(&b, "%s\"%s\"", e++ ? "," : "",
					  f->name);
		}
		tb_printf(&b, "]}");
	}
	for (i = 0; c->proc == CTL_PROC_REJOINING && i < c->nnodes; i++) {
		if (c->rj_has_ts ? !c->nodes[i].owes : i != c->rj_node)
			continue;
		tb_printf(&b, "%s{\"node\":\"%s\",\"owes\":[\"%s\"]}", sep,
			  c->nodes[i].name, c->nodes[c->rj_node].name);
		sep = ",";
	}
	tb_printf(&b, "],\"switches\":[");
	sep = "";
	for (i = 0; i < c->nlinks; i++) {
		const struct ctl_link *l = &c->links[i];

		for (e = 0; e < 2; e++) {
			if (!l->resume_owed[e])
				continue;
			tb_printf(&b, "%s{\"node\":\"%s\",\"port\":\"%s\"}", sep,
				  c->nodes[l->end[e]].name,
				  c->nodes[l->end[!e]].name);
			sep = ",";
		}
	}
	tb_printf(&b, "]}");
	if (c->proc == CTL_PROC_REJOINING) {
		const struct ctl_node *r = &c->nodes[c->rj_node];

		tb_printf(&b, ",\"rejoin\":{\"node\":\"%s\",\"host\":%" PRIu32 ",\"epoch\":%" PRIu32 ",\"answered\":%s",
			  r->name, r->host, c->epoch,
			  c->rj_has_ts ? "true" : "false");
		if (c->rj_has_ts)
			tb_printf(&b, ",\"first_ts\":%" PRIu64, c->rj_ts);
		tb_printf(&b, "}");
	}

	tb_printf(&b, ",\"nodes\":[");
	for (i = 0; i < c->nnodes; i++) {
		const struct ctl_node *n = &c->nodes[i];

		tb_printf(&b, "%s{\"name\":\"%s\",\"kind\":\"%s\"", i ? "," : "",
			  n->name, n->kind == CTL_NODE_HOST ? "host" : "switch");
		if (n->kind == CTL_NODE_HOST)
			tb_printf(&b, ",\"host\":%" PRIu32, n->host);
		tb_printf(&b, ",\"controller\":%s,\"state\":\"%s\",\"connected\":%s",
			  n->controller ? "true" : "false",
			  n->failed ? "failed" : n->reached ? "correct" :
			  "disconnected", n->conn ? "true" : "false");
		if (n->failed)
			tb_printf(&b, ",\"epoch\":%" PRIu32 ",\"ts\":%" PRIu64,
				  n->fail_epoch, n->fail_ts);
		if (c->proc == CTL_PROC_REJOINING && i == c->rj_node)
			tb_printf(&b, ",\"rejoining\":true");
		if (n->unreach)
			tb_printf(&b, ",\"unreach\":%" PRIu64, n->unreach);
		if (n->relays)
			tb_printf(&b, ",\"relays\":%" PRIu64, n->relays);
		tb_printf(&b, "}");
	}
	tb_printf(&b, "],\"links\":[");
	for (i = 0; i < c->nlinks; i++) {
		const struct ctl_link *l = &c->links[i];

		tb_printf(&b, "%s{\"a\":\"%s\",\"b\":\"%s\",\"state\":\"%s\",\"reports\":[",
			  i ? "," : "", c->nodes[l->end[0]].name,
			  c->nodes[l->end[1]].name,
			  link_is_down(l) ? "down" : "up");
		sep = "";
		for (e = 0; e < 2; e++) {
			if (!l->rep[e].down)
				continue;
			tb_printf(&b, "%s{\"by\":\"%s\"", sep,
				  c->nodes[l->end[e]].name);
			if (l->rep[e].has_ts)
				tb_printf(&b, ",\"ts\":%" PRIu64, l->rep[e].ts);
			tb_printf(&b, "}");
			sep = ",";
		}
		tb_printf(&b, "]}");
	}
	tb_printf(&b, "],\"failures\":[");
	for (i = 0; i < c->nflog; i++) {
		const struct ctl_fentry *fe = &c->flog[i];
		const struct ctl_node *f = &c->nodes[fe->node];

		tb_printf(&b, "%s{\"node\":\"%s\",\"kind\":\"%s\"", i ? "," : "",
			  f->name, f->kind == CTL_NODE_HOST ? "host" : "switch");
		if (f->kind == CTL_NODE_HOST)
			tb_printf(&b, ",\"host\":%" PRIu32, f->host);
		tb_printf(&b, ",\"epoch\":%" PRIu32 ",\"ts\":%" PRIu64 ",\"rejoined\":%s",
			  fe->epoch, fe->ts, fe->rejoined ? "true" : "false");
		if (fe->rejoined)
			tb_printf(&b, ",\"rejoin_epoch\":%" PRIu32 ",\"first_ts\":%" PRIu64,
				  fe->rj_epoch, fe->rj_ts);
		if (last_rejoin(c, fe->node) == fe && f->rj_owed) {
			tb_printf(&b, ",\"rejoin_owed\":[");
			for (k = 0, e = 0; k < c->nnodes; k++)
				if (rj_owes(c, fe->node, k))
					tb_printf(&b, "%s\"%s\"", e++ ? "," : "",
						  c->nodes[k].name);
			tb_printf(&b, "]");
		}
		tb_printf(&b, "}");
	}
	tb_printf(&b, "],\"counters\":{\"reports\":%" PRIu64 ",\"ignored\":%" PRIu64
		  ",\"stale\":%" PRIu64 ",\"bad\":%" PRIu64 ",\"decisions\":%" PRIu64
		  ",\"unreach\":%" PRIu64 ",\"flaps\":%" PRIu64
		  ",\"rejoins\":%" PRIu64 ",\"relayed\":%" PRIu64
		  ",\"relay_dropped\":%" PRIu64 "}}",
		  c->st.reports, c->st.ignored, c->st.stale, c->st.bad,
		  c->st.decisions, c->st.unreach, c->st.flaps, c->st.rejoins,
		  c->st.relayed, c->st.relay_dropped);
	return b.len;
}
