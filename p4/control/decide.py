# SPDX-License-Identifier: GPL-2.0
"""The control plane's decisions, as pure functions: state in, actions out.

The barrier program's data plane (p4/ingress.p4, p4/egress.p4) keeps the
registers; what needs a clock is left to the control plane: timing out
silent links, the failure controller's link reports, and knowing when a
push falls due.  These are the rules of switch_logic.c (sw_tick(),
sw_watch_links(), sw_take_reports(), sw_push_due()) over the words the
data plane's registers hold; no I/O here, so that tests can run them on
made-up words.
"""

# A silent link leaves the commit minimum this many times later
# (OP_COMMIT_TIMEOUT_FACTOR, kernel/core/barrier.h).
COMMIT_TIMEOUT_FACTOR = 10

TS_BITS = 48
TS_MASK = (1 << TS_BITS) - 1

# KILL frame flags (p4/headers.p4, op_ctl_h.which)
KILL_BARRIER = 1
KILL_COMMIT = 2
KILL_ANY = 4
KILL_UP = 8
KILL_TIMEOUT = 16
KILL_HOLD = 32


def ts_diff(a, b):
    """a - b as a signed 48-bit distance (kernel/core/ts.h op_ts_diff)."""
    d = (a - b) & TS_MASK
    return d - (1 << TS_BITS) if d >> (TS_BITS - 1) else d


class Leaf:
    """One input link register of one kind, decoded (ingress.p4 leaf_K)."""

    def __init__(self, word):
        self.reg = word & TS_MASK
        self.heard = bool(word >> 48 & 1)
        self.dead = bool(word >> 49 & 1)
        self.counted_all = bool(word >> 50 & 1)
        self.counted_down = bool(word >> 51 & 1)

    @property
    def alive(self):
        return self.heard and not self.dead

    def state(self, up):
        """new, live or dead, as sw_port_state() says it."""
        if self.heard and self.dead:
            return "dead"
        if not self.heard:
            return "new"
        if not self.counted_all or (not up and not self.counted_down):
            return "new"
        return "live"


class Group:
    """An output group's word (ingress.p4 gout): what its ports carry."""

    def __init__(self, word):
        self.out = word & TS_MASK
        self.valid = bool(word >> 48 & 1)

    def value(self):
        """The output, or None while the group has never had one."""
        return self.out if self.valid else None


def expire(links, now, timeout, commit_timeout, controlled):
    """The kills of a tick (op_links_expire() on both kinds).

    links: per port, (rx_at, leaf_b, leaf_c, up).  A live register whose
    link has been silent for longer than its timeout dies; in controlled
    mode commit registers never do (the failure controller decides).
    Returns [(port, which, heard_at)] for OP_CTL_KILL frames; all but the
    last carry KILL_HOLD, so that the outputs move once, after every kill.
    The last frame walks every group: it is from a down port (whose walk
    covers both ALL and DOWNIN), a kill that names no register if need be.
    """
    kills = []
    for i, (rx_at, lb, lc, up) in enumerate(links):
        silent = ts_diff(now, rx_at)
        which = 0
        if lb.alive and silent > timeout:
            which |= KILL_BARRIER
        if not controlled and lc.alive and silent > commit_timeout:
            which |= KILL_COMMIT
        if which:
            which |= KILL_TIMEOUT | (KILL_UP if up else 0)
            kills.append((i, which | KILL_HOLD, rx_at))
    if not kills:
        return kills
    down = [k for k in kills if not k[1] & KILL_UP]
    if down:
        kills.remove(down[-1])
        kills.append(down[-1])
    else:
        first_down = next((i for i, link in enumerate(links)
                           if not link[3]), None)
        if first_down is not None:
            kills.append((first_down, KILL_ANY | KILL_HOLD, 0))
    i, which, rx_at = kills[-1]
    kills[-1] = (i, which & ~KILL_HOLD, rx_at)
    return kills


