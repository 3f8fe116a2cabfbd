// SPDX-License-Identifier: GPL-2.0
/*
 * Interpreter for the switch test vectors (vectors.txt): drives the
 * I/O-free switch state machine with scripted packets and ticks and checks
 * every expectation, printing TAP.  The vector file is the specification
 * shared with the P4 program; see the comment at its top for the syntax.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "switch_logic.h"

#define MAX_ARGS	16
#define PKT_MAX		(OP_HDR_LEN + 16)

struct ctx {
	struct sw sw;
	char scenario[64];
	const char *file;
	int line;
	unsigned int tests;
	unsigned int fails;
	/* result of the last rx */
	bool have_rx;
	enum sw_verdict verdict;
	unsigned int out;
	u8 sent[PKT_MAX];
	u8 got[PKT_MAX];
	size_t len;
	/* result of the last tick */
	bool have_tick;
	struct sw_beacon b[SW_MAX_PORTS];
	unsigned int nb;
	/* the controller's reports taken after the last tick */
	struct sw_report r[SW_MAX_PORTS];
	unsigned int nr;
};

static struct ctx c;

static void die(const char *msg, const char *arg)
{
	fprintf(stderr, "%s:%d: %s%s%s\n", c.file, c.line, msg,
		arg ? ": " : "", arg ? arg : "");
	printf("Bail out! %s:%d: %s\n", c.file, c.line, msg);
	exit(1);
}

static void report(bool ok, const char *text, const char *why)
{
	c.tests++;
	if (!ok)
		c.fails++;
	printf("%sok %u - %s:%d %s\n", ok ? "" : "not ", c.tests, c.scenario,
	       c.line, text);
	if (!ok && why)
		printf("#   %s\n", why);
}

static u64 num(const char *s)
{
	char *end;
	u64 v;

	if (!*s)
		die("empty number", NULL);
	v = strtoull(s, &end, 0);
	if (*end)
		die("bad number", s);
	return v;
}

/* A time with an optional unit: 5, 5ns, 5us, 5ms, 5s. */
static u64 tm(const char *s)
{
	char *end;
	u64 v = strtoull(s, &end, 10);

	if (end == s)
		die("bad time", s);
	if (!*end || !strcmp(end, "ns"))
		return v;
	if (!strcmp(end, "us"))
		return v * 1000;
	if (!strcmp(end, "ms"))
		return v * 1000000;
	if (!strcmp(end, "s"))
		return v * 1000000000;
	die("bad time unit", s);
	return 0;
}

static unsigned int port(const char *name)
{
	int p = sw_find_port(&c.sw, name);

	if (p < 0)
		die("unknown port", name);
	return (unsigned int)p;
}

/* Value of key=VALUE among args, or NULL. */
static const char *kv(char **a, int n, const char *key)
{
	size_t kl = strlen(key);
	int i;

	for (i = 0; i < n; i++)
		if (!strncmp(a[i], key, kl) && a[i][kl] == '=')
			return a[i] + kl + 1;
	return NULL;
}

static void check_keys(char **a, int n, const char *const *keys)
{
	int i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; keys[k]; k++) {
			size_t kl = strlen(keys[k]);

			if (!strncmp(a[i], keys[k], kl) && a[i][kl] == '=')
				break;
		}
		if (!keys[k])
			die("unknown argument", a[i]);
	}
}

static void cmd_scenario(char **a, int n)
{
	if (n < 1)
		die("scenario needs a name", NULL);
	snprintf(c.scenario, sizeof(c.scenario), "%s", a[0]);
	/* Defaults: 1 ms link timeout, barrier.c's strict new-link rule. */
	sw_init(&c.sw, 1000000, 0);
	c.have_rx = false;
	c.have_tick = false;
	c.nr = 0;
}

