"""Events followed through the store service: `hrmctl watch --type high-heart-rate-event`
without a store file is told by the service's SamplesChanged signal when hrmd's event opens.

hrmd serves the store on the bus with a mock strap whose heart rate (90) is over the test's
threshold (45 for a second), and starts recording once root grants it heart rate and the event
type; root's watch, started before, prints the event's opening, and the event it printed is
the one the service's Events answers.
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

EVENT = "high-heart-rate-event"
ALERTS = "flush-interval = 0.1\n[alerts]\nhigh = 45\nhigh-for = 1s\nlow = 20\n"


class EventWatchTest(harness.ServiceTestCase):
    shares_hrmd = False

    def setUp(self):
        self.hrmd = harness.Hrmd(self.bus, sensors=("mock:id=ev-strap,hz=5,bpm=90,contact-loss=0",), more_config=ALERTS)
        self.addCleanup(self.hrmd.stop)

    def log(self):
        return "\n--- hrmd's output (last lines) ---\n" + self.hrmd.output()[-3000:]

    def test_a_watch_through_the_service_is_told_when_an_event_opens(self):
        table_watch = harness.Background((0, 0), self.bus, [harness.hrmctl_binary(), "watch", "--type", EVENT, "--output", "table",
                                                            "--duration", "300"])
        self.addCleanup(table_watch.finish)
        self.addCleanup(table_watch.process.terminate)
        # The table's header says the watch follows (observing, the events as they were read).
        self.assertIsNotNone(table_watch.wait_for_line(lambda line: line.startswith("TIME  EVENT"), harness.START_TIMEOUT_S),
                             "no header" + self.log())
        status, _, err = harness.hrmctl(self.bus, "auth", "grant", "hrmd", "heart-rate", EVENT)
        self.assertEqual(status, 0, err)
        opened = table_watch.wait_for_line(lambda line: " %s  opened  ev-strap  threshold 45" % EVENT in line, harness.HANG_S)
        self.assertIsNotNone(opened, "the watch did not tell the event's opening: %r%s" % (table_watch.lines, self.log()))
        # The event it told is the one the service's Events answers, open.
        status, out, err = harness.hrmctl(self.bus, "events", "--output", "json")
        self.assertEqual(status, 0, err)
        stored = [json.loads(row) for row in out.splitlines()]
        self.assertEqual([(event["type"], event["device"], "end" in event) for event in stored], [(EVENT, "ev-strap", False)], out)
        self.assertEqual(opened.split()[0], stored[0]["start"][:19] + "Z", "the watch's line starts at the event's start")


if __name__ == "__main__":
    unittest.main()
