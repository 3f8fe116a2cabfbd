# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the control plane's pure decisions (p4/control/decide.py)
on made-up register words: no switch needed.

    /usr/bin/python3 -m unittest -v tests/test_decide.py
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "control"))

import decide  # noqa: E402

TS = decide.TS_MASK


def leaf(reg, heard=True, dead=False, all_=True, down=True):
    """A leaf_K word (ingress.p4)."""
    return decide.Leaf(reg | heard << 48 | dead << 49 | all_ << 50 |
                       down << 51)


def pstate(carried, fwd=False, last_carried=0, tat=0):
    """A pstate word (egress.p4)."""
    return carried | fwd << 30 | last_carried << 32 | tat << 80


class TestTime(unittest.TestCase):
    def test_ts_diff_wraps(self):
        self.assertEqual(decide.ts_diff(5, TS - 4), 10)
        self.assertEqual(decide.ts_diff(TS - 4, 5), -10)
        self.assertEqual(decide.ts_diff(7, 7), 0)


class TestLeaf(unittest.TestCase):
    def test_states(self):
        self.assertEqual(leaf(1, heard=False).state(False), "new")
        self.assertEqual(leaf(1, dead=True).state(False), "dead")
        self.assertEqual(leaf(1).state(False), "live")
        # a down port is live once counted in both groups it feeds
        self.assertEqual(leaf(1, down=False).state(False), "new")
        self.assertEqual(leaf(1, down=False).state(True), "live")

    def test_group_keeps_its_value(self):
        self.assertIsNone(decide.Group(5).value())
        self.assertEqual(decide.Group(5 | 1 << 48).value(), 5)


class TestExpire(unittest.TestCase):
    def links(self, *rx_at):
        return [(t, leaf(100), leaf(10), False) for t in rx_at]

    def test_silent_links_die_together(self):
        kills = decide.expire(self.links(0, 0, 900), 1000, 500, 5000, False)
        self.assertEqual([k[0] for k in kills], [0, 1])
        first, last = kills[0][1], kills[1][1]
        # the outputs move once, at the last kill of the tick
        self.assertTrue(first & decide.KILL_HOLD)
        self.assertFalse(last & decide.KILL_HOLD)
        for _, which, heard_at in kills:
            self.assertTrue(which & decide.KILL_BARRIER)
            self.assertFalse(which & decide.KILL_COMMIT)
            self.assertTrue(which & decide.KILL_TIMEOUT)
            self.assertEqual(heard_at, 0)

    def test_commit_registers_outlive_barriers(self):
        kills = decide.expire(self.links(0), 6000, 500, 5000, False)
        self.assertEqual(kills[0][1] & (decide.KILL_BARRIER |
                                        decide.KILL_COMMIT),
                         decide.KILL_BARRIER | decide.KILL_COMMIT)

    def test_controlled_leaves_commit_to_the_controller(self):
        kills = decide.expire(self.links(0), 6000, 500, 5000, True)
        self.assertFalse(kills[0][1] & decide.KILL_COMMIT)

    def test_dead_or_unheard_registers_have_nothing_to_expire(self):
        links = [(0, leaf(1, dead=True), leaf(1, heard=False), True)]
        self.assertEqual(decide.expire(links, 10**6, 1, 1, False), [])

    def test_across_the_wrap(self):
        kills = decide.expire(self.links(TS - 100), 200, 500, 5000, False)
        self.assertEqual(kills, [])
        kills = decide.expire(self.links(TS - 100), 600, 500, 5000, False)
        self.assertEqual(len(kills), 1)

    def test_the_last_kill_walks_every_group(self):
        # an up port's walk misses DOWNIN: a down port's kill goes last
        links = [(0, leaf(1), leaf(1), False), (0, leaf(1), leaf(1), True)]
        kills = decide.expire(links, 1000, 1, 5000, False)
        self.assertEqual([k[0] for k in kills], [1, 0])
        self.assertFalse(kills[-1][1] & decide.KILL_HOLD)
        # only up ports die: a kill of nothing from a down port ends it
        links = [(999, leaf(1), leaf(1), False), (0, leaf(1), leaf(1), True)]
        kills = decide.expire(links, 1000, 10, 5000, False)
        self.assertEqual(len(kills), 2)
        self.assertTrue(kills[0][1] & decide.KILL_HOLD)
        self.assertEqual(kills[1][0], 0)
        self.assertEqual(kills[1][1], decide.KILL_ANY)

    def test_up_ports_say_so(self):
        links = [(0, leaf(1), leaf(1), True)]
        which = decide.expire(links, 1000, 1, 5000, False)[0][1]
        self.assertTrue(which & decide.KILL_UP)