static void cmd_config(char **a, int n)
{
	static const char *const keys[] = {
		"timeout", "commit-timeout", "slack", "mode", "push-gap",
		"busy", "controlled", NULL
	};
	const char *v, *gap, *busy;

	check_keys(a, n, keys);
	/* Either knob turns push on; the other one is then 0. */
	gap = kv(a, n, "push-gap");
	busy = kv(a, n, "busy");
	if (gap || busy)
		sw_set_push(&c.sw, gap ? tm(gap) : 0, busy ? tm(busy) : 0);
	v = kv(a, n, "timeout");
	if (v) {
		c.sw.timeout = tm(v);
		c.sw.commit_timeout = c.sw.timeout * OP_COMMIT_TIMEOUT_FACTOR;
	}
	v = kv(a, n, "commit-timeout");
	if (v)
		c.sw.commit_timeout = tm(v);
	v = kv(a, n, "slack");
	if (v)
		c.sw.admit_slack = tm(v);
	v = kv(a, n, "controlled");
	if (v) {
		if (strcmp(v, "on") && strcmp(v, "off"))
			die("controlled=on|off", v);
		sw_set_controlled(&c.sw, !strcmp(v, "on"));
	}
	v = kv(a, n, "mode");
	if (!v)
		return;
	if (!strcmp(v, "beacon-only"))
		c.sw.beacon_only = true;
	else if (!strcmp(v, "rewrite"))
		c.sw.beacon_only = false;
	else
		die("bad mode", v);
}

static void cmd_port(char **a, int n)
{
	static const char *const keys[] = { "hosts", NULL };
	struct sw_range r[SW_MAX_RANGES];
	enum sw_role role;
	const char *h;
	int nr = 0;

	if (n < 2)
		die("port NAME ROLE [hosts=LIST]", NULL);
	check_keys(a + 2, n - 2, keys);
	if (!strcmp(a[1], "down"))
		role = SW_ROLE_DOWN;
	else if (!strcmp(a[1], "up"))
		role = SW_ROLE_UP;
	else
		die("bad role", a[1]);
	h = kv(a + 2, n - 2, "hosts");
	if (h) {
		nr = sw_parse_hosts(h, r, SW_MAX_RANGES);
		if (nr < 0)
			die("bad host list", h);
	}
	if (sw_add_port(&c.sw, a[0], role, r, (unsigned int)nr) < 0)
		die("cannot add port", a[0]);
}

static u8 pkt_type(const char *s)
{
	if (!strcmp(s, "data"))
		return OP_PKT_DATA;
	if (!strcmp(s, "beacon"))
		return OP_PKT_BEACON;
	if (!strcmp(s, "ack"))
		return OP_PKT_ACK;
	if (!strcmp(s, "nak"))
		return OP_PKT_NAK;
	if (!strcmp(s, "recall"))
		return OP_PKT_RECALL;
	if (!strcmp(s, "probe"))
		return OP_PKT_PROBE;
	if (!strcmp(s, "query"))
		return OP_PKT_QUERY;
	die("bad packet type", s);
	return 0;
}

/* flags=NAME[,NAME...]: flags other than the two barrier-valid ones */
static u8 pkt_flags(const char *s)
{
	char buf[64], *tok, *save = NULL;
	u8 f = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "reliable"))
			f |= OP_F_RELIABLE;
		else if (!strcmp(tok, "unordered"))
			f |= OP_F_UNORDERED;
		else if (!strcmp(tok, "ece"))
			f |= OP_F_ECE;
		else
			die("bad flag", tok);
	}
	return f;
}

/* A barrier or commit argument: a number, or '-' for none. */
static bool opt_num(const char *s, u64 *v)
{
	if (!strcmp(s, "-")) {
		*v = 0;
		return false;
	}
	*v = num(s);
	return true;
}

/**
 * struct pkt - what the rx command puts in a packet
 * @type: OP_PKT_*
 * @flags: flags besides OP_F_NOBARRIER and OP_F_NOCOMMIT
 * @has_barrier: else OP_F_NOBARRIER and a zero barrier field
 * @has_commit: else OP_F_NOCOMMIT and a zero commit field
 * @ignored: what an absent barrier or commit field holds instead of 0
 */
struct pkt {
	u8 type;
	u8 flags;
	bool has_barrier;
	bool has_commit;
	u32 src;
	u32 dst;
	u64 ts;
	u64 barrier;
	u64 commit;
	u64 ignored;
};

/*
 * Build a valid packet; DATA carries 4 payload bytes.  RECALL and PROBE
 * exist only in the reliable service, so they always say OP_F_RELIABLE.
 */
