// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of onepiped's decision logic (ctl_logic.c), TAP output.
 *
 * Crafted graphs and report sequences: every test builds a controller
 * from a topology text, feeds it events with explicit times and checks
 * the actions it queues (SAVE before SEND, which FAILs/RESUMEs/REJOINs
 * go to whom, what is logged) and the decisions (who failed, epoch, ts,
 * who rejoined).  DUMP=1 in the environment prints the actions recorded
 * at each failed test, to see what the logic did instead.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_logic.h"

#define MS(x)	((uint64_t)(x) * 1000000ULL)

static unsigned int ntests, nfails;

static void dump(void);

__attribute__((format(printf, 2, 3)))
static bool ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	ntests++;
	if (!cond) {
		nfails++;
		if (getenv("DUMP"))
			dump();
	}
	printf("%sok %u - ", cond ? "" : "not ", ntests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return cond;
}

/* ---- recording the actions ----------------------------------------------- */

struct rec {
	struct ctl_action *a;
	size_t n;
	size_t cap;
};

static struct rec R;

/* Drain @c's queue into R (R is emptied first). */
static void flush(struct ctl_logic *c)
{
	struct ctl_action a;

	R.n = 0;
	while (ctl_pop_action(c, &a)) {
		if (R.n == R.cap) {
			R.cap = R.cap ? 2 * R.cap : 64;
			R.a = realloc(R.a, R.cap * sizeof(*R.a));
			if (!R.a) {
				printf("Bail out! out of memory\n");
				exit(1);
			}
		}
		R.a[R.n++] = a;
	}
}

/* SENDs of @type (0: any) to @to (NULL: anyone). */
static unsigned int nsend(int type, const char *to)
{
	unsigned int i, n = 0;

	for (i = 0; i < R.n; i++)
		if (R.a[i].kind == CTL_ACT_SEND &&
		    (!type || R.a[i].msg.type == type) &&
		    (!to || !strcmp(R.a[i].to, to)))
			n++;
	return n;
}

static bool has_fail(const char *to, uint32_t epoch, uint32_t host,
		     uint64_t ts)
{
	unsigned int i;

	for (i = 0; i < R.n; i++) {
		const struct ctl_msg *m = &R.a[i].msg;

		if (R.a[i].kind == CTL_ACT_SEND && m->type == CTL_FAIL &&
		    !strcmp(R.a[i].to, to) && m->epoch == epoch &&
		    m->host == host && m->ts == ts &&
		    (m->flags & CTL_F_HAS_TS) && m->magic == CTL_MAGIC &&
		    m->version == CTL_VERSION)
			return true;
	}
	return false;
}

static bool has_state(const char *to, uint32_t epoch)
{
	unsigned int i;

	for (i = 0; i < R.n; i++)
		if (R.a[i].kind == CTL_ACT_SEND &&
		    R.a[i].msg.type == CTL_STATE &&
		    !strcmp(R.a[i].to, to) && R.a[i].msg.epoch == epoch)
			return true;
	return false;
}

static bool has_resume(const char *to, uint32_t epoch, const char *peer)
{
	unsigned int i;

	for (i = 0; i < R.n; i++)
		if (R.a[i].kind == CTL_ACT_SEND &&
		    R.a[i].msg.type == CTL_RESUME &&
		    !strcmp(R.a[i].to, to) && R.a[i].msg.epoch == epoch &&
		    !strcmp(R.a[i].msg.peer, peer))
			return true;
	return false;
}

/* REJOIN {epoch, host} to @to, with @ts (CTL_F_HAS_TS) or without. */
static bool has_rejoin(const char *to, uint32_t epoch, uint32_t host,
		       bool with_ts, uint64_t ts)
{
	unsigned int i;

	for (i = 0; i < R.n; i++) {
		const struct ctl_msg *m = &R.a[i].msg;

		if (R.a[i].kind == CTL_ACT_SEND && m->type == CTL_REJOIN &&
		    !strcmp(R.a[i].to, to) && m->epoch == epoch &&
		    m->host == host && !!(m->flags & CTL_F_HAS_TS) == with_ts &&
		    m->ts == (with_ts ? ts : 0))
			return true;
	}
	return false;
}

/* Index of the first SEND of @type to @to, -1 if none. */
static int send_pos(int type, const char *to)
{
	unsigned int i;

	for (i = 0; i < R.n; i++)
		if (R.a[i].kind == CTL_ACT_SEND && R.a[i].msg.type == type &&
		    !strcmp(R.a[i].to, to))
			return (int)i;
	return -1;
}

/* The last STATE to @to comes after every FAIL to it. */
static bool state_last(const char *to)
{
	int i, state = -1, fail = -1;

	for (i = 0; i < (int)R.n; i++) {
		if (R.a[i].kind != CTL_ACT_SEND || strcmp(R.a[i].to, to))
			continue;
		if (R.a[i].msg.type == CTL_STATE)
			state = i;
		else if (R.a[i].msg.type == CTL_FAIL)
			fail = i;
	}
	return state > fail;
}

static unsigned int nsaves(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < R.n; i++)
		n += R.a[i].kind == CTL_ACT_SAVE;
	return n;
}

/* A SAVE comes before the first SEND (true if no SEND at all). */
static bool save_first(void)
{
	unsigned int i;

	for (i = 0; i < R.n; i++) {
		if (R.a[i].kind == CTL_ACT_SAVE)
			return true;
		if (R.a[i].kind == CTL_ACT_SEND)
			return false;
	}
	return true;
}

/*
 * Every FAIL/RESUME is preceded by a SAVE made after the last event that
 * changed the decision (we check: no SEND of FAIL or RESUME before the
 * first SAVE).
 */
static bool no_send_before_save(void)
{
	unsigned int i;

	for (i = 0; i < R.n; i++) {
		if (R.a[i].kind == CTL_ACT_SAVE)
			return true;
		if (R.a[i].kind == CTL_ACT_SEND &&
		    (R.a[i].msg.type == CTL_FAIL ||
		     R.a[i].msg.type == CTL_RESUME))
			return false;
	}
	return true;
}

static unsigned int nlog(const char *substr, int level)
{
	unsigned int i, n = 0;

	for (i = 0; i < R.n; i++)
		if (R.a[i].kind == CTL_ACT_LOG &&
		    (level < 0 || R.a[i].level == level) &&
		    strstr(R.a[i].text, substr))
			n++;
	return n;
}

static void dump(void)
{
	unsigned int i;

	for (i = 0; i < R.n; i++) {
		const struct ctl_action *a = &R.a[i];

		if (a->kind == CTL_ACT_SAVE)
			printf("#   SAVE\n");
		else if (a->kind == CTL_ACT_LOG)
			printf("#   LOG %d %s\n", a->level, a->text);
		else
			printf("#   SEND %s %s epoch %u host %u ts %" PRIu64 " peer %s\n",
			       a->to, ctl_type_name(a->msg.type), a->msg.epoch,
			       a->msg.host, a->msg.ts, a->msg.peer);
	}
}

/* ctl_type_name() lives in ctl_proto.c, which this test does not link. */
const char *ctl_type_name(unsigned int type)
{
	static const char *const n[] = {
		"?", "hello", "link-down", "link-up", "unreach", "fail",
		"state", "done", "resume", "show", "show-reply", "rejoin",
		"rejoined", "relay",
	};

	return type < sizeof(n) / sizeof(n[0]) ? n[type] : "?";
}

/* ---- fixtures ------------------------------------------------------------ */

static const char topo4[] =
	"# 4 hosts, 2 ToRs, a spine\n"
	"host h1 1\n"
	"host h2 2\n"
	"host h3 3   # a comment\n"
	"host h4 4\n"
	"switch tor1\n"
	"switch tor2\n"
	"switch spine\n"
	"\n"
	"link h1 tor1\n"
	"link h2 tor1\n"
	"link h3 tor2\n"
	"link h4 tor2\n"
	"link tor1 spine\n"
	"link tor2 spine\n"
	"controller spine\n";

static struct ctl_config cfg = {
	.settle_ns = MS(500),
	.done_timeout_ns = MS(10000),
};

static struct ctl_logic *mk(const char *topo)
{
	char err[256];
	struct ctl_logic *c = ctl_new(topo, strlen(topo), &cfg, err,
				      sizeof(err));

	if (!c) {
		printf("Bail out! topology rejected: %s\n", err);
		exit(1);
	}
	return c;
}

/* Every node of topo4 says hello; actions drained. */
static void hello_all(struct ctl_logic *c)
{
	static const char *const sw[] = { "tor1", "tor2", "spine" };
	unsigned int i;
	char name[8];

	for (i = 1; i <= 4; i++) {
		snprintf(name, sizeof(name), "h%u", i);
		ctl_hello(c, 0, name, i);
	}
	for (i = 0; i < 3; i++)
		ctl_hello(c, 0, sw[i], 0);
	flush(c);
}

/* A controller on topo4 with every node connected, actions drained. */
static struct ctl_logic *mk4(void)
{
	struct ctl_logic *c = mk(topo4);

	hello_all(c);
	return c;
}

static bool failed_with(struct ctl_logic *c, const char *node,
			uint32_t epoch, uint64_t ts)
{
	uint32_t e;
	uint64_t t;

	return ctl_node_failed(c, node, &e, &t) == 1 && e == epoch && t == ts;
}

static bool is_correct(struct ctl_logic *c, const char *node)
{
	return ctl_node_failed(c, node, NULL, NULL) == 0;
}

static uint64_t ignored(struct ctl_logic *c)
{
	struct ctl_stats st;

	ctl_get_stats(c, &st);
	return st.ignored;
}

static uint64_t stale(struct ctl_logic *c)
{
	struct ctl_stats st;

	ctl_get_stats(c, &st);
	return st.stale;
}

/* Encode into a malloc'd string. */
static char *encode(struct ctl_logic *c)
{
	size_t n = ctl_encode(c, NULL, 0);
	char *s = malloc(n + 1);

	if (!s || ctl_encode(c, s, n + 1) != n) {
		printf("Bail out! encode\n");
		exit(1);
	}
	return s;
}

/* A standby: same topology, state loaded from @c's blob at @now. */
static struct ctl_logic *standby(struct ctl_logic *c, const char *topo,
				 uint64_t now)
{
	struct ctl_logic *s = mk(topo);
	char *blob = encode(c), err[256];

	if (ctl_decode(s, now, blob, strlen(blob), err, sizeof(err))) {
		printf("Bail out! decode: %s\n", err);
		exit(1);
	}
	free(blob);
	return s;
}

/* Same blob from both. */
static bool same_state(struct ctl_logic *a, struct ctl_logic *b)
{
	char *x = encode(a), *y = encode(b);
	bool same = !strcmp(x, y);

	if (!same)
		printf("# --- a:\n%s# --- b:\n%s", x, y);
	free(x);
	free(y);
	return same;
}

/* Cut h1's uplink: both ends report (h1 first); epoch 1 decided. */
static void cut_h1(struct ctl_logic *c, uint64_t now)
{
	ctl_link_down(c, now, "h1", "tor1", true, 100);
	ctl_link_down(c, now + MS(1), "tor1", "h1", true, 200);
}

/* ---- tests --------------------------------------------------------------- */

static void test_parse(void)
{
	struct ctl_logic *c = mk(topo4);
	uint32_t host = 0;
	char buf[16];
	uint64_t when;

	ok(ctl_node_kind(c, "h3", &host) == CTL_NODE_HOST && host == 3,
	   "parse: h3 is host 3");
	ok(ctl_node_kind(c, "spine", &host) == CTL_NODE_SWITCH && !host,
	   "parse: spine is a switch");
	ok(ctl_node_kind(c, "h9", NULL) == -ENOENT, "parse: h9 unknown");
	ok(ctl_epoch(c) == 0 && ctl_phase(c) == CTL_PH_IDLE &&
	   !ctl_next_deadline(c, &when) && !ctl_nfailures(c),
	   "parse: starts idle at epoch 0 with no timer");
	ok(ctl_encode(c, buf, sizeof(buf)) > sizeof(buf) - 1 &&
	   strlen(buf) == sizeof(buf) - 1,
	   "encode: truncates like snprintf and reports the full length");
	ctl_free(c);

	/* links and controllers may name nodes declared later */
	c = mk("link a s\ncontroller s\nhost a 7\nswitch s\n");
	ok(c && ctl_node_kind(c, "a", &host) == CTL_NODE_HOST && host == 7,
	   "parse: forward references");
	ctl_free(c);
}

static void test_parse_errors(void)
{
	static const struct {
		const char *topo;
		const char *err;
	} bad[] = {
		{ "host h1 1\nhost h1 2\n", "line 2: duplicate node 'h1'" },
		{ "host h1 1\nswitch h1\n", "line 2: duplicate node" },
		{ "host h1 1\nhost h2 1\n", "line 2: duplicate host id 1" },
		{ "host h1 1\nswitch s\nlink h1 x\ncontroller s\n",
		  "line 3: unknown node 'x'" },
		{ "switch s\ncontroller t\n", "line 2: unknown node 't'" },
		{ "host h/1 1\n", "line 1: bad node name" },
		{ "host h1234567890123456789012345678901 1\n",
		  "line 1: bad node name" },
		{ "\n\nhost h1 0\n", "line 3: bad host id '0'" },
		{ "host h1 x1\n", "line 1: bad host id" },
		{ "host h1 4294967296\n", "line 1: bad host id" },
		{ "host h1 -1\n", "line 1: bad host id" },
		{ "host h1\n", "line 1: usage: host NAME ID" },
		{ "switch s t\n", "line 1: usage: switch NAME" },
		{ "switch s\nlink s\n", "line 2: usage: link" },
		{ "switch s\nlink s s\n", "line 2: link from 's' to itself" },
		{ "switch s\nswitch t\nlink s t\nlink t s\n",
		  "line 4: duplicate link" },
		{ "switch s\ncontroller s\ncontroller s\n",
		  "line 3: duplicate controller" },
		{ "router r\n", "line 1: unknown keyword 'router'" },
		{ "switch s\n", "no controller node" },
		{ "switch s\nswitch t\ncontroller s\n",
		  "node 't' is not connected to a controller node" },
		{ "", "no controller node" },
	};
	char err[256], *big;
	unsigned int i;
	size_t pos = 0;
	struct ctl_logic *c;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		c = ctl_new(bad[i].topo, strlen(bad[i].topo), &cfg, err,
			    sizeof(err));
		if (!ok(!c && strstr(err, bad[i].err),
			"parse error %u: \"%s\"", i, bad[i].err))
			printf("#   got \"%s\"\n", err);
		ctl_free(c);
	}

	/* too many nodes: CTL_MAX_NODES + 1 switches */
	big = malloc(32 * (CTL_MAX_NODES + 2));
	for (i = 0; i <= CTL_MAX_NODES; i++)
		pos += (size_t)sprintf(big + pos, "switch s%u\n", i);
	c = ctl_new(big, pos, &cfg, err, sizeof(err));
	ok(!c && strstr(err, "too many nodes") &&
	   strstr(err, "line 1025:"), "parse error: too many nodes (%s)", err);
	free(big);

	/* the length bounds the text: no NUL needed */
	c = ctl_new("switch s\ncontroller s\nGARBAGE", 22, &cfg, err,
		    sizeof(err));
	ok(c != NULL, "parse: text bounded by its length");
	ctl_free(c);
}

