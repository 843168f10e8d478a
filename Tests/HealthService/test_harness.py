"""The harness itself, without hrmd: the system-like bus with the shipped policy, clients as
other uids, and the polkit mock."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import NAMELESS, NOBODY, MANAGE  # noqa: E402

REQUEST_NAME = """
reply = bus.request_name("org.hrmd.Health", dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
out(reply)
"""


class HarnessTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        missing = harness.requirements()
        if missing:
            harness.skip_or_fail(missing)
        cls.bus = harness.SystemLikeBus()
        try:
            cls.polkit = harness.PolkitMock(cls.bus)
        except Exception:
            cls.bus.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.polkit.stop()
        cls.bus.stop()

    def test_bus_is_system_like(self):
        self.assertTrue(self.bus.has_owner("org.freedesktop.DBus"))
        code, out, err = harness.run_as(NOBODY, self.bus, ["id", "-u"])
        self.assertEqual((code, out.strip()), (0, "65534"), err)
        reply = harness.Reply(*harness.run_snippet_as(NOBODY, self.bus, "out(bus.get_unique_name())"))
        self.assertTrue(reply.ok, reply)
        self.assertTrue(reply.value.startswith(":"), reply)

    def test_a_uid_without_a_login_name_reaches_the_bus(self):
        self.assertFalse(harness.has_passwd_entry(NAMELESS[0]), "uid %d has a login name here" % NAMELESS[0])
        code = "out([bus.get_unique_name(), bus.get_unix_user(bus.get_unique_name())])"
        reply = harness.Reply(*harness.run_snippet_as(NAMELESS, self.bus, code))
        self.assertTrue(reply.ok, reply)
        self.assertEqual(reply.value[1], NAMELESS[0])

    def test_unprivileged_uids_cannot_own_the_service_name(self):
        for who in (NOBODY, NAMELESS):
            reply = harness.Reply(*harness.run_snippet_as(who, self.bus, REQUEST_NAME))
            self.assertEqual(reply.error, "org.freedesktop.DBus.Error.AccessDenied", "%s: %r" % (who, reply))
        self.assertFalse(self.bus.has_owner("org.hrmd.Health"))

    def test_root_can_own_the_service_name(self):
        reply = harness.Reply(*harness.run_snippet_as((0, 0), self.bus, REQUEST_NAME))
        self.assertTrue(reply.ok, reply)
        self.assertEqual(reply.value, 1)  # PRIMARY_OWNER; the name goes when the snippet ends

    def test_unprivileged_uids_cannot_own_other_names(self):
        code = 'out(bus.request_name("org.example.Other", dbus.bus.NAME_FLAG_DO_NOT_QUEUE))'
        reply = harness.Reply(*harness.run_snippet_as(NOBODY, self.bus, code))
        self.assertEqual(reply.error, "org.freedesktop.DBus.Error.AccessDenied", reply)

    def test_anyone_may_call_the_service_name(self):
        # Nobody owns it here: the bus answers ServiceUnknown, not AccessDenied, so the policy
        # lets the call through (this bus has no activation).
        reply = harness.call_as(NOBODY, self.bus, "health.AuthorizationStatus('app', 'heart-rate')")
        self.assertEqual(reply.error, "org.freedesktop.DBus.Error.ServiceUnknown", reply)

    def test_polkit_mock_answers_as_set_allowed(self):
        try:
            self.polkit.set_allowed([])
            self.assertEqual(self.polkit.check(MANAGE)[0], False)
            self.polkit.set_allowed([MANAGE])
            self.assertEqual(self.polkit.check(MANAGE)[0], True)
            self.assertEqual(self.polkit.check("org.example.other")[0], False)
            self.polkit.allow_unknown(True)
            self.assertEqual(self.polkit.check("org.example.other")[0], True)
        finally:
            self.polkit.allow_unknown(False)
            self.polkit.set_allowed([])
        self.assertEqual(self.polkit.check(MANAGE)[0], False)

    def test_other_uids_may_ask_polkit(self):
        code = """
            authority = dbus.Interface(bus.get_object("org.freedesktop.PolicyKit1",
                "/org/freedesktop/PolicyKit1/Authority"), "org.freedesktop.PolicyKit1.Authority")
            subject = ("system-bus-name", {"name": dbus.String(bus.get_unique_name(), variant_level=1)})
            out(authority.CheckAuthorization(subject, "org.hrmd.health.manage", dbus.Dictionary({}, signature="ss"),
                                             dbus.UInt32(0), ""))
        """
        reply = harness.Reply(*harness.run_snippet_as(NOBODY, self.bus, code))
        self.assertTrue(reply.ok, reply)
        self.assertEqual(reply.value[0], False)

    def test_client_runs_as_another_uid_and_reports_a_missing_service(self):
        code, out, err = harness.run_client_as(NOBODY, self.bus, "--app", "harness", "status")
        self.assertEqual(code, 69, (out, err))
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("not running", err)

    def test_background_client_is_bounded(self):
        background = harness.background_snippet_as(NOBODY, self.bus, "print('ready', flush=True); time.sleep(60)")
        self.assertEqual(background.wait_for_line(lambda line: line == "ready", 10), "ready")
        status, lines, _ = background.kill()
        self.assertNotEqual(status, 0)


if __name__ == "__main__":
    unittest.main()
