"""Who an application is: the service names a caller's application by a label it cannot choose
(README, "Applications Linux can name"), and hrmctl says which sources are verified.

The Flatpak path is tested for real: a client runs as nobody inside its own mount namespace and
root (a chroot built from read-only bind mounts of /usr, /etc, /dev, /proc and /tmp, with the
symbolic links of Debian's merged /usr), whose root carries a `.flatpak-info` as Flatpak writes
it. hrmd finds it through the client's /proc/PID/root, pinned by a pidfd, and the source becomes
`nobody/flatpak:org.example.Pulse` whatever application name the client passes.

Not here: the systemd-unit path needs a client started by systemd (`systemd-run`), and there is
no systemd as PID 1 in this test's world; the snap path needs an AppArmor profile applied to the
client. Both are covered by the Swift unit tests of their parsers (Tests/HealthServiceTests,
AppLabelsTests: real /proc/PID/cgroup lines and real AppArmor labels), which is where the
difference between a verified and a declared caller is decided.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import unittest.mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import NOBODY  # noqa: E402

HR = "heart-rate"
ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"
APP_ID = "org.example.Pulse"
FLATPAK_SOURCE = "nobody/flatpak:" + APP_ID

# A .flatpak-info as `flatpak run` writes it (flatpak 1.14, an application from Flathub).
FLATPAK_INFO = """[Application]
name=org.example.Pulse
runtime=runtime/org.freedesktop.Platform/x86_64/23.08

[Instance]
instance-id=2894633270
instance-path=/home/mary/.var/app/org.example.Pulse
app-path=/var/lib/flatpak/app/org.example.Pulse/x86_64/stable/5d1b2a7c0e3f4a9b8c6d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b/files
app-commit=5d1b2a7c0e3f4a9b8c6d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b
app-extensions=
runtime-path=/var/lib/flatpak/runtime/org.freedesktop.Platform/x86_64/23.08/0c8f5e4d3b2a19f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170/files
runtime-commit=0c8f5e4d3b2a19f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170
runtime-extensions=org.freedesktop.Platform.GL.default=9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0
branch=stable
arch=x86_64
flatpak-version=1.14.4
session-bus-proxy=true
system-bus-proxy=true
devel=true

[Context]
shared=network;ipc;
sockets=x11;wayland;pulseaudio;system-bus;
devices=dri;
"""

# A sandbox running a bare runtime (`flatpak run --command=sh org.freedesktop.Platform`).
RUNTIME_INFO = """[Runtime]
name=org.freedesktop.Platform
runtime=runtime/org.freedesktop.Platform/x86_64/23.08

[Instance]
instance-id=1155443322
branch=23.08
arch=x86_64
flatpak-version=1.14.4
"""

# Mounts the given root's parts read-only and runs the rest of the command chrooted in it.
SANDBOX_SCRIPT = r"""
set -e
root=$1; shift
for part in usr etc dev proc tmp; do
    mkdir -p "$root/$part"
    mount --bind "/$part" "$root/$part"
    mount -o remount,bind,ro "$root/$part"
