"""Desktop notifications of events: `hrmctl notify`, reading the store service on the (private)
system bus, shows an event that opens on the (private) session bus's notification server,
python-dbusmock's notification_daemon template, with what the desktop needs to say it.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from waiting import wait_until  # noqa: E402

EVENT = "high-heart-rate-event"
ALERTS = "flush-interval = 0.1\n[alerts]\nhigh = 45\nhigh-for = 1s\nlow = 20\n"
NOTIFICATIONS = "org.freedesktop.Notifications"
NOTIFICATIONS_PATH = "/org/freedesktop/Notifications"


class SessionBus:
    """A dbus-daemon of the session kind, listening in a directory of its own."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="hrmd-session-bus-")
        config = os.path.join(self.directory, "session.conf")
        with open(config, "w") as f:
            f.write("""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
""" % self.directory)
        self.process = subprocess.Popen(["dbus-daemon", "--config-file=" + config, "--nofork", "--print-address=1"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        self.address = self.process.stdout.readline().decode().strip()
        if not self.address:
            raise RuntimeError("the session bus did not start: " + self.process.stderr.read().decode(errors="replace"))

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(harness.STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(harness.STOP_TIMEOUT_S)
        self.process.stdout.close()
        self.process.stderr.close()
        shutil.rmtree(self.directory, ignore_errors=True)


class NotifyTest(harness.ServiceTestCase):
    shares_hrmd = False

    def setUp(self):
        if shutil.which("dbus-daemon") is None:
            harness.skip_or_fail("needs dbus-daemon")
        self.session = SessionBus()
        self.addCleanup(self.session.stop)
        environment = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=self.session.address)
        self.mock = subprocess.Popen([harness.PYTHON, "-m", "dbusmock", "--template", "notification_daemon"], env=environment,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        self.addCleanup(self.stop_mock)
        import dbus
        self.session_connection = dbus.bus.BusConnection(self.session.address)
        self.addCleanup(self.session_connection.close)
        wait_until(lambda: self.session_connection.name_has_owner(NOTIFICATIONS), harness.START_TIMEOUT_S,
                   "the mock notification server on the session bus")
        self.hrmd = harness.Hrmd(self.bus, sensors=("mock:id=note-strap,hz=5,bpm=90,contact-loss=0",), more_config=ALERTS)
        self.addCleanup(self.hrmd.stop)

    def stop_mock(self):
        self.mock.terminate()
        try:
            self.mock.wait(harness.STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.mock.kill()
            self.mock.wait(harness.STOP_TIMEOUT_S)
        self.mock.stderr.close()

    def notify_calls(self):
        import dbus
        mock = dbus.Interface(self.session_connection.get_object(NOTIFICATIONS, NOTIFICATIONS_PATH), "org.freedesktop.DBus.Mock")
        return [call[1] for call in mock.GetMethodCalls("Notify", timeout=harness.CALL_TIMEOUT_S)]

    def test_an_event_that_opens_is_shown_on_the_desktop(self):
        notify = harness.Background((0, 0), self.bus, [harness.hrmctl_binary(), "notify", "--type", EVENT, "--duration", "300"],
                                    extra_env={"DBUS_SESSION_BUS_ADDRESS": self.session.address})
        self.addCleanup(notify.finish)
        self.addCleanup(notify.process.terminate)
        self.assertIsNotNone(notify.wait_for_line(lambda line: "notifying of %s events" % EVENT in line, harness.START_TIMEOUT_S),
                             "hrmctl notify did not start: %r %s" % (notify.lines, self.hrmd.output()[-2000:]))
        status, _, err = harness.hrmctl(self.bus, "auth", "grant", "hrmd", "heart-rate", EVENT)
        self.assertEqual(status, 0, err)
        calls = wait_until(self.notify_calls, harness.HANG_S, "a notification")
        app_name, replaces, _, summary, body, actions, hints, timeout = calls[0]
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
