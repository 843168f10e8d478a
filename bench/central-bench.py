#!/usr/bin/python3
"""hrmd's sync into a central PostgreSQL against what a user would otherwise write, on
PostgreSQL servers of the benchmark's own (Tests/pysupport/postgres.py), release hrmd/hrmctl.

    make bench-central                       # = /usr/bin/python3 bench/central-bench.py --json .build/bench-central.json
    /usr/bin/python3 bench/central-bench.py --parts live,catchup --seconds 30

Four parts (--parts, default all of them):

live     Ten gateways (hrmd with [sync], a role each IN ROLE hrmd_gateway), 20 mock straps at 4 Hz
         each, into one PostgreSQL; beside them, in the same run, the same ten hrmd without [sync]
         (same straps, same seeds) and, on --peers of those, the peer: `hrmctl watch --store FILE
         --output json` (a store file polled every 0.5 s, its default) piped into a Python script
         that INSERTs each sample into a plain table with psycopg2 (autocommit), into a second
         PostgreSQL of its own so that each server's CPU is its side's alone. After a warm-up,
         over --seconds: sync lag p50/p99/max, a sample's start time to the moment it is read
         centrally — for hrmd an observer LISTENs on hrmd_changes and on each notification reads
         the gateway's new samples (anchors past the last seen), for the peer an observer polls
         the plain table every 50 ms (it sends no notification); CPU from /proc/PID/stat
         (utime+stime): the sync's per gateway = hrmd with [sync] minus hrmd without, as % of a
         core; the peer's = its hrmctl watch + its Python; each PostgreSQL's = postmaster and
         children (and children already reaped).
catchup  One gateway offline for an hour: 20 straps × 4 Hz × 1 h (288,000 samples) written as a
         trace (docs/recordings.md) and `hrmctl replay`ed into its store, then hrmd starts with
         [sync] and the same 20 straps live: the time until the central cursor covers the local
         anchor at start, hrmd's `sync: caught up` line, and the live samples' lag meanwhile.
size     A gym's month: 20 straps, 2 h a day at 1 Hz for --days days (30: 4.32M samples), replayed
         into a store and synced by hrmd; bytes per sample of hrmd.chunk + hrmd.synced_sample with
         their indexes and TOAST (pg_total_relation_size after VACUUM ANALYZE) against a plain
         table hr (device int, t timestamptz, bpm double precision) with a btree on (device, t),
         COPYed with the same samples.
stats    `hrmctl stats --by 1d --store postgresql://…` (an analyst role) over that month against
         psql -c "SELECT date_trunc('day', t), count(*), avg(bpm), min(bpm), max(bpm) FROM hr
         GROUP BY 1 ORDER BY 1": best of 5 wall times each, process start included for both.

HRMD_BIN_DIR chooses the binaries (default .build/release). Everything runs under TZ=UTC.
"""

import argparse
import datetime
import json
import math
import multiprocessing
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "Tests", "pysupport"))

import postgres  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
BIN = os.environ.get("HRMD_BIN_DIR", os.path.join(REPO, ".build", "release"))
HRMD, HRMCTL = os.path.join(BIN, "hrmd"), os.path.join(BIN, "hrmctl")
os.environ["TZ"] = "UTC"

# The peer, as its users write one: each sample of `hrmctl watch --output json` INSERTed.
PEER = r'''
import datetime, json, sys
import psycopg2

connection = psycopg2.connect(sys.argv[1])
connection.autocommit = True
cursor = connection.cursor()
gateway = sys.argv[2]
for line in sys.stdin:
    sample = json.loads(line)
    start = datetime.datetime.strptime(sample["start"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    cursor.execute("INSERT INTO hr_live (gateway, device, t, bpm) VALUES (%s, %s, %s, %s)",
                   (gateway, sample["device"]["identifier"], start, sample["value"]))
'''


# -- processes and CPU ----------------------------------------------------------------------------

def stat_fields(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid):
    """User + system CPU of a process so far."""
    fields = stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / TICKS


def server_cpu_seconds(pg):
    """A PostgreSQL's CPU: the postmaster's own and its reaped children's, and its live children's."""
    pid = pg.postmaster_pid()
    fields = stat_fields(pid)
    total = sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICKS
    for child in postgres._children(pid):
        try:
            total += cpu_seconds(child)
        except OSError:
            pass
    return total


def percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, int(round(fraction * (len(ordered) - 1)))))]


