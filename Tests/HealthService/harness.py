"""Real parts for testing `hrmd --serve`: a private bus configured like the system bus, a mock
polkit on it, the built hrmd serving org.hrmd.Health, and clients running as other uids.

    bus = SystemLikeBus()                      # dbus-daemon: <type>system, default deny, the
                                               # repository's dbus/org.hrmd.Health.conf included
    polkit = PolkitMock(bus)                   # python-dbusmock's polkitd template
    polkit.set_allowed(["org.hrmd.health.manage"])
    hrmd = Hrmd(bus)                           # $HRMD_BIN_DIR/hrmd --serve --store TMP/hrmd.sqlite
    result = call_as(NOBODY, bus, "health.AuthorizationStatus('app', 'heart-rate')")
    exit_status, out, err = run_client_as(NOBODY, bus, "--app", "app", "request")
    ...
    hrmd.stop(); polkit.stop(); bus.stop()

Everything runs as root (setpriv needs it; the service runs as root here, which makes root's
own calls a manager's). Every wait is bounded. `requirements()` says what is missing;
`skip_or_fail(reason)` skips a test for it, or fails it when CI=true.
"""

import functools
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

import dbus

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "pysupport"))

import processes  # noqa: E402
from builds import REPO, binary  # noqa: E402
from ci import in_ci, require, skip_or_fail  # noqa: E402,F401  (the tests use them as harness.*)
from processes import Output, log_text  # noqa: E402
from waiting import wait_for  # noqa: E402,F401

POLICY = os.path.join(REPO, "dbus", "org.hrmd.Health.conf")
SYSTEM_CONF = os.path.join(REPO, "Tests", "service", "system-bus.conf.in")
CLIENT = os.path.join(REPO, "examples", "hrm-client.py")
PYTHON = "/usr/bin/python3"  # Debian's, with python3-dbus and dbusmock (the python3 on PATH may be another)

SERVICE = "org.hrmd.Health"
PATH = "/org/hrmd/Health"
INTERFACE = "org.hrmd.Health1"
POLKIT = "org.freedesktop.PolicyKit1"
POLKIT_PATH = "/org/freedesktop/PolicyKit1/Authority"
MANAGE = "org.hrmd.health.manage"
NO_LOW, NO_HIGH = -(2 ** 63), 2 ** 63 - 1

NOBODY = (65534, 65534)      # "nobody" on Debian: sources nobody/APP
NAMELESS = (65533, 65533)    # no passwd entry: sources uid-65533/APP
NAMELESS_UIDS = [NAMELESS]
CALL_TIMEOUT_S = 15          # one client process, start to end
START_TIMEOUT_S = 20         # a daemon until its name is on the bus
STOP_TIMEOUT_S = 5           # SIGTERM until SIGKILL


