#!/usr/bin/env python3
"""The FHIR export checked by its format's own validator: fhir.resources (FHIR R4, 4.0.1) parses
every Bundle `hrmctl export --format fhir` writes, with and without people. Each person who
wore a strap is one Patient, and exactly the Observations of their straps' samples within
their assignments name them as subject; `--person` keeps those alone.

Runs the built hrmd (mock straps) and hrmctl against a store file in a temporary folder. Run
with the venv's Python (make check-exports makes it): Tests/exports/test_fhir.py
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pysupport"))
from builds import binary  # noqa: E402

from fhir.resources import __fhir_version__  # noqa: E402
from fhir.resources.bundle import Bundle  # noqa: E402

CALL_TIMEOUT_S = 60


class FHIRExportTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory(prefix="hrmd-fhir-")
        cls.store = os.path.join(cls.directory.name, "s.sqlite")
        cls.hrmctl("auth", "grant", "hrmd", "heart-rate")
        subprocess.run([binary("hrmd"), "--store", cls.store, "--sensor", "mock:id=fa,hz=4,contact-loss=0",
                        "--sensor", "mock:id=fb,hz=4,contact-loss=0", "--duration", "2"],
                       check=True, capture_output=True, timeout=CALL_TIMEOUT_S)

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    @classmethod
    def hrmctl(cls, *arguments):
        result = subprocess.run([binary("hrmctl")] + list(arguments) + ["--store", cls.store],
                                capture_output=True, text=True, timeout=CALL_TIMEOUT_S)
        if result.returncode != 0:
            raise AssertionError("hrmctl %s: exit %d: %s" % (" ".join(arguments), result.returncode, result.stderr))
        return result.stdout

    def bundle(self, *arguments):
        path = os.path.join(self.directory.name, "export.json")
        self.hrmctl("export", "--format", "fhir", "--output", path, *arguments)
        with open(path) as f:
            text = f.read()
        parsed = Bundle.parse_raw(text)  # raises on anything R4 does not allow
        self.assertEqual(parsed.type, "collection")
        return json.loads(text)

    def test_a_bundle_without_people_is_valid_and_names_nobody(self):
        self.assertEqual(__fhir_version__, "4.0.1")
        document = self.bundle()
        resources = [entry["resource"] for entry in document["entry"]]
        self.assertTrue(resources)
        self.assertEqual({resource["resourceType"] for resource in resources}, {"Observation"})
        self.assertTrue(all("subject" not in resource for resource in resources))

    def test_the_validator_refuses_what_r4_does_not_allow(self):
        # The check above can fail: a Bundle the export never writes is refused.
        document = self.bundle()
        for broken in ({"bogus": 1}, {"status": None}, {"effectiveDateTime": "yesterday"}):
            with self.subTest(broken=broken):
                changed = json.loads(json.dumps(document))
                changed["entry"][0]["resource"].update(broken)
                changed["entry"][0]["resource"] = {k: v for k, v in changed["entry"][0]["resource"].items() if v is not None}
                with self.assertRaises(Exception):
                    Bundle.parse_obj(changed)

    def test_people_are_patients_and_their_observations_name_them(self):
        self.hrmctl("person", "add", "fhir-ann", "--birth-year", "1990", "--sex", "female")
        self.hrmctl("person", "add", "fhir-idle")
        self.hrmctl("person", "assign", "fhir-ann", "fa", "--from", "1h")
        try:
            document = self.bundle()
            entries = document["entry"]
            patients = {entry["fullUrl"]: entry["resource"] for entry in entries if entry["resource"]["resourceType"] == "Patient"}
            self.assertEqual([patient["name"][0]["text"] for patient in patients.values()], ["fhir-ann"],
                             "one Patient per person who wore a strap")
            ann = next(iter(patients.values()))
            self.assertEqual((ann["gender"], ann["birthDate"]), ("female", "1990"))
            observations = [entry["resource"] for entry in entries if entry["resource"]["resourceType"] == "Observation"]
            theirs = [o for o in observations if "(fa)" in o["device"]["display"]]
            others = [o for o in observations if "(fb)" in o["device"]["display"]]
            self.assertTrue(theirs and others)
            self.assertTrue(all(o["subject"]["reference"] in patients and o["subject"]["display"] == "fhir-ann" for o in theirs))
            self.assertTrue(all("subject" not in o for o in others))
            # --person: her Observations alone.
            only = [entry["resource"] for entry in self.bundle("--person", "fhir-ann")["entry"]
                    if entry["resource"]["resourceType"] == "Observation"]
            self.assertEqual(len(only), len(theirs))
        finally:
            self.hrmctl("person", "remove", "fhir-ann")
            self.hrmctl("person", "remove", "fhir-idle")


if __name__ == "__main__":
    program = unittest.main(exit=False, verbosity=2)
    result = program.result
    failed = len(result.failures) + len(result.errors)
    print("%d passed, %d failed, %d skipped" % (result.testsRun - failed - len(result.skipped), failed, len(result.skipped)))
    sys.exit(1 if failed else 0)