def lag_summary(lags):
    return {"samples": len(lags), "p50_s": round(percentile(lags, 0.5), 3), "p99_s": round(percentile(lags, 0.99), 3),
            "max_s": round(max(lags), 3) if lags else None}


def run(argv, **kwargs):
    out = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if out.returncode != 0:
        raise RuntimeError("%s failed (%d): %s%s" % (" ".join(argv[:3]), out.returncode, out.stdout[-2000:], out.stderr[-2000:]))
    return out.stdout


def new_store(work, name, sync=True):
    path = os.path.join(work, name + ".sqlite")
    run([HRMCTL, "auth", "grant", "--store", path, "hrmd", "heart-rate"])
    if sync:
        run([HRMCTL, "auth", "grant", "--store", path, "hrmd/sync", "heart-rate", "--read"])
    return path


def write_config(work, name, url=None, gateway=None, batch=None):
    path = os.path.join(work, name + ".conf")
    with open(path, "w") as f:
        f.write("[hrmd]\nlog-level = info\n")
        if url:
            f.write("[sync]\nurl = %s\ngateway = %s\n" % (url, gateway))
            if batch:
                f.write("batch = %d\n" % batch)
    return path


def straps(count, hz, seed):
    argv = []
    for index in range(count):
        argv += ["--sensor", "mock:id=strap-%02d-%02d,hz=%d,seed=%d" % (seed, index, hz, seed * 100 + index + 1)]
    return argv


