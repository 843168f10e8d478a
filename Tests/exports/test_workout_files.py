#!/usr/bin/env python3
"""A workout's files checked by their formats' own validators: the FIT activity
`hrmctl workout export --format fit` writes is read by Garmin's FIT SDK (integrity, no decoding
error, the messages an activity needs) and by fitdecode (CRCs checked); the TCX file is valid
against Garmin's Training Center Database v2 schema; the FHIR Bundle is one fhir.resources (R4)
accepts, the workout an Encounter of its person. Both say what the workout says: its laps,
its pause, its sport, its heart rate. A FIT file exported and replayed into an empty store gives
the workout and its samples back.

Runs the built hrmd (a mock strap) and hrmctl against a store file in a temporary folder. Run
with the venv's Python (make check-exports makes it): Tests/exports/test_workout_files.py
"""

import datetime
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pysupport"))
import builds  # noqa: E402
from builds import binary  # noqa: E402

import fitdecode  # noqa: E402
from garmin_fit_sdk import Decoder, Stream  # noqa: E402
from fhir.resources.bundle import Bundle  # noqa: E402
from lxml import etree  # noqa: E402

CALL_TIMEOUT_S = 60
SCHEMA = os.path.join(HERE, "TrainingCenterDatabasev2.xsd")
TCX = "{http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2}"


class WorkoutFileTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory(prefix="hrmd-workout-files-")
        cls.store = os.path.join(cls.directory.name, "s.sqlite")
        cls.hrmctl("auth", "grant", "hrmd", "heart-rate")
        cls.hrmctl("auth", "grant", "hrmd", "rr-interval")
        cls.hrmctl("person", "add", "ann", "--max-hr", "190", "--sex", "female", "--weight", "60", "--birth-year", "1990")
        cls.hrmctl("person", "assign", "ann", "wf", "--from", "1h")
        # A workout that started two minutes ago, with a lap, a pause and its resume, recorded
        # by a mock strap for three seconds, then ended.
        cls.id = cls.hrmctl("workout", "start", "--person", "ann", "--activity", "cycling", "--at", "2m").splitlines()[-1]
        cls.hrmctl("workout", "lap", cls.id, "--at", "90s")
        cls.hrmctl("workout", "pause", cls.id, "--at", "80s")
        cls.hrmctl("workout", "resume", cls.id, "--at", "70s")
        subprocess.run([binary("hrmd"), "--store", cls.store, "--sensor", "mock:id=wf,hz=4,contact-loss=0,rr=on", "--duration", "3"],
                       check=True, capture_output=True, timeout=CALL_TIMEOUT_S)
        cls.hrmctl("workout", "end", cls.id)
        cls.shown = json.loads(cls.hrmctl("workout", "show", cls.id, "--output", "json"))

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    @classmethod
    def hrmctl(cls, *arguments):
        return builds.hrmctl(*arguments, "--store", cls.store, timeout=CALL_TIMEOUT_S).stdout

    def export(self, format_):
        path = os.path.join(self.directory.name, "workout." + format_)
        self.hrmctl("workout", "export", self.id, "--format", format_, "-o", path)
        return path

    def test_the_fit_activity_is_what_garmins_sdk_and_fitdecode_read(self):
        path = self.export("fit")
        decoder = Decoder(Stream.from_file(path))
        self.assertTrue(decoder.is_fit())
        self.assertTrue(decoder.check_integrity(), "the header or file CRC is wrong")
        messages, errors = Decoder(Stream.from_file(path)).read()
        self.assertEqual(errors, [])
        for kind in ("file_id_mesgs", "event_mesgs", "record_mesgs", "lap_mesgs", "session_mesgs", "activity_mesgs"):
            self.assertIn(kind, messages)
        self.assertEqual(messages["file_id_mesgs"][0]["type"], "activity")
        session = messages["session_mesgs"][0]
        self.assertEqual(session["sport"], "cycling")
        self.assertEqual(session["num_laps"], 2)
        self.assertAlmostEqual(session["total_elapsed_time"], self.shown["elapsedSeconds"], delta=0.01)
        self.assertAlmostEqual(session["total_timer_time"], self.shown["activeSeconds"], delta=0.01)
        self.assertEqual(session["avg_heart_rate"], round(self.shown["heartRate"]["average"]))
        self.assertEqual(len(messages["lap_mesgs"]), 2)
        records = messages["record_mesgs"]
        self.assertTrue(all(1 <= record["heart_rate"] <= 254 for record in records))
        timers = [(event["event"], event["event_type"]) for event in messages["event_mesgs"]]
        self.assertEqual(timers, [("timer", "start"), ("timer", "stop_all"), ("timer", "start"), ("timer", "stop_all")])
        times = [record["timestamp"] for record in records]
        self.assertEqual(times, sorted(times))
        self.assertGreater(len(records), 0)
        # The RR intervals of the active time, five to an hrv message (0xFFFF pads the last).
        beats = [value for message in messages.get("hrv_mesgs", []) for value in message["time"] if value is not None]
        stored = [json.loads(line)["value"] for line in
                  self.hrmctl("samples", "--type", "rr-interval", "--since", "10m", "--output", "json").splitlines()]
        self.assertGreater(len(beats), 0, "no hrv messages")
        self.assertEqual(len(beats), len(stored), "every RR interval of the workout (all came after the resume)")
        self.assertEqual([round(b * 1000) for b in beats], [round(v) for v in stored])
        with fitdecode.FitReader(path, check_crc=fitdecode.CrcCheck.ENABLED) as reader:
            names = [frame.name for frame in reader if isinstance(frame, fitdecode.FitDataMessage)]
        self.assertEqual(names.count("record"), len(records))
        self.assertEqual(names[0], "file_id")
        self.assertEqual(names[-1], "activity")
        # The validator is not blind: one flipped byte fails its integrity check.
        with open(path, "rb") as f:
            damaged = bytearray(f.read())
        damaged[len(damaged) // 2] ^= 0x01
        self.assertFalse(Decoder(Stream.from_byte_array(damaged)).check_integrity())

    def test_the_tcx_file_is_valid_against_the_schema(self):
        path = self.export("tcx")
        schema = etree.XMLSchema(etree.parse(SCHEMA))
        document = etree.parse(path)
        self.assertTrue(schema.validate(document), str(schema.error_log))
        activity = document.find(".//%sActivity" % TCX)
        self.assertEqual(activity.get("Sport"), "Biking")
        laps = activity.findall("%sLap" % TCX)
        self.assertEqual(len(laps), 2)
        # The samples were recorded after the resume: all in the second lap's one track.
        self.assertEqual(len(laps[0].findall("%sTrack" % TCX)), 0)
        self.assertEqual(len(laps[1].findall("%sTrack" % TCX)), 1)
        points = document.findall(".//%sTrackpoint" % TCX)
        self.assertGreater(len(points), 0)
        total = sum(float(lap.find("%sTotalTimeSeconds" % TCX).text) for lap in laps)
        self.assertAlmostEqual(total, self.shown["activeSeconds"], delta=0.01)

    def test_the_fhir_bundle_is_valid_and_is_the_persons_encounter(self):
        with open(self.export("fhir")) as f:
            text = f.read()
        self.assertEqual(Bundle.parse_raw(text).type, "collection")  # raises on anything R4 does not allow
        entries = json.loads(text)["entry"]
        by_type = {}
        for entry in entries:
            by_type.setdefault(entry["resource"]["resourceType"], []).append(entry)
        (patient,) = by_type["Patient"]
        self.assertEqual(patient["resource"]["name"][0]["text"], "ann")
        self.assertEqual((patient["resource"]["gender"], patient["resource"]["birthDate"]), ("female", "1990"))
        (encounter,) = by_type["Encounter"]
        self.assertEqual(encounter["fullUrl"], "urn:uuid:" + self.id)
        self.assertEqual(encounter["resource"]["status"], "finished")
        self.assertEqual(encounter["resource"]["type"][0]["text"], "cycling")
        self.assertEqual(encounter["resource"]["subject"]["reference"], patient["fullUrl"])
        self.assertAlmostEqual(encounter["resource"]["length"]["value"], self.shown["activeSeconds"] / 60, delta=0.001)
        observations = [entry["resource"] for entry in by_type["Observation"]]
        codes = [o["code"]["coding"][0]["code"] for o in observations]
        self.assertEqual(codes.count("55411-3"), 1)
        heart = [o for o in observations if o["code"]["coding"][0]["code"] == "8867-4"]
        self.assertGreater(len(heart), 0)
        self.assertTrue(all(o["encounter"]["reference"] == encounter["fullUrl"] and o["subject"]["reference"] == patient["fullUrl"]
                            for o in observations))
        with open(self.export("json")) as f:
            samples = json.load(f)["samples"]
        self.assertEqual([o["valueQuantity"]["value"] for o in heart], [s["value"] for s in samples],
                         "every sample of the active time (the samples came after the resume)")
        # The validator is not blind: an Encounter without its class (required in R4) is refused.
        broken = json.loads(text)
        del broken["entry"][1]["resource"]["class"]
        with self.assertRaises(Exception):
            Bundle.parse_obj(broken)

    def test_the_json_file_is_the_workout_with_its_samples(self):
        with open(self.export("json")) as f:
            document = json.load(f)
        self.assertEqual(document["id"], self.id)
        self.assertEqual(document["laps"], self.shown["laps"])
        self.assertGreater(len(document["samples"]), 0)
        start = datetime.datetime.fromisoformat(document["start"].replace("Z", "+00:00"))
        self.assertTrue(all(datetime.datetime.fromisoformat(s["time"].replace("Z", "+00:00")) >= start for s in document["samples"]))

    def test_an_open_workout_is_not_exported(self):
        opened = self.hrmctl("workout", "start", "--device", "wf-free").splitlines()[-1]
        result = builds.hrmctl("workout", "export", opened, "--format", "fit", "-o", os.path.join(self.directory.name, "open.fit"),
                               "--store", self.store, timeout=CALL_TIMEOUT_S, check=False)
        self.assertEqual(result.returncode, 64, result.stderr)
        self.assertIn("open", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.directory.name, "open.fit")))