static void test_host_cut(void)
{
	struct ctl_logic *c = mk4();
	uint64_t when;

	ok(ctl_link_down(c, MS(1000), "h1", "tor1", true, 100) == 0,
	   "host cut: h1's report accepted");
	flush(c);
	ok(ctl_phase(c) == CTL_PH_SETTLING && ctl_epoch(c) == 0 &&
	   !nsend(0, NULL) && nsaves() == 1,
	   "host cut: the wrong end's report only settles (saved)");
	ok(ctl_next_deadline(c, &when) && when == MS(1500),
	   "host cut: deadline at the settle time");
	ok(ctl_link_down(c, MS(1001), "tor1", "h1", true, 200) == 0,
	   "host cut: tor1's report accepted");
	flush(c);
	ok(ctl_epoch(c) == 1 && failed_with(c, "h1", 1, 200) &&
	   is_correct(c, "h2") && is_correct(c, "tor1"),
	   "host cut: epoch 1, h1 failed with tor1's ts");
	ok(save_first(), "host cut: SAVE before any SEND");
	ok(has_fail("h2", 1, 1, 200) && has_fail("h3", 1, 1, 200) &&
	   has_fail("h4", 1, 1, 200) && nsend(CTL_FAIL, NULL) == 3,
	   "host cut: FAIL{1, h1, 200} to each correct host, nobody else");
	ok(has_state("h2", 1) && has_state("h3", 1) && has_state("h4", 1) &&
	   state_last("h2") && !nsend(0, "h1") && !nsend(0, "tor1"),
	   "host cut: then STATE; nothing to h1 or switches");
	ok(ctl_phase(c) == CTL_PH_BROADCAST && ctl_waiting(c) == 3,
	   "host cut: BROADCAST waits for 3 DONEs");
	ok(nlog("h1 (1) failed at ts 200", CTL_LOG_NOTICE) == 1,
	   "host cut: the decision is logged");
	ok(ctl_next_deadline(c, &when) && when == MS(1001) + MS(10000),
	   "host cut: deadline at the done timeout");

	/* late report from the failed host: ignored */
	ok(ctl_link_up(c, MS(1002), "h1", "tor1") == -ESRCH &&
	   ignored(c) == 1, "host cut: reports from failed h1 ignored");

	ctl_host_done(c, MS(1100), "h2", 1, 1);
	ctl_host_done(c, MS(1100), "h3", 1, 1);
	flush(c);
	ok(ctl_phase(c) == CTL_PH_BROADCAST && ctl_waiting(c) == 1 &&
	   !nsend(0, NULL), "host cut: 2 DONEs: still waiting for h4");
	ok(ctl_host_done(c, MS(1100), "h3", 1, 1) == 0 && ctl_waiting(c) == 1 &&
	   ignored(c) == 1, "host cut: a repeated DONE is harmless");
	ctl_host_done(c, MS(1200), "h4", 1, 1);
	flush(c);
	ok(ctl_phase(c) == CTL_PH_RESUMING && ctl_waiting(c) == 1,
	   "host cut: every DONE in: RESUMING");
	ok(has_resume("tor1", 1, "h1") && nsend(CTL_RESUME, NULL) == 1 &&
	   nsend(0, NULL) == 1 && no_send_before_save(),
	   "host cut: exactly RESUME{1, h1} to tor1, after a SAVE");
	ok(ctl_switch_done(c, MS(1300), "tor1", 1, "h2") == -ENOENT,
	   "host cut: DONE for a port not owed is ignored");
	ok(ctl_switch_done(c, MS(1300), "tor1", 1, "h1") == 0, "host cut: tor1 DONE");
	flush(c);
	ok(ctl_phase(c) == CTL_PH_IDLE && !ctl_next_deadline(c, &when) &&
	   nsaves() == 1 && nlog("procedure complete", -1) == 1,
	   "host cut: switch DONE: IDLE (saved), no timer");
	ok(ctl_switch_done(c, MS(1300), "tor1", 1, "h1") == -ESTALE,
	   "host cut: late switch DONE is stale");
	ctl_free(c);
}

static void test_host_cut_tor_first(void)
{
	struct ctl_logic *c = mk4();

	ctl_link_down(c, MS(5), "tor1", "h1", true, 300);
	flush(c);
	ok(ctl_epoch(c) == 1 && failed_with(c, "h1", 1, 300),
	   "tor end first: decided at once");
	ok(ctl_link_down(c, MS(6), "h1", "tor1", true, 999) == -ESRCH &&
	   failed_with(c, "h1", 1, 300),
	   "tor end first: h1's late report changes nothing");
	ctl_free(c);
}

static void test_tor_dies(void)
{
	struct ctl_logic *c = mk4();

	ctl_link_down(c, MS(10), "h1", "tor1", true, 40);
	ctl_link_down(c, MS(11), "h2", "tor1", true, 45);
	flush(c);
	ok(ctl_phase(c) == CTL_PH_SETTLING && !ctl_epoch(c),
	   "tor dies: hosts' reports only settle");
	ctl_link_down(c, MS(12), "spine", "tor1", true, 50);
	flush(c);
	ok(ctl_epoch(c) == 1 && failed_with(c, "h1", 1, 50) &&
	   failed_with(c, "h2", 1, 50) && failed_with(c, "tor1", 1, 50),
	   "tor dies: tor1, h1, h2 fail with the spine's ts");
	ok(is_correct(c, "h3") && is_correct(c, "tor2"),
	   "tor dies: the other side is correct");
	ok(nsend(CTL_FAIL, NULL) == 4 && has_fail("h3", 1, 1, 50) &&
	   has_fail("h3", 1, 2, 50) && has_fail("h4", 1, 1, 50) &&
	   has_fail("h4", 1, 2, 50) && save_first(),
	   "tor dies: h3 and h4 get FAILs for h1 and h2");
	ok(ctl_nfailures(c) == 3, "tor dies: 3 entries in the failure log");
	ctl_host_done(c, MS(20), "h3", 1, 1);
	ctl_host_done(c, MS(20), "h3", 1, 2);
	ctl_host_done(c, MS(20), "h4", 1, 2);
	flush(c);
	ok(ctl_phase(c) == CTL_PH_BROADCAST && ctl_waiting(c) == 1,
	   "tor dies: one DONE missing");
	ctl_host_done(c, MS(21), "h4", 1, 1);
	flush(c);
	ok(has_resume("spine", 1, "tor1") && nsend(CTL_RESUME, NULL) == 1,
	   "tor dies: exactly RESUME{1, tor1} to the spine");
	ctl_switch_done(c, MS(22), "spine", 1, "tor1");
	ok(ctl_phase(c) == CTL_PH_IDLE, "tor dies: IDLE");
	ctl_free(c);
}

static void test_flap(void)
{
	struct ctl_logic *c = mk4();
	struct ctl_stats st;
	uint64_t when;

	ctl_link_down(c, MS(100), "tor1", "spine", true, 70);
	flush(c);
	ok(ctl_phase(c) == CTL_PH_SETTLING && ctl_settling(c),
	   "flap: tor1's report disconnects tor1's side: settling");
	ctl_link_up(c, MS(300), "tor1", "spine");
	flush(c);
	ctl_get_stats(c, &st);
	ok(ctl_phase(c) == CTL_PH_IDLE && !ctl_next_deadline(c, &when) &&
	   st.flaps == 1 && nlog("nobody fails", -1) == 1,
	   "flap: up before the settle time: called off");
	ctl_tick(c, MS(2000));
	flush(c);
	ok(!ctl_epoch(c) && is_correct(c, "h1") && is_correct(c, "tor1") &&
	   !nsend(0, NULL), "flap: nobody fails");

	/* a host's own report, withdrawn; twice */
	ctl_link_down(c, MS(3000), "h3", "tor2", true, 1);
	ctl_link_up(c, MS(3100), "h3", "tor2");
	ctl_link_down(c, MS(3200), "h3", "tor2", false, 0);
	ctl_link_up(c, MS(3300), "h3", "tor2");
	ctl_tick(c, MS(9000));
	flush(c);
	ctl_get_stats(c, &st);
	ok(!ctl_epoch(c) && is_correct(c, "h3") && st.flaps == 3 &&
	   ctl_phase(c) == CTL_PH_IDLE && st.reports == 6,
	   "flap: host link down/up twice: nobody fails");
	ctl_free(c);
}

static void test_two_hosts(void)
{
	struct ctl_logic *c = mk4();

	ctl_link_down(c, MS(1), "h1", "tor1", true, 10);
	ctl_link_down(c, MS(2), "h3", "tor2", true, 11);
	ctl_link_down(c, MS(3), "tor1", "h1", true, 20);
	flush(c);
	ok(!ctl_epoch(c) && ctl_settling(c),
	   "two hosts: one boundary reported, the other not yet");
	ctl_link_down(c, MS(4), "tor2", "h3", true, 30);
	flush(c);
	ok(ctl_epoch(c) == 1 && failed_with(c, "h1", 1, 20) &&
	   failed_with(c, "h3", 1, 30),
	   "two hosts: one epoch, each with its own ToR's ts");
	ok(nsend(CTL_FAIL, NULL) == 4 && has_fail("h2", 1, 1, 20) &&
	   has_fail("h2", 1, 3, 30) && has_fail("h4", 1, 3, 30) &&
	   ctl_waiting(c) == 4, "two hosts: FAILs for both to h2, h4");
	ctl_host_done(c, 0, "h2", 1, 1);
	ctl_host_done(c, 0, "h2", 1, 3);
	ctl_host_done(c, 0, "h4", 1, 1);
	ctl_host_done(c, 0, "h4", 1, 3);
	flush(c);
	ok(has_resume("tor1", 1, "h1") && has_resume("tor2", 1, "h3") &&
	   nsend(CTL_RESUME, NULL) == 2, "two hosts: RESUME tor1:h1 tor2:h3");
	ctl_free(c);
}

static void test_second_failure(void)
{
	struct ctl_logic *c = mk4();

	cut_h1(c, MS(1));
	ctl_host_done(c, MS(2), "h2", 1, 1);
	flush(c);
	ctl_link_down(c, MS(3), "tor2", "h3", true, 77);
	flush(c);
	ok(ctl_epoch(c) == 2 && ctl_phase(c) == CTL_PH_BROADCAST &&
	   failed_with(c, "h1", 1, 200) && failed_with(c, "h3", 2, 77),
	   "second failure: epoch 2; h1 keeps epoch 1");
	ok(has_fail("h2", 2, 1, 200) && has_fail("h2", 2, 3, 77) &&
	   has_fail("h4", 2, 1, 200) && has_fail("h4", 2, 3, 77) &&
	   nsend(CTL_FAIL, NULL) == 4 && save_first(),
	   "second failure: FAILs for the union, with epoch 2");
	ok(ctl_waiting(c) == 4, "second failure: epoch 1's DONEs dropped");
	ok(ctl_host_done(c, MS(4), "h4", 1, 3) == -ESTALE && stale(c) == 1 &&
	   ctl_waiting(c) == 4,
	   "second failure: DONE for epoch 1 about h3 (failed in 2) is stale");
	ok(ctl_host_done(c, MS(4), "h4", 3, 1) == -ERANGE && ignored(c) == 1,
	   "second failure: DONE for a future epoch ignored and counted");
	ok(ctl_host_done(c, MS(4), "h4", 2, 2) == -ENOENT && ignored(c) == 2,
	   "second failure: DONE for a host not failed ignored and counted");
	ctl_host_done(c, MS(5), "h2", 2, 1);
	ctl_host_done(c, MS(5), "h2", 2, 3);
	ctl_host_done(c, MS(5), "h4", 2, 3);
	ctl_host_done(c, MS(5), "h4", 2, 1);
	flush(c);
	ok(ctl_phase(c) == CTL_PH_RESUMING && has_resume("tor1", 2, "h1") &&
	   has_resume("tor2", 2, "h3") && nsend(CTL_RESUME, NULL) == 2,
	   "second failure: RESUMEs for both, epoch 2");

	/* a third failure during RESUMING: epoch 3, owed RESUMEs dropped */
	ctl_link_down(c, MS(6), "tor2", "h4", true, 88);
	flush(c);
	ok(ctl_epoch(c) == 3 && ctl_phase(c) == CTL_PH_BROADCAST &&
	   ctl_waiting(c) == 3 && nsend(CTL_FAIL, "h2") == 3 &&
	   has_fail("h2", 3, 4, 88),
	   "third failure during RESUMING: epoch 3 with the union");
	ctl_host_done(c, MS(7), "h2", 3, 1);
	ctl_host_done(c, MS(7), "h2", 3, 3);
	ctl_host_done(c, MS(7), "h2", 3, 4);
	flush(c);
	ok(nsend(CTL_RESUME, NULL) == 3 && has_resume("tor1", 3, "h1") &&
	   has_resume("tor2", 3, "h3") && has_resume("tor2", 3, "h4"),
	   "third failure: RESUMEs for all three ports");
	ctl_switch_done(c, MS(8), "tor2", 3, "h3");
	ctl_switch_done(c, MS(8), "tor2", 3, "h4");
	ok(ctl_phase(c) == CTL_PH_RESUMING && ctl_waiting(c) == 1,
	   "third failure: tor1 still owes");
	ctl_switch_done(c, MS(8), "tor1", 3, "h1");
	ok(ctl_phase(c) == CTL_PH_IDLE, "third failure: IDLE");
	flush(c);

	/* a new procedure starts with only its own failures */
	ctl_link_down(c, MS(9), "spine", "tor1", true, 99);
	flush(c);
	ok(ctl_epoch(c) == 4 && failed_with(c, "tor1", 4, 99) &&
	   failed_with(c, "h2", 4, 99) && nsend(CTL_FAIL, NULL) == 0 &&
	   ctl_waiting(c) == 1 && ctl_phase(c) == CTL_PH_RESUMING &&
	   has_resume("spine", 4, "tor1") && nsend(CTL_RESUME, NULL) == 1,
	   "next procedure: only its own hosts (h2; nobody left to tell)");
	ctl_free(c);
}

