"""A D-Bus fuzzing client against `hrmd --serve`, with hypothesis.

A helper process running as uid nobody reads the introspection XML of /org/hrmd/Health from the
running service and, for HRMD_FUZZ_SECONDS (30 by default), sends random calls: well-typed ones
(values drawn from each method's in-signature: strings empty, odd, long and huge, integers at
their extremes, NaN and infinities, nested dictionaries with the keys the service knows, /dev/null
descriptors for 'h') and ill-typed ones (another signature, an unknown method) to every method of
org.hrmd.Health1 and of org.freedesktop.DBus.Properties. It prints what it did as JSON. Then the
test checks that hrmd still runs, still owns org.hrmd.Health with the same unique name, answered
every call (a reply or an error; a timeout of HANG_S is a hang), keeps answering another user
within a second, and that its VmHWM stayed under 160 MB. The counts and findings are printed.
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import HANG_S, NAMELESS, NOBODY  # noqa: E402

FUZZ_SECONDS = float(os.environ.get("HRMD_FUZZ_SECONDS", "30"))
MEMORY_LIMIT_KIB = 160 * 1024
VICTIM_S = 1.0

FUZZER = r'''
import json, os, sys, tempfile, time
import xml.etree.ElementTree as ElementTree
import dbus
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

SECONDS, HANG = float(sys.argv[1]), int(sys.argv[2])
import resource  # never more than 2 GiB, whatever the strategies draw
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
os.chdir(tempfile.mkdtemp(prefix="hrmd-fuzz-"))  # hypothesis may want a directory of its own
SERVICE, PATH, INTERFACE = "org.hrmd.Health", "/org/hrmd/Health", "org.hrmd.Health1"
PROPERTIES = "org.freedesktop.DBus.Properties"
bus = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
target = bus.get_object(SERVICE, PATH, introspect=False)
xml = str(target.Introspect(dbus_interface="org.freedesktop.DBus.Introspectable", timeout=HANG))
methods = {}
for interface in ElementTree.fromstring(xml).iter("interface"):
    if interface.get("name") not in (INTERFACE, PROPERTIES):
        continue
    for method in interface.iter("method"):
        signature = "".join(arg.get("type") for arg in method.findall("arg") if arg.get("direction", "in") == "in")
        methods[(interface.get("name"), method.get("name"))] = signature
assert any(i == INTERFACE for i, _ in methods), xml[:2000]
DEVNULL = os.open("/dev/null", os.O_RDWR)


def split(signature):
    """The complete types of a signature."""
    types, i = [], 0
    while i < len(signature):
        j = end_of(signature, i)
        types.append(signature[i:j])
        i = j
    return types


def end_of(signature, i):
    c = signature[i]
    if c == "a":
        return end_of(signature, i + 1)
    if c in "({":
        close = ")" if c == "(" else "}"
        j = i + 1
        while signature[j] != close:
            j = end_of(signature, j)
        return j + 1
    return i + 1


INTERESTING = ["", "heart-rate", "rr-interval", "active-energy-burned", "count/min", "ms", "kcal", "app", "hrmctl",
               "hrmd", "nobody/app", "root/x", "1m", "5m", "1h", "1d", "Europe/Paris", "UTC", "share", "read",
               "sharingAuthorized", "sharingDenied", "notDetermined", "a" * 64, "a" * 65, "-x", ".x", "../../etc",
               "%s%n%x", "\u00e9", "\U0001F600", "\ufeff", "\x01", "\u202e", "a\nb", "mock-1", "org.hrmd.Health1",
               "Version", "Types", "MaxSamplesPerSave", "MaxSamplesPerQuery",
               # names that forge: a terminal title and a cleared screen, a forged log line, a
               # strap identifier folding onto another's MQTT topic, a sync identifier spelt twice
               "\x1b]0;pwned\x07", "\x1b[2J\x1b[H", "x\n2026-11-29T00:00:00+0000 info hrmd: forged", "c0-ff-ee-00-00-01",
               "C0:FF:EE:00:00:01 ", "session-1", "session\u00ad1"]
KEYS = ["type", "unit", "value", "start", "end", "device", "metadata", "sensorLocation", "sensorContact",
        "syncIdentifier", "syncVersion", "timeZone", "source", "limit", "newestFirst", "name", "acceptDamaged",
        "speed", "measurementHandle", "id"]
characters = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
huge = st.builds(lambda c, n: c * n, characters, st.sampled_from([256, 257, 4096, 65536, 1 << 20]))
small_text = st.one_of(st.sampled_from(INTERESTING), st.text(characters, max_size=80))
text = st.one_of(small_text, huge)  # huge strings only as a call's own arguments, never nested
INTEGERS = {"y": (0, 255, dbus.Byte), "n": (-2 ** 15, 2 ** 15 - 1, dbus.Int16), "q": (0, 2 ** 16 - 1, dbus.UInt16),
            "i": (-2 ** 31, 2 ** 31 - 1, dbus.Int32), "u": (0, 2 ** 32 - 1, dbus.UInt32),
            "x": (-2 ** 63, 2 ** 63 - 1, dbus.Int64), "t": (0, 2 ** 64 - 1, dbus.UInt64)}
BASIC_SIGNATURES = ["y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "h"]


def integers(low, high, kind):
    edges = [low, high, 0, 1, low + 1, high - 1, max(low, -1), min(high, 1_000_000), min(high, 1700000000000000)]
    return st.one_of(st.sampled_from(edges), st.integers(low, high)).map(kind)


def strategy(signature, depth=0):
    c = signature[0]
    if c in INTEGERS:
        return integers(*INTEGERS[c])
    if c == "b":
        return st.booleans().map(dbus.Boolean)
    if c == "d":
        return st.one_of(st.sampled_from([0.0, -0.0, 70.0, 1e308, -1e308, 5e-324]), st.floats()).map(dbus.Double)
    if c == "s":
        return (text if depth == 0 else small_text).map(dbus.String)
    if c == "o":
        segment = st.text("abcXYZ019_", min_size=1, max_size=10)
        return st.one_of(st.just("/"), st.just("/org/hrmd/Health"),
                         st.lists(segment, min_size=1, max_size=5).map(lambda s: "/" + "/".join(s))).map(dbus.ObjectPath)
    if c == "g":
        return st.sampled_from(["", "s", "a{sv}", "(xxudddd)", "aa{sv}", "v"]).map(dbus.Signature)
    if c == "h":
        return st.just(None).map(lambda _: dbus.types.UnixFd(DEVNULL))
    if c == "v":
        inner = BASIC_SIGNATURES[:-1] + (["as", "a{sv}", "(xs)", "av", "aa{sv}"] if depth < 2 else [])
        return st.sampled_from(inner).flatmap(lambda s: strategy(s, depth + 1))
    if c == "(":
        fields = split(signature[1:-1])
        return st.tuples(*[strategy(f, depth + 1) for f in fields]).map(
            lambda values: dbus.Struct(values, signature=signature[1:-1]))
    if c == "a" and signature[1] == "{":
        key, value = split(signature[2:-1])
        keys = st.one_of(st.sampled_from(KEYS), strategy(key, depth + 1)) if key == "s" else strategy(key, depth + 1)
        return st.dictionaries(keys, strategy(value, depth + 1), max_size=3 if depth else 10).map(
            lambda d: dbus.Dictionary(d, signature=key + value))
    if c == "a":
        element = signature[1:]
        sizes = st.sampled_from([0, 1, 2, 5, 8] if depth == 0 else [0, 1, 3])
        if depth == 0 and element in ("s", "y", "i", "x", "a{sv}"):
            sizes = st.sampled_from([0, 1, 2, 5, 8, 10001])  # a big array: copies of a few small elements
        return sizes.flatmap(lambda n: st.lists(strategy(element, depth + 1), min_size=min(n, 8), max_size=min(n, 8)).map(
            lambda items, n=n: dbus.Array(items * (n // max(1, len(items))) if items and n > 8 else items,
                                          signature=element)))
    raise ValueError(signature)


def size(value):
    if isinstance(value, (str, bytes)):
        return len(value) * 4 + 8
    if isinstance(value, dict):
        return sum(size(k) + size(v) for k, v in value.items()) + 8
    if isinstance(value, (list, tuple)):
        return sum(size(v) for v in value) + 8
    return 8


def random_signature(draw):
    return "".join(draw(st.lists(st.sampled_from(BASIC_SIGNATURES + ["as", "a{sv}", "aa{sv}", "v", "(ss)"]),
                                 max_size=6)))


counts = {"executions": 0, "wellTyped": 0, "illTyped": 0, "unknownMethod": 0, "clientRejected": 0,
          "oversizedSkipped": 0, "byMethod": {}, "errors": {}, "timeouts": [], "failures": [], "disconnected": False}
deadline = time.monotonic() + SECONDS


class TimeUp(Exception):
    pass


def call(interface, member, signature, arguments):
    key = "%s.%s(%s)" % (interface.rsplit(".", 1)[-1], member, signature)
    try:
        message_size = size(list(arguments))
        if message_size > 24 << 20:  # the bus takes at most 32 MiB: a bigger message ends our connection
            counts["oversizedSkipped"] += 1
            return
        target.get_dbus_method(member, interface)(*arguments, signature=signature, timeout=HANG)
        outcome = "ok"
    except dbus.exceptions.DBusException as error:
        outcome = error.get_dbus_name() or "?"
        message = error.get_dbus_message() or ""
        if outcome in ("org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
                       "org.freedesktop.DBus.Error.TimedOut"):
            counts["timeouts"].append(key + ": " + message[:200] + " | arguments: " + repr(list(arguments))[:400])
        elif outcome == "org.freedesktop.DBus.Error.Disconnected" or not bus.get_is_connected():
            counts["disconnected"] = True
            raise TimeUp()
        elif outcome in ("org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"):
            counts["serviceGone"] = key + " | arguments: " + repr(list(arguments))[:400]
            counts["disconnected"] = True  # nothing more to fuzz
            raise TimeUp()
        elif outcome in ("org.hrmd.Health1.Error.Failed", "org.freedesktop.DBus.Error.Failed"):
            if len(counts["failures"]) < 20:
                counts["failures"].append(key + ": " + outcome + ": " + message[:300])
        if len(message) > 4096 and len(counts["failures"]) < 20:
            counts["failures"].append(key + ": a %d-byte error message" % len(message))
    except (TypeError, ValueError, OverflowError) as error:
        counts["clientRejected"] += 1
        return
    counts["executions"] += 1
    counts["byMethod"][key.split("(")[0]] = counts["byMethod"].get(key.split("(")[0], 0) + 1
    counts["errors"][outcome] = counts["errors"].get(outcome, 0) + 1


names = sorted(methods)
typed = {name: st.tuples(*[strategy(t) for t in split(methods[name])]) for name in names}


@settings(max_examples=10 ** 9, deadline=None, database=None, phases=[Phase.generate], derandomize=False,
          suppress_health_check=list(HealthCheck))
@given(st.data())
def fuzz(data):
    if time.monotonic() >= deadline:
        counts["timeUp"] = True
        raise TimeUp()
    kind = data.draw(st.sampled_from(["typed", "typed", "typed", "ill", "unknown"]))
    interface, member = data.draw(st.sampled_from(names))
    if kind == "typed":
        counts["wellTyped"] += 1
        call(interface, member, methods[(interface, member)], data.draw(typed[(interface, member)]))
    elif kind == "ill":
        signature = random_signature(data.draw)
        if signature == methods[(interface, member)]:
            signature += "s"
        counts["illTyped"] += 1
        arguments = data.draw(st.tuples(*[strategy(t) for t in split(signature)]))
        call(interface, member, signature, arguments)
    else:
        counts["unknownMethod"] += 1
        member = data.draw(st.sampled_from(["Nope", member + "X", member.lower(), "Get", "Set", "GetAll", ""]))
        interface = data.draw(st.sampled_from([INTERFACE, PROPERTIES, "org.hrmd.Health2", "org.freedesktop.DBus.Peer"]))
        try:
            call(interface, member, "s", (dbus.String("x"),))
        except Exception:
            counts["clientRejected"] += 1


try:
    fuzz()
except Exception:  # TimeUp, or what hypothesis makes of it when it replays the example that raised it
    if not counts.get("timeUp") and not counts["disconnected"]:
        raise
print(json.dumps(counts), flush=True)
'''


class BusFuzzTests(harness.ServiceTestCase):
    shares_hrmd = False

    def test_fuzzed_calls_are_all_answered_and_the_service_stays(self):
        check = harness.run_as(NOBODY, self.bus, [harness.PYTHON, "-c", "import hypothesis"])
        if check[0] != 0:
            harness.skip_or_fail("needs hypothesis for %s (apt-get install python3-hypothesis)" % harness.PYTHON)
        hrmd = harness.Hrmd(self.bus)
        self.addCleanup(hrmd.stop)
        owner = harness.name_owner(self.bus)
        # Something to find: an application with samples and authorizations.
        hrmd.proxy().SetAuthorization("nobody/app", "heart-rate", "share", "sharingAuthorized", timeout=HANG_S)
        hrmd.proxy().SetAuthorization("nobody/app", "heart-rate", "read", "sharingAuthorized", timeout=HANG_S)
        probe = harness.Prober(NAMELESS, self.bus, app="fuzz-victim")
        self.addCleanup(probe.close)
        script = os.path.join(self.bus.directory, "fuzz.py")
        with open(script, "w") as f:
            f.write(FUZZER)
        os.chmod(script, 0o644)
        status, out, err = harness.run_as(NOBODY, self.bus, [harness.PYTHON, script, str(FUZZ_SECONDS), str(HANG_S)],
                                          timeout=FUZZ_SECONDS + HANG_S * 5)
        output = hrmd.output()
        crash = [line for line in output.splitlines() if "Fatal error" in line or "Crash" in line]
        log = "\n--- hrmd's output (last lines) ---\n" + "\n".join(crash[:5]) + "\n" + output[-3000:]
        self.assertEqual(status, 0, "the fuzzer ended %s: %s %s%s" % (status, out[-2000:], err[-3000:], log))
        result = json.loads(out.strip().splitlines()[-1])
        peak = harness.vm_hwm_kib(hrmd.process.pid)
        result["hrmdVmHWMKiB"] = peak
        print("\nfuzzing report: " + json.dumps(result, sort_keys=True), flush=True)
        self.assertTrue(hrmd.alive(), "hrmd ended" + log)
        self.assertEqual(harness.name_owner(self.bus), owner, "hrmd lost its connection (a new unique name)" + log)
        self.assertFalse(result["disconnected"], "the fuzzer's connection was closed, or the service left (%s)%s"
                         % (result.get("serviceGone"), log))
        self.assertEqual(result["timeouts"], [], "calls not answered within %d s%s" % (HANG_S, log))
        self.assertGreater(result["executions"], 0, result)
        for _ in range(3):
            seconds, outcome = probe.ask()
            self.assertIsNotNone(seconds, "another user's call was not answered after the fuzzing: %s%s" % (outcome, log))
            self.assertLess(seconds, VICTIM_S, "another user's call took %.3f s%s" % (seconds, log))
        self.assertIsNotNone(peak)
        self.assertLess(peak, MEMORY_LIMIT_KIB, "hrmd's VmHWM is %d KiB" % peak)


if __name__ == "__main__":
    unittest.main()
