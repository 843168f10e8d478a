"""Hostile clients: bad bodies, oversized bodies and headers, absurd ranges, unknown routes and
parameters, more connections than allowed, and a slowloris. After each, hrmd still runs and
answers, and every refusal was one line of JSON `{"error":"…"}` or a closed connection."""

import os
import socket
import struct
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import front  # noqa: E402

IDLE_TIMEOUT_S = 2
MAX_CONNECTIONS = 8
IDLE_CONNECTIONS = 20  # more than max-connections: the front takes them in rounds
HANG_S = 30  # a hang, never a measure of speed
RESETS = 300
LIVE_STREAMS_PER_TOKEN = 16  # the front's fixed quota
PER_ADDRESS = 3


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
        head = ("POST /api/v1/authorization HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" % self.token).encode()
        chunked = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 8192]), body[i:i + 8192]) for i in range(0, len(body), 8192)) + b"0\r\n\r\n"
        status, answer_body = self.send_raw(head + chunked)
        self.assertRawError(status, answer_body, (413,))

    def test_headers_over_16k(self):
        for headers in ("X-Big: " + "a" * 20000 + "\r\n", "".join("X-H%d: %s\r\n" % (i, "b" * 100) for i in range(200))):
            with self.subTest(size=len(headers)):
                data = ("GET /api/v1/whoami HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n%s\r\n" % (self.token, headers)).encode()
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
            for _ in range(IDLE_CONNECTIONS):
                idle.append(front.raw_connect(self.hrmd.port, HANG_S))
            # A request on one more connection, from another address (those past the per-address
            # limit on 127.0.0.1 are closed as they are accepted): answered once the idle ones
            # are closed by the first head's deadline, a round of max-connections at a time. The
            # bound is a hang, counted per round, not a measure of speed.
            started = time.monotonic()
            rounds = -(-IDLE_CONNECTIONS // MAX_CONNECTIONS) + 1
            try:
                answer = self.hrmd.get("/api/v1/whoami", self.token, timeout=HANG_S * rounds, source=front.OTHER_CLIENT)
            except (socket.timeout, OSError) as error:
                self.fail("no answer behind %d idle connections after %.1f s (%s); hrmd's log:\n%s"
                          % (IDLE_CONNECTIONS, time.monotonic() - started, error, self.hrmd.output()[-4000:]))
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
            print("  (answered after %.1f s behind %d idle connections)" % (waited, IDLE_CONNECTIONS), file=sys.stderr)
        finally:
            for sock in idle:
                sock.close()

    def test_slowloris(self):
        # A header byte every IDLE_TIMEOUT_S / 2 s: the request head never completes within the
        # idle timeout, so the connection is closed.
        sock = front.raw_connect(self.hrmd.port, HANG_S)
        try:
            request = ("GET /api/v1/whoami HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n" % self.token).encode()
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

    def wait_closed(self, sock, timeout=HANG_S):
        """Whether the server closed SOCK within TIMEOUT (reading and dropping what it sent)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                if sock.recv(4096) == b"":
                    return True
            except socket.timeout:
                return False
            except OSError:
                return True
        return False

    def test_blank_lines_hold_no_connection(self):
        # Every connection the front allows sends blank lines and nothing more: each is closed
        # by the first head's deadline, and a real client is answered.
        blank = []
        try:
            for _ in range(MAX_CONNECTIONS):
                sock = front.raw_connect(self.hrmd.port, HANG_S)
                sock.sendall(b"\r\n\r\n")
                blank.append(sock)
            answer = self.hrmd.get("/api/v1/whoami", self.token, timeout=HANG_S, source=front.OTHER_CLIENT)
            self.assertEqual(answer.status, 200, answer)
            for sock in blank:
                self.assertTrue(self.wait_closed(sock), "a connection that sent only blank lines stayed open")
        finally:
            for sock in blank:
                sock.close()

    def trickle(self, sock, data):
        """Sends DATA a byte every IDLE_TIMEOUT_S / 2 s; whether the server closed the connection
        before HANG_S (without answering)."""
        started = time.monotonic()
        for index in range(len(data)):
            try:
                sock.sendall(data[index:index + 1])
            except OSError:
                return True
            if front.select.select([sock], [], [], IDLE_TIMEOUT_S / 2)[0]:
                try:
                    received = sock.recv(4096)
                except OSError:
                    return True
                if not received:
                    return True
                self.fail("an answer to an incomplete request: %r" % received[:200])
            if time.monotonic() - started > HANG_S:
                return False
        return self.wait_closed(sock)

    def test_body_trickle(self):
        # The head arrives whole; the body a byte at a time: the body's deadline closes it.
        sock = front.raw_connect(self.hrmd.port, HANG_S)
        try:
            body = b'{"source":"x","types":["heart-rate"]' + b" " * 200 + b"}"
            head = ("POST /api/v1/authorization HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                    "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (self.token, len(body))).encode()
            sock.sendall(head)
            self.assertTrue(self.trickle(sock, body), "a body trickled a byte at a time kept its connection for %d s" % HANG_S)
        finally:
            sock.close()

    def test_next_head_trickle(self):
        # A first request answered, then the next head a byte at a time on the same connection.
        sock = front.raw_connect(self.hrmd.port, HANG_S)
        try:
            request = ("GET /api/v1/whoami HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n" % self.token).encode()
            sock.sendall(request)
            status, headers, rest = front.read_head(sock, HANG_S)
            self.assertEqual(status, 200)
            self.assertTrue(self.trickle(sock, b"\r\n" * 40 + request), "a second head trickled a byte at a time kept its connection")
        finally:
            sock.close()

    def test_rebound_host_and_foreign_origin(self):
        # A page whose own name was rebound to 127.0.0.1 sends its name as Host: refused; so is
        # a request or WebSocket naming another origin. The server's own origin is answered.
        rebound = self.hrmd.get("/api/v1/whoami", self.token, headers={"Host": "rebound.example:%d" % self.hrmd.port})
        self.assertError(rebound, 403, "loopback names only")
        numeric = self.hrmd.get("/", headers={"Host": "127.evil.example:%d" % self.hrmd.port})
        self.assertEqual(numeric.status, 403)
        foreign = self.hrmd.get("/api/v1/whoami", self.token, headers={"Origin": "http://evil.example"})
        self.assertError(foreign, 403, "cross-origin")
        own = self.hrmd.get("/api/v1/whoami", self.token, headers={"Origin": "http://127.0.0.1:%d" % self.hrmd.port})
        self.assertEqual(own.status, 200, own)
        socket_from_elsewhere = front.WebSocket(self.hrmd.port, self.token, headers=["Origin: http://evil.example"])
        try:
            self.assertFalse(socket_from_elsewhere.accepted, "a cross-origin WebSocket was upgraded")
        finally:
            socket_from_elsewhere.sock.close()
        socket_from_home = front.WebSocket(self.hrmd.port, self.token, headers=["Origin: http://localhost:%d" % self.hrmd.port,
                                                                               ])
        try:
            # Host says 127.0.0.1 and Origin localhost: another origin, as a browser sees it.
            self.assertFalse(socket_from_home.accepted)
        finally:
            socket_from_home.sock.close()
        same = front.WebSocket(self.hrmd.port, self.token, headers=["Origin: http://127.0.0.1:%d" % self.hrmd.port])
        try:
            self.assertTrue(same.accepted, "a same-origin WebSocket was refused: %s" % same.status)
        finally:
            same.close()

    def test_live_without_event_stream(self):
        self.assertError(self.hrmd.get("/api/v1/live", self.token), 400)
        self.assertError(self.hrmd.get("/api/v1/live?x=1", self.token, headers={"Accept": "text/event-stream"}), 400)
        self.assertError(self.hrmd.get("/api/v1/live", headers={"Accept": "text/event-stream"}), 401)


class PerAddressTests(front.FrontTestCase):
    """One client address holds at most `max-connections-per-address` connections."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        config = "[http]\nmax-connections = %d\nmax-connections-per-address = %d\nidle-timeout = %d\n" % (
            MAX_CONNECTIONS, PER_ADDRESS, HANG_S)
        cls.hrmd = front.Hrmd(None, sensors=["mock:id=p1,hz=2"], config=config)
        cls.addClassCleanup(cls.hrmd.stop)
        cls.token, _ = cls.hrmd.token("mary/per-address")

    def test_one_address_cannot_take_every_connection(self):
        # Each held connection is answered once and kept open: then it has surely been counted
        # (connections are set up on several threads, in no fixed order).
        held = []
        for _ in range(PER_ADDRESS):
            connection = self.hrmd.connection(HANG_S)
            held.append(connection)
            connection.request("GET", "/api/v1/whoami", headers={"Authorization": "Bearer " + self.token})
            response = connection.getresponse()
            response.read()
            self.assertEqual(response.status, 200)
        try:
            # The next connections from the same address are closed as they are accepted (not
            # left open: each would keep one of max-connections for ever).
            for attempt in range(MAX_CONNECTIONS * 2):
                refused = front.raw_connect(self.hrmd.port, HANG_S)
                try:
                    refused.sendall(("GET /api/v1/whoami HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n"
                                     % self.token).encode())
                    try:
                        self.assertEqual(refused.recv(4096), b"", "refused connection %d was answered" % attempt)
                    except socket.timeout:
                        self.fail("refused connection %d was left open for %d s" % (attempt, HANG_S))
                    except (ConnectionError, OSError):
                        pass
                finally:
                    refused.close()
            # The refused ones hold no place: every connection max-connections allows beside
            # the held ones, from other addresses, is answered at once.
            others = []
            try:
                for index in range(MAX_CONNECTIONS - PER_ADDRESS):
                    connection = self.hrmd.connection(HANG_S, source="127.0.0.%d" % (index + 2))
                    others.append(connection)
                    connection.request("GET", "/api/v1/whoami", headers={"Authorization": "Bearer " + self.token})
                    response = connection.getresponse()
                    response.read()
                    self.assertEqual(response.status, 200)
            finally:
                for connection in others:
                    connection.close()
            # Once one of them closes, its place is free again.
            held.pop().close()
            self.assertTrue(front.wait_for(lambda: self.hrmd.answers(self.token), HANG_S), "a freed place was not given back")
        finally:
            for sock in held:
                sock.close()