static size_t build(u8 *buf, const struct pkt *k)
{
	u8 type = k->type;
	struct op_hdr h;
	size_t len = OP_HDR_LEN;

	memset(&h, 0, sizeof(h));
	h.type = type;
	h.flags = k->flags;
	if (type == OP_PKT_RECALL || type == OP_PKT_PROBE)
		h.flags |= OP_F_RELIABLE;
	if (!k->has_barrier)
		h.flags |= OP_F_NOBARRIER;
	if (!k->has_commit)
		h.flags |= OP_F_NOCOMMIT;
	h.ts = k->ts;
	h.barrier = k->has_barrier ? k->barrier : k->ignored;
	h.commit = k->has_commit ? k->commit : k->ignored;
	if (type != OP_PKT_BEACON) {
		h.src_host = k->src;
		h.dst_host = k->dst;
		h.src_port = 1000;
		h.dst_port = 2000;
		h.seq = 7;
		h.aux = 7;
	}
	if (type == OP_PKT_NAK)
		h.code = OP_NAK_LATE;
	if (type == OP_PKT_DATA) {
		h.aux = 4;
		h.frag_cnt = 1;
		memcpy(buf + OP_HDR_LEN, "1Pip", 4);
		len += 4;
	}
	op_hdr_encode(&h, buf);
	return len;
}

static void do_rx(unsigned int in, u64 now)
{
	memcpy(c.got, c.sent, c.len);
	c.verdict = sw_rx(&c.sw, in, c.got, c.len, now, &c.out);
	c.have_rx = true;
	if (c.verdict == SW_FORWARD)
		sw_tx_result(&c.sw, c.out, false, true);
}

/*
 * rx PORT BARRIER|- TIME [commit=C|-] [type=T] [src=N] [dst=N] [ts=N]
 *    [flags=F,...] [ignored=N]
 */
static void cmd_rx(char **a, int n)
{
	static const char *const keys[] = { "commit", "type", "src", "dst",
					    "ts", "flags", "ignored", NULL };
	struct pkt k = { .type = OP_PKT_DATA, .src = 1 };
	const char *v;

	if (n < 3)
		die("rx PORT BARRIER|- TIME [key=value...]", NULL);
	check_keys(a + 3, n - 3, keys);
	k.has_barrier = opt_num(a[1], &k.barrier);
	k.ts = k.barrier;
	v = kv(a + 3, n - 3, "commit");
	if (v)
		k.has_commit = opt_num(v, &k.commit);
	v = kv(a + 3, n - 3, "type");
	if (v)
		k.type = pkt_type(v);
	v = kv(a + 3, n - 3, "src");
	if (v)
		k.src = (u32)num(v);
	v = kv(a + 3, n - 3, "dst");
	if (v)
		k.dst = (u32)num(v);
	v = kv(a + 3, n - 3, "ts");
	if (v)
		k.ts = num(v);
	v = kv(a + 3, n - 3, "flags");
	if (v)
		k.flags = pkt_flags(v);
	v = kv(a + 3, n - 3, "ignored");
	if (v)
		k.ignored = num(v);
	if (k.type != OP_PKT_BEACON && !k.dst)
		die("rx of a non-beacon needs dst=", NULL);
	c.len = build(c.sent, &k);
	do_rx(port(a[0]), tm(a[2]));
}

/* rx-bad PORT TIME KIND: a malformed datagram */
static void cmd_rx_bad(char **a, int n)
{
	struct pkt k = {
		.type = OP_PKT_DATA, .src = 1, .dst = 2, .ts = 5,
		.has_barrier = true, .barrier = 5,
		.has_commit = true, .commit = 5,
	};

	if (n != 3)
		die("rx-bad PORT TIME KIND (see vectors.txt)", NULL);
	c.len = build(c.sent, &k);
	if (!strcmp(a[2], "short"))
		c.len = OP_HDR_LEN - 1;
	else if (!strcmp(a[2], "version"))
		c.sent[0] = OP_WIRE_VERSION + 1;
	else if (!strcmp(a[2], "flags"))
		c.sent[2] = 0x80;
	else if (!strcmp(a[2], "type"))
		c.sent[1] = 99;
	else if (!strcmp(a[2], "length"))
		c.len--;
	else if (!strcmp(a[2], "barrier"))	/* beyond 48 bits */
		c.sent[OP_HDR_BARRIER_OFF + 1] = 1;
	else if (!strcmp(a[2], "commit"))
		c.sent[OP_HDR_COMMIT_OFF + 1] = 1;
	else
		die("bad kind", a[2]);
	do_rx(port(a[0]), tm(a[1]));
}