class Daemon:
    """hrmd with its standard error collected by a thread (lines with the time they came)."""

    def __init__(self, argv, log_path):
        self.log = open(log_path, "w")
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.process.stderr:
            self.lines.append((time.time(), line))
            self.log.write(line)
            self.log.flush()

    @property
    def pid(self):
        return self.process.pid

    def find(self, pattern):
        for stamp, line in self.lines:
            match = re.search(pattern, line)
            if match:
                return stamp, match
        return None

    def wait_for(self, pattern, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.find(pattern)
            if found:
                return found
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("hrmd: no %r in %d s; its log:\n%s" % (pattern, timeout, "".join(l for _, l in self.lines[-30:])))

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.thread.join(timeout=10)
        self.log.close()


# -- the central side ---------------------------------------------------------------------------

GATEWAY_PASSWORD = "unused"    # local (socket) connections are trusted; roles need one all the same


def empty_trace(work):
    """A trace with no event: hrmd's one sensor when it only syncs what its store holds."""
    path = os.path.join(work, "empty.trace.jsonl")
    with open(path, "w") as f:
        f.write('{"format":"hrmd-trace","version":1,"recorder":"central-bench"}\n')
    return path


def central_server(work, gateways):
    """A PostgreSQL with database hrmd owned by hrmd_owner, gateway roles and an analyst; the
    schema made by the owner's first connection, as a deployment would."""
    pg = postgres.TemporaryPostgres(prefix="hrmd-central-bench-", options={"max_connections": "100"})
    pg.psql("CREATE ROLE hrmd_gateway NOLOGIN; CREATE ROLE hrmd_analyst NOLOGIN; CREATE ROLE hrmd_owner LOGIN;"
            "CREATE ROLE reader LOGIN IN ROLE hrmd_analyst;")
    for name in gateways:
        pg.psql('CREATE ROLE "%s" LOGIN IN ROLE hrmd_gateway' % name)
    pg.create_database("hrmd", owner="hrmd_owner")
    setup_name = "schema-setup-%d" % pg.port
    store = new_store(work, setup_name, sync=False)
    setup = Daemon([HRMD, "--store", store, "--config", write_config(work, setup_name, pg.uri("hrmd_owner", database="hrmd"), "setup"),
                    "--sensor", "replay:" + empty_trace(work)], os.path.join(work, setup_name + ".log"))
    try:
        setup.wait_for(r"sync: connected", 60)
    finally:
        setup.stop()
    if pg.psql("SELECT count(*) FROM hrmd.migration", database="hrmd") == "0":
        raise RuntimeError("the owner's connection made no schema")
    return pg


def observe_central(uri, window, results, ready, stop):
    """LISTEN hrmd_changes; on each notification read the gateway's samples past the last anchor
    seen, with the clock time after the read. (time read, lag) of samples whose start is in
    `window`, by gateway; ends after the window (plus 5 s) or when `stop` is set."""
    import psycopg2
    import psycopg2.extensions
    connection = psycopg2.connect(uri)
    connection.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
    cursor = connection.cursor()
    cursor.execute("LISTEN hrmd_changes")
    cursor.execute("SELECT g.name, coalesce(max(c.last_anchor), 0) FROM hrmd.gateway g "
                   "LEFT JOIN hrmd.chunk c ON c.gateway_id = g.id GROUP BY g.name")
    seen = dict(cursor.fetchall())
    lags = {}
    ready.set()
    start, end = window
    while time.time() < end + 5 and not stop.is_set():
        if not select.select([connection], [], [], 0.5)[0]:
            continue
        connection.poll()
        names = set()
        while connection.notifies:
            names.add(connection.notifies.pop(0).payload)
        for name in sorted(names):
            last = seen.get(name, 0)
            cursor.execute("SELECT u.s, u.a FROM hrmd.chunk c JOIN hrmd.gateway g ON g.id = c.gateway_id, "
                           "unnest(c.starts, c.anchors) AS u(s, a) WHERE g.name = %s AND c.last_anchor > %s AND u.a > %s",
                           (name, last, last))
            rows = cursor.fetchall()
            now = time.time()
            if rows:
                seen[name] = max(a for _, a in rows)
            bucket = lags.setdefault(name, [])
            for s, _ in rows:
                t = s / 1e6
                if start <= t < end:
                    bucket.append((now, now - t))
    results.put(lags)


def observe_peer(uri, window, results, ready, interval=0.05):
    """Polls the peer's table every `interval` for rows past the last id seen; (time read, lag)
    of rows whose t is in `window`, by gateway."""
    import psycopg2
    connection = psycopg2.connect(uri)
    connection.autocommit = True
    cursor = connection.cursor()
    cursor.execute("SELECT coalesce(max(id), 0) FROM hr_live")
    last = cursor.fetchone()[0]
    lags = {}
    ready.set()
    start, end = window
    while time.time() < end + 5:
        cursor.execute("SELECT id, gateway, extract(epoch FROM t)::float8 FROM hr_live WHERE id > %s ORDER BY id", (last,))
        rows = cursor.fetchall()
        now = time.time()
        for row_id, gateway, t in rows:
            last = row_id
            if start <= t < end:
                lags.setdefault(gateway, []).append((now, now - t))
        time.sleep(interval)
    results.put(lags)


# -- 1. live ------------------------------------------------------------------------------------

def part_live(work, args, out):
    names = ["gw%02d" % (i + 1) for i in range(args.gateways)]
    central = central_server(work, names)
    peer_pg = postgres.TemporaryPostgres(prefix="hrmd-central-peer-")
    daemons, peers = [], []
    try:
        peer_pg.psql("CREATE TABLE hr_live (id bigserial PRIMARY KEY, gateway text, device text, t timestamptz, bpm double precision)")
        for i, name in enumerate(names):
            store = new_store(work, "live-" + name)
            config = write_config(work, "live-" + name, central.uri(name, database="hrmd"), name, args.batch)
            daemons.append(("sync", name, Daemon([HRMD, "--store", store, "--config", config] + straps(args.straps, args.hz, i + 1),
                                                 os.path.join(work, "live-%s.log" % name))))
        for i, name in enumerate(names):
            store = new_store(work, "plain-" + name, sync=False)
            config = write_config(work, "plain-" + name)
            daemon = Daemon([HRMD, "--store", store, "--config", config] + straps(args.straps, args.hz, i + 1),
                            os.path.join(work, "plain-%s.log" % name))
            daemons.append(("plain", name, daemon))
            if i < args.peers:
                watch = subprocess.Popen([HRMCTL, "watch", "--store", store, "--output", "json"],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                script = subprocess.Popen(["/usr/bin/python3", "-c", PEER, peer_pg.uri(), name], stdin=watch.stdout)
                watch.stdout.close()
                peers.append((name, watch, script))
        for kind, name, daemon in daemons:
            if kind == "sync":
                daemon.wait_for(r"sync: connected", 60)
        window = (time.time() + args.warmup, time.time() + args.warmup + args.seconds)
        results = [multiprocessing.Queue(), multiprocessing.Queue()]
        ready = [multiprocessing.Event(), multiprocessing.Event()]
        observers = [multiprocessing.Process(target=observe_central, args=(central.uri(database="hrmd"), window, results[0], ready[0],
                                                                           multiprocessing.Event())),
                     multiprocessing.Process(target=observe_peer, args=(peer_pg.uri(), window, results[1], ready[1]))]
        for observer in observers:
            observer.start()
        for event in ready:
            event.wait(30)
        time.sleep(max(0, window[0] - time.time()))
        before = {(kind, name): cpu_seconds(d.pid) for kind, name, d in daemons}
        before.update({("peer", name): cpu_seconds(w.pid) + cpu_seconds(s.pid) for name, w, s in peers})
        before["central"], before["peer-pg"] = server_cpu_seconds(central), server_cpu_seconds(peer_pg)
        time.sleep(max(0, window[1] - time.time()))
        after = {(kind, name): cpu_seconds(d.pid) for kind, name, d in daemons}
        after.update({("peer", name): cpu_seconds(w.pid) + cpu_seconds(s.pid) for name, w, s in peers})
        after["central"], after["peer-pg"] = server_cpu_seconds(central), server_cpu_seconds(peer_pg)
        central_lags = results[0].get(timeout=120)
        peer_lags = results[1].get(timeout=120)
        for observer in observers:
            observer.join(timeout=30)
    finally:
        for _, _, daemon in daemons:
            daemon.stop()
        for _, watch, script in peers:
            watch.terminate()
            script.terminate()
            watch.wait(timeout=30)
            script.wait(timeout=30)
        central.cleanup()
        peer_pg.cleanup()

    seconds = window[1] - window[0]
    cpu = {k: after[k] - before[k] for k in before}
    sync_cpu = [cpu[("sync", n)] for n in names]
    plain_cpu = [cpu[("plain", n)] for n in names]
    per_gateway = [(cpu[("sync", n)] - cpu[("plain", n)]) / seconds * 100 for n in names]
    all_central = [lag for lags in central_lags.values() for _, lag in lags]
    all_peer = [lag for lags in peer_lags.values() for _, lag in lags]
    result = {
        "gateways": args.gateways, "straps": args.straps, "hz": args.hz, "seconds": round(seconds, 1), "peers": len(peers),
        "hrmd": {"lag": lag_summary(all_central), "lag_by": "LISTEN hrmd_changes, read on each notification",
                 "cpu_with_sync_pct": round(sum(sync_cpu) / len(names) / seconds * 100, 2),
                 "cpu_without_sync_pct": round(sum(plain_cpu) / len(names) / seconds * 100, 2),
                 "sync_cpu_per_gateway_pct": round(sum(per_gateway) / len(per_gateway), 2),
                 "sync_cpu_per_gateway_pct_each": [round(x, 2) for x in per_gateway],
                 "postgres_cpu_pct": round(cpu["central"] / seconds * 100, 2)},
        "peer": {"lag": lag_summary(all_peer), "lag_by": "polling the table every 50 ms",
                 "cpu_per_gateway_pct": round(sum(cpu[("peer", n)] for n, _, _ in peers) / max(1, len(peers)) / seconds * 100, 2),
                 "postgres_cpu_pct": round(cpu["peer-pg"] / seconds * 100, 2),
                 "postgres_cpu_per_gateway_pct": round(cpu["peer-pg"] / seconds * 100 / max(1, len(peers)), 2)},
    }
    result["hrmd"]["postgres_cpu_per_gateway_pct"] = round(result["hrmd"]["postgres_cpu_pct"] / args.gateways, 2)
    out["live"] = result
    print(json.dumps({"live": result}), flush=True)


# -- traces -------------------------------------------------------------------------------------

class Stamp:
    """RFC 3339 UTC with microseconds, the date and time formatted once per second."""

    def __init__(self):
        self.second, self.text = None, None

    def __call__(self, t_us):
        second, micro = divmod(t_us, 1_000_000)
        if second != self.second:
            self.second = second
            self.text = datetime.datetime.fromtimestamp(second, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        return "%s.%06dZ" % (self.text, micro)


def session_bpm(rng, n):
    """n whole heart rates of a session between 60 and 180: warm-up, intervals, cool-down, noise."""
    rest, work, swing, phase = rng.uniform(60, 75), rng.uniform(130, 155), rng.uniform(12, 25), rng.uniform(0, 6.28)
    out = []
    drift = 0.0
    for i in range(n):
        x = i / n
        if x < 0.12:
            base = rest + (work - rest) * (0.5 - 0.5 * math.cos(math.pi * x / 0.12))
        elif x < 0.88:
            base = work + swing * math.sin(2 * math.pi * 7 * (x - 0.12) / 0.76 + phase)
        else:
            base = work + (rest + 20 - work) * (0.5 - 0.5 * math.cos(math.pi * (x - 0.88) / 0.12))
        drift = 0.995 * drift + rng.gauss(0, 0.3)
        out.append(int(round(min(180, max(60, base + drift + rng.gauss(0, 1.5))))))
    return out


def write_trace(path, sessions, plain=None):
    """A trace of heart-rate notifications (flags 0x06: 8-bit, contact detected) of `sessions`,
    a list of (device, first_us, step_us, bpms), in time order; with `plain` also the rows of
    the plain table (device number, t, bpm) for COPY. Returns the sample count."""
    rng = random.Random(7)
    events = []
    for number, (device, first, step, bpms) in enumerate(sessions):
        for i, bpm in enumerate(bpms):
            events.append((first + i * step + rng.randint(-800, 800), number, bpm))
    events.sort()
    stamp = Stamp()
    names = [s[0] for s in sessions]
    with open(path, "w") as f:
        f.write('{"format":"hrmd-trace","version":1,"recorder":"central-bench"}\n')
        lines = []
        for t, number, bpm in events:
            lines.append('{"t":"%s","transport":"mock","device":"%s","kind":"notify","characteristic":"2a37","value":"06%02x"}\n'
                         % (stamp(t), names[number], bpm))
            if len(lines) >= 100_000:
                f.writelines(lines)
                lines = []
        f.writelines(lines)
    if plain is not None:
        with open(plain, "a") as f:
            pg_stamp = Stamp()
            f.writelines("%d\t%s\t%d\n" % (number + 1, pg_stamp(t).replace("T", " ").rstrip("Z") + "+00", bpm)
                         for t, number, bpm in events)
    return len(events)


def replay(store, paths):
    started = time.monotonic()
    out = run([HRMCTL, "replay", "--store", store] + paths, timeout=7200)
    return time.monotonic() - started, out.strip().splitlines()[-1] if out.strip() else ""


def local_anchor(store):
    """The newest anchor of the local store (its one change counter)."""
    import sqlite3
    db = sqlite3.connect("file:%s?mode=ro" % store, uri=True)
    try:
        columns = [row[1] for row in db.execute("PRAGMA table_info(anchorSequence)")]
        return int(db.execute("SELECT max(%s) FROM anchorSequence" % columns[-1]).fetchone()[0])
    finally:
        db.close()


def central_cursor(pg, gateway):
    value = pg.psql("SELECT coalesce(max(c.anchor), 0) FROM hrmd.cursor c JOIN hrmd.gateway g ON g.id = c.gateway_id "
                    "WHERE g.name = '%s' AND c.type = 'heart-rate'" % gateway, database="hrmd")
    return int(value or 0)


# -- 2. catch-up --------------------------------------------------------------------------------

def part_catchup(work, args, out):
    name = "offline"
    central = central_server(work, [name])
    try:
        hour_end = int(time.time() * 1e6) - 2_000_000
        step = 1_000_000 // args.hz
        n = 3600 * args.hz
        rng = random.Random(11)
        sessions = [("strap-%02d-%02d" % (50, i), hour_end - n * step, step, session_bpm(rng, n)) for i in range(args.straps)]
        trace = os.path.join(work, "offline-hour.trace.jsonl")
        samples = write_trace(trace, sessions)
        store = new_store(work, "offline")
        replay_s, summary = replay(store, [trace])
        os.unlink(trace)
        anchor = local_anchor(store)
        print("catchup: %d samples replayed in %.1f s (%s); local anchor %d" % (samples, replay_s, summary, anchor), flush=True)
        config = write_config(work, "offline", central.uri(name, database="hrmd"), name, args.batch)
        results, ready, stop = multiprocessing.Queue(), multiprocessing.Event(), multiprocessing.Event()
        started = time.time()
        observer = multiprocessing.Process(target=observe_central,
                                           args=(central.uri(database="hrmd"), (started, started + 3600), results, ready, stop))
        observer.start()
        ready.wait(30)
        started = time.time()
        # The same straps live again: the names and seeds of the trace's gateway (50).
        daemon = Daemon([HRMD, "--store", store, "--config", config] + straps(args.straps, args.hz, 50),
                        os.path.join(work, "offline.log"))
        covered = cpu_at_cover = line = None
        try:
            deadline = time.monotonic() + args.catchup_limit
            while time.monotonic() < deadline:
                if central_cursor(central, name) >= anchor:
                    covered = time.time() - started
                    cpu_at_cover = cpu_seconds(daemon.pid)
                    break
                time.sleep(0.1)
            try:
                _, match = daemon.wait_for(r"sync: caught up: (\d+) samples sent in ([0-9.]+)", 30)
                line = {"samples": int(match.group(1)), "seconds": float(match.group(2)), "line": match.group(0).strip()}
            except RuntimeError:
                pass
            time.sleep(10)      # live samples after the catch-up, for the lag once caught up
        finally:
            stop.set()
            lags = results.get(timeout=60)
            observer.join(timeout=30)
            daemon.stop()
        live = [pair for pairs in lags.values() for pair in pairs]
        cover_time = started + covered if covered is not None else float("inf")
        during = [lag for seen, lag in live if seen <= cover_time]
        after = [lag for seen, lag in live if seen > cover_time]
        result = {"straps": args.straps, "hz": args.hz, "samples_offline": samples, "replay_s": round(replay_s, 1),
                  "replay_summary": summary, "local_anchor_at_start": anchor,
                  "cursor_covers_s": round(covered, 2) if covered is not None else None,
                  "caught_up_line": line, "hrmd_cpu_s_until_covered": cpu_at_cover,
                  "live_lag_during_catchup": lag_summary(during), "live_lag_after": lag_summary(after)}
    finally:
        central.cleanup()
    out["catchup"] = result
    print(json.dumps({"catchup": result}), flush=True)


# -- 3. size and 4. stats ------------------------------------------------------------------------

def wait_cursor(pg, gateway, anchor, limit, daemon):
    started = time.monotonic()
    while time.monotonic() - started < limit:
        if central_cursor(pg, gateway) >= anchor:
            return time.monotonic() - started
        if daemon.process.poll() is not None:
            raise RuntimeError("hrmd exited while syncing")
        time.sleep(0.5)
    return None


def part_size(work, args, out, keep_server):
    """The month synced by hrmd beside the plain table; returns the server (for stats) when asked."""
    name = "gym"
    central = central_server(work, [name])
    try:
        day0 = datetime.datetime.now(datetime.timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0) \
            - datetime.timedelta(days=args.days + 1)
        rng = random.Random(3)
        plain = os.path.join(work, "plain.copy")
        traces, samples = [], 0
        started = time.monotonic()
        for day in range(args.days):
            base = int((day0 + datetime.timedelta(days=day, hours=17)).timestamp()) * 1_000_000
            sessions = [("gym-%02d" % (i + 1), base + rng.randrange(1800) * 1_000_000, 1_000_000, session_bpm(rng, 7200))
                        for i in range(args.straps)]
            trace = os.path.join(work, "gym-day-%02d.trace.jsonl" % day)
            samples += write_trace(trace, sessions, plain)
            traces.append(trace)
        generate_s = time.monotonic() - started
        store = new_store(work, "gym")
        replay_s, summary = replay(store, traces)
        for trace in traces:
            os.unlink(trace)
        anchor = local_anchor(store)
        print("size: %d samples generated in %.1f s, replayed in %.1f s (%s); syncing…" % (samples, generate_s, replay_s, summary),
              flush=True)
        config = write_config(work, "gym", central.uri(name, database="hrmd"), name, args.size_batch)
        daemon = Daemon([HRMD, "--store", store, "--config", config, "--sensor", "replay:" + empty_trace(work)],
                        os.path.join(work, "gym.log"))
        try:
            sync_s = wait_cursor(central, name, anchor, args.sync_limit, daemon)
            cpu = cpu_seconds(daemon.pid)
        finally:
            daemon.stop()
        if sync_s is None:
            raise RuntimeError("the month's sync did not finish in %d s" % args.sync_limit)
        print("size: synced in %.1f s; loading the plain table…" % sync_s, flush=True)
        central.create_database("plain")
        central.psql("CREATE TABLE hr (device int, t timestamptz, bpm double precision); CREATE INDEX ON hr (device, t)",
                      database="plain")
        argv, env = central.psql_command(database="plain")
        started = time.monotonic()
        with open(plain) as f:
            subprocess.run(argv + ["-c", "COPY hr FROM STDIN"], stdin=f, env=env, check=True, capture_output=True, timeout=3600)
        copy_s = time.monotonic() - started
        os.unlink(plain)
        central.psql("VACUUM ANALYZE", database="hrmd", timeout=3600)
        central.psql("VACUUM ANALYZE", database="plain", timeout=3600)

        def size(db, table):
            return {"total": int(central.psql("SELECT pg_total_relation_size('%s')" % table, database=db)),
                    "heap": int(central.psql("SELECT pg_relation_size('%s')" % table, database=db)),
                    "indexes": int(central.psql("SELECT pg_indexes_size('%s')" % table, database=db))}

        central_count = int(central.psql("SELECT sum(count) FROM hrmd.chunk", database="hrmd"))
        synced_count = int(central.psql("SELECT count(*) FROM hrmd.synced_sample", database="hrmd"))
        plain_count = int(central.psql("SELECT count(*) FROM hr", database="plain"))
        chunk, synced, table = size("hrmd", "hrmd.chunk"), size("hrmd", "hrmd.synced_sample"), size("plain", "hr")
        hrmd_total = chunk["total"] + synced["total"]
        # What of it is free space left by the appends' old versions (in the TOAST table chiefly):
        # the same table rewritten compactly.
        central.psql("VACUUM FULL hrmd.chunk", database="hrmd", timeout=3600)
        compact = size("hrmd", "hrmd.chunk")
        result = {"days": args.days, "straps": args.straps, "samples": samples, "generate_s": round(generate_s, 1),
                  "replay_s": round(replay_s, 1), "replay_summary": summary,
                  "sync_s": round(sync_s, 1), "sync_batch": args.size_batch, "sync_hrmd_cpu_s": round(cpu, 1),
                  "plain_copy_s": round(copy_s, 1),
                  "central_samples": central_count + synced_count, "plain_samples": plain_count,
                  "chunks": int(central.psql("SELECT count(*) FROM hrmd.chunk", database="hrmd")),
                  "hrmd_chunk": chunk, "hrmd_synced_sample": synced, "plain": table, "hrmd_chunk_after_vacuum_full": compact,
                  "hrmd_bytes_per_sample_after_vacuum_full": round((compact["total"] + synced["total"]) / samples, 2),
                  "ratio_after_vacuum_full": round((compact["total"] + synced["total"]) / table["total"], 3),
                  "hrmd_bytes_per_sample": round(hrmd_total / samples, 2),
                  "plain_bytes_per_sample": round(table["total"] / samples, 2),
                  "ratio": round(hrmd_total / table["total"], 3)}
        out["size"] = result
        print(json.dumps({"size": result}), flush=True)
    except BaseException:
        central.cleanup()
        raise
    if keep_server:
        return central
    central.cleanup()
    return None


def best_wall(argv, env, runs):
    times = []
    output = None
    for _ in range(runs + 1):         # one warm-up, then `runs`
        started = time.monotonic()
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
        times.append(time.monotonic() - started)
        if done.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (argv[0], done.returncode, done.stderr[-2000:]))
        output = done.stdout
    return min(times[1:]), output


def part_stats(central, args, out):
    env = dict(os.environ, TZ="UTC")
    hrmctl_s, hrmctl_out = best_wall([HRMCTL, "stats", "--by", "1d", "--output", "csv", "--store", central.uri("reader", database="hrmd")],
                                     env, args.runs)
    argv, psql_env = central.psql_command(database="plain")
    psql_s, psql_out = best_wall(argv + ["-c", "SELECT date_trunc('day', t), count(*), avg(bpm), min(bpm), max(bpm) FROM hr "
                                         "GROUP BY 1 ORDER BY 1"], psql_env, args.runs)
    result = {"runs": args.runs, "hrmctl_s": round(hrmctl_s, 4), "psql_s": round(psql_s, 4), "ratio": round(hrmctl_s / psql_s, 3),
              "hrmctl_rows": len([l for l in hrmctl_out.splitlines() if l.strip()]),
              "psql_rows": len([l for l in psql_out.splitlines() if l.strip()]),
              "hrmctl_first_lines": hrmctl_out.splitlines()[:3], "psql_first_line": psql_out.splitlines()[:1]}
    out["stats"] = result
    print(json.dumps({"stats": result}), flush=True)


def table(out):
    """The figures, each beside its peer."""
    rows = []
    if "live" in out:
        live = out["live"]
        h, p = live["hrmd"], live["peer"]
        rows.append(("sync lag p50 / p99 / max, s (goal p99 < 2 s)",
                     "%.3f / %.3f / %.3f" % (h["lag"]["p50_s"], h["lag"]["p99_s"], h["lag"]["max_s"] or 0),
                     "%.3f / %.3f / %.3f" % (p["lag"]["p50_s"], p["lag"]["p99_s"], p["lag"]["max_s"] or 0)))
        rows.append(("sync CPU per gateway, % of a core (goal < 5 %)", "%.2f" % h["sync_cpu_per_gateway_pct"],
                     "%.2f" % p["cpu_per_gateway_pct"]))
        rows.append(("hrmd CPU with / without [sync], % of a core", "%.2f / %.2f" % (h["cpu_with_sync_pct"], h["cpu_without_sync_pct"]),
                     "—"))
        rows.append(("PostgreSQL CPU, all / per gateway, % of a core", "%.1f / %.2f" % (h["postgres_cpu_pct"], h["postgres_cpu_per_gateway_pct"]),
                     "%.1f / %.2f" % (p["postgres_cpu_pct"], p["postgres_cpu_per_gateway_pct"])))
        rows.append(("gateways / samples seen in the window", "%d / %d" % (live["gateways"], h["lag"]["samples"]),
                     "%d / %d" % (live["peers"], p["lag"]["samples"])))
    if "catchup" in out:
        c = out["catchup"]
        rows.append(("catch-up of 1 h offline (%d samples), s (goal < 30 s)" % c["samples_offline"],
                     "%s" % c["cursor_covers_s"], "—"))
        d = c["live_lag_during_catchup"]
        rows.append(("live lag during catch-up p50 / p99 / max, s", "%.2f / %.2f / %.2f" % (d["p50_s"], d["p99_s"], d["max_s"] or 0), "—"))
    if "size" in out:
        z = out["size"]
        rows.append(("bytes per sample, %d samples (goal ≤ 0.25×)" % z["samples"], "%.2f" % z["hrmd_bytes_per_sample"],
                     "%.2f" % z["plain_bytes_per_sample"]))
        rows.append(("  ratio to the plain table", "%.3f×" % z["ratio"], ""))
        rows.append(("  hrmd after VACUUM FULL hrmd.chunk: bytes, ratio", "%.2f, %.3f×" % (z["hrmd_bytes_per_sample_after_vacuum_full"],
                                                                                      z["ratio_after_vacuum_full"]), ""))
        rows.append(("month's sync (batch %s), s" % (z["sync_batch"] or "default"), "%.1f" % z["sync_s"], "COPY %.1f" % z["plain_copy_s"]))
    if "stats" in out:
        st = out["stats"]
        rows.append(("stats by day over the month, best of %d, s (goal ≤ 1×)" % st["runs"], "%.4f" % st["hrmctl_s"], "%.4f" % st["psql_s"]))
        rows.append(("  ratio to psql", "%.2f×" % st["ratio"], ""))
    print()
    print("%-58s %24s %24s" % ("", "hrmd", "peer"))
    for row in rows:
        print("%-58s %24s %24s" % row)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--parts", default="live,catchup,size,stats")
    parser.add_argument("--gateways", type=int, default=10)
    parser.add_argument("--straps", type=int, default=20)
    parser.add_argument("--hz", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--warmup", type=float, default=10)
    parser.add_argument("--peers", type=int, default=10)
    parser.add_argument("--batch", type=int, help="[sync] batch (default hrmd's own)")
    parser.add_argument("--days", type=int, default=int(os.environ.get("CENTRAL_BENCH_DAYS", "30")))
    parser.add_argument("--catchup-limit", type=float, default=300)
    parser.add_argument("--size-batch", type=int, help="[sync] batch for the month's sync (default hrmd's own)")
    parser.add_argument("--sync-limit", type=float, default=1800, help="the longest the month's sync may take, s")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs)")
    parser.add_argument("--json", default=os.path.join(REPO, ".build", "bench-central.json"))
    args = parser.parse_args()
    parts = args.parts.split(",")
    out = {}
    work = tempfile.mkdtemp(prefix="hrmd-central-bench-")
    try:
        if "live" in parts:
            part_live(work, args, out)
        if "catchup" in parts:
            part_catchup(work, args, out)
        if "size" in parts or "stats" in parts:
            central = part_size(work, args, out, keep_server="stats" in parts)
            if central:
                try:
                    part_stats(central, args, out)
                finally:
                    central.cleanup()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("work directory kept: %s" % work)
    table(out)
    with open(args.json, "w") as f:
        json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
