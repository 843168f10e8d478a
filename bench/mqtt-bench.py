#!/usr/bin/python3
"""MQTT benchmark: hrmd (release) publishing 20 mock straps at 4 Hz to a local mosquitto,
beside a peer that does the same job the way its users write one: a Python publisher on
paho-mqtt fed by `hrmctl watch --output json` on the same store (a file polled every 0.5 s,
hrmctl's default). Same run, same store, same broker, one subscriber receiving both.

    make bench-mqtt                                  # = /usr/bin/python3 bench/mqtt-bench.py
    MQTT_BENCH_SECONDS=60 MQTT_BENCH_STRAPS=20 MQTT_BENCH_HZ=4 /usr/bin/python3 bench/mqtt-bench.py

It prints, and writes to bench-out/mqtt/summary.json:
- latency p50/p99: a sample's start time (the frame's time) to the subscriber receiving its
  message, per publisher; the k-th message of a device is matched with the k-th stored sample
  of that device, and the values are checked to agree;
- CPU ms per 1000 published messages over a steady window: hrmd's whole process (it also
  decodes, stores and serves the feed), hrmd's extra CPU over a run without [mqtt] (the
  publisher's own cost), and the peer (its Python process and its hrmctl watch).

HRMD_BIN_DIR chooses the binaries (default .build/release).
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "Tests", "MQTT"))
os.environ.setdefault("HRMD_BIN_DIR", os.path.join(REPO, ".build", "release"))

import harness  # noqa: E402  (the tests' broker, subscriber and store helpers)

SECONDS = float(os.environ.get("MQTT_BENCH_SECONDS", "30"))
STRAPS = int(os.environ.get("MQTT_BENCH_STRAPS", "20"))
HZ = int(os.environ.get("MQTT_BENCH_HZ", "4"))
WARMUP_S = 5.0
TICKS = os.sysconf("SC_CLK_TCK")
OUT = os.path.join(REPO, "bench-out", "mqtt")

PEER = r'''
import json, sys
import paho.mqtt.client as mqtt

port = int(sys.argv[1])
client = mqtt.Client(client_id="peer-publisher", clean_session=True)
client.will_set("peer/bench/status", "offline", qos=1, retain=True)
client.connect("127.0.0.1", port, keepalive=30)
client.loop_start()
client.publish("peer/bench/status", "online", qos=1, retain=True)
for line in sys.stdin:
    sample = json.loads(line)
    device = sample["device"]["identifier"].lower().replace(":", "-")
    client.publish("peer/bench/%s/heart-rate" % device, str(sample["value"]), qos=1)
client.loop_stop()
'''


def cpu_seconds(pid):
    """User + system CPU of a process so far, in seconds."""
    with open("/proc/%d/stat" % pid) as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, int(round(fraction * (len(ordered) - 1)))))
    return ordered[index]


def parse_time(text):
    # 2026-11-26T07:21:30.073Z
    from datetime import datetime, timezone
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def latencies(received, stored, prefix):
    """Receive time minus sample start, matching each device's k-th message with its k-th
    stored sample; and how many matched values disagree."""
    by_device = {}
    for sample in stored:
        by_device.setdefault(sample["device"]["identifier"].lower(), []).append(sample)
    result, mismatches = [], 0
    for device, samples in by_device.items():
        topic = "%s/%s/heart-rate" % (prefix, device)
        messages = [message for message in received if message.topic == topic]
        for message, sample in zip(messages, samples):
            if abs(float(message.text) - sample["value"]) > 1e-9:
                mismatches += 1
            result.append(message.received - parse_time(sample["start"]))
    return result, mismatches


def sensors():
    return ["mock:id=strap-%02d,hz=%d,bpm=%d,seed=%d" % (index, HZ, 55 + index, index) for index in range(1, STRAPS + 1)]


class Plain:
    """hrmd with the same straps, writing as often as it does while a live reader is on (its
    live flush interval, 0.05 s), without [mqtt]: what recording alone costs."""

    def __init__(self, store):
        config = os.path.join(os.path.dirname(store.path), "plain.conf")
        with open(config, "w") as file:
            file.write("[hrmd]\nflush-interval = 0.05\n")
        argv = [os.path.join(harness.bin_dir(), "hrmd"), "--store", store.path, "--config", config]
        for sensor in sensors():
            argv += ["--sensor", sensor]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        self.process.terminate()
        self.process.wait(10)


def run(with_mqtt):
    work = tempfile.mkdtemp(prefix="hrmd-mqtt-bench-")
    try:
        store = harness.Store(work)
        store.grant("hrmd", "heart-rate")
        store.grant("hrmd/mqtt", "heart-rate", read=True)
        broker = harness.Broker(work)
        subscriber = harness.Subscriber(broker, ["hrmd/+/+/heart-rate", "peer/bench/+/heart-rate"])
        peer = watch = None
        if with_mqtt:
            watch = subprocess.Popen(
                [os.path.join(harness.bin_dir(), "hrmctl"), "watch", "--store", store.path, "--output", "json"],
                stdout=subprocess.PIPE)
            peer = subprocess.Popen(["/usr/bin/python3", "-c", PEER, str(broker.port)], stdin=watch.stdout)
            watch.stdout.close()
        # The baseline is the same hrmd without [mqtt] (and so without a live feed).
        hrmd = harness.Hrmd(work, store, broker.url, sensors=sensors(), gateway="bench") if with_mqtt else Plain(store)
        started = time.time()
        if with_mqtt:
            subscriber.wait_for(lambda m: m.topic.startswith("hrmd/"), 30, what="hrmd's first message")
            subscriber.wait_for(lambda m: m.topic.startswith("peer/"), 30, what="the peer's first message")
        # Steady window: after a warm-up, SECONDS long.
        harness.wait_until(lambda: time.time() >= started + WARMUP_S, WARMUP_S + 1, "the warm-up")
        window_start = time.time()
        cpu_start = {"hrmd": cpu_seconds(hrmd.process.pid)}
        if with_mqtt:
            cpu_start["peer"] = cpu_seconds(peer.pid) + cpu_seconds(watch.pid)
        harness.wait_until(lambda: time.time() >= window_start + SECONDS, SECONDS + 1, "the window")
        window_end = time.time()
        cpu = {"hrmd": cpu_seconds(hrmd.process.pid) - cpu_start["hrmd"]}
        if with_mqtt:
            cpu["peer"] = cpu_seconds(peer.pid) + cpu_seconds(watch.pid) - cpu_start["peer"]
        in_window = lambda prefix: len(subscriber.received(
            lambda m: m.topic.startswith(prefix) and window_start <= m.received < window_end))
        counts = {"hrmd": in_window("hrmd/"), "peer": in_window("peer/")}
        hrmd.stop()
        for process in (watch, peer):
            if process and process.poll() is None:
                process.terminate()
                process.wait(10)
        stored = store.samples()
        subscriber.stop()
        broker.stop()
        received = subscriber.received()
        return {"cpu": cpu, "counts": counts, "window_s": window_end - window_start, "stored": stored, "received": received}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    missing = harness.requirements()
    if missing:
        print("mqtt-bench: " + missing, file=sys.stderr)
        return 1
    print("mqtt-bench: %d mock straps at %d Hz, %.0f s windows, binaries in %s" % (STRAPS, HZ, SECONDS, harness.bin_dir()))
    baseline = run(with_mqtt=False)
    measured = run(with_mqtt=True)
    summary = {"straps": STRAPS, "hz": HZ, "window_s": round(measured["window_s"], 1)}
    hrmd_per_s_baseline = baseline["cpu"]["hrmd"] / baseline["window_s"]
    for name, prefix in (("hrmd", "hrmd/bench"), ("peer", "peer/bench")):
        lat, mismatches = latencies(measured["received"], measured["stored"], prefix)
        count = measured["counts"][name]
        entry = {
            "messages_in_window": count,
            "latency_ms_p50": round(percentile(lat, 0.50) * 1000, 1),
            "latency_ms_p99": round(percentile(lat, 0.99) * 1000, 1),
            "latency_samples": len(lat),
            "value_mismatches": mismatches,
            "cpu_ms_per_1000_messages": round(measured["cpu"][name] * 1000 / (count / 1000), 1) if count else None,
        }
        if name == "hrmd":
            extra = measured["cpu"]["hrmd"] - hrmd_per_s_baseline * measured["window_s"]
            entry["cpu_ms_per_1000_messages_over_baseline"] = round(extra * 1000 / (count / 1000), 1) if count else None
            entry["baseline_cpu_ms_per_s_without_mqtt"] = round(hrmd_per_s_baseline * 1000, 2)
        summary[name] = entry
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "summary.json"), "w") as file:
        json.dump(summary, file, indent=2)
    print("%-6s %10s %10s %10s %14s %18s" % ("", "messages", "p50 ms", "p99 ms", "CPU ms/1000", "over baseline"))
    for name in ("hrmd", "peer"):
        entry = summary[name]
        print("%-6s %10d %10.1f %10.1f %14s %18s" % (
            name, entry["messages_in_window"], entry["latency_ms_p50"], entry["latency_ms_p99"],
            entry["cpu_ms_per_1000_messages"], entry.get("cpu_ms_per_1000_messages_over_baseline", "")))
    print("value mismatches: hrmd %d, peer %d; summary in %s" % (
        summary["hrmd"]["value_mismatches"], summary["peer"]["value_mismatches"], os.path.join(OUT, "summary.json")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