/* The c.nb beacons in c.b were sent, successfully. */
static void beacons_sent(void)
{
	unsigned int i;

	c.have_tick = true;
	for (i = 0; i < c.nb; i++)
		sw_tx_result(&c.sw, c.b[i].port, true, true);
}

/* A tick, and the reports it made, taken as the daemon takes them. */
static void cmd_tick(char **a, int n)
{
	if (n != 1)
		die("tick TIME", NULL);
	c.nb = sw_tick(&c.sw, tm(a[0]), c.b);
	c.nr = sw_take_reports(&c.sw, c.r);
	beacons_sent();
}

/* resume PORT TIME: the controller's RESUME for PORT (sw_resume()) */
static void cmd_resume(char **a, int n)
{
	if (n != 2)
		die("resume PORT TIME", NULL);
	if (sw_resume(&c.sw, port(a[0]), tm(a[1])))
		die("sw_resume refused", a[0]);
}

/* push TIME: the pushes due (sw_push()), checked like a tick's beacons. */
static void cmd_push(char **a, int n)
{
	if (n != 1)
		die("push TIME", NULL);
	c.nb = sw_push(&c.sw, tm(a[0]), c.b);
	c.nr = 0;
	beacons_sent();
}

/* expect-push-due TIME|-: the next push's due time (- = no port stale) */
static void cmd_expect_push_due(char **a, int n, const char *text)
{
	char why[64];
	bool any;
	u64 at;

	if (n != 1)
		die("expect-push-due TIME|-", NULL);
	any = sw_push_due(&c.sw, &at);
	if (any)
		snprintf(why, sizeof(why), "got %llu", (unsigned long long)at);
	else
		snprintf(why, sizeof(why), "got none");
	report(!strcmp(a[0], "-") ? !any : any && at == tm(a[0]), text, why);
}

static const char *verdict_name(enum sw_verdict v)
{
	switch (v) {
	case SW_FORWARD:
		return "forward";
	case SW_CONSUMED:
		return "consumed";
	case SW_DROP_BAD:
		return "drop bad";
	default:
		return "drop noroute";
	}
}

/*
 * Apart from the two valid-flags and the barrier and commit fields, a
 * forward is byte-exact.
 */
static bool body_intact(void)
{
	const u8 mine = OP_F_NOBARRIER | OP_F_NOCOMMIT;
	size_t i;

	for (i = 0; i < c.len; i++) {
		if (i == 2 || (i >= OP_HDR_BARRIER_OFF &&
			       i < OP_HDR_COMMIT_OFF + 8))
			continue;
		if (c.sent[i] != c.got[i])
			return false;
	}
	return (c.got[2] & ~mine) == (c.sent[2] & ~mine);
}

static void need_rx(void)
{
	if (!c.have_rx)
		die("expectation about an rx without an rx", NULL);
}

/*
 * expect-fwd PORT BARRIER|- [commit=C|-]: the last rx went out PORT with
 * these barriers; a commit left out is '-' (OP_F_NOCOMMIT, field 0).
 */
static void cmd_expect_fwd(char **a, int n, const char *text)
{
	static const char *const keys[] = { "commit", NULL };
	bool want_b, want_c, has_b, has_c, ok;
	u64 wb, wc = 0, gb, gc;
	const char *v;
	char why[200];

	if (n < 2)
		die("expect-fwd PORT BARRIER|- [commit=C|-]", NULL);
	check_keys(a + 2, n - 2, keys);
	need_rx();
	want_b = opt_num(a[1], &wb);
	v = kv(a + 2, n - 2, "commit");
	want_c = v ? opt_num(v, &wc) : false;
	gb = op_hdr_get_barrier(c.got);
	gc = op_hdr_get_commit(c.got);
	has_b = !(c.got[2] & OP_F_NOBARRIER);
	has_c = !(c.got[2] & OP_F_NOCOMMIT);
	ok = c.verdict == SW_FORWARD && c.out == port(a[0]) &&
	     gb == wb && has_b == want_b && gc == wc && has_c == want_c &&
	     body_intact();
	snprintf(why, sizeof(why),
		 "got %s to %s, barrier %llu%s, commit %llu%s%s",
		 verdict_name(c.verdict),
		 c.verdict == SW_FORWARD ? c.sw.ports[c.out].name : "-",
		 (unsigned long long)gb, has_b ? "" : " nobarrier",
		 (unsigned long long)gc, has_c ? "" : " nocommit",
		 body_intact() ? "" : ", packet body changed");
	report(ok, text, why);
}