class FITRoundTripTests(unittest.TestCase):
    """A workout hrmd exported as FIT and replayed into an empty store comes back whole: the same
    activity, start, end, laps and pauses, and the same samples (whole count/min at whole
    seconds, as FIT keeps them) inside its active time. Replayed again, nothing is new."""

    START = datetime.datetime(2026, 11, 20, 9, 0, 0, tzinfo=datetime.timezone.utc)

    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory(prefix="hrmd-fit-round-trip-")
        cls.original = os.path.join(cls.directory.name, "original.sqlite")
        cls.copy = os.path.join(cls.directory.name, "copy.sqlite")
        trace = os.path.join(cls.directory.name, "run.trace.jsonl")
        with open(trace, "w") as f:
            f.write(json.dumps({"format": "hrmd-trace", "version": 1}) + "\n")
            for second in range(600):
                f.write(json.dumps({"t": cls.time(second), "transport": "ble", "device": "rt-strap", "kind": "notify",
                                    "characteristic": "2a37", "value": "00%02x" % (100 + (second * 7) % 61)}) + "\n")
        for store in (cls.original, cls.copy):
            cls.hrmctl(store, "auth", "grant", "hrmd", "heart-rate")
            cls.hrmctl(store, "auth", "grant", "hrmd", "workout")
        cls.hrmctl(cls.original, "replay", trace)
        cls.hrmctl(cls.original, "person", "add", "bo")
        cls.hrmctl(cls.original, "person", "assign", "bo", "rt-strap", "--from", cls.time(-3600))
        cls.id = cls.hrmctl(cls.original, "workout", "start", "--person", "bo", "--activity", "rowing",
                            "--at", cls.time(0)).splitlines()[-1]
        for event, second in (("lap", 200), ("pause", 300), ("resume", 360), ("lap", 450)):
            cls.hrmctl(cls.original, "workout", event, cls.id, "--at", cls.time(second))
        cls.hrmctl(cls.original, "workout", "end", cls.id, "--at", cls.time(600))
        cls.fit = os.path.join(cls.directory.name, "workout.fit")
        cls.hrmctl(cls.original, "workout", "export", cls.id, "--format", "fit", "-o", cls.fit)
        cls.replayed = cls.hrmctl(cls.copy, "replay", cls.fit)

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    @classmethod
    def time(cls, second):
        return (cls.START + datetime.timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%S.000000Z")

    @classmethod
    def hrmctl(cls, store, *arguments):
        return builds.hrmctl(*arguments, "--store", store, timeout=CALL_TIMEOUT_S).stdout

    @classmethod
    def workouts(cls, store):
        return [json.loads(line) for line in cls.hrmctl(store, "workout", "list", "--output", "json").splitlines()]

    @staticmethod
    def seconds(text):
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()

    def samples(self, store):
        lines = self.hrmctl(store, "samples", "--since", self.time(-10), "--until", self.time(700), "--output", "json")
        return [(self.seconds(s["start"]), s["value"]) for s in map(json.loads, lines.splitlines())]

    def test_the_workout_comes_back(self):
        (original,) = [w for w in self.workouts(self.original) if w["id"] == self.id]
        (copy,) = self.workouts(self.copy)
        self.assertIn("1 workout (1 stored)", self.replayed)
        for key in ("activity", "start", "end", "events"):
            self.assertEqual(copy[key], original[key], key)
        self.assertEqual([e["type"] for e in copy["events"]], ["lap", "pause", "resume", "lap"])

    def test_the_active_samples_come_back(self):
        active = lambda t: self.seconds(self.time(0)) <= t < self.seconds(self.time(300)) or \
            self.seconds(self.time(360)) <= t < self.seconds(self.time(600))
        expected = [(t, v) for t, v in self.samples(self.original) if active(t)]
        self.assertEqual(len(expected), 540)
        self.assertEqual(self.samples(self.copy), expected)

    def test_replaying_again_stores_nothing_new(self):
        again = self.hrmctl(self.copy, "replay", self.fit)
        self.assertIn("0 samples stored", again)
        self.assertIn("1 workout (1 already stored)", again)
        self.assertEqual(len(self.workouts(self.copy)), 1)

    def test_without_workout_authorization_the_samples_are_stored_and_the_workout_told(self):
        store = os.path.join(self.directory.name, "no-workouts.sqlite")
        self.hrmctl(store, "auth", "grant", "hrmd", "heart-rate")
        done = builds.hrmctl("replay", self.fit, "--store", store, timeout=CALL_TIMEOUT_S)
        self.assertIn("540 samples stored", done.stdout)
        self.assertIn("1 workout (1 not authorized)", done.stdout)
        self.assertIn("hrmctl auth grant hrmd workout", done.stderr)
        self.assertEqual(self.workouts(store), [])

if __name__ == "__main__":
    program = unittest.main(exit=False, verbosity=2)
    result = program.result
    failed = len(result.failures) + len(result.errors)
    print("%d passed, %d failed, %d skipped" % (result.testsRun - failed - len(result.skipped), failed, len(result.skipped)))
    sys.exit(1 if failed else 0)