class TestKillsDue(unittest.TestCase):
    HEARD = 1 << 48

    def due(self, rx_at, tried, tick, now, controlled=False):
        return decide.kills_due(rx_at, tried, tick, now, 100, 1000,
                                controlled)

    def test_only_silent_heard_links(self):
        rx_at = [self.HEARD | 950, self.HEARD | 0, 0]
        self.assertEqual(list(self.due(rx_at, {}, 1, 1000)), [1])

    def test_once_per_silence_and_level_then_retried(self):
        a = self.HEARD | 0
        d = self.due([a], {}, 1, 500)
        self.assertEqual(d, {0: (a, 1, 1)})
        tried = dict(d)
        self.assertEqual(self.due([a], tried, 2, 600), {})
        # the commit timeout is a new level
        self.assertEqual(list(self.due([a], tried, 3, 1500)), [0])
        # but not in controlled mode, where commits are the controller's
        self.assertEqual(self.due([a], tried, 3, 1500, True), {})
        # a kill that was lost is tried again
        self.assertEqual(list(self.due([a], tried,
                                       1 + decide.RETRY_TICKS, 600)), [0])
        # heard since: a new silence
        b = self.HEARD | 550
        self.assertEqual(list(self.due([b], tried, 2, 700)), [0])


class TestLinkWatch(unittest.TestCase):
    def test_reports(self):
        w = decide.LinkWatch()
        w.tick([None, None], 0, 100)
        self.assertEqual(w.take([None, None]), [])
        w.tick([0, None], 50, 100)	# port 0 heard: announced up
        self.assertEqual(w.take([7, None]), [(0, False, 7)])
        self.assertEqual(w.take([7, None]), [])
        w.tick([0, None], 500, 100)	# silent past the commit timeout
        self.assertEqual(w.take([7, None]), [(0, True, 7)])
        w.tick([490, None], 500, 100)	# heard again
        self.assertEqual(w.take([8, None]), [(0, False, 8)])

    def test_long_silence_stays_down_across_the_wrap(self):
        w = decide.LinkWatch()
        w.tick([0], 50, 100)
        self.assertTrue(w.due())
        w.take([1])
        self.assertFalse(w.due())
        w.tick([0], 1000, 100)
        self.assertEqual(w.take([1]), [(0, True, 1)])
        for now in (1 << 47, (1 << 47) + 10**6, TS):	# half the clock on
            w.tick([0], now, 100)
            self.assertEqual(w.take([1]), [], now)
        w.tick([TS - 5], TS, 100)	# heard: up again
        self.assertEqual(w.take([1]), [(0, False, 1)])


class TestPushDue(unittest.TestCase):
    def times(self, at):
        return [[at] * 16, [at] * 16]

    def test_nothing_stale(self):
        self.assertIsNone(decide.push_due([(pstate(3), False)], [3, 0],
                                          self.times(0), 0, 0, False))

    def test_stale_port_due_when_it_went_stale(self):
        due = decide.push_due([(pstate(3), False)], [4, 0], self.times(70),
                              0, 0, False)
        self.assertEqual(due, 70)

    def test_busy_port_waits_out_the_window(self):
        p = pstate(3, fwd=True, last_carried=60)
        due = decide.push_due([(p, False)], [4, 0], self.times(70), 0, 25,
                              False)
        self.assertEqual(due, 85)
        # beacon-only: forwards carry no barrier of ours, never busy
        due = decide.push_due([(p, False)], [4, 0], self.times(70), 0, 25,
                              True)
        self.assertEqual(due, 70)

    def test_pacing(self):
        p = pstate(3, tat=200)
        due = decide.push_due([(p, False)], [4, 0], self.times(70), 50, 0,
                              False)
        self.assertEqual(due, 150)

    def test_earliest_of_the_ports_and_groups(self):
        ports = [(pstate(3, tat=500), False), (pstate(9), True)]
        times = [[70] * 16, [40] * 16]
        self.assertEqual(decide.push_due(ports, [4, 10], times, 50, 0,
                                         False), 40)


if __name__ == "__main__":
    unittest.main()
