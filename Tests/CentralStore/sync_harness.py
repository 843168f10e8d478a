"""What the end-to-end sync tests (test_sync_*.py) stand on: a PostgreSQL of their own set up as a
site does (docs: roles hrmd_gateway and hrmd_analyst, an owner role owning database hrmd, one
login role per gateway IN ROLE hrmd_gateway), the built hrmd with mock straps and a [sync]
section, hrmctl on each gateway's own store, and the comparison of the central store with the
union of the gateways' local stores, sample by sample.

    central = Central(pg)                       # roles, database hrmd, the schema made by its owner
    central.add_gateway_role("gw1")
    gw = Gateway(work, "gw1", central.url("gw1"), sensors=["mock:id=a,hz=4,seed=1"])
    gw.grant(); gw.start(); gw.wait_for_line("sync: connected", 15)
    counts = compare(central, [gw])             # {"lost": 0, "doubled": 0, ...}

Every wait is bounded and waits for an event (a log line, a row count) with a deadline.
"""

import calendar
import collections
import datetime
import json
import os
import signal
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "pysupport"))

import postgres  # noqa: E402
import builds  # noqa: E402
from builds import REPO, bin_dir  # noqa: E402
from ci import require, skip_or_fail  # noqa: E402,F401
from processes import Output, stop_process  # noqa: E402
from waiting import wait_until  # noqa: E402,F401

START_TIMEOUT_S = 15
STOP_TIMEOUT_S = 15
RESULTS = os.path.join(REPO, ".build", "central-faults.json")


_requirements = []


def requirements():
    """None when everything the tests need is here, else what is missing (asked once)."""
    if _requirements:
        return _requirements[0]
    missing = postgres.requirements()
    if not missing:
        for program in ("hrmd", "hrmctl"):
            if not os.access(os.path.join(bin_dir(), program), os.X_OK):
                missing = "no %s in %s (build it, or set HRMD_BIN_DIR)" % (program, bin_dir())
                break
    if not missing:
        probe = subprocess.run([os.path.join(bin_dir(), "hrmd"), "--help"], capture_output=True, text=True, timeout=30)
        if "[sync]" not in probe.stdout + probe.stderr:
            missing = "%s has no [sync]" % os.path.join(bin_dir(), "hrmd")
    _requirements.append(missing)
    return missing


class Central:
    """Database hrmd on PG set up as a site does; the schema made by the owner's first hrmd."""

    def __init__(self, pg, work, tablespace=None):
        self.pg = pg
        self.work = work
        pg.psql("CREATE ROLE hrmd_gateway NOLOGIN; CREATE ROLE hrmd_analyst NOLOGIN; "
                "CREATE ROLE hrmd_owner LOGIN; CREATE ROLE analyst LOGIN IN ROLE hrmd_analyst")
        pg.psql("CREATE DATABASE hrmd OWNER hrmd_owner" + (" TABLESPACE %s" % tablespace if tablespace else ""))
        self.make_schema()

    def make_schema(self):
        """hrmd as the owner (gateway `setup`, a store that grants nothing) until it has connected."""
        owner = Gateway(self.work, "setup", self.url("hrmd_owner"), sensors=["mock:id=setup,hz=1"])
        owner.start()
        try:
            owner.wait_for_line("sync: connected to hrmd as hrmd_owner", START_TIMEOUT_S)
        finally:
            owner.stop()
        assert self.sql("SELECT count(*) FROM hrmd.migration") != "0"

    def add_gateway_role(self, name, password=None, member=True):
        self.pg.create_role(name, password or "unused-" + name, in_roles=["hrmd_gateway"] if member else ())

    def url(self, role, tcp=False, port=None):
        """A libpq URI naming no password: the socket (trusted), or TCP (a passfile's password)."""
        return self.pg.uri(role, None, database="hrmd", tcp=tcp, port=port)

    def sql(self, statement, user="postgres", check=True):
        return self.pg.psql(statement, user=user, database="hrmd", check=check)

    def batches(self, gateway=None):
        """Batches committed (the cursor rows' counters), of one gateway or all."""
        where = " WHERE g.name = '%s'" % gateway if gateway else ""
        return int(self.sql("SELECT coalesce(sum(c.batches), 0) FROM hrmd.cursor c JOIN hrmd.gateway g "
                            "ON g.id = c.gateway_id" + where))

    def count(self, gateway=None, type_="heart-rate"):
        where = " AND gateway = '%s'" % gateway if gateway else ""
        return int(self.sql("SELECT count(*) FROM hrmd.samples WHERE type = '%s'%s" % (type_, where)))

    def samples(self):
        """(gateway, type, device, start µs, value) of every row of hrmd.samples."""
        out = self.sql("SELECT gateway, type, coalesce(device, ''), "
                       "(extract(epoch FROM start_time) * 1000000)::bigint, value FROM hrmd.samples")
        rows = []
        for line in out.splitlines():
            gateway, type_, device, start, value = line.split("|")
            rows.append((gateway, type_, device, int(start), float(value)))
        return rows

    def beats(self):
        """(gateway, type, device, packed beat stamp or None, start µs) of every chunk sample."""
        out = self.sql("SELECT g.name, c.type, coalesce(d.identifier, ''), coalesce(u.beat::text, ''), u.start "
                       "FROM hrmd.chunk c JOIN hrmd.gateway g ON g.id = c.gateway_id "
                       "LEFT JOIN hrmd.device d ON d.id = c.device_id, "
                       "unnest(c.starts, c.beats) AS u(start, beat)")
        rows = []
        for line in out.splitlines():
            gateway, type_, device, beat, start = line.split("|")
            rows.append((gateway, type_, device, int(beat) if beat else None, int(start)))
        return rows