static void test_settle_timeout(void)
{
	struct ctl_logic *c = mk4();
	uint64_t when;

	ctl_link_down(c, MS(1000), "h1", "tor1", true, 100);
	flush(c);
	ok(ctl_next_deadline(c, &when) && when == MS(1500),
	   "settle timeout: deadline");
	ctl_tick(c, MS(1499));
	flush(c);
	ok(!ctl_epoch(c) && ctl_phase(c) == CTL_PH_SETTLING,
	   "settle timeout: not before");
	ctl_tick(c, MS(1500));
	flush(c);
	ok(ctl_epoch(c) == 1 && failed_with(c, "h1", 1, 0),
	   "settle timeout: decided, ts 0 (no correct-end report)");
	ok(nlog("tor1 did not report its link to h1: atomicity may be lost",
		CTL_LOG_WARNING) == 1, "settle timeout: atomicity warning");
	ok(save_first() && nsend(CTL_FAIL, NULL) == 3,
	   "settle timeout: SAVE, then FAILs");
	ctl_free(c);

	/* the timer runs from the first report that disconnected anything */
	c = mk4();
	ctl_link_down(c, MS(1000), "h1", "tor1", true, 100);
	ctl_link_down(c, MS(1400), "h3", "tor2", true, 100);
	ctl_link_down(c, MS(1450), "tor2", "h3", true, 333);
	flush(c);
	ok(!ctl_epoch(c) && ctl_next_deadline(c, &when) && when == MS(1500),
	   "settle timeout: a later disconnection keeps the first deadline");
	ctl_tick(c, MS(1500));
	flush(c);
	ok(failed_with(c, "h1", 1, 0) && failed_with(c, "h3", 1, 333) &&
	   nlog("atomicity", -1) == 1,
	   "settle timeout: both decided, one warning");
	ctl_free(c);

	/* only tor1 reports its uplink: tor1's side fails at the timeout */
	c = mk4();
	ctl_link_down(c, MS(0), "tor1", "spine", true, 5);
	ctl_tick(c, MS(500));
	flush(c);
	ok(failed_with(c, "tor1", 1, 0) && failed_with(c, "h1", 1, 0) &&
	   failed_with(c, "h2", 1, 0) &&
	   nlog("spine did not report its link to tor1", CTL_LOG_WARNING) == 1,
	   "settle timeout: a silent spine: tor1's side fails, warning");
	ctl_free(c);
}

static void test_done_timeout(void)
{
	struct ctl_logic *c = mk4();
	uint64_t when;

	cut_h1(c, MS(0));
	ctl_host_done(c, MS(5), "h2", 1, 1);
	flush(c);
	ctl_tick(c, MS(10000));
	flush(c);
	ok(ctl_phase(c) == CTL_PH_BROADCAST, "done timeout: not before");
	ctl_tick(c, MS(10001));
	flush(c);
	ok(ctl_phase(c) == CTL_PH_RESUMING &&
	   nlog("host h3 did not answer DONE", CTL_LOG_WARNING) == 1 &&
	   nlog("host h4 did not answer DONE", CTL_LOG_WARNING) == 1 &&
	   nlog("h2 did not", -1) == 0,
	   "done timeout: logs h3 and h4, resumes");
	ok(has_resume("tor1", 1, "h1") && save_first(),
	   "done timeout: RESUME after a SAVE");
	ok(ctl_host_done(c, MS(10002), "h3", 1, 1) == -ESTALE,
	   "done timeout: a late host DONE is harmless");

	/* switch DONEs are never given up: resent, logged */
	ctl_disconnect(c, MS(10003), "tor1");
	ok(ctl_next_deadline(c, &when) && when == MS(20001),
	   "done timeout: resume deadline");
	ctl_tick(c, MS(20001));
	flush(c);
	ok(ctl_phase(c) == CTL_PH_RESUMING &&
	   nlog("switch tor1 has not resumed port h1", CTL_LOG_WARNING) == 1 &&
	   !nsend(0, NULL), "done timeout: tor1 not connected: logged only");
	ctl_hello(c, MS(20002), "tor1", 0);
	flush(c);
	ok(has_resume("tor1", 1, "h1") && has_state("tor1", 1),
	   "done timeout: tor1 says hello: gets its RESUME, STATE");
	ctl_tick(c, MS(30001));
	flush(c);
	ok(has_resume("tor1", 1, "h1"), "done timeout: resent when connected");
	ctl_free(c);
}

static void test_ignored(void)
{
	struct ctl_logic *c = mk4();
	struct ctl_stats st;

	ok(ctl_link_down(c, 0, "nosuch", "tor1", true, 1) == -ENOENT,
	   "ignored: unknown reporter");
	ok(ctl_link_down(c, 0, "tor1", "nosuch", true, 1) == -ENOENT,
	   "ignored: unknown peer");
	ok(ctl_link_down(c, 0, "h1", "h3", true, 1) == -ENOENT,
	   "ignored: no such link");
	ok(ctl_hello(c, 0, "h2", 5) == -EINVAL, "ignored: wrong host id");
	ok(ctl_hello(c, 0, "zz", 5) == -ENOENT, "ignored: hello from nobody");
	ok(ctl_host_done(c, 0, "h2", 1, 1) == -ERANGE,
	   "ignored: DONE before any epoch");
	ok(ctl_host_done(c, 0, "tor1", 0, 1) == -EINVAL,
	   "ignored: host DONE from a switch");
	ok(ctl_switch_done(c, 0, "h1", 0, "tor1") == -EINVAL,
	   "ignored: switch DONE from a host");
	ok(ctl_unreach(c, 0, "h1", 3) == 0, "unreach: recorded");
	ok(ctl_unreach(c, 0, "zz", 3) == -ENOENT, "unreach: unknown reporter");
	ctl_count_bad(c);
	ctl_get_stats(c, &st);
	flush(c);
	ok(st.ignored == 9 && st.bad == 1 && st.unreach == 1 &&
	   !st.reports && !st.decisions,
	   "ignored: counted (ignored %" PRIu64 ", bad %" PRIu64 ")",
	   st.ignored, st.bad);
	ok(nlog("h1 gets no ACK from host 3 (h3): its module relays",
		CTL_LOG_NOTICE) == 1 &&
	   nlog("not implemented", -1) == 0 &&
	   nlog("unknown node", CTL_LOG_WARNING) == 3,
	   "ignored: logged");
	ok(!ctl_epoch(c) && ctl_phase(c) == CTL_PH_IDLE && !nsend(0, NULL),
	   "ignored: nothing happened");
	ctl_free(c);
}

static void test_hello(void)
{
	struct ctl_logic *c = mk4();

	ctl_disconnect(c, MS(0), "h2");
	cut_h1(c, MS(1));
	flush(c);
	ok(!nsend(0, "h2") && nsend(CTL_FAIL, NULL) == 2,
	   "hello: disconnected h2 gets nothing at the decision");
	ok(ctl_waiting(c) == 3, "hello: ... but still owes its DONE");
	ctl_hello(c, MS(2), "h2", 2);
	flush(c);
	ok(has_fail("h2", 1, 1, 200) && has_state("h2", 1) &&
	   state_last("h2") && nsend(0, NULL) == 2,
	   "hello during BROADCAST: the FAIL, then STATE");
	ctl_hello(c, MS(2), "tor2", 0);
	flush(c);
	ok(nsend(0, NULL) == 1 && has_state("tor2", 1),
	   "hello from a switch during BROADCAST: STATE only");
	ctl_hello(c, MS(2), "h1", 1);
	flush(c);
	ok(!nsend(0, NULL) &&
	   nlog("failed in epoch 1: it rejoins when", -1) == 1,
	   "hello from failed h1: nothing sent (no rejoin during a procedure)");
	ctl_host_done(c, MS(3), "h2", 1, 1);
	ctl_host_done(c, MS(3), "h3", 1, 1);
	ctl_host_done(c, MS(3), "h4", 1, 1);
	ctl_switch_done(c, MS(3), "tor1", 1, "h1");
	flush(c);

	/* later: a second procedure, then a fresh host says hello */
	ctl_link_down(c, MS(4), "tor2", "h3", true, 400);
	ctl_host_done(c, MS(5), "h2", 2, 3);
	flush(c);
	ctl_disconnect(c, MS(6), "h4");
	ctl_hello(c, MS(6), "h4", 4);
	flush(c);
	ok(has_fail("h4", 1, 1, 200) && has_fail("h4", 2, 3, 400) &&
	   has_state("h4", 2) && state_last("h4") && nsend(0, NULL) == 3,
	   "hello: the whole log (old failure with its own epoch), STATE");
	ctl_host_done(c, MS(7), "h4", 2, 3);
	flush(c);
	ok(ctl_phase(c) == CTL_PH_RESUMING && has_resume("tor2", 2, "h3") &&
	   nsend(0, NULL) == 1, "hello: its DONE counts; only h3's port");
	ctl_hello(c, MS(8), "tor2", 0);
	flush(c);
	ok(has_resume("tor2", 2, "h3") && has_state("tor2", 2) &&
	   nsend(0, NULL) == 2, "hello from a switch while RESUMING: RESUME");
	ctl_hello(c, MS(8), "tor1", 0);
	flush(c);
	ok(nsend(CTL_RESUME, NULL) == 0 && has_state("tor1", 2),
	   "hello from a switch that owes nothing: STATE");
	ctl_free(c);
}

static void test_handle_msg(void)
{
	struct ctl_logic *c = mk4();
	struct ctl_msg m;

	memset(&m, 0, sizeof(m));
	m.magic = CTL_MAGIC;
	m.version = CTL_VERSION;
	m.type = CTL_LINK_DOWN;
	m.flags = CTL_F_HAS_TS;
	m.ts = 555;
	strcpy(m.node, "tor1");
	strcpy(m.peer, "h2");
	ok(ctl_handle_msg(c, MS(1), &m) == 0 && failed_with(c, "h2", 1, 555),
	   "handle_msg: LINK_DOWN with ts");
	m.type = CTL_DONE;
	m.flags = 0;
	m.epoch = 1;
	m.host = 2;
	strcpy(m.node, "h1");
	m.peer[0] = 0;
	ctl_handle_msg(c, MS(2), &m);
	strcpy(m.node, "h3");
	ctl_handle_msg(c, MS(2), &m);
	strcpy(m.node, "h4");
	ok(ctl_handle_msg(c, MS(2), &m) == 0 &&
	   ctl_phase(c) == CTL_PH_RESUMING, "handle_msg: host DONEs");
	strcpy(m.node, "tor1");
	strcpy(m.peer, "h2");
	m.host = 0;
	ok(ctl_handle_msg(c, MS(3), &m) == 0 && ctl_phase(c) == CTL_PH_IDLE,
	   "handle_msg: switch DONE");
	m.type = CTL_SHOW;
	ok(ctl_handle_msg(c, MS(3), &m) == -EOPNOTSUPP,
	   "handle_msg: other types ignored");
	ctl_free(c);
}

/* Drive @a and @b through the same events; compare what they send. */
static bool same_future(struct ctl_logic *a, struct ctl_logic *b)
{
	static const char *const hosts[] = { "h1", "h2", "h3", "h4" };
	struct rec ra;
	bool same = true;
	unsigned int i, k, step;

	for (step = 0; step < 4 && same; step++) {
		struct ctl_logic *x[2] = { a, b };
		struct rec r[2];

		for (k = 0; k < 2; k++) {
			struct ctl_logic *c = x[k];

			switch (step) {
			case 0:
				ctl_tick(c, MS(600000));
				break;
			case 1:
				for (i = 0; i < 4; i++) {
					ctl_host_done(c, MS(600001), hosts[i],
						      ctl_epoch(c), 1);
					ctl_host_done(c, MS(600001), hosts[i],
						      ctl_epoch(c), 3);
				}
				break;
			case 2:
				ctl_link_down(c, MS(600002), "tor2", "h4",
					      true, 4444);
				break;
			case 3:
				ctl_tick(c, MS(700000));
				break;
			}
			flush(c);
			r[k].n = R.n;
			r[k].a = malloc((R.n + 1) * sizeof(*R.a));
			memcpy(r[k].a, R.a, R.n * sizeof(*R.a));
		}
		ra = r[0];
		same = ra.n == r[1].n;
		if (!same)
			printf("# step %u: %zu vs %zu actions\n", step, ra.n,
			       r[1].n);
		for (i = 0; same && i < ra.n; i++) {
			const struct ctl_action *p = &ra.a[i], *q = &r[1].a[i];

			if (p->kind != q->kind ||
			    (p->kind == CTL_ACT_SEND &&
			     (strcmp(p->to, q->to) ||
			      memcmp(&p->msg, &q->msg, sizeof(p->msg)))))
				same = false;
			if (!same) {
				printf("# step %u action %u differs\n", step, i);
				break;
			}
		}
		same = same && same_state(a, b);
		free(r[0].a);
		free(r[1].a);
	}
	return same;
}

