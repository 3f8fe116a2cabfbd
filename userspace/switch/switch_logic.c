// SPDX-License-Identifier: GPL-2.0
/*
 * The 1Pipe switch state machine; see switch_logic.h.  The barrier rules
 * themselves (registers, timeout removal, the new-link rule) come from the
 * protocol core, kernel/core/barrier.c.
 */
#include <string.h>

#include "switch_logic.h"

/**
 * sw_init() - reset a switch to no ports
 * @sw: the switch
 * @timeout: silence in ns after which an input link is removed (its commit
 *	register OP_COMMIT_TIMEOUT_FACTOR times later)
 * @admit_slack: how far (ns) below a group's barrier a new link may be and
 *	still join it at once; see sw_groups_update()
 */
void sw_init(struct sw *sw, u64 timeout, u64 admit_slack)
{
	memset(sw, 0, sizeof(*sw));
	sw->timeout = timeout;
	sw->commit_timeout = timeout * OP_COMMIT_TIMEOUT_FACTOR;
	sw->admit_slack = admit_slack;
}

/* Parse a decimal host id >= 1 at *s, advance *s past it. */
static int parse_host_id(const char **s, u32 *id)
{
	const char *p = *s;
	u64 v = 0;

	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (u64)(*p - '0');
		if (v > 0xffffffffULL)
			return -1;
		p++;
	}
	if (!v)
		return -1;
	*id = (u32)v;
	*s = p;
	return 0;
}

/**
 * sw_parse_hosts() - parse a host list such as "1-4+7"
 * @s: '+'-separated ids or inclusive ranges lo-hi, ids >= 1
 * @r: ranges out
 * @max: room in @r
 *
 * Return: number of ranges, or -1 if @s is malformed or too long.
 */
int sw_parse_hosts(const char *s, struct sw_range *r, unsigned int max)
{
	unsigned int n = 0;

	for (;;) {
		u32 lo, hi;

		if (parse_host_id(&s, &lo))
			return -1;
		hi = lo;
		if (*s == '-') {
			s++;
			if (parse_host_id(&s, &hi) || hi < lo)
				return -1;
		}
		if (n == max)
			return -1;
		r[n].lo = lo;
		r[n].hi = hi;
		n++;
		if (!*s)
			return (int)n;
		if (*s++ != '+')
			return -1;
	}
}

/* Names go into JSON and shell scripts unquoted: keep them plain. */
bool sw_valid_name(const char *name)
{
	size_t i, len = strlen(name);

	if (!len || len >= SW_NAME_LEN)
		return false;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '-'))
			return false;
	}
	return true;
}

/**
 * sw_add_port() - append a port
 * @sw: the switch
 * @name: unique port name
 * @role: SW_ROLE_DOWN or SW_ROLE_UP
 * @hosts: host ids reachable through the port (may be NULL)
 * @nhosts: entries in @hosts
 *
 * Return: the port's index, or -1 if the table is full, the name is bad
 * or taken, or there are too many host ranges.
 */
int sw_add_port(struct sw *sw, const char *name, enum sw_role role,
		const struct sw_range *hosts, unsigned int nhosts)
{
	unsigned int i = sw->nports;
	struct sw_port *p;
	u64 bit;

	if (i >= SW_MAX_PORTS || nhosts > SW_MAX_RANGES ||
	    (role != SW_ROLE_DOWN && role != SW_ROLE_UP) ||
	    !sw_valid_name(name) || sw_find_port(sw, name) >= 0)
		return -1;
	p = &sw->ports[i];
	bit = (u64)1 << i;
	memset(p, 0, sizeof(*p));
	memset(&sw->links[i], 0, sizeof(sw->links[i]));
	memset(&sw->clinks[i], 0, sizeof(sw->clinks[i]));
	strcpy(p->name, name);
	p->role = role;
	if (nhosts)
		memcpy(p->hosts, hosts, nhosts * sizeof(*hosts));
	p->nhosts = nhosts;
	sw->groups[SW_G_ALL].members |= bit;
	sw->cgroups[SW_G_ALL].members |= bit;
	if (role == SW_ROLE_DOWN) {
		sw->groups[SW_G_DOWNIN].members |= bit;
		sw->cgroups[SW_G_DOWNIN].members |= bit;
	}
	sw->nports++;
	sw->outputs[sw_port_group(sw, i)] |= bit;
	return (int)i;
}

