"""A private session bus (a dbus-daemon of the session kind in a directory of its own) and a
desktop notification server on it (python-dbusmock's notification_daemon template), for the
tests and benchmarks of `hrmctl notify`."""

import os
import shutil
import subprocess
import tempfile

from waiting import wait_until

STOP_TIMEOUT_S = 10
START_TIMEOUT_S = 30
CALL_TIMEOUT_S = 10
PYTHON = "/usr/bin/python3"  # Debian's, with python3-dbus and dbusmock
NOTIFICATIONS = "org.freedesktop.Notifications"
NOTIFICATIONS_PATH = "/org/freedesktop/Notifications"

CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
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
"""


def stop(process):
    process.terminate()
    try:
        process.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(STOP_TIMEOUT_S)


class SessionBus:
    """A dbus-daemon of the session kind; `address` is its DBUS_SESSION_BUS_ADDRESS."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="hrmd-session-bus-")
        config = os.path.join(self.directory, "session.conf")
        with open(config, "w") as f:
            f.write(CONFIG % self.directory)
        self.process = subprocess.Popen(["dbus-daemon", "--config-file=" + config, "--nofork", "--print-address=1"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        self.address = self.process.stdout.readline().decode().strip()
        if not self.address:
            raise RuntimeError("the session bus did not start: " + self.process.stderr.read().decode(errors="replace"))

    def stop(self):
        stop(self.process)
        self.process.stdout.close()
        self.process.stderr.close()
        shutil.rmtree(self.directory, ignore_errors=True)


class NotificationServer:
    """python-dbusmock's notification server on BUS, which records each Notify call."""

    def __init__(self, bus):
        environment = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=bus.address)
        self.process = subprocess.Popen([PYTHON, "-m", "dbusmock", "--template", "notification_daemon"], env=environment,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        import dbus
        self.connection = dbus.bus.BusConnection(bus.address)
        wait_until(lambda: self.connection.name_has_owner(NOTIFICATIONS), START_TIMEOUT_S, "the notification server on the session bus")

    def notify_calls(self):
        """Each Notify call so far: (the server's time of it, whole seconds since the epoch, its arguments)."""
        import dbus
        mock = dbus.Interface(self.connection.get_object(NOTIFICATIONS, NOTIFICATIONS_PATH), "org.freedesktop.DBus.Mock")
        return [(float(call[0]), call[1]) for call in mock.GetMethodCalls("Notify", timeout=CALL_TIMEOUT_S)]

    def stop(self):
        self.connection.close()
        stop(self.process)