static void test_encode_decode(void)
{
	struct ctl_logic *c, *s;
	char err[256];
	char *blob;

	/* idle with history and a pending report */
	c = mk4();
	cut_h1(c, MS(1));
	ctl_host_done(c, MS(2), "h2", 1, 1);
	ctl_host_done(c, MS(2), "h3", 1, 1);
	ctl_host_done(c, MS(2), "h4", 1, 1);
	ctl_switch_done(c, MS(2), "tor1", 1, "h1");
	ctl_link_down(c, MS(3), "h3", "tor2", false, 0);
	flush(c);
	s = standby(c, topo4, MS(3));
	flush(s);
	ok(same_state(c, s) && ctl_phase(s) == CTL_PH_SETTLING &&
	   failed_with(s, "h1", 1, 200),
	   "round trip: idle + settling: same state");
	hello_all(s);
	ok(same_future(c, s), "round trip: idle + settling: same decisions");
	ctl_free(c);
	ctl_free(s);

	/* mid-BROADCAST of a two-epoch procedure, partly answered */
	c = mk4();
	cut_h1(c, MS(1));
	ctl_link_down(c, MS(2), "tor2", "h3", true, 31);
	ctl_host_done(c, MS(3), "h2", 2, 3);
	flush(c);
	blob = encode(c);
	s = standby(c, topo4, MS(3));
	flush(s);
	ok(same_state(c, s) && ctl_phase(s) == CTL_PH_BROADCAST &&
	   ctl_waiting(s) == 3 && ctl_epoch(s) == 2,
	   "round trip: BROADCAST: same state");
	ok(strstr(blob, "owe h2 h1\n") && strstr(blob, "owe h4 h1 h3\n") &&
	   strstr(blob, "fail h1 1 200\n") && strstr(blob, "down tor1 h1 200\n"),
	   "round trip: blob readable");
	hello_all(s);
	ok(same_future(c, s), "round trip: BROADCAST: same decisions");
	free(blob);
	ctl_free(c);
	ctl_free(s);

	/* mid-RESUMING */
	c = mk4();
	ctl_link_down(c, MS(1), "spine", "tor2", true, 9);
	ctl_host_done(c, MS(2), "h1", 1, 3);
	ctl_host_done(c, MS(2), "h1", 1, 4);
	ctl_host_done(c, MS(2), "h2", 1, 4);
	ctl_host_done(c, MS(2), "h2", 1, 3);
	flush(c);
	s = standby(c, topo4, MS(2));
	ok(same_state(c, s) && ctl_phase(s) == CTL_PH_RESUMING,
	   "round trip: RESUMING: same state");
	hello_all(s);
	ok(same_future(c, s), "round trip: RESUMING: same decisions");
	ctl_free(c);
	ctl_free(s);

	/* bad blobs */
	c = mk(topo4);
	ok(ctl_decode(c, 0, "hello\n", 6, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "line 1: not a controller state"),
	   "decode: not a state (%s)", err);
	blob = "onepipe-ctl-state 1\nepoch 1\n";
	ok(ctl_decode(c, 0, blob, strlen(blob), err, sizeof(err)) == -EINVAL &&
	   strstr(err, "truncated"), "decode: truncated (%s)", err);
	blob = "onepipe-ctl-state 1\nepoch 1\nfail h9 1 0\nend\n";
	ok(ctl_decode(c, 0, blob, strlen(blob), err, sizeof(err)) == -EINVAL &&
	   strstr(err, "line 3: bad failure 'h9'"),
	   "decode: unknown node (%s)", err);
	blob = "onepipe-ctl-state 1\nepoch 1\nfail h1 2 0\nend\n";
	ok(ctl_decode(c, 0, blob, strlen(blob), err, sizeof(err)) == -EINVAL,
	   "decode: failure after the epoch (%s)", err);
	blob = "onepipe-ctl-state 1\nepoch 1\nphase idle\ndown h1 h3\nend\n";
	ok(ctl_decode(c, 0, blob, strlen(blob), err, sizeof(err)) == -EINVAL &&
	   strstr(err, "line 4:"), "decode: no such link (%s)", err);
	blob = "onepipe-ctl-state 1\nepoch 1\nphase idle\nfail h1 1 5\nowe h2 h1\nend\n";
	ok(ctl_decode(c, 0, blob, strlen(blob), err, sizeof(err)) == -EINVAL &&
	   strstr(err, "line 5: bad owe"), "decode: owe while idle (%s)", err);
	ok(!ctl_epoch(c) && !ctl_nfailures(c) && ctl_phase(c) == CTL_PH_IDLE,
	   "decode: a rejected blob leaves nothing decided");
	ctl_free(c);
}

static void test_takeover(void)
{
	struct ctl_logic *c = mk4(), *s;
	struct ctl_stats st;
	uint64_t when;

	/* the leader decides, gets one DONE, dies */
	cut_h1(c, MS(1));
	ctl_host_done(c, MS(2), "h2", 1, 1);
	flush(c);
	s = standby(c, topo4, MS(50000));
	ctl_free(c);
	flush(s);
	ok(ctl_epoch(s) == 1 && ctl_phase(s) == CTL_PH_BROADCAST &&
	   ctl_waiting(s) == 2 && !nsend(0, NULL),
	   "takeover: BROADCAST loaded, nobody connected yet");
	ok(ctl_next_deadline(s, &when) && when == MS(60000),
	   "takeover: done timeout restarts at load");
	ctl_hello(s, MS(50001), "h2", 2);
	ctl_hello(s, MS(50001), "h3", 3);
	ctl_hello(s, MS(50001), "h4", 4);
	ctl_hello(s, MS(50001), "tor1", 0);
	ctl_hello(s, MS(50001), "tor2", 0);
	ctl_hello(s, MS(50001), "spine", 0);
	flush(s);
	ok(has_fail("h2", 1, 1, 200) && has_fail("h3", 1, 1, 200) &&
	   has_fail("h4", 1, 1, 200) && has_state("h3", 1) &&
	   nsend(CTL_RESUME, NULL) == 0,
	   "takeover: hellos get the pending FAILs");
	ctl_host_done(s, MS(50002), "h2", 1, 1);	/* a repeat */
	ctl_host_done(s, MS(50002), "h3", 1, 1);
	ctl_host_done(s, MS(50002), "h4", 1, 1);
	flush(s);
	ok(ctl_phase(s) == CTL_PH_RESUMING && has_resume("tor1", 1, "h1") &&
	   nsend(CTL_RESUME, NULL) == 1, "takeover: resumes");

	/* and the standby dies too, mid-RESUMING: a third instance */
	c = standby(s, topo4, MS(90000));
	ctl_free(s);
	s = c;
	flush(s);
	ctl_hello(s, MS(90001), "h2", 2);
	ctl_hello(s, MS(90001), "tor1", 0);
	flush(s);
	ok(has_resume("tor1", 1, "h1") && has_fail("h2", 1, 1, 200),
	   "takeover mid-RESUMING: hello gets the RESUME again");
	ctl_switch_done(s, MS(90002), "tor1", 1, "h1");
	flush(s);
	ctl_get_stats(s, &st);
	ok(ctl_phase(s) == CTL_PH_IDLE && ctl_epoch(s) == 1 &&
	   !st.decisions && ctl_nfailures(s) == 1,
	   "takeover: finished, no new epoch");
	ctl_free(s);

	/* the leader saved a report but died before deciding */
	c = mk4();
	ctl_link_down(c, MS(1), "h1", "tor1", true, 100);
	flush(c);
	/* simulate: tor1's report saved, decision not (a hand-made blob) */
	s = mk(topo4);
	{
		const char *blob = "onepipe-ctl-state 1\nepoch 0\nphase idle\n"
				   "first-epoch 0\ndown h1 tor1 100\n"
				   "down tor1 h1 200\nend\n";
		char err[128];

		ok(ctl_decode(s, MS(7), blob, strlen(blob), err,
			      sizeof(err)) == 0, "takeover: undecided blob");
	}
	flush(s);
	ok(ctl_epoch(s) == 1 && failed_with(s, "h1", 1, 200) && save_first(),
	   "takeover: the standby makes the decision the leader did not");
	ctl_free(s);
	ctl_free(c);
}

static void test_json(void)
{
	struct ctl_logic *c = mk4();
	char small[16], *buf;
	size_t n;

	ctl_disconnect(c, 0, "h4");
	cut_h1(c, MS(1));
	ctl_link_down(c, MS(2), "h3", "tor2", false, 0);
	flush(c);
	n = ctl_show_json(c, MS(2), NULL, 0);
	buf = malloc(n + 1);
	ok(ctl_show_json(c, MS(2), buf, n + 1) == n && strlen(buf) == n,
	   "json: length as snprintf");
	ok(ctl_show_json(c, MS(2), small, sizeof(small)) == n &&
	   strlen(small) == sizeof(small) - 1, "json: truncated safely");
	ok(strstr(buf, "\"epoch\":1,\"phase\":\"broadcast\",\"settling\":true") &&
	   strstr(buf, "{\"name\":\"h1\",\"kind\":\"host\",\"host\":1,\"controller\":false,\"state\":\"failed\",\"connected\":true,\"epoch\":1,\"ts\":200}") &&
	   strstr(buf, "\"name\":\"h3\",\"kind\":\"host\",\"host\":3,\"controller\":false,\"state\":\"disconnected\"") &&
	   strstr(buf, "\"name\":\"h4\",\"kind\":\"host\",\"host\":4,\"controller\":false,\"state\":\"correct\",\"connected\":false") &&
	   strstr(buf, "\"name\":\"spine\",\"kind\":\"switch\",\"controller\":true"),
	   "json: nodes");
	ok(strstr(buf, "{\"a\":\"h1\",\"b\":\"tor1\",\"state\":\"down\",\"reports\":[{\"by\":\"h1\",\"ts\":100},{\"by\":\"tor1\",\"ts\":200}]}") &&
	   strstr(buf, "{\"a\":\"h3\",\"b\":\"tor2\",\"state\":\"down\",\"reports\":[{\"by\":\"h3\"}]}") &&
	   strstr(buf, "{\"a\":\"tor1\",\"b\":\"spine\",\"state\":\"up\",\"reports\":[]}"),
	   "json: links");
	ok(strstr(buf, "\"failures\":[{\"node\":\"h1\",\"kind\":\"host\",\"host\":1,\"epoch\":1,\"ts\":200,\"rejoined\":false}]") &&
	   strstr(buf, "\"waiting\":{\"count\":3,\"hosts\":[{\"node\":\"h2\",\"owes\":[\"h1\"]},{\"node\":\"h3\",\"owes\":[\"h1\"]},{\"node\":\"h4\",\"owes\":[\"h1\"]}],\"switches\":[]}") &&
	   strstr(buf, "\"settle_left_ms\":500") &&
	   strstr(buf, "\"counters\":{\"reports\":3,\"ignored\":0,\"stale\":0,\"bad\":0,\"decisions\":1,\"unreach\":0,\"flaps\":0,\"rejoins\":0,\"relayed\":0,\"relay_dropped\":0}}"),
	   "json: failures, waiting, counters");
	if (nfails)
		printf("# %s\n", buf);
	free(buf);
	ctl_free(c);
}

/* Two spines, the controller on one; the other one fails. */
static void test_two_spines(void)
{
	static const char topo[] =
		"host h1 1\nhost h2 2\n"
		"switch tor1\nswitch tor2\nswitch sp1\nswitch sp2\n"
		"link h1 tor1\nlink h2 tor2\n"
		"link tor1 sp1\nlink tor1 sp2\nlink tor2 sp1\nlink tor2 sp2\n"
		"controller sp1\n";
	struct ctl_logic *c = mk(topo);

	ctl_hello(c, 0, "h1", 1);
	ctl_hello(c, 0, "h2", 2);
	ctl_hello(c, 0, "tor1", 0);
	ctl_hello(c, 0, "tor2", 0);
	ctl_link_down(c, MS(1), "tor1", "sp1", true, 10);
	ctl_link_down(c, MS(1), "sp1", "tor1", true, 10);
	flush(c);
	ok(!ctl_epoch(c) && ctl_phase(c) == CTL_PH_IDLE,
	   "two spines: one spine link down: still connected, nobody fails");
	ok(ctl_link_down(c, MS(2), "tor1", "sp2", true, 20) == 0 &&
	   ctl_phase(c) == CTL_PH_SETTLING,
	   "two spines: both of tor1's uplinks down from tor1: settling");
	ctl_link_up(c, MS(3), "tor1", "sp1");
	ok(ctl_phase(c) == CTL_PH_SETTLING,
	   "two spines: sp1's own report still holds the link down");
	ctl_link_up(c, MS(3), "sp1", "tor1");
	ok(ctl_phase(c) == CTL_PH_IDLE && !ctl_epoch(c),
	   "two spines: both ends up: reconnected");
	flush(c);

	/* sp2 dies: tor1 and tor2 report; no host fails */
	ctl_link_up(c, MS(4), "tor1", "sp2");
	ctl_link_down(c, MS(5), "tor1", "sp2", true, 50);
	ctl_link_down(c, MS(5), "tor2", "sp2", true, 60);
	flush(c);
	ok(ctl_epoch(c) == 1 && failed_with(c, "sp2", 1, 60) &&
	   !nsend(CTL_FAIL, NULL) && ctl_phase(c) == CTL_PH_RESUMING,
	   "two spines: sp2 fails alone, no FAIL, straight to RESUMING");
	ok(has_resume("tor1", 1, "sp2") && has_resume("tor2", 1, "sp2") &&
	   nsend(CTL_RESUME, NULL) == 2, "two spines: tor1, tor2 resume sp2");
	ctl_switch_done(c, MS(6), "tor1", 1, "sp2");
	ctl_switch_done(c, MS(6), "tor2", 1, "sp2");
	ok(ctl_phase(c) == CTL_PH_IDLE, "two spines: IDLE");
	ctl_free(c);
}

/* ---- rejoin -------------------------------------------------------------- */

static struct ctl_stats stats(struct ctl_logic *c)
{
	struct ctl_stats st;

	ctl_get_stats(c, &st);
	return st;
}

/* Every correct host of topo4 but @skip answers DONE {epoch, host}. */
static void hosts_done(struct ctl_logic *c, uint64_t now, uint32_t epoch,
		       uint32_t host, const char *skip)
{
	static const char *const hosts[] = { "h1", "h2", "h3", "h4" };
	unsigned int i;

	for (i = 0; i < 4; i++)
		if (is_correct(c, hosts[i]) &&
		    (!skip || strcmp(skip, hosts[i])))
			ctl_host_done(c, now, hosts[i], epoch, host);
}

/* cut_h1 and its whole procedure: idle at epoch 1, actions drained. */
static void fail_h1(struct ctl_logic *c, uint64_t now)
{
	cut_h1(c, now);
	hosts_done(c, now + MS(2), 1, 1, NULL);
	ctl_switch_done(c, now + MS(2), "tor1", 1, "h1");
	flush(c);
}

/* fail_h1, then tor1 hears h1 again: REJOINING at epoch 2, drained. */
static struct ctl_logic *rejoining_h1(void)
{
	struct ctl_logic *c = mk4();

	fail_h1(c, MS(1));
	ctl_link_up(c, MS(10), "tor1", "h1");
	flush(c);
	return c;
}

