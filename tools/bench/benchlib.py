# SPDX-License-Identifier: GPL-2.0
"""What the benchmarks of tools/bench share: the fabric's addressing
plan, kernel IP forwarding through its switch namespaces, starting a set
of traffic processes together, and latency percentiles.

Imported by op-bench and by its all-to-all broadcast workload (bcast.py).
"""

import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FABRIC = os.path.join(REPO, "tools", "fabric", "fabric")
TRAFFIC = os.path.join(REPO, "tools", "traffic", "op-traffic")
CHECK = os.path.join(REPO, "tools", "checker", "op-check")
CLI = os.path.join(REPO, "tools", "onepipe", "onepipe")
FABRIC_ENV = os.path.join(os.environ.get("ONEPIPE_FABRIC_RUN",
                                         "/run/onepipe-fabric"), "fabric.env")


def log(msg):
    print("op-bench: " + msg, file=sys.stderr, flush=True)


def sh(*cmd, check=True):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd),
                                                   p.returncode,
                                                   p.stderr.strip()))
    return p.stdout


class Fabric:
    """The addressing plan of tools/fabric/README.md."""

    def __init__(self, hosts, tors, transport="udp", switch="soft"):
        self.hosts, self.tors, self.transport = hosts, tors, transport
        self.kind = "bmv2" if switch == "bmv2" else transport

    @classmethod
    def from_env(cls):
        env = {}
        with open(FABRIC_ENV) as fh:
            for line in fh:
                k, sep, v = line.strip().partition("=")
                if sep:
                    env[k] = v
        return cls(int(env["HOSTS"]), int(env["TORS"]),
                   env.get("TRANSPORT") or "udp",
                   env.get("SWITCH_KIND") or "soft")

    def tor_first(self, t):
        base, extra = divmod(self.hosts, self.tors)
        before = t - 1
        return before * base + min(before, extra) + 1

    def tor_last(self, t):
        base, extra = divmod(self.hosts, self.tors)
        return self.tor_first(t) + base - 1 + (1 if t <= extra else 0)

    def tor_of(self, n):
        for t in range(1, self.tors + 1):
            if n <= self.tor_last(t):
                return t
        raise ValueError("host %d not in the fabric" % n)

    @staticmethod
    def host_addr(n):
        return "10.77.%d.2" % n

    @staticmethod
    def host_gw(n):
        return "10.77.%d.1" % n

    @staticmethod
    def tor_up_addr(t):
        return "10.77.%d.2" % (200 + t)

    @staticmethod
    def spine_addr(t):
        return "10.77.%d.1" % (200 + t)


class UdpRouting:
    """Kernel IP forwarding through the switch namespaces, for one run."""

    def __init__(self, fab):
        self.fab = fab
        self.routes = []  # (netns, prefix, via)
        self.forward = {}  # netns -> previous net.ipv4.ip_forward

    def _route(self, ns, prefix, via):
        sh("ip", "-n", ns, "route", "replace", prefix, "via", via)
        self.routes.append((ns, prefix, via))

    def _forward(self, ns):
        self.forward[ns] = sh("ip", "netns", "exec", ns, "sysctl", "-n",
                              "net.ipv4.ip_forward").strip()
        sh("ip", "netns", "exec", ns, "sysctl", "-qw",
           "net.ipv4.ip_forward=1")

    def add(self):
        fab = self.fab
        for n in range(1, fab.hosts + 1):
            self._route("op-h%d" % n, "10.77.0.0/16", fab.host_gw(n))
        for t in range(1, fab.tors + 1):
            self._forward("op-tor%d" % t)
            if fab.tors > 1:
                self._route("op-tor%d" % t, "10.77.0.0/16",
                            fab.spine_addr(t))
        if fab.tors > 1:
            self._forward("op-spine")
            for t in range(1, fab.tors + 1):
                for n in range(fab.tor_first(t), fab.tor_last(t) + 1):
                    self._route("op-spine", "10.77.%d.0/24" % n,
                                fab.tor_up_addr(t))

    def remove(self):
        for ns, prefix, via in reversed(self.routes):
            sh("ip", "-n", ns, "route", "del", prefix, "via", via,
               check=False)
        for ns, old in self.forward.items():
            sh("ip", "netns", "exec", ns, "sysctl", "-qw",
               "net.ipv4.ip_forward=%s" % old, check=False)
        self.routes, self.forward = [], {}


def json_objects(text):
    dec, i, out = json.JSONDecoder(), 0, []
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        try:
            obj, i = dec.raw_decode(text, i)
        except ValueError:
            break
        out.append(obj)
    return out



def percentile(values, p):
    if not values:
        return 0
    return values[(len(values) - 1) * p // 100]


def read_latencies(paths):
    lats = []
    for path in paths:
        with open(path) as fh:
            for line in fh:
                if line.startswith("R "):
                    lats.append(int(line.split()[6]))
    lats.sort()
    return lats


def release(running, start_file, delay_ms):
    """Once every process has bound its socket, give them a start time."""
    deadline = time.monotonic() + 120
    for path, proc in running:
        while not (os.path.exists(path) and os.path.getsize(path)):
            if proc.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(0.05)
    with open(start_file + ".tmp", "w") as fh:
        fh.write("%d\n" % (time.time_ns() + delay_ms * 10 ** 6))
    os.rename(start_file + ".tmp", start_file)
    return True


def run_procs(args, procs, start_file, timeout_s=None):
    """Start the processes, release them, collect their JSON summaries
    and their failures.  With timeout_s, a process still running that
    long after the release is killed (and reported): a peer that wedges
    must not hang the run."""
    running = [(path, subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True))
               for path, cmd in procs]
    if not release(running, start_file, args.start_delay_ms):
        for _, proc in running:
            if proc.poll() is None:
                proc.kill()
    end = time.monotonic() + timeout_s if timeout_s else None
    outs = []
    for path, proc in running:
        try:
            left = max(end - time.monotonic(), 0.1) if end else None
            outs.append((path, proc) + proc.communicate(timeout=left))
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            outs.append((path, proc, out, "killed after %d s; %s" %
                         (timeout_s, err)))
    # Every process is collected before any output is read.
    summaries, errors = [], []
    for path, proc, out, err in outs:
        if proc.returncode:
            errors.append("%s: exit %d: %s" % (os.path.basename(path),
                                               proc.returncode, err.strip()))
        elif out.strip():
            try:
                summaries.append(json.loads(out))
            except ValueError:
                errors.append("%s: no JSON summary: %s" %
                              (os.path.basename(path), out.strip()[:200]))
    return summaries, errors
