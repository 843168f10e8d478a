#!/usr/bin/python3
"""hrm-client: an application that records and reads heart rate through hrmd's store service.

The store is org.hrmd.Health on the system bus (interface org.hrmd.Health1, see
/usr/share/dbus-1/interfaces/org.hrmd.Health1.xml). The service knows who calls from the bus
itself: this program's source is USER/APP, USER the login name of the uid it runs as, APP the
--app name. It may save heart rate once the user granted it (hrmctl auth grant USER/APP
heart-rate) and reads its own samples, or everyone's with read access.

    hrm-client.py [--app NAME] [--bus ADDRESS] request        ask for access, print the status
    hrm-client.py [--app NAME] [--bus ADDRESS] status         print the share status
    hrm-client.py [--app NAME] [--bus ADDRESS] save BPM       save one heart-rate sample, now
    hrm-client.py [--app NAME] [--bus ADDRESS] query [--since SECONDS]
                                                              print the samples, one JSON line each
    hrm-client.py [--app NAME] [--bus ADDRESS] watch SECONDS  print each SamplesChanged for a while

Exit status: 0 success, 64 bad usage or arguments, 69 no bus or no service, 77 not allowed,
1 anything else. Errors are one line on stderr. Needs python3-dbus and python3-gi (Debian).
"""

import argparse
import datetime
import json
import os
import pwd
import sys
import time

import dbus
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

SERVICE = "org.hrmd.Health"
PATH = "/org/hrmd/Health"
INTERFACE = "org.hrmd.Health1"
TYPE = "heart-rate"
UNIT = "count/min"
CALL_TIMEOUT_S = 10
NO_BOUND_LOW, NO_BOUND_HIGH = -(2 ** 63), 2 ** 63 - 1

# What a D-Bus error means to someone running this program, and the exit status for it.
ERRORS = {
    "org.hrmd.Health1.Error.NotAuthorized":
        (77, "not authorized to save heart rate: the user must grant it (hrmctl auth grant {source} heart-rate)"),
    "org.freedesktop.DBus.Error.AccessDenied": (77, "access denied: {message}"),
    "org.freedesktop.DBus.Error.InvalidArgs": (64, "invalid arguments: {message}"),
    "org.freedesktop.DBus.Error.LimitsExceeded": (1, "the store service is busy, try again: {message}"),
    "org.freedesktop.DBus.Error.ServiceUnknown": (69, "the heart-rate store service (org.hrmd.Health) is not running"),
    "org.freedesktop.DBus.Error.NameHasNoOwner": (69, "the heart-rate store service (org.hrmd.Health) is not running"),
    "org.freedesktop.DBus.Error.NoReply": (69, "the heart-rate store service did not answer in time"),
    "org.freedesktop.DBus.Error.Timeout": (69, "the heart-rate store service did not answer in time"),
    "org.freedesktop.DBus.Error.NoServer": (69, "cannot connect to the bus: {message}"),
    "org.freedesktop.DBus.Error.FileNotFound": (69, "cannot connect to the bus: {message}"),
    "org.freedesktop.DBus.Error.Spawn.ChildExited": (69, "the heart-rate store service could not be started"),
}


