# SPDX-License-Identifier: GPL-2.0
"""op-bench --broadcast: all-to-all total-order broadcast, 1Pipe against
Corosync's CPG, on the same hosts in one run.

Every host runs one process that broadcasts to every host, itself
included: for 1Pipe one sendmmsg() of one message per host (a scattering,
one timestamp), to port 7 of each; for Corosync one cpg_mcast_joined() of
CPG_TYPE_AGREED to a group all of them joined (tools/bench/op-cpg, one
corosync per host namespace, tools/bench/corosync-ring).  Two phases:

  light      one broadcast every --bcast-light-us per host, latency
  saturated  as fast as the sender is let (1Pipe: EAGAIN, then POLLOUT;
             Corosync: CS_ERR_TRY_AGAIN, then dispatch) for
             --bcast-seconds, throughput

and three modes: ordered (SOCK_DGRAM, best effort), reliable (SOCK_RDM),
corosync.  For each it reports what the senders' sockets accepted, what
was delivered (all receivers together), the notified failures, delivered
messages per second from the first send to the last delivery, latency
p50/p99, op-check's verdict (1Pipe: every message delivered or truly
notified; Corosync: agreement, the total order between receivers), and
the host counters that account for losses; then the ratios 1Pipe over
Corosync.  It asserts nothing about timings.
"""

import json
import os
import shutil
import subprocess
import sys
import time

from benchlib import (CHECK, CLI, FABRIC, REPO, TRAFFIC, Fabric,
                      UdpRouting, json_objects, log, percentile,
                      read_latencies, run_procs, sh)

OP_CPG = os.path.join(REPO, "tools", "bench", "op-cpg")
RING = os.path.join(REPO, "tools", "bench", "corosync-ring")
BCAST_MODES = ("ordered", "reliable", "corosync")
PORT = 7
# Host counters that account for what was not delivered.
COUNTERS = ("tx_msgs", "acked", "send_failures", "window_stalls",
            "rx_msgs", "rx_rdm_msgs", "rx_late", "rx_noport", "rx_nobufs",
            "rx_expired", "tx_queries", "tx_unknown", "retransmits")


def host_counters(fab):
    c = dict.fromkeys(COUNTERS, 0)
    for n in range(1, fab.hosts + 1):
        out = sh(FABRIC, "exec", "h%d" % n, CLI, "-j", "host", "show",
                 check=False)
        for obj in json_objects(out):
            for k in COUNTERS:
                c[k] += obj.get("counters", {}).get(k, 0)
    drops = 0
    for sw in json_objects(sh(FABRIC, "status", "--json", check=False)):
        for port in sw.get("ports", []):
            drops += port.get("drops", 0)
    c["switch_drops"] = drops
    return c


def phases(args):
    """(name, broadcasts per host, interval us, duration ms).  The light
    phase's duration is a backstop: its broadcasts take a fifth of it."""
    light_ms = args.bcast_light * args.bcast_light_us // 1000
    return [("light", args.bcast_light, args.bcast_light_us,
             5 * light_ms + 10000),
            ("saturated", 1 << 30, 0, int(args.bcast_seconds * 1000))]


def proc_cmd(args, mode, h, peers, phase, log_path, start_file):
    name, scats, interval_us, duration_ms = phase
    common = ["--log", log_path, "--start-file", start_file, "--json",
              "--size", str(args.size), "--peers", ",".join(peers),
              "--scatterings", str(scats), "--interval-us",
              str(interval_us), "--linger-ms", str(args.linger_ms)]
    if duration_ms:
        common += ["--duration-ms", str(duration_ms)]
    if mode == "corosync":
        return ["ip", "netns", "exec", "op-h%d" % h, OP_CPG,
                "--host", str(h), "--port", str(PORT)] + common
    return [FABRIC, "exec", "h%d" % h, TRAFFIC, "--port", str(PORT),
            "--type", "rdm" if mode == "reliable" else "dgram",
            "--fanout", str(len(peers)), "--seed", str(h),
            "--rcvbuf", str(args.rcvbuf), "--drain"] + common


