/* SPDX-License-Identifier: GPL-2.0 */
/*
 * onepiped's decisions as a pure state machine: the routing graph (from
 * the topology file), the link reports, the failure log and the failure
 * procedure of the reliable service (1Pipe paper, section 5.2).  No I/O
 * and no clock reads: the caller passes events and times (ns, any
 * monotonic clock) in and drains actions out (ctl_pop_action()).  The
 * daemon (onepiped.c), the unit tests and a simulator run this one
 * machine.
 *
 * The rules:
 *
 *  - Graph.  Nodes are hosts (with a host id) and switches; links are
 *    undirected, at most one between two nodes; "controller" nodes are
 *    where the controller is attached.  Every node must be connected to
 *    a controller node when every link is up.
 *
 *  - Detect.  A link is down while either end's last report about it is
 *    LINK_DOWN; LINK_UP from a reporter withdraws that reporter's
 *    LINK_DOWN.  A report keeps the reporter's last commit barrier on the
 *    link (@ts) if it had one.  A report that changes nothing (down, ts
 *    and whether there is one as before: reconnecting agents and
 *    switches repeat their link state) is not saved again.  Reports from
 *    failed nodes are ignored
 *    (also while they rejoin: the far end of their links speaks for
 *    them, see Rejoin).
 *
 *  - Determine.  Correct nodes are those connected to a controller node
 *    through up links and correct nodes (a failed node counts as correct
 *    again only after a rejoin, below; a controller node is where the
 *    search starts, so it never fails).  A node that is neither
 *    correct nor failed is "disconnected": a decision is pending and the
 *    controller settles.  It decides at once when every boundary link (a
 *    correct node's link to a disconnected node) has a LINK_DOWN from its
 *    correct end, otherwise when the settle time (from the first report
 *    that disconnected something) has passed; then it logs each correct
 *    node whose boundary report is missing (atomicity may be lost there).
 *    If everything reconnects first (a flap), nothing is decided.
 *    Disconnected nodes form components (connected through topology
 *    links, up or down); every host of a component fails with the
 *    component's timestamp: the largest @ts reported by the correct ends
 *    of its boundary links (0 if none), except that a host with rejoined
 *    history fails no earlier than its last rejoin's first ts (the
 *    component's ts may be 0 or older: a ToR's commit register dead
 *    since the resume).  One decision is one new epoch (epochs count
 *    from 1).
 *
 *  - Broadcast.  Each decision sends FAIL {epoch, host, ts} for every
 *    host failed in the current procedure, then STATE {epoch}, to every
 *    connected correct host, and waits for DONE {epoch, host} from every
 *    correct host for every one of them.  The kernel answers a repeated
 *    FAIL with the epoch of the FAIL it applied first for that host, so
 *    a DONE {e, host} counts for any e from the host's own failure epoch
 *    to the current one.  A host that says HELLO gets the whole failure
 *    log (FAILs of the current procedure carry the current epoch, older
 *    ones their own; rejoined entries see Rejoin) and STATE.
 *
 *  - Resume.  When every DONE is in, or the done timeout passed (logged:
 *    which hosts did not answer), every correct switch gets RESUME
 *    {epoch, peer = port} for each of its ports facing a node failed in
 *    the current procedure, and answers DONE {epoch, peer}.  When all are
 *    in, the procedure is idle again.  Switch DONEs are never given up
 *    on (the commit barrier needs them): every done timeout logs who is
 *    missing and sends the owed RESUMEs again to connected switches.
 *    Switches that say HELLO while RESUMING get what they owe.
 *
 *  - Rejoin.  A failed host is a candidate when the procedure is IDLE
 *    and nothing settles, it is connected to the daemon (HELLO), and one
 *    of its links leads to a correct node whose end does not report it
 *    down (e.g. its ToR reported LINK_UP for it after resuming that
 *    port; the host's own reports are its old incarnation's and do not
 *    count, and are cleared when it rejoins).  Failed switches, and
 *    hosts behind them, do not rejoin.  One rejoin at a time, oldest
 *    failure first, each its own epoch (decisions and rejoins share the
 *    epoch counter; the kernel tells REJOINs apart by epoch): SAVE, then
 *    REJOIN {epoch, host} without ts to the host; phase REJOINING.  Its
 *    REJOINED {epoch, host, ts} (the new incarnation's first timestamp;
 *    only the first answer counts): SAVE, then REJOIN {epoch, host, ts}
 *    to every connected correct host, each owing DONE {epoch, host}.
 *    Once the ts is known the rejoin is committed (hosts that got it
 *    reset their state about the host): it is never abandoned.  When
 *    all DONEs are in, or the done timeout passed (logged: who did not
 *    answer), or anything else disconnects, or the host is cut off
 *    again, it is finished: the host is correct again, its failure-log
 *    entry is kept but marked rejoined (epoch, first ts), SAVE, IDLE,
 *    the host gets the failure log and STATE as at HELLO, and only then
 *    is anything new decided (a host cut off again fails as a new entry:
 *    new epoch, new ts).  Hosts that did not answer keep owing that DONE
 *    (persisted) without blocking anything: at each HELLO they get the
 *    pair again (below) until they answer; a DONE {rejoin epoch, host}
 *    from them counts in any phase.  Before the ts (no REJOINED yet): at
 *    the done timeout the host is asked again while connected, at most
 *    CTL_REJOIN_TRIES REJOINs in all, after which the rejoin is called
 *    off (logged) and the host goes to the back of the candidate order
 *    (not persisted); a host not connected has it called off at once.
 *    HELLO while REJOINING: the rejoining host gets its REJOIN again
 *    until it answered; a correct host gets the REJOIN with ts (after
 *    the log) once there is one.  Repeats are harmless (same epoch).
 *    Before the ts the rejoin is aborted (logged; the host stays failed
 *    and may be a candidate again later) when no link of the host leads
 *    to a node that is not failed and does not report it down, and a
 *    decision during REJOINING takes precedence (the next epoch; the
 *    rejoin is retried once idle).  Rejoined entries are history: HELLO
 *    does not replay them (a host that never heard of that failure does
 *    not need it, and a FAIL would fail the new incarnation), except a
 *    correct host's latest entry to a host that still owes DONE for its
 *    rejoin: FAIL {failure epoch, host, ts}, then REJOIN {rejoin epoch,
 *    host, first ts}.  A host failed again is never replayed an old pair
 *    (the REJOIN would undo the new failure): when a host fails, it owes
 *    nothing any more and nobody owes its last rejoin.  A rejoined host
 *    may fail again: a new entry.  The oldest rejoined entries are
 *    dropped when CTL_MAX_NODES of them accumulated, never a correct
 *    host's latest one.
 *
 *  - Epochs.  New disconnections settle and are decided as above
 *    whatever the phase; a decision during BROADCAST or RESUMING makes
 *    the next epoch, whose host set is the union of the procedure's
 *    failed hosts (their FAILs again, harmless repeats), and drops the
 *    earlier epoch's pending DONEs.  DONEs for another epoch are ignored,
 *    except those of Broadcast (an earlier epoch of the same failure)
 *    and of a committed rejoin still owed (Rejoin).
 *
 *  - Relay (controller forwarding).  A host's module that gets no ACK
 *    from a peer (it reports UNREACH) relays its reliable packets for it
 *    through the controller while controlled; ctl_relay() says whether
 *    a RELAY goes on and to which node: from a correct host in its own
 *    name (the packet's source host id is its own) to another host that
 *    is not failed and is connected.  Relays change no state, queue no
 *    SAVE and no SEND (the daemon passes the datagram on itself): they
 *    are packets, resent by the module if lost, and never wait for a
 *    connection.  Refusals are counted and logged at most once a second.
 *
 *  - Persistence.  Every state change that matters (a decision, a phase
 *    change, a changed link report, a rejoin's first ts, a DONE for a
 *    committed rejoin) queues a SAVE action
 *    before any SEND about it: the caller must store ctl_encode() before
 *    sending what follows the SAVE, and must not send it if the store
 *    refused (it is no longer the active instance).  A standby loads the
 *    blob with ctl_decode(), gets HELLOs and re-sends what is pending;
 *    nothing is decided twice, and a rejoin goes on in its epoch.
 *    Times are not persisted (clocks differ between machines): timers
 *    restart at the decode time.
 *
 * Complexity (N nodes, L links, F failure log entries, K hosts failed in
 * the current procedure, H hosts): a link report costs O(N + L) (one
 * graph search, only when a link changes state); HELLO O(F); DONE O(1);
 * a decision O(N + L + H * K + N * K) (the FAIL messages themselves,
 * and forgetting the rejoin DONEs the failed hosts owed); encode
 * O(N + L + H * K + N * N) (N * N: who owes DONE for which committed
 * rejoin).  While idle, every event also looks for a rejoin candidate,
 * O(F); a rejoin costs O(F + N + L).  Node names are looked
 * up in a hash table.  Loading the topology checks for duplicate links
 * in O(L^2) (once, at start).
 */