int sw_find_port(const struct sw *sw, const char *name)
{
	unsigned int i;

	for (i = 0; i < sw->nports; i++)
		if (!strcmp(sw->ports[i].name, name))
			return (int)i;
	return -1;
}

/**
 * sw_flow_hash() - hash that spreads flows over several up ports
 * @src_host: source host id
 * @dst_host: destination host id
 *
 * CRC-32 (IEEE 802.3, as zlib) of the two ids in big-endian order, which
 * P4 targets compute natively.  One flow always hashes alike, so it stays
 * on one path and therefore FIFO.
 *
 * Return: the hash.
 */
u32 sw_flow_hash(u32 src_host, u32 dst_host)
{
	u8 b[8] = {
		src_host >> 24, src_host >> 16, src_host >> 8, src_host,
		dst_host >> 24, dst_host >> 16, dst_host >> 8, dst_host,
	};
	u32 crc = 0xffffffff;
	unsigned int i, k;

	for (i = 0; i < sizeof(b); i++) {
		crc ^= b[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320 & (0u - (crc & 1)));
	}
	return ~crc;
}

static bool port_has_host(const struct sw_port *p, u32 host)
{
	unsigned int i;

	for (i = 0; i < p->nhosts; i++)
		if (host >= p->hosts[i].lo && host <= p->hosts[i].hi)
			return true;
	return false;
}

/**
 * sw_route() - output port for a packet
 * @sw: the switch
 * @in: input port
 * @src_host: source host id
 * @dst_host: destination host id
 *
 * The first port whose host list holds @dst_host wins; otherwise an up
 * port chosen by sw_flow_hash().  A packet that came down from an up port
 * is never sent up again: that would be a valley in up-down routing, and
 * the up group's barrier does not cover inputs from up ports.
 *
 * Return: port index, or -1 if there is no route.
 */
int sw_route(const struct sw *sw, unsigned int in, u32 src_host,
	     u32 dst_host)
{
	unsigned int i, nup = 0, pick;

	for (i = 0; i < sw->nports; i++)
		if (port_has_host(&sw->ports[i], dst_host))
			return (int)i;
	if (sw->ports[in].role == SW_ROLE_UP)
		return -1;
	for (i = 0; i < sw->nports; i++)
		nup += sw->ports[i].role == SW_ROLE_UP;
	if (!nup)
		return -1;
	pick = sw_flow_hash(src_host, dst_host) % nup;
	for (i = 0; i < sw->nports; i++) {
		if (sw->ports[i].role != SW_ROLE_UP)
			continue;
		if (!pick--)
			return (int)i;
	}
	return -1;
}

enum sw_group sw_port_group(const struct sw *sw, unsigned int port)
{
	return sw->ports[port].role == SW_ROLE_UP ? SW_G_DOWNIN : SW_G_ALL;
}

/* The outputs of @g have not carried its new value: due for a push. */
static void sw_mark_stale(struct sw *sw, enum sw_group g, u64 now)
{
	u64 fresh = sw->outputs[g] & ~sw->stale;

	sw->stale |= sw->outputs[g];
	while (fresh) {
		unsigned int i = (unsigned int)__builtin_ctzll(fresh);

		fresh &= fresh - 1;
		sw->ports[i].push_at =
			op_push_time(&sw->ports[i].pace, now, sw->push_gap,
				     sw->beacon_only ? 0 : sw->busy_window);
	}
}

