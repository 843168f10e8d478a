"""Real parts for testing hrmd's HTTP front: the built hrmd with mock straps and `--http
127.0.0.1:0`, tokens made by the built hrmctl, and plain clients (http.client, a raw
Server-Sent Events reader, a raw WebSocket client) that can misbehave on purpose.

    hrmd = Hrmd(self, sensors=["mock:id=a,hz=5"], config="[http]\\nidle-timeout = 2\\n")
    token = hrmd.token("mary/app")                     # hrmctl auth token create …
    answer = hrmd.get("/api/v1/samples?limit=5", token)  # Answer(status, headers, body, json)
    events = SSE(hrmd.port, token); events.next_event(timeout=5)
    socket = WebSocket(hrmd.port, token=token); socket.next_message(timeout=5)

hrmd's stderr is read by a thread of its own into `hrmd.log` (Tests/pysupport/processes.py's
Output); `wait_for_line(pattern, timeout)` waits for a line, never longer than its timeout.
Every wait is bounded and waits for an event (a line, an answer, a message, a closed socket).
`requirements()` says what is missing; `skip_or_fail(reason)` skips, or fails under CI=true.
"""

import base64
import hashlib
import http.client
import json
import os
import re
import select
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "pysupport"))

import builds  # noqa: E402
from builds import REPO, bin_dir, binary  # noqa: E402,F401
from ci import in_ci, require, skip_or_fail  # noqa: E402,F401
from processes import Output, stop_process  # noqa: E402
from waiting import wait_for  # noqa: E402,F401

START_TIMEOUT_S = 60    # hrmd until it says it listens (a debug build on a busy machine)
STOP_TIMEOUT_S = 10     # SIGTERM until SIGKILL
CALL_TIMEOUT_S = 15     # one request, one hrmctl run
LISTENING = re.compile(r"http: listening on (https?)://(?:[0-9.]+|localhost|\[[0-9a-f:]+\]):(\d+)")


