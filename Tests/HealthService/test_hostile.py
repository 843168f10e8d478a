"""The store service, `hrmd --serve`, against hostile clients: each test is one attack by uid
nobody (NOBODY) on its own hrmd, with a victim (uid 65533, NAMELESS, or root's own calls), and
checks afterwards that hrmd still owns org.hrmd.Health with the same unique name as before the
attack (it did not lose its bus connection), that the victim's call is answered within
VICTIM_S (measured inside a client that is already connected), and where memory is at stake that
hrmd's peak resident set (VmHWM) stayed under MEMORY_LIMIT_KIB.

Every wait is bounded by HANG_S (a hang, never a measure of speed) and waits for an event: a
reply, a line printed by a client, a name leaving the bus.
"""

import json
import os
import signal
import sys
import textwrap
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import HANG_S, NAMELESS, NOBODY, NO_HIGH, NO_LOW  # noqa: E402

import dbus  # noqa: E402

INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"
ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"
LIMITS_EXCEEDED = "org.freedesktop.DBus.Error.LimitsExceeded"
HR = "heart-rate"
VICTIM_S = 1.0                  # a victim's call, from sending to its answer
MEMORY_LIMIT_KIB = 160 * 1024   # hrmd's VmHWM
SHORT_MESSAGE = 1024            # bytes of an error message


def now_us():
    return int(time.time() * 1_000_000)


def source(who, app):
    return ("nobody" if who == NOBODY else "root" if who == (0, 0) else "uid-%d" % who[0]) + "/" + app


