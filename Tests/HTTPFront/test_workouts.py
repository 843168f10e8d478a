"""Workouts over HTTP: an application token writes them only with share authorization of
`workout` and changes only its own; it reads its own and, with read authorization, everyone's;
a manager's token does all of it. Hostile bodies (malformed, huge values, unknown activities and
events, events out of order) are one line of JSON with 400, and hrmd still answers."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import front  # noqa: E402


class WorkoutTests(front.FrontTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.hrmd = front.Hrmd(None, sensors=["mock:id=w1,hz=5"])
        cls.addClassCleanup(cls.hrmd.stop)
        cls.coach, _ = cls.hrmd.token("mary/coach")
        cls.other, _ = cls.hrmd.token("mary/other")
        cls.manager, _ = cls.hrmd.token("root/admin", manager=True)
        front.hrmctl("person", "add", "ann", "--max-hr", "190", "--store", cls.hrmd.store)
        front.hrmctl("person", "add", "bo", "--store", cls.hrmd.store)
        front.hrmctl("person", "assign", "ann", "w1", "--from", "1h", "--store", cls.hrmd.store)

    def setUp(self):
        self.assertTrue(self.hrmd.alive(), "hrmd is not running:\n" + self.hrmd.output()[-2000:])

    def post(self, route, token, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        return self.hrmd.request("POST", "/api/v1/workouts/" + route, token, {"Content-Type": "application/json"}, data)

    def grant(self, source, *flags):
        front.hrmctl("auth", "grant", *flags, source, "workout", "--store", self.hrmd.store)

    def test_share_authorization_is_needed_and_only_the_source_changes_its_workouts(self):
        refused = self.post("start", self.other, {"device": "strap-x", "activity": "rowing"})
        self.assertError(refused, 403, "workout")
        self.grant("mary/coach")
        started = self.post("start", self.coach, {"device": "strap-c", "activity": "hiit", "at": "2m"})
        self.assertEqual(started.status, 200, started)
        workout = started.json
        self.assertEqual((workout["device"], workout["activity"], workout["source"]), ("strap-c", "hiit", "mary/coach"))
        self.assertNotIn("end", workout)
        # Another source sees no such workout, even with share authorization of its own.
        self.grant("mary/other")
        self.assertError(self.post("end", self.other, {"id": workout["id"]}), 400, "no workout")
        self.assertError(self.hrmd.get("/api/v1/workouts/details?id=" + workout["id"], self.other), 400, "no workout")
        lap = self.post("event", self.coach, {"device": "strap-c", "type": "lap", "at": "1m"})
        self.assertEqual(lap.status, 200, lap)
        self.assertEqual([e["type"] for e in lap.json["events"]], ["lap"])
        self.assertError(self.post("event", self.coach, {"id": workout["id"], "type": "marker", "at": "90s"}), 400, "before")
        ended = self.post("end", self.coach, {"id": workout["id"]})
        self.assertEqual(ended.status, 200, ended)
        self.assertIn("end", ended.json)
        # With read authorization, the other source reads it, but still cannot change it.
        self.grant("mary/other", "--read")
        listed = self.hrmd.get("/api/v1/workouts?device=strap-c", self.other)
        self.assertEqual([w["id"] for w in listed.json["workouts"]], [workout["id"]], listed)
        self.assertError(self.hrmd.request("DELETE", "/api/v1/workouts?id=" + workout["id"], self.other), 400, "mary/coach")
        deleted = self.hrmd.request("DELETE", "/api/v1/workouts?id=" + workout["id"], self.coach)
        self.assertEqual(deleted.status, 200, deleted)
        self.assertEqual(self.hrmd.get("/api/v1/workouts?device=strap-c", self.manager).json["workouts"], [])

    def test_a_managers_workout_for_a_person_has_figures(self):
        started = self.post("start", self.manager, {"person": "ann", "activity": "running", "at": "10m"})
        self.assertEqual(started.status, 200, started)
        identifier = started.json["id"]
        self.assertEqual(self.post("event", self.manager, {"person": "ann", "type": "pause", "at": "5m"}).status, 200)
        self.assertEqual(self.post("event", self.manager, {"person": "ann", "type": "resume", "at": "4m"}).status, 200)
        self.assertTrue(front.wait_for(lambda: len(self.hrmd.stored("--since", "1m")) >= 3, 30), "no samples stored")
        self.assertEqual(self.post("end", self.manager, {"person": "ann"}).status, 200)
        details = self.hrmd.get("/api/v1/workouts/details?id=" + identifier, self.manager)
        self.assertEqual(details.status, 200, details)
        body = details.json
        self.assertEqual(body["person"], "ann")
        self.assertAlmostEqual(body["elapsedSeconds"] - body["activeSeconds"], 60, delta=1)
        self.assertGreater(body["heartRate"]["average"], 30)
        self.assertEqual([zone["zone"] for zone in body["zones"]], [0, 1, 2, 3, 4, 5])
        self.assertNotIn("upper", body["zones"][5])
        self.assertEqual(len(body["laps"]), 1)
        # An application with no read authorization of workout sees none of it.
        self.assertError(self.hrmd.get("/api/v1/workouts/details?id=" + identifier, self.coach), 400, "no workout")

    def test_changes_follow_starts_events_ends_and_deletions(self):
        front.hrmctl("auth", "grant", "mary/changes", "workout", "--store", self.hrmd.store)
        token, _ = self.hrmd.token("mary/changes")
        first = self.hrmd.get("/api/v1/workouts/changes", token)
        self.assertEqual(first.status, 200, first)
        anchor = first.json["anchor"]
        started = self.post("start", token, {"device": "strap-ch"})
        self.assertEqual(started.status, 200, started)
        changed = self.hrmd.get("/api/v1/workouts/changes?anchor=" + anchor, token)
        self.assertEqual([w["id"] for w in changed.json["workouts"]], [started.json["id"]], changed)
        self.assertNotEqual(changed.json["anchor"], anchor)
        self.assertEqual(self.post("end", token, {"device": "strap-ch"}).status, 200)
        ended = self.hrmd.get("/api/v1/workouts/changes?anchor=" + changed.json["anchor"], token)
        self.assertIn("end", ended.json["workouts"][0])
        self.assertEqual(self.hrmd.request("DELETE", "/api/v1/workouts?id=" + started.json["id"], token).status, 200)
        deleted = self.hrmd.get("/api/v1/workouts/changes?anchor=" + ended.json["anchor"], token)
        self.assertEqual((deleted.json["workouts"], deleted.json["deleted"]), ([], [started.json["id"]]), deleted)
        quiet = self.hrmd.get("/api/v1/workouts/changes?anchor=" + deleted.json["anchor"], token)
        self.assertEqual(quiet.json, {"workouts": [], "deleted": [], "anchor": deleted.json["anchor"]})
        for query in ("anchor=-1", "anchor=x", "limit=0", "limit=1001", "anchor=1&anchor=2"):
            with self.subTest(query=query):
                self.assertError(self.hrmd.get("/api/v1/workouts/changes?" + query, token), 400)

    def test_hostile_bodies_and_parameters(self):
        self.grant("mary/coach")
        for body in (b"", b"{", b"[]", b"null", b'{"person": 5}', json.dumps({"person": "x" * 600}).encode(),
                     json.dumps({"person": "bo", "activity": "flying"}).encode(), json.dumps({"activity": "running"}).encode(),
                     json.dumps({"person": "bo", "at": "yesterday-ish"}).encode(), json.dumps({"person": "bo", "at": "99999999999w"}).encode(),
                     json.dumps({"person": "nobody"}).encode(), json.dumps({"person": "bad\u001bname"}).encode()):
            with self.subTest(body=body[:60]):
                self.assertError(self.post("start", self.coach, body), 400)
        for body in ({"person": "bo", "type": "jump"}, {"person": "bo"}, {"type": "lap"}, {"person": "bo", "type": "lap"}):
            with self.subTest(body=body):
                self.assertError(self.post("event", self.coach, body), 400)
        self.assertError(self.hrmd.get("/api/v1/workouts/details", self.coach), 400)
        self.assertError(self.hrmd.get("/api/v1/workouts/details?id=" + "z" * 600, self.coach), 400)
        self.assertError(self.hrmd.get("/api/v1/workouts?limit=0", self.coach), 400)
        self.assertError(self.hrmd.get("/api/v1/workouts?limit=1001", self.coach), 400)
        self.assertError(self.hrmd.get("/api/v1/workouts?since=2026-11-20T10:00:00Z&until=2026-11-20T09:00:00Z", self.coach), 400)
        self.assertError(self.post("start", self.coach, b"{" + b" " * (70 * 1024) + b"}"), 413)
        self.assertError(self.post("start", None, {"person": "bo"}), 401)
        # Events out of order, and a workout too long.
        started = self.post("start", self.coach, {"person": "bo", "activity": "yoga", "at": "1h"})
        self.assertEqual(started.status, 200, started)
        self.assertError(self.post("event", self.coach, {"person": "bo", "type": "lap", "at": "2h"}), 400, "before")
        self.assertError(self.post("end", self.coach, {"person": "bo", "at": "2026-01-01T00:00:00Z"}), 400)
        self.assertEqual(self.post("end", self.coach, {"person": "bo"}).status, 200)
        # One overlapping the workout just ended, and one of ten years.
        self.assertError(self.post("start", self.coach, {"person": "bo", "at": "30m"}), 400, "overlaps")
        decade = self.post("start", self.coach, {"device": "decade-strap", "at": "3650d"})
        self.assertEqual(decade.status, 200, decade)
        self.assertError(self.post("end", self.coach, {"device": "decade-strap"}), 400, "at most 7 days")
        self.assertError(self.post("event", self.coach, {"device": "decade-strap", "type": "lap"}), 400, "at most 7 days")
        self.assertTrue(self.hrmd.answers(self.coach))