/*
 * Recompute every output group, best-effort and commit, from the
 * registers.  Both kinds use the same admission slack: a commit barrier
 * lags by construction exactly as a best-effort one does (see
 * op_agg_update_slack()).  With push on, a group whose output moved
 * makes its output ports stale.
 */
static void sw_groups_update(struct sw *sw, u64 now)
{
	unsigned int g;

	for (g = 0; g < SW_NGROUPS; g++) {
		bool moved;

		moved = op_agg_update_slack(&sw->groups[g], sw->links,
					    sw->nports, sw->admit_slack);
		moved |= op_agg_update_slack(&sw->cgroups[g], sw->clinks,
					     sw->nports, sw->admit_slack);
		if (moved && sw->push)
			sw_mark_stale(sw, (enum sw_group)g, now);
	}
}

/*
 * One register of an input link hears a packet.  Without a value
 * (OP_F_NOBARRIER, OP_F_NOCOMMIT) the peer is still alive, but there is
 * nothing to put in the register: a register never heard or dead stays
 * out of the minimum, a live one only has its liveness refreshed.
 */
static void sw_hear_reg(struct op_link *l, bool valid, u64 value, u64 now)
{
	if (valid)
		op_link_heard(l, value, now);
	else if (l->heard && !l->dead)
		l->last_heard = now;
}

/*
 * Record what a packet tells about its input link.  Every packet touches
 * both registers, so two live registers of one link always share one
 * last_heard and time out together.
 */
static void sw_hear(struct sw *sw, unsigned int in, const struct op_hdr *h,
		    u64 now)
{
	sw_hear_reg(&sw->links[in], !(h->flags & OP_F_NOBARRIER), h->barrier,
		    now);
	sw_hear_reg(&sw->clinks[in], !(h->flags & OP_F_NOCOMMIT), h->commit,
		    now);
}

/*
 * Beacon-only mode: a packet that is not a beacon says nothing about its
 * link's registers (its barrier fields are the original sender's), but
 * its link is evidently alive.  Refreshing the liveness keeps a link
 * that still sends data in the minimum even if its beacons go missing:
 * a stalled barrier is safe, one that moves past that link's data is not.
 */
static void sw_touch(struct sw *sw, unsigned int in, u64 now)
{
	sw_hear_reg(&sw->links[in], false, 0, now);
	sw_hear_reg(&sw->clinks[in], false, 0, now);
}

/*
 * Did hearing a packet change what the output groups are computed from?
 * Every other input to sw_groups_update() changes only in the tick, on a
 * resume or on a register change, and each of those recomputes the
 * groups; so a packet that leaves its link's registers and states as
 * they were (the second and later messages of a scattering carry the
 * same barrier) leaves every group where it is, and skipping the
 * recomputation saves a pass over every port per packet.
 */
static bool sw_link_moved(const struct op_link *before,
			  const struct op_link *after)
{
	return before->reg != after->reg || before->heard != after->heard ||
	       before->dead != after->dead;
}

/* Rewrite one barrier field of a forwarded packet from its group. */
static void sw_put(u8 *pkt, const struct op_agg *a, u8 none_flag,
		   void (*set)(u8 *buf, u64 v))
{
	if (a->valid) {
		set(pkt, a->out);
		pkt[2] &= (u8)~none_flag;
	} else {
		set(pkt, 0);
		pkt[2] |= none_flag;
	}
}

/* Give a packet leaving port @out that port's barrier and commit. */
static void sw_rewrite(struct sw *sw, u8 *pkt, unsigned int out)
{
	enum sw_group g = sw_port_group(sw, out);

	sw_put(pkt, &sw->groups[g], OP_F_NOBARRIER, op_hdr_set_barrier);
	sw_put(pkt, &sw->cgroups[g], OP_F_NOCOMMIT, op_hdr_set_commit);
}