done
exec chroot "$root" "$@"
"""


def sandbox_requirements():
    for tool in ("chroot", "mount", "unshare"):
        if not shutil.which(tool):
            return "needs %s" % tool
    return None


class Sandbox:
    """A root directory for a client: `.flatpak-info` with TEXT (none when None), Debian's
    merged-/usr links, and mount points for the parts SANDBOX_SCRIPT binds in."""

    def __init__(self, info_text):
        self.root = tempfile.mkdtemp(prefix="hrmd-sandbox-")
        os.chmod(self.root, 0o755)
        for link in ("bin", "sbin", "lib", "lib64"):
            if os.path.islink("/" + link):
                os.symlink(os.readlink("/" + link), os.path.join(self.root, link))
        if info_text is not None:
            path = os.path.join(self.root, ".flatpak-info")
            with open(path, "w") as f:
                f.write(info_text)
            os.chmod(path, 0o644)

    def argv(self, uid_gid, argv):
        """ARGV as that uid, chrooted in this root within a mount namespace of its own."""
        return (["unshare", "--mount", "--propagation", "private", "sh", "-c", SANDBOX_SCRIPT, "sh", self.root]
                + harness.as_uid(uid_gid, argv))

    def call(self, bus, uid_gid, expression, timeout=harness.CALL_TIMEOUT_S):
        """One call on `health` from inside, as in harness.call_as."""
        argv = self.argv(uid_gid, [harness.PYTHON, "-c", harness.snippet_source("out(%s)" % expression)])
        try:
            done = subprocess.run(argv, env=bus.env(), capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
            return harness.Reply(done.returncode, done.stdout, done.stderr)
        except subprocess.TimeoutExpired:
            return harness.Reply(-9, "", "(killed after %g s)" % timeout)

    def remove(self):
        shutil.rmtree(self.root, ignore_errors=True)


class SandboxTestCase(harness.ServiceTestCase):
    """A service test that builds sandboxes: skipped (failed in CI) without what they need."""

    @classmethod
    def setUpClass(cls):
        harness.require(sandbox_requirements())
        super().setUpClass()


class IdentityTests(SandboxTestCase):

    def setUp(self):
        self.assertTrue(self.hrmd.alive(), "hrmd is no longer running:\n" + self.hrmd.output()[-3000:])
        self.sandboxes = []

    def tearDown(self):
        for sandbox in self.sandboxes:
            sandbox.remove()

    def sandbox(self, info_text):
        sandbox = Sandbox(info_text)
        self.sandboxes.append(sandbox)
        return sandbox

    def log(self):
        return "\n--- hrmd's output (last lines) ---\n" + self.hrmd.output()[-3000:]

    def assertOk(self, reply):
        self.assertTrue(reply.ok, "%r%s" % (reply, self.log()))
        return reply.value

    def hrmctl(self, *arguments):
        """hrmctl as root through the service: its stdout."""
        binary = os.path.join(os.path.dirname(harness.hrmd_binary()), "hrmctl")
        done = subprocess.run([binary] + list(arguments), env=self.bus.env(), capture_output=True, text=True,
                              timeout=harness.CALL_TIMEOUT_S, stdin=subprocess.DEVNULL)
        self.assertEqual(done.returncode, 0, "hrmctl %s: %s%s" % (" ".join(arguments), done.stderr, self.log()))
        return done.stdout

    def json_lines(self, *arguments):
        return [json.loads(line) for line in self.hrmctl(*arguments).splitlines() if line.strip()]

    def entries_of(self, source, *arguments):
        return [entry for entry in self.json_lines(*arguments) if entry["source"] == source]

    # Flatpak: the app id, whatever the application says.

    def test_a_flatpak_application_is_named_by_its_app_id(self):
        pulse = self.sandbox(FLATPAK_INFO)
        self.assertOk(pulse.call(self.bus, NOBODY, "health.RequestAuthorization('pulse', [%r], [%r])" % (HR, HR)))

        listed = self.entries_of(FLATPAK_SOURCE, "auth", "list", "--output", "json")
        self.assertEqual([(e["type"], e["share"], e["verified"]) for e in listed], [(HR, "notDetermined", True)],
                         "%r%s" % (self.json_lines("auth", "list", "--output", "json"), self.log()))
        self.assertEqual(self.entries_of("nobody/pulse", "auth", "list", "--output", "json"), [])
        requests = self.entries_of(FLATPAK_SOURCE, "auth", "requests", "--output", "json")
        self.assertEqual(sorted((r["access"], r["verified"]) for r in requests), [("read", True), ("share", True)])
        self.assertIn("hrmctl auth grant %s %s" % (FLATPAK_SOURCE, HR), [r["grant"] for r in requests])
        self.assertIn(FLATPAK_SOURCE + " *", self.hrmctl("auth", "list"))

        # A manager grants the verified source by name; the application's argument does not
        # matter, whichever name it passes.
        self.hrmctl("auth", "grant", FLATPAK_SOURCE, HR)
        self.assertEqual(self.assertOk(pulse.call(self.bus, NOBODY, "health.AuthorizationStatus('anything', %r)" % HR)),
                         "sharingAuthorized")
        stored = self.assertOk(pulse.call(
            self.bus, NOBODY, "health.SaveSamples('other-name', samples(sample(77.0, %d)))" % (int(time.time()) * 1_000_000 - 60_000_000)))
        self.assertEqual(stored, [1, 0])
        samples = self.assertOk(pulse.call(
            self.bus, NOBODY, "health.QuerySamples('x', %r, NO_LOW, NO_HIGH, dbus.UInt32(0))" % HR))
        self.assertEqual([(s["source"], s["value"]) for s in samples], [(FLATPAK_SOURCE, 77.0)])

    def test_a_sandbox_without_an_application_id_is_refused(self):
        runtime = self.sandbox(RUNTIME_INFO)
        reply = runtime.call(self.bus, NOBODY, "health.AuthorizationStatus('shell', %r)" % HR)
        self.assertEqual(reply.error, ACCESS_DENIED, "%r%s" % (reply, self.log()))

    # Unconfined: the declared name, not verified.

    def test_an_unconfined_program_keeps_its_declared_name(self):
        reply = harness.call_as(NOBODY, self.bus, "health.RequestAuthorization('plain-app', [%r], [])" % HR)
        self.assertOk(reply)
        listed = self.entries_of("nobody/plain-app", "auth", "list", "--output", "json")
        self.assertEqual([(e["type"], e["verified"]) for e in listed], [(HR, False)], self.log())
        requests = self.entries_of("nobody/plain-app", "auth", "requests", "--output", "json")
        self.assertEqual([(r["access"], r["verified"]) for r in requests], [("share", False)])
        # The same without a .flatpak-info in a root of its own: still declared.
        bare = self.sandbox(None)
        self.assertOk(bare.call(self.bus, NOBODY, "health.RequestAuthorization('chrooted-app', [%r], [])" % HR))
        listed = self.entries_of("nobody/chrooted-app", "auth", "list", "--output", "json")
        self.assertEqual([e["verified"] for e in listed], [False], self.log())

    def test_a_declared_name_cannot_pose_as_a_verified_one(self):
        # Self-declared names never hold ':' (nor capitals), so none reads as a label's.
        for app in ("flatpak:" + APP_ID, "flatpak:" + APP_ID.lower(), "unit:hrm-export.service"):
            reply = harness.call_as(NOBODY, self.bus, "health.RequestAuthorization(%r, [%r], [])" % (app, HR))
            self.assertEqual(reply.error, "org.freedesktop.DBus.Error.InvalidArgs", "%r%s" % (reply, self.log()))
        sources = {entry["source"] for entry in self.json_lines("auth", "list", "--output", "json")}
        self.assertNotIn("nobody/flatpak:" + APP_ID.lower(), sources)
        self.assertNotIn("nobody/unit:hrm-export.service", sources)

class UnreadableProcTests(SandboxTestCase):
    """hrmd without capabilities (as under the shipped unit without its flatpak-identity
    drop-in): it cannot read a caller's root, says so once, and serves the caller under the
    name it declares instead of failing it."""

    shares_hrmd = False

    def test_without_ptrace_access_a_flatpak_application_declares_its_name(self):
        wrapper = os.path.join(self.bus.directory, "hrmd-without-capabilities")
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\nexec setpriv --inh-caps=-all --bounding-set=-all "%s" "$@"\n' % harness.hrmd_binary())
        os.chmod(wrapper, 0o755)
        with unittest.mock.patch.object(harness, "hrmd_binary", lambda: wrapper):
            hrmd = harness.Hrmd(self.bus)
        sandbox = Sandbox(FLATPAK_INFO)
        try:
            for app in ("pulse", "pulse"):
                reply = sandbox.call(self.bus, NOBODY, "health.RequestAuthorization(%r, [%r], [])" % (app, HR))
                self.assertTrue(reply.ok, "%r\n%s" % (reply, hrmd.output()[-3000:]))
            sources = {str(entry[0]) for entry in hrmd.proxy().Authorizations(timeout=harness.CALL_TIMEOUT_S)}
            self.assertIn("nobody/pulse", sources)
            self.assertNotIn(FLATPAK_SOURCE, sources)
            self.assertEqual(hrmd.output().count("cannot read the root of callers"), 1, hrmd.output()[-3000:])
        finally:
            sandbox.remove()
            hrmd.stop()


if __name__ == "__main__":
    unittest.main()
