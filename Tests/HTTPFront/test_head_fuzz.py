"""A fuzzing client for the HTTP front below the API: hypothesis writes raw requests from a
grammar that holds what attackers send (blank lines before the head, heads and bodies cut short,
lengths that lie, broken chunked bodies, rebound and odd `Host` names, foreign `Origin`s on
requests and WebSocket upgrades, header names and values with control characters), sends each
on a connection of its own, and checks what comes back:

- hrmd still runs, and answers a plain request afterwards;
- every answer is an HTTP/1.1 status line, never a 5xx;
- a `Host` that is not a loopback name is never served (403), and a foreign `Origin` never
  upgrades to a WebSocket (never 101) nor reads the API (403).

schemathesis (fuzz.sh) covers the API's parameters; this covers the bytes around them.
HRMD_HEAD_FUZZ_EXAMPLES sets the examples (default 150)."""

import os
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import front  # noqa: E402

try:
    from hypothesis import HealthCheck, given, settings, strategies as st
except ImportError:  # the requirement check below says so
    st = None

EXAMPLES = int(os.environ.get("HRMD_HEAD_FUZZ_EXAMPLES", "150"))
IDLE_TIMEOUT_S = 1
ANSWER_WAIT_S = 3  # per example: hrmd answers, or closes at its idle timeout, well before
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]", "127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}"]
FOREIGN_HOSTS = ["rebound.example", "rebound.example:{port}", "127.evil.example", "127.0.0.1.evil.example:{port}",
                 "0x7f.0.0.1", "2130706433", "127.1", "evil.example:{port}", "[::ffff:127.0.0.1]x"]
ODD_HOSTS = ["", " ", "127.0.0.1\t", "127.0.0.1:", "LOCALHOST", "[::1"]  # asserted nothing of but the rest
FOREIGN_ORIGINS = ["http://evil.example", "null", "http://127.0.0.1.evil.example", "https://127.0.0.1:{port}",
                   "http://localhost:1", "file://", "http://[::1]:1"]
PATHS = ["/", "/api/v1/whoami", "/api/v1/samples?limit=5", "/api/v1/statistics?by=1m", "/api/v1/live", "/api/v1/zones",
         "/api/v1/authorization", "/api/v1/openapi.json", "/dashboard/", "/overlay/", "/%2e%2e/etc/passwd", "/api/v1/samples?limit=99999999"]


def requests(port, token):
    """Raw requests: (bytes, host is loopback or None when absent, origin foreign, upgrade)."""
    fill = lambda text: text.format(port=port)  # noqa: E731
    host = st.one_of(st.sampled_from(LOOPBACK_HOSTS).map(lambda h: (fill(h), True)),
                     st.sampled_from(FOREIGN_HOSTS).map(lambda h: (fill(h), False)),
                     st.sampled_from(ODD_HOSTS).map(lambda h: (h, None)),
                     st.just((None, None)))
    origin = st.one_of(st.just((None, False)), st.sampled_from(FOREIGN_ORIGINS).map(lambda o: (fill(o), True)),
                       st.just(("http://127.0.0.1:%d" % port, False)))
    junk_header = st.tuples(st.text(st.characters(min_codepoint=1, max_codepoint=0x7F), min_size=1, max_size=12),
                            st.binary(max_size=24))
    body = st.binary(max_size=200)
    return st.tuples(
        st.integers(0, 4),                                            # blank lines before the head
        # Mostly what a client sends, sometimes what none should: most examples reach the
        # routes, the rest the parser.
        st.sampled_from(["GET"] * 6 + ["POST"] * 2 + ["HEAD", "PUT", "DELETE", "OPTIONS", "GE\x00T", "CONNECT"]),
        st.sampled_from(PATHS),
        st.sampled_from(["HTTP/1.1"] * 8 + ["HTTP/1.0", "HTTP/2.0", "HTTP/1.1 extra", ""]),
        host, origin,
        st.sampled_from([False] * 3 + [True]),                        # a WebSocket upgrade (of /api/v1/live)
        st.sampled_from(["valid", "valid", "none", "garbage"]),       # the token
        st.one_of(st.just([]), st.just([]), st.just([]), st.lists(junk_header, min_size=1, max_size=2)),
        st.sampled_from(["none"] * 4 + ["exact", "short", "long", "chunked", "broken-chunked", "negative"]),
        body,
        st.sampled_from([False] * 7 + [True]),                        # the head cut before its end
    ).map(lambda parts: build(port, token, *parts))