class Gateway:
    """A gateway: its own store file and the built hrmd with mock straps and a [sync] section."""

    def __init__(self, work, name, url, sensors=(), sync=(), env=None, types=("heart-rate",)):
        self.work = work
        self.name = name
        self.store = os.path.join(work, name + ".sqlite")
        self.config = os.path.join(work, name + ".conf")
        self.sensors = list(sensors)
        self.env = env
        self.types = list(types)
        self.write_config(url, sync)
        self.process = None
        self.output = None
        self.runs = []

    def write_config(self, url, sync=()):
        with open(self.config, "w") as config:
            config.write("[sync]\nurl = %s\ngateway = %s\n" % (url, self.name))
            for line in sync:
                config.write(line + "\n")

    def hrmctl(self, *arguments, check=True):
        return builds.hrmctl(*arguments, timeout=120, check=check)

    def grant(self, read=True):
        for type_ in self.types:
            self.hrmctl("auth", "grant", "--store", self.store, "hrmd", type_)
            if read:
                self.grant_read(type_)

    def grant_read(self, type_="heart-rate"):
        self.hrmctl("auth", "grant", "--store", self.store, "hrmd/sync", type_, "--read")

    def revoke_read(self, type_="heart-rate"):
        self.hrmctl("auth", "revoke", "--store", self.store, "hrmd/sync", type_, "--read")

    def start(self):
        argv = [os.path.join(bin_dir(), "hrmd"), "--store", self.store, "--config", self.config]
        for sensor in self.sensors:
            argv += ["--sensor", sensor]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.update(self.env or {})
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                        stdin=subprocess.DEVNULL)
        self.output = Output(self.process.stdout, close=True)
        self.runs.append(self.output)
        return self.process

    @property
    def running(self):
        return self.process is not None and self.process.poll() is None

    def wait_for_line(self, needle, timeout=START_TIMEOUT_S, count=1):
        return self.output.wait_for_line(needle, timeout, count)

    def kill(self):
        if self.running:
            self.process.send_signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait(STOP_TIMEOUT_S)
            self.output.join(STOP_TIMEOUT_S)

    def stop(self):
        """SIGTERM, then SIGKILL after a while; the exit status (None when killed)."""
        if self.process is None:
            return None
        if stop_process(self.process, STOP_TIMEOUT_S) is None:
            return None
        self.output.join(STOP_TIMEOUT_S)
        return self.process.returncode

    def text(self):
        """Every run's output."""
        return "\n".join(output.text() for output in self.runs)

    def samples(self, types=None):
        """(type, device, start ms, value) of every local sample of TYPES (default: the granted ones)."""
        rows = []
        for type_ in types or self.types:
            result = self.hrmctl("samples", "--store", self.store, "--type", type_, "--output", "json")
            for line in result.stdout.splitlines():
                if line.strip():
                    sample = json.loads(line)
                    rows.append((sample["type"], (sample.get("device") or {}).get("identifier", ""),
                                 rfc3339_ms(sample["start"]), sample["value"]))
        return rows

    def count(self, type_="heart-rate"):
        result = self.hrmctl("samples", "--store", self.store, "--type", type_, "--output", "csv")
        return max(0, len([line for line in result.stdout.splitlines() if line.strip()]) - 1)


def rfc3339_ms(text):
    """Milliseconds since the epoch of hrmctl's UTC time with milliseconds."""
    moment = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")
    return calendar.timegm(moment.timetuple()) * 1000 + moment.microsecond // 1000