#ifndef ONEPIPE_CTL_LOGIC_H
#define ONEPIPE_CTL_LOGIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl_proto.h"

#define CTL_MAX_NODES		1024
#define CTL_MAX_LINKS		4096
#define CTL_MAX_CONTROLLERS	16
#define CTL_LOG_LEN		256

#define CTL_DEFAULT_SETTLE_NS		(500ULL * 1000 * 1000)
#define CTL_DEFAULT_DONE_TIMEOUT_NS	(10000ULL * 1000 * 1000)

/*
 * The procedure's phase.  SETTLING is only reported when the procedure
 * is otherwise idle; a determination may also be under way during
 * BROADCAST or RESUMING (ctl_settling()).
 */
enum ctl_phase {
	CTL_PH_IDLE,
	CTL_PH_SETTLING,
	CTL_PH_BROADCAST,	/* waiting for DONEs from correct hosts */
	CTL_PH_RESUMING,	/* waiting for DONEs from correct switches */
	CTL_PH_REJOINING,	/* a failed host rejoins: its REJOINED, then
				 * correct hosts' DONEs */
};

enum ctl_node_kind {
	CTL_NODE_HOST,
	CTL_NODE_SWITCH,
};

enum ctl_action_kind {
	CTL_ACT_SAVE,		/* store ctl_encode() before going on */
	CTL_ACT_SEND,		/* send @msg to node @to */
	CTL_ACT_LOG,		/* log @text at @level */
};

