#!/usr/bin/env python3
"""A workout's figures checked against a second implementation written here with numpy, from the
counting rules in docs/workouts.md alone: a person's rowing session of twenty minutes over two
straps (swapped with another person halfway), with a lap, a pause, a gap in one strap's samples,
and the strap still recording after the end (the recovery). hrmctl computes active time, heart
rate, time in zones, laps, recovery and TRIMP; numpy computes them again from the same samples.

Runs the built hrmctl against a store file in a temporary folder. Run with the exports venv's
Python (make check-exports makes it): Tests/exports/test_workout_figures.py
"""

import datetime
import json
import math
import os
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pysupport"))
import builds  # noqa: E402

CALL_TIMEOUT_S = 60
BASE = datetime.datetime(2026, 11, 21, 8, 0, 0, tzinfo=datetime.timezone.utc).timestamp()
MAX_HR = 190.0
SWAP = 600.0          # ann takes strap B from strap A here (bob the other way)
START, END = 60.0, 1260.0
LAP, PAUSE, RESUME = 420.0, 700.0, 790.0
GAP = (900.0, 930.0)  # strap B sends nothing


def rfc3339(seconds):
    return datetime.datetime.fromtimestamp(BASE + seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def heart_rate(device, t):
    """An integer rate per strap that sweeps every zone."""
    phase, swing = (0.0, 55) if device == "strap-a" else (1.3, 48)
    return int(round(130 + swing * math.sin(t / 97 + phase)))


def samples():
    """{device: [(time s, bpm)]}: 1 Hz at half seconds from 0 to END + 120, B's gap left out."""
    out = {}
    for device in ("strap-a", "strap-b"):
        times = np.arange(0.5, END + 120, 1.0)
        if device == "strap-b":
            times = times[(times < GAP[0]) | (times >= GAP[1])]
        out[device] = [(float(t), heart_rate(device, t)) for t in times]
    return out


class WorkoutFigureTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory(prefix="hrmd-workout-figures-")
        cls.store = os.path.join(cls.directory.name, "s.sqlite")
        cls.samples = samples()
        trace = os.path.join(cls.directory.name, "session.trace.jsonl")
        with open(trace, "w") as f:
            f.write(json.dumps({"format": "hrmd-trace", "version": 1}) + "\n")
            for device, rows in cls.samples.items():
                for t, bpm in rows:
                    f.write(json.dumps({"t": rfc3339(t), "transport": "ble", "device": device, "kind": "notify",
                                        "characteristic": "2a37", "value": "00%02x" % bpm}) + "\n")
        cls.hrmctl("auth", "grant", "hrmd", "heart-rate")
        cls.hrmctl("replay", trace)
        cls.hrmctl("person", "add", "ann", "--max-hr", "190", "--sex", "female")
        cls.hrmctl("person", "add", "bob")
        cls.hrmctl("person", "assign", "ann", "strap-a", "--from", rfc3339(-3600), "--until", rfc3339(SWAP))
        cls.hrmctl("person", "assign", "bob", "strap-b", "--from", rfc3339(-3600), "--until", rfc3339(SWAP))
        cls.hrmctl("person", "assign", "ann", "strap-b", "--from", rfc3339(SWAP))
        cls.hrmctl("person", "assign", "bob", "strap-a", "--from", rfc3339(SWAP))
        workout = cls.hrmctl("workout", "start", "--person", "ann", "--activity", "rowing", "--at", rfc3339(START)).split()[-1]
        for event, t in (("lap", LAP), ("pause", PAUSE), ("resume", RESUME)):
            cls.hrmctl("workout", event, workout, "--at", rfc3339(t))
        cls.hrmctl("workout", "end", workout, "--at", rfc3339(END))
        cls.shown = json.loads(cls.hrmctl("workout", "show", workout, "--output", "json"))

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    @classmethod
    def hrmctl(cls, *arguments):
        return builds.hrmctl(*arguments, "--store", cls.store, timeout=CALL_TIMEOUT_S).stdout

    # The second implementation.

    def anns_samples(self):
        """ann's samples as the rules read them: per strap, within her assignment and from the
        start to the end + 66 s, each with how long it lasts (to the strap's next, at most 5 s;
        the last 1 s)."""
        ranges = {"strap-a": (-3600.0, SWAP), "strap-b": (SWAP, math.inf)}
        times, values, lasts = [], [], []
        for device, (lower, upper) in ranges.items():
            rows = np.array([row for row in self.samples[device]
                             if max(lower, START) <= row[0] < min(upper, END + 66)])
            t, v = rows[:, 0], rows[:, 1]
            last = np.minimum(np.diff(t, append=t[-1] + 1.0), 5.0)
            last[-1] = 1.0
            times.append(t), values.append(v), lasts.append(last)
        return np.concatenate(times), np.concatenate(values), np.concatenate(lasts)

    @staticmethod
    def active_overlap(t, last, spans):
        """Seconds of each [t, t + last) inside SPANS."""
        total = np.zeros_like(t)
        for lower, upper in spans:
            total += np.clip(np.minimum(t + last, upper) - np.maximum(t, lower), 0, None)
        return total

    def check_heart_rate(self, figures, t, v, spans):
        counted = np.zeros_like(t, dtype=bool)
        for lower, upper in spans:
            counted |= (t >= lower) & (t < upper)
        self.assertAlmostEqual(figures["average"], round(float(v[counted].mean()), 2), delta=0.006)
        self.assertEqual(figures["minimum"], float(v[counted].min()))
        self.assertEqual(figures["maximum"], float(v[counted].max()))

    def zone_seconds(self, t, v, last, spans, zones):
        seconds = self.active_overlap(t, last, spans)
        lowers = [zone["lower"] for zone in zones if zone["zone"] >= 1]
        index = np.searchsorted(np.array(lowers), v, side="right")  # 0 below zone 1, 5 from zone 5 on
        return {zone: float(seconds[index == zone].sum()) for zone in range(6)}

    def test_active_time_and_heart_rate(self):
        t, v, _ = self.anns_samples()
        spans = [(START, PAUSE), (RESUME, END)]
        self.assertAlmostEqual(self.shown["activeSeconds"], (PAUSE - START) + (END - RESUME), places=2)
        self.assertAlmostEqual(self.shown["elapsedSeconds"], END - START, places=2)
        self.check_heart_rate(self.shown["heartRate"], t, v, spans)

    def test_time_in_zones(self):
        zones = self.shown["zones"]
        self.assertEqual([zone["lower"] for zone in zones if zone["zone"] >= 1], [MAX_HR * f for f in (0.5, 0.6, 0.7, 0.8, 0.9)])
        t, v, last = self.anns_samples()
        expected = self.zone_seconds(t, v, last, [(START, PAUSE), (RESUME, END)], zones)
        for zone in zones:
            self.assertAlmostEqual(zone["seconds"], round(expected[zone["zone"]], 2), delta=0.011, msg="zone %d" % zone["zone"])
        self.assertGreater(min(expected[z] for z in range(1, 6)), 0, "the session sweeps every zone")

    def test_laps(self):
        t, v, last = self.anns_samples()
        laps = self.shown["laps"]
        self.assertEqual(len(laps), 2)
        for lap, spans in zip(laps, ([(START, LAP)], [(LAP, PAUSE), (RESUME, END)])):
            self.assertAlmostEqual(lap["activeSeconds"], sum(upper - lower for lower, upper in spans), places=2)
            self.check_heart_rate(lap["heartRate"], t, v, spans)
            expected = self.zone_seconds(t, v, last, spans, lap["zones"])
            for zone in lap["zones"]:
                self.assertAlmostEqual(zone["seconds"], round(expected[zone["zone"]], 2), delta=0.011)

    def test_recovery(self):
        t, v, _ = self.anns_samples()
        before = (t <= END) & (t >= END - 5)
        at_end = v[before][np.argmax(t[before])]
        near = np.abs(t - (END + 60))
        a_minute_later = v[np.argmin(near)]
        self.assertLessEqual(near.min(), 5)
        self.assertAlmostEqual(self.shown["recoveryOneMinute"], float(at_end - a_minute_later), places=2)

    def test_trimp(self):
        t, v, last = self.anns_samples()
        seconds = self.active_overlap(t, last, [(START, PAUSE), (RESUME, END)])
        reserve = np.clip((v - 60.0) / (MAX_HR - 60.0), 0, 1)
        trimp = float(np.sum(seconds / 60 * reserve * 0.64 * np.exp(1.67 * reserve)))
        self.assertAlmostEqual(self.shown["trimp"], round(trimp, 2), delta=0.011)

    def test_the_swapped_strap_counts_for_its_wearer_only(self):
        # Strap A after the swap is bob's: had it counted, ann's maximum would be strap A's.
        a_after = [bpm for t, bpm in self.samples["strap-a"] if SWAP <= t < END]
        b_after = [bpm for t, bpm in self.samples["strap-b"] if SWAP <= t < END and not (PAUSE <= t < RESUME)]
        self.assertNotEqual(max(a_after), max(b_after))
        self.assertEqual(self.shown["laps"][1]["heartRate"]["maximum"], float(max(b_after)))


if __name__ == "__main__":
    program = unittest.main(exit=False, verbosity=2)
    result = program.result
    failed = len(result.failures) + len(result.errors)
    print("%d passed, %d failed, %d skipped" % (result.testsRun - failed - len(result.skipped), failed, len(result.skipped)))
    sys.exit(1 if failed else 0)