def requirements():
    """None when everything the tests need is here, else what is missing."""
    for name in ("hrmd", "hrmctl"):
        if not os.access(binary(name), os.X_OK):
            return "no %s at %s (build it, or set HRMD_BIN_DIR)" % (name, binary(name))
    try:
        help_text = subprocess.run([binary("hrmd"), "--help"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return "hrmd --help did not answer in 30 s"
    if "--http" not in help_text.stdout + help_text.stderr:
        return "%s has no --http (the HTTP front is not built into it)" % binary("hrmd")
    for tool in ("sqlite3", "openssl"):
        if not shutil.which(tool):
            return "needs %s" % tool
    return None


def hrmctl(*arguments, timeout=CALL_TIMEOUT_S, check=True):
    """Runs the built hrmctl; (exit status, stdout, stderr). CHECK: a failure raises."""
    done = builds.hrmctl(*arguments, timeout=timeout, check=check)
    return done.returncode, done.stdout, done.stderr


class Answer:
    """One HTTP answer: status, headers (lower-case names), body bytes, and its JSON (or None)."""

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = {k.lower(): v for k, v in headers}
        self.body = body
        try:
            self.json = json.loads(body) if body else None
        except ValueError:
            self.json = None

    def __repr__(self):
        return "Answer(%d, %r)" % (self.status, self.body[:300])


class Hrmd:
    """The built hrmd with mock straps, a store and a config of its own, serving HTTP on a free
    loopback port. Started in __init__ (the test's cleanup stops it)."""

    def __init__(self, test, sensors=("mock:id=a,hz=5",), config="", http="127.0.0.1:0", grant=True,
                 extra_arguments=(), wait=True, log_level=None, store=None):
        self.directory = tempfile.mkdtemp(prefix="hrmd-http-")
        self.store = store or os.path.join(self.directory, "s.sqlite")
        self.config = os.path.join(self.directory, "hrmd.conf")
        with open(self.config, "w") as f:
            f.write(config if config else "[hrmd]\n")
        if grant:
            hrmctl("auth", "grant", "hrmd", "heart-rate", "--store", self.store)
        arguments = [binary("hrmd"), "--store", self.store, "--config", self.config, "--http", http,
                     "--duration", "900"]  # it ends by itself should the tests die
        for sensor in sensors:
            arguments += ["--sensor", sensor]
        if log_level:
            arguments += ["--log-level", log_level]
        arguments += list(extra_arguments)
        self.process = subprocess.Popen(arguments, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, start_new_session=True)
        self.log = Output(self.process.stderr)
        self.port = None
        self.scheme = "http"
        self.tokens = []
        if test is not None:
            test.addCleanup(self.stop)
        if wait:
            match = self.wait_for_line(LISTENING, START_TIMEOUT_S)
            if not match:
                status = self.process.poll()
                output = self.output()
                self.stop()
                raise AssertionError("hrmd did not listen within %d s (exit %s):\n%s" % (START_TIMEOUT_S, status, output[-3000:]))
            self.scheme, self.port = match.group(1), int(match.group(2))

    def wait_for_line(self, pattern, timeout, start=0):
        """The first match of PATTERN in a line from index START on, waiting up to TIMEOUT for it;
        None when hrmd ends or the time is up."""
        return self.log.search(pattern, timeout, start)

    def output(self):
        return self.log.text()

    def alive(self):
        return self.process.poll() is None

    def wait_exit(self, timeout):
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self):
        stop_process(self.process, STOP_TIMEOUT_S)
        self.log.join(STOP_TIMEOUT_S)
        self.process.stderr.close()
        shutil.rmtree(self.directory, ignore_errors=True)
        return self.process.returncode

    # Tokens and the store.

    def token(self, source, manager=False, expires=None):
        """A new token acting as SOURCE: (token text, id)."""
        arguments = ["auth", "token", "create", source, "--store", self.store]
        if manager:
            arguments.append("--manager")
        if expires:
            arguments += ["--expires", expires]
        _, out, _ = hrmctl(*arguments)
        lines = out.strip().splitlines()
        text = lines[-1].strip()
        match = re.search(r"token (\S+) acts as", out)
        assert text.startswith("hrmd_") and match, "hrmctl printed no token: %r" % out
        self.tokens.append(text)
        return text, match.group(1)

    def sql(self, statement):
        done = subprocess.run(["sqlite3", "-cmd", ".timeout 10000", self.store, statement], capture_output=True, text=True,
                              timeout=CALL_TIMEOUT_S)
        if done.returncode != 0:
            raise AssertionError("sqlite3 %s: %s" % (statement, done.stderr))
        return done.stdout

    def stored(self, *range_arguments):
        """hrmctl samples --output json over RANGE_ARGUMENTS, as a list of objects."""
        _, out, _ = hrmctl("samples", "--store", self.store, "--output", "json", *range_arguments, timeout=60)
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    # HTTP.

    def connection(self, timeout=CALL_TIMEOUT_S, source=None):
        """A new HTTP connection to hrmd, from the loopback address SOURCE when given."""
        if self.scheme == "https":
            raise AssertionError("use an ssl context for https")
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout,
                                          source_address=(source, 0) if source else None)

    def request(self, method, path, token=None, headers=None, body=None, timeout=CALL_TIMEOUT_S, source=None):
        connection = self.connection(timeout, source)
        try:
            all_headers = dict(headers or {})
            if token is not None:
                all_headers["Authorization"] = "Bearer " + token
            connection.request(method, path, body=body, headers=all_headers)
            response = connection.getresponse()
            return Answer(response.status, response.getheaders(), response.read())
        finally:
            connection.close()

    def get(self, path, token=None, headers=None, timeout=CALL_TIMEOUT_S, source=None):
        return self.request("GET", path, token, headers, timeout=timeout, source=source)

    def answers(self, token):
        """Whether hrmd is alive and answers GET /api/v1/whoami with 200."""
        if not self.alive():
            return False
        try:
            return self.get("/api/v1/whoami", token, timeout=10).status == 200
        except OSError:
            return False