def check_cmd(mode, d):
    cmd = [sys.executable, CHECK, "--json", d]
    if mode == "reliable":
        return cmd + ["--reliable"]
    if mode == "corosync":
        # No 1Pipe timestamps: the order to check is the receivers'
        # agreement (Corosync's total order).
        return cmd + ["--checks",
                      "scattering,causality,integrity,agreement,accounting",
                      "--require-notified"]
    return cmd + ["--require-notified"]


def run_phase(args, fab, mode, phase, workdir):
    d = os.path.join(workdir, "bcast-%s-%s" % (mode, phase[0]))
    os.makedirs(d)
    start = d + ".start"
    peers = ["%d:%d" % (h, PORT) for h in range(1, fab.hosts + 1)]
    procs = []
    for h in range(1, fab.hosts + 1):
        path = os.path.join(d, "h%d.log" % h)
        procs.append((path, proc_cmd(args, mode, h, peers, phase, path,
                                     start)))
    before = host_counters(fab)
    # Sending, lingering (scaled like op-traffic's) and a margin.
    sums, errors = run_procs(args, procs, start,
                             timeout_s=phase[3] / 1000 +
                             10 * args.linger_ms / 1000 + 120)
    after = host_counters(fab)
    if errors:
        raise RuntimeError("%s %s: %s" % (mode, phase[0],
                                          "; ".join(errors)))
    sent = sum(s["sent"] for s in sums)
    got = sum(s["received"] for s in sums)
    first = min((s["first_send_ns"] for s in sums if s["sent"]), default=0)
    last_send = max((s["last_send_ns"] for s in sums), default=0)
    last_recv = max((s["last_recv_ns"] for s in sums), default=0)
    lats = read_latencies([p for p, _ in procs])
    res = {
        "accepted": sent, "delivered": got,
        "failed": sum(s["failed"] for s in sums),
        "delivered_ratio": round(got / sent, 4) if sent else None,
        "send_s": round((last_send - first) / 1e9, 3) if first else 0,
        "drain_s": round((last_recv - last_send) / 1e9, 3)
        if first else 0,
        "throughput_msgs_per_s": round(got * 1e9 / (last_recv - first), 1)
        if first and last_recv > first else 0.0,
        "lat_p50_ms": round(percentile(lats, 50) / 1e6, 3),
        "lat_p99_ms": round(percentile(lats, 99) / 1e6, 3),
        "eagain": sum(s.get("eagain", 0) for s in sums),
        "counters": {k: after[k] - before[k] for k in after
                     if after[k] != before[k]},
    }
    p = subprocess.run(check_cmd(mode, d), capture_output=True, text=True)
    if p.returncode in (0, 1):
        doc = json.loads(p.stdout)
        res["op_check"] = doc["result"]
        res["op_check_failed"] = [k for k, c in doc["checks"].items()
                                  if not c["pass"]]
        acc = doc["checks"].get("accounting", {}).get("stats", {})
        res["accounting"] = {k: acc[k] for k in (
            "lost", "delivered_and_notified", "notified_unsure",
            "delivered_unsure") if k in acc}
    else:
        res["op_check"] = "ERROR: " + p.stderr.strip()
    return res


def run_mode(args, fab, mode, workdir):
    ring = os.path.join(workdir, "corosync")
    routing = None
    try:
        if mode == "corosync":
            routing = UdpRouting(fab)
            routing.add()
            nodes = ["op-h%d:%d:%s" % (h, h, Fabric.host_addr(h))
                     for h in range(1, fab.hosts + 1)]
            sh(RING, "start", ring, *nodes)
        return {ph[0]: run_phase(args, fab, mode, ph, workdir)
                for ph in phases(args)}
    finally:
        try:
            if mode == "corosync":
                sh(RING, "stop", ring, check=False)
        finally:
            if routing:
                routing.remove()


