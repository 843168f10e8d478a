#!/usr/bin/python3
"""Alert benchmark: how soon after the reading that completes a rule (heart rate above 75 for
5 s) the alert reaches a subscribed MQTT client from hrmd's publisher, and the desktop from
`hrmctl notify`, with 20 mock straps at 4 Hz; beside a peer written as its users would write
one: a Python script that follows `hrmctl watch --type high-heart-rate-event --output json` on
the same store and publishes each event that opens to the same broker. Same rounds, same
store, same broker, one subscriber receiving both.

    make bench-alerts                                   # = /usr/bin/python3 bench/alert-bench.py
    ALERT_BENCH_ROUNDS=5 /usr/bin/python3 bench/alert-bench.py

Each round starts hrmd (release) on a fresh store with every strap over the threshold, so each
strap opens one event. The reading that completes the rule is the event's `latest` when it
opens (the end of the last reading it covers, in hrmd's attributes message); a latency is the
time a message arrives (the subscriber's clock; dbus-monitor's for the desktop) minus that.
hrmctl notify and the peer's hrmctl watch read the store file (every 0.25 s and 0.5 s, their
defaults being 1 s and 0.5 s); through the store service they would be signalled instead.
It prints p50/p99/max per path and writes bench-out/alerts/summary.json. HRMD_BIN_DIR chooses
the binaries (default .build/release).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "Tests", "MQTT"))
os.environ.setdefault("HRMD_BIN_DIR", os.path.join(REPO, ".build", "release"))

import harness  # noqa: E402  (the tests' broker, subscriber and store helpers)
from sessionbus import NotificationServer, SessionBus  # noqa: E402

ROUNDS = int(os.environ.get("ALERT_BENCH_ROUNDS", "5"))
STRAPS = int(os.environ.get("ALERT_BENCH_STRAPS", "20"))
HZ = 4
ROUND_TIMEOUT_S = 60
EVENT = "high-heart-rate-event"
CONFIG = "[alerts]\nhigh = 75\nhigh-for = 5s\nlow = 20\n"
OUT = os.path.join(REPO, "bench-out", "alerts")

PEER = r'''
import json, sys
import paho.mqtt.client as mqtt

client = mqtt.Client(client_id="peer-alerts", clean_session=True)
client.connect("127.0.0.1", int(sys.argv[1]), keepalive=30)
client.loop_start()
for line in sys.stdin:
    event = json.loads(line)
    if "end" not in event:
        client.publish("peer/bench/%s/alert" % event["device"], line.strip(), qos=1)
client.loop_stop()
'''


def parse_time(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def sensors():
    return ["mock:id=strap-%02d,hz=%d,bpm=90,contact-loss=0,seed=%d" % (index, HZ, index) for index in range(1, STRAPS + 1)]


class NotifyMonitor:
    """dbus-monitor on the session bus: the time of each Notify call and its body's first word
    (the strap)."""

    def __init__(self, bus):
        self.process = subprocess.Popen(
            ["dbus-monitor", "--address", bus.address, "interface='org.freedesktop.Notifications',member='Notify'"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.output = harness.Output(self.process.stdout)

    def calls(self):
        """(time, strap) of each Notify call so far."""
        lines = list(self.output.lines)
        calls = []
        for index, line in enumerate(lines):
            match = re.search(r"method call time=([0-9.]+) .*member=Notify", line)
            if not match:
                continue
            strings = [re.search(r'string "(.*)"', later).group(1) for later in lines[index + 1:index + 8] if 'string "' in later]
            if len(strings) >= 4:
                calls.append((float(match.group(1)), strings[3].split(",")[0]))  # app, icon, summary, body
        return calls

    def stop(self):
        self.process.terminate()
        self.process.wait(10)


def one_round(broker, bus, round_index):
    work = tempfile.mkdtemp(prefix="hrmd-alert-bench-")
    try:
        store = harness.Store(work)
        for source, read in (("hrmd", False), ("hrmd/mqtt", True)):
            store.grant(source, "heart-rate", read=read)
            store.grant(source, EVENT, read=read)
        prefix = "r%d" % round_index
        subscriber = harness.Subscriber(broker, ["hrmd/%s/+/%s" % (prefix, EVENT), "hrmd/%s/+/%s/attributes" % (prefix, EVENT),
                                                 "peer/bench/+/alert"])
        hrmctl = os.path.join(harness.bin_dir(), "hrmctl")
        watch = subprocess.Popen([hrmctl, "watch", "--type", EVENT, "--output", "json", "--store", store.path, "--interval", "0.5"],
                                 stdout=subprocess.PIPE)
        peer = subprocess.Popen(["/usr/bin/python3", "-c", PEER, str(broker.port)], stdin=watch.stdout)
        watch.stdout.close()
        notify = subprocess.Popen([hrmctl, "notify", "--type", EVENT, "--store", store.path, "--interval", "0.25"],
                                  env=dict(os.environ, DBUS_SESSION_BUS_ADDRESS=bus.address),
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        notified = harness.Output(notify.stdout)
        notified.wait_for_line("notifying of", 30)
        monitor = NotifyMonitor(bus)
        monitor.output.wait_for_line("NameAcquired", 30)  # dbus-monitor is on the bus and monitoring
        hrmd = harness.Hrmd(work, store, broker.url, sensors=sensors(), gateway=prefix, more_config=CONFIG)
        try:
            def complete():
                on = subscriber.received(lambda m: m.topic.endswith("/" + EVENT) and m.payload == b"ON")
                alerts = subscriber.received(lambda m: m.topic.startswith("peer/"))
                return len(on) >= STRAPS and len(alerts) >= STRAPS and len(monitor.calls()) >= STRAPS
            harness.wait_until(complete, ROUND_TIMEOUT_S, "every strap's alert on every path")
        finally:
            hrmd.stop()
            for process in (watch, peer, notify):
                process.terminate()
                process.wait(10)
            monitor.stop()
            subscriber.stop()
        latest = {}
        results = {"mqtt": [], "peer": [], "desktop": []}
        for message in subscriber.received(lambda m: m.topic.endswith("/attributes")):
            event = message.json()
            latest.setdefault(event["device"], parse_time(event["latest"]))
        for message in subscriber.received(lambda m: m.topic.endswith("/" + EVENT) and m.payload == b"ON"):
            device = message.topic.split("/")[2]
            results["mqtt"].append(message.received - latest[device])
        for message in subscriber.received(lambda m: m.topic.startswith("peer/")):
            event = message.json()
            results["peer"].append(message.received - latest[event["device"]])
        for when, device in monitor.calls():
            results["desktop"].append(when - latest[device])
        return results
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    missing = harness.requirements()
    if missing:
        print("alert-bench: " + missing, file=sys.stderr)
        return 1
    os.makedirs(OUT, exist_ok=True)
    work = tempfile.mkdtemp(prefix="hrmd-alert-broker-")
    broker = harness.Broker(work)
    bus = SessionBus()
    server = NotificationServer(bus)
    try:
        totals = {"mqtt": [], "peer": [], "desktop": []}
        for round_index in range(ROUNDS):
            for path, values in one_round(broker, bus, round_index).items():
                totals[path] += values
    finally:
        server.stop()
        bus.stop()
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)
    summary = {"straps": STRAPS, "hz": HZ, "rounds": ROUNDS}
    names = {"mqtt": "hrmd → MQTT (its publisher)", "peer": "peer: hrmctl watch → Python → MQTT",
             "desktop": "hrmctl notify → desktop"}
    for path, values in totals.items():
        summary[path] = {"events": len(values), "p50_ms": round(percentile(values, 0.5) * 1000, 1),
                         "p99_ms": round(percentile(values, 0.99) * 1000, 1), "max_ms": round(max(values) * 1000, 1)}
        print("%-40s %4d alerts  p50 %7.1f ms  p99 %7.1f ms  max %7.1f ms" % (
            names[path], len(values), summary[path]["p50_ms"], summary[path]["p99_ms"], summary[path]["max_ms"]))
    with open(os.path.join(OUT, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
