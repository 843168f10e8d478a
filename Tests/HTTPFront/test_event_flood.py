"""A flood of events from a replayed file is bounded: 10,000 high-heart-rate events replayed
into the store of a running hrmd (thousands a second) are each stored once, while hrmd's live
stream keeps a reader that keeps up informed (every event, or a gap marker where it fell
behind), holds a reader that never reads to its bounded queue, and hrmd's memory stays
bounded."""

import datetime
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import front  # noqa: E402

STRAPS = 20
EVENTS_PER_STRAP = 500
FLOOD = STRAPS * EVENTS_PER_STRAP
# hrmd's peak resident memory may grow by at most this much while the flood goes through.
GROWTH_LIMIT_KB = 96 * 1024
REPLAY_TIMEOUT_S = 300
ALERTS = "[alerts]\nhigh = 120\nhigh-for = 1s\n"


def flood_trace(path, start):
    """Each strap at 1 Hz: 130, 130, 80 over and over, so every third second closes an event
    (two readings a second apart above 120: a run of 1 s); the straps interleaved in time."""
    with open(path, "w") as out:
        out.write('{"format":"hrmd-trace","version":1}\n')
        for second in range(EVENTS_PER_STRAP * 3):
            time_ = (start + datetime.timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
            bpm = 80 if second % 3 == 2 else 130
            for strap in range(STRAPS):
                out.write('{"t":"%s","transport":"ble","device":"flood-%02d","kind":"notify","characteristic":"2a37","value":"06%02x"}\n'
                          % (time_, strap, bpm))


def peak_kb(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM for %d" % pid)


class EventFloodTests(front.FrontTestCase):
    def test_ten_thousand_events_from_a_replayed_file_are_stored_once_and_hrmd_stays_bounded(self):
        hrmd = front.Hrmd(self, sensors=["mock:id=m1,bpm=60,hz=1,contact-loss=0"], config="[hrmd]\nflush-interval = 0.1\n" + ALERTS)
        self.addCleanup(hrmd.stop)
        front.hrmctl("auth", "grant", "hrmd", "high-heart-rate-event", "--store", hrmd.store)
        manager, _ = hrmd.token("root/admin", manager=True)
        reader = front.SSE(hrmd.port, manager, timeout=30)
        self.addCleanup(reader.close)
        idle = front.SSE(hrmd.port, manager, timeout=30, receive_buffer=4096)
        self.addCleanup(idle.close)
        self.assertEqual((reader.status, idle.status), (200, 200))
        # The reader's first sample: its stream is set up before the flood.
        while reader.next_event(30)[0] != "sample":
            pass
        before = peak_kb(hrmd.process.pid)

        trace = os.path.join(hrmd.directory, "flood.trace.jsonl")
        flood_trace(trace, datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1))
        config = os.path.join(hrmd.directory, "alerts.conf")
        with open(config, "w") as out:
            out.write(ALERTS)
        started = time.monotonic()
        front.hrmctl("replay", "--config", config, "--store", hrmd.store, trace, timeout=REPLAY_TIMEOUT_S)
        seconds = time.monotonic() - started
        print("\n  %d events replayed in %.1f s (%.0f a second)" % (FLOOD, seconds, FLOOD / seconds), flush=True)

        # Each stored once: the newest first, as many as the answer holds (its limit is the flood).
        _, out, _ = front.hrmctl("events", "--type", "high-heart-rate-event", "--output", "json", "--limit", str(FLOOD),
                                 "--store", hrmd.store, timeout=120)
        stored = [json.loads(line) for line in out.splitlines()]
        self.assertEqual(len(stored), FLOOD)
        self.assertEqual(len({event["id"] for event in stored}), FLOOD, "an event twice")
        # The reader that keeps up hears the flood: events, and a gap marker where it fell behind.
        heard = {"event": 0, "gap": 0}
        deadline = time.monotonic() + 60
        while heard["event"] + heard["gap"] * FLOOD < FLOOD and time.monotonic() < deadline:
            name, _ = reader.next_event(60)
            if name in heard:
                heard[name] += 1
        print("  the reader heard %d events and %d gap markers" % (heard["event"], heard["gap"]), flush=True)
        self.assertTrue(heard["gap"] > 0 or heard["event"] >= FLOOD, heard)
        # hrmd: alive, answering, its memory bounded whatever the idle reader did not take.
        self.assertTrue(hrmd.alive(), hrmd.output()[-2000:])
        self.assertEqual(hrmd.get("/api/v1/events?limit=1", manager).status, 200)
        growth = peak_kb(hrmd.process.pid) - before
        print("  hrmd's peak resident memory grew %d KiB" % growth, flush=True)
        self.assertLess(growth, GROWTH_LIMIT_KB)
