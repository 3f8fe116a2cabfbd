#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The integration test of onepiped (TAP), in userspace only: no VM, no
# module, no network namespace.  A python3 client plays the hosts'
# agents and the switches on the control channel (struct ctl_msg packed
# exactly as ctl_proto.h lays it out) against a real onepiped with a
# small topology:
#
#   h1 h2 h3 -- tor1 -- spine (controller)
#
# File store: hello, a host's uplink reported down by its ToR, FAIL at
# the other hosts with the reported ts, the state saved before it was
# sent, garbage and forged messages counted (and a connection that
# keeps sending them cut), the daemon restarted mid-procedure on the
# same state file (FAIL re-sent on HELLO, no new epoch), RESUME to the
# ToR for port h3, SHOW idle with the failure, refused peers (root
# only); connections that hold a slot for nothing: one that says
# nothing is closed after 2 s (others are served meanwhile), a SHOW-only
# one once its answer is out, a refused HELLO closes its connection, and
# a node's connection replaced from another process is a warning.
# Controller forwarding: a RELAY from one host's client reaches the
# other byte for byte (both ways, up to the largest packet); forged,
# misaddressed, bad-length ones and those to unknown, disconnected or
# failed hosts are dropped and counted; relays save nothing, and a
# destination that does not read loses relays, not its connection.
# Then, if etcd is installed, an etcd takeover: two instances, the active one
# killed mid-procedure, the standby finishes it.
#
# Runs as any user: the socket and state live in a temporary directory
# and the daemon gets --allow-uid with the caller's uid.
#
#   tests/test_onepiped.sh            (after make -C userspace/controller)
#
# Environment: ONEPIPED (the daemon), ONEPIPED_NO_ETCD=1 skips the etcd
# case.  Exit status: 0 pass, 1 fail.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
daemon=${ONEPIPED:-$here/../onepiped}