def compare(central, gateways, beat_of=None):
    """The central store against the union of the gateways' local stores, sample by sample.

    A sample is its type, device and start. hrmctl shows starts to the millisecond (rounded
    down), so samples are counted per (type, device, millisecond): a gateway's store may hold
    two samples in one millisecond (a strap's frames microseconds apart), each its own sample,
    and the central store must hold as many there. Gateways hearing the same sample count once:
    the union holds, per key, the most any one gateway holds. Central rows are also checked at
    the microsecond: two rows of one type and device at one microsecond are one sample doubled.
    With BEAT_OF (a function of (device, start ms) -> packed ANT+ beat stamp or None), samples
    with a stamp are compared by beat identity instead (device and stamp; the test's trace is
    short enough that a stamp never repeats). Returns lost (in the union, not central), doubled
    (central copies beyond the union's), extra (central, in no local store), wrong (a central
    heart rate that differs), and the union's and the central store's sizes."""
    union = collections.Counter()
    values = {}
    for gateway in gateways:
        local = collections.Counter()
        for type_, device, start_ms, value in gateway.samples():
            key = _identity(type_, device, start_ms, beat_of)
            local[key] += 1
            values.setdefault(key, set()).add(value)
        for key, count in local.items():
            union[key] = max(union[key], count)
    held = collections.Counter()
    exact = collections.Counter()
    wrong = 0
    if beat_of:
        for _gateway, type_, device, beat, start_us in central.beats():
            held[_identity(type_, device, start_us // 1000, lambda d, s: beat)] += 1
            exact[(type_, device, start_us, beat)] += 1
    else:
        for _gateway, type_, device, start_us, value in central.samples():
            key = _identity(type_, device, start_us // 1000, None)
            held[key] += 1
            exact[(type_, device, start_us)] += 1
            if type_ == "heart-rate" and key in values and not any(abs(value - v) < 1e-6 for v in values[key]):
                wrong += 1
    lost = sum(max(0, count - held[key]) for key, count in union.items())
    doubled = sum(max(0, held[key] - count) for key, count in union.items())
    doubled += sum(count - 1 for count in exact.values() if count > 1)
    extra = sum(count for key, count in held.items() if key not in union)
    examples = {"lost": [key for key, count in union.items() if held[key] < count][:5],
                "doubled": [key for key, count in union.items() if held[key] > count][:5]
                + [key for key, count in exact.items() if count > 1][:5],
                "extra": [key for key in held if key not in union][:5]}
    return {"lost": lost, "doubled": doubled, "extra": extra, "wrong": wrong, "union": sum(union.values()),
            "central": sum(held.values()), "examples": examples}


def _identity(type_, device, start_ms, beat_of):
    beat = beat_of(device, start_ms) if beat_of else None
    if beat is not None:
        return (type_, device, "beat", beat)   # one trace: a stamp repeats only minutes apart
    return (type_, device, start_ms)


def record(test, counts, seconds, **extra):
    """Adds TEST's counts and duration to .build/central-faults.json (the closing report's)."""
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    try:
        with open(RESULTS) as file:
            results = json.load(file)
    except (OSError, ValueError):
        results = {}
    entry = dict(counts, seconds=round(seconds, 1))
    entry.update(extra)
    results[test] = entry
    with open(RESULTS + ".tmp", "w") as file:
        json.dump(results, file, indent=2, sort_keys=True)
    os.replace(RESULTS + ".tmp", RESULTS)


class SyncTest(unittest.TestCase):
    """A temporary directory and a PostgreSQL per test; what a test starts is stopped."""

    pg_options = None

    def setUp(self):
        require(requirements())
        self.started = time.monotonic()
        import tempfile
        self.work = tempfile.mkdtemp(prefix="hrmd-sync-")
        os.chmod(self.work, 0o755)
        self.addCleanup(__import__("shutil").rmtree, self.work, True)
        self.pg = postgres.TemporaryPostgres(options=self.pg_options)
        self.addCleanup(self.pg.cleanup)
        self.gateways = []

    def central(self, **options):
        return Central(self.pg, self.work, **options)

    def gateway(self, name, url, **options):
        gateway = Gateway(self.work, name, url, **options)
        self.gateways.append(gateway)
        self.addCleanup(gateway.stop)
        return gateway

    def check(self, central, gateways, beat_of=None, **extra):
        """The final check: lost and doubled (and extra, wrong) all 0, printed and recorded."""
        counts = compare(central, gateways, beat_of)
        seconds = time.monotonic() - self.started
        name = self.id().split(".")[-1]
        print("\n  %s: lost=%d doubled=%d (extra=%d wrong=%d; %d samples in the union, %d central) in %.1f s"
              % (name, counts["lost"], counts["doubled"], counts["extra"], counts["wrong"], counts["union"],
                 counts["central"], seconds), flush=True)
        examples = counts.pop("examples")
        record(name, counts, seconds, **extra)
        self.assertGreater(counts["union"], 0, "the gateways recorded nothing")
        self.assertEqual((counts["lost"], counts["doubled"], counts["extra"], counts["wrong"]), (0, 0, 0, 0),
                         "central store against the union: %s; for example %s" % (counts, examples))
        return counts

    def caught_up(self, central, gateway, timeout=30):
        """Waits until the central store holds at least what GATEWAY's store held when asked
        (the sync follows the store, so it passes that mark unless it is stuck)."""
        mark = gateway.count()
        wait_until(lambda: central.count(gateway.name) >= mark, timeout,
                   "%s's %d samples to reach the central store" % (gateway.name, mark), interval=0.2)