static void test_rejoin(void)
{
	struct ctl_logic *c = mk4();
	const char *node = NULL;
	uint64_t ts = 0, when;
	uint32_t ep = 0;
	char *blob, buf[8192];
	struct ctl_stats st;

	fail_h1(c, MS(1));
	ok(ctl_phase(c) == CTL_PH_IDLE && !ctl_rejoining(c, NULL, NULL) &&
	   failed_with(c, "h1", 1, 200),
	   "rejoin: h1 failed, connected, but tor1 still reports it down");

	/* tor1 resumed the port and hears h1 again */
	ok(ctl_link_up(c, MS(10), "tor1", "h1") == 0,
	   "rejoin: tor1 LINK_UP h1");
	flush(c);
	ok(ctl_epoch(c) == 2 && ctl_phase(c) == CTL_PH_REJOINING &&
	   ctl_rejoining(c, &node, NULL) == 1 && !strcmp(node, "h1") &&
	   ctl_waiting(c) == 1, "rejoin: epoch 2, REJOINING h1, waits for it");
	ok(save_first() && has_rejoin("h1", 2, 1, false, 0) &&
	   nsend(0, NULL) == 1, "rejoin: SAVE, then only REJOIN{2, h1} to h1");
	ok(nlog("epoch 2: host h1 (1), failed in epoch 1, rejoins",
		CTL_LOG_NOTICE) == 1, "rejoin: logged");
	ok(failed_with(c, "h1", 1, 200) && ctl_next_deadline(c, &when) &&
	   when == MS(10) + MS(10000),
	   "rejoin: h1 still failed meanwhile; done timeout runs");
	ok(!strcmp(ctl_phase_name(CTL_PH_REJOINING), "rejoining"),
	   "rejoin: phase name");

	/* answers that do not count */
	ok(ctl_rejoined(c, MS(11), "h2", 2, 2, true, 1) == -EINVAL &&
	   ignored(c) == 1, "rejoin: REJOINED from another node ignored");
	ok(ctl_rejoined(c, MS(11), "h1", 2, 3, true, 1) == -EINVAL &&
	   ignored(c) == 2, "rejoin: REJOINED with another host id ignored");
	ok(ctl_rejoined(c, MS(11), "h1", 2, 1, false, 0) == -EINVAL &&
	   ignored(c) == 3, "rejoin: REJOINED without ts ignored");
	ok(ctl_rejoined(c, MS(11), "h1", 3, 1, true, 1) == -ERANGE &&
	   ignored(c) == 4, "rejoin: REJOINED for a later epoch ignored");
	ok(ctl_rejoined(c, MS(11), "h1", 1, 1, true, 1) == -ESTALE &&
	   stale(c) == 1 && ignored(c) == 4,
	   "rejoin: REJOINED for an earlier epoch is stale");
	ok(ctl_rejoined(c, MS(11), "zz", 2, 1, true, 1) == -ENOENT &&
	   ignored(c) == 5, "rejoin: REJOINED from nobody ignored");
	ok(ctl_host_done(c, MS(11), "h2", 2, 1) == -ENOENT && ignored(c) == 6,
	   "rejoin: DONE before anybody was told ignored");
	flush(c);
	ok(ctl_rejoining(c, NULL, NULL) == 1 && !nsend(0, NULL) &&
	   ctl_waiting(c) == 1, "rejoin: still waiting for h1");

	/* h1's kernel started the new incarnation at ts 5000 */
	ok(ctl_rejoined(c, MS(12), "h1", 2, 1, true, 5000) == 0,
	   "rejoin: REJOINED{2, h1, 5000}");
	flush(c);
	ok(save_first() && has_rejoin("h2", 2, 1, true, 5000) &&
	   has_rejoin("h3", 2, 1, true, 5000) &&
	   has_rejoin("h4", 2, 1, true, 5000) && nsend(0, NULL) == 3,
	   "rejoin: SAVE, then REJOIN{2, h1, ts 5000} to h2, h3, h4 only");
	ok(ctl_rejoining(c, NULL, &ts) == 2 && ts == 5000 &&
	   ctl_waiting(c) == 3, "rejoin: waits for 3 DONEs");
	ok(ctl_rejoined(c, MS(13), "h1", 2, 1, true, 5000) == 0 &&
	   ctl_pending_actions(c) == 0,
	   "rejoin: a repeated REJOINED is harmless");
	ok(ctl_rejoined(c, MS(13), "h1", 2, 1, true, 6000) == -EEXIST &&
	   ctl_rejoining(c, NULL, &ts) == 2 && ts == 5000,
	   "rejoin: another ts later is ignored, the first counts");
	flush(c);
	blob = encode(c);
	ok(strstr(blob, "phase rejoining\n") &&
	   strstr(blob, "rejoin h1 5000\n") &&
	   strstr(blob, "rejoin-wait h2 h3 h4\n") &&
	   strstr(blob, "first-epoch 2\n"), "rejoin: blob readable");
	free(blob);

	/* DONEs that do not count */
	st = stats(c);
	ok(ctl_host_done(c, MS(14), "h2", 2, 3) == -ENOENT &&
	   ctl_host_done(c, MS(14), "h2", 3, 1) == -ERANGE &&
	   ctl_host_done(c, MS(14), "h1", 2, 1) == -ESRCH &&
	   ctl_host_done(c, MS(14), "tor1", 2, 1) == -EINVAL &&
	   stats(c).ignored == st.ignored + 4,
	   "rejoin: wrong DONEs ignored, counted");
	ok(ctl_host_done(c, MS(14), "h2", 1, 1) == -ESTALE &&
	   stats(c).stale == st.stale + 1, "rejoin: DONE for epoch 1 is stale");
	ctl_host_done(c, MS(15), "h2", 2, 1);
	ctl_host_done(c, MS(15), "h3", 2, 1);
	ok(ctl_host_done(c, MS(15), "h2", 2, 1) == 0 && ctl_waiting(c) == 1,
	   "rejoin: 2 DONEs in, a repeat is harmless, h4 missing");
	flush(c);

	/* h4's agent reconnects: the log, then what it owes, then STATE */
	ctl_disconnect(c, MS(16), "h4");
	ctl_hello(c, MS(16), "h4", 4);
	flush(c);
	ok(has_fail("h4", 1, 1, 200) && has_rejoin("h4", 2, 1, true, 5000) &&
	   send_pos(CTL_FAIL, "h4") < send_pos(CTL_REJOIN, "h4") &&
	   state_last("h4") && has_state("h4", 2) && nsend(0, NULL) == 3,
	   "rejoin: HELLO while REJOINING: FAIL, REJOIN with ts, STATE");
	ctl_hello(c, MS(16), "h1", 1);
	flush(c);
	ok(!nsend(0, NULL), "rejoin: h1's HELLO after it answered: nothing");

	ctl_host_done(c, MS(17), "h4", 2, 1);
	flush(c);
	st = stats(c);
	ok(ctl_phase(c) == CTL_PH_IDLE && is_correct(c, "h1") &&
	   ctl_epoch(c) == 2 && !ctl_next_deadline(c, &when) &&
	   st.rejoins == 1 && st.decisions == 1,
	   "rejoin: every DONE in: h1 correct, IDLE, no timer");
	ok(save_first() && nlog("epoch 2: host h1 (1) rejoined, first ts 5000",
				CTL_LOG_NOTICE) == 1, "rejoin: SAVE, logged");
	ok(has_state("h1", 2) && !nsend(CTL_FAIL, NULL) && nsend(0, NULL) == 1,
	   "rejoin: h1 gets the log (empty now) and STATE");
	ok(ctl_nfailures(c) == 1 && ctl_failure_rejoin(c, 0, &ep, &ts) == 1 &&
	   ep == 2 && ts == 5000 && ctl_failure(c, 0, NULL, &node, &ts, &ep) ==
	   CTL_NODE_HOST && !strcmp(node, "h1") && ep == 1 && ts == 200,
	   "rejoin: the failure stays in the log, marked rejoined");
	ctl_show_json(c, MS(17), buf, sizeof(buf));
	ok(strstr(buf, "\"failures\":[{\"node\":\"h1\",\"kind\":\"host\",\"host\":1,\"epoch\":1,\"ts\":200,\"rejoined\":true,\"rejoin_epoch\":2,\"first_ts\":5000}]") &&
	   strstr(buf, "{\"a\":\"h1\",\"b\":\"tor1\",\"state\":\"up\",\"reports\":[]}") &&
	   strstr(buf, "\"phase\":\"idle\"") && !strstr(buf, "\"rejoin\":") &&
	   strstr(buf, "\"rejoins\":1,"),
	   "rejoin: json: rejoined entry, h1's link up (its old report gone)");

	/* later HELLOs: no FAIL about the rejoined host */
	ctl_disconnect(c, MS(18), "h2");
	ctl_hello(c, MS(18), "h2", 2);
	ctl_disconnect(c, MS(18), "h1");
	ctl_hello(c, MS(18), "h1", 1);
	flush(c);
	ok(!nsend(CTL_FAIL, NULL) && has_state("h2", 2) && has_state("h1", 2) &&
	   nsend(0, NULL) == 2, "rejoin: later HELLOs: no FAIL about h1");
	ok(ctl_host_done(c, MS(18), "h2", 2, 1) == -ESTALE,
	   "rejoin: a late DONE is stale");

	/* h1 fails again: a new entry, epoch 3; the old one is history */
	ctl_link_down(c, MS(20), "tor1", "h1", true, 7000);
	flush(c);
	ok(ctl_epoch(c) == 3 && failed_with(c, "h1", 3, 7000) &&
	   has_fail("h2", 3, 1, 7000) && has_fail("h4", 3, 1, 7000) &&
	   nsend(CTL_FAIL, NULL) == 3 && ctl_phase(c) == CTL_PH_BROADCAST,
	   "fail again: epoch 3, FAIL{3, h1, 7000}");
	ok(ctl_nfailures(c) == 2 && ctl_failure_rejoin(c, 0, NULL, NULL) == 1 &&
	   ctl_failure_rejoin(c, 1, NULL, NULL) == 0 &&
	   ctl_failure(c, 1, NULL, NULL, &ts, &ep) == CTL_NODE_HOST &&
	   ep == 3 && ts == 7000, "fail again: a second log entry");
	ctl_disconnect(c, MS(21), "h3");
	ctl_hello(c, MS(21), "h3", 3);
	flush(c);
	ok(has_fail("h3", 3, 1, 7000) && nsend(CTL_FAIL, NULL) == 1,
	   "fail again: HELLO replays only the failure in force");
	hosts_done(c, MS(22), 3, 1, NULL);
	ctl_switch_done(c, MS(22), "tor1", 3, "h1");
	flush(c);
	ok(ctl_phase(c) == CTL_PH_IDLE, "fail again: procedure done");
	ctl_link_up(c, MS(23), "tor1", "h1");
	flush(c);
	ok(ctl_epoch(c) == 4 && has_rejoin("h1", 4, 1, false, 0) &&
	   ctl_phase(c) == CTL_PH_REJOINING,
	   "fail again: and rejoins in epoch 4");
	ctl_rejoined(c, MS(24), "h1", 4, 1, true, 9000);
	hosts_done(c, MS(25), 4, 1, NULL);
	flush(c);
	ok(is_correct(c, "h1") && ctl_failure_rejoin(c, 1, &ep, &ts) == 1 &&
	   ep == 4 && ts == 9000 && ctl_nfailures(c) == 2,
	   "fail again: rejoined again, two history entries");
	ctl_free(c);
}

static void test_rejoin_waits(void)
{
	struct ctl_logic *c = mk4();
	int i;

	/* tor1 hears h1 again before the procedure is over */
	cut_h1(c, MS(1));
	ctl_link_up(c, MS(2), "tor1", "h1");
	flush(c);
	ok(ctl_phase(c) == CTL_PH_BROADCAST && !nsend(CTL_REJOIN, NULL),
	   "rejoin waits: not during BROADCAST");
	hosts_done(c, MS(3), 1, 1, NULL);
	flush(c);
	ok(ctl_phase(c) == CTL_PH_RESUMING && !nsend(CTL_REJOIN, NULL),
	   "rejoin waits: not during RESUMING");
	ctl_switch_done(c, MS(4), "tor1", 1, "h1");
	flush(c);
	i = send_pos(CTL_REJOIN, "h1");
	ok(ctl_phase(c) == CTL_PH_REJOINING && ctl_epoch(c) == 2 &&
	   has_rejoin("h1", 2, 1, false, 0) && i >= 0 &&
	   nlog("epoch 1: procedure complete", -1) == 1,
	   "rejoin waits: started once idle (switch DONE)");
	ctl_free(c);

	/* nor while something settles */
	c = mk4();
	fail_h1(c, MS(1));
	ctl_link_down(c, MS(10), "h3", "tor2", false, 0);
	ctl_link_up(c, MS(11), "tor1", "h1");
	flush(c);
	ok(ctl_phase(c) == CTL_PH_SETTLING && !nsend(CTL_REJOIN, NULL),
	   "rejoin waits: not while settling");
	ctl_link_up(c, MS(12), "h3", "tor2");
	flush(c);
	ok(ctl_phase(c) == CTL_PH_REJOINING &&
	   has_rejoin("h1", 2, 1, false, 0) &&
	   nlog("nobody fails", -1) == 1,
	   "rejoin waits: started when the flap is called off");
	ctl_free(c);

	/* nor while h1's agent is not connected */
	c = mk4();
	fail_h1(c, MS(1));
	ctl_disconnect(c, MS(10), "h1");
	ctl_link_up(c, MS(11), "tor1", "h1");
	flush(c);
	ok(ctl_phase(c) == CTL_PH_IDLE && !nsend(0, NULL),
	   "rejoin waits: not while h1 is not connected");
	ctl_hello(c, MS(12), "h1", 1);
	flush(c);
	ok(ctl_phase(c) == CTL_PH_REJOINING &&
	   has_rejoin("h1", 2, 1, false, 0) &&
	   nsend(0, NULL) == 1 && save_first(),
	   "rejoin waits: started at h1's HELLO");
	ctl_free(c);

	/* h1's own LINK_UP does not count: it is the far end that decides */
	c = mk4();
	fail_h1(c, MS(1));
	ok(ctl_link_up(c, MS(10), "h1", "tor1") == -ESRCH &&
	   ctl_phase(c) == CTL_PH_IDLE,
	   "rejoin waits: h1's own LINK_UP ignored");
	ctl_free(c);

	/* a host behind a failed switch does not rejoin */
	c = mk4();
	ctl_link_down(c, MS(1), "spine", "tor1", true, 9);
	hosts_done(c, MS(2), 1, 1, NULL);
	hosts_done(c, MS(2), 1, 2, NULL);
	ctl_switch_done(c, MS(2), "spine", 1, "tor1");
	flush(c);
	ctl_link_up(c, MS(3), "spine", "tor1");
	flush(c);
	ok(ctl_phase(c) == CTL_PH_IDLE && failed_with(c, "h1", 1, 9) &&
	   !nsend(0, NULL),
	   "rejoin waits: hosts behind a failed ToR stay failed");
	ctl_free(c);
}