/*
 * expect-fwd-intact PORT: the last rx went out PORT exactly as it came
 * in, every byte and every flag (beacon-only mode).
 */
static void cmd_expect_fwd_intact(char **a, int n, const char *text)
{
	bool same;
	char why[160];

	if (n != 1)
		die("expect-fwd-intact PORT", NULL);
	need_rx();
	same = !memcmp(c.sent, c.got, c.len);
	snprintf(why, sizeof(why), "got %s to %s, barrier %llu, commit %llu, "
		 "flags 0x%02x%s", verdict_name(c.verdict),
		 c.verdict == SW_FORWARD ? c.sw.ports[c.out].name : "-",
		 (unsigned long long)op_hdr_get_barrier(c.got),
		 (unsigned long long)op_hdr_get_commit(c.got), c.got[2],
		 same ? "" : ", packet changed");
	report(c.verdict == SW_FORWARD && c.out == port(a[0]) && same, text,
	       why);
}

static void cmd_expect_verdict(char **a, int n, const char *text,
			       bool drop)
{
	enum sw_verdict want = SW_CONSUMED;
	char why[64];

	need_rx();
	if (drop) {
		if (n != 1)
			die("expect-drop bad|noroute", NULL);
		if (!strcmp(a[0], "bad"))
			want = SW_DROP_BAD;
		else if (!strcmp(a[0], "noroute"))
			want = SW_DROP_NOROUTE;
		else
			die("bad drop reason", a[0]);
	} else if (n) {
		die("expect-consumed takes no argument", NULL);
	}
	snprintf(why, sizeof(why), "got %s", verdict_name(c.verdict));
	report(c.verdict == want, text, why);
}

/* Append " NAME=B/C" to @why (numbers, or '-' for none). */
static size_t put_beacon(char *why, size_t wl, size_t size,
			 const struct sw_beacon *b)
{
	char bs[24] = "-", cs[24] = "-";

	if (wl >= size)
		return wl;
	if (b->has_barrier)
		snprintf(bs, sizeof(bs), "%llu",
			 (unsigned long long)b->barrier);
	if (b->has_commit)
		snprintf(cs, sizeof(cs), "%llu",
			 (unsigned long long)b->commit);
	return wl + (size_t)snprintf(why + wl, size - wl, " %s=%s/%s",
				     c.sw.ports[b->port].name, bs, cs);
}

/*
 * Is the beacon the switch builds for @got, byte for byte, the bare
 * header the vectors specify for @w?  The expected bytes are encoded here,
 * not with sw_beacon_build(), which is under test.
 */
static bool beacon_is(const struct sw_beacon *got, const struct sw_beacon *w)
{
	u8 gb[OP_HDR_LEN], wb[OP_HDR_LEN];
	struct op_hdr h;

	memset(&h, 0, sizeof(h));
	h.type = OP_PKT_BEACON;
	h.flags = (w->has_barrier ? 0 : OP_F_NOBARRIER) |
		  (w->has_commit ? 0 : OP_F_NOCOMMIT);
	h.barrier = w->has_barrier ? w->barrier : 0;
	h.commit = w->has_commit ? w->commit : 0;
	op_hdr_encode(&h, wb);
	sw_beacon_build(gb, got);
	return !memcmp(gb, wb, sizeof(gb));
}

/*
 * expect-beacons [PORT=BARRIER|-[/COMMIT|-] ...]: exactly this set from
 * the last tick or push; a commit left out is '-'.  The beacons are compared as
 * built on the wire.
 */
