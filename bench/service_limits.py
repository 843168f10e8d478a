#!/usr/bin/python3
"""What hrmd --serve needs at its documented load, for the unit's MemoryMax=, TasksMax= and
LimitNOFILE=: 20 mock straps at 4 Hz, and 600 QuerySamples calls in flight at once (six users,
100 connections each, every connection asking again as soon as it is answered), on a private
system-like bus with the shipped policy. Samples hrmd's /proc/PID/status and fd/ five times a
second and prints the peaks: resident memory (VmHWM), threads, open descriptors.

Run as root after a build: /usr/bin/python3 bench/service_limits.py [SECONDS]
HRMD_BIN_DIR chooses the hrmd (default .build/release when built, else .build/debug).
"""

import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "Tests", "HealthService"))
if "HRMD_BIN_DIR" not in os.environ and os.path.exists(os.path.join(REPO, ".build", "release", "hrmd")):
    os.environ["HRMD_BIN_DIR"] = os.path.join(REPO, ".build", "release")

import harness  # noqa: E402

STRAPS = 20
USERS = [harness.NOBODY, harness.NAMELESS, (1, 1), (2, 2), (3, 3), (0, 0)]  # root, daemon, bin, sys among them
CONNECTIONS_PER_USER = 100


class Peaks:
    def __init__(self, pid):
        self.pid = pid
        self.rss_kib = self.threads = self.fds = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop.wait(0.2):
            try:
                with open("/proc/%d/status" % self.pid) as status:
                    fields = dict(line.split(":", 1) for line in status if ":" in line)
                self.rss_kib = max(self.rss_kib, int(fields["VmHWM"].split()[0]))
                self.threads = max(self.threads, int(fields["Threads"]))
                self.fds = max(self.fds, len(os.listdir("/proc/%d/fd" % self.pid)))
            except (OSError, KeyError, ValueError):
                return


LOAD = """
clients = [dbus.Interface(dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"]).get_object(
    "org.hrmd.Health", "/org/hrmd/Health", introspect=False), "org.hrmd.Health1") for _ in range(%d)]
counts = {"answers": 0, "errors": {}}
loop = GLib.MainLoop()
end = time.monotonic() + %d
def ask(client):
    if time.monotonic() >= end:
        return
    def done(*_):
        counts["answers"] += 1
        ask(client)
    def failed(error):
        counts["errors"][error.get_dbus_name()] = counts["errors"].get(error.get_dbus_name(), 0) + 1
        ask(client)
    client.QuerySamples("limits", "heart-rate", dbus.Int64(NO_LOW), dbus.Int64(NO_HIGH), dbus.UInt32(100),
                        signature="ssxxu", reply_handler=done, error_handler=failed, timeout=60)
for client in clients:
    ask(client)
GLib.timeout_add_seconds(%d, loop.quit)
loop.run()
out(counts)
"""


def main():
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    missing = harness.requirements()
    if missing:
        sys.exit("service_limits: " + missing)
    bus = harness.SystemLikeBus()
    polkit = harness.PolkitMock(bus)
    sensors = ["mock:hz=4,contact-loss=0,id=m%d,seed=%d" % (n, n) for n in range(STRAPS)]
    hrmd = harness.Hrmd(bus, sensors=sensors)
    try:
        hrmd.proxy().SetAuthorization("hrmd", "heart-rate", "share", "sharingAuthorized", timeout=harness.CALL_TIMEOUT_S)
        peaks = Peaks(hrmd.process.pid)
        time.sleep(2)
        idle = (peaks.rss_kib, peaks.threads, peaks.fds)
        loads = [harness.background_snippet_as(user, bus, LOAD % (CONNECTIONS_PER_USER, seconds, seconds + 60))
                 for user in USERS]
        results = [load.finish(timeout=seconds + 90) for load in loads]
        peaks.stop.set()
        answers = sum(harness.json.loads(lines[-1])["answers"] for status, lines, _ in results if status == 0 and lines)
        errors = {}
        for status, lines, stderr in results:
            if status != 0 or not lines:
                errors["client failed"] = errors.get("client failed", 0) + 1
                continue
            for name, count in harness.json.loads(lines[-1])["errors"].items():
                errors[name] = errors.get(name, 0) + count
        print("hrmd --serve, %d mock straps at 4 Hz, %d QuerySamples in flight (%d users x %d connections), %d s"
              % (STRAPS, len(USERS) * CONNECTIONS_PER_USER, len(USERS), CONNECTIONS_PER_USER, seconds))
        print("  idle (straps only):  peak RSS %.1f MB, %d threads, %d descriptors" % (idle[0] / 1024, idle[1], idle[2]))
        print("  under the load:      peak RSS %.1f MB, %d threads, %d descriptors" % (peaks.rss_kib / 1024, peaks.threads, peaks.fds))
        print("  answers %d (%.0f a second), errors %s" % (answers, answers / seconds, errors or "none"))
    finally:
        hrmd.stop()
        polkit.stop()
        bus.stop()


if __name__ == "__main__":
    main()
