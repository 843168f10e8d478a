"""The store service, `hrmd --serve`, against real parts: a private bus configured like the system
bus with the shipped policy, a mock polkit, applications running as other uids (nobody, and
65533 which has no login name), and examples/hrm-client.py.

What is checked comes from the documented interface (README, "The store service on D-Bus") and
dbus/org.hrmd.Health1.xml. hrmd runs as root here, so the test's own (root) connection is a
manager's. Skipped, with the reason, until the built hrmd has --serve.
"""

import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import MANAGE, NAMELESS, NOBODY, NO_HIGH, NO_LOW  # noqa: E402

import dbus  # noqa: E402

INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"
ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"
NOT_AUTHORIZED = "org.hrmd.Health1.Error.NotAuthorized"
HR = "heart-rate"
SIGNAL_WAIT_S = 10
OBSERVER_LIFE_S = 20


def now_us():
    return int(time.time() * 1_000_000)


def source(who, app):
    return ("nobody" if who == NOBODY else "uid-%d" % who[0]) + "/" + app


class HealthServiceTests(harness.ServiceTestCase):
    def setUp(self):
        self.assertTrue(self.hrmd.alive(), "hrmd is no longer running:\n" + self.hrmd.output()[-3000:])
        self.polkit.set_allowed([])
        self.base = now_us() - 3_600_000_000  # an hour ago: each test's samples at base + k s

    # Helpers.

    def log(self):
        return "\n--- hrmd's output (last lines) ---\n" + self.hrmd.output()[-3000:]

    def call(self, who, expression):
        return harness.call_as(who, self.bus, expression)

    def assertOk(self, reply):
        self.assertTrue(reply.ok, "%r%s" % (reply, self.log()))
        return reply.value

    def assertError(self, reply, name):
        self.assertEqual(reply.error, name, "%r%s" % (reply, self.log()))

    def manager(self):
        return self.hrmd.proxy()

    def grant(self, src, access="share", status="sharingAuthorized"):
        self.manager().SetAuthorization(src, HR, access, status, timeout=harness.CALL_TIMEOUT_S)

    def save(self, who, app, *values_and_offsets):
        """Saves heart-rate samples (value, seconds after base) as WHO/APP; the reply."""
        items = ", ".join("sample(%r, %d)" % (float(value), self.base + int(offset * 1_000_000))
                          for value, offset in values_and_offsets)
        return self.call(who, "health.SaveSamples(%r, samples(%s))" % (app, items))

    def query(self, who, app, type_=HR, since=NO_LOW, until=NO_HIGH, limit=0):
        return self.call(who, "health.QuerySamples(%r, %r, dbus.Int64(%d), dbus.Int64(%d), dbus.UInt32(%d))"
                         % (app, type_, since, until, limit))

    def status(self, who, app):
        return self.assertOk(self.call(who, "health.AuthorizationStatus(%r, %r)" % (app, HR)))

    def sources_seen(self, samples):
        return sorted({sample["source"] for sample in samples})

    def manager_query(self):
        samples = self.manager().QuerySamples("root-view", HR, dbus.Int64(NO_LOW), dbus.Int64(NO_HIGH),
                                              dbus.UInt32(0), timeout=harness.CALL_TIMEOUT_S)
        return [{str(k): v for k, v in sample.items()} for sample in samples]

    def authorizations(self):
        entries = self.manager().Authorizations(timeout=harness.CALL_TIMEOUT_S)
        return {tuple(str(field) for field in entry) for entry in entries}

    # The service is there.

    def test_introspection_and_properties(self):
        code = """
            xml = bus.get_object("org.hrmd.Health", "/org/hrmd/Health").Introspect(
                dbus_interface="org.freedesktop.DBus.Introspectable")
            props = dbus.Interface(bus.get_object("org.hrmd.Health", "/org/hrmd/Health"),
                                   "org.freedesktop.DBus.Properties").GetAll("org.hrmd.Health1")
            out({"xml": str(xml), "props": props})
        """
        value = self.assertOk(harness.Reply(*harness.run_snippet_as(NOBODY, self.bus, code)))
        for member in ("RequestAuthorization", "AuthorizationStatus", "SaveSamples", "QuerySamples", "Observe",
                       "SamplesChanged", "SetAuthorization", "Authorizations"):
            self.assertIn('name="%s"' % member, value["xml"])
        self.assertIn([HR, "count/min"], value["props"]["Types"])
        self.assertGreater(value["props"]["MaxSamplesPerSave"], 0)

    # Who may see what.

    def test_an_unauthorized_application_sees_only_its_own_samples(self):
        self.grant(source(NOBODY, "own-a"))
        self.grant(source(NAMELESS, "own-b"))
        self.assertOk(self.save(NOBODY, "own-a", (71, 0)))
        self.assertOk(self.save(NAMELESS, "own-b", (72, 1)))
        for who, app in ((NOBODY, "own-a"), (NAMELESS, "own-b")):
            samples = self.assertOk(self.query(who, app))
            self.assertEqual(self.sources_seen(samples), [source(who, app)], samples)
        # No authorization at all: no error, nothing of anyone else's (a denial is not revealed).
        self.assertEqual(self.assertOk(self.query(NOBODY, "own-none")), [])
        # With read authorization, every source's samples.
        self.grant(source(NAMELESS, "own-reader"), access="read")
        seen = self.sources_seen(self.assertOk(self.query(NAMELESS, "own-reader")))
        self.assertIn(source(NOBODY, "own-a"), seen)
        self.assertIn(source(NAMELESS, "own-b"), seen)

    def test_an_unauthorized_application_cannot_save(self):
        self.assertOk(self.call(NOBODY, "health.RequestAuthorization('no-save', ['heart-rate'], [])"))
        self.assertError(self.save(NOBODY, "no-save", (70, 0)), NOT_AUTHORIZED)
        self.assertEqual(self.assertOk(self.query(NOBODY, "no-save")), [])
        self.assertNotIn(source(NOBODY, "no-save"), self.sources_seen(self.manager_query()))

    def test_an_application_cannot_grant_itself_nor_list_authorizations(self):
        for who in (NOBODY, NAMELESS):
            src = source(who, "self-grant")
            self.assertOk(self.call(who, "health.RequestAuthorization('self-grant', ['heart-rate'], ['heart-rate'])"))
            for access in ("share", "read"):
                self.assertError(self.call(who, "health.SetAuthorization(%r, 'heart-rate', %r, 'sharingAuthorized')"
                                           % (src, access)), ACCESS_DENIED)
            self.assertError(self.call(who, "health.Authorizations()"), ACCESS_DENIED)
            self.assertEqual(self.status(who, "self-grant"), "notDetermined")
            self.assertError(self.save(who, "self-grant", (70, 0)), NOT_AUTHORIZED)

    def test_a_grant_and_a_revoke_apply_from_the_next_call(self):
        app, src = "grant-flow", source(NOBODY, "grant-flow")
        self.assertEqual(self.status(NOBODY, app), "notDetermined")
        self.assertOk(self.call(NOBODY, "health.RequestAuthorization(%r, ['heart-rate'], ['heart-rate'])" % app))
        self.assertEqual(self.status(NOBODY, app), "notDetermined")
        entries = self.authorizations()
        self.assertIn((src, HR, "share", "notDetermined"), entries)
        self.assertIn((src, HR, "read", "notDetermined"), entries)
        self.assertError(self.save(NOBODY, app, (70, 0)), NOT_AUTHORIZED)

        self.grant(src)
        self.assertEqual(self.status(NOBODY, app), "sharingAuthorized")
        self.assertEqual(self.assertOk(self.save(NOBODY, app, (70, 0))), [1, 0])
        self.assertEqual(self.assertOk(self.save(NOBODY, app, (70, 0))), [0, 1])  # the same identity again

        self.grant(src, status="sharingDenied")
        self.assertEqual(self.status(NOBODY, app), "sharingDenied")
        self.assertError(self.save(NOBODY, app, (71, 1)), NOT_AUTHORIZED)
        samples = self.assertOk(self.query(NOBODY, app))
        self.assertEqual([(s["source"], s["value"]) for s in samples], [(src, 70.0)])

    def test_latest_sample_is_the_newest_the_caller_may_read(self):
        app = "latest"
        src = source(NOBODY, app)
        latest = "health.LatestSample(%r, 'heart-rate', %r)"
        self.assertEqual(self.assertOk(self.call(NOBODY, latest % (app, ""))), {}, "nothing stored yet: the empty dictionary")
        self.grant(src)
        self.assertOk(self.save(NOBODY, app, (64, 1), (66, 3), (65, 2)))
        newest = self.assertOk(self.call(NOBODY, latest % (app, "")))
        self.assertEqual((newest["source"], newest["value"]), (src, 66.0))
        self.assertEqual(self.assertOk(self.call(NOBODY, latest % (app, "no-such-device"))), {}, "another device's: none")
        # Another user's application without read authorization sees only its own: nothing.
        self.assertEqual(self.assertOk(self.call(NAMELESS, latest % (app, ""))), {})
        self.assertError(self.call(NOBODY, latest % (app, "x" * 600)), INVALID_ARGS)

    def test_two_users_applications_of_the_same_name_are_different_sources(self):
        app = "same-name"
        for who in (NOBODY, NAMELESS):
            self.grant(source(who, app))
        self.assertOk(self.save(NOBODY, app, (61, 5)))
        self.assertOk(self.save(NAMELESS, app, (62, 5)))  # same start, other source: stored too
        self.assertEqual(self.sources_seen(self.assertOk(self.query(NOBODY, app))), ["nobody/" + app])
        self.assertEqual(self.sources_seen(self.assertOk(self.query(NAMELESS, app))), ["uid-65533/" + app])
        mine = [s for s in self.manager_query() if str(s["source"]).endswith("/" + app)]
        self.assertEqual(sorted((str(s["source"]), float(s["value"])) for s in mine),
                         [("nobody/" + app, 61.0), ("uid-65533/" + app, 62.0)])
        self.assertEqual(self.status(NAMELESS, app), "sharingAuthorized")
        self.grant(source(NOBODY, app), status="sharingDenied")
        self.assertEqual(self.status(NAMELESS, app), "sharingAuthorized")

    def test_a_source_cannot_be_spoofed(self):
        bad_names = ["nobody/x", "a/b", "/", "Upper", "", "a" * 65, "-lead", ".lead", "sp ace", "ünï"]
        for name in bad_names:
            with self.subTest(app=name):
                self.assertError(self.call(NOBODY, "health.RequestAuthorization(%r, ['heart-rate'], [])" % name),
                                 INVALID_ARGS)
                self.assertError(self.call(NOBODY, "health.AuthorizationStatus(%r, 'heart-rate')" % name),
                                 INVALID_ARGS)
                self.assertError(self.save(NOBODY, name, (70, 0)), INVALID_ARGS)
                self.assertError(self.query(NOBODY, name), INVALID_ARGS)
                self.assertError(self.call(NOBODY, "health.Observe(%r, 'heart-rate')" % name), INVALID_ARGS)
        longest = "a" * 64
        self.assertOk(self.call(NOBODY, "health.RequestAuthorization(%r, ['heart-rate'], [])" % longest))
        # An application named "hrmd" is nobody/hrmd, never the daemon's own source.
        self.assertOk(self.call(NOBODY, "health.RequestAuthorization('hrmd', ['heart-rate'], [])"))
        sources = {entry[0] for entry in self.authorizations()}
        self.assertIn("nobody/hrmd", sources)
        self.assertIn("nobody/" + longest, sources)
        self.assertEqual([s for s in sources if s.startswith("nobody/") and s.count("/") != 1], [])

    # Signals.

    def observer(self, who, app, observe=True, eavesdrop=False, type_="heart-rate"):
        code = """
            def changed(type_, anchor, sender=None, destination=None):
                print("changed %%s %%d %%s" %% (type_, anchor, destination), flush=True)
            bus.add_signal_receiver(changed, "SamplesChanged", "org.hrmd.Health1", path="/org/hrmd/Health",
                                    sender_keyword="sender", destination_keyword="destination")
            if %(eavesdrop)r:
                try:
                    bus.add_match_string("type='signal',interface='org.hrmd.Health1',member='SamplesChanged',"
                                         "eavesdrop='true'")
                except dbus.exceptions.DBusException as error:
                    print("no eavesdropping: " + error.get_dbus_name(), flush=True)
            if %(observe)r:
                health.Observe(%(app)r, %(type)r)
            # Each line on stdin: a Ping to the service, "pong" at its reply. The service sends
            # the reply after whatever it sent this client before, and the bus keeps that order:
            # a SamplesChanged sent before the Ping is printed before "pong".
            peer = dbus.Interface(bus.get_object("org.hrmd.Health", "/org/hrmd/Health", introspect=False),
                                  "org.freedesktop.DBus.Peer")
            def ping(fd, condition):
                if not os.read(fd, 4096):
                    return False
                peer.Ping(reply_handler=lambda: print("pong", flush=True),
                          error_handler=lambda error: print("pong " + error.get_dbus_name(), flush=True))
                return True
            GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, ping)
            print("ready", flush=True)
            loop = GLib.MainLoop()
            GLib.timeout_add(%(life)d, loop.quit)
            loop.run()
        """ % {"app": app, "observe": observe, "eavesdrop": eavesdrop, "life": OBSERVER_LIFE_S * 1000, "type": type_}
        background = harness.background_snippet_as(who, self.bus, code, stdin=subprocess.PIPE)
        self.addCleanup(background.kill)
        ready = background.wait_for_line(lambda line: line == "ready" or line.startswith("{"), SIGNAL_WAIT_S)
        self.assertEqual(ready, "ready", "observer %s/%s: %r%s" % (who, app, background.lines, self.log()))
        return background

    def test_samples_changed_reaches_only_authorized_observers(self):
        self.grant(source(NOBODY, "sig-writer"))
        self.grant(source(NAMELESS, "sig-reader"), access="read")
        reader = self.observer(NAMELESS, "sig-reader")
        writer_itself = self.observer(NOBODY, "sig-writer")      # may read its own samples
        unauthorized = self.observer(NAMELESS, "sig-noread")     # observes, may not read others'
        eavesdropper = self.observer(NAMELESS, "sig-spy", observe=False, eavesdrop=True)
        nobody_else = self.observer(NOBODY, "sig-other")         # same uid as the writer, other app

        self.assertOk(self.save(NOBODY, "sig-writer", (80, 0)))
        for who, background in (("the reader", reader), ("the writer", writer_itself)):
            line = background.wait_for_line(lambda line: line.startswith("changed heart-rate "), SIGNAL_WAIT_S)
            self.assertIsNotNone(line, "%s got no SamplesChanged: %r%s" % (who, background.lines, self.log()))
            self.assertNotEqual(line.split()[3], "None", "SamplesChanged must be sent to the observer alone")
        others = (("an observer without read access", unauthorized), ("an eavesdropper", eavesdropper),
                  ("another application of the writer's user", nobody_else))
        # Anything the service sent the others with those signals comes before its reply to a
        # Ping each of them sends now.
        for who, background in others:
            background.process.stdin.write(b"ping\n")
            background.process.stdin.flush()
            pong = background.wait_for_line(lambda line: line.startswith("pong"), SIGNAL_WAIT_S)
            if pong != "pong":
                self.fail("%s: no reply to its Ping: %r%s" % (who, background.lines, self.log()))
        for who, background in others:
            _, lines, _ = background.kill()
            self.assertEqual([line for line in lines if line.startswith("changed")], [],
                             "%s received SamplesChanged: %r" % (who, lines))

    def test_workout_changes_reach_only_observers_that_may_read_them(self):
        app = "sig-coach"
        self.manager().SetAuthorization(source(NOBODY, app), "workout", "share", "sharingAuthorized", timeout=harness.CALL_TIMEOUT_S)
        own = self.observer(NOBODY, app, type_="workout")
        stranger = self.observer(NAMELESS, "sig-stranger", type_="workout")
        self.assertOk(self.call(NOBODY, "health.StartWorkout(%r, '', 'sig-strap', 'yoga', dbus.Int64(%d))" % (app, self.base)))
        line = own.wait_for_line(lambda line: line.startswith("changed workout "), SIGNAL_WAIT_S)
        self.assertIsNotNone(line, "the workout's source got no SamplesChanged: %r%s" % (own.lines, self.log()))
        self.assertNotEqual(line.split()[3], "None", "SamplesChanged must be sent to the observer alone")
        stranger.process.stdin.write(b"ping\n")
        stranger.process.stdin.flush()
        self.assertEqual(stranger.wait_for_line(lambda line: line.startswith("pong"), SIGNAL_WAIT_S), "pong", self.log())
        _, lines, _ = stranger.kill()
        self.assertEqual([line for line in lines if line.startswith("changed")], [], "a stranger was told: %r" % lines)

    # Bad arguments.

    def test_bad_arguments_are_invalid_args_and_the_service_keeps_serving(self):
        app = "bad-args"
        self.grant(source(NOBODY, app))
        max_save = int(self.hrmd.property("MaxSamplesPerSave"))
        max_query = int(self.hrmd.property("MaxSamplesPerQuery"))
        start = self.base
        cases = {
            "unknown type (query)": "health.QuerySamples(%r, 'blood-sugar', NO_LOW, NO_HIGH, dbus.UInt32(0))" % app,
            "unknown type (status)": "health.AuthorizationStatus(%r, 'blood-sugar')" % app,
            "unknown type (request)": "health.RequestAuthorization(%r, ['blood-sugar'], [])" % app,
            "unknown type (observe)": "health.Observe(%r, 'blood-sugar')" % app,
            "unknown type (save)": "health.SaveSamples(%r, samples(sample(70.0, %d, type='blood-sugar')))"
                                   % (app, start),
            "incompatible unit kg": "health.SaveSamples(%r, samples(sample(70.0, %d, unit='kg')))" % (app, start),
            "unknown unit": "health.SaveSamples(%r, samples(sample(70.0, %d, unit='furlongs')))" % (app, start),
            "since after until": "health.QuerySamples(%r, 'heart-rate', dbus.Int64(%d), dbus.Int64(%d), dbus.UInt32(0))"
                                 % (app, start + 1000, start),
            "limit over MaxSamplesPerQuery": "health.QuerySamples(%r, 'heart-rate', NO_LOW, NO_HIGH, dbus.UInt32(%d))"
                                             % (app, max_query + 1),
            "start as a string": "health.SaveSamples(%r, samples(sample(start='yesterday')))" % app,
            "start as a double": "health.SaveSamples(%r, samples(sample(start=dbus.Double(%d))))" % (app, start),
            "value as a string": "health.SaveSamples(%r, samples(sample(start=%d, value='seventy')))" % (app, start),
            "type as a number": "health.SaveSamples(%r, samples(sample(70.0, %d, type=dbus.Int32(7))))" % (app, start),
            "unit missing": "health.SaveSamples(%r, samples(dbus.Dictionary({'type': 'heart-rate', "
                            "'start': dbus.Int64(%d), 'value': 70.0}, signature='sv')))" % (app, start),
            "end before start": "health.SaveSamples(%r, samples(sample(70.0, %d, end=dbus.Int64(%d))))"
                                % (app, start, start - 1_000_000),
            "metadata not a dictionary": "health.SaveSamples(%r, samples(sample(70.0, %d, metadata='chest')))"
                                         % (app, start),
            "oversized batch": "health.SaveSamples(%r, samples(*[sample(70.0, %d + i) for i in range(%d)]))"
                               % (app, start, max_save + 1),
            "wrong signature": "raw.QuerySamples(%r, 'heart-rate', 'yesterday', dbus.Int64(NO_HIGH), dbus.UInt32(0))"
                               % app,
        }
        for what, expression in cases.items():
            with self.subTest(what):
                self.assertError(self.call(NOBODY, expression), INVALID_ARGS)
        self.assertTrue(self.hrmd.alive(), self.log())
        self.assertEqual(self.assertOk(self.query(NOBODY, app)), [], "a refused batch stores nothing")
        self.assertEqual(self.assertOk(self.save(NOBODY, app, (70, 0))), [1, 0])
        self.assertEqual(self.status(NOBODY, app), "sharingAuthorized")
        full = "health.SaveSamples(%r, samples(*[sample(70.0, %d + i * 1000000) for i in range(%d)]))" % (
            app, start + 1_000_000, max_save)
        self.assertEqual(self.assertOk(self.call(NOBODY, full))[0], max_save, "a batch of MaxSamplesPerSave is taken")

    # Managers.

    def test_a_manager_allowed_by_polkit_sets_authorizations(self):
        target = source(NAMELESS, "polkit-target")
        grant = "health.SetAuthorization(%r, 'heart-rate', 'share', 'sharingAuthorized')" % target
        self.assertError(self.call(NOBODY, grant), ACCESS_DENIED)
        self.assertEqual(self.status(NAMELESS, "polkit-target"), "notDetermined")
        self.polkit.set_allowed([MANAGE])
        try:
            self.assertOk(self.call(NOBODY, grant))
            entries = self.assertOk(self.call(NOBODY, "health.Authorizations()"))
            self.assertIn([target, HR, "share", "sharingAuthorized"], entries)
            self.assertEqual(self.status(NAMELESS, "polkit-target"), "sharingAuthorized")
        finally:
            self.polkit.set_allowed([])
        revoke = "health.SetAuthorization(%r, 'heart-rate', 'share', 'sharingDenied')" % target
        self.assertError(self.call(NOBODY, revoke), ACCESS_DENIED)
        self.assertEqual(self.status(NAMELESS, "polkit-target"), "sharingAuthorized")

    def test_people_are_a_managers_and_only_a_manager_sees_whose_samples_are_whose(self):
        for expression in ("health.People()", "health.RemovePerson('svc-ann')",
                           "health.SavePerson({'name': 'svc-x', 'zones': 'percent-max'}, True)",
                           "health.AssignStrap('svc-ann', 'svc-strap', dbus.Int64(0), dbus.Int64(%d))" % NO_HIGH,
                           "health.PersonStatistics('svc-ann', 'heart-rate', '1h', dbus.Int64(%d), dbus.Int64(%d), {})" % (NO_LOW, NO_HIGH),
                           "health.PersonVariability('svc-ann', dbus.Int64(%d), dbus.Int64(%d))" % (NO_LOW, NO_HIGH)):
            with self.subTest(expression=expression):
                self.assertError(self.call(NOBODY, expression), ACCESS_DENIED)
        status, out, err = harness.hrmctl(self.bus, "person", "add", "svc-ann", "--max-hr", "190")
        self.assertEqual(status, 0, err)
        status, out, err = harness.hrmctl(self.bus, "person", "assign", "svc-ann", "svc-strap", "--from", "2h")
        self.assertEqual(status, 0, err)
        app = "people-writer"
        self.grant(source(NOBODY, app))
        self.assertOk(self.call(NOBODY, "health.SaveSamples(%r, samples(sample(80.0, %d, device='svc-strap'), sample(81.0, %d, device='other-strap')))"
                                % (app, self.base, self.base + 1_000_000)))
        status, out, err = harness.hrmctl(self.bus, "samples", "--source", source(NOBODY, app), "--output", "json")
        self.assertEqual(status, 0, err)
        rows = [json.loads(line) for line in out.splitlines()]
        self.assertEqual([row.get("person") for row in rows], ["svc-ann", None], out)
        # The person's statistics through the service: the svc-strap sample alone.
        status, out, err = harness.hrmctl(self.bus, "stats", "--by", "1d", "--person", "svc-ann", "--output", "json")
        self.assertEqual(status, 0, err)
        buckets = [json.loads(line) for line in out.splitlines()]
        self.assertEqual([(b["count"], b["min"], b["max"]) for b in buckets], [(1, 80, 80)], out)
        status, out, err = harness.hrmctl(self.bus, "stats", "--hrv", "--person", "svc-ann", "--output", "json")
        self.assertEqual((status, out.strip(), err.strip()), (0, "", "hrmctl: no samples"), err)
        status, listed, err = harness.hrmctl(self.bus, "person", "list", "--output", "json")
        self.assertEqual(status, 0, err)
        self.assertIn('"name":"svc-ann"', listed)
        # Not a manager: the same samples, no one named (nobody's hrmctl reads its own source's).
        self.grant(source(NOBODY, "hrmctl"), access="read")
        status, out, err = harness.run_as(NOBODY, self.bus, [harness.hrmctl_binary(), "samples", "--source", source(NOBODY, app),
                                                             "--output", "json"])
        self.assertEqual(status, 0, err)
        rows = [json.loads(line) for line in out.splitlines()]
        self.assertEqual(len(rows), 2, out)
        self.assertTrue(all("person" not in row for row in rows), out)
        status, out, err = harness.run_as(NOBODY, self.bus, [harness.hrmctl_binary(), "person", "add", "svc-bob"])
        self.assertEqual(status, 77, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_workouts_need_share_authorization_and_only_their_source_changes_them(self):
        app = "svc-coach"
        start = "health.StartWorkout(%r, '', 'svc-wk-strap', 'rowing', dbus.Int64(%d))" % (app, self.base)
        self.assertError(self.call(NOBODY, start), NOT_AUTHORIZED)
        self.manager().SetAuthorization(source(NOBODY, app), "workout", "share", "sharingAuthorized", timeout=harness.CALL_TIMEOUT_S)
        workout = self.assertOk(self.call(NOBODY, start))
        identifier = str(workout["id"])
        self.assertEqual(str(workout["source"]), source(NOBODY, app))
        self.assertNotIn("end", workout)
        # The strap's open workout, named by the strap alone.
        lapped = self.assertOk(self.call(NOBODY, "health.AddWorkoutEvent(%r, '', '', 'svc-wk-strap', 'lap', dbus.Int64(%d))"
                                         % (app, self.base + 60_000_000)))
        self.assertEqual([str(t) for t in lapped["eventTypes"]], ["lap"])
        self.assertError(self.call(NOBODY, "health.AddWorkoutEvent(%r, %r, '', '', 'resume', dbus.Int64(%d))"
                                   % (app, identifier, self.base + 61_000_000)), INVALID_ARGS)
        self.assertError(self.call(NOBODY, "health.AddWorkoutEvent(%r, %r, '', '', 'jump', dbus.Int64(%d))"
                                   % (app, identifier, self.base + 61_000_000)), INVALID_ARGS)
        # Another application of the same user is another source: it sees no such workout.
        other = "svc-other"
        self.manager().SetAuthorization(source(NOBODY, other), "workout", "share", "sharingAuthorized", timeout=harness.CALL_TIMEOUT_S)
        self.assertError(self.call(NOBODY, "health.EndWorkout(%r, %r, '', '', dbus.Int64(%d))" % (other, identifier, self.base + 90_000_000)),
                         INVALID_ARGS)
        listed = self.assertOk(self.call(NOBODY, "health.Workouts(%r, dbus.Int64(%d), dbus.Int64(%d), '', '', dbus.UInt32(10))"
                                         % (other, NO_LOW, NO_HIGH)))
        self.assertEqual(listed, [])
        ended = self.assertOk(self.call(NOBODY, "health.EndWorkout(%r, %r, '', '', dbus.Int64(%d))" % (app, identifier, self.base + 120_000_000)))
        self.assertEqual(int(ended["end"]), self.base + 120_000_000)
        # The user's own hrmctl, a manager through polkit as root, reads and deletes it.
        status, out, err = harness.hrmctl(self.bus, "workout", "show", identifier, "--output", "json")
        self.assertEqual(status, 0, err)
        shown = json.loads(out)
        self.assertEqual((shown["activity"], shown["device"], shown["elapsedSeconds"]), ("rowing", "svc-wk-strap", 120))
        self.assertEqual(len(shown["laps"]), 2)
        status, out, err = harness.hrmctl(self.bus, "workout", "delete", identifier)
        self.assertEqual(status, 0, err)
        details = self.call(NOBODY, "health.WorkoutDetails(%r, %r)" % (app, identifier))
        self.assertError(details, INVALID_ARGS)

    def test_events_are_hrmds_alone_to_write_and_read_with_read_authorization(self):
        events = "health.Events(%r, dbus.Int64(%d), dbus.Int64(%d), '', '', '', dbus.UInt32(100))"
        # An application without read authorization hears of no event, and no error says why.
        self.assertEqual(self.assertOk(self.call(NOBODY, events % ("ev-app", NO_LOW, NO_HIGH))), [])
        # It may not ask to write an event type, nor be granted it by a manager.
        self.assertFalse(self.call(NOBODY, "health.RequestAuthorization('ev-app', ['high-heart-rate-event'], [])").ok)
        self.assertTrue(self.call(NOBODY, "health.RequestAuthorization('ev-app', [], ['high-heart-rate-event'])").ok)
        with self.assertRaises(dbus.exceptions.DBusException):
            self.manager().SetAuthorization(source(NOBODY, "ev-app"), "high-heart-rate-event", "share", "sharingAuthorized",
                                            timeout=harness.CALL_TIMEOUT_S)
        self.manager().SetAuthorization(source(NOBODY, "ev-app"), "high-heart-rate-event", "read", "sharingAuthorized",
                                        timeout=harness.CALL_TIMEOUT_S)
        self.assertEqual(self.assertOk(self.call(NOBODY, events % ("ev-app", NO_LOW, NO_HIGH))), [])
        # A type that is not an event type is refused in one line.
        reply = self.call(NOBODY, "health.Events('ev-app', dbus.Int64(%d), dbus.Int64(%d), 'heart-rate', '', '', dbus.UInt32(1))"
                          % (NO_LOW, NO_HIGH))
        self.assertFalse(reply.ok)
        self.assertIn("unknown event type", reply.message or "", reply)

    def test_access_tokens_are_made_listed_and_revoked_by_managers_only(self):
        target = source(NOBODY, "token-dash")
        self.assertError(self.call(NOBODY, "health.CreateAccessToken(%r, False, dbus.Int64(3600))" % target), ACCESS_DENIED)
        self.assertError(self.call(NOBODY, "health.AccessTokens()"), ACCESS_DENIED)
        self.assertError(self.call(NOBODY, "health.RevokeAccessTokens(%r)" % target), ACCESS_DENIED)
        status, out, err = harness.hrmctl(self.bus, "auth", "token", "create", target, "--expires", "1h")
        self.assertEqual(status, 0, err)
        token = out.strip().splitlines()[-1]
        self.assertTrue(token.startswith("hrmd_"), out)
        status, listed, err = harness.hrmctl(self.bus, "auth", "token", "list", "--output", "json")
        self.assertEqual(status, 0, err)
        rows = [json.loads(line) for line in listed.splitlines()]
        mine = [row for row in rows if row["source"] == target]
        self.assertEqual([row["state"] for row in mine], ["valid"], listed)
        # hrmd_<id>_<secret>: the secret may itself hold "_".
        self.assertNotIn(token.split("_", 2)[2], listed, "a list never shows a token's secret")
        self.assertNotIn(token, self.log(), "the service never logs a token")
        status, out, err = harness.hrmctl(self.bus, "auth", "token", "revoke", target)
        self.assertEqual((status, out.strip()), (0, "revoked 1 token"), err)
        status, listed, err = harness.hrmctl(self.bus, "auth", "token", "list", "--output", "json")
        self.assertEqual([json.loads(line)["state"] for line in listed.splitlines() if target in line], ["revoked"])
        manager = self.manager()
        for arguments in (("hrmd", False, 0), ("nobody/Bad", False, 0), (target, False, 5), (target, False, -1)):
            with self.subTest(arguments=arguments):
                with self.assertRaises(dbus.exceptions.DBusException) as raised:
                    manager.CreateAccessToken(arguments[0], arguments[1], dbus.Int64(arguments[2]), timeout=harness.CALL_TIMEOUT_S)
                self.assertEqual(raised.exception.get_dbus_name(), INVALID_ARGS)

    def test_set_authorization_checks_its_arguments(self):
        manager = self.manager()
        for arguments in (("nobody/x", HR, "write", "sharingAuthorized"), ("nobody/x", HR, "share", "yes"),
                          ("nobody/x", "blood-sugar", "share", "sharingAuthorized"),
                          ("nobody/Bad", HR, "share", "sharingAuthorized")):
            with self.subTest(arguments=arguments):
                with self.assertRaises(dbus.exceptions.DBusException) as raised:
                    manager.SetAuthorization(*arguments, timeout=harness.CALL_TIMEOUT_S)
                self.assertEqual(raised.exception.get_dbus_name(), INVALID_ARGS)

    # The example application.

    def test_the_example_client_end_to_end(self):
        app, src = "e2e-client", source(NOBODY, "e2e-client")

        def client(*arguments, timeout=harness.CALL_TIMEOUT_S):
            return harness.run_client_as(NOBODY, self.bus, "--app", app, *arguments, timeout=timeout)

        code, out, err = client("request")
        self.assertEqual((code, out.strip()), (0, "notDetermined"), err + self.log())
        code, out, err = client("save", "72")
        self.assertEqual(code, 77, out + err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("not authorized", err)

        self.grant(src)
        code, out, err = client("status")
        self.assertEqual((code, out.strip()), (0, "sharingAuthorized"), err)
        code, out, err = client("save", "72")
        self.assertEqual((code, out.strip()), (0, "stored 1, unchanged 0"), err + self.log())
        code, out, err = client("query")
        self.assertEqual(code, 0, err)
        lines = out.strip().splitlines()
        self.assertEqual(len(lines), 1, out)
        sample = json.loads(lines[0])
        self.assertEqual((sample["source"], sample["value"], sample["unit"], sample["type"]),
                         (src, 72.0, "count/min", HR))

        watch = harness.background_client_as(NOBODY, self.bus, "--app", app, "watch", "15")
        self.addCleanup(watch.kill)
        self.assertIsNotNone(watch.wait_for_line(lambda line: line.startswith("observing"), SIGNAL_WAIT_S),
                             watch.lines)
        code, out, err = client("save", "80")
        self.assertEqual(code, 0, err)
        self.assertIsNotNone(watch.wait_for_line(lambda line: line.startswith("SamplesChanged heart-rate "),
                                                 SIGNAL_WAIT_S), "%r%s" % (watch.lines, self.log()))
        code, lines, err = watch.finish(timeout=25)
        self.assertEqual(code, 0, err)

        code, out, err = harness.run_client_as(NOBODY, self.bus, "--app", "Bad/Name", "status")
        self.assertEqual(code, 64, out + err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)


if __name__ == "__main__":
    unittest.main()