/**
 * sw_rx() - process one received datagram
 * @sw: the switch
 * @in: input port (the I/O layer identified it by source address)
 * @pkt: the datagram; rewritten in place when forwarded (unless
 *	beacon-only)
 * @len: its length
 * @now: local monotonic time in ns
 * @out: output port when SW_FORWARD is returned
 *
 * A forwarded packet carries its output group's barrier, or
 * OP_F_NOBARRIER (and a zero barrier) while the group has none yet, and
 * likewise its commit group's barrier or OP_F_NOCOMMIT (and a zero
 * commit).  Nothing but the flags byte and those two fields is touched.
 * In beacon-only mode only beacons update the registers, and forwarded
 * packets are not touched at all.
 *
 * Return: what to do with the packet.
 */
enum sw_verdict sw_rx(struct sw *sw, unsigned int in, u8 *pkt, size_t len,
		      u64 now, unsigned int *out)
{
	struct sw_port *p = &sw->ports[in];
	struct op_link before, cbefore;
	struct op_hdr h;
	int o;

	p->rx_pkts++;
	if (op_hdr_decode(&h, pkt, len) != OP_PARSE_OK) {
		sw->rx_bad++;
		p->drops++;
		return SW_DROP_BAD;
	}
	p->rx_at = now;
	p->rx_seen = true;
	before = sw->links[in];
	cbefore = sw->clinks[in];
	if (sw->beacon_only && h.type != OP_PKT_BEACON)
		sw_touch(sw, in, now);
	else
		sw_hear(sw, in, &h, now);
	if (sw_link_moved(&before, &sw->links[in]) ||
	    sw_link_moved(&cbefore, &sw->clinks[in]))
		sw_groups_update(sw, now);
	if (h.type == OP_PKT_BEACON) {
		p->rx_beacons++;
		return SW_CONSUMED;
	}
	o = sw_route(sw, in, h.src_host, h.dst_host);
	if (o < 0) {
		sw->no_route++;
		p->drops++;
		return SW_DROP_NOROUTE;
	}
	/* The packet carries the port's current values: no push needed. */
	if (!sw->beacon_only) {
		sw_rewrite(sw, pkt, (unsigned int)o);
		sw->stale &= ~((u64)1 << o);
		op_push_carried(&sw->ports[o].pace, now);
	}
	sw->ports[o].sent = true;
	*out = (unsigned int)o;
	return SW_FORWARD;
}

/*
 * Controlled mode: which links are down, i.e. silent for longer than the
 * commit timeout.  Any valid packet is life, whatever registers it
 * fills: a link whose commit register was resumed away and that now
 * sends best-effort traffic only is up.  A link never heard is not a
 * link the controller needs to hear about; one heard is, at least once
 * (sw_take_reports()).
 */
static void sw_watch_links(struct sw *sw, u64 now)
{
	unsigned int i;

	for (i = 0; i < sw->nports; i++) {
		const struct sw_port *p = &sw->ports[i];
		u64 bit = (u64)1 << i;

		if (p->rx_seen)
			sw->heard |= bit;
		if (p->rx_seen &&
		    (s64)(now - p->rx_at) > (s64)sw->commit_timeout)
			sw->down |= bit;
		else
			sw->down &= ~bit;
	}
}

/**
 * sw_tick() - beacon tick
 * @sw: the switch
 * @now: local monotonic time in ns
 * @beacons: room for SW_MAX_PORTS beacons
 *
 * Removes links silent for longer than the timeout, recomputes the groups
 * and picks the ports that get a beacon: those that sent nothing since
 * the previous tick and whose best-effort or commit group has a barrier.
 * The beacon carries both, each one flagged absent if its group has none.
 * In beacon-only mode forwarded packets carry no barrier of ours, so
 * every port with a barrier gets a beacon, busy or not.
 *
 * Both registers of a link expire with the same @now.  Since every packet
 * refreshes both (sw_hear()), they die in the same tick; one that was
 * never heard, or is already dead, has nothing to expire.
 *
 * In controlled mode commit registers do not expire; the tick notes
 * which links are silent for longer than the commit timeout instead, for
 * sw_take_reports().
 *
 * Return: number of beacons in @beacons.
 */