/* Log levels: the syslog(3) priorities of the same names. */
enum ctl_log_level {
	CTL_LOG_ERR = 3,
	CTL_LOG_WARNING = 4,
	CTL_LOG_NOTICE = 5,
	CTL_LOG_INFO = 6,
	CTL_LOG_DEBUG = 7,
};

/**
 * struct ctl_config - tunables
 * @settle_ns: how long to wait for missing boundary reports after the
 *	first report that disconnected something (--settle-ms)
 * @done_timeout_ns: how long to wait for DONEs (--done-timeout-ms)
 */
struct ctl_config {
	uint64_t settle_ns;
	uint64_t done_timeout_ns;
};

/**
 * struct ctl_action - something the caller must do, in queue order
 * @kind: enum ctl_action_kind
 * @level: CTL_ACT_LOG: enum ctl_log_level
 * @to: CTL_ACT_SEND: the destination node's name (every connection of
 *	that node, or the newest one)
 * @msg: CTL_ACT_SEND: the message, complete (magic, version, @node is
 *	empty: the daemon has no node name)
 * @text: CTL_ACT_LOG: one line, no newline
 */
struct ctl_action {
	enum ctl_action_kind kind;
	int level;
	char to[CTL_NAME_LEN];
	struct ctl_msg msg;
	char text[CTL_LOG_LEN];
};

/**
 * struct ctl_stats - counters
 * @reports: LINK_DOWN/LINK_UP reports taken into account
 * @ignored: events ignored: unknown nodes, links not in the topology,
 *	reports from failed nodes, DONEs for another epoch or nothing owed,
 *	HELLOs with the wrong host id, REJOINEDs from another node or for
 *	a later epoch
 * @bad: malformed messages (counted by the daemon, ctl_count_bad())
 * @decisions: failure decisions (epochs that failed nodes) made by this
 *	instance; rejoins count in @rejoins
 * @stale: DONEs and REJOINEDs for an earlier epoch (late or repeated
 *	answers: harmless, so not in @ignored)
 * @unreach: UNREACH reports received
 * @flaps: determinations cancelled because everything reconnected
 * @rejoins: failed hosts made correct again by this instance
 * @relayed: RELAYs to be passed on (ctl_relay() returned 0)
 * @relay_dropped: RELAYs refused by ctl_relay()
 */