class LiveSlotTests(front.FrontTestCase):
    """Live-stream slots come back on every path a request can end by."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.hrmd = front.Hrmd(None, sensors=["mock:id=r1,hz=2"])
        cls.addClassCleanup(cls.hrmd.stop)
        cls.token, _ = cls.hrmd.token("mary/resets")

    def test_sse_resets_free_their_slots(self):
        # Hundreds of live requests reset before their answer, then the whole per-token quota
        # of streams opens: no slot was kept by a request that went away.
        for _ in range(RESETS):
            sock = front.raw_connect(self.hrmd.port, HANG_S)
            sock.sendall(("GET /api/v1/live HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                          "Authorization: Bearer %s\r\n\r\n" % self.token).encode())
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()
        opened = []

        def full_quota():
            for stream in opened:
                stream.close()
            opened.clear()
            for _ in range(LIVE_STREAMS_PER_TOKEN):
                stream = front.SSE(self.hrmd.port, self.token, timeout=HANG_S)
                opened.append(stream)
                if stream.status != 200:
                    return False
            return True

        try:
            # The slots of reset requests come back as the front notices each reset.
            self.assertTrue(front.wait_for(full_quota, HANG_S), "after %d resets the token's %d live streams do not open"
                            % (RESETS, LIVE_STREAMS_PER_TOKEN))
        finally:
            for stream in opened:
                stream.close()


class MalformedHeadTests(front.FrontTestCase):
    """A request the HTTP decoder refuses is answered 400 and closed, and costs the journal no
    error line: anyone who can connect can send them, as many as they like."""

    MALFORMED = [
        b"GET / HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n",                    # a version HTTP/1 cannot parse
        b"GET / HTTP/1.1\r\nHo\x01st: 127.0.0.1\r\n\r\n",                # a control character in a name
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: a\x00b\r\n\r\n",       # NUL in a value
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",         # TLS to a plain port
        b"GET /\x7f HTTP/1.1\r\n\r\n",                                   # DEL in the target
    ]

    def test_malformed_heads_get_400_and_no_error_line(self):
        hrmd = front.Hrmd(self, sensors=["mock:id=m1,hz=1"], log_level="debug")
        for data in self.MALFORMED:
            with self.subTest(data=data):
                sock = front.raw_connect(hrmd.port, HANG_S)
                try:
                    sock.sendall(data)
                    status, headers, _ = front.read_head(sock, HANG_S)
                finally:
                    sock.close()
                self.assertEqual(status, 400, data)
                self.assertEqual(headers.get("connection"), "close", data)
        # Each one's end is logged, at debug: once all are in, nothing about them is still to come.
        hrmd.log.wait_for_line("Error handling upgrade result", HANG_S, count=len(self.MALFORMED))
        errors = [line for line in hrmd.output().splitlines() if " error " in line or " critical " in line]
        self.assertEqual(errors, [], "error lines for malformed requests")
        self.assertTrue(hrmd.answers(hrmd.token("mary/after")[0]), "hrmd no longer answers")