static void test_rejoin_interrupted(void)
{
	struct ctl_logic *c = rejoining_h1();
	struct ctl_stats st;
	uint64_t when, ts = 0;
	uint32_t ep = 0;

	/*
	 * A new failure during REJOINING, after the ts went out: the rejoin
	 * is committed and finished first, then the failure is decided.
	 */
	ctl_rejoined(c, MS(11), "h1", 2, 1, true, 5000);
	ctl_host_done(c, MS(12), "h2", 2, 1);
	flush(c);
	ctl_link_down(c, MS(13), "tor2", "h3", true, 333);
	flush(c);
	ok(ctl_epoch(c) == 3 && ctl_phase(c) == CTL_PH_BROADCAST &&
	   failed_with(c, "h3", 3, 333) && is_correct(c, "h1") &&
	   !ctl_rejoining(c, NULL, NULL) &&
	   ctl_failure_rejoin(c, 0, &ep, &ts) == 1 && ep == 2 && ts == 5000,
	   "rejoin committed: a failure after REJOINED: h1 rejoined first (epoch 2), h3 fails in epoch 3");
	ok(nlog("the rejoin of h1 is committed", -1) == 1 &&
	   nlog("abandoned", -1) == 0 &&
	   has_fail("h1", 3, 3, 333) && has_fail("h2", 3, 3, 333) &&
	   has_fail("h4", 3, 3, 333) && nsend(CTL_FAIL, NULL) == 3 &&
	   ctl_waiting(c) == 3 && save_first(),
	   "rejoin committed: FAILs for h3 to h1, h2, h4, logged");
	ok(ctl_host_done(c, MS(14), "h4", 2, 1) == 0 &&
	   ctl_host_done(c, MS(14), "h4", 2, 1) == -ESTALE &&
	   ctl_host_done(c, MS(14), "h2", 2, 1) == -ESTALE &&
	   ctl_waiting(c) == 3,
	   "rejoin committed: h4's late DONE for the rejoin counts once, does not touch epoch 3");
	hosts_done(c, MS(15), 3, 3, NULL);
	ctl_switch_done(c, MS(16), "tor2", 3, "h3");
	flush(c);
	ok(ctl_phase(c) == CTL_PH_IDLE && !nsend(CTL_REJOIN, NULL) &&
	   ctl_epoch(c) == 3, "rejoin committed: procedure done, nothing to retry");
	ctl_free(c);

	/* before the ts went out a new failure still takes precedence */
	c = rejoining_h1();
	ctl_link_down(c, MS(13), "tor2", "h3", true, 333);
	flush(c);
	ok(ctl_epoch(c) == 3 && ctl_phase(c) == CTL_PH_BROADCAST &&
	   failed_with(c, "h3", 3, 333) && failed_with(c, "h1", 1, 200) &&
	   !ctl_rejoining(c, NULL, NULL) &&
	   nlog("rejoin of h1 abandoned for the failures of epoch 3",
		-1) == 1 && nsend(CTL_FAIL, NULL) == 2 && ctl_waiting(c) == 2,
	   "rejoin interrupted: before REJOINED: abandoned, epoch 3");
	hosts_done(c, MS(15), 3, 3, NULL);
	flush(c);
	ok(ctl_phase(c) == CTL_PH_RESUMING && !nsend(CTL_REJOIN, NULL),
	   "rejoin interrupted: not retried while RESUMING");
	ctl_switch_done(c, MS(16), "tor2", 3, "h3");
	flush(c);
	ok(ctl_phase(c) == CTL_PH_REJOINING && ctl_epoch(c) == 4 &&
	   has_rejoin("h1", 4, 1, false, 0) && nsend(0, NULL) == 1,
	   "rejoin interrupted: retried once idle, epoch 4");
	ctl_rejoined(c, MS(17), "h1", 4, 1, true, 6000);
	flush(c);
	ok(has_rejoin("h2", 4, 1, true, 6000) &&
	   has_rejoin("h4", 4, 1, true, 6000) &&
	   nsend(0, NULL) == 2 && ctl_waiting(c) == 2,
	   "rejoin interrupted: the new first ts to h2, h4 (h3 failed)");
	hosts_done(c, MS(18), 4, 1, NULL);
	flush(c);
	ok(is_correct(c, "h1") && ctl_phase(c) == CTL_PH_IDLE &&
	   has_fail("h1", 3, 3, 333) && has_state("h1", 4),
	   "rejoin interrupted: h1 correct, told of h3's failure");
	ctl_free(c);

	/* h1's link reported down again during REJOINING: aborted */
	c = rejoining_h1();
	ctl_link_down(c, MS(11), "tor1", "h1", true, 210);
	flush(c);
	ok(ctl_phase(c) == CTL_PH_IDLE && ctl_epoch(c) == 2 &&
	   failed_with(c, "h1", 1, 200) && !nsend(0, NULL) &&
	   R.a[R.n - 1].kind == CTL_ACT_SAVE &&
	   nlog("epoch 2: rejoin of h1 aborted", CTL_LOG_NOTICE) == 1,
	   "rejoin aborted: tor1 loses h1 again: IDLE, h1 failed, saved");
	ok(ctl_rejoined(c, MS(12), "h1", 2, 1, true, 5000) == -ESTALE,
	   "rejoin aborted: a late REJOINED is stale");
	ctl_link_up(c, MS(13), "tor1", "h1");
	flush(c);
	ok(ctl_epoch(c) == 3 && has_rejoin("h1", 3, 1, false, 0),
	   "rejoin aborted: heard again: a new rejoin, epoch 3");
	/*
	 * After the ts went out the rejoin is committed: finished, then h1
	 * fails anew (new entry, new epoch), its ts at least its first ts
	 * although tor1 reported no commit barrier.
	 */
	ctl_rejoined(c, MS(14), "h1", 3, 1, true, 5100);
	ctl_link_down(c, MS(15), "tor1", "h1", false, 0);
	flush(c);
	ok(ctl_phase(c) == CTL_PH_BROADCAST && ctl_epoch(c) == 4 &&
	   failed_with(c, "h1", 4, 5100) && nlog("aborted", -1) == 0 &&
	   nlog("h1 is cut off again, but its first ts went out", -1) == 1 &&
	   ctl_nfailures(c) == 2 &&
	   ctl_failure_rejoin(c, 0, &ep, &ts) == 1 && ep == 3 && ts == 5100 &&
	   ctl_failure_rejoin(c, 1, NULL, NULL) == 0,
	   "rejoin committed: cut off after REJOINED: rejoined in 3, fails anew in 4 at its first ts");
	ok(has_fail("h2", 4, 1, 5100) && has_fail("h3", 4, 1, 5100) &&
	   has_fail("h4", 4, 1, 5100) && nsend(CTL_FAIL, NULL) == 3 &&
	   save_first(), "rejoin committed: FAIL{4, h1, 5100} to everyone");
	/* nobody answered the rejoin: it is not replayed (h1 failed again) */
	ctl_disconnect(c, MS(16), "h2");
	ctl_hello(c, MS(16), "h2", 2);
	flush(c);
	ok(has_fail("h2", 4, 1, 5100) && !nsend(CTL_REJOIN, NULL) &&
	   nsend(CTL_FAIL, NULL) == 1 && state_last("h2"),
	   "rejoin committed: HELLO: only the failure in force, no old pair");
	ctl_free(c);

	/* no REJOINED at the done timeout */
	c = rejoining_h1();
	ok(ctl_next_deadline(c, &when) && when == MS(10010),
	   "rejoin timeout: deadline");
	ctl_tick(c, MS(10010));
	flush(c);
	ok(ctl_phase(c) == CTL_PH_REJOINING && ctl_epoch(c) == 2 &&
	   has_rejoin("h1", 2, 1, false, 0) && nsend(0, NULL) == 1 &&
	   nlog("h1 has not answered REJOINED", CTL_LOG_WARNING) == 1,
	   "rejoin timeout: h1 connected: asked again, same epoch");
	ctl_disconnect(c, MS(10011), "h1");
	ctl_tick(c, MS(20010));
	flush(c);
	ok(ctl_phase(c) == CTL_PH_IDLE && failed_with(c, "h1", 1, 200) &&
	   nlog("aborted (no REJOINED, not connected)", -1) == 1 &&
	   !nsend(0, NULL), "rejoin timeout: h1 gone: called off");
	ctl_hello(c, MS(20011), "h1", 1);
	flush(c);
	ok(ctl_epoch(c) == 3 && has_rejoin("h1", 3, 1, false, 0),
	   "rejoin timeout: h1 back: a new rejoin");
	/* and hosts that do not answer DONE are given up on */
	ctl_rejoined(c, MS(20012), "h1", 3, 1, true, 8000);
	ctl_host_done(c, MS(20013), "h2", 3, 1);
	flush(c);
	ctl_tick(c, MS(30011));
	flush(c);
	ok(ctl_phase(c) == CTL_PH_REJOINING, "rejoin timeout: not before");
	ctl_tick(c, MS(30012));
	flush(c);
	st = stats(c);
	ok(ctl_phase(c) == CTL_PH_IDLE && is_correct(c, "h1") &&
	   nlog("host h3 did not answer DONE for the rejoin of h1",
		CTL_LOG_WARNING) == 1 &&
	   nlog("host h4 did not answer DONE", CTL_LOG_WARNING) == 1 &&
	   nlog("h2 did not", -1) == 0 && st.rejoins == 1,
	   "rejoin timeout: missing DONEs logged, h1 correct");
	ctl_free(c);
}

static void test_rejoin_takeover(void)
{
	struct ctl_logic *c = rejoining_h1(), *s;
	static const char *const bad[] = {
		/* a rejoin while idle */
		"onepipe-ctl-state 1\nepoch 2\nphase idle\nfirst-epoch 1\nfail h1 1 5\nrejoin h1\nend\n",
		/* REJOINING without a rejoin line */
		"onepipe-ctl-state 1\nepoch 2\nphase rejoining\nfirst-epoch 2\nfail h1 1 5\nend\n",
		/* a rejoin of a correct host */
		"onepipe-ctl-state 1\nepoch 2\nphase rejoining\nfirst-epoch 2\nrejoin h1\nend\n",
		/* waiting before the ts */
		"onepipe-ctl-state 1\nepoch 2\nphase rejoining\nfirst-epoch 2\nfail h1 1 5\nrejoin h1\nrejoin-wait h2\nend\n",
		/* a rejoin before its failure */
		"onepipe-ctl-state 1\nepoch 2\nphase idle\nfail h1 2 5 rejoined 1 6\nend\n",
		/* two failures in force of one node */
		"onepipe-ctl-state 1\nepoch 2\nphase idle\nfail h1 1 5\nfail h1 2 6\nend\n",
		/* a rejoin after the epoch */
		"onepipe-ctl-state 1\nepoch 2\nphase idle\nfail h1 1 5 rejoined 3 6\nend\n",
		/* owing DONE for the rejoin of a host that is failed */
		"onepipe-ctl-state 1\nepoch 2\nphase idle\nfail h1 1 5\nrejoin-owe h1 h2\nend\n",
		/* a host owing DONE for its own rejoin */
		"onepipe-ctl-state 1\nepoch 2\nphase idle\nfail h1 1 5 rejoined 2 6\nrejoin-owe h1 h1\nend\n",
		/* a failed host owing DONE */
		"onepipe-ctl-state 1\nepoch 3\nphase idle\nfail h1 1 5 rejoined 2 6\nfail h2 3 7\nrejoin-owe h1 h2\nend\n",
	};
	struct ctl_stats st;
	char err[256];
	unsigned int i;

	/* the leader dies before h1 answered */
	s = standby(c, topo4, MS(100));
	flush(s);
	ok(same_state(c, s) && ctl_phase(s) == CTL_PH_REJOINING &&
	   ctl_epoch(s) == 2 && ctl_rejoining(s, NULL, NULL) == 1 &&
	   !nsend(0, NULL),
	   "rejoin takeover: REJOINING loaded, before REJOINED");
	ctl_free(c);
	ctl_hello(s, MS(101), "h2", 2);
	ctl_hello(s, MS(101), "h1", 1);
	flush(s);
	ok(has_rejoin("h1", 2, 1, false, 0) && has_fail("h2", 1, 1, 200) &&
	   !nsend(CTL_REJOIN, "h2") && nsend(0, NULL) == 3,
	   "rejoin takeover: h1's HELLO gets the REJOIN again; h2 the log");
	ctl_rejoined(s, MS(102), "h1", 2, 1, true, 5000);
	ctl_host_done(s, MS(103), "h2", 2, 1);
	flush(s);
	ok(has_rejoin("h2", 2, 1, true, 5000) && nsend(0, NULL) == 1 &&
	   ctl_waiting(s) == 2,
	   "rejoin takeover: h2 told, h3, h4 not connected");

	/* and this one dies after one DONE */
	c = standby(s, topo4, MS(200));
	ctl_free(s);
	s = c;
	flush(s);
	ok(ctl_rejoining(s, NULL, NULL) == 2 && ctl_waiting(s) == 2,
	   "rejoin takeover: after REJOINED, h2's DONE kept");
	hello_all(s);
	ctl_hello(s, MS(201), "h3", 3);
	flush(s);
	ok(has_fail("h3", 1, 1, 200) && has_rejoin("h3", 2, 1, true, 5000) &&
	   state_last("h3"),
	   "rejoin takeover: h3's HELLO: FAIL, REJOIN, STATE");
	hosts_done(s, MS(202), 2, 1, NULL);
	flush(s);
	st = stats(s);
	ok(ctl_phase(s) == CTL_PH_IDLE && is_correct(s, "h1") &&
	   ctl_epoch(s) == 2 && !st.decisions && st.rejoins == 1,
	   "rejoin takeover: finished in epoch 2, no new epoch");

	/* a finished rejoin round-trips */
	c = standby(s, topo4, MS(300));
	ok(same_state(c, s) && is_correct(c, "h1") &&
	   ctl_failure_rejoin(c, 0, NULL, NULL) == 1 &&
	   ctl_phase(c) == CTL_PH_IDLE, "rejoin takeover: history round trip");
	ctl_free(c);
	ctl_free(s);

	/* a blob whose REJOINED is in and every DONE too: finished at load */
	c = mk4();
	{
		const char *blob = "onepipe-ctl-state 1\nepoch 2\nphase rejoining\n"
				   "first-epoch 2\nfail h1 1 200\nrejoin h1 77\n"
				   "down tor1 h1 200\nend\n";

		ok(ctl_decode(c, MS(1), blob, strlen(blob), err,
			      sizeof(err)) == 0,
		   "rejoin takeover: blob, nobody owes");
		flush(c);
		ok(ctl_phase(c) == CTL_PH_BROADCAST && ctl_epoch(c) == 3 &&
		   failed_with(c, "h1", 3, 200) && ctl_nfailures(c) == 2 &&
		   ctl_failure_rejoin(c, 0, NULL, NULL) == 1,
		   "rejoin takeover: ... tor1 reports h1 down: its ts went out, so finished, then h1 fails anew");
	}
	ctl_free(c);
	c = mk4();
	{
		/* the leader saved REJOINED, died before finishing */
		const char *blob = "onepipe-ctl-state 1\nepoch 2\nphase rejoining\n"
				   "first-epoch 2\nfail h1 1 200\nrejoin h1 77\n"
				   "down h1 tor1 100\nend\n";

		ok(ctl_decode(c, MS(1), blob, strlen(blob), err,
			      sizeof(err)) == 0 && ctl_phase(c) == CTL_PH_IDLE &&
		   is_correct(c, "h1") && ctl_epoch(c) == 2 &&
		   ctl_failure_rejoin(c, 0, NULL, NULL) == 1,
		   "rejoin takeover: REJOINED in, nobody owes: finished at load");
	}
	ctl_free(c);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = mk(topo4);
		ok(ctl_decode(c, 0, bad[i], strlen(bad[i]), err,
			      sizeof(err)) == -EINVAL,
		   "rejoin decode: bad blob %u (%s)", i, err);
		ctl_free(c);
	}
}