static void cmd_expect_beacons(char **a, int n, const char *text)
{
	bool want[SW_MAX_PORTS] = { false };
	struct sw_beacon wb[SW_MAX_PORTS];
	char why[512];
	size_t wl = 0;
	bool ok = true;
	unsigned int i;
	int k;

	if (!c.have_tick)
		die("expect-beacons without a tick or push", NULL);
	for (k = 0; k < n; k++) {
		char *eq = strchr(a[k], '='), *sl;

		if (!eq)
			die("expect-beacons PORT=BARRIER[/COMMIT] ...", a[k]);
		*eq = 0;
		sl = strchr(eq + 1, '/');
		if (sl)
			*sl = 0;
		i = port(a[k]);
		want[i] = true;
		wb[i].port = i;
		wb[i].has_barrier = opt_num(eq + 1, &wb[i].barrier);
		wb[i].has_commit = sl ? opt_num(sl + 1, &wb[i].commit) : false;
		if (!sl)
			wb[i].commit = 0;
	}
	why[0] = 0;
	wl += (size_t)snprintf(why, sizeof(why), "got:");
	for (i = 0; i < c.nb; i++) {
		unsigned int p = c.b[i].port;

		wl = put_beacon(why, wl, sizeof(why), &c.b[i]);
		if (!want[p] || !beacon_is(&c.b[i], &wb[p]))
			ok = false;
		want[p] = false;
	}
	for (i = 0; i < SW_MAX_PORTS; i++)
		if (want[i])
			ok = false;
	report(ok, text, why);
}

/*
 * expect-reports [PORT=down|up[/COMMIT|-] ...]: exactly these reports
 * from the last tick; a commit left out is '-'.
 */
static void cmd_expect_reports(char **a, int n, const char *text)
{
	bool want[SW_MAX_PORTS] = { false };
	struct sw_report wr[SW_MAX_PORTS];
	char why[512];
	size_t wl;
	bool ok = true;
	unsigned int i;
	int k;

	if (!c.have_tick)
		die("expect-reports without a tick", NULL);
	for (k = 0; k < n; k++) {
		char *eq = strchr(a[k], '='), *sl;

		if (!eq)
			die("expect-reports PORT=down|up[/COMMIT] ...", a[k]);
		*eq = 0;
		sl = strchr(eq + 1, '/');
		if (sl)
			*sl = 0;
		i = port(a[k]);
		if (strcmp(eq + 1, "down") && strcmp(eq + 1, "up"))
			die("a report is down or up", eq + 1);
		want[i] = true;
		wr[i].down = !strcmp(eq + 1, "down");
		wr[i].has_commit = sl ? opt_num(sl + 1, &wr[i].commit) : false;
		if (!sl)
			wr[i].commit = 0;
	}
	wl = (size_t)snprintf(why, sizeof(why), "got:");
	for (i = 0; i < c.nr; i++) {
		const struct sw_report *r = &c.r[i];
		unsigned int p = r->port;
		char cs[24] = "-";

		if (r->has_commit)
			snprintf(cs, sizeof(cs), "%llu",
				 (unsigned long long)r->commit);
		if (wl < sizeof(why))
			wl += (size_t)snprintf(why + wl, sizeof(why) - wl,
					       " %s=%s/%s",
					       c.sw.ports[p].name,
					       r->down ? "down" : "up", cs);
		if (!want[p] || wr[p].down != r->down ||
		    wr[p].has_commit != r->has_commit ||
		    wr[p].commit != r->commit)
			ok = false;
		want[p] = false;
	}
	for (i = 0; i < SW_MAX_PORTS; i++)
		if (want[i])
			ok = false;
	report(ok, text, why);
}

/*
 * expect-heard [PORT ...]: exactly these ports are heard (sw_heard_ports()),
 * the ones a reconnect to the controller reports on.
 */
static void cmd_expect_heard(char **a, int n, const char *text)
{
	u64 want = 0, got = sw_heard_ports(&c.sw);
	char why[64];
	int k;

	for (k = 0; k < n; k++)
		want |= (u64)1 << port(a[k]);
	snprintf(why, sizeof(why), "got mask %#llx", (unsigned long long)got);
	report(got == want, text, why);
}

/* expect-[commit-]state PORT new|live|dead */
static void cmd_expect_state(char **a, int n, const char *text, bool commit)
{
	enum sw_link_state st;
	const char *got;
	char why[64];

	if (n != 2)
		die("expect-[commit-]state PORT new|live|dead", NULL);
	st = commit ? sw_port_commit_state(&c.sw, port(a[0])) :
		      sw_port_state(&c.sw, port(a[0]));
	got = sw_state_name(st);
	snprintf(why, sizeof(why), "got %s", got);
	report(!strcmp(got, a[1]), text, why);
}