struct ctl_stats {
	uint64_t reports;
	uint64_t ignored;
	uint64_t bad;
	uint64_t decisions;
	uint64_t stale;
	uint64_t unreach;
	uint64_t flaps;
	uint64_t rejoins;
	uint64_t relayed;
	uint64_t relay_dropped;
};

struct ctl_logic;

void ctl_config_default(struct ctl_config *cfg);
struct ctl_logic *ctl_new(const char *topo, size_t len,
			  const struct ctl_config *cfg, char *err,
			  size_t errlen);
void ctl_free(struct ctl_logic *c);

/* Events.  Return 0, or a negative errno if the event was ignored. */
int ctl_hello(struct ctl_logic *c, uint64_t now, const char *node,
	      uint32_t host);
int ctl_disconnect(struct ctl_logic *c, uint64_t now, const char *node);
int ctl_link_down(struct ctl_logic *c, uint64_t now, const char *reporter,
		  const char *peer, bool has_ts, uint64_t ts);
int ctl_link_up(struct ctl_logic *c, uint64_t now, const char *reporter,
		const char *peer);
int ctl_host_done(struct ctl_logic *c, uint64_t now, const char *node,
		  uint32_t epoch, uint32_t failed_host);
int ctl_switch_done(struct ctl_logic *c, uint64_t now, const char *node,
		    uint32_t epoch, const char *port);
int ctl_rejoined(struct ctl_logic *c, uint64_t now, const char *node,
		 uint32_t epoch, uint32_t host, bool has_ts, uint64_t ts);
int ctl_unreach(struct ctl_logic *c, uint64_t now, const char *reporter,
		uint32_t host);
int ctl_relay(struct ctl_logic *c, uint64_t now, const char *from,
	      uint32_t src_host, uint32_t dst_host, char to[CTL_NAME_LEN]);
int ctl_tick(struct ctl_logic *c, uint64_t now);
int ctl_handle_msg(struct ctl_logic *c, uint64_t now,
		   const struct ctl_msg *m);
void ctl_count_bad(struct ctl_logic *c);

bool ctl_next_deadline(const struct ctl_logic *c, uint64_t *when);

/* Actions. */
bool ctl_pop_action(struct ctl_logic *c, struct ctl_action *a);
size_t ctl_pending_actions(const struct ctl_logic *c);

/* Persistence. */
size_t ctl_encode(const struct ctl_logic *c, char *buf, size_t size);
int ctl_decode(struct ctl_logic *c, uint64_t now, const char *blob,
	       size_t len, char *err, size_t errlen);

/* The view, for `onepipe controller show -j`. */
size_t ctl_show_json(const struct ctl_logic *c, uint64_t now, char *buf,
		     size_t size);

/* Queries. */
enum ctl_phase ctl_phase(const struct ctl_logic *c);
const char *ctl_phase_name(enum ctl_phase p);
bool ctl_settling(const struct ctl_logic *c);
uint32_t ctl_epoch(const struct ctl_logic *c);
void ctl_get_stats(const struct ctl_logic *c, struct ctl_stats *st);
int ctl_node_kind(const struct ctl_logic *c, const char *node,
		  uint32_t *host);
int ctl_node_failed(const struct ctl_logic *c, const char *node,
		    uint32_t *epoch, uint64_t *ts);
unsigned int ctl_nfailures(const struct ctl_logic *c);
int ctl_failure(const struct ctl_logic *c, unsigned int i, uint32_t *host,
		const char **node, uint64_t *ts, uint32_t *epoch);
int ctl_failure_rejoin(const struct ctl_logic *c, unsigned int i,
		       uint32_t *epoch, uint64_t *ts);
int ctl_rejoining(const struct ctl_logic *c, const char **node,
		  uint64_t *ts);
unsigned int ctl_waiting(const struct ctl_logic *c);

#endif /* ONEPIPE_CTL_LOGIC_H */