def build(port, token, blank_lines, method, path, version, host, origin, upgrade, auth, junk, framing, body, cut):
    (host_value, host_loopback), (origin_value, origin_foreign) = host, origin
    if upgrade:
        path = "/api/v1/live"
    lines = ["%s %s %s" % (method, path, version)]
    if host_value is not None:
        lines.append("Host: " + host_value)
    if origin_value is not None:
        lines.append("Origin: " + origin_value)
    if auth == "valid":
        lines.append("Authorization: Bearer " + token)
    elif auth == "garbage":
        lines.append("Authorization: Bearer \x01not-a-token")
    if upgrade:
        lines += ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol: hrmd, bearer." + token]
    head = ("\r\n" * blank_lines + "\r\n".join(lines)).encode("latin-1", "replace")
    for name, value in junk:
        head += b"\r\n" + name.encode("latin-1", "replace") + b": " + value
    payload = b""
    if framing == "exact":
        head += b"\r\nContent-Length: %d" % len(body)
        payload = body
    elif framing == "short":
        head += b"\r\nContent-Length: %d" % (len(body) + 50)
        payload = body
    elif framing == "long":
        head += b"\r\nContent-Length: %d" % max(len(body) - 5, 0)
        payload = body
    elif framing == "negative":
        head += b"\r\nContent-Length: -1"
    elif framing == "chunked":
        head += b"\r\nTransfer-Encoding: chunked"
        payload = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    elif framing == "broken-chunked":
        head += b"\r\nTransfer-Encoding: chunked"
        payload = b"zz\r\n" + body
    data = head if cut else head + b"\r\n\r\n" + payload
    return data, host_loopback, origin_foreign, upgrade


def exchange(port, data):
    """Sends DATA on a new connection; the status code of the first answer, or None when hrmd
    closed (or said nothing) without one."""
    with socket.create_connection(("127.0.0.1", port), timeout=ANSWER_WAIT_S) as connection:
        try:
            connection.sendall(data)
        except OSError:
            return None  # hrmd closed early: a refusal
        received = b""
        deadline = time.monotonic() + ANSWER_WAIT_S
        while b"\r\n" not in received and time.monotonic() < deadline:
            try:
                chunk = connection.recv(4096)
            except (socket.timeout, ConnectionResetError):
                break
            if not chunk:
                break
            received += chunk
    if not received:
        return None
    line = received.split(b"\r\n", 1)[0]
    assert line.startswith(b"HTTP/1.1 ") and line[9:12].isdigit(), "not a status line: %r" % line[:80]
    return int(line[9:12])


class HeadFuzzTests(front.FrontTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if st is None:
            front.skip_or_fail("hypothesis is missing (python3-hypothesis)")
        os.chdir(tempfile.mkdtemp(prefix="hrmd-head-fuzz-"))  # hypothesis's example folder
        config = "[http]\nidle-timeout = %d\nmax-connections = 64\n" % IDLE_TIMEOUT_S
        cls.hrmd = front.Hrmd(None, sensors=["mock:id=f1,hz=2"], config=config)
        cls.addClassCleanup(cls.hrmd.stop)
        cls.token, _ = cls.hrmd.token("mary/fuzz")

    def test_raw_requests_never_crash_never_5xx_never_serve_a_foreign_host_or_origin(self):
        port, token = self.hrmd.port, self.token
        seen = {"answered": 0, "closed": 0}

        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=front.in_ci(),
                  suppress_health_check=list(HealthCheck))
        @given(requests(port, token))
        def one(request):
            data, host_loopback, origin_foreign, upgrade = request
            status = exchange(port, data)
            self.assertTrue(self.hrmd.alive(), "hrmd ended on %r:\n%s" % (data[:300], self.hrmd.output()[-2000:]))
            if status is None:
                seen["closed"] += 1
                return
            seen["answered"] += 1
            self.assertLess(status, 500, "a server error for %r" % data[:300])
            if host_loopback is False:
                self.assertNotIn(status, (200, 101, 304), "a foreign Host was served: %r" % data[:300])
            if origin_foreign:
                self.assertNotIn(status, (200, 101), "a foreign Origin was served: %r" % data[:300])

        one()
        print("\n  %d answered, %d closed without an answer" % (seen["answered"], seen["closed"]))
        self.assertGreater(seen["answered"], 0, "nothing was ever answered: the grammar never makes a whole request")
        self.assertTrue(front.wait_for(lambda: self.hrmd.answers(self.token), 30), "hrmd no longer answers")
