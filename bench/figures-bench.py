#!/usr/bin/env python3
"""make bench-figures: what hrmd's figures cost and whether a second implementation agrees.

A day of four straps at 1 Hz (heart rate and one RR interval a notification, a workout each in
the evening) is replayed with `hrmctl replay` (release), which works out the resting heart
rates, SDNN windows and recoveries as it stores the readings. Beside it, in the same run, the
peer a user would write: `hrmctl export --format csv` of the day's heart rate and RR intervals,
then Python computing the same figures by the rules of docs/figures.md. Printed: the replay's
time and the peer's (export and computation apart), and how far the peer's figures are from
hrmd's (resting heart rate in count/min, SDNN in ms), which the issue bounds by 1 and 1.
"""

import argparse
import csv
import datetime
import io
import json
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

STRAPS = 4
DAY = datetime.datetime(2026, 11, 20, tzinfo=datetime.timezone.utc)
WORKOUT = (18 * 3600, 19 * 3600)
FIGURES = ["resting-heart-rate", "heart-rate-recovery-one-minute", "heart-rate-variability-sdnn"]


def binary(name):
    return os.path.join(os.environ.get("HRMD_BIN_DIR", ".build/release"), name)


def hrmctl(*arguments, env=None):
    done = subprocess.run([binary("hrmctl"), *arguments], capture_output=True, text=True, env=env, timeout=1800)
    if done.returncode != 0:
        sys.exit("hrmctl %s failed: %s" % (" ".join(arguments[:2]), done.stderr.strip()))
    return done.stdout


def heart_rate(strap, second, rng):
    """A plausible day: low at night, higher by day, the evening workout and its recovery."""
    hour = second / 3600
    base = 54 + strap * 2 if hour < 7 else 72 + 6 * math.sin(hour)
    if WORKOUT[0] <= second < WORKOUT[1]:
        base = 150
    elif WORKOUT[1] <= second < WORKOUT[1] + 600:
        base = 150 - 60 * (second - WORKOUT[1]) / 600
    return max(35, min(220, round(base + rng.gauss(0, 2))))