unsigned int sw_tick(struct sw *sw, u64 now, struct sw_beacon *beacons)
{
	unsigned int i, n = 0;
	u64 died;

	died = op_links_expire(sw->links, sw->nports, now, sw->timeout);
	if (sw->controlled)
		sw_watch_links(sw, now);
	else
		died |= op_links_expire(sw->clinks, sw->nports, now,
					sw->commit_timeout);
	sw_groups_update(sw, now);
	for (i = 0; i < sw->nports; i++) {
		struct sw_port *p = &sw->ports[i];
		struct sw_beacon *b = &beacons[n];

		if (died & ((u64)1 << i))
			p->timeouts++;
		b->port = i;
		b->has_barrier = sw_out_barrier(sw, i, &b->barrier);
		b->has_commit = sw_out_commit(sw, i, &b->commit);
		if ((!p->sent || sw->beacon_only) &&
		    (b->has_barrier || b->has_commit)) {
			sw->stale &= ~((u64)1 << i);
			n++;
		}
		p->sent = false;
	}
	return n;
}

/**
 * sw_set_push() - turn pushing barrier advances on
 * @sw: the switch
 * @push_gap: pushes to one port: two in a row, then one per gap
 * @busy_window: how long (ns) after a forward a port counts as busy
 *
 * See "Push" at the top of switch_logic.h.  Ports are stale from the
 * first advance after this call on.
 */
void sw_set_push(struct sw *sw, u64 push_gap, u64 busy_window)
{
	sw->push = true;
	sw->push_gap = push_gap;
	sw->busy_window = busy_window;
	sw->stale = 0;
}

/**
 * sw_push() - the pushes due
 * @sw: the switch
 * @now: local monotonic time in ns
 * @beacons: room for SW_MAX_PORTS beacons
 *
 * Call after every batch of sw_rx() and when sw_push_due()'s time comes.
 * Each due port gets one beacon with its groups' current values; it then
 * counts as having sent something since the tick.  A due port whose
 * groups have no value yet has nothing to push and stops being stale.
 *
 * Return: number of beacons in @beacons.
 */
unsigned int sw_push(struct sw *sw, u64 now, struct sw_beacon *beacons)
{
	u64 left = sw->stale;
	unsigned int n = 0;

	while (left) {
		unsigned int i = (unsigned int)__builtin_ctzll(left);
		struct sw_port *p = &sw->ports[i];
		struct sw_beacon *b = &beacons[n];

		left &= left - 1;
		if ((s64)(p->push_at - now) > 0)
			continue;
		sw->stale &= ~((u64)1 << i);
		b->port = i;
		b->has_barrier = sw_out_barrier(sw, i, &b->barrier);
		b->has_commit = sw_out_commit(sw, i, &b->commit);
		if (!b->has_barrier && !b->has_commit)
			continue;
		p->pushes++;
		op_push_sent(&p->pace, now, sw->push_gap);
		p->sent = true;
		n++;
	}
	return n;
}

/**
 * sw_push_due() - when the next push falls due
 * @sw: the switch
 * @when: the earliest due time (monotonic ns) of a stale port
 *
 * Return: false if no port is stale.
 */
bool sw_push_due(const struct sw *sw, u64 *when)
{
	u64 left = sw->stale;
	bool any = false;

	while (left) {
		unsigned int i = (unsigned int)__builtin_ctzll(left);
		u64 at = sw->ports[i].push_at;

		left &= left - 1;
		if (!any || (s64)(at - *when) < 0)
			*when = at;
		any = true;
	}
	return any;
}