class Failed(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def explain(error, source):
    """A one-line message and an exit status for a D-Bus error."""
    name = error.get_dbus_name() or "unknown error"
    lines = (error.get_dbus_message() or name).splitlines() or [name]
    status, text = ERRORS.get(name, (1, name + ": {message}"))
    return Failed(status, text.format(message=lines[0], source=source))


def user_name():
    """The caller's USER as the service names it: the login name, or uid-N without one."""
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return "uid-%d" % os.getuid()


def microseconds(when):
    return int(when.timestamp() * 1_000_000)


def rfc3339(us):
    when = datetime.datetime.fromtimestamp(us / 1_000_000, datetime.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (when.microsecond // 1000)


def plain(value):
    """D-Bus values as plain Python (for JSON)."""
    if isinstance(value, dbus.Dictionary) or isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (dbus.Array, list, dbus.Struct, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.String, dbus.ObjectPath, str)):
        return str(value)
    if isinstance(value, (dbus.Double, float)):
        return float(value)
    return int(value)


class Store:
    """The store service, called as the application APP."""

    def __init__(self, app, address):
        self.app = app
        try:
            self.bus = dbus.bus.BusConnection(address) if address else dbus.SystemBus()
        except dbus.exceptions.DBusException as error:
            raise Failed(69, "cannot connect to the bus: %s" % (error.get_dbus_message() or error))
        # follow_name_owner_changes: no call now; each call goes to whoever owns the name then.
        self.health = dbus.Interface(self.bus.get_object(SERVICE, PATH, introspect=False,
                                                         follow_name_owner_changes=True), INTERFACE)

    def call(self, method, *arguments):
        try:
            return getattr(self.health, method)(*arguments, timeout=CALL_TIMEOUT_S)
        except dbus.exceptions.DBusException as error:
            raise explain(error, user_name() + "/" + self.app)

    def request(self):
        self.call("RequestAuthorization", self.app, dbus.Array([TYPE], signature="s"),
                  dbus.Array([TYPE], signature="s"))
        return str(self.call("AuthorizationStatus", self.app, TYPE))

    def status(self):
        return str(self.call("AuthorizationStatus", self.app, TYPE))

    def save(self, bpm, unit):
        now = microseconds(datetime.datetime.now(datetime.timezone.utc))
        sample = dbus.Dictionary({
            "type": TYPE,
            "start": dbus.Int64(now),
            "end": dbus.Int64(now),
            "value": dbus.Double(bpm),
            "unit": unit,
            "metadata": dbus.Dictionary({"sensorLocation": "chest"}, signature="sv"),
        }, signature="sv")
        stored, unchanged = self.call("SaveSamples", self.app, dbus.Array([sample], signature="a{sv}"))
        return int(stored), int(unchanged)

    def query(self, since):
        samples = self.call("QuerySamples", self.app, TYPE, dbus.Int64(since), dbus.Int64(NO_BOUND_HIGH),
                            dbus.UInt32(0))
        return [plain(sample) for sample in samples]

    def watch(self, seconds, on_change, on_observing):
        """Calls on_change(type, anchor) for each SamplesChanged during SECONDS. Subscribes to the
        signal before Observe, so that no change between the two is missed. Naming the service's
        well-known name as bus_name makes dbus-python deliver only signals from the connection
        that owns it now: any client can send this one a forged SamplesChanged directly. The
        anchor is an opaque token to an application: pass it back as it came."""
        self.bus.add_signal_receiver(on_change, signal_name="SamplesChanged", dbus_interface=INTERFACE,
                                     bus_name=SERVICE, path=PATH)
        self.call("Observe", self.app, TYPE)
        on_observing()
        loop = GLib.MainLoop()
        lost = []
        self.bus.call_on_disconnection(lambda connection: (lost.append(True), loop.quit()))
        GLib.timeout_add(int(seconds * 1000), loop.quit)
        loop.run()
        if lost:
            raise Failed(69, "the bus connection was lost")


class Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors are exit 64, as hrmd's and hrmctl's
        self.print_usage(sys.stderr)
        print("%s: %s" % (self.prog, message), file=sys.stderr)
        sys.exit(64)


def main():
    parser = Parser(prog="hrm-client", description="Record and read heart rate through hrmd's store service.")
    parser.add_argument("--app", default="hrm-client",
                        help="the application's name, [a-z0-9][a-z0-9._-]{0,63} (default hrm-client)")
    parser.add_argument("--bus", metavar="ADDRESS",
                        help="a D-Bus address (default: the system bus, or $DBUS_SYSTEM_BUS_ADDRESS)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    commands.add_parser("request", help="ask the user for access to heart rate, print the share status")
    commands.add_parser("status", help="print the share status for heart rate")
    save = commands.add_parser("save", help="save one heart-rate sample taken now")
    save.add_argument("bpm", type=float, metavar="BPM")
    save.add_argument("--unit", default=UNIT, help="the value's unit (default count/min)")
    query = commands.add_parser("query", help="print the heart-rate samples this application may read")
    query.add_argument("--since", type=float, metavar="SECONDS", help="only those of the last SECONDS")
    watch = commands.add_parser("watch", help="print each change of heart rate for SECONDS")
    watch.add_argument("seconds", type=float, metavar="SECONDS")
    options = parser.parse_args()

    DBusGMainLoop(set_as_default=True)
    try:
        store = Store(options.app, options.bus)
        if options.command == "request":
            print(store.request())
        elif options.command == "status":
            print(store.status())
        elif options.command == "save":
            stored, unchanged = store.save(options.bpm, options.unit)
            print("stored %d, unchanged %d" % (stored, unchanged))
        elif options.command == "query":
            since = NO_BOUND_LOW
            if options.since is not None:
                since = int((time.time() - options.since) * 1_000_000)
            for sample in store.query(since):
                for key in ("start", "end"):
                    if key in sample:
                        sample[key] = rfc3339(sample[key])
                print(json.dumps(sample, sort_keys=True))
        elif options.command == "watch":
            store.watch(options.seconds,
                        lambda sample_type, anchor: print("SamplesChanged %s %d" % (sample_type, anchor), flush=True),
                        lambda: print("observing %s for %g s" % (TYPE, options.seconds), flush=True))
    except Failed as failure:
        print("hrm-client: %s" % failure, file=sys.stderr)
        return failure.status
    return 0


if __name__ == "__main__":
    sys.exit(main())