# Another loopback address (all of 127/8 reaches the loopback interface): a client the front's
# per-address limit counts apart from those on 127.0.0.1.
OTHER_CLIENT = "127.0.0.2"


def raw_connect(port, timeout=CALL_TIMEOUT_S, receive_buffer=None, source=None):
    """A plain TCP connection to PORT on 127.0.0.1, from the loopback address SOURCE when given."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    if source:
        sock.bind((source, 0))
    sock.settimeout(timeout)
    sock.connect(("127.0.0.1", port))
    return sock


def read_head(sock, timeout):
    """Reads an HTTP answer's head: (status, {name: value}, bytes after the head)."""
    deadline = time.monotonic() + timeout
    data = b""
    while b"\r\n\r\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no answer head within %g s" % timeout)
        sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the answer's head: %r" % data[:200])
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, rest


class SSE:
    """A Server-Sent Events reader on a raw socket: sends GET /api/v1/live, reads the head, then
    events. It can stop reading (just don't call next_event) and read on later."""

    def __init__(self, port, token, receive_buffer=None, timeout=CALL_TIMEOUT_S, extra_headers=""):
        self.sock = raw_connect(port, timeout, receive_buffer)
        auth = "Authorization: Bearer %s\r\n" % token if token else ""
        self.sock.sendall(("GET /api/v1/live HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n%s%s\r\n"
                           % (auth, extra_headers)).encode())
        self.status, self.headers, rest = read_head(self.sock, timeout)
        self.chunked = self.headers.get("transfer-encoding", "").lower() == "chunked"
        self.raw = rest        # bytes received, not yet de-chunked
        self.text = b""        # the event stream's bytes
        self.closed = False
        self.bytes_read = len(rest)

    def _dechunk(self):
        if not self.chunked:
            self.text += self.raw
            self.raw = b""
            return
        while True:
            line_end = self.raw.find(b"\r\n")
            if line_end < 0:
                return
            size = int(self.raw[:line_end].split(b";")[0] or b"0", 16)
            if len(self.raw) < line_end + 2 + size + 2:
                return
            self.text += self.raw[line_end + 2:line_end + 2 + size]
            self.raw = self.raw[line_end + 2 + size + 2:]
            if size == 0:
                self.closed = True
                return

    def body(self, timeout):
        """The whole body of a non-stream answer (a refusal)."""
        deadline = time.monotonic() + timeout
        length = int(self.headers.get("content-length", "-1"))
        while True:
            self._dechunk()
            if self.closed or (length >= 0 and len(self.text) >= length):
                return self.text
            left = deadline - time.monotonic()
            if left <= 0:
                return self.text
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                self.closed = True
                return self.text
            self.raw += chunk

    def next_event(self, timeout):
        """The next event as (name, data) — comments as ("comment", text) — or None when the stream
        ended; raises TimeoutError after TIMEOUT."""
        deadline = time.monotonic() + timeout
        while True:
            self._dechunk()
            end = self.text.find(b"\n\n")
            if end >= 0:
                block, self.text = self.text[:end].decode(), self.text[end + 2:]
                name, data = "message", []
                for line in block.split("\n"):
                    if line.startswith(":"):
                        return ("comment", line[1:].strip())
                    field, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if field == "event":
                        name = value
                    elif field == "data":
                        data.append(value)
                    elif field == "retry":
                        name = "retry"
                        data.append(value)
                return (name, "\n".join(data))
            if self.closed:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no event within %g s" % timeout)
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                self.closed = True
                continue
            self.bytes_read += len(chunk)
            self.raw += chunk

    def next_named(self, names, timeout):
        """The next event whose name is in NAMES (others skipped), or None when the stream ended."""
        deadline = time.monotonic() + timeout
        while True:
            event = self.next_event(max(0.0, deadline - time.monotonic()))
            if event is None or event[0] in names:
                return event

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class WebSocket:
    """A WebSocket client on a raw socket (RFC 6455): the upgrade with a bearer header or with
    subprotocols, masked client frames, text messages and the close frame."""

    def __init__(self, port, token=None, protocols=None, timeout=CALL_TIMEOUT_S, receive_buffer=None, headers=()):
        self.sock = raw_connect(port, timeout, receive_buffer)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = ["GET /api/v1/live HTTP/1.1", "Host: 127.0.0.1:%d" % port, "Upgrade: websocket", "Connection: Upgrade",
                 "Sec-WebSocket-Key: " + key, "Sec-WebSocket-Version: 13"] + list(headers)
        if token:
            lines.append("Authorization: Bearer " + token)
        if protocols:
            lines.append("Sec-WebSocket-Protocol: " + ", ".join(protocols))
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.status, self.headers, self.buffer = read_head(self.sock, timeout)
        self.accepted = self.status == 101
        if self.accepted:
            expected = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
            assert self.headers.get("sec-websocket-accept") == expected, "bad Sec-WebSocket-Accept: %r" % self.headers
        self.close_code = None
        self.close_reason = None

    def _read_exactly(self, count, deadline):
        while len(self.buffer) < count:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no frame within the time")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                raise ConnectionError("closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def next_frame(self, timeout):
        """(opcode, payload)."""
        deadline = time.monotonic() + timeout
        first, second = self._read_exactly(2, deadline)
        length = second & 0x7F
        if length == 126:
            length = struct.unpack("!H", self._read_exactly(2, deadline))[0]
        elif length == 127:
            length = struct.unpack("!Q", self._read_exactly(8, deadline))[0]
        mask = self._read_exactly(4, deadline) if second & 0x80 else None
        payload = self._read_exactly(length, deadline)
        if mask:
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        return first & 0x0F, payload

    def next_message(self, timeout):
        """The next text message as parsed JSON; None once the server closed (close_code says how)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                opcode, payload = self.next_frame(max(0.0, deadline - time.monotonic()))
            except ConnectionError:
                return None
            if opcode == 0x1:
                return json.loads(payload.decode())
            if opcode == 0x8:
                if len(payload) >= 2:
                    self.close_code = struct.unpack("!H", payload[:2])[0]
                    self.close_reason = payload[2:].decode(errors="replace")
                return None
            if opcode == 0x9:
                self.send_frame(0xA, payload)

    def next_kind(self, kinds, timeout):
        deadline = time.monotonic() + timeout
        while True:
            message = self.next_message(max(0.0, deadline - time.monotonic()))
            if message is None or message.get("kind") in kinds:
                return message

    def send_frame(self, opcode, payload):
        mask = os.urandom(4)
        header = bytes([0x80 | opcode])
        if len(payload) < 126:
            header += bytes([0x80 | len(payload)])
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + struct.pack("!H", len(payload))
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", len(payload))
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def tls_context(certificate):
    context = ssl.create_default_context(cafile=certificate)
    context.check_hostname = False  # the certificate names 127.0.0.1 as an IP; checked by the CA match
    return context


def make_certificate(directory):
    """A self-signed certificate and key for 127.0.0.1 and localhost: (certificate, key)."""
    certificate = os.path.join(directory, "cert.pem")
    key = os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True, timeout=60)
    return certificate, key


class FrontTestCase(unittest.TestCase):
    """Skips (or fails under CI=true) when a piece is missing."""

    @classmethod
    def setUpClass(cls):
        require(requirements())

    def assertError(self, answer, status, contains=None):
        """ANSWER is STATUS with the one-line JSON error body."""
        self.assertEqual(answer.status, status, answer)
        self.assertTrue(answer.headers.get("content-type", "").startswith("application/json"), answer.headers)
        self.assertIsInstance(answer.json, dict, answer)
        self.assertEqual(list(answer.json.keys()), ["error"], answer)
        self.assertIsInstance(answer.json["error"], str)
        self.assertEqual(answer.body.strip().count(b"\n"), 0, "the error is not one line: %r" % answer.body)
        if contains:
            self.assertIn(contains, answer.json["error"])
