"""Every read request's worst case against a large store, with hrmd's peak memory: each request
over the whole history (no range, the widest limits, the narrowest buckets) must cost hrmd about
what serving it costs, never memory that grows with the store.

The store holds SAMPLE_FRAMES heart-rate notifications of 20 straps with an RR interval each
(twice as many samples), replayed from a generated trace. Before the analyses streamed, zones
over 800,000 such samples took hrmd from 50 MB to 254 MB; the bound here is well below what
half of that store would then have cost, and well above what a streamed request costs."""

import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import front  # noqa: E402

SAMPLE_FRAMES = 200_000
STRAPS = 20
GROWTH_BOUND_KB = 48 * 1024  # over the peak before the first request
REPLAY_TIMEOUT_S = 600       # a debug hrmctl on a busy machine; a hang, never a measure of speed
REQUEST_TIMEOUT_S = 300

# The worst case of each read request an application or a manager may make.
WORST_CASES = [
    ("zones over everything", "/api/v1/zones?max=190"),
    ("HRV over everything", "/api/v1/hrv"),
    ("minute statistics over everything", "/api/v1/statistics?type=heart-rate&by=1m"),
    ("day statistics over everything", "/api/v1/statistics?type=heart-rate&by=1d&timezone=Europe/Berlin"),
    ("the largest page of samples", "/api/v1/samples?type=heart-rate&limit=10000"),
    ("the largest page of RR intervals", "/api/v1/samples?type=rr-interval&limit=10000"),
    ("the largest page of changes", "/api/v1/changes?type=heart-rate&limit=10000"),
    ("the latest of every device", "/api/v1/latest?type=heart-rate"),
    ("devices", "/api/v1/devices"),
    ("sources", "/api/v1/sources"),
]


def write_trace(path):
    """SAMPLE_FRAMES notifications (heart rate with one RR interval) of STRAPS straps at 4 Hz."""
    start = 1_790_000_000  # 2026-09-21, whole seconds
    with open(path, "w") as out:
        out.write('{"format":"hrmd-trace","version":1,"recorder":"test_memory"}\n')
        devices = ["C0:FF:EE:00:01:%02X" % index for index in range(1, STRAPS + 1)]
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(start))
        for device in devices:
            out.write('{"t":"%s.000000Z","transport":"ble","device":"%s","kind":"connected"}\n' % (stamp, device))
        lines = []
        for index in range(SAMPLE_FRAMES):
            device = devices[index % STRAPS]
            micros = (index // STRAPS) * 250_000 + (index % STRAPS) * 1000
            seconds, fraction = divmod(micros, 1_000_000)
            bpm = 55 + (index * 7919) % 130
            rr = int(60 / bpm * 1024)
            lines.append('{"t":"%s.%06dZ","transport":"ble","device":"%s","kind":"notify","characteristic":"2a37","value":"10%02x%02x%02x"}\n'
                         % (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(start + seconds)), fraction, device, bpm, rr & 0xFF, rr >> 8))
            if len(lines) == 10_000:
                out.writelines(lines)
                lines = []
        out.writelines(lines)


def peak_kb(pid):
    """The process's peak resident set (VmHWM), KB."""
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM for %d" % pid)


class WorstCaseMemoryTests(front.FrontTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.directory = tempfile.mkdtemp(prefix="hrmd-memory-")
        cls.addClassCleanup(shutil.rmtree, cls.directory, True)
        trace = os.path.join(cls.directory, "straps.trace.jsonl")
        write_trace(trace)
        cls.store = os.path.join(cls.directory, "large.sqlite")
        for type_name in ("heart-rate", "rr-interval"):
            front.hrmctl("auth", "grant", "hrmd", type_name, "--store", cls.store)
        replay = subprocess.run([front.binary("hrmctl"), "replay", trace, "--store", cls.store],
                                capture_output=True, text=True, timeout=REPLAY_TIMEOUT_S)
        if replay.returncode != 0:
            raise AssertionError("hrmctl replay: %s" % (replay.stderr[-2000:]))
        os.remove(trace)

    def test_each_worst_case_costs_no_memory_that_grows_with_the_store(self):
        hrmd = front.Hrmd(self, sensors=["mock:id=m1,hz=1"], store=self.store)
        manager, _ = hrmd.token("ops/console", manager=True)
        reader, _ = hrmd.token("mary/dash")
        for type_name in ("heart-rate", "rr-interval"):
            front.hrmctl("auth", "grant", "mary/dash", type_name, "--read", "--store", self.store)
        self.assertEqual(hrmd.get("/api/v1/whoami", reader).status, 200)
        before = peak_kb(hrmd.process.pid)
        report = ["before any request: %d MB" % (before // 1024)]
        for name, path in WORST_CASES:
            token = manager if path.startswith(("/api/v1/devices", "/api/v1/sources")) else reader
            answer = hrmd.get(path, token, timeout=REQUEST_TIMEOUT_S)
            self.assertEqual(answer.status, 200, "%s: %s" % (name, answer))
            if "zones" in path:
                seconds = sum(zone["seconds"] for zone in answer.json["zones"])
                self.assertGreater(seconds, SAMPLE_FRAMES / STRAPS / 4 * 0.9, "zones over the whole history")
            if path.startswith("/api/v1/hrv"):
                self.assertGreaterEqual(answer.json["variability"]["beats"], SAMPLE_FRAMES)  # and the mock strap's
            report.append("%s: peak %d MB" % (name, peak_kb(hrmd.process.pid) // 1024))
        after = peak_kb(hrmd.process.pid)
        print("\n  " + "\n  ".join(report))
        self.assertLess(after - before, GROWTH_BOUND_KB,
                        "hrmd grew from %d MB to %d MB serving the worst cases:\n  %s"
                        % (before // 1024, after // 1024, "\n  ".join(report)))

