/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 1Pipe switch as a pure state machine: port table, routing decision,
 * per-input barrier registers, output groups, beacon decision and link
 * expiry.  No I/O and no clock reads: the caller passes packets and times
 * in, and gets verdicts and beacons out.  The UDP switch daemon
 * (switch.c), the unit tests (tests/vectors.txt) and the P4 program all
 * implement this one machine.
 *
 * Two barriers travel side by side: the best-effort barrier and the
 * reliable service's commit barrier.  Each has its own register per input
 * link and its own pair of output groups, aggregated by the same rules
 * (same members, timeout, new-link rule and admission slack).  A link is
 * one link, though: every packet refreshes the liveness of both of its
 * registers, so a silent link leaves both minimums in the same tick.
 *
 * Beacon-only mode (RoCE / "switch CPU" mode, @beacon_only): the fabric
 * must not rewrite a byte of a RoCE packet (its ICRC covers them all), so
 * barriers travel in beacons only.  Registers then take values from
 * BEACONs alone, other packets only keep their link alive and are
 * forwarded untouched, and every port gets a beacon every tick, busy or
 * not, since no forwarded packet carries the barrier for it.
 *
 * Push (@push): a barrier crosses a switch when it advances, not at the
 * next tick.  When an input moves a group's minimum (best-effort or
 * commit), every output port of that group becomes stale: it has not
 * carried the new value.  A forwarded packet carries it (rewrite mode),
 * so a port that forwards clears its staleness; the others get a beacon
 * from sw_push() once due:
 *
 *  - at once if the port is idle;
 *  - a busy port (one that forwarded within @busy_window) is given that
 *    long for its next packet to carry the value, and gets a beacon only
 *    if none comes, so beacons on a busy port stay near zero;
 *  - at most two pushes in a row, then one per @push_gap, however fast
 *    minimums move (kernel/core/push.h, which hosts follow too).
 *
 * The periodic tick stays as the fallback that keeps idle links alive;
 * a push counts as something sent, so a port pushed to since the last
 * tick gets no tick beacon.  In steady state an idle fabric's minimum
 * moves once per interval (when its slowest input's beacon arrives), so
 * an idle port sees about one beacon per interval.  In beacon-only mode
 * forwards carry nothing of ours, so only beacons clear staleness.
 *
 * Controlled mode (@controlled, off after sw_init()): the reliable
 * service's failure controller (onepiped) decides failures, not this
 * switch's clock.  Dropping a silent link's commit register from the
 * minimum is a failure decision (the commit barrier then passes that
 * link's reliable messages still on their way), and switches that took it
 * each on their own timeout would disagree with the hosts about what was
 * committed.  So in controlled mode a commit register never expires: a
 * link silent for @commit_timeout stays in the commit minimum, which
 * stalls, and is reported down instead (sw_take_reports()); heard again,
 * it is reported up.  A link is also reported up the first time it is
 * heard: the controller outlives switch processes, and may still hold a
 * LINK_DOWN that this port's previous incarnation sent; a restarted
 * switch (whose state starts empty) would otherwise never withdraw it,
 * and the node behind the port could never rejoin.  A port never heard
 * reports nothing: its far end may well be gone for good.  The controller decides, the hosts discard and
 * recall, and only then does sw_resume() take the register out of the
 * minimum; the link comes back as a new link (new-link rule, admission
 * slack) when it is heard with a commit again.  Best-effort registers
 * keep expiring on the local timeout: a best-effort barrier promises
 * nothing a host must take back.
 *
 * Up-down rule: a switch has two output groups per barrier.  Outputs
 * towards a lower tier ("down" ports) aggregate every input; outputs
 * towards a higher tier ("up" ports) aggregate only inputs from down
 * ports.  With up-down routing the barrier graph is then a DAG, so
 * barriers cannot chase their own tail around a cycle.
 */
#ifndef ONEPIPE_SWITCH_LOGIC_H
#define ONEPIPE_SWITCH_LOGIC_H

#include "barrier.h"
#include "push.h"
#include "wire.h"

#define SW_MAX_PORTS	OP_MAX_LINKS
#define SW_NAME_LEN	32
#define SW_MAX_RANGES	32

enum sw_role {
	SW_ROLE_DOWN,		/* towards hosts or a lower tier */
	SW_ROLE_UP,		/* towards a higher tier */
};

/* Output groups; the index is also what a P4 twin would keep per pipe. */
enum sw_group {
	SW_G_ALL,		/* feeds down ports: every input */
	SW_G_DOWNIN,		/* feeds up ports: inputs from down ports */
	SW_NGROUPS,
};

/* Link states as in enum onepipe_link_state of the uapi header. */
enum sw_link_state {
	SW_LS_NEW,		/* not (yet) counted in every group it feeds */
	SW_LS_LIVE,		/* counted in every group it feeds */
	SW_LS_DEAD,		/* silent for longer than the timeout */
};

enum sw_verdict {
	SW_FORWARD,		/* send the (rewritten) packet out *out */
	SW_CONSUMED,		/* a beacon: registers updated, no output */
	SW_DROP_BAD,		/* malformed */
	SW_DROP_NOROUTE,	/* no output port for dst_host */
};

struct sw_range {
	u32 lo;
	u32 hi;
};

/**
 * struct sw_port - one switch port (an input link and an output link)
 * @name: operator's name, [A-Za-z0-9_.-]
 * @role: SW_ROLE_DOWN or SW_ROLE_UP
 * @hosts: host ids reachable through this port
 * @nhosts: entries in @hosts
 * @sent: something was sent out of this port since the last tick
 * @rx_pkts: datagrams received from the peer (beacons and bad ones too)
 * @rx_beacons: beacons received
 * @tx_pkts: packets sent, beacons included
 * @tx_beacons: beacons sent
 * @drops: received packets dropped plus sends that failed
 * @timeouts: times the input link was removed after silence
 * @pushes: beacons sw_push() asked for (a subset of the beacons)
 * @pace: when pushes may leave (kernel/core/push.h)
 * @push_at: when this port's push is due, while it is stale
 * @rx_at: when a valid packet last came in (the link's liveness in
 *	controlled mode), valid once @rx_seen
 * @rx_seen: a valid packet came in since the port was added
 * @resumes: sw_resume() calls (controlled mode)
 */
struct sw_port {
	char name[SW_NAME_LEN];
	enum sw_role role;
	struct sw_range hosts[SW_MAX_RANGES];
	unsigned int nhosts;
	bool sent;
	u64 rx_pkts;
	u64 rx_beacons;
	u64 tx_pkts;
	u64 tx_beacons;
	u64 drops;
	u64 timeouts;
	u64 pushes;
	struct op_push pace;
	u64 push_at;
	u64 rx_at;
	bool rx_seen;
	u64 resumes;
};

/**
 * struct sw - switch state
 * @ports: port table, index = link index in @links and @clinks
 * @links: input link registers of the best-effort barrier
 * @clinks: input link registers of the commit barrier
 * @groups: best-effort output groups, see enum sw_group
 * @cgroups: commit output groups, same members as @groups
 * @nports: ports in use
 * @timeout: silence (ns) after which an input link is removed
 * @commit_timeout: the same for its commit register: longer, see
 *	OP_COMMIT_TIMEOUT_FACTOR
 * @admit_slack: a new link joins a group (best-effort or commit) once its
 *	register is at most this far (ns) below the group's barrier; 0 is
 *	barrier.c's strict rule (see sw_groups_update())
 * @beacon_only: registers are updated from BEACONs only, forwarded
 *	packets are not rewritten, every port beacons every tick (see the
 *	top of this file); false (the UDP transport's rules) after sw_init()
 * @push: push barrier advances (see the top of this file); off after
 *	sw_init(), see sw_set_push()
 * @push_gap: pushes to one port are paced to one per gap, after a
 *	burst of two
 * @busy_window: a port that forwarded this recently (ns) is busy
 * @outputs: per group, the ports it feeds (mask)
 * @stale: ports that have not carried their groups' current values
 * @controlled: commit registers leave the minimum by sw_resume() only;
 *	silent links are reported instead (see the top of this file)
 * @down: controlled mode: links silent for longer than @commit_timeout,
 *	as of the last sw_tick()
 * @reported: @down as the caller last took it (sw_take_reports())
 * @heard: controlled mode: ports heard since they were added (or since
 *	controlled mode was turned on), as of the last sw_tick()
 * @announced: the ports of @heard that sw_take_reports() reported once
 * @rx_bad: malformed packets
 * @rx_unknown_src: datagrams from no configured peer (counted by the I/O
 *	layer, which is the only one to know)
 * @no_route: packets with no output port
 */
struct sw {
	struct sw_port ports[SW_MAX_PORTS];
	struct op_link links[SW_MAX_PORTS];
	struct op_link clinks[SW_MAX_PORTS];
	struct op_agg groups[SW_NGROUPS];
	struct op_agg cgroups[SW_NGROUPS];
	unsigned int nports;
	u64 timeout;
	u64 commit_timeout;
	u64 admit_slack;
	bool beacon_only;
	bool push;
	u64 push_gap;
	u64 busy_window;
	u64 outputs[SW_NGROUPS];
	u64 stale;
	bool controlled;
	u64 down;
	u64 reported;
	u64 heard;
	u64 announced;
	u64 rx_bad;
	u64 rx_unknown_src;
	u64 no_route;
};

/**
 * struct sw_beacon - a beacon the caller must send (sw_beacon_build())
 * @port: output port
 * @has_barrier: @barrier is valid (else the beacon says OP_F_NOBARRIER)
 * @has_commit: @commit is valid (else the beacon says OP_F_NOCOMMIT)
 * @barrier: the port's best-effort output barrier, 0 if none
 * @commit: the port's commit output barrier, 0 if none
 */
struct sw_beacon {
	unsigned int port;
	bool has_barrier;
	bool has_commit;
	u64 barrier;
	u64 commit;
};

/**
 * struct sw_report - a link's state change for the controller
 * @port: the port
 * @down: silent for longer than the commit timeout (else heard again)
 * @has_commit: @commit is valid: the port's commit register is in use
 * @commit: its value, the last commit barrier heard on the link
 */
struct sw_report {
	unsigned int port;
	bool down;
	bool has_commit;
	u64 commit;
};

void sw_init(struct sw *sw, u64 timeout, u64 admit_slack);
int sw_parse_hosts(const char *s, struct sw_range *r, unsigned int max);
bool sw_valid_name(const char *name);
int sw_add_port(struct sw *sw, const char *name, enum sw_role role,
		const struct sw_range *hosts, unsigned int nhosts);
int sw_find_port(const struct sw *sw, const char *name);

u32 sw_flow_hash(u32 src_host, u32 dst_host);
int sw_route(const struct sw *sw, unsigned int in, u32 src_host,
	     u32 dst_host);
enum sw_verdict sw_rx(struct sw *sw, unsigned int in, u8 *pkt, size_t len,
		      u64 now, unsigned int *out);
unsigned int sw_tick(struct sw *sw, u64 now, struct sw_beacon *beacons);
void sw_set_push(struct sw *sw, u64 push_gap, u64 busy_window);
unsigned int sw_push(struct sw *sw, u64 now, struct sw_beacon *beacons);
bool sw_push_due(const struct sw *sw, u64 *when);
void sw_set_controlled(struct sw *sw, bool on);
unsigned int sw_take_reports(struct sw *sw, struct sw_report *reports);
u64 sw_heard_ports(const struct sw *sw);
void sw_port_report(const struct sw *sw, unsigned int port,
		    struct sw_report *r);
int sw_resume(struct sw *sw, unsigned int port, u64 now);
void sw_beacon_build(u8 *buf, const struct sw_beacon *b);
void sw_tx_result(struct sw *sw, unsigned int port, bool beacon, bool ok);

enum sw_group sw_port_group(const struct sw *sw, unsigned int port);
bool sw_out_barrier(const struct sw *sw, unsigned int port, u64 *barrier);
bool sw_out_commit(const struct sw *sw, unsigned int port, u64 *commit);
enum sw_link_state sw_port_state(const struct sw *sw, unsigned int port);
enum sw_link_state sw_port_commit_state(const struct sw *sw,
					unsigned int port);
bool sw_port_idle(const struct sw *sw, unsigned int port, u64 now,
		  u64 *idle);

const char *sw_role_name(enum sw_role role);
const char *sw_state_name(enum sw_link_state st);

#endif /* ONEPIPE_SWITCH_LOGIC_H */