def requirements():
    """None when everything the harness needs is here, else what is missing."""
    if os.geteuid() != 0:
        return "needs root (setpriv runs clients as other uids)"
    for tool in ("setpriv", "dbus-daemon", "unshare", "mount"):
        if not shutil.which(tool):
            return "needs %s" % tool
    if not os.path.exists(PYTHON):
        return "needs %s" % PYTHON
    probe = subprocess.run([PYTHON, "-c", "import dbusmock, dbus, gi"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        return "needs python3-dbusmock, python3-dbus and python3-gi"
    return None


def hrmd_binary():
    return binary("hrmd")


def hrmd_serves():
    """None when the built hrmd has --serve, else why not."""
    binary = hrmd_binary()
    if not os.access(binary, os.X_OK):
        return "no hrmd at %s (build it, or set HRMD_BIN_DIR)" % binary
    try:
        help_text = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return "%s --help did not answer in 30 s" % binary
    if "--serve" not in help_text.stdout + help_text.stderr:
        return "%s has no --serve yet (the store service is not built into it)" % binary
    return None


def has_passwd_entry(uid):
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


# SIGTERM, then SIGKILL after STOP_TIMEOUT_S; the exit status (None when killed).
stop_process = functools.partial(processes.stop_process, timeout=STOP_TIMEOUT_S)


class SystemLikeBus:
    """A dbus-daemon configured like Debian's /usr/share/dbus-1/system.conf: type system, EXTERNAL
    authentication, own and method calls denied by default, signals and replies allowed, and the
    policy files of one directory included: the repository's org.hrmd.Health.conf and a test-only
    file that lets root own org.freedesktop.PolicyKit1 (the mock). The socket's directory is
    traversable by every uid."""

    def __init__(self, extra_policies=None):
        self.directory = tempfile.mkdtemp(prefix="hrmd-bus-")
        os.chmod(self.directory, 0o755)
        self.policy_dir = os.path.join(self.directory, "system.d")
        os.mkdir(self.policy_dir)
        shutil.copy(POLICY, self.policy_dir)
        with open(os.path.join(self.policy_dir, "test-polkit-mock.conf"), "w") as f:
            f.write(POLKIT_MOCK_POLICY)
        for name, text in (extra_policies or {}).items():
            with open(os.path.join(self.policy_dir, name), "w") as f:
                f.write(text)
        self.socket = os.path.join(self.directory, "system_bus_socket")
        self.address = "unix:path=" + self.socket
        self.config = os.path.join(self.directory, "system.conf")
        self.service_dir = os.path.join(self.directory, "system-services")  # stays empty: nothing is activatable
        os.mkdir(self.service_dir)
        with open(SYSTEM_CONF) as f:
            template = f.read()
        with open(self.config, "w") as f:
            f.write(template.replace("@SOCKET@", self.socket).replace("@SERVICE_DIR@", self.service_dir)
                    .replace("@POLICY_DIR@", self.policy_dir))
        self.log = open(os.path.join(self.directory, "dbus-daemon.log"), "w+")
        daemon = ["dbus-daemon", "--config-file=" + self.config, "--nofork", "--nopidfile", "--print-address=1"]
        self.nameless_uids = [uid for uid, _ in NAMELESS_UIDS if not has_passwd_entry(uid)]
        if self.nameless_uids:
            daemon = self._with_test_users(daemon)
        self.process = subprocess.Popen(daemon, stdout=subprocess.PIPE, stderr=self.log, start_new_session=True)
        line = (processes.LineReader(self.process.stdout).line(START_TIMEOUT_S) or "").strip()
        if not line:
            self.stop()
            raise RuntimeError("dbus-daemon did not start: " + self.daemon_log())
        self._connection = None

    def _with_test_users(self, daemon):
        """dbus-daemon drops a connection whose uid it cannot find in the user database (it needs
        the uid's groups for its policy), so a uid without a passwd entry never reaches a real
        system bus. The bus alone is shown test-only entries for those uids, bind-mounted over
        /etc/passwd and /etc/group in a private mount namespace; hrmd, outside it, finds no name
        for them and must call their users uid-N."""
        files = {}
        for name in ("passwd", "group"):
            with open("/etc/" + name) as f:
                text = f.read()
            if text and not text.endswith("\n"):
                text += "\n"
            for uid, gid in NAMELESS_UIDS:
                if uid in self.nameless_uids:
                    text += ("hrmd-test-%d:x:%d:%d::/nonexistent:/usr/sbin/nologin\n" % (uid, uid, gid) if name == "passwd"
                             else "hrmd-test-%d:x:%d:\n" % (gid, gid))
            files[name] = os.path.join(self.directory, name)
            with open(files[name], "w") as f:
                f.write(text)
        script = ('mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/group && shift 2 && exec "$@"')
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                files["passwd"], files["group"]] + daemon

    def env(self, **extra):
        environment = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "HOME": "/",
                       "DBUS_SYSTEM_BUS_ADDRESS": self.address}
        environment.update(extra)
        return environment

    def connection(self):
        """Root's own connection (a manager's, as the service runs as root here)."""
        if self._connection is None:
            self._connection = dbus.bus.BusConnection(self.address)
        return self._connection

    def has_owner(self, name):
        try:
            return bool(self.connection().name_has_owner(name))
        except dbus.exceptions.DBusException:
            return False

    def wait_for_owner(self, name, timeout=START_TIMEOUT_S, alive=None):
        """True once NAME has an owner; False after TIMEOUT or when alive() turns false."""
        wait_for(lambda: self.has_owner(name) or (alive is not None and not alive()), timeout)
        return self.has_owner(name)

    def daemon_log(self):
        return log_text(self.log)

    def stop(self):
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        stop_process(self.process)
        self.process.stdout.close()
        self.log.close()
        shutil.rmtree(self.directory, ignore_errors=True)


