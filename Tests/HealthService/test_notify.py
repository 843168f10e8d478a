"""Desktop notifications of events: `hrmctl notify`, reading the store service on the (private)
system bus, shows an event that opens on the (private) session bus's notification server,
python-dbusmock's notification_daemon template, with what the desktop needs to say it.
"""

import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from sessionbus import NotificationServer, SessionBus  # noqa: E402
from waiting import wait_until  # noqa: E402

EVENT = "high-heart-rate-event"
ALERTS = "flush-interval = 0.1\n[alerts]\nhigh = 45\nhigh-for = 1s\nlow = 20\n"


class NotifyTest(harness.ServiceTestCase):
    shares_hrmd = False

    def setUp(self):
        if shutil.which("dbus-daemon") is None:
            harness.skip_or_fail("needs dbus-daemon")
        self.session = SessionBus()
        self.addCleanup(self.session.stop)
        self.server = NotificationServer(self.session)
        self.addCleanup(self.server.stop)
        self.hrmd = harness.Hrmd(self.bus, sensors=("mock:id=note-strap,hz=5,bpm=90,contact-loss=0",), more_config=ALERTS)
        self.addCleanup(self.hrmd.stop)

    def test_an_event_that_opens_is_shown_on_the_desktop(self):
        notify = harness.Background((0, 0), self.bus, [harness.hrmctl_binary(), "notify", "--type", EVENT, "--duration", "300"],
                                    extra_env={"DBUS_SESSION_BUS_ADDRESS": self.session.address})
        self.addCleanup(notify.finish)
        self.addCleanup(notify.process.terminate)
        self.assertIsNotNone(notify.wait_for_line(lambda line: "notifying of %s events" % EVENT in line, harness.START_TIMEOUT_S),
                             "hrmctl notify did not start: %r %s" % (notify.lines, self.hrmd.output()[-2000:]))
        status, _, err = harness.hrmctl(self.bus, "auth", "grant", "hrmd", "heart-rate", EVENT)
        self.assertEqual(status, 0, err)
        calls = wait_until(self.server.notify_calls, harness.HANG_S, "a notification")
        _, (app_name, replaces, _, summary, body, actions, hints, timeout) = calls[0]
        self.assertEqual((str(app_name), int(replaces), str(summary)), ("hrmd", 0, "High heart rate"))
        self.assertIn("note-strap", str(body))
        self.assertIn("above 45", str(body))
        self.assertEqual(int(hints["urgency"]), 2, "an opening heart-rate event is critical")
        self.assertEqual(len(calls), 1, "one notification while the event stays open: %r" % calls)

    def test_without_a_session_bus_it_says_so_in_one_line(self):
        status, out, err = harness.run_as((0, 0), self.bus, [harness.hrmctl_binary(), "notify", "--duration", "5"])
        self.assertEqual(status, 69, (out, err))
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("no session bus", err)


if __name__ == "__main__":
    unittest.main()