def write_trace(path):
    rng = random.Random(20261120)
    with open(path, "w") as out:
        out.write('{"format":"hrmd-trace","version":1}\n')
        for second in range(86_400):
            time_ = (DAY + datetime.timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
            for strap in range(STRAPS):
                bpm = heart_rate(strap, second, rng)
                rr = max(300, min(2000, 60_000 / bpm + rng.gauss(0, 25)))
                units = round(rr * 1024 / 1000)
                out.write('{"t":"%s","transport":"ble","device":"strap-%d","kind":"notify","characteristic":"2a37",'
                          '"value":"16%02x%02x%02x"}\n' % (time_, strap, bpm, units & 0xFF, units >> 8))


def export(store, type_):
    return hrmctl("export", "--store", store, "--format", "csv", "--type", type_,
                  "--since", DAY.isoformat().replace("+00:00", "Z"),
                  "--until", (DAY + datetime.timedelta(days=1)).isoformat().replace("+00:00", "Z"))


def micros(text):
    return round(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1_000_000)


def peer_figures(heart_csv, rr_csv):
    """The peer: resting heart rate per strap (5-minute windows with 240 covered seconds, at
    least 12, the lowest mean; workouts and the half hour after left out) and SDNN per
    5-minute window (normal intervals 300–2000 ms, at least 100 summing to 240 s)."""
    day = round(DAY.timestamp() * 1_000_000)
    excluded = (day + WORKOUT[0] * 1_000_000, day + WORKOUT[1] * 1_000_000 + 1800 * 1_000_000)
    windows = {}
    for row in csv.DictReader(io.StringIO(heart_csv)):
        start = micros(row["start"])
        if excluded[0] <= start < excluded[1]:
            continue
        offset = start - day
        window = windows.setdefault((row["device"], offset // 300_000_000), [set(), 0.0, 0])
        window[0].add(offset // 1_000_000)
        window[1] += float(row["value"])
        window[2] += 1
    resting = {}
    for (device, _), (seconds, total, count) in sorted(windows.items()):
        if len(seconds) >= 240:
            resting.setdefault(device, []).append(total / count)
    resting = {device: min(levels) for device, levels in resting.items() if len(levels) >= 12}
    beats = {}
    for row in csv.DictReader(io.StringIO(rr_csv)):
        value = float(row["value"])
        if 300 <= value <= 2000:
            beats.setdefault((row["device"], micros(row["end"]) // 300_000_000), []).append(value)
    sdnn = {}
    for key, values in beats.items():
        if len(values) >= 100 and sum(values) >= 240_000:
            mean = sum(values) / len(values)
            sdnn[key] = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    return resting, sdnn


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the figures here")
    arguments = parser.parse_args()
    work = tempfile.mkdtemp(prefix="hrmd-figures-bench-")
    try:
        env = dict(os.environ, TZ="UTC")
        os.environ["TZ"] = "UTC"
        trace = os.path.join(work, "day.trace.jsonl")
        write_trace(trace)
        store = os.path.join(work, "day.sqlite")
        hrmctl("auth", "grant", "hrmd", "heart-rate", "rr-interval", *FIGURES, "--store", store)
        for strap in range(STRAPS):
            started = hrmctl("workout", "start", "--device", "strap-%d" % strap, "--at",
                             (DAY + datetime.timedelta(seconds=WORKOUT[0])).isoformat().replace("+00:00", "Z"), "--store", store)
            hrmctl("workout", "end", started.splitlines()[-1], "--at",
                   (DAY + datetime.timedelta(seconds=WORKOUT[1])).isoformat().replace("+00:00", "Z"), "--store", store)

        wall, cpu = time.monotonic(), children_cpu()
        hrmctl("replay", "--store", store, trace, env=env)
        replay = (time.monotonic() - wall, children_cpu() - cpu)

        wall, cpu = time.monotonic(), children_cpu()
        heart_csv, rr_csv = export(store, "heart-rate"), export(store, "rr-interval")
        exported = (time.monotonic() - wall, children_cpu() - cpu)
        wall = time.monotonic()
        resting, sdnn = peer_figures(heart_csv, rr_csv)
        computed = time.monotonic() - wall

        ours_resting = {row["device"]: float(row["value"]) for row in csv.DictReader(io.StringIO(export(store, "resting-heart-rate")))}
        ours_sdnn = {(row["device"], micros(row["start"]) // 300_000_000): float(row["value"])
                     for row in csv.DictReader(io.StringIO(export(store, "heart-rate-variability-sdnn")))}
        recoveries = len(list(csv.DictReader(io.StringIO(export(store, "heart-rate-recovery-one-minute")))))
        resting_gap = max(abs(resting[d] - ours_resting.get(d, float("inf"))) for d in resting) if resting else float("inf")
        shared = set(sdnn) & set(ours_sdnn)
        sdnn_gap = max(abs(sdnn[k] - ours_sdnn[k]) for k in shared) if shared else float("inf")
        lines = 86_400 * STRAPS
        result = {
            "frames": lines,
            "replay_seconds": round(replay[0], 2), "replay_cpu_seconds": round(replay[1], 2),
            "peer_export_seconds": round(exported[0], 2), "peer_compute_seconds": round(computed, 2),
            "resting": {"hrmd": ours_resting, "peer": resting, "largest_difference_bpm": resting_gap},
            "sdnn_windows": {"hrmd": len(ours_sdnn), "peer": len(sdnn), "both": len(shared), "largest_difference_ms": sdnn_gap},
            "recoveries": recoveries,
        }
        print("figures: a day of %d straps at 1 Hz (%d frames)" % (STRAPS, lines))
        print("  hrmctl replay (stores the readings, finds events, works out the figures): %.2f s, %.2f s CPU (%.0f frames/s)"
              % (replay[0], replay[1], lines / replay[0]))
        print("  peer: hrmctl export of heart rate and RR %.2f s, %.2f s CPU; Python figures %.2f s" % (exported[0], exported[1], computed))
        print("  resting heart rate: hrmd %s; peer %s; largest difference %.3f count/min"
              % (json.dumps(ours_resting, sort_keys=True), json.dumps({d: round(v, 2) for d, v in sorted(resting.items())}), resting_gap))
        print("  SDNN windows: hrmd %d, peer %d, %d in both; largest difference %.4f ms" % (len(ours_sdnn), len(sdnn), len(shared), sdnn_gap))
        print("  recoveries: %d (one per workout)" % recoveries)
        if arguments.json:
            with open(arguments.json, "w") as out:
                json.dump(result, out, indent=2)
        if resting_gap > 1 or sdnn_gap > 1 or len(shared) != len(sdnn) or len(shared) != len(ours_sdnn):
            sys.exit("figures-bench: hrmd's figures and the peer's disagree beyond 1 count/min or 1 ms")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
