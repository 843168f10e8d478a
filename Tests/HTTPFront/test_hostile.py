"""Hostile clients: bad bodies, oversized bodies and headers, absurd ranges, unknown routes and
parameters, more connections than allowed, and a slowloris. After each, hrmd still runs and
answers, and every refusal was one line of JSON `{"error":"…"}` or a closed connection."""

import os
import socket
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import front  # noqa: E402

IDLE_TIMEOUT_S = 2
MAX_CONNECTIONS = 8
HANG_S = 30  # a hang, never a measure of speed


class HostileTests(front.FrontTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        config = "[http]\nmax-connections = %d\nidle-timeout = %d\n" % (MAX_CONNECTIONS, IDLE_TIMEOUT_S)
        cls.hrmd = front.Hrmd(None, sensors=["mock:id=h1,hz=2"], config=config)
        cls.addClassCleanup(cls.hrmd.stop)
        cls.token, _ = cls.hrmd.token("mary/hostile")

    def setUp(self):
        self.assertTrue(self.hrmd.alive(), "hrmd is not running:\n" + self.hrmd.output()[-2000:])

    def tearDown(self):
        self.assertStillServing()

    def assertStillServing(self):
        self.assertTrue(self.hrmd.alive(), "hrmd ended:\n" + self.hrmd.output()[-3000:])
        self.assertTrue(front.wait_for(lambda: self.hrmd.answers(self.token), HANG_S),
                        "hrmd no longer answers:\n" + self.hrmd.output()[-3000:])

    def post(self, body, content_type="application/json"):
        return self.hrmd.request("POST", "/api/v1/authorization", self.token, {"Content-Type": content_type}, body)

    def send_raw(self, data, timeout=HANG_S):
        """Sends DATA on a new connection and reads the answer: (status or None when closed, body)."""
        sock = front.raw_connect(self.hrmd.port, timeout)
        try:
            try:
                sock.sendall(data)
            except (BrokenPipeError, ConnectionResetError):
                pass
            try:
                status, headers, rest = front.read_head(sock, timeout)
            except (ConnectionError, OSError):
                return None, b""
            length = int(headers.get("content-length", "0"))
            deadline = time.monotonic() + timeout
            while len(rest) < length and time.monotonic() < deadline:
                try:
                    chunk = sock.recv(65536)
                except OSError:
                    break
                if not chunk:
                    break
                rest += chunk
            return status, rest[:length]
        finally:
            sock.close()

    def assertRawError(self, status, body, allowed):
        if status is None:
            return  # closed: allowed
        self.assertIn(status, allowed, body)
        answer = front.Answer(status, [("content-type", "application/json")], body)
        self.assertError(answer, status)

    def test_post_malformed_json(self):
        for body in (b"{", b"not json", b"", b"\xff\xfe", b'{"share": ["heart-rate"]', b"[]", b"null", b"42"):
            with self.subTest(body=body):
                self.assertError(self.post(body), 400)

    def test_post_wrong_types(self):
        for body in (b'{"share": "heart-rate"}', b'{"share": [1]}', b'{"read": {"a": 1}}', b'{"share": [null]}',
                     b'{"share": ["weight"]}', b'{"share": [' + b",".join([b'"heart-rate"'] * 65) + b"]}"):
            with self.subTest(body=body[:40]):
                self.assertError(self.post(body), 400)
        answer = self.post(b'{"share": ["heart-rate"], "read": ["heart-rate"], "extra": 1}')
        self.assertEqual(answer.status, 200, answer)
        self.assertEqual(answer.json, {"source": "mary/hostile", "pending": True})

    def test_body_over_64k(self):
        body = b'{"share": [' + b'"heart-rate",' * 6000 + b'"heart-rate"]}'
        self.assertGreater(len(body), 64 * 1024)
        try:
            answer = self.post(body)
        except (BrokenPipeError, ConnectionResetError):
            return  # closed: allowed
        self.assertError(answer, 413)
        # Without a length: chunked.
        head = ("POST /api/v1/authorization HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" % self.token).encode()
        chunked = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 8192]), body[i:i + 8192]) for i in range(0, len(body), 8192)) + b"0\r\n\r\n"
        status, answer_body = self.send_raw(head + chunked)
        self.assertRawError(status, answer_body, (413,))

    def test_headers_over_16k(self):
        for headers in ("X-Big: " + "a" * 20000 + "\r\n", "".join("X-H%d: %s\r\n" % (i, "b" * 100) for i in range(200))):
            with self.subTest(size=len(headers)):
                data = ("GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n%s\r\n" % (self.token, headers)).encode()
                status, body = self.send_raw(data)
                if status is not None:
                    self.assertGreaterEqual(status, 400, body)
                    self.assertLess(status, 500, body)
                    if body:
                        self.assertRawError(status, body, range(400, 500))

    def test_absurd_ranges(self):
        for query in ("since=2026-11-20T10:00:00Z&until=2026-11-20T09:00:00Z", "since=0000-01-01T00:00:00Z",
                      "until=10000-01-01T00:00:00Z", "since=99999999999w", "since=1e300s", "since=-5m", "since=nan",
                      "until=9999999999999999999", "since=2026-02-30T00:00:00Z", "since=2026-11-20T25:00:00Z"):
            for route in ("samples", "statistics", "hrv", "zones"):
                with self.subTest(query=query, route=route):
                    self.assertError(self.hrmd.get("/api/v1/%s?%s" % (route, query), self.token), 400)
        self.assertError(self.hrmd.get("/api/v1/samples?limit=10001", self.token), 400)
        self.assertError(self.hrmd.get("/api/v1/zones?max=99", self.token), 400)
        self.assertError(self.hrmd.get("/api/v1/statistics?by=2m", self.token), 400)
        self.assertError(self.hrmd.get("/api/v1/statistics?by=1d&timezone=Mars/Olympus", self.token), 400)
        self.assertError(self.hrmd.get("/api/v1/changes?anchor=-1", self.token), 400)
        self.assertError(self.hrmd.get("/api/v1/samples?type=weight", self.token), 400)
        # The widest valid range answers.
        answer = self.hrmd.get("/api/v1/samples?since=0001-01-01T00:00:00Z&until=9999-12-31T23:59:59Z&limit=1", self.token)
        self.assertEqual(answer.status, 200, answer)

    def test_unknown_routes(self):
        for path in ("/api/v1/nothing", "/api/v2/samples", "/api/v1/samples/extra", "/nothing", "/api/v1/", "/static/../README.md",
                     "/javascript/../../etc/passwd", "/api/v1/" + "x" * 2000):
            for token in (self.token, None):
                with self.subTest(path=path[:40], token=token is not None):
                    answer = self.hrmd.get(path, token)
                    self.assertIn(answer.status, (401, 404), answer)
                    self.assertError(answer, answer.status)
        answer = self.hrmd.request("DELETE", "/api/v1/samples", self.token)
        self.assertIn(answer.status, (404, 405), answer)
        self.assertError(answer, answer.status)

    def test_unknown_and_repeated_parameters(self):
        for query in ("colour=red", "type=heart-rate&type=heart-rate", "limit=1&limit=2", "since=1h&Since=1h", "type",
                      "%74ype=heart-rate", "&&&=", "cursor=1.1&cursor=1.1"):
            with self.subTest(query=query):
                self.assertError(self.hrmd.get("/api/v1/samples?" + query, self.token), 400)
        self.assertError(self.hrmd.get("/api/v1/whoami?x=1", self.token), 400, "no query parameters")
        self.assertError(self.hrmd.get("/api/v1/samples?device=" + "d" * 600, self.token), 400)

    def test_too_many_connections(self):
        idle = []
        try:
            for _ in range(20):
                idle.append(front.raw_connect(self.hrmd.port, HANG_S))
            # A request on a 21st connection: answered once the idle ones are closed by the idle timeout.
            started = time.monotonic()
            answer = self.hrmd.get("/api/v1/whoami", self.token, timeout=HANG_S)
            self.assertEqual(answer.status, 200, answer)
            waited = time.monotonic() - started
            # The idle connections the front accepted were closed, not kept.
            closed = 0
            for sock in idle:
                sock.settimeout(0.2)
                try:
                    if sock.recv(1) == b"":
                        closed += 1
                except socket.timeout:
                    pass
                except OSError:
                    closed += 1
            self.assertGreaterEqual(closed, MAX_CONNECTIONS, "idle connections were not closed")
            print("  (answered after %.1f s behind 20 idle connections)" % waited, file=sys.stderr)
        finally:
            for sock in idle:
                sock.close()

    def test_slowloris(self):
        # A header byte every IDLE_TIMEOUT_S / 2 s: the request head never completes within the
        # idle timeout, so the connection is closed.
        sock = front.raw_connect(self.hrmd.port, HANG_S)
        try:
            request = ("GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n" % self.token).encode()
            started = time.monotonic()
            closed_after = None
            for index in range(len(request)):
                try:
                    sock.sendall(request[index:index + 1])
                except OSError:
                    closed_after = time.monotonic() - started
                    break
                ready = front.select.select([sock], [], [], IDLE_TIMEOUT_S / 2)[0]
                if ready:
                    try:
                        data = sock.recv(4096)
                    except OSError:
                        data = b""
                    if not data:
                        closed_after = time.monotonic() - started
                        break
                    self.fail("an answer to an incomplete head: %r" % data)
                if time.monotonic() - started > HANG_S:
                    break
            self.assertIsNotNone(closed_after, "a slowloris kept its connection for %d s" % HANG_S)
            self.assertLess(closed_after, IDLE_TIMEOUT_S * 4, "closed only after %.1f s" % closed_after)
        finally:
            sock.close()

    def test_live_without_event_stream(self):
        self.assertError(self.hrmd.get("/api/v1/live", self.token), 400)
        self.assertError(self.hrmd.get("/api/v1/live?x=1", self.token, headers={"Accept": "text/event-stream"}), 400)
        self.assertError(self.hrmd.get("/api/v1/live", headers={"Accept": "text/event-stream"}), 401)