static void test_rejoin_json(void)
{
	struct ctl_logic *c = rejoining_h1();
	char buf[8192];

	ctl_show_json(c, MS(10), buf, sizeof(buf));
	ok(strstr(buf, "\"epoch\":2,\"phase\":\"rejoining\"") &&
	   strstr(buf, "\"waiting\":{\"count\":1,\"hosts\":[{\"node\":\"h1\",\"owes\":[\"h1\"]}],\"switches\":[]},\"rejoin\":{\"node\":\"h1\",\"host\":1,\"epoch\":2,\"answered\":false}") &&
	   strstr(buf, "\"state\":\"failed\",\"connected\":true,\"epoch\":1,\"ts\":200,\"rejoining\":true}") &&
	   strstr(buf, "\"first_epoch\":2,\"timeout_left_ms\":10000"),
	   "rejoin json: before REJOINED");
	ctl_rejoined(c, MS(11), "h1", 2, 1, true, 5000);
	ctl_host_done(c, MS(11), "h3", 2, 1);
	ctl_show_json(c, MS(11), buf, sizeof(buf));
	ok(strstr(buf, "\"waiting\":{\"count\":2,\"hosts\":[{\"node\":\"h2\",\"owes\":[\"h1\"]},{\"node\":\"h4\",\"owes\":[\"h1\"]}],\"switches\":[]},\"rejoin\":{\"node\":\"h1\",\"host\":1,\"epoch\":2,\"answered\":true,\"first_ts\":5000}") &&
	   strstr(buf, "\"rejoined\":false"), "rejoin json: after REJOINED");
	if (nfails)
		printf("# %s\n", buf);
	ctl_free(c);
}

static void test_rejoin_misc(void)
{
	static const char topo1[] =
		"host a 1\nswitch s\nlink a s\ncontroller s\n";
	struct ctl_logic *c = mk(topo1);
	struct ctl_msg m;
	unsigned int i;
	char *blob;
	bool all = true;

	/* the only host: nobody to tell */
	ctl_hello(c, 0, "a", 1);
	ctl_hello(c, 0, "s", 0);
	ctl_link_down(c, MS(1), "s", "a", true, 10);
	ctl_switch_done(c, MS(2), "s", 1, "a");
	ctl_link_up(c, MS(3), "s", "a");
	flush(c);
	ok(has_rejoin("a", 2, 1, false, 0), "rejoin alone: REJOIN to a");
	memset(&m, 0, sizeof(m));
	m.magic = CTL_MAGIC;
	m.version = CTL_VERSION;
	m.type = CTL_REJOINED;
	m.flags = CTL_F_HAS_TS;
	m.epoch = 2;
	m.host = 1;
	m.ts = 42;
	strcpy(m.node, "a");
	ok(ctl_handle_msg(c, MS(4), &m) == 0,
	   "rejoin alone: handle_msg REJOINED");
	flush(c);
	ok(is_correct(c, "a") && ctl_phase(c) == CTL_PH_IDLE &&
	   !nsend(CTL_REJOIN, NULL) && has_state("a", 2),
	   "rejoin alone: correct at once");

	/* many fail/rejoin cycles: the history is bounded */
	for (i = 0; i < CTL_MAX_NODES + 20; i++) {
		uint32_t e = ctl_epoch(c);

		ctl_link_down(c, MS(10), "s", "a", true, 100 + i);
		ctl_switch_done(c, MS(10), "s", e + 1, "a");
		ctl_link_up(c, MS(10), "s", "a");
		ctl_rejoined(c, MS(10), "a", e + 2, 1, true, 1000 + i);
		flush(c);
		all = all && is_correct(c, "a") && ctl_epoch(c) == e + 2;
	}
	ok(all && ctl_nfailures(c) == CTL_MAX_NODES,
	   "rejoin history: %u cycles, %u entries kept", i, ctl_nfailures(c));
	blob = encode(c);
	{
		struct ctl_logic *s = standby(c, topo1, MS(20));
		uint64_t ts = 0;

		ok(same_state(c, s) &&
		   ctl_failure_rejoin(s, CTL_MAX_NODES - 1, NULL, &ts) == 1 &&
		   ts == 1000 + i - 1, "rejoin history: round trip");
		ctl_free(s);
	}
	free(blob);
	ctl_free(c);
}

/*
 * The kernel answers EV_FAIL_DONE with the epoch of the FAIL it applied
 * first for a host: during BROADCAST a DONE for any epoch from the
 * failure's own to the current one counts.
 */
static void test_done_epochs(void)
{
	struct ctl_logic *c = mk4();

	cut_h1(c, MS(1));
	ctl_host_done(c, MS(2), "h4", 1, 1);
	flush(c);
	ctl_link_down(c, MS(3), "tor2", "h3", true, 77);
	flush(c);
	ok(ctl_epoch(c) == 2 && ctl_waiting(c) == 4,
	   "done epochs: epoch 2 owes h2, h4 x h1, h3");
	ok(ctl_host_done(c, MS(4), "h2", 1, 1) == 0 && ctl_waiting(c) == 3 &&
	   ctl_host_done(c, MS(4), "h4", 1, 1) == 0 && ctl_waiting(c) == 2,
	   "done epochs: DONE{1, h1} (the first FAIL applied) counts in epoch 2");
	ok(ctl_host_done(c, MS(4), "h2", 1, 3) == -ESTALE &&
	   ctl_waiting(c) == 2,
	   "done epochs: DONE{1, h3} is stale: h3 failed in epoch 2");
	ctl_host_done(c, MS(5), "h2", 2, 3);
	ctl_host_done(c, MS(5), "h4", 2, 3);
	flush(c);
	ok(ctl_phase(c) == CTL_PH_RESUMING && has_resume("tor1", 2, "h1") &&
	   has_resume("tor2", 2, "h3"),
	   "done epochs: every DONE in: RESUMING before the done timeout");
	ok(ctl_host_done(c, MS(6), "h2", 1, 1) == -ESTALE,
	   "done epochs: an earlier epoch's DONE while RESUMING is stale");
	ctl_free(c);
}

/*
 * A committed rejoin (its ts went out) whose DONEs did not all come in:
 * the hosts that owe it stay owed (persisted), get FAIL then REJOIN again
 * at HELLO until they answer, and block nothing.
 */
static void test_rejoin_owed(void)
{
	struct ctl_logic *c = rejoining_h1(), *s;
	char *blob, buf[8192];

	ctl_disconnect(c, MS(10), "h4");
	ctl_rejoined(c, MS(11), "h1", 2, 1, true, 5000);
	ctl_host_done(c, MS(12), "h2", 2, 1);
	flush(c);
	ctl_tick(c, MS(10011));
	flush(c);
	ok(ctl_phase(c) == CTL_PH_IDLE && is_correct(c, "h1") &&
	   nlog("host h3 did not answer DONE for the rejoin of h1: still owed",
		CTL_LOG_WARNING) == 1 &&
	   nlog("2 hosts still owe DONE for the rejoin of h1", -1) == 1,
	   "rejoin owed: done timeout: h1 rejoined, h3 and h4 still owe");
	blob = encode(c);
	ok(strstr(blob, "rejoin-owe h1 h3 h4\n") != NULL,
	   "rejoin owed: in the blob");
	free(blob);
	ctl_show_json(c, MS(10011), buf, sizeof(buf));
	ok(strstr(buf, "\"rejoin_owed\":[\"h3\",\"h4\"]") != NULL,
	   "rejoin owed: in the json");

	/* other procedures do not wait for them */
	ctl_link_down(c, MS(10020), "tor1", "h2", true, 6000);
	hosts_done(c, MS(10021), 3, 2, NULL);
	ctl_switch_done(c, MS(10022), "tor1", 3, "h2");
	flush(c);
	ok(ctl_phase(c) == CTL_PH_IDLE && failed_with(c, "h2", 3, 6000),
	   "rejoin owed: the next procedure does not wait for them");

	/* h4 (missed the failure and the rejoin) comes back: the pair */
	ctl_hello(c, MS(10030), "h4", 4);
	flush(c);
	ok(has_fail("h4", 1, 1, 200) && has_rejoin("h4", 2, 1, true, 5000) &&
	   send_pos(CTL_FAIL, "h4") < send_pos(CTL_REJOIN, "h4") &&
	   has_fail("h4", 3, 2, 6000) && state_last("h4") &&
	   nsend(CTL_REJOIN, NULL) == 1,
	   "rejoin owed: HELLO: FAIL{1, h1}, REJOIN{2, h1, 5000}, the log, STATE");
	/* a standby knows it too */
	s = standby(c, topo4, MS(10040));
	ok(same_state(c, s), "rejoin owed: round trip");
	ctl_hello(s, MS(10041), "h3", 3);
	flush(s);
	ok(has_fail("h3", 1, 1, 200) && has_rejoin("h3", 2, 1, true, 5000),
	   "rejoin owed: the standby replays to h3");
	ctl_free(s);

	ok(ctl_host_done(c, MS(10050), "h4", 2, 1) == 0, "rejoin owed: h4 DONE");
	flush(c);
	ok(nsaves() == 1, "rejoin owed: saved");
	ctl_disconnect(c, MS(10051), "h4");
	ctl_hello(c, MS(10051), "h4", 4);
	flush(c);
	ok(!nsend(CTL_REJOIN, NULL) && !has_fail("h4", 1, 1, 200),
	   "rejoin owed: h4 answered: no replay any more");

	/* h3 fails: it owes nothing any more */
	ctl_link_down(c, MS(10060), "tor2", "h3", true, 7000);
	flush(c);
	blob = encode(c);
	ok(!strstr(blob, "rejoin-owe"), "rejoin owed: h3 failed: owes nothing");
	free(blob);
	ctl_free(c);

	/* the rejoined host fails again: its old pair is never replayed */
	c = rejoining_h1();
	ctl_disconnect(c, MS(10), "h4");
	ctl_rejoined(c, MS(11), "h1", 2, 1, true, 5000);
	ctl_tick(c, MS(10011));
	ctl_link_down(c, MS(10020), "tor1", "h1", true, 9000);
	flush(c);
	ok(failed_with(c, "h1", 3, 9000), "rejoin owed: h1 fails again");
	ctl_hello(c, MS(10021), "h4", 4);
	flush(c);
	ok(has_fail("h4", 3, 1, 9000) && !nsend(CTL_REJOIN, NULL) &&
	   nsend(CTL_FAIL, "h4") == 1,
	   "rejoin owed: HELLO: only h1's failure in force, no REJOIN");
	ctl_free(c);
}

/* Reporters repeat their link state when they reconnect: no SAVE. */
static void test_report_repeat(void)
{
	struct ctl_logic *c = mk4();

	ctl_link_down(c, MS(1), "h3", "tor2", true, 10);
	flush(c);
	ok(nsaves() == 1, "report repeat: a new report is saved");
	ok(ctl_link_down(c, MS(2), "h3", "tor2", true, 10) == 0,
	   "report repeat: again");
	flush(c);
	ok(nsaves() == 0 && ctl_phase(c) == CTL_PH_SETTLING,
	   "report repeat: the same report: no SAVE");
	ctl_link_down(c, MS(3), "h3", "tor2", true, 11);
	flush(c);
	ok(nsaves() == 1, "report repeat: another ts: saved");
	ctl_link_down(c, MS(3), "h3", "tor2", false, 0);
	flush(c);
	ok(nsaves() == 1, "report repeat: the ts gone: saved");
	ctl_link_up(c, MS(4), "h3", "tor2");
	flush(c);
	ok(nsaves() == 1 && ctl_phase(c) == CTL_PH_IDLE,
	   "report repeat: LINK_UP: saved");
	ctl_link_up(c, MS(5), "h3", "tor2");
	ctl_link_up(c, MS(5), "tor2", "h3");
	flush(c);
	ok(nsaves() == 0, "report repeat: LINK_UP repeated: no SAVE");
	ctl_free(c);
}

