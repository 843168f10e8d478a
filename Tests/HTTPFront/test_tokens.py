"""Tokens at the door of the API: none, malformed, wrong, expired and revoked tokens are 401 with
one line of JSON; a manager's token is needed on manager routes (403); a token reads what its
source may read, and a grant or revoke applies from the next request; no token ever reaches
hrmd's log."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import front  # noqa: E402


class TokenTests(front.FrontTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.hrmd = front.Hrmd(None, sensors=["mock:id=t1,hz=5"], log_level="debug")
        cls.addClassCleanup(cls.hrmd.stop)
        cls.app, cls.app_id = cls.hrmd.token("mary/app")
        cls.manager, _ = cls.hrmd.token("root/admin", manager=True)
        # Samples of hrmd in the store before the tests look.
        if not front.wait_for(lambda: len(cls.hrmd.stored("--since", "10m")) >= 3, 30):
            raise AssertionError("hrmd stored no samples within 30 s:\n" + cls.hrmd.output()[-2000:])

    def setUp(self):
        self.assertTrue(self.hrmd.alive(), "hrmd is not running:\n" + self.hrmd.output()[-2000:])

    def test_no_token(self):
        answer = self.hrmd.get("/api/v1/whoami")
        self.assertError(answer, 401, "no token")
        self.assertIn("bearer", answer.headers.get("www-authenticate", "").lower())

    def test_malformed_tokens(self):
        for header in ("Bearer", "Bearer ", "Basic bWFyeTpwdw==", "Bearer abc", "bearer hrmd_", self.app,
                       "Bearer " + self.app + "x", "Bearer " + self.app[:-1], "Bearer  " + self.app + " extra",
                       "Bearer " + "a" * 300):
            with self.subTest(header=header[:40]):
                self.assertError(self.hrmd.get("/api/v1/whoami", headers={"Authorization": header}), 401)

    def test_valid_token(self):
        answer = self.hrmd.get("/api/v1/whoami", self.app)
        self.assertEqual(answer.status, 200, answer)
        self.assertEqual(answer.json, {"source": "mary/app", "manager": False, "token": self.app_id, "expires": None})

    def test_wrong_secret(self):
        prefix, secret = self.app[:18], self.app[18:]
        flipped = ("B" if secret[0] != "B" else "C") + secret[1:]
        self.assertError(self.hrmd.get("/api/v1/whoami", prefix + flipped), 401, "not valid")
        unknown = "hrmd_aaaaaaaaaaaa_" + secret
        self.assertError(self.hrmd.get("/api/v1/whoami", unknown), 401, "not valid")

    def test_expired(self):
        token, identifier = self.hrmd.token("mary/expiring", expires="1h")
        self.assertEqual(self.hrmd.get("/api/v1/whoami", token).status, 200)
        past = (int(time.time()) - 5) * 1_000_000
        self.hrmd.sql("UPDATE accessToken SET expires = %d WHERE id = '%s';" % (past, identifier))
        self.assertError(self.hrmd.get("/api/v1/whoami", token), 401, "expired")
        self.assertError(self.hrmd.get("/api/v1/samples", token), 401, "expired")

    def test_revoked_by_id(self):
        token, identifier = self.hrmd.token("mary/revoked")
        self.assertEqual(self.hrmd.get("/api/v1/whoami", token).status, 200)
        front.hrmctl("auth", "token", "revoke", identifier, "--store", self.hrmd.store)
        self.assertError(self.hrmd.get("/api/v1/whoami", token), 401, "revoked")

    def test_revoked_by_source(self):
        first, _ = self.hrmd.token("mary/gone")
        second, _ = self.hrmd.token("mary/gone")
        other, _ = self.hrmd.token("mary/stays")
        _, out, _ = front.hrmctl("auth", "token", "revoke", "mary/gone", "--store", self.hrmd.store)
        self.assertIn("revoked 2 tokens", out)
        for token in (first, second):
            self.assertError(self.hrmd.get("/api/v1/whoami", token), 401, "revoked")
        self.assertEqual(self.hrmd.get("/api/v1/whoami", other).status, 200)

    def test_manager_routes(self):
        for route in ("/api/v1/devices", "/api/v1/sources", "/api/v1/authorization/requests", "/api/v1/people"):
            with self.subTest(route=route):
                self.assertError(self.hrmd.get(route, self.app), 403, "manager")
                answer = self.hrmd.get(route, self.manager)
                self.assertEqual(answer.status, 200, answer)
        devices = self.hrmd.get("/api/v1/devices", self.manager).json
        self.assertIn("t1", [device["identifier"] for device in devices["devices"]])

    def test_other_sources_need_read_authorization(self):
        token, _ = self.hrmd.token("mary/reader")

        def sources():
            answer = self.hrmd.get("/api/v1/samples?since=10m&limit=0", token)
            self.assertEqual(answer.status, 200, answer)
            return {sample["source"] for sample in answer.json["samples"]}

        self.assertEqual(sources(), set(), "a source without read authorization sees hrmd's samples")
        self.assertIsNone(self.hrmd.get("/api/v1/latest", token).json["sample"])
        front.hrmctl("auth", "grant", "--store", self.hrmd.store, "mary/reader", "heart-rate", "--read")
        self.assertEqual(sources(), {"hrmd"}, "the grant did not apply to the next request")
        self.assertEqual(self.hrmd.get("/api/v1/latest", token).json["sample"]["source"], "hrmd")
        front.hrmctl("auth", "revoke", "--store", self.hrmd.store, "mary/reader", "heart-rate", "--read")
        self.assertEqual(sources(), set(), "the revoke did not apply to the next request")
        self.assertIsNone(self.hrmd.get("/api/v1/latest", token).json["sample"])

    def test_people_and_whose_samples_are_whose_are_a_managers(self):
        front.hrmctl("person", "add", "http-ann", "--max-hr", "190", "--store", self.hrmd.store)
        front.hrmctl("person", "assign", "http-ann", "t1", "--from", "1h", "--store", self.hrmd.store)
        people = self.hrmd.get("/api/v1/people", self.manager)
        self.assertEqual(people.status, 200, people)
        ann = [person for person in people.json["people"] if person["name"] == "http-ann"]
        self.assertEqual(len(ann), 1, people.json)
        self.assertEqual(ann[0]["zoneBounds"], [95, 114, 133, 152, 171])
        self.assertEqual([strap["device"] for strap in ann[0]["straps"]], ["t1"])
        managed = self.hrmd.get("/api/v1/samples?since=10m&limit=5", self.manager).json["samples"]
        self.assertTrue(managed and all(sample.get("person") == "http-ann" for sample in managed), managed)
        reader, _ = self.hrmd.token("mary/people-reader")
        front.hrmctl("auth", "grant", "--store", self.hrmd.store, "mary/people-reader", "heart-rate", "--read")
        seen = self.hrmd.get("/api/v1/samples?since=10m&limit=5", reader).json["samples"]
        self.assertTrue(seen and all("person" not in sample for sample in seen), seen)
        front.hrmctl("person", "remove", "http-ann", "--store", self.hrmd.store)

    def test_own_samples_only_for_statistics(self):
        token, _ = self.hrmd.token("mary/stats")
        answer = self.hrmd.get("/api/v1/statistics?since=1h&by=1m", token)
        self.assertEqual(answer.status, 200, answer)
        self.assertEqual(answer.json, {"buckets": []})
        answer = self.hrmd.get("/api/v1/statistics?since=1h&by=1m", self.manager)
        self.assertTrue(answer.json["buckets"], answer)

    def test_tokens_never_logged(self):
        # Every way a token reaches hrmd: valid, wrong secret, expired, revoked, in a live stream,
        # in a query string and a subprotocol; then the whole log is searched for any secret.
        token, identifier = self.hrmd.token("mary/secretive")
        self.hrmd.get("/api/v1/samples?limit=1", token)
        self.hrmd.get("/api/v1/samples?cursor=" + token, token)
        self.hrmd.get("/api/v1/whoami?token=" + token)
        self.hrmd.get("/api/v1/nothing-here", token)
        self.hrmd.request("POST", "/api/v1/authorization", token, {"Content-Type": "application/json"},
                          b'{"share":["heart-rate"],"read":["heart-rate"]}')
        self.hrmd.get("/api/v1/whoami", token[:-1] + ("A" if token[-1] != "A" else "B"))
        socket = front.WebSocket(self.hrmd.port, protocols=["hrmd", "bearer." + token])
        socket.close()
        front.hrmctl("auth", "token", "revoke", identifier, "--store", self.hrmd.store)
        self.hrmd.get("/api/v1/whoami", token)
        self.assertTrue(self.hrmd.alive())
        log = self.hrmd.output()
        for text in self.hrmd.tokens:
            secret = text[18:]
            self.assertNotIn(secret, log, "a token's secret is in hrmd's log")
            self.assertNotIn(text, log, "a token is in hrmd's log")
