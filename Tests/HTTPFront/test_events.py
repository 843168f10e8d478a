"""Events over HTTP: GET /api/v1/events answers in `hrmctl events`' shape; an application
token reads them only with read authorization of their type, and never writes them; an
unknown type is one line of JSON with 400."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import front  # noqa: E402

EVENT_WAIT_S = 30
# The mock's heart rate (90 at rest, never under 30) is always above 45: a high event opens
# after one second of readings.
CONFIG = "[hrmd]\nflush-interval = 0.1\n[alerts]\nhigh = 45\nhigh-for = 1s\nlow = 20\n"


class EventTests(front.FrontTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.hrmd = front.Hrmd(None, sensors=["mock:id=e1,bpm=90,hz=5,contact-loss=0"], config=CONFIG)
        cls.addClassCleanup(cls.hrmd.stop)
        front.hrmctl("auth", "grant", "hrmd", "high-heart-rate-event", "--store", cls.hrmd.store)
        cls.manager, _ = cls.hrmd.token("root/admin", manager=True)
        cls.app, _ = cls.hrmd.token("mary/app")

    def setUp(self):
        self.assertTrue(self.hrmd.alive(), "hrmd is not running:\n" + self.hrmd.output()[-2000:])

    def events(self, token, query=""):
        answer = self.hrmd.get("/api/v1/events" + query, token)
        self.assertEqual(answer.status, 200, answer)
        return answer.json["events"]

    def wait_for_event(self):
        """The manager's events once the high event has opened (bounded)."""
        deadline = time.monotonic() + EVENT_WAIT_S
        while time.monotonic() < deadline:
            events = self.events(self.manager)
            if events:
                return events
            time.sleep(0.2)
        self.fail("no event within %d s:\n%s" % (EVENT_WAIT_S, self.hrmd.output()[-2000:]))

    def test_events_read_as_hrmctl_prints_them_and_only_with_read_authorization(self):
        events = self.wait_for_event()
        high = events[0]
        self.assertEqual((high["type"], high["device"], high["metadata"]["threshold"]), ("high-heart-rate-event", "e1", 45))
        self.assertNotIn("end", high)
        self.assertIn("latest", high)
        # The same event, in the same shape, as hrmctl prints it.
        _, out, _ = front.hrmctl("events", "--output", "json", "--store", self.hrmd.store)
        printed = {event["id"]: event for event in map(json.loads, out.splitlines())}
        self.assertEqual(sorted(printed[high["id"]].keys()), sorted(high.keys()))
        self.assertEqual(printed[high["id"]]["start"], high["start"])
        # An application reads none without read authorization, and all of a type with it.
        self.assertEqual(self.events(self.app), [])
        front.hrmctl("auth", "grant", "--read", "mary/app", "high-heart-rate-event", "--store", self.hrmd.store)
        self.assertEqual([e["id"] for e in self.events(self.app, "?type=high-heart-rate-event")][-1:], [events[-1]["id"]])
        self.assertEqual(self.events(self.app, "?type=low-heart-rate-event"), [])
        self.assertEqual(self.events(self.app, "?device=other-strap"), [])

    def test_the_live_stream_sends_open_events_to_readers_of_their_type(self):
        opened = self.wait_for_event()[0]
        # A manager's stream: the open event comes with the snapshot, in the API's shape.
        stream = front.SSE(self.hrmd.port, self.manager, timeout=EVENT_WAIT_S)
        self.addCleanup(stream.close)
        self.assertEqual(stream.status, 200)
        deadline = time.monotonic() + EVENT_WAIT_S
        sent = None
        while sent is None and time.monotonic() < deadline:
            name, data = stream.next_event(EVENT_WAIT_S)
            if name == "event":
                sent = json.loads(data)
        self.assertIsNotNone(sent, "no event on the manager's stream")
        self.assertEqual((sent["id"], sent["type"], sent["device"]), (opened["id"], "high-heart-rate-event", "e1"))
        self.assertEqual(sent["metadata"]["threshold"], 45)
        # A WebSocket gets it as {"kind":"event"}.
        socket_ = front.WebSocket(self.hrmd.port, self.manager, timeout=EVENT_WAIT_S)
        self.addCleanup(socket_.close)
        kinds = []
        while "event" not in kinds and len(kinds) < 200:
            message = socket_.next_message(EVENT_WAIT_S)
            self.assertIsNotNone(message, "the WebSocket closed")
            kinds.append(message["kind"])
            if message["kind"] == "event":
                self.assertEqual(message["event"]["id"], opened["id"])
        self.assertIn("event", kinds)
        # A reader of heart rate without read authorization of the event type: its snapshot
        # (sent before the next sample) holds no event, and neither does what follows.
        reader, _ = self.hrmd.token("mary/heart-only")
        front.hrmctl("auth", "grant", "--read", "mary/heart-only", "heart-rate", "--store", self.hrmd.store)
        blind = front.SSE(self.hrmd.port, reader, timeout=EVENT_WAIT_S)
        self.addCleanup(blind.close)
        names = []
        while names.count("sample") < 10:
            event = blind.next_event(EVENT_WAIT_S)
            self.assertIsNotNone(event, "the stream ended")
            names.append(event[0])
        self.assertNotIn("event", names)

    def test_hostile_arguments_are_400_and_nothing_writes_events(self):
        self.assertError(self.hrmd.get("/api/v1/events?type=heart-rate", self.app), 400, "unknown event type")
        self.assertError(self.hrmd.get("/api/v1/events?limit=0", self.app), 400)
        self.assertError(self.hrmd.get("/api/v1/events?limit=99999999", self.app), 400)
        self.assertError(self.hrmd.get("/api/v1/events?since=yesterday-ish", self.app), 400)
        refused = self.hrmd.request("POST", "/api/v1/events", self.manager, {"Content-Type": "application/json"}, b"{}")
        self.assertIn(refused.status, (404, 405), refused)
        status, _, err = front.hrmctl("auth", "grant", "mary/app", "high-heart-rate-event", "--store", self.hrmd.store, check=False)
        self.assertNotEqual(status, 0)
        self.assertIn("written by hrmd alone", err)
        self.assertTrue(self.hrmd.alive())