/* A rejoined host's next failure is never before its first ts. */
static void test_rejoin_ts_floor(void)
{
	struct ctl_logic *c = rejoining_h1();

	ctl_rejoined(c, MS(11), "h1", 2, 1, true, 5000);
	hosts_done(c, MS(12), 2, 1, NULL);
	flush(c);
	ok(is_correct(c, "h1"), "ts floor: h1 rejoined at 5000");
	/* tor1's commit register for h1 was dead since the resume */
	ctl_link_down(c, MS(13), "tor1", "h1", true, 0);
	flush(c);
	ok(failed_with(c, "h1", 3, 5000) && has_fail("h2", 3, 1, 5000),
	   "ts floor: fails again at its first ts, not 0");
	ctl_free(c);
}

/* A host that never answers REJOINED is asked 3 times, then goes last. */
static void test_rejoin_tries(void)
{
	struct ctl_logic *c = mk4();
	unsigned int asks = 0, i;
	uint64_t t;

	ctl_link_down(c, MS(1), "tor1", "h1", true, 200);
	ctl_link_down(c, MS(1), "tor1", "h2", true, 300);
	ctl_host_done(c, MS(2), "h3", 2, 1);
	ctl_host_done(c, MS(2), "h3", 2, 2);
	ctl_host_done(c, MS(2), "h4", 2, 1);
	ctl_host_done(c, MS(2), "h4", 2, 2);
	ctl_switch_done(c, MS(2), "tor1", 2, "h1");
	ctl_switch_done(c, MS(2), "tor1", 2, "h2");
	flush(c);
	ok(ctl_phase(c) == CTL_PH_IDLE && failed_with(c, "h1", 1, 200) &&
	   failed_with(c, "h2", 2, 300), "rejoin tries: h1, h2 failed");
	ctl_link_up(c, MS(10), "tor1", "h1");
	ctl_link_up(c, MS(10), "tor1", "h2");
	flush(c);
	asks += nsend(CTL_REJOIN, "h1");
	ok(ctl_epoch(c) == 3 && has_rejoin("h1", 3, 1, false, 0),
	   "rejoin tries: h1 first (oldest failure)");
	for (i = 1, t = MS(10); i <= 3; i++) {
		t += MS(10000);
		ctl_tick(c, t);
		flush(c);
		asks += nsend(CTL_REJOIN, "h1");
	}
	ok(asks == 3 && nlog("rejoin of h1 aborted (no REJOINED after 3 REJOINs",
			     CTL_LOG_NOTICE) == 1,
	   "rejoin tries: h1 asked 3 times, then aborted");
	ok(ctl_epoch(c) == 4 && has_rejoin("h2", 4, 2, false, 0) &&
	   failed_with(c, "h1", 1, 200),
	   "rejoin tries: h2 goes next, h1 to the back");
	ctl_rejoined(c, t, "h2", 4, 2, true, 8000);
	hosts_done(c, t, 4, 2, NULL);
	flush(c);
	ok(is_correct(c, "h2") && ctl_epoch(c) == 5 &&
	   has_rejoin("h1", 5, 1, false, 0),
	   "rejoin tries: then h1 again, a new epoch");
	ctl_free(c);
}

static double secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A relay from @from: 0 and "" in @to unless it goes somewhere. */
static int relay(struct ctl_logic *c, uint64_t now, const char *from,
		 uint32_t src, uint32_t dst, char *to)
{
	memset(to, 0, CTL_NAME_LEN);
	return ctl_relay(c, now, from, src, dst, to);
}

/* Controller forwarding: where a RELAY goes, and every refusal. */
static void test_relay(void)
{
	struct ctl_logic *c = mk4();
	char to[CTL_NAME_LEN], *before, *after, *buf;
	struct ctl_stats st;
	size_t n;

	before = encode(c);
	ok(relay(c, MS(1), "h1", 1, 3, to) == 0 && !strcmp(to, "h3"),
	   "relay: h1's packet for host 3 goes to h3");
	ok(relay(c, MS(1), "h3", 3, 1, to) == 0 && !strcmp(to, "h1"),
	   "relay: h3's ACK for host 1 goes back to h1");
	ok(relay(c, MS(1), "h1", 1, 2, to) == 0 && !strcmp(to, "h2"),
	   "relay: within one ToR too");
	ok(!ctl_pending_actions(c), "relay: no SAVE, no SEND, no log");
	after = encode(c);
	ok(!strcmp(before, after), "relay: the stored state is unchanged");
	free(before);
	free(after);
	st = stats(c);
	ok(st.relayed == 3 && !st.relay_dropped && !st.ignored && !st.bad,
	   "relay: counted in relayed only");

	/* refusals: each counted, the first logged */
	ok(relay(c, MS(2), "zz", 1, 3, to) == -ENOENT && !to[0],
	   "relay: from an unknown node refused");
	ok(relay(c, MS(2), "tor1", 0, 3, to) == -EINVAL && !to[0],
	   "relay: from a switch refused");
	ok(relay(c, MS(2), "h1", 2, 3, to) == -EPERM && !to[0],
	   "relay: forged source host refused");
	ok(relay(c, MS(2), "h1", 1, 9, to) == -EHOSTUNREACH && !to[0],
	   "relay: to an unknown host refused");
	ok(relay(c, MS(2), "h1", 1, 0, to) == -EHOSTUNREACH && !to[0],
	   "relay: host id 0 (no host) refused");
	ok(relay(c, MS(2), "h1", 1, 1, to) == -EINVAL && !to[0],
	   "relay: to itself refused");
	ctl_disconnect(c, MS(2), "h4");
	ok(relay(c, MS(2), "h1", 1, 4, to) == -ENOTCONN && !to[0],
	   "relay: to a host not connected refused");
	flush(c);
	st = stats(c);
	ok(st.relayed == 3 && st.relay_dropped == 7 && !st.ignored,
	   "relay: refusals counted in relay_dropped (%" PRIu64 ")",
	   st.relay_dropped);
	ok(nlog("relay dropped: from unknown node 'zz'",
		CTL_LOG_WARNING) == 1 &&
	   nlog("relay dropped", -1) == 1 && !nsaves() && !nsend(0, NULL),
	   "relay: only the first refusal of the second is logged");
	ctl_hello(c, MS(3), "h4", 4);
	flush(c);
	ok(relay(c, MS(3), "h1", 1, 4, to) == 0 && !strcmp(to, "h4"),
	   "relay: to h4 again once it said HELLO");
	ok(relay(c, MS(1001), "h1", 5, 4, to) == -EPERM &&
	   ctl_pending_actions(c) == 0,
	   "relay: still within the second: quiet");
	ok(relay(c, MS(1002), "h1", 5, 4, to) == -EPERM, "relay: a second on");
	flush(c);
	ok(nlog("relay dropped: from h1 (host 1) with source host 5 (forged) (and 7 more since the last such line)",
		CTL_LOG_WARNING) == 1, "relay: logged with the count since");
	ok(relay(c, MS(2003), "h1", 1, 9, to) == -EHOSTUNREACH, "relay: later");
	flush(c);
	ok(nlog("relay dropped: from h1 to unknown host 9",
		CTL_LOG_WARNING) == 1 &&
	   nlog("more since", -1) == 0, "relay: logged alone when none since");

	/* failed hosts neither send nor receive relays */
	fail_h1(c, MS(3000));
	ok(failed_with(c, "h1", 1, 200), "relay: h1 failed");
	ok(relay(c, MS(4000), "h2", 2, 1, to) == -EHOSTDOWN && !to[0],
	   "relay: to a failed host refused");
	ok(relay(c, MS(4000), "h1", 1, 2, to) == -EHOSTDOWN && !to[0],
	   "relay: from a failed host refused");
	flush(c);
	ok(nlog("relay dropped: to", -1) == 0 &&
	   nlog("relay dropped: from h2 to h1, failed in epoch 1",
		CTL_LOG_WARNING) == 1 && !nsaves(),
	   "relay: to a failed host logged, nothing saved");

	/* rejoined: correct again, relays flow */
	ctl_link_up(c, MS(5000), "tor1", "h1");
	ctl_rejoined(c, MS(5001), "h1", 2, 1, true, 5000);
	/*
	 * Until every correct host has taken the rejoin in, what h1 relays
	 * may still be its old incarnation's (its agent drains those before
	 * REJOINED, but a relay to it could reach it before its peers start
	 * over): both ways still refused.
	 */
	ok(relay(c, MS(5001), "h1", 1, 2, to) == -EHOSTDOWN &&
	   relay(c, MS(5001), "h2", 2, 1, to) == -EHOSTDOWN,
	   "relay: not while h1's rejoin is not done everywhere");
	hosts_done(c, MS(5002), 2, 1, NULL);
	flush(c);
	ok(!failed_with(c, "h1", 1, 200) && ctl_phase(c) == CTL_PH_IDLE,
	   "relay: h1 rejoined");
	ok(relay(c, MS(5003), "h2", 2, 1, to) == 0 && !strcmp(to, "h1") &&
	   relay(c, MS(5003), "h1", 1, 2, to) == 0 && !strcmp(to, "h2"),
	   "relay: to and from the rejoined host again");

	n = ctl_show_json(c, MS(5003), NULL, 0);
	buf = malloc(n + 1);
	ctl_show_json(c, MS(5003), buf, n + 1);
	st = stats(c);
	ok(strstr(buf, "\"relayed\":6,\"relay_dropped\":14}}") &&
	   st.relayed == 6 && st.relay_dropped == 14,
	   "relay: counters in the JSON");
	ok(strstr(buf, "\"name\":\"h1\",\"kind\":\"host\",\"host\":1,\"controller\":false,\"state\":\"correct\",\"connected\":true,\"relays\":4}") &&
	   strstr(buf, "\"name\":\"h3\",\"kind\":\"host\",\"host\":3,\"controller\":false,\"state\":\"correct\",\"connected\":true,\"relays\":1}") &&
	   !strstr(buf, "\"name\":\"h4\",\"kind\":\"host\",\"host\":4,\"controller\":false,\"state\":\"correct\",\"connected\":true,\"relays\""),
	   "relay: per-sender count in the nodes");
	if (nfails)
		printf("# %s\n", buf);
	free(buf);
	ctl_free(c);
}

/* 32 ToRs x 16 hosts under one spine: a ToR dies, then 100 host cuts. */
static void test_big(void)
{
	size_t cap = 64 * 1024, pos = 0;
	char *t = malloc(cap), name[16], tor[16];
	unsigned int i, j, id, nfail = 0;
	struct ctl_logic *c;
	double t0, t1;
	bool all = true;
	struct ctl_stats st;
	char *blob;

	pos += (size_t)sprintf(t + pos, "switch spine\ncontroller spine\n");
	for (i = 0; i < 32; i++) {
		pos += (size_t)sprintf(t + pos, "switch tor%u\nlink tor%u spine\n",
				       i, i);
		for (j = 0; j < 16; j++) {
			id = i * 16 + j + 1;
			pos += (size_t)sprintf(t + pos, "host h%u %u\nlink h%u tor%u\n",
					       id, id, id, i);
		}
	}
	t0 = secs();
	c = mk(t);
	for (id = 1; id <= 512; id++) {
		snprintf(name, sizeof(name), "h%u", id);
		ctl_hello(c, 0, name, id);
	}
	for (i = 0; i < 32; i++) {
		snprintf(tor, sizeof(tor), "tor%u", i);
		ctl_hello(c, 0, tor, 0);
	}
	ctl_hello(c, 0, "spine", 0);
	flush(c);
	ok(nsend(CTL_STATE, NULL) == 545, "big: 545 nodes said hello");

	/* tor5 dies */
	ctl_link_down(c, MS(1), "spine", "tor5", true, 12345);
	flush(c);
	for (id = 81; id <= 96; id++) {
		snprintf(name, sizeof(name), "h%u", id);
		all = all && failed_with(c, name, 1, 12345);
	}
	ok(all && failed_with(c, "tor5", 1, 12345) && is_correct(c, "h80") &&
	   is_correct(c, "h97"), "big: tor5's 16 hosts fail with its ts");
	ok(nsend(CTL_FAIL, NULL) == 16 * 496 && ctl_waiting(c) == 16 * 496,
	   "big: 16 FAILs to each of 496 correct hosts");
	for (id = 1; id <= 512; id++) {
		if (id >= 81 && id <= 96)
			continue;
		snprintf(name, sizeof(name), "h%u", id);
		for (j = 81; j <= 96; j++)
			ctl_host_done(c, MS(2), name, 1, j);
	}
	flush(c);
	ok(nsend(CTL_RESUME, NULL) == 1 && has_resume("spine", 1, "tor5"),
	   "big: every DONE in: one RESUME");
	ctl_switch_done(c, MS(3), "spine", 1, "tor5");

	/* 100 host cuts, one procedure each (tor end reports: decided) */
	for (i = 0; i < 100; i++) {
		id = 1 + (i * 37) % 512;
		if (id >= 81 && id <= 96)
			continue;
		snprintf(name, sizeof(name), "h%u", id);
		snprintf(tor, sizeof(tor), "tor%u", (id - 1) / 16);
		ctl_link_down(c, MS(10 + i), tor, name, true, 1000 + i);
		nfail++;
		flush(c);
	}
	ctl_get_stats(c, &st);
	ok(ctl_nfailures(c) == 17 + nfail && st.decisions == 1 + nfail,
	   "big: %u more hosts failed, one epoch each", nfail);
	blob = encode(c);
	{
		struct ctl_logic *s = standby(c, t, MS(1000));

		ok(same_state(c, s), "big: round trip (%zu bytes)",
		   strlen(blob));
		ctl_free(s);
	}
	free(blob);
	t1 = secs();
	ok(t1 - t0 < 5.0, "big: all of it in %.3f s", t1 - t0);
	ctl_free(c);
	free(t);
}

int main(void)
{
	test_parse();
	test_parse_errors();
	test_host_cut();
	test_host_cut_tor_first();
	test_tor_dies();
	test_flap();
	test_two_hosts();
	test_second_failure();
	test_settle_timeout();
	test_done_timeout();
	test_ignored();
	test_hello();
	test_handle_msg();
	test_encode_decode();
	test_takeover();
	test_json();
	test_two_spines();
	test_rejoin();
	test_rejoin_waits();
	test_rejoin_interrupted();
	test_rejoin_takeover();
	test_rejoin_json();
	test_rejoin_misc();
	test_done_epochs();
	test_rejoin_owed();
	test_report_repeat();
	test_rejoin_ts_floor();
	test_rejoin_tries();
	test_relay();
	test_big();
	printf("1..%u\n", ntests);
	if (nfails)
		printf("# %u of %u tests failed\n", nfails, ntests);
	free(R.a);
	(void)dump;
	return nfails ? 1 : 0;
}