# A kill the control plane sent is tried again this many ticks later if
# its link is still silent: a frame to the CPU port can be lost.
RETRY_TICKS = 10


def kills_due(rx_at, tried, tick, now, timeout, commit_timeout, controlled):
    """The ports whose leaves a tick must read to time them out.

    rx_at: per port, the rx_at word (bit 48: heard); tried: per port, the
    key this returned for it last (updated by the caller once it sent
    the kills); tick: the tick's number.  A port silent past a timeout is
    due when it was not tried at this silence and level, or RETRY_TICKS
    ago.  Returns {port: key}.
    """
    due = {}
    for i, a in enumerate(rx_at):
        if not a >> 48 & 1:
            continue
        silent = ts_diff(now, a & TS_MASK)
        level = 2 if silent > commit_timeout and not controlled else \
            1 if silent > timeout else 0
        if not level:
            continue
        last = tried.get(i)
        if last is None or last[0] != a or last[1] < level or \
                tick - last[2] >= RETRY_TICKS:
            due[i] = (a, level, tick)
    return due


class LinkWatch:
    """Controlled mode's link reports (sw_watch_links(), sw_take_reports()).

    A link silent for longer than the commit timeout is reported down,
    heard again up; a link is also reported up the first time it is
    heard (the controller may hold a report of a previous incarnation).
    """

    def __init__(self):
        self.down = 0
        self.reported = 0
        self.heard = 0
        self.announced = 0
        self.down_rx_at = {}

    def tick(self, seen, now, commit_timeout):
        """seen: per port, the rx_at of a port heard so far, or None.

        A link found down stays down until its rx_at moves: silence
        longer than half the 48-bit clock would otherwise look recent.
        """
        for i, rx_at in enumerate(seen):
            bit = 1 << i
            if rx_at is None:
                self.down &= ~bit
                continue
            self.heard |= bit
            if self.down & bit and self.down_rx_at.get(i) == rx_at:
                continue
            if ts_diff(now, rx_at) > commit_timeout:
                self.down |= bit
                self.down_rx_at[i] = rx_at
            else:
                self.down &= ~bit

    def due(self):
        """Whether take() has reports to make."""
        return bool((self.down ^ self.reported) |
                    (self.heard & ~self.announced))

    def take(self, commits):
        """The reports due: [(port, down, commit or None)].

        commits: per port, the commit register a report carries (None if
        the register is not in use).
        """
        left = (self.down ^ self.reported) | (self.heard & ~self.announced)
        out = []
        i = 0
        while left >> i:
            if left >> i & 1:
                out.append((i, bool(self.down >> i & 1), commits[i]))
            i += 1
        self.reported = self.down
        self.announced = self.heard
        return out


def push_due(ports, versions, times, push_gap, busy, beacon_only):
    """When the next push falls due (sw_push_due()), or None.

    ports: per port, (pstate word, up) of egress.p4; versions: the two
    groups' versions (ALL, DOWNIN); times: per group, the 16 last
    versions' times (gtime_G, indexed by version % 16).  A port is stale
    while its group's version is ahead of the one it carried; its push
    falls due as op_push_time() says, from the time it went stale.
    """
    best = None
    for word, up in ports:
        g = 1 if up else 0
        carried = word & ((1 << 30) - 1)
        ahead = (versions[g] - carried) & ((1 << 30) - 1)
        if not ahead:
            continue
        first = carried + 1 if ahead <= 16 else versions[g] - 15
        at = times[g][first % 16]
        last_carried = word >> 32 & TS_MASK
        tat = word >> 80 & TS_MASK
        if busy and not beacon_only and word >> 30 & 1 and \
                ts_diff(last_carried + busy, at) > 0:
            at = (last_carried + busy) & TS_MASK
        if ts_diff(tat - push_gap, at) > 0:
            at = (tat - push_gap) & TS_MASK
        if best is None or ts_diff(at, best) < 0:
            best = at
    return best