if [ ! -x "$daemon" ]; then
	echo "1..0 # SKIP build first: make -C $(dirname "$here") onepiped"
	exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 missing"
	exit 0
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/onepiped-test.XXXXXX") || exit 1
# shellcheck disable=SC2317 # (called by the trap)
cleanup()
{
	local f pid

	for f in "$dir"/*.pid; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		kill -KILL "$pid" 2>/dev/null
	done
	rm -rf "$dir"
}
trap cleanup EXIT

cat >"$dir/topology" <<'EOF'
# a rack of three hosts under one ToR, the controller at the spine
host h1 1
host h2 2
host h3 3
switch tor1
switch spine
link h1 tor1
link h2 tor1
link h3 tor1
link tor1 spine
controller spine
EOF

cat >"$dir/t.py" <<'EOF'
import json, os, signal, socket, struct, subprocess, sys, time

FMT = '=IHHIIIIQ32s32s960s'
LEN = struct.calcsize(FMT)
MAGIC, VERSION = 0x4f504331, 1
(HELLO, LINK_DOWN, LINK_UP, UNREACH, FAIL, STATE, DONE, RESUME, SHOW,
 SHOW_REPLY, REJOIN, REJOINED, RELAY) = range(1, 14)
RELAY_MIN, RELAY_MAX = 52, 9216
F_HAS_TS, F_LAST = 1, 2
NAMES = {HELLO: 'hello', LINK_DOWN: 'link-down', LINK_UP: 'link-up',
         UNREACH: 'unreach', FAIL: 'fail', STATE: 'state', DONE: 'done',
         RESUME: 'resume', SHOW: 'show', SHOW_REPLY: 'show-reply',
         REJOIN: 'rejoin', REJOINED: 'rejoined', RELAY: 'relay'}

daemon, tdir, countf, mode = sys.argv[1:5]
topo = os.path.join(tdir, 'topology')
n = int(open(countf).read())
failed = 0


def tap(ok, what):
    global n, failed
    n += 1
    if not ok:
        failed += 1
    print('%s %d - %s' % ('ok' if ok else 'not ok', n, what), flush=True)
    open(countf, 'w').write(str(n))
    return ok


def skip(what):
    global n
    n += 1
    print('ok %d # SKIP %s' % (n, what), flush=True)
    open(countf, 'w').write(str(n))


def diag(s):
    for line in str(s).splitlines():
        print('# ' + line, flush=True)


def pack(mtype, node='', peer='', epoch=0, host=0, ts=None, flags=0,
         magic=MAGIC, version=VERSION, pad=0, text=b''):
    if ts is not None:
        flags |= F_HAS_TS
    return struct.pack(FMT, magic, version, mtype, flags, epoch, host, pad,
                       ts or 0, node.encode(), peer.encode(), text)


def unpack(b):
    (magic, version, mtype, flags, epoch, host, pad, ts, node, peer,
     text) = struct.unpack(FMT, b)
    return dict(magic=magic, version=version, type=mtype, flags=flags,
                epoch=epoch, host=host, ts=ts,
                node=node.rstrip(b'\0').decode(),
                peer=peer.rstrip(b'\0').decode(), text=text)


def fmt(m):
    return '%s epoch %d host %d peer %s ts %d' % (
        NAMES.get(m['type'], m['type']), m['epoch'], m['host'], m['peer'],
        m['ts'])


class Client:
    """One connection; the paths are tried in turn, like an agent's."""

    def __init__(self, paths, node='', host=0, hello=True, wait=8.0):
        self.node, self.host = node, host
        deadline = time.time() + wait
        while True:
            for p in paths:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                try:
                    s.connect(p)
                    self.s, self.path = s, p
                    break
                except OSError:
                    s.close()
            else:
                if time.time() > deadline:
                    raise RuntimeError('cannot connect to %s' % paths)
                time.sleep(0.05)
                continue
            break
        if hello:
            self.send(HELLO, host=host)

    def send(self, mtype, **kw):
        kw.setdefault('node', self.node)
        self.s.send(pack(mtype, **kw))

    def raw(self, b):
        self.s.send(b)

    def recv(self, timeout=3.0):
        """A message, None on timeout, 'eof' when the daemon closed.

        A RELAY comes whole in 'raw' (the datagram as received).
        """
        self.s.settimeout(timeout)
        try:
            b = self.s.recv(LEN + RELAY_MAX + 1)
        except socket.timeout:
            return None
        except OSError:
            return 'eof'
        if not b:
            return 'eof'
        if len(b) > LEN and unpack(b[:LEN])['type'] == RELAY:
            m = unpack(b[:LEN])
            m['raw'] = b
            return m
        if len(b) != LEN:
            return {'type': -1, 'len': len(b)}
        return unpack(b)

    def until(self, pred, timeout=3.0):
        """Messages up to the first matching one (None if it never came)."""
        seen = []
        deadline = time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                return None, seen
            m = self.recv(left)
            if m is None or m == 'eof':
                return None, seen
            seen.append(m)
            if pred(m):
                return m, seen

    def quiet(self, timeout=0.3):
        """Everything that arrives within @timeout."""
        seen = []
        while True:
            m = self.recv(timeout)
            if m is None or m == 'eof':
                return seen
            seen.append(m)

    def show(self):
        self.send(SHOW, node='')
        text = b''
        while True:
            m = self.recv()
            if not isinstance(m, dict):
                raise RuntimeError('no SHOW_REPLY: %r' % (m,))
            if m['type'] != SHOW_REPLY:
                continue    # something sent before: not what we want

            text += m['text'][:m['host']]
            if m['flags'] & F_LAST:
                return json.loads(text.decode())

    def close(self):
        self.s.close()


def is_type(t, **kw):
    return lambda m: m['type'] == t and all(m[k] == v for k, v in kw.items())


daemons = []


class Daemon:
    def __init__(self, name, args):
        daemons.append(self)
        self.name = name
        self.log = os.path.join(tdir, name + '.log')
        self.p = subprocess.Popen([daemon, '--topology', topo,
                                   '--allow-uid', str(os.getuid()),
                                   '--settle-ms', '300',
                                   '--done-timeout-ms', '5000',
                                   '--log', self.log, '-v'] + args)
        open(os.path.join(tdir, name + '.pid'), 'w').write(str(self.p.pid))

    def stop(self, sig=signal.SIGTERM):
        self.p.send_signal(sig)
        try:
            return self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return self.p.wait()

    def alive(self):
        return self.p.poll() is None

    def dump(self):
        try:
            diag(''.join(open(self.log).readlines()[-30:]))
        except OSError:
            pass


def connect_all(paths, names=('h1', 'h2', 'h3', 'tor1', 'spine'), wait=8.0):
    cl = {}
    for name in names:
        host = int(name[1:]) if name[0] == 'h' else 0
        cl[name] = Client(paths, name, host, wait=wait)
    return cl


def fail_ok(m, epoch, host, ts):
    return (m is not None and m['type'] == FAIL and m['epoch'] == epoch
            and m['host'] == host and m['ts'] == ts)


def file_case():
    sock = os.path.join(tdir, 'run', 'onepipe', 'd.sock')
    state = os.path.join(tdir, 'state')
    d = Daemon('file', ['--socket', sock, '--state', state])
    try:
        Client([sock], hello=False).close()
    except RuntimeError:
        pass
    st = os.stat(sock) if os.path.exists(sock) else None
    tap(st is not None and (st.st_mode & 0o777) == 0o600,
        'the socket is created 0600 (with its directory)')
    tap(os.path.exists(state) and 'epoch 0' in open(state).read(),
        'the initial state is saved')

    cl = connect_all([sock])
    ok = True
    for name, c in cl.items():
        m, seen = c.until(is_type(STATE), 3)
        if m is None or m['epoch'] != 0:
            ok = False
            diag('%s: %s' % (name, [fmt(x) for x in seen]))
    tap(ok, 'every client gets STATE epoch 0 after HELLO')

    # tor1's port h3 falls silent: the ToR reports it with its commit
    # register; that is the only boundary link, so the controller
    # decides at once.
    cl['tor1'].send(LINK_DOWN, peer='h3', ts=123456789)
    got = {}
    for name in ('h1', 'h2'):
        m, seen = cl[name].until(is_type(FAIL), 3)
        got[name] = m
        if not fail_ok(m, 1, 3, 123456789):
            diag('%s: %s' % (name, [fmt(x) for x in seen]))
    tap(all(fail_ok(m, 1, 3, 123456789) for m in got.values()),
        'FAIL epoch 1 host 3 ts 123456789 reaches h1 and h2')
    tap(all(cl[x].until(is_type(STATE, epoch=1), 2)[0] for x in ('h1', 'h2')),
        'then STATE epoch 1')
    saved = open(state).read()
    tap('epoch 1' in saved and 'fail h3 1 123456789' in saved,
        'the decision was in the state file when FAIL arrived')
    tap(not [m for m in cl['h3'].quiet(0.2) if m['type'] == FAIL] and
        not [m for m in cl['tor1'].quiet(0.2) if m['type'] == FAIL],
        'no FAIL to the failed host or to switches')

    # Garbage on a connection of its own: each is counted, none is
    # answered, the connection survives up to the limit.
    g = Client([sock], hello=False)
    good = pack(LINK_DOWN, node='h1', peer='tor1')
    bad = [
        b'short',
        good + b'x',
        pack(LINK_DOWN, node='h1', peer='tor1', magic=0xdeadbeef),
        pack(LINK_DOWN, node='h1', peer='tor1', version=7),
        pack(99, node='h1'),
        pack(LINK_DOWN, node='h1', peer='tor1', pad=1),
        pack(LINK_DOWN, node='h1/x', peer='tor1'),
    ]
    for b in bad:
        g.raw(b)
    # (SHOW from another connection: g would get one answer, then EOF.)
    v = Client([sock], hello=False).show()
    tap(v['daemon']['bad'] == len(bad) and
        v['controller']['counters']['bad'] == len(bad),
        'malformed messages are counted (%d)' % v['daemon']['bad'])
    tap(v['controller']['epoch'] == 1 and v['controller']['phase'] ==
        'broadcast', 'and change nothing')
    g.raw(good)     # a report before HELLO: the 8th bad message
    tap(g.recv(2) == 'eof', 'a connection that sends 8 bad messages is cut')
    # A client may speak only for the node it said HELLO as.
    cl['h1'].send(LINK_DOWN, node='tor1', peer='h2', ts=5)
    cl['h1'].send(FAIL, epoch=9, host=2, ts=1)
    s = Client([sock], hello=False)
    v = s.show()
    tap(v['daemon']['bad'] == len(bad) + 3 and v['controller']['epoch'] == 1
        and not [n for n in v['controller']['nodes']
                 if n['name'] == 'h2' and n['state'] != 'correct'],
        'forged and wrong-way messages are counted, not acted on')
    tap(d.alive(), 'the daemon survived')

    # h1 answers; h2 does not yet.  Restart the daemon on the same state.
    cl['h1'].send(DONE, epoch=1, host=3)
    time.sleep(0.2)
    rc = d.stop()
    tap(rc == 0 and not os.path.exists(sock),
        'SIGTERM: clean exit, socket removed (status %s)' % rc)
    for c in cl.values():
        c.close()
    s.close()
    d = Daemon('file2', ['--socket', sock, '--state', state])
    cl = connect_all([sock])
    ok = True
    for name in ('h1', 'h2'):
        m, seen = cl[name].until(is_type(STATE), 3)
        fails = [x for x in seen if x['type'] == FAIL]
        if (m is None or m['epoch'] != 1 or len(fails) != 1 or
                not fail_ok(fails[0], 1, 3, 123456789)):
            ok = False
            diag('%s: %s' % (name, [fmt(x) for x in seen]))
    tap(ok, 'after a restart HELLO brings the same FAIL, epoch still 1')
    for name in ('h1', 'h2'):
        cl[name].send(DONE, epoch=1, host=3)
    m, seen = cl['tor1'].until(is_type(RESUME), 3)
    tap(m is not None and m['epoch'] == 1 and m['peer'] == 'h3',
        'all DONEs in: RESUME epoch 1 port h3 to tor1')
    tap(not [x for x in cl['spine'].quiet(0.3) if x['type'] == RESUME],
        'no RESUME to spine (no port towards h3)')
    cl['tor1'].send(DONE, epoch=1, peer='h3')
    time.sleep(0.2)
    v = cl['spine'].show()
    c = v['controller']
    tap(c['phase'] == 'idle' and c['epoch'] == 1 and
        [(f['node'], f['ts'], f['epoch']) for f in c['failures']] ==
        [('h3', 123456789, 1)], 'SHOW: idle, epoch 1, h3 failed at its ts')
    tap(v['daemon']['role'] == 'active' and v['daemon']['store'] == 'file'
        and v['daemon']['nodes'] == 5, 'SHOW: daemon counters')

    # A HELLO on a second connection replaces the first.
    h1b = Client([sock], 'h1', 1)
    m, _ = h1b.until(is_type(STATE), 2)
    tap(m is not None and cl['h1'].recv(2) == 'eof',
        'a second connection of h1 replaces the first')

    # An unprivileged peer (root only: chmod the socket so that it can
    # reach the SO_PEERCRED check at all).
    if os.getuid() == 0:
        for p in (tdir, os.path.dirname(os.path.dirname(sock))):
            os.chmod(p, 0o711)
        os.chmod(sock, 0o666)
        pid = os.fork()
        if pid == 0:
            try:
                os.setgid(65534)
                os.setuid(65534)
                c = Client([sock], hello=False, wait=1)
                os._exit(0 if c.recv(2) == 'eof' else 1)
            except Exception:
                os._exit(2)
        _, status = os.waitpid(pid, 0)
        v = cl['spine'].show()
        tap(os.WEXITSTATUS(status) == 0 and v['daemon']['refused'] == 1,
            'a peer that is not root is refused and counted')
        os.chmod(sock, 0o600)
        os.chmod(tdir, 0o700)
    else:
        skip('refused peers: not root')
    idle_slots_case(d, sock, cl)
    if not d.alive():
        d.dump()
    rc = d.stop()
    tap(rc == 0, 'clean exit')
    if failed:
        d.dump()
        return
    for c in cl.values():
        c.close()
    save_failure_case()
    relay_case()


def idle_slots_case(d, sock, cl):
    """Connections may not hold one of the daemon's slots for nothing."""
    t0 = time.time()
    q = Client([sock], hello=False)
    v = cl['spine'].show()
    tap(v['daemon']['silent'] == 0, 'a silent connection: others are served')
    m = q.recv(4)
    took = time.time() - t0
    tap(m == 'eof' and 1.5 <= took <= 3.5,
        'a connection that says nothing is closed after 2 s (%.2f s, %r)' %
        (took, m if m != 'eof' else 'eof'))
    s = Client([sock], hello=False)
    s.show()
    tap(s.recv(2) == 'eof', 'a SHOW-only connection is closed after its '
        'answer')
    s.close()
    bad_hellos = [Client([sock], 'nosuch', 0), Client([sock], 'h2', 7)]
    tap(all(c.recv(1) == 'eof' for c in bad_hellos),
        'a refused HELLO (unknown node, wrong host id) closes the '
        'connection')
    v = cl['spine'].show()
    tap(v['daemon']['silent'] == 1 and v['daemon']['hello_refused'] == 2,
        'counted: silent %d, hello_refused %d' %
        (v['daemon']['silent'], v['daemon']['hello_refused']))
    # h2's connection is replaced by another process's: a warning.
    pid = os.fork()
    if pid == 0:
        try:
            c = Client([sock], 'h2', 2, wait=2)
            m, _ = c.until(is_type(STATE), 2)
            os._exit(0 if m else 1)
        except Exception:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    time.sleep(0.1)
    log = open(d.log).read()
    tap(os.WEXITSTATUS(status) == 0 and cl['h2'].recv(2) == 'eof' and
        'h2: a connection from pid %d replaces the one from pid %d' %
        (pid, os.getpid()) in log,
        'h2 replaced from another process: logged with both pids')


def packet(src, dst, n=RELAY_MIN, seed=0):
    """A 1Pipe packet of @n bytes: the header (big-endian, src_host at
    byte 4, dst_host at 8), then a recognisable payload."""
    hdr = struct.pack('>BBBBII', 1, 1, 4, 0, src, dst)
    hdr += bytes((seed + i) % 251 for i in range(RELAY_MIN - len(hdr)))
    return hdr + bytes((seed * 7 + i) % 253 for i in range(n - RELAY_MIN))


def relay_dgram(node, dst, pkt):
    return pack(RELAY, node=node, host=dst) + pkt


def relays_in(c, timeout=0.3):
    return [m for m in c.quiet(timeout) if m['type'] == RELAY]


def relay_case():
    """Controller forwarding: RELAY datagrams passed on unchanged."""
    sock = os.path.join(tdir, 'relay.sock')
    state = os.path.join(tdir, 'relay.state')
    d = Daemon('relay', ['--socket', sock, '--state', state])
    cl = connect_all([sock])
    for c in cl.values():
        c.until(is_type(STATE), 3)
    v0 = cl['spine'].show()

    # h1 -> h3, a small and the largest packet; h3 -> h1, an "ACK"
    sent = [relay_dgram('h1', 3, packet(1, 3, 200, 1)),
            relay_dgram('h1', 3, packet(1, 3, RELAY_MAX, 2))]
    for b in sent:
        cl['h1'].raw(b)
    got = relays_in(cl['h3'], 0.5)
    tap([m['raw'] for m in got] == sent,
        'relay: h1 -> h3 arrives byte for byte (%s bytes)' %
        [len(m['raw']) for m in got])
    back = relay_dgram('h3', 1, packet(3, 1, RELAY_MIN, 3))
    cl['h3'].raw(back)
    got = relays_in(cl['h1'])
    tap([m['raw'] for m in got] == [back] and got[0]['node'] == 'h3' and
        got[0]['host'] == 1, 'relay: h3 -> h1 too (a bare header)')
    tap(not relays_in(cl['h2'], 0.1) and not relays_in(cl['tor1'], 0.1),
        'relay: nobody else gets them')
    v = cl['spine'].show()
    tap(v['daemon']['relays'] == 3 and
        v['controller']['counters']['relayed'] == 3 and
        v['daemon']['saves'] == v0['daemon']['saves'],
        'relay: counted (relays %d), nothing saved (saves %d)' %
        (v['daemon']['relays'], v['daemon']['saves']))

    # dropped by the logic: forged, unknown, not connected
    cl['h1'].raw(relay_dgram('h1', 3, packet(2, 3)))      # src not h1's
    cl['h1'].raw(relay_dgram('h1', 9, packet(1, 9)))      # no host 9
    cl['h1'].raw(relay_dgram('h1', 1, packet(1, 1)))      # itself
    cl['tor1'].raw(relay_dgram('tor1', 3, packet(0, 3)))  # a switch
    cl['h2'].close()
    time.sleep(0.1)
    cl['h1'].raw(relay_dgram('h1', 2, packet(1, 2)))      # h2 gone
    tap(not relays_in(cl['h3'], 0.2), 'relay: forged one not passed on')
    v = cl['spine'].show()
    tap(v['controller']['counters']['relay_dropped'] == 5 and
        v['daemon']['relays'] == 3 and v['daemon']['bad'] == 0,
        'relay: forged, to unknown, to itself, from a switch, to a '
        'disconnected host: dropped and counted (%d)' %
        v['controller']['counters']['relay_dropped'])
    log = open(d.log).read()
    tap('relay dropped: from h1 (host 1) with source host 2 (forged)' in log,
        'relay: the first drop is logged')

    # malformed: counted as bad, never passed on
    g = Client([sock], 'h1', 1)
    g.until(is_type(STATE), 2)
    cl['h1'].recv(1)    # replaced by g
    bad = [
        relay_dgram('h1', 3, packet(1, 3)[:RELAY_MIN - 1]),   # short
        relay_dgram('h1', 3, packet(1, 3, RELAY_MAX + 1)),    # long
        relay_dgram('h1', 3, packet(1, 2)),   # header for another host
        relay_dgram('h3', 1, packet(3, 1)),   # in another node's name
        pack(STATE, node='h1') + b'x' * 60,   # only RELAY may be longer
    ]
    for b in bad:
        g.raw(b)
    Client([sock], hello=False).raw(relay_dgram('h1', 3, packet(1, 3)))
    tap(not relays_in(cl['h3'], 0.3), 'relay: malformed ones not passed on')
    v = cl['spine'].show()
    tap(v['daemon']['bad'] == len(bad) + 1 and
        v['controller']['counters']['bad'] == len(bad) + 1 and
        v['daemon']['relays'] == 3,
        'relay: bad length, header mismatch, forged name, before HELLO: '
        'bad (%d)' % v['daemon']['bad'])
    cl['h1'] = g

    # a destination that does not read: relays dropped, no cut
    cl['h2'] = Client([sock], 'h2', 2)
    cl['h2'].until(is_type(STATE), 2)
    for i in range(300):
        cl['h1'].raw(relay_dgram('h1', 2, packet(1, 2, RELAY_MAX, i)))
    v = cl['spine'].show()
    tap(v['daemon']['relay_unsent'] > 0 and v['daemon']['cut_slow'] == 0,
        'relay: a destination that does not read loses relays (%d), '
        'not its connection' % v['daemon']['relay_unsent'])
    got = relays_in(cl['h2'], 0.5)
    ok = len(got) > 0 and all(
        x['raw'] == relay_dgram('h1', 2, packet(1, 2, RELAY_MAX, i))
        for i, x in enumerate(got))
    tap(ok and len(got) + v['daemon']['relay_unsent'] == 300 and
        len(got) == v['daemon']['relays'] - 3,
        'relay: h2 then reads the first %d relays, in order' % len(got))

    # a failed destination (and a failed sender)
    cl['tor1'].send(LINK_DOWN, peer='h3', ts=5150)
    m, _ = cl['h1'].until(is_type(FAIL), 3)
    before = open(state).read()
    d0 = cl['spine'].show()['controller']['counters']['relay_dropped']
    cl['h1'].raw(relay_dgram('h1', 3, packet(1, 3)))
    cl['h3'].raw(relay_dgram('h3', 2, packet(3, 2)))
    tap(fail_ok(m, 1, 3, 5150) and not relays_in(cl['h3'], 0.2) and
        not relays_in(cl['h2'], 0.1), 'relay: none to or from failed h3')
    v = cl['spine'].show()
    tap(v['controller']['counters']['relay_dropped'] == d0 + 2 and
        open(state).read() == before,
        'relay: dropped and counted, the state untouched')
    rc = d.stop()
    tap(rc == 0 and d.alive() is False, 'relay: clean exit')
    if failed:
        d.dump()


def save_failure_case():
    """A decision whose save fails is never sent."""
    sock = os.path.join(tdir, 'sf.sock')
    sdir = os.path.join(tdir, 'sf')
    os.mkdir(sdir)
    d = Daemon('savefail', ['--socket', sock, '--state',
                            os.path.join(sdir, 'state')])
    cl = connect_all([sock])
    for c in cl.values():
        c.until(is_type(STATE), 2)
    # The state's directory goes away: the next save fails.
    os.rename(sdir, sdir + '.away')
    cl['tor1'].send(LINK_DOWN, peer='h2', ts=99)
    m, seen = cl['h1'].until(is_type(FAIL), 1)
    tap(m is None and seen == [] and cl['h1'].recv(1) == 'eof',
        'a decision that could not be saved is not sent; clients are cut')
    v, ok = None, False
    if d.alive():
        os.rename(sdir + '.away', sdir)
        cl = connect_all([sock])
        ok = True
        for name in ('h1', 'h3'):
            m, seen = cl[name].until(is_type(STATE), 3)
            ok = ok and m is not None and m['epoch'] == 0 and \
                not [x for x in seen if x['type'] == FAIL]
        v = cl['spine'].show()
    tap(ok and v['daemon']['save_errors'] >= 1 and
        v['daemon']['activations'] == 2 and v['controller']['epoch'] == 0,
        'it steps down and comes back from the last saved state')
    # The agents re-report on reconnection; the decision is made now.
    cl['tor1'].send(LINK_DOWN, peer='h2', ts=99)
    m, _ = cl['h1'].until(is_type(FAIL), 2)
    tap(fail_ok(m, 1, 2, 99), 'the re-sent report is decided: epoch 1')
    rc = d.stop()
    tap(rc == 0, 'clean exit')
    if failed:
        d.dump()


def etcd_case(endpoints):
    a_sock = os.path.join(tdir, 'a.sock')
    b_sock = os.path.join(tdir, 'b.sock')
    paths = [a_sock, b_sock]
    common = ['--etcd', endpoints, '--etcd-prefix', '/onepipe-test-%d' %
              os.getpid(), '--lease-s', '2']
    a = Daemon('etcd-a', common + ['--id', 'a', '--socket', a_sock])
    Client([a_sock], hello=False).close()
    b = Daemon('etcd-b', common + ['--id', 'b', '--socket', b_sock])
    time.sleep(1.5)
    tap(a.alive() and b.alive() and os.path.exists(a_sock) and
        not os.path.exists(b_sock),
        'etcd: the first instance is active, the standby does not listen')
    cl = connect_all(paths)
    tap(all(c.path == a_sock for c in cl.values()),
        'etcd: clients reach the active instance')
    for c in cl.values():
        c.quiet(0.1)
    cl['tor1'].send(LINK_DOWN, peer='h2', ts=4242)
    ok = True
    for name in ('h1', 'h3'):
        m, seen = cl[name].until(is_type(FAIL), 3)
        ok = ok and fail_ok(m, 1, 2, 4242)
    tap(ok, 'etcd: FAIL epoch 1 host 2 ts 4242 reaches h1 and h3')
    cl['h1'].send(DONE, epoch=1, host=2)
    time.sleep(0.2)
    # The active instance dies without resigning.
    a.stop(signal.SIGKILL)
    t0 = time.time()
    for c in cl.values():
        c.close()
    cl = connect_all(paths, wait=15)
    took = time.time() - t0
    tap(all(c.path == b_sock for c in cl.values()),
        'etcd: the standby took over (%.1f s)' % took)
    ok = True
    for name in ('h1', 'h3'):
        m, seen = cl[name].until(is_type(STATE), 3)
        fails = [x for x in seen if x['type'] == FAIL]
        if (m is None or m['epoch'] != 1 or len(fails) != 1 or
                not fail_ok(fails[0], 1, 2, 4242)):
            ok = False
            diag('%s: %s' % (name, [fmt(x) for x in seen]))
    tap(ok, 'etcd: the successor re-sends the FAIL, epoch still 1')
    for name in ('h1', 'h3'):
        cl[name].send(DONE, epoch=1, host=2)
    m, _ = cl['tor1'].until(is_type(RESUME), 3)
    tap(m is not None and m['epoch'] == 1 and m['peer'] == 'h2',
        'etcd: the successor sends RESUME epoch 1 port h2')
    cl['tor1'].send(DONE, epoch=1, peer='h2')
    time.sleep(0.2)
    v = cl['spine'].show()
    tap(v['daemon']['role'] == 'active' and v['daemon']['store'] == 'etcd'
        and v['controller']['phase'] == 'idle' and
        v['controller']['epoch'] == 1,
        'etcd: SHOW on the successor: active, idle, epoch 1')

    # A paused active instance is deposed meanwhile: when it wakes up it
    # must not act on what it receives (its saves are fenced).
    a2 = Daemon('etcd-a2', common + ['--id', 'a2', '--socket', a_sock])
    time.sleep(1)
    for c in cl.values():
        c.quiet(0.1)
    b.p.send_signal(signal.SIGSTOP)
    try:
        Client([a_sock], hello=False, wait=15).close()
        took_over = True
    except RuntimeError:
        took_over = False
    tap(took_over, 'etcd: a new instance takes over from a paused one')
    cl['tor1'].send(LINK_DOWN, peer='h1', ts=777)
    b.p.send_signal(signal.SIGCONT)
    m, seen = cl['h3'].until(is_type(FAIL), 2)
    tap(m is None, 'etcd: the deposed instance sends no decision')
    deadline = time.time() + 5
    while (time.time() < deadline and b.alive() and
           os.path.exists(b_sock)):
        time.sleep(0.1)
    tap(not b.alive() and b.p.returncode == 3 or
        b.alive() and not os.path.exists(b_sock),
        'etcd: it stops acting (status %s, socket %s)' %
        (b.p.poll(), 'gone' if not os.path.exists(b_sock) else 'there'))
    c = Client([a_sock], hello=False)
    v = c.show()
    tap(v['daemon']['role'] == 'active' and v['controller']['epoch'] == 1
        and v['controller']['phase'] == 'idle',
        'etcd: the successor holds epoch 1, nothing decided behind it')
    c.close()
    rc = a2.stop()
    tap(rc == 0, 'etcd: clean exit')
    if b.alive():
        b.stop()
    if failed or os.environ.get('ONEPIPED_TEST_LOGS'):
        a.dump()
        b.dump()
        a2.dump()


try:
    if mode == 'file':
        file_case()
    else:
        etcd_case(sys.argv[5])
except Exception as e:
    tap(False, 'exception: %r' % (e,))
    for f in sorted(os.listdir(tdir)):
        if f.endswith('.log'):
            diag('== ' + f)
            diag(''.join(open(os.path.join(tdir, f)).readlines()[-20:]))
finally:
    for d in daemons:
        if d.alive():
            d.stop(signal.SIGKILL)
sys.exit(1 if failed else 0)
EOF

echo 0 >"$dir/count"
rc=0
python3 "$dir/t.py" "$daemon" "$dir" "$dir/count" file || rc=1
if [ "${ONEPIPED_NO_ETCD:-0}" = 1 ]; then
	echo "# etcd case skipped (ONEPIPED_NO_ETCD=1)"
elif ! command -v etcd >/dev/null 2>&1; then
	echo "# etcd case skipped: etcd-server not installed"
else
	"$here/etcd_cluster.sh" python3 "$dir/t.py" "$daemon" "$dir" \
		"$dir/count" etcd || rc=1
fi
echo "1..$(cat "$dir/count")"
exit $rc