/* expect-[commit-]out PORT BARRIER|-: output barrier (- = none yet) */
static void cmd_expect_out(char **a, int n, const char *text, bool commit)
{
	char why[64];
	bool valid, nob;
	u64 b;

	if (n != 2)
		die("expect-[commit-]out PORT BARRIER|-", NULL);
	valid = commit ? sw_out_commit(&c.sw, port(a[0]), &b) :
			 sw_out_barrier(&c.sw, port(a[0]), &b);
	nob = !strcmp(a[1], "-");
	if (valid)
		snprintf(why, sizeof(why), "got %llu", (unsigned long long)b);
	else
		snprintf(why, sizeof(why), "got none");
	report(nob ? !valid : valid && b == num(a[1]), text, why);
}

/* expect-[commit-]reg PORT BARRIER|-: input register (- = never heard) */
static void cmd_expect_reg(char **a, int n, const char *text, bool commit)
{
	const struct op_link *l;
	char why[64];

	if (n != 2)
		die("expect-[commit-]reg PORT BARRIER|-", NULL);
	l = commit ? &c.sw.clinks[port(a[0])] : &c.sw.links[port(a[0])];
	snprintf(why, sizeof(why), "got %s%llu", l->heard ? "" : "unheard ",
		 (unsigned long long)l->reg);
	if (!strcmp(a[1], "-"))
		report(!l->heard, text, why);
	else
		report(l->heard && l->reg == num(a[1]), text, why);
}

static u64 counter(const char *name)
{
	const char *dot = strchr(name, '.');
	const struct sw_port *p;
	char pn[SW_NAME_LEN];

	if (!strcmp(name, "rx_bad"))
		return c.sw.rx_bad;
	if (!strcmp(name, "no_route"))
		return c.sw.no_route;
	if (!dot || (size_t)(dot - name) >= sizeof(pn))
		die("unknown counter", name);
	memcpy(pn, name, (size_t)(dot - name));
	pn[dot - name] = 0;
	p = &c.sw.ports[port(pn)];
	if (!strcmp(dot + 1, "rx_pkts"))
		return p->rx_pkts;
	if (!strcmp(dot + 1, "rx_beacons"))
		return p->rx_beacons;
	if (!strcmp(dot + 1, "tx_pkts"))
		return p->tx_pkts;
	if (!strcmp(dot + 1, "tx_beacons"))
		return p->tx_beacons;
	if (!strcmp(dot + 1, "drops"))
		return p->drops;
	if (!strcmp(dot + 1, "timeouts"))
		return p->timeouts;
	if (!strcmp(dot + 1, "pushes"))
		return p->pushes;
	if (!strcmp(dot + 1, "resumes"))
		return p->resumes;
	die("unknown counter", name);
	return 0;
}

static void cmd_expect_counter(char **a, int n, const char *text)
{
	char why[64];
	u64 got;

	if (n != 2)
		die("expect-counter NAME VALUE", NULL);
	got = counter(a[0]);
	snprintf(why, sizeof(why), "got %llu", (unsigned long long)got);
	report(got == num(a[1]), text, why);
}

/* expect-route IN SRC DST PORT|-: routing decision only */
static void cmd_expect_route(char **a, int n, const char *text)
{
	char why[64];
	int got;

	if (n != 4)
		die("expect-route IN SRC DST PORT|-", NULL);
	got = sw_route(&c.sw, port(a[0]), (u32)num(a[1]), (u32)num(a[2]));
	snprintf(why, sizeof(why), "got %s",
		 got < 0 ? "-" : c.sw.ports[got].name);
	if (!strcmp(a[3], "-"))
		report(got < 0, text, why);
	else
		report(got == (int)port(a[3]), text, why);
}