def ratios(res):
    def get(mode, phase, key):
        r = res.get(mode, {}).get(phase)
        return r.get(key) if isinstance(r, dict) else None

    def ratio(a, b, phase, key):
        x, y = get(a, phase, key), get(b, phase, key)
        return round(x / y, 3) if x and y else None

    return {
        "saturated_ordered_over_corosync":
            ratio("ordered", "corosync", "saturated",
                  "throughput_msgs_per_s"),
        "saturated_reliable_over_corosync":
            ratio("reliable", "corosync", "saturated",
                  "throughput_msgs_per_s"),
        "light_p50_ordered_over_corosync":
            ratio("ordered", "corosync", "light", "lat_p50_ms"),
        "light_p50_reliable_over_corosync":
            ratio("reliable", "corosync", "light", "lat_p50_ms"),
    }


def print_report(config, res, rat):
    print("all-to-all broadcast: %d hosts, one process each, %d-byte "
          "messages, %s" % (config["hosts"], config["size"],
                            config["fabric_args"]))
    print("  light: one broadcast per %d us per host, %d each; saturated: "
          "%g s" % (config["light_us"], config["light"],
                    config["seconds"]))
    hdr = ("mode", "phase", "accepted", "delivered", "ratio", "failed",
           "msgs/s", "p50 ms", "p99 ms", "drain s", "op-check")
    print("%-9s %-9s %9s %9s %7s %7s %9s %8s %8s %7s  %s" % hdr)
    for mode in config["modes"]:
        r = res.get(mode, {})
        if "error" in r:
            print("%-9s error: %s" % (mode, r["error"]))
            continue
        for ph in ("light", "saturated"):
            x = r.get(ph)
            if not x:
                continue
            print("%-9s %-9s %9d %9d %7s %7d %9.1f %8.3f %8.3f %7.3f  %s%s"
                  % (mode, ph, x["accepted"], x["delivered"],
                     x["delivered_ratio"], x["failed"],
                     x["throughput_msgs_per_s"], x["lat_p50_ms"],
                     x["lat_p99_ms"], x["drain_s"], x["op_check"],
                     " (%s)" % ",".join(x["op_check_failed"])
                     if x.get("op_check_failed") else ""))
            if x.get("counters"):
                print("%20s counters: %s" % ("", " ".join(
                    "%s %d" % kv for kv in sorted(x["counters"].items()))))
            if x.get("accounting"):
                print("%20s accounting: %s" % ("", " ".join(
                    "%s %d" % kv for kv in x["accounting"].items())))
    print("ratios (1Pipe over Corosync; issue 15's targets: saturated "
          "best effort >= 1.5, reliable >= 1.2, light p50 <= 0.5):")
    for k, v in rat.items():
        print("  %-36s %s" % (k, "n/a" if v is None else v))


def main(args, workdir):
    """op-bench --broadcast; returns the exit status."""
    res, ok = {}, True
    fabric_args = args.bcast_fabric_args
    try:
        if not args.no_fabric_up:
            log("fabric up --hosts %d --tors 1 %s" % (args.hosts,
                                                      fabric_args))
            sh(FABRIC, "up", "--hosts", str(args.hosts), "--tors", "1",
               *fabric_args.split())
        fab = Fabric.from_env()
        for n in range(1, fab.hosts + 1):
            for kv in args.sysctl:
                sh(FABRIC, "exec", "h%d" % n, "sysctl", "-qw", kv)
        for mode in args.bcast_modes:
            log("broadcast: %s" % mode)
            try:
                res[mode] = run_mode(args, fab, mode, workdir)
            except (RuntimeError, OSError, ValueError) as e:
                log(str(e))
                res[mode] = {"error": str(e)}
                ok = False
            time.sleep(1)
    finally:
        if not args.no_fabric_up and not args.keep_fabric:
            sh(FABRIC, "down", check=False)
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    config = {"hosts": args.hosts, "size": args.size,
              "fabric_args": fabric_args, "sysctl": args.sysctl,
              "modes": args.bcast_modes,
              "light": args.bcast_light, "light_us": args.bcast_light_us,
              "seconds": args.bcast_seconds}
    rat = ratios(res)
    if args.json:
        json.dump({"config": config, "broadcast": res,
                                 "ratios": rat}, sys.stdout, indent=2)
        print()
    else:
        print_report(config, res, rat)
    return 0 if ok else 1