/**
 * sw_set_controlled() - leave commit registers to the controller
 * @sw: the switch
 * @on: controlled mode on or off
 *
 * See "Controlled mode" at the top of switch_logic.h.  Turning it off
 * forgets the reports: the next tick expires silent commit registers on
 * the local timeout again.
 */
void sw_set_controlled(struct sw *sw, bool on)
{
	sw->controlled = on;
	sw->down = 0;
	sw->reported = 0;
	sw->heard = 0;
	sw->announced = 0;
}

/**
 * sw_port_report() - a port's current state as a report
 * @sw: the switch
 * @port: port index
 * @r: the report
 *
 * The commit value is the register's only while the register is in use:
 * after sw_resume() its old value belongs to a failure already decided,
 * and must not become the timestamp of the next one.
 */
void sw_port_report(const struct sw *sw, unsigned int port,
		    struct sw_report *r)
{
	const struct op_link *l = &sw->clinks[port];

	r->port = port;
	r->down = sw->down & ((u64)1 << port);
	r->has_commit = l->heard && !l->dead;
	r->commit = r->has_commit ? l->reg : 0;
}

/**
 * sw_take_reports() - link reports for the controller
 * @sw: the switch
 * @reports: room for SW_MAX_PORTS reports
 *
 * Controlled mode: every link whose state (down or up, as of the last
 * sw_tick()) changed since the previous call, once, and every link heard
 * for the first time (up, unless already down), once: see "Controlled
 * mode" in switch_logic.h for why.  A link down and up again between two
 * calls was never down as far as the controller can tell, and makes no
 * report; call after every tick to see every change.
 *
 * Return: number of reports in @reports.
 */
unsigned int sw_take_reports(struct sw *sw, struct sw_report *reports)
{
	u64 left = (sw->down ^ sw->reported) | (sw->heard & ~sw->announced);
	unsigned int n = 0;

	while (left) {
		unsigned int i = (unsigned int)__builtin_ctzll(left);

		left &= left - 1;
		sw_port_report(sw, i, &reports[n++]);
	}
	sw->reported = sw->down;
	sw->announced = sw->heard;
	return n;
}

/**
 * sw_heard_ports() - the ports whose state the controller must know
 * @sw: the switch
 *
 * Controlled mode: the ports heard since they were added, as of the last
 * sw_tick().  A (re)connected controller is told the state of each, down
 * or up, since it may hold a report from an earlier connection or an
 * earlier switch process; about the others this process knows nothing
 * that should replace what the controller holds.
 *
 * Return: a mask of port indices.
 */
u64 sw_heard_ports(const struct sw *sw)
{
	return sw->heard;
}

/**
 * sw_resume() - the controller's decision about a port's link
 * @sw: the switch
 * @port: port index
 * @now: local monotonic time in ns
 *
 * The commit register of @port leaves the commit minimum (it is dead, as
 * after a timeout), and the groups are recomputed, so the commit barrier
 * moves past the failure at once and the ports it feeds are stale like
 * after any advance.  When the link is heard with a commit again it is a
 * new link: it joins under the new-link rule and the admission slack.  A
 * register already dead or never heard stays as it is; the best-effort
 * register is not touched (it follows the local timeout).
 *
 * Return: 0, or -1 if there is no such port.
 */
int sw_resume(struct sw *sw, unsigned int port, u64 now)
{
	struct op_link *l;

	if (port >= sw->nports)
		return -1;
	l = &sw->clinks[port];
	sw->ports[port].resumes++;
	if (l->heard)
		l->dead = true;
	sw_groups_update(sw, now);
	return 0;
}

/* A beacon is hop by hop: no source or destination host. */
void sw_beacon_build(u8 *buf, const struct sw_beacon *b)
{
	struct op_hdr h;

	memset(&h, 0, sizeof(h));
	h.type = OP_PKT_BEACON;
	if (b->has_barrier)
		h.barrier = b->barrier;
	else
		h.flags |= OP_F_NOBARRIER;
	if (b->has_commit)
		h.commit = b->commit;
	else
		h.flags |= OP_F_NOCOMMIT;
	op_hdr_encode(&h, buf);
}