/* parse-hosts LIST CANONICAL|bad: host list syntax */
static void cmd_parse_hosts(char **a, int n, const char *text)
{
	struct sw_range r[SW_MAX_RANGES];
	char got[256];
	size_t gl = 0;
	int nr, i;

	if (n != 2)
		die("parse-hosts LIST CANONICAL|bad", NULL);
	nr = sw_parse_hosts(a[0], r, SW_MAX_RANGES);
	if (nr < 0) {
		snprintf(got, sizeof(got), "got bad");
		report(!strcmp(a[1], "bad"), text, got);
		return;
	}
	got[0] = 0;
	for (i = 0; i < nr && gl < sizeof(got); i++) {
		gl += (size_t)snprintf(got + gl, sizeof(got) - gl, "%s%u",
				       i ? "+" : "", r[i].lo);
		if (r[i].hi != r[i].lo && gl < sizeof(got))
			gl += (size_t)snprintf(got + gl, sizeof(got) - gl,
					       "-%u", r[i].hi);
	}
	report(!strcmp(got, a[1]), text, got);
}

static void run_line(char *line)
{
	char text[512], *a[MAX_ARGS + 1], *tok, *save = NULL;
	int n = 0;

	line[strcspn(line, "#\r\n")] = 0;
	snprintf(text, sizeof(text), "%s", line);
	for (tok = strtok_r(line, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		if (n == MAX_ARGS)
			die("too many words", NULL);
		a[n++] = tok;
	}
	if (!n)
		return;
	if (strcmp(a[0], "scenario") && !c.scenario[0])
		die("the first command must be scenario", NULL);
#define IS(s) (!strcmp(a[0], s))
	if (IS("scenario"))
		cmd_scenario(a + 1, n - 1);
	else if (IS("config"))
		cmd_config(a + 1, n - 1);
	else if (IS("port"))
		cmd_port(a + 1, n - 1);
	else if (IS("rx"))
		cmd_rx(a + 1, n - 1);
	else if (IS("rx-bad"))
		cmd_rx_bad(a + 1, n - 1);
	else if (IS("tick"))
		cmd_tick(a + 1, n - 1);
	else if (IS("push"))
		cmd_push(a + 1, n - 1);
	else if (IS("resume"))
		cmd_resume(a + 1, n - 1);
	else if (IS("expect-reports"))
		cmd_expect_reports(a + 1, n - 1, text);
	else if (IS("expect-heard"))
		cmd_expect_heard(a + 1, n - 1, text);
	else if (IS("expect-push-due"))
		cmd_expect_push_due(a + 1, n - 1, text);
	else if (IS("expect-fwd"))
		cmd_expect_fwd(a + 1, n - 1, text);
	else if (IS("expect-fwd-intact"))
		cmd_expect_fwd_intact(a + 1, n - 1, text);
	else if (IS("expect-consumed"))
		cmd_expect_verdict(a + 1, n - 1, text, false);
	else if (IS("expect-drop"))
		cmd_expect_verdict(a + 1, n - 1, text, true);
	else if (IS("expect-beacons"))
		cmd_expect_beacons(a + 1, n - 1, text);
	else if (IS("expect-state"))
		cmd_expect_state(a + 1, n - 1, text, false);
	else if (IS("expect-commit-state"))
		cmd_expect_state(a + 1, n - 1, text, true);
	else if (IS("expect-out"))
		cmd_expect_out(a + 1, n - 1, text, false);
	else if (IS("expect-commit-out"))
		cmd_expect_out(a + 1, n - 1, text, true);
	else if (IS("expect-reg"))
		cmd_expect_reg(a + 1, n - 1, text, false);
	else if (IS("expect-commit-reg"))
		cmd_expect_reg(a + 1, n - 1, text, true);
	else if (IS("expect-counter"))
		cmd_expect_counter(a + 1, n - 1, text);
	else if (IS("expect-route"))
		cmd_expect_route(a + 1, n - 1, text);
	else if (IS("parse-hosts"))
		cmd_parse_hosts(a + 1, n - 1, text);
	else
		die("unknown command", a[0]);
#undef IS
}

int main(int argc, char **argv)
{
	char line[512];
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: test_vectors VECTORS\n");
		return 2;
	}
	c.file = argv[1];
	f = fopen(c.file, "r");
	if (!f) {
		perror(c.file);
		return 2;
	}
	printf("TAP version 13\n");
	while (fgets(line, sizeof(line), f)) {
		c.line++;
		run_line(line);
	}
	fclose(f);
	if (!c.tests)
		die("no expectations in the vector file", NULL);
	printf("1..%u\n", c.tests);
	if (c.fails)
		printf("# %u of %u failed\n", c.fails, c.tests);
	return c.fails ? 1 : 0;
}