class HostileClientTests(harness.ServiceTestCase):
    shares_hrmd = False  # each attack gets an hrmd of its own

    def setUp(self):
        self.polkit.set_allowed([])
        self.base = now_us() - 3_600_000_000

    # Helpers.

    def start(self, sensors=("mock:hz=1,bpm=70",)):
        """Starts this test's hrmd; remembers its unique name on the bus."""
        hrmd = harness.Hrmd(self.bus, sensors=sensors)
        self.addCleanup(hrmd.stop)
        self.service = hrmd
        self.owner = harness.name_owner(self.bus)
        self.assertIsNotNone(self.owner)
        return hrmd

    def log(self):
        return "\n--- hrmd's output (last lines) ---\n" + self.service.output()[-3000:]

    def prober(self, who=NAMELESS, app="victim"):
        probe = harness.Prober(who, self.bus, app=app)
        self.addCleanup(probe.close)
        if probe.ready is None:
            self.fail("the victim's client did not start: %r %s" % (probe.lines, probe.finish(1)[2][-2000:]))
        return probe

    def assertVictimServed(self, probe, times=3, what="the victim"):
        """The victim's call is answered (any answer) within VICTIM_S, TIMES in a row."""
        slowest = 0.0
        for _ in range(times):
            seconds, outcome = probe.ask()
            self.assertIsNotNone(seconds, "%s's call was not answered: %s%s" % (what, outcome, self.log()))
            self.assertLess(seconds, VICTIM_S, "%s's call took %.3f s (%s)%s" % (what, seconds, outcome, self.log()))
            slowest = max(slowest, seconds)
        self.figure("%s answered in %.1f ms at most (%d calls)" % (what, slowest * 1000, times))

    def figure(self, text):
        """A measured figure, on stderr beside the test's name (the run's log keeps it)."""
        sys.stderr.write("\n    %s: %s " % (self._testMethodName.replace("test_hostile_", ""), text))
        sys.stderr.flush()

    def assertStillServing(self, probe=None, memory=False):
        self.assertTrue(self.service.alive(), "hrmd ended%s" % self.log())
        self.assertEqual(harness.name_owner(self.bus), self.owner,
                         "org.hrmd.Health changed owner: hrmd lost its bus connection%s" % self.log())
        if probe is not None:
            self.assertVictimServed(probe)
        if memory:
            self.assertMemoryBounded()

    def assertMemoryBounded(self):
        peak = harness.vm_hwm_kib(self.service.process.pid)
        self.assertIsNotNone(peak, "hrmd is gone")
        self.figure("hrmd's peak resident memory %.1f MB" % (peak / 1024))
        self.assertLess(peak, MEMORY_LIMIT_KIB, "hrmd's VmHWM is %d KiB" % peak)

    def grant(self, src, access="share"):
        arguments = ["auth", "grant", src, HR] + (["--read"] if access == "read" else [])
        status, out, err = harness.hrmctl(self.bus, *arguments)
        self.assertEqual(status, 0, "hrmctl %s: %s%s" % (" ".join(arguments), (out + err)[-2000:], self.log()))

    def snippet(self, who, code, timeout=HANG_S * 3, **values):
        """Runs CODE (with HANG and VALUES substituted by %(name)r) as WHO; its last JSON line."""
        values["HANG"] = HANG_S
        status, out, err = harness.run_snippet_as(who, self.bus, code % values, timeout=timeout)
        lines = out.strip().splitlines()
        try:
            return json.loads(lines[-1])
        except (IndexError, ValueError):
            self.fail("the client ended %s without an answer: %r %s%s" % (status, out[-1000:], err[-2000:], self.log()))

    def root_save(self, app, *starts, value=60.0):
        """Root (a manager) saves one heart-rate sample per call, as root/APP."""
        health = self.service.proxy()
        for start in starts:
            health.SaveSamples(app, dbus.Array([dbus.Dictionary({
                "type": HR, "unit": "count/min", "value": dbus.Double(value), "start": dbus.Int64(start)},
                signature="sv")], signature="a{sv}"), signature="saa{sv}", timeout=HANG_S)

    def observer(self, who, app):
        """A client of WHO observing heart-rate as APP: prints "ready UNIQUE-NAME", then
        "changed TYPE ANCHOR" per SamplesChanged sent to it."""
        code = """
            def changed(type_, anchor, destination=None):
                if destination:
                    print("changed %%s %%d" %% (type_, anchor), flush=True)
            bus.add_signal_receiver(changed, "SamplesChanged", "org.hrmd.Health1", path="/org/hrmd/Health",
                                    destination_keyword="destination")
            health.Observe(%(app)r, "heart-rate", timeout=%(hang)d)
            print("ready " + bus.get_unique_name(), flush=True)
            loop = GLib.MainLoop()
            GLib.timeout_add_seconds(%(life)d, loop.quit)
            loop.run()
        """ % {"app": app, "hang": HANG_S, "life": HANG_S * 5}
        background = harness.background_snippet_as(who, self.bus, code)
        self.addCleanup(background.kill)
        ready = background.wait_for_line(lambda line: line.startswith("ready ") or line.startswith("{"), HANG_S)
        self.assertTrue(ready and ready.startswith("ready "), "observer: %r%s" % (background.lines, self.log()))
        return background, ready.split()[1]

    def changed_lines(self, background):
        return [line for line in background.lines if line.startswith("changed ")]

    def wait_for_changed(self, background, count):
        """The COUNT-th SamplesChanged line of an observer (None after HANG_S)."""
        line = background.wait_for_line(lambda _: len(self.changed_lines(background)) >= count, HANG_S)
        return self.changed_lines(background)[count - 1] if line is not None else None

    def wait_gone(self, unique_name):
        self.assertTrue(harness.wait_for(lambda: not self.bus.has_owner(unique_name), HANG_S),
                        "%s did not leave the bus" % unique_name)

    # 1. A huge error message.

    def test_hostile_huge_unit_gets_a_short_invalid_args(self):
        """SaveSamples with a unit of 7,000,000 bytes of U+0001: InvalidArgs with a short message,
        not a 7 MB (or, escaped, bigger than the bus takes) error that costs hrmd its connection."""
        self.start()
        probe = self.prober()
        answer = self.snippet(NOBODY, """
            unit = "\\x01" * 7000000
            try:
                health.SaveSamples("huge-unit", samples(sample(70.0, 1700000000000000, unit=unit)), timeout=%(HANG)r)
                out({"ok": True})
            except dbus.exceptions.DBusException as error:
                message = error.get_dbus_message() or ""
                out({"error": error.get_dbus_name(), "length": len(message.encode()), "head": message[:200]})
        """)
        self.assertEqual(answer.get("error"), INVALID_ARGS, "%r%s" % (answer, self.log()))
        self.assertLess(answer["length"], SHORT_MESSAGE, answer)
        self.assertStillServing(probe, memory=True)

    # 2. A huge reply.

    def test_hostile_huge_query_reply_is_answered_or_limits_exceeded(self):
        """10,000 samples, each with 16 metadata entries of 64-byte keys and 256-byte values,
        then QuerySamples of all of them (a reply bigger than the bus takes): the reply, or
        LimitsExceeded with a one-line message; hrmd keeps its connection."""
        self.start()
        app = "huge-reply"
        self.grant(source(NOBODY, app))
        probe = self.prober()
        answer = self.snippet(NOBODY, """
            props = dbus.Interface(bus.get_object("org.hrmd.Health", "/org/hrmd/Health"), "org.freedesktop.DBus.Properties")
            batch = min(1000, int(props.Get("org.hrmd.Health1", "MaxSamplesPerSave")))
            metadata = dbus.Dictionary({"k%%02d" %% i + "x" * 61: "v" * 256 for i in range(16)}, signature="sv")
            saves = []
            for first in range(0, 10000, batch):
                items = [sample(70.0, %(base)r + (first + i) * 1000000, metadata=metadata)
                         for i in range(min(batch, 10000 - first))]
                try:
                    saves.append(list(health.SaveSamples(%(app)r, samples(*items), timeout=%(HANG)r)))
                except dbus.exceptions.DBusException as error:
                    saves.append([error.get_dbus_name(), (error.get_dbus_message() or "")[:300]])
            result = {"saves": saves}
            try:
                got = health.QuerySamples(%(app)r, "heart-rate", NO_LOW, NO_HIGH, dbus.UInt32(0), timeout=%(HANG)r)
                result["count"] = len(got)
            except dbus.exceptions.DBusException as error:
                result["error"] = error.get_dbus_name()
                result["message"] = error.get_dbus_message() or ""
            out(result)
        """, app=app, base=self.base)
        stored = sum(save[0] for save in answer["saves"] if isinstance(save[0], int))
        self.assertEqual(stored, 10000, "the saves within the limits must be taken: %r" % answer["saves"][:3])
        if "error" in answer:
            self.assertEqual(answer["error"], LIMITS_EXCEEDED, "%r%s" % ({k: str(v)[:300] for k, v in answer.items() if k != "saves"}, self.log()))
            self.assertNotIn("\n", answer["message"].strip())
            self.assertLess(len(answer["message"].encode()), SHORT_MESSAGE)
        else:
            self.assertEqual(answer["count"], 10000)
        self.assertStillServing(probe, memory=True)

    # 3. Anchors and sample ids of a non-reader.

    def test_hostile_anchors_and_ids_reveal_nothing_to_a_non_reader(self):
        """An application that may share but not read sees anchors and sample ids that do not tell
        how many samples other sources stored: CurrentAnchor is a manager's, Anchor(app, type)
        stays put while only others store, its own samples' ids and its SamplesChanged anchors
        are not a global counter."""
        foreign = 25
        self.start(sensors=("mock:hz=4,rr=off,contact-loss=0",))
        app = "anchor-spy"
        self.grant(source(NOBODY, app))
        self.grant("hrmd")  # the mock strap stores as hrmd in the background
        self.service.proxy().SetAuthorization(source((0, 0), "foreign"), HR, "share", "sharingAuthorized",
                                              timeout=HANG_S)
        probe = self.prober()
        watcher, _ = self.observer(NOBODY, app)

        with self.subTest("CurrentAnchor is a manager's method"):
            reply = harness.call_as(NOBODY, self.bus, "health.CurrentAnchor()")
            self.assertEqual(reply.error, ACCESS_DENIED, reply)

        def anchor():
            return harness.call_as(NOBODY, self.bus, "health.Anchor(%r, 'heart-rate')" % app)

        def own_ids():
            reply = harness.call_as(NOBODY, self.bus, "health.QuerySamples(%r, 'heart-rate', NO_LOW, NO_HIGH, 0)" % app)
            self.assertTrue(reply.ok, reply)
            return {sample["start"]: sample["id"] for sample in reply.value}

        def own_save(offset):
            start = self.base + offset * 1_000_000
            reply = harness.call_as(NOBODY, self.bus, "health.SaveSamples(%r, samples(sample(70.0, %d)))" % (app, start))
            self.assertEqual(reply.value, [1, 0], reply)
            return start

        def changes_anchor():
            reply = harness.call_as(NOBODY, self.bus, "health.Changes(%r, 'heart-rate', 0, 0)[2]" % app)
            self.assertTrue(reply.ok, reply)
            return reply.value

        first = own_save(0)
        first_signal = self.wait_for_changed(watcher, 1)
        self.assertIsNotNone(first_signal, "no SamplesChanged for the application's own save%s" % self.log())
        before = anchor()
        changes_before = changes_anchor()
        self.root_save("foreign", *[self.base + (100 + k) * 1_000_000 for k in range(foreign)])
        after = anchor()
        changes_after = changes_anchor()
        second = own_save(1)
        second_signal = self.wait_for_changed(watcher, 2)
        ids = own_ids()
        revealing = range(2, 1_000_000)  # a global counter's step over what others stored

        with self.subTest("Anchor(app, type) does not move while only others store"):
            self.assertTrue(before.ok and after.ok, (before, after))
            self.assertEqual(before.value, after.value)
        with self.subTest("the anchor Changes returns does not move while only others store"):
            self.assertEqual(changes_before, changes_after)
        with self.subTest("own sample ids are opaque"):
            self.assertNotIn(ids[second] - ids[first], revealing,
                             "ids %d then %d around %d foreign samples" % (ids[first], ids[second], foreign))
        with self.subTest("SamplesChanged anchors are opaque"):
            self.assertIsNotNone(second_signal, "no SamplesChanged for the second own save%s" % self.log())
            one, two = int(first_signal.split()[2]), int(second_signal.split()[2])
            self.assertNotIn(two - one, revealing, "anchors %d then %d around %d foreign samples" % (one, two, foreign))
        self.assertStillServing(probe)

    # 4. Forged NameOwnerChanged and SamplesChanged.

    FORGE = """
        def forge(destination, path, interface, member, signature, *arguments):
            message = dbus.lowlevel.SignalMessage(path, interface, member)
            message.set_destination(destination)
            message.append(*arguments, signature=signature)
            bus.send_message(message)
        %(forgeries)s
        bus.flush()
        out(bus.get_unique_name())
    """

    def send_forged(self, forgeries):
        code = self.FORGE.replace("%(forgeries)s", "\n        ".join(forgeries))
        status, out, err = harness.run_snippet_as(NOBODY, self.bus, code, timeout=HANG_S)
        self.assertEqual(status, 0, out + err[-2000:])
        self.wait_gone(json.loads(out.strip().splitlines()[-1]))

    def test_hostile_forged_name_owner_changed_does_not_end_an_observation(self):
        """NOBODY tells hrmd, in a unicast signal of its own, that the victim's connection left
        the bus: the victim keeps receiving SamplesChanged for its own saves."""
        self.start()
        app = "forged-victim"
        self.grant(source(NAMELESS, app))
        probe = self.prober()
        victim, victim_name = self.observer(NAMELESS, app)

        def victim_save(offset):
            start = self.base + offset * 1_000_000
            reply = harness.call_as(NAMELESS, self.bus, "health.SaveSamples(%r, samples(sample(70.0, %d)))" % (app, start))
            self.assertEqual(reply.value, [1, 0], reply)

        victim_save(0)
        self.assertIsNotNone(self.wait_for_changed(victim, 1), "no SamplesChanged before the attack%s" % self.log())
        self.send_forged([
            "forge(%r, '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'NameOwnerChanged', 'sss', %r, %r, '')"
            % (self.owner, victim_name, victim_name),
            "forge(%r, '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'NameLost', 's', %r)" % (self.owner, victim_name),
        ])
        victim_save(1)
        self.assertIsNotNone(self.wait_for_changed(victim, 2),
                             "the victim's observation ended on a forged NameOwnerChanged%s" % self.log())
        self.assertStillServing(probe)

    def test_hostile_forged_signals_do_not_end_hrmctl_watch(self):
        """NOBODY sends root's `hrmctl watch` a forged NameOwnerChanged (the service left) and a
        forged SamplesChanged: watch keeps running and printing the real changes."""
        self.start()
        app = "watch-feed"
        self.service.proxy().SetAuthorization(source((0, 0), app), HR, "share", "sharingAuthorized", timeout=HANG_S)
        watch = harness.Background((0, 0), self.bus, [harness.hrmctl_binary(), "watch", "--output", "json",
                                                      "--duration", str(HANG_S * 5)])
        self.addCleanup(watch.kill)

        def printed(value):
            def match(line):
                try:
                    return json.loads(line).get("value") == value
                except ValueError:
                    return False
            return match

        # Until watch is following (its match, Observe and CurrentAnchor done), a saved sample
        # may come before its anchor: save again until one is printed.
        offset, seen = 0, None
        deadline = time.monotonic() + HANG_S
        while seen is None and time.monotonic() < deadline and watch.process.poll() is None:
            offset += 1
            self.root_save(app, self.base + offset * 1_000_000, value=100.0 + offset)
            seen = watch.wait_for_line(printed(100.0 + offset), 1.0)
        if seen is None:
            self.fail("watch printed nothing: %r %r%s" % (watch.lines, watch.finish(1)[2][-2000:], self.log()))
        names = harness.unique_names_of_pid(self.bus, watch.process.pid)
        self.assertEqual(len(names), 1, names)
        self.send_forged([
            "forge(%r, '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'NameOwnerChanged', 'sss', "
            "'org.hrmd.Health', %r, '')" % (names[0], self.owner),
            "forge(%r, '/org/hrmd/Health', 'org.hrmd.Health1', 'SamplesChanged', 'st', 'heart-rate', %d)"
            % (names[0], 2 ** 63 - 1),
            "forge(%r, '/org/hrmd/Health', 'org.hrmd.Health1', 'SamplesChanged', 'st', 'heart-rate', 0)" % names[0],
        ])
        for value in (200.0, 201.0):
            offset += 1
            self.root_save(app, self.base + offset * 1_000_000, value=value)
            line = watch.wait_for_line(printed(value), HANG_S)
            if line is None:
                ended = watch.process.poll() is not None
                self.fail("watch stopped printing after forged signals (exit %s): %r %s"
                          % (watch.process.poll(), watch.lines[-5:], watch.finish(1)[2][-2000:] if ended else ""))
        if watch.process.poll() is not None:
            self.fail("watch ended: %r" % (watch.finish(1),))
        self.assertStillServing()

    # 5. Authorization request spam.

    def test_hostile_request_spam_is_bounded_per_user(self):
        """2,000 RequestAuthorization calls with distinct application names: past the user's
        quota of 64 names, LimitsExceeded; root's hrmctl auth list and requests still work."""
        self.start()
        probe = self.prober()
        answer = self.snippet(NOBODY, """
            outcomes, messages = [], set()
            for i in range(2000):
                try:
                    health.RequestAuthorization("spam-%%04d" %% i, ["heart-rate"], ["heart-rate"], timeout=%(HANG)r)
                    outcomes.append("ok")
                except dbus.exceptions.DBusException as error:
                    outcomes.append(error.get_dbus_name())
                    messages.add((error.get_dbus_message() or "")[:300])
            refused = [i for i, o in enumerate(outcomes) if o != "ok"]
            out({"ok": outcomes.count("ok"), "firstRefusal": refused[0] if refused else None,
                 "okAfterRefusal": sum(1 for o in outcomes[refused[0]:] if o == "ok") if refused else 0,
                 "errors": sorted(set(o for o in outcomes if o != "ok")), "messages": sorted(messages)[:3]})
        """, timeout=HANG_S * 10)
        for arguments in (("auth", "list"), ("auth", "requests")):
            status, out, err = harness.hrmctl(self.bus, *arguments)
            self.assertEqual(status, 0, "hrmctl %s: %s" % (" ".join(arguments), err[-2000:]))
        self.assertStillServing(probe)
        self.assertGreaterEqual(answer["ok"], 1, answer)
        self.assertLessEqual(answer["ok"], 64, "one user recorded requests of %d applications: %r" % (answer["ok"], answer))
        self.assertEqual(answer["errors"], [LIMITS_EXCEEDED], answer)
        self.assertEqual(answer["okAfterRefusal"], 0, answer)

    # 6. Observer slots.

    def test_hostile_observer_slots_are_bounded_per_user(self):
        """130 connections of NOBODY, each observing 32 (app, type) pairs: past the user's quota
        of 256 observations, LimitsExceeded; NAMELESS and root can still observe."""
        self.start()
        probe = self.prober()
        attacker = harness.background_snippet_as(NOBODY, self.bus, """
            connections = [dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"]) for _ in range(130)]
            ok, errors = 0, {}
            for connection in connections:
                proxy = dbus.Interface(connection.get_object("org.hrmd.Health", "/org/hrmd/Health", introspect=False),
                                       "org.hrmd.Health1")
                for k in range(32):
                    try:
                        proxy.Observe("slot-%%02d" %% k, "heart-rate", signature="ss", timeout=%d)
                        ok += 1
                    except dbus.exceptions.DBusException as error:
                        errors[error.get_dbus_name()] = errors.get(error.get_dbus_name(), 0) + 1
            out({"ok": ok, "errors": errors})
            loop = GLib.MainLoop()
            GLib.timeout_add_seconds(%d, loop.quit)
            loop.run()
        """ % (HANG_S, HANG_S * 5))
        self.addCleanup(attacker.kill)
        line = attacker.wait_for_line(lambda line: line.startswith("{"), HANG_S * 5)
        if line is None:
            self.fail("the attacker did not finish: %r %s" % (attacker.lines, attacker.finish(1)[2][-2000:]))
        answer = json.loads(line)
        # The attacker's connections are all still open.
        nameless = harness.call_as(NAMELESS, self.bus, "health.Observe('slot-victim', 'heart-rate', timeout=%d)" % HANG_S)
        root_error = None
        try:
            self.service.proxy().Observe("slot-root", HR, timeout=HANG_S)
        except dbus.exceptions.DBusException as error:
            root_error = error.get_dbus_name() + ": " + (error.get_dbus_message() or "")
        self.assertStillServing(probe)
        self.assertTrue(nameless.ok, "NAMELESS cannot observe: %r (attacker: %r)" % (nameless, answer))
        self.assertIsNone(root_error, "root cannot observe: %s (attacker: %r)" % (root_error, answer))
        self.assertLessEqual(answer["ok"], 256, answer)
        self.assertEqual(list(answer["errors"]), [LIMITS_EXCEEDED], answer)

    # 7. Calls waiting on polkit.

    def test_hostile_calls_waiting_on_polkit_do_not_starve_others(self):
        """With polkit not answering (the mock is stopped with SIGSTOP: the bus queues what is
        sent to it and nothing comes back), NOBODY makes 40 concurrent calls that need a manager,
        allowing interactive authorization. They take NOBODY's own turns (eight run at once, the
        rest wait behind them) and polkit check slots, nothing of anyone else's: NAMELESS's
        AuthorizationStatus (no polkit needed) and root's Authorizations (root needs no polkit)
        are answered meanwhile, and no attacker call is answered with anything but
        LimitsExceeded while polkit hangs."""
        self.start()
        probe = self.prober()
        os.kill(self.polkit.process.pid, signal.SIGSTOP)
        self.addCleanup(os.kill, self.polkit.process.pid, signal.SIGCONT)
        attacker = harness.background_snippet_as(NOBODY, self.bus, """
            def answered(message):
                name = message.get_error_name() if isinstance(message, dbus.lowlevel.ErrorMessage) else "ok"
                print("answer %%s" %% name, flush=True)
            for i in range(40):
                message = dbus.lowlevel.MethodCallMessage("org.hrmd.Health", "/org/hrmd/Health", "org.hrmd.Health1",
                                                          "Authorizations")
                message.set_allow_interactive_authorization(True)
                bus.send_message_with_reply(message, answered, %d, require_main_loop=True)
            bus.flush()
            print("sent", flush=True)
            loop = GLib.MainLoop()
            GLib.timeout_add_seconds(%d, loop.quit)
            loop.run()
        """ % (HANG_S * 5, HANG_S * 5))
        self.addCleanup(attacker.kill)
        if attacker.wait_for_line(lambda line: line == "sent", HANG_S) is None:
            self.fail("the attacker did not send: %r %s" % (attacker.lines, attacker.finish(1)[2][-2000:]))
        self.assertVictimServed(probe, what="NAMELESS (while polkit hangs)")
        entries = self.service.proxy().Authorizations(timeout=HANG_S)
        self.assertIsInstance(entries, dbus.Array, "root's Authorizations while polkit hangs")
        answers = [line for line in attacker.lines if line.startswith("answer ")]
        self.assertTrue(all(line == "answer " + LIMITS_EXCEEDED for line in answers), answers)
        self.assertStillServing(probe)

    # 8. A huge message.

    def test_hostile_huge_messages_are_refused_within_memory(self):
        """Messages of ~30 MB (the bus takes up to 32 MiB): Statistics with an options
        dictionary of 30,000 entries of 1 KB, and SaveSamples with 20,000 samples of 1,200-byte
        device names: refused (InvalidArgs or LimitsExceeded); hrmd's VmHWM stays under 160 MB."""
        self.start()
        probe = self.prober()
        attacks = {
            "Statistics": """
                options = dbus.Dictionary({"k%%05d" %% i: "o" * 1000 for i in range(30000)}, signature="sv")
                call = lambda: health.Statistics("huge-stats", "heart-rate", "1h", NO_LOW, NO_HIGH, options, timeout=%(HANG)r)
            """,
            "SaveSamples": """
                items = [sample(70.0, 1700000000000000 + i, device="d" * 1200) for i in range(20000)]
                call = lambda: health.SaveSamples("huge-save", samples(*items), timeout=%(HANG)r)
            """,
        }
        for method, build in attacks.items():
            with self.subTest(method):
                answer = self.snippet(NOBODY, textwrap.dedent(build) + textwrap.dedent("""
                    try:
                        call()
                        out({"ok": True})
                    except dbus.exceptions.DBusException as error:
                        out({"error": error.get_dbus_name(), "message": (error.get_dbus_message() or "")[:300]})
                """))
                self.assertIn(answer.get("error"), (INVALID_ARGS, LIMITS_EXCEEDED), "%r%s" % (answer, self.log()))
                self.assertStillServing(probe, memory=True)

    # 9. Another source's device details.

    def test_hostile_a_device_identifier_does_not_borrow_another_sources_details(self):
        """The mock strap (source hrmd) stores its device with name, manufacturer, model and
        firmware; NOBODY saves a sample naming the same device identifier and, reading its own
        samples back, gets that identifier alone."""
        self.start(sensors=("mock:hz=4,rr=off,contact-loss=0",))
        self.grant("hrmd")
        app = "device-borrower"
        self.grant(source(NOBODY, app))
        probe = self.prober()
        health = self.service.proxy()
        recorded = []

        def mock_device():
            for sample in health.QuerySamples("root-view", HR, dbus.Int64(NO_LOW), dbus.Int64(NO_HIGH), dbus.UInt32(0),
                                              timeout=HANG_S):
                device = sample.get("device")
                if str(sample.get("source")) == "hrmd" and device and device.get("manufacturer"):
                    recorded.append({str(k): str(v) for k, v in device.items()})
                    return True
            return False
        self.assertTrue(harness.wait_for(mock_device, HANG_S, interval=0.25),
                        "the mock strap stored no sample with device details%s" % self.log())
        identifier = recorded[0]["identifier"]
        reply = harness.call_as(NOBODY, self.bus, "health.SaveSamples(%r, samples(sample(70.0, %d, device=%r)))"
                                % (app, self.base, identifier))
        self.assertEqual(reply.value, [1, 0], reply)
        reply = harness.call_as(NOBODY, self.bus, "health.QuerySamples(%r, 'heart-rate', NO_LOW, NO_HIGH, 0)" % app)
        self.assertTrue(reply.ok, reply)
        own = [sample for sample in reply.value if sample["source"] == source(NOBODY, app)]
        self.assertEqual(len(own), 1, reply.value)
        self.assertEqual(own[0].get("device"), {"identifier": identifier},
                         "NOBODY's sample shows another source's device record %r" % recorded[0])
        self.assertStillServing(probe)


if __name__ == "__main__":
    unittest.main()