/* Account for a send the I/O layer attempted. */
void sw_tx_result(struct sw *sw, unsigned int port, bool beacon, bool ok)
{
	struct sw_port *p = &sw->ports[port];

	if (!ok) {
		p->drops++;
		return;
	}
	p->tx_pkts++;
	if (beacon)
		p->tx_beacons++;
}

/* A group's output: 0 and false while it has none. */
static bool sw_out(const struct op_agg *a, u64 *v)
{
	*v = a->valid ? a->out : 0;
	return a->valid;
}

/**
 * sw_out_barrier() - current best-effort output barrier of a port
 * @sw: the switch
 * @port: port index
 * @barrier: the barrier, 0 when there is none
 *
 * Return: whether the port's group has a barrier yet.
 */
bool sw_out_barrier(const struct sw *sw, unsigned int port, u64 *barrier)
{
	return sw_out(&sw->groups[sw_port_group(sw, port)], barrier);
}

/* sw_out_barrier() for the commit barrier. */
bool sw_out_commit(const struct sw *sw, unsigned int port, u64 *commit)
{
	return sw_out(&sw->cgroups[sw_port_group(sw, port)], commit);
}

static enum sw_link_state sw_state(const struct op_link *l,
				   const struct op_agg *groups,
				   unsigned int port)
{
	u64 bit = (u64)1 << port;
	unsigned int g;

	if (l->heard && l->dead)
		return SW_LS_DEAD;
	if (!l->heard)
		return SW_LS_NEW;
	for (g = 0; g < SW_NGROUPS; g++) {
		const struct op_agg *a = &groups[g];

		if ((a->members & bit) && !(a->counted & bit))
			return SW_LS_NEW;
	}
	return SW_LS_LIVE;
}

/**
 * sw_port_state() - state of a port's best-effort register
 * @sw: the switch
 * @port: port index
 *
 * Return: dead if it timed out, live if every group it feeds counts it,
 * new otherwise (never heard, or heard but not yet counted).
 */
enum sw_link_state sw_port_state(const struct sw *sw, unsigned int port)
{
	return sw_state(&sw->links[port], sw->groups, port);
}

/*
 * sw_port_state() of the commit register.  Dead while it has heard no
 * commit since its link timed out, even if the link is back with
 * best-effort barriers only: it is out of the minimum either way.
 */
enum sw_link_state sw_port_commit_state(const struct sw *sw,
					unsigned int port)
{
	return sw_state(&sw->clinks[port], sw->cgroups, port);
}

/**
 * sw_port_idle() - time since a port's input link was last heard
 * @sw: the switch
 * @port: port index
 * @now: local monotonic time in ns
 * @idle: the silence in ns
 *
 * Return: false if neither register of the link was ever heard.
 */
bool sw_port_idle(const struct sw *sw, unsigned int port, u64 now,
		  u64 *idle)
{
	const struct op_link *b = &sw->links[port], *c = &sw->clinks[port];
	u64 last;

	if (!b->heard && !c->heard)
		return false;
	if (b->heard && c->heard)
		last = (s64)(b->last_heard - c->last_heard) > 0 ?
		       b->last_heard : c->last_heard;
	else
		last = b->heard ? b->last_heard : c->last_heard;
	*idle = now - last;
	return true;
}

const char *sw_role_name(enum sw_role role)
{
	return role == SW_ROLE_UP ? "up" : "down";
}

const char *sw_state_name(enum sw_link_state st)
{
	switch (st) {
	case SW_LS_LIVE:
		return "live";
	case SW_LS_DEAD:
		return "dead";
	default:
		return "new";
	}
}
