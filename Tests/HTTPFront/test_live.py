"""GET /api/v1/live: as Server-Sent Events and as a WebSocket (with a bearer header, or a
browser's subprotocols), samples that equal the stored ones, a gap marker for a client that fell
behind while another kept up, streams that vanish without a word, the limits (429), and the end of
a revoked token's streams within about a second."""

import calendar
import os
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import front  # noqa: E402

EVENT_S = 15      # the next sample of a strap at 5 Hz, on a busy machine
REVOKE_S = 2.5    # a revoked token's stream ends within about a second (the feed rechecks once a second)
HANG_S = 60


def stored_by_key(hrmd):
    return {(s["device"]["identifier"], s["start"]): s for s in hrmd.stored("--since", "15m")}


class LiveTests(front.FrontTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.hrmd = front.Hrmd(None, sensors=["mock:id=l1,hz=5", "mock:id=l2,hz=5,bpm=90"])
        cls.addClassCleanup(cls.hrmd.stop)
        cls.manager, _ = cls.hrmd.token("root/live", manager=True)

    def setUp(self):
        self.assertTrue(self.hrmd.alive(), "hrmd is not running:\n" + self.hrmd.output()[-2000:])

    def assertSamplesStored(self, samples):
        self.assertTrue(samples)
        stored = stored_by_key(self.hrmd)
        for sample in samples:
            key = (sample["device"]["identifier"], sample["start"])
            self.assertIn(key, stored, "a live sample that is not stored: %r" % sample)
            self.assertEqual(sample, stored[key])

    def sse(self, token, **options):
        stream = front.SSE(self.hrmd.port, token, **options)
        self.addCleanup(stream.close)
        return stream

    def websocket(self, token=None, protocols=None):
        socket_ = front.WebSocket(self.hrmd.port, token=token, protocols=protocols)
        self.addCleanup(socket_.close)
        return socket_

    def test_sse_samples_equal_stored(self):
        stream = self.sse(self.manager)
        self.assertEqual(stream.status, 200)
        self.assertTrue(stream.headers.get("content-type", "").startswith("text/event-stream"), stream.headers)
        self.assertEqual(stream.next_event(EVENT_S), ("retry", "3000"))
        samples = []
        while len(samples) < 12:
            event = stream.next_named({"sample", "gap", "error"}, EVENT_S)
            self.assertIsNotNone(event, "the stream ended")
            self.assertEqual(event[0], "sample", event)
            samples.append(front.json.loads(event[1]))
        self.assertEqual({s["device"]["identifier"] for s in samples}, {"l1", "l2"})
        self.assertSamplesStored(samples)

    def test_websocket_samples_equal_stored(self):
        socket_ = self.websocket(self.manager)
        self.assertTrue(socket_.accepted, socket_.status)
        samples = []
        while len(samples) < 12:
            message = socket_.next_kind({"sample", "gap", "error"}, EVENT_S)
            self.assertIsNotNone(message, "closed: %s %s" % (socket_.close_code, socket_.close_reason))
            self.assertEqual(message["kind"], "sample", message)
            self.assertEqual(list(message.keys()), ["kind", "sample"])
            samples.append(message["sample"])
        self.assertSamplesStored(samples)

    def test_browser_subprotocols(self):
        socket_ = self.websocket(protocols=["hrmd", "bearer." + self.manager])
        self.assertTrue(socket_.accepted, socket_.status)
        self.assertEqual(socket_.headers.get("sec-websocket-protocol"), "hrmd")
        message = socket_.next_kind({"sample"}, EVENT_S)
        self.assertIsNotNone(message)
        # A refused token gets the refusal as an error message, then the close code 1008.
        for protocols, token, error in ((["hrmd", "bearer.hrmd_aaaaaaaaaaaa_" + "A" * 43], None, "the token is not valid"),
                                        (["hrmd"], None, "no token"),
                                        (None, self.manager[:-2] + "AA", "the token is not valid")):
            with self.subTest(error=error, protocols=protocols):
                refused = self.websocket(token=token, protocols=protocols)
                self.assertTrue(refused.accepted, refused.status)
                message = refused.next_message(EVENT_S)
                self.assertEqual(message["kind"], "error", message)
                self.assertIn(error, message["error"])
                self.assertIsNone(refused.next_message(EVENT_S))
                self.assertEqual(refused.close_code, 1008)
                self.assertEqual(refused.close_reason, message["error"])

    def test_workout_changes_on_both_streams(self):
        stream = self.sse(self.manager)
        socket_ = self.websocket(self.manager)
        self.assertTrue(socket_.accepted, socket_.status)
        _, started, _ = front.hrmctl("workout", "start", "--store", self.hrmd.store, "--device", "l1", "--activity", "hiit")
        workout_id = started.splitlines()[-1]
        event = stream.next_named({"workout"}, EVENT_S)
        self.assertIsNotNone(event, "the stream ended")
        workout = front.json.loads(event[1])
        self.assertEqual((workout["id"], workout["activity"], workout["device"]), (workout_id, "hiit", "l1"))
        self.assertNotIn("end", workout)
        message = socket_.next_kind({"workout"}, EVENT_S)
        self.assertEqual(list(message.keys()), ["kind", "workout"])
        self.assertEqual(message["workout"]["id"], workout_id)
        front.hrmctl("workout", "end", "--store", self.hrmd.store, workout_id)
        self.assertIn("end", front.json.loads(stream.next_named({"workout"}, EVENT_S)[1]))
        front.hrmctl("workout", "delete", "--store", self.hrmd.store, workout_id)
        self.assertEqual(front.json.loads(stream.next_named({"workout"}, EVENT_S)[1]), {"id": workout_id, "deleted": True})
        self.assertEqual(socket_.next_kind({"workout"}, EVENT_S)["workout"]["id"], workout_id)

    def test_reader_without_read_authorization_sees_no_samples_of_others(self):
        token, _ = self.hrmd.token("mary/live-reader")
        stream = self.sse(token)
        self.assertEqual(stream.status, 200)
        socket_ = self.websocket(token)
        with self.assertRaises(TimeoutError):
            stream.next_named({"sample", "state"}, 3)  # nothing of hrmd's for 3 s (15 samples went by)
        front.hrmctl("auth", "grant", "--store", self.hrmd.store, "mary/live-reader", "heart-rate", "--read")
        event = stream.next_named({"sample"}, EVENT_S)
        self.assertEqual(front.json.loads(event[1])["source"], "hrmd")
        self.assertEqual(socket_.next_kind({"sample"}, EVENT_S)["sample"]["source"], "hrmd")

    def test_samples_name_their_person_to_managers_only(self):
        # l2 is live-ann's from an hour ago (kept: the samples stored from now on are hers, as
        # the live ones are, for the tests that compare them after this one).
        for command in (("person", "add", "live-ann"), ("person", "assign", "live-ann", "l2", "--from", "1h")):
            status, _, err = front.hrmctl(*command, "--store", self.hrmd.store)
            self.assertEqual(status, 0, err)
        token, _ = self.hrmd.token("mary/person-reader")
        front.hrmctl("auth", "grant", "--store", self.hrmd.store, "mary/person-reader", "heart-rate", "--read")
        manager = self.sse(self.manager)
        reader = self.websocket(token)
        # The feed reads assignments once a second: the first sample of l2 that names her.
        deadline = time.monotonic() + EVENT_S
        named = None
        while named is None and time.monotonic() < deadline:
            event = manager.next_named({"sample"}, EVENT_S)
            self.assertIsNotNone(event, "the stream ended")
            sample = front.json.loads(event[1])
            if sample.get("person") == "live-ann":
                named = sample
        self.assertIsNotNone(named, "no live sample named live-ann within %d s" % EVENT_S)
        self.assertEqual(named["device"]["identifier"], "l2")
        self.assertEqual(list(named.keys())[-1], "person")
        self.assertSamplesStored([named])
        # l1 is nobody's; an application reading every source's heart rate is never told whose.
        for _ in range(10):
            sample = front.json.loads(manager.next_named({"sample"}, EVENT_S)[1])
            self.assertEqual("person" in sample, sample["device"]["identifier"] == "l2", sample)
        devices = set()
        for _ in range(40):  # 20 of each strap, at most
            message = reader.next_kind({"sample"}, EVENT_S)
            self.assertIsNotNone(message, "closed: %s %s" % (reader.close_code, reader.close_reason))
            self.assertNotIn("person", message["sample"])
            devices.add(message["sample"]["device"]["identifier"])
            if devices == {"l1", "l2"}:
                break
        self.assertEqual(devices, {"l1", "l2"})

    def test_revoked_token_stream_ends(self):
        token, identifier = self.hrmd.token("root/revoked-live", manager=True)
        stream = self.sse(token)
        socket_ = self.websocket(token)
        self.assertIsNotNone(stream.next_named({"sample"}, EVENT_S))
        self.assertIsNotNone(socket_.next_kind({"sample"}, EVENT_S))
        front.hrmctl("auth", "token", "revoke", identifier, "--store", self.hrmd.store)
        revoked = time.monotonic()
        event = stream.next_named({"error"}, REVOKE_S + 5)
        sse_after = time.monotonic() - revoked
        self.assertIsNotNone(event, "the SSE stream ended without an error event")
        self.assertEqual(front.json.loads(event[1]), {"error": "the token was revoked"})
        self.assertLess(sse_after, REVOKE_S, "the SSE stream ended %.2f s after the revoke" % sse_after)
        self.assertIsNone(stream.next_named({"sample"}, 5), "the SSE stream went on after its error event")
        message = socket_.next_kind({"error"}, REVOKE_S + 5)
        ws_after = time.monotonic() - revoked
        self.assertEqual(message, {"kind": "error", "error": "the token was revoked"})
        self.assertLess(ws_after, REVOKE_S, "the WebSocket ended %.2f s after the revoke" % ws_after)
        self.assertIsNone(socket_.next_message(5))
        self.assertEqual(socket_.close_code, 1008)
        print("  (ended %.2f s and %.2f s after the revoke)" % (sse_after, ws_after), file=sys.stderr)

    def test_revoked_and_replaced_token_stream_ends(self):
        # Revoking a token and making its successor at once (a rotation): making a token drops
        # the rows of revoked ones, and the stream of the revoked one must still end.
        token, identifier = self.hrmd.token("root/rotated", manager=True)
        stream = self.sse(token)
        self.assertIsNotNone(stream.next_named({"sample"}, EVENT_S))
        front.hrmctl("auth", "token", "revoke", identifier, "--store", self.hrmd.store)
        revoked = time.monotonic()
        self.hrmd.token("root/rotated", manager=True)
        event = stream.next_named({"error"}, REVOKE_S + 5)
        after = time.monotonic() - revoked
        self.assertIsNotNone(event, "the stream ended without an error event")
        self.assertIn(front.json.loads(event[1])["error"], ("the token was revoked", "the token is not valid"))
        self.assertLess(after, REVOKE_S, "the stream of a revoked and replaced token ended %.2f s after the revoke" % after)

    def test_too_many_streams_per_token(self):
        token, _ = self.hrmd.token("root/many", manager=True)
        streams = [self.sse(token) for _ in range(16)]
        self.assertEqual([s.status for s in streams], [200] * 16)
        refused = self.sse(token)
        self.assertEqual(refused.status, 429)
        body = refused.body(EVENT_S)
        self.assertError(front.Answer(429, [("content-type", refused.headers.get("content-type", ""))], body), 429, "too many live streams")
        socket_ = self.websocket(token)
        if socket_.accepted:
            self.assertIsNone(socket_.next_kind({"sample"}, EVENT_S))
            self.assertEqual(socket_.close_code, 1008)
            self.assertIn("too many live streams", socket_.close_reason)
        else:
            self.assertEqual(socket_.status, 429)
        # One closes: another is let in (bounded wait: the front notices the closed stream at its next write).
        streams[0].close()
        self.assertTrue(front.wait_for(lambda: self.sse(token).status == 200, HANG_S / 2, interval=0.2),
                        "a closed stream was not counted out")


class SlowClientTests(front.FrontTestCase):
    """A client that stops reading gets a gap marker when it reads again; one that keeps reading
    gets every sample on time, without a gap. Four straps at 100 Hz: 400 samples a second, 200
    per write of the pipeline (every 0.5 s), within one queue of 256 events."""

    # Samples the on-time client receives while the slow one reads nothing: more than the slow
    # connection's kernel buffers hold (the server's send buffer grows to about 3 MB, some
    # 9000 samples) and its queue of 256 events.
    STALL_SAMPLES = 12000

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.hrmd = front.Hrmd(None, sensors=["mock:id=f%d,hz=100,bpm=%d" % (n, 60 + n) for n in range(4)])
        cls.addClassCleanup(cls.hrmd.stop)
        cls.manager, _ = cls.hrmd.token("root/slow", manager=True)

    def test_slow_client_gets_gap_while_other_keeps_up(self):
        slow = front.SSE(self.hrmd.port, self.manager, receive_buffer=4096)
        self.addCleanup(slow.close)
        fast = front.SSE(self.hrmd.port, self.manager)
        self.addCleanup(fast.close)
        self.assertEqual((slow.status, fast.status), (200, 200))
        self.assertIsNotNone(slow.next_named({"sample"}, EVENT_S))
        counts = {"sample": 0, "gap": 0, "late": 0.0}
        stop = threading.Event()
        failure = []

        def read_fast():
            try:
                while not stop.is_set():
                    event = fast.next_event(EVENT_S)
                    if event is None:
                        failure.append("the on-time stream ended")
                        return
                    if event[0] == "sample":
                        counts["sample"] += 1
                        sample = front.json.loads(event[1])
                        start = calendar.timegm(time.strptime(sample["start"][:19], "%Y-%m-%dT%H:%M:%S"))
                        counts["late"] = max(counts["late"], time.time() - start)
                    elif event[0] == "gap":
                        counts["gap"] += 1
            except Exception as error:  # noqa: BLE001 — reported by the test
                failure.append(repr(error))

        reader = threading.Thread(target=read_fast, daemon=True)
        reader.start()
        try:
            # The slow client reads nothing while the on-time one receives STALL_SAMPLES samples.
            self.assertTrue(front.wait_for(lambda: counts["sample"] >= self.STALL_SAMPLES or failure, HANG_S, interval=0.1),
                            "the on-time client received only %d samples in %d s" % (counts["sample"], HANG_S))
            self.assertEqual(failure, [])
            # Now it reads: a gap marker comes before it catches up.
            seen = 0
            deadline = time.monotonic() + HANG_S
            gap = None
            while time.monotonic() < deadline:
                event = slow.next_event(EVENT_S)
                self.assertIsNotNone(event, "the slow stream ended")
                if event[0] == "gap":
                    gap = front.json.loads(event[1])
                    break
                seen += 1
            self.assertIsNotNone(gap, "no gap marker after %d events" % seen)
            self.assertGreater(gap["missed"], 0)
            self.assertIsNotNone(slow.next_named({"sample"}, EVENT_S), "the slow stream did not continue after the gap")
        finally:
            stop.set()
            reader.join(EVENT_S + 1)
        self.assertEqual(failure, [])
        self.assertEqual(counts["gap"], 0, "the on-time client got a gap marker")
        self.assertLess(counts["late"], 10, "the on-time client's samples came %.1f s late" % counts["late"])
        print("  (gap of %d events after %d read; on-time client: %d samples)" % (gap["missed"], seen, counts["sample"]), file=sys.stderr)


class VanishingClientTests(front.FrontTestCase):
    """300 streams that go away without a word leave the front serving, and the count of streams
    recovers: as many new ones are let in as the limit allows, and not one more."""

    LIMIT = 300
    PER_TOKEN = 15

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.hrmd = front.Hrmd(None, sensors=["mock:id=v1,hz=5"], config="[http]\nmax-live-streams = %d\nmax-connections-per-address = %d\n" % (cls.LIMIT, cls.LIMIT + 20))
        cls.addClassCleanup(cls.hrmd.stop)
        cls.tokens = [cls.hrmd.token("root/vanish%d" % n, manager=True)[0] for n in range(cls.LIMIT // cls.PER_TOKEN + 1)]

    def open_streams(self, count, deadline):
        """COUNT accepted SSE streams, PER_TOKEN per token, retrying refusals until DEADLINE."""
        streams = []

        def let_in():
            token = self.tokens[len(streams) // self.PER_TOKEN]
            stream = front.SSE(self.hrmd.port, token)
            if stream.status == 200:
                streams.append(stream)
                return True
            stream.close()
            self.assertEqual(stream.status, 429)
            return False

        while len(streams) < count:
            # A refused stream is asked again (every 0.2 s) until the front has counted out enough
            # of the vanished ones: it notices each at its next write.
            if not (let_in() or front.wait_for(let_in, max(0.0, deadline - time.monotonic()), interval=0.2)):
                for s in streams:
                    s.close()
                self.fail("only %d streams let in again before the deadline" % len(streams))
        return streams

    def test_vanishing_clients(self):
        streams = self.open_streams(self.LIMIT, time.monotonic() + HANG_S)
        over = front.SSE(self.hrmd.port, self.tokens[-1])
        self.assertEqual(over.status, 429, "a stream over the limit was let in")
        over.close()
        # They vanish: half reset the connection, half close it; none reads a byte more.
        for index, stream in enumerate(streams):
            if index % 2:
                stream.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            stream.close()
        # More that send a request and go before reading anything.
        for index in range(100):
            sock = front.raw_connect(self.hrmd.port)
            sock.sendall(("GET /api/v1/live HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nAuthorization: Bearer %s\r\n\r\n"
                          % self.tokens[index % len(self.tokens)]).encode())
            sock.close()
        self.assertTrue(self.hrmd.answers(self.tokens[0]), "the front stopped answering:\n" + self.hrmd.output()[-2000:])
        started = time.monotonic()
        again = self.open_streams(self.LIMIT, time.monotonic() + HANG_S)
        recovered = time.monotonic() - started
        try:
            over = front.SSE(self.hrmd.port, self.tokens[-1])
            self.assertEqual(over.status, 429, "more streams than the limit after the vanishing")
            over.close()
            self.assertIsNotNone(again[-1].next_named({"sample"}, EVENT_S))
        finally:
            for stream in again:
                stream.close()
        self.assertTrue(self.hrmd.alive())
        print("  (%d streams let in again %.1f s after 300 vanished)" % (self.LIMIT, recovered), file=sys.stderr)