if __name__ == "__main__":
    import unittest
    unittest.main()


class EventDeletionTests(front.FrontTestCase):
    """DELETE /api/v1/events?id=: a manager's token deletes an ended event, and the live stream
    tells it as deleted; an application's token, an open event or an unknown id are refused."""

    def test_a_manager_deletes_an_ended_event_and_the_stream_tells_it(self):
        # The event comes from a replayed trace, ended (an open one cannot be deleted).
        hrmd = front.Hrmd(self, sensors=["mock:id=d1,bpm=60,hz=2,contact-loss=0"], config="[hrmd]\nflush-interval = 0.1\n")
        self.addCleanup(hrmd.stop)
        front.hrmctl("auth", "grant", "hrmd", "high-heart-rate-event", "--store", hrmd.store)
        manager, _ = hrmd.token("root/admin", manager=True)
        app, _ = hrmd.token("mary/app")
        trace = os.path.join(hrmd.directory, "high.trace.jsonl")
        with open(trace, "w") as out:
            out.write('{"format":"hrmd-trace","version":1}\n')
            for second in range(30):
                out.write('{"t":"2026-11-20T10:00:%02d.000Z","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"notify",'
                          '"characteristic":"2a37","value":"06%02x"}\n' % (second, 130 if 5 <= second < 20 else 80))
        config = os.path.join(hrmd.directory, "alerts.conf")
        with open(config, "w") as out:
            out.write("[alerts]\nhigh = 120\nhigh-for = 5s\n")
        front.hrmctl("replay", "--config", config, "--store", hrmd.store, trace)
        events = hrmd.get("/api/v1/events", manager).json["events"]
        self.assertEqual(len(events), 1, events)
        ended = events[0]
        self.assertIn("end", ended)
        stream = front.SSE(hrmd.port, manager, timeout=EVENT_WAIT_S)
        self.addCleanup(stream.close)
        self.assertEqual(stream.status, 200)
        # The stream is set up once its first sample comes.
        while stream.next_event(EVENT_WAIT_S)[0] != "sample":
            pass
        self.assertError(hrmd.request("DELETE", "/api/v1/events?id=" + ended["id"], app), 403)
        self.assertError(hrmd.request("DELETE", "/api/v1/events", manager), 400)
        answer = hrmd.request("DELETE", "/api/v1/events?id=" + ended["id"], manager)
        self.assertEqual((answer.status, answer.json), (200, {"deleted": ended["id"]}), answer)
        self.assertEqual(hrmd.get("/api/v1/events", manager).json["events"], [])
        self.assertNotEqual(hrmd.request("DELETE", "/api/v1/events?id=" + ended["id"], manager).status, 200)
        deadline = time.monotonic() + EVENT_WAIT_S
        told = None
        while told is None and time.monotonic() < deadline:
            name, data = stream.next_event(EVENT_WAIT_S)
            if name == "event" and json.loads(data).get("deleted"):
                told = json.loads(data)
        self.assertEqual(told, {"id": ended["id"], "type": "high-heart-rate-event", "device": "AA:BB:CC:DD:EE:FF", "deleted": True})