# Test only: the mock polkit runs as root; Debian's own file lets only polkitd own the name.
POLKIT_MOCK_POLICY = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <policy user="root">
    <allow own="org.freedesktop.PolicyKit1"/>
  </policy>
  <policy context="default">
    <allow send_destination="org.freedesktop.PolicyKit1"/>
  </policy>
</busconfig>
"""


class PolkitMock:
    """python-dbusmock's polkitd template on the bus; refuses every action until told otherwise."""

    def __init__(self, bus):
        self.bus = bus
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen([PYTHON, "-m", "dbusmock", "--system", "--template", "polkitd"],
                                        env=bus.env(), stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        if not bus.wait_for_owner(POLKIT, alive=lambda: self.process.poll() is None):
            output = self.output()
            self.stop()
            raise RuntimeError("the polkit mock did not start: " + output)

    def _mock(self):
        return dbus.Interface(self.bus.connection().get_object(POLKIT, POLKIT_PATH, introspect=False),
                              "org.freedesktop.DBus.Mock")

    def set_allowed(self, actions):
        self._mock().SetAllowed(dbus.Array(actions, signature="s"), timeout=CALL_TIMEOUT_S)

    def allow_unknown(self, allow):
        self._mock().AllowUnknown(dbus.Boolean(allow), timeout=CALL_TIMEOUT_S)

    def check(self, action, sender=":1.0"):
        """CheckAuthorization as hrmd asks it: (authorized, challenge, details)."""
        authority = dbus.Interface(self.bus.connection().get_object(POLKIT, POLKIT_PATH, introspect=False),
                                   "org.freedesktop.PolicyKit1.Authority")
        subject = dbus.Struct(("system-bus-name", dbus.Dictionary({"name": dbus.String(sender, variant_level=1)},
                                                                  signature="sv")), signature="sa{sv}")
        result = authority.CheckAuthorization(subject, action, dbus.Dictionary({}, signature="ss"),
                                              dbus.UInt32(0), "", timeout=CALL_TIMEOUT_S)
        return bool(result[0]), bool(result[1]), dict(result[2])

    def output(self):
        return log_text(self.log)

    def stop(self):
        stop_process(self.process)
        self.log.close()


class Hrmd:
    """The built hrmd serving the store on the bus, as root, with a store and a config of its own.
    Its stderr is kept for failure messages (`output()`)."""

    def __init__(self, bus, sensors=("mock:hz=1,bpm=70",), extra_arguments=(), duration_s=600, more_config=""):
        self.bus = bus
        self.directory = tempfile.mkdtemp(prefix="hrmd-store-")
        self.store = os.path.join(self.directory, "hrmd.sqlite")
        config = os.path.join(self.directory, "hrmd.conf")
        with open(config, "w") as f:
            f.write("[hrmd]\n" + more_config)
        arguments = [hrmd_binary(), "--serve", "--config", config, "--store", self.store,
                     "--duration", str(duration_s)]  # --duration: it ends by itself should the harness die
        for sensor in sensors:
            arguments += ["--sensor", sensor]
        arguments += list(extra_arguments)
        self.log = open(os.path.join(self.directory, "hrmd.log"), "w+")
        self.process = subprocess.Popen(arguments, env=bus.env(), stdin=subprocess.DEVNULL, stdout=self.log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        if not bus.wait_for_owner(SERVICE, alive=lambda: self.process.poll() is None):
            output = self.output()
            status = self.process.poll()
            self.stop()
            raise RuntimeError("hrmd did not take %s within %d s (exit %s): %s"
                               % (SERVICE, START_TIMEOUT_S, status, output[-2000:]))

    def alive(self):
        return self.process.poll() is None

    def output(self):
        return log_text(self.log)

    def proxy(self):
        """Root's proxy of the service (root is a manager)."""
        return dbus.Interface(self.bus.connection().get_object(SERVICE, PATH, introspect=False), INTERFACE)

    def property(self, name):
        properties = dbus.Interface(self.bus.connection().get_object(SERVICE, PATH, introspect=False),
                                    "org.freedesktop.DBus.Properties")
        return properties.Get(INTERFACE, name, timeout=CALL_TIMEOUT_S)

    def stop(self):
        status = stop_process(self.process)
        self.log.close()
        shutil.rmtree(self.directory, ignore_errors=True)
        return status


# Clients as other uids.

def as_uid(uid_gid, argv):
    uid, gid = uid_gid
    return ["setpriv", "--reuid=%d" % uid, "--regid=%d" % gid, "--clear-groups"] + list(argv)


def run_as(uid_gid, bus, argv, timeout=CALL_TIMEOUT_S):
    """Runs ARGV as that uid on the bus; (exit status, stdout, stderr). A timeout is exit -9."""
    try:
        done = subprocess.run(as_uid(uid_gid, argv), env=bus.env(), capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as expired:
        def text(value):
            return value.decode(errors="replace") if isinstance(value, bytes) else (value or "")
        return -9, text(expired.stdout), text(expired.stderr) + "\n(killed after %g s)" % timeout


def client_path(bus):
    """examples/hrm-client.py, copied where every uid can read it."""
    path = os.path.join(bus.directory, "hrm-client.py")
    if not os.path.exists(path):
        shutil.copy(CLIENT, path)
        os.chmod(path, 0o755)
    return path


def run_client_as(uid_gid, bus, *arguments, timeout=CALL_TIMEOUT_S):
    """examples/hrm-client.py as that uid: (exit status, stdout, stderr)."""
    return run_as(uid_gid, bus, [PYTHON, client_path(bus)] + list(arguments), timeout=timeout)


# A snippet runs with `bus` (its connection, on a GLib main loop), `health` (the service's proxy,
# calling with the signatures of the interface XML), `raw` (the same without signatures: python-dbus
# guesses them), `dbus`, `GLib`, `NO_LOW`, `NO_HIGH`, `sample(...)`, `samples(...)` and `out(value)`
# (prints a value as JSON) at hand. A D-Bus error
# ends it with exit 3 and {"error": NAME, "message": TEXT} on stdout.
SNIPPET_PRELUDE = textwrap.dedent("""\
    import json, os, sys, time
    import dbus
    from dbus.mainloop.glib import DBusGMainLoop
    from gi.repository import GLib
    DBusGMainLoop(set_as_default=True)
    NO_LOW, NO_HIGH = -(2 ** 63), 2 ** 63 - 1
    def plain(v):
        if v is None:
            return None
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, dbus.Boolean):
            return bool(v)
        if isinstance(v, (str, dbus.String, dbus.ObjectPath, dbus.Signature)):
            return str(v)
        if isinstance(v, (float, dbus.Double)):
            return float(v)
        return int(v)
    def out(v):
        print(json.dumps(plain(v)), flush=True)
    def sample(value=70.0, start=0, **fields):
        # A sample dictionary; numbers become x (start, end) and d (value), anything else stays.
        d = {"type": "heart-rate", "unit": "count/min", "value": value, "start": start}
        d.update(fields)
        for key, kind in (("start", dbus.Int64), ("end", dbus.Int64), ("value", dbus.Double)):
            if type(d.get(key)) in (int, float):
                d[key] = kind(d[key])
        return dbus.Dictionary(d, signature="sv")
    def samples(*items):
        return dbus.Array(list(items), signature="a{sv}")
    class Typed:
        # Calls with each method's signature from org.hrmd.Health1.xml (so [] is as, 5 is x).
        def __init__(self, proxy):
            self.proxy = proxy
        def __getattr__(self, name):
            method = getattr(self.proxy, name)
            return lambda *args, **kw: method(*args, signature=SIGNATURES.get(name), **kw)
    SIGNATURES = %(signatures)r
    try:
        bus = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
        raw = dbus.Interface(bus.get_object("org.hrmd.Health", "/org/hrmd/Health", introspect=False,
                                            follow_name_owner_changes=True), "org.hrmd.Health1")
        health = Typed(raw)
    """)
SNIPPET_END = textwrap.dedent("""\
    except dbus.exceptions.DBusException as error:
        print(json.dumps({"error": error.get_dbus_name(), "message": error.get_dbus_message()}), flush=True)
        sys.exit(3)
    """)


def method_signatures():
    """{method: in-signature} of org.hrmd.Health1, from the interface XML in the repository."""
    import xml.etree.ElementTree as ElementTree
    tree = ElementTree.parse(os.path.join(REPO, "dbus", "org.hrmd.Health1.xml"))
    return {method.get("name"): "".join(arg.get("type") for arg in method.findall("arg")
                                         if arg.get("direction", "in") == "in")
            for method in tree.iter("method")}


def snippet_source(code):
    return SNIPPET_PRELUDE % {"signatures": method_signatures()} + textwrap.indent(textwrap.dedent(code).strip() + "\n", "    ") + SNIPPET_END


def run_snippet_as(uid_gid, bus, code, timeout=CALL_TIMEOUT_S):
    """A python3-dbus snippet as that uid: (exit status, stdout, stderr)."""
    return run_as(uid_gid, bus, [PYTHON, "-c", snippet_source(code)], timeout=timeout)


class Reply:
    """What one call made by another uid gave: a value, or a D-Bus error name and message."""

    def __init__(self, status, stdout, stderr):
        self.status, self.stdout, self.stderr = status, stdout, stderr
        self.value = self.error = self.message = None
        lines = stdout.strip().splitlines()
        if lines:
            try:
                last = json.loads(lines[-1])
            except ValueError:
                last = None
            if status == 3 and isinstance(last, dict) and "error" in last:
                self.error, self.message = last["error"], last["message"]
            elif status == 0:
                self.value = last

    @property
    def ok(self):
        return self.status == 0

    def __repr__(self):
        if self.ok:
            return "Reply(%r)" % (self.value,)
        if self.error:
            return "Reply(error=%s: %s)" % (self.error, self.message)
        return "Reply(exit %s, stdout %r, stderr %r)" % (self.status, self.stdout[-500:], self.stderr[-1500:])


def call_as(uid_gid, bus, expression, timeout=CALL_TIMEOUT_S):
    """Evaluates one Python expression (a call on `health`) as that uid; its value as JSON."""
    return Reply(*run_snippet_as(uid_gid, bus, "out(%s)" % expression, timeout=timeout))


class Background:
    """A client running as another uid while the test goes on; its stdout read line by line as it
    comes (processes.Output)."""

    def __init__(self, uid_gid, bus, argv, stdin=subprocess.DEVNULL, extra_env=None):
        self.process = subprocess.Popen(as_uid(uid_gid, argv), env=bus.env(**(extra_env or {})), stdin=stdin,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        self.output = Output(self.process.stdout, close=True)
        self.result = None

    @property
    def lines(self):
        """Its stdout's lines so far."""
        with self.output.changed:
            return list(self.output.lines)

    def wait_for_line(self, predicate, timeout, count=1):
        """The COUNT-th line so far or within TIMEOUT that satisfies PREDICATE, else None."""
        return self.output.find(predicate, timeout, count)

    def finish(self, timeout=CALL_TIMEOUT_S):
        """Waits for the end (SIGKILL after TIMEOUT): (exit status, stdout lines, stderr)."""
        if self.result is not None:
            return self.result
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(STOP_TIMEOUT_S)
        self.output.join(STOP_TIMEOUT_S)
        stderr = self.process.stderr.read().decode(errors="replace")
        self.process.stderr.close()
        if self.process.stdin:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        self.result = (self.process.returncode, self.lines, stderr)
        return self.result

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        return self.finish(STOP_TIMEOUT_S)


def background_snippet_as(uid_gid, bus, code, stdin=subprocess.DEVNULL):
    return Background(uid_gid, bus, [PYTHON, "-c", snippet_source(code)], stdin=stdin)


def background_client_as(uid_gid, bus, *arguments):
    return Background(uid_gid, bus, [PYTHON, client_path(bus)] + list(arguments))


class ServiceTestCase(unittest.TestCase):
    """Tests of the built hrmd --serve: one system-like bus and polkit mock per class, and one
    shared hrmd when `shares_hrmd` (tests that need their own start it themselves). Skipped,
    with the reason, while a part is missing (a failure in CI) or hrmd has no --serve."""

    shares_hrmd = True
    bus = polkit = hrmd = None

    @classmethod
    def setUpClass(cls):
        require(requirements())
        not_serving = hrmd_serves()
        if not_serving:
            raise unittest.SkipTest(not_serving)
        cls.bus = SystemLikeBus()
        try:
            cls.polkit = PolkitMock(cls.bus)
            if cls.shares_hrmd:
                cls.hrmd = Hrmd(cls.bus)
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for part in (cls.hrmd, cls.polkit, cls.bus):
            if part is not None:
                part.stop()
        cls.bus = cls.polkit = cls.hrmd = None


# Added for the hostile-client and fuzzing tests (test_hostile.py, test_bus_fuzz.py).

HANG_S = 60  # how long anything may take before it counts as hung (never a measure of speed)


def hrmctl_binary():
    return os.path.join(os.path.dirname(hrmd_binary()), "hrmctl")


def hrmctl(bus, *arguments, timeout=HANG_S):
    """The built hrmctl as root against the bus's store service: (exit status, stdout, stderr)."""
    return run_as((0, 0), bus, [hrmctl_binary()] + list(arguments), timeout=timeout)


def vm_hwm_kib(pid):
    """The peak resident set (VmHWM) of a process in KiB, from /proc/PID/status; None when gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def name_owner(bus, name=SERVICE):
    """The unique name that owns NAME now, or None."""
    try:
        return str(bus.connection().get_name_owner(name))
    except dbus.exceptions.DBusException:
        return None


def unique_names_of_pid(bus, pid):
    """The unique bus names of the connections process PID has open."""
    driver = dbus.Interface(bus.connection().get_object("org.freedesktop.DBus", "/org/freedesktop/DBus"),
                            "org.freedesktop.DBus")
    names = []
    for name in driver.ListNames(timeout=CALL_TIMEOUT_S):
        if not str(name).startswith(":"):
            continue
        try:
            if int(driver.GetConnectionUnixProcessID(name, timeout=CALL_TIMEOUT_S)) == pid:
                names.append(str(name))
        except dbus.exceptions.DBusException:
            pass
    return names


class Prober(Background):
    """A victim client as another uid that keeps one connection open and, each time `ask()` is
    called, makes one call (by default AuthorizationStatus of APP for heart-rate) and reports how
    long the answer took, measured inside the client (its process start is not counted). Its
    first call is made at start, so the service's first-call costs (looking up the uid) are not
    counted either."""

    CODE = """
        app = %(app)r
        def ask():
            started = time.monotonic()
            try:
                %(call)s
                outcome = "ok"
            except dbus.exceptions.DBusException as error:
                outcome = error.get_dbus_name()
            return time.monotonic() - started, outcome
        print("ready %%.3f %%s" %% ask(), flush=True)
        for line in sys.stdin:
            print("answer %%.3f %%s" %% ask(), flush=True)
    """

    def __init__(self, uid_gid, bus, app="probe", call=None):
        call = call or "health.AuthorizationStatus(app, 'heart-rate', timeout=%d)" % (HANG_S * 5)
        argv = [PYTHON, "-c", snippet_source(self.CODE % {"app": app, "call": call})]
        super().__init__(uid_gid, bus, argv, stdin=subprocess.PIPE)
        self.asked = 0
        self.ready = self.wait_for_line(lambda line: line.startswith("ready"), HANG_S)

    def ask(self, timeout=HANG_S):
        """(seconds the call took, "ok" or the D-Bus error name); (None, why) when no answer came
        within TIMEOUT (the call hangs, or the client died)."""
        if self.ready is None:
            return None, "the prober never got its first answer: %r %r" % (self.lines, self.finish(1)[2][-1500:])
        try:
            self.process.stdin.write(b"\n")
            self.process.stdin.flush()
        except OSError as error:
            status, lines, stderr = self.finish(1)
            return None, "the prober is gone (%s, exit %s): %r %s" % (error, status, lines[-5:], stderr[-1500:])
        self.asked += 1
        answer = self.wait_for_line(lambda line: line.startswith("answer "), timeout, count=self.asked)
        if answer is None:
            return None, "no answer within %g s" % timeout
        _, seconds, outcome = answer.split(" ", 2)
        return float(seconds), outcome

    def close(self):
        if not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        return self.kill()
