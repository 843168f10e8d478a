#!/usr/bin/env python3
"""A strap's ECG and acceleration, end to end: hrmd records a mock strap that streams both over
PMD (mock:ecg=on,acc=on) into a store file, with a trace of every frame it received. The values
the strap sent are taken from that trace by `hrmctl decode --pmd` alone (the decoder, not the
store); `hrmctl ecg export` writes each recording as EDF+, WFDB, CSV and FHIR, and each file is
read back by its format's own reader (Tests/exports/check_waveform_file.py: pyedflib, wfdb,
csv, fhir.resources) to exactly those values at their times. Without share authorization
nothing is recorded. Bad arguments get one line and the documented exit status.

Run with the venv's Python (make check-exports makes it): Tests/exports/test_ecg_files.py
"""

import datetime
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pysupport"))
from builds import binary  # noqa: E402

CALL_TIMEOUT_S = 60
CHECKER = os.path.join(HERE, "check_waveform_file.py")
CHANNELS = {"electrocardiogram": ["ECG"], "acceleration": ["X", "Y", "Z"]}


def nanoseconds(text):
    moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return (moment - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)) // datetime.timedelta(microseconds=1) * 1000


class ECGFileTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory(prefix="hrmd-ecg-files-")
        cls.store = os.path.join(cls.directory.name, "s.sqlite")
        cls.traces = os.path.join(cls.directory.name, "traces")
        os.mkdir(cls.traces)
        cls.hrmctl("auth", "grant", "hrmd", "heart-rate", "electrocardiogram", "acceleration")
        subprocess.run([binary("hrmd"), "--store", cls.store, "--record", cls.traces,
                        "--sensor", "mock:id=h10,hz=4,contact-loss=0,ecg=on,acc=on", "--duration", "5"],
                       check=True, capture_output=True, timeout=CALL_TIMEOUT_S)
        cls.recordings = {}
        for line in cls.hrmctl("ecg", "list", "--output", "json").splitlines():
            recording = json.loads(line)
            cls.recordings[recording["type"]] = recording
        cls.sent = cls.decoded_from_trace()

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    @classmethod
    def hrmctl(cls, *arguments, store=None, check=True):
        result = subprocess.run([binary("hrmctl")] + list(arguments) + ["--store", store or cls.store],
                                capture_output=True, text=True, timeout=CALL_TIMEOUT_S)
        if check and result.returncode != 0:
            raise AssertionError("hrmctl %s: exit %d: %s" % (" ".join(arguments), result.returncode, result.stderr))
        return result.stdout if check else result

    @classmethod
    def decoded_from_trace(cls):
        """Per waveform type, the values of every PMD data frame the strap sent, in order."""
        sent = {"electrocardiogram": [], "acceleration": []}
        frames = []
        for path in sorted(glob.glob(os.path.join(cls.traces, "*.trace.jsonl"))):
            with open(path) as trace:
                for line in trace:
                    entry = json.loads(line)
                    if entry.get("kind") == "notify" and entry.get("characteristic") == "5c82":
                        frames.append(entry["value"])
        for value in frames:
            result = subprocess.run([binary("hrmctl"), "decode", "--pmd", value], capture_output=True, text=True,
                                    timeout=CALL_TIMEOUT_S, check=True)
            for line in result.stdout.splitlines():
                frame = json.loads(line)
                if frame["type"] == "ecg":
                    sent["electrocardiogram"] += frame["microvolts"]
                elif frame["type"] == "acc":
                    for axes in frame["millig"]:
                        sent["acceleration"] += axes
        return sent

    def test_recorded_as_sent(self):
        ecg = self.recordings["electrocardiogram"]
        acc = self.recordings["acceleration"]
        self.assertEqual(ecg["frequency"], 130)
        self.assertEqual(ecg["channels"], ["ecg"])
        self.assertEqual(acc["channels"], ["x", "y", "z"])
        self.assertFalse(ecg["open"], "hrmd's stop ends the recording")
        # About five seconds of both.
        self.assertGreater(ecg["instants"], 3 * 130)
        self.assertGreater(acc["instants"], 3 * 50)
        self.assertEqual(ecg["instants"], len(self.sent["electrocardiogram"]))
        self.assertEqual(acc["instants"] * 3, len(self.sent["acceleration"]))

    def exported(self, kind, form, name):
        recording = self.recordings[kind]
        path = os.path.join(self.directory.name, name)
        self.hrmctl("ecg", "export", recording["id"], "--format", form, "-o", path)
        expect = os.path.join(self.directory.name, name + ".expect.json")
        with open(expect, "w") as file:
            json.dump({"frequency": recording["frequency"], "channels": CHANNELS[kind], "exact": True,
                       "segments": [{"start_ns": nanoseconds(recording["start"]), "samples": self.sent[kind]}]}, file)
        return path, expect

    def check(self, form, path, expect):
        result = subprocess.run([sys.executable, CHECKER, "--format", form, path, "--expect", expect],
                                capture_output=True, text=True, timeout=CALL_TIMEOUT_S)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_every_format_reads_back_what_the_strap_sent(self):
        for kind in ("electrocardiogram", "acceleration"):
            for form, name in (("edf", "%s.edf"), ("wfdb", "%s.hea"), ("csv", "%s.csv"), ("fhir", "%s.fhir.json")):
                with self.subTest(kind=kind, form=form):
                    path, expect = self.exported(kind, form, name % kind)
                    self.check(form, path, expect)

    def test_a_strap_and_a_range(self):
        """--device with --since and --until exports the strap's recordings over the range."""
        recording = self.recordings["electrocardiogram"]
        path = os.path.join(self.directory.name, "range.csv")
        self.hrmctl("ecg", "export", "--device", "h10", "--since", recording["start"], "--until", recording["end"],
                    "--format", "csv", "-o", path)
        with open(path) as file:
            rows = file.read().splitlines()
        self.assertEqual(rows[0], "time,ecg_uv")
        self.assertEqual([int(row.split(",")[1]) for row in rows[1:]], self.sent["electrocardiogram"])

    def test_replayed_trace_gives_the_same_recordings(self):
        """hrmd's trace replayed into an empty store records the same samples; replayed again, nothing new."""
        store = os.path.join(self.directory.name, "replayed.sqlite")
        self.hrmctl("auth", "grant", "hrmd", "heart-rate", "electrocardiogram", "acceleration", store=store)
        traces = sorted(glob.glob(os.path.join(self.traces, "*.trace.jsonl")))
        for _ in range(2):
            for trace in traces:
                self.hrmctl("replay", trace, store=store)
            replayed = {}
            for line in self.hrmctl("ecg", "list", "--output", "json", store=store).splitlines():
                recording = json.loads(line)
                replayed[recording["type"]] = recording
            self.assertEqual(sorted(replayed), ["acceleration", "electrocardiogram"])
            for kind, recording in replayed.items():
                self.assertEqual(recording["instants"], self.recordings[kind]["instants"], kind)
                self.assertEqual(recording["id"], self.recordings[kind]["id"], "the same readings make the same id")
        path = os.path.join(self.directory.name, "replayed.csv")
        self.hrmctl("ecg", "export", replayed["electrocardiogram"]["id"], "--format", "csv", "-o", path, store=store)
        with open(path) as file:
            self.assertEqual([int(row.split(",")[1]) for row in file.read().splitlines()[1:]], self.sent["electrocardiogram"])

    def test_without_a_grant_nothing_is_recorded(self):
        store = os.path.join(self.directory.name, "denied.sqlite")
        self.hrmctl("auth", "grant", "hrmd", "heart-rate", store=store)
        result = subprocess.run([binary("hrmd"), "--store", store, "--sensor", "mock:id=h10,contact-loss=0,ecg=on",
                                 "--duration", "3"], capture_output=True, text=True, timeout=CALL_TIMEOUT_S)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("may not share electrocardiogram", result.stderr)
        self.assertEqual(self.hrmctl("ecg", "list", store=store).strip(), "no recordings")
        self.assertNotEqual(self.hrmctl("samples", "--type", "heart-rate", "--output", "json", store=store).strip(), "")

    def test_bad_arguments(self):
        cases = [
            (["ecg", "export", "--format", "csv", "-o", "x.csv"], 64),
            (["ecg", "export", "--device", "h10", "--format", "csv", "-o", "x.csv"], 64),
            (["ecg", "export", "no-such-id", "--format", "edf", "-o", os.path.join(self.directory.name, "x.edf")], 64),
            (["ecg", "list", "--type", "heart-rate"], 64),
        ]
        for arguments, status in cases:
            with self.subTest(arguments=arguments):
                result = self.hrmctl(*arguments, check=False)
                self.assertEqual(result.returncode, status, result.stderr)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
