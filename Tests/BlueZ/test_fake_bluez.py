#!/usr/bin/python3
"""Smoke test of fake_bluez.py from a python-dbus client on a private bus.

Run: /usr/bin/python3 Tests/BlueZ/test_fake_bluez.py
Starts its own dbus-daemon and fake, checks what a BlueZ client relies on (object tree, connect
sequence, reads, AcquireNotify socket and HUP, StartNotify and PropertiesChanged Value,
discovery, counters, power, restart on SIGTERM, adapter removal, devices added and removed,
sessions of clients that leave the bus), kills both at the end. Every wait is bounded;
prints "ok: ..." / "FAILED: ..." lines and "N passed, N failed"; exits 1 on any failure.
"""

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import dbus
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "pysupport"))

from processes import LineReader, stop_process  # noqa: E402

FAKE = os.path.join(HERE, "fake_bluez.py")
OVERALL_TIMEOUT_S = 120
OM = "org.freedesktop.DBus.ObjectManager"
PROPS = "org.freedesktop.DBus.Properties"
DEVICE = "org.bluez.Device1"
ADAPTER = "org.bluez.Adapter1"
CHAR = "org.bluez.GattCharacteristic1"


def uuid16(short):
    return "0000%s-0000-1000-8000-00805f9b34fb" % short


A = "AA:BB:CC:DD:EE:01"  # acquirable, battery, one failed connect
B = "AA:BB:CC:DD:EE:02"  # StartNotify only
C = "AA:BB:CC:DD:EE:03"  # unknown, discoverable
D = "AA:BB:CC:DD:EE:04"  # streams by itself while subscribed
E = "AA:BB:CC:DD:EE:06"  # ends each link soon after it is subscribed
F = "AA:BB:CC:DD:EE:07"  # never answers Disconnect
G = "AA:BB:CC:DD:EE:08"  # answers Disconnect late
H = "AA:BB:CC:DD:EE:09"  # bluetoothd 5.66 under load: Connected unannounced, GATT objects after ServicesResolved
SCENARIO = {"adapters": ["hci0"], "devices": [
    {"address": A, "name": "Polar H10 A1B2C3D4", "trusted": True, "location": 1, "battery": 87,
     "battery_gatt": 90, "notify_acquired": True, "connect_failures": 1},
    {"address": B, "name": "Strap B", "paired": True, "location": 2, "notify_acquired": False},
    {"address": C, "name": "Strap C", "discoverable": True},
    {"address": D, "name": "Strap D", "trusted": True, "notify_acquired": True, "auto_stream_hz": 20},
    {"address": E, "name": "Strap E", "trusted": True, "notify_acquired": False, "drop_after_s": 0.3},
    {"address": F, "name": "Strap F", "trusted": True, "disconnect_reply_after_s": "never"},
    {"address": G, "name": "Strap G", "trusted": True, "disconnect_reply_after_s": 0.5},
    {"address": H, "name": "Strap H", "trusted": True, "battery": 70, "connect_reply": "link",
     "connected_unannounced": True, "gatt_late_s": 30, "read_delay_s": 0.5},
]}


def device_path(address):
    return "/org/bluez/hci0/dev_" + address.replace(":", "_")


class Failure(Exception):
    pass


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, condition, what):
        if condition:
            self.passed += 1
            print("ok:", what, flush=True)
        else:
            self.failed += 1
            print("FAILED:", what, flush=True)
        return condition

    def require(self, condition, what):
        if not self.check(condition, what):
            raise Failure(what)


class Fake:
    """The fake_bluez.py child: start, commands, SIGTERM."""

    def __init__(self, address, scenario_path, fifo=None):
        arguments = ["/usr/bin/python3", FAKE, "--address", address, "--scenario", scenario_path]
        self.fifo = fifo
        if fifo:  # commands on a FIFO, stdin at end of file
            self.process = subprocess.Popen(arguments + ["--commands", fifo], stdin=subprocess.DEVNULL,
                                            stdout=subprocess.PIPE)
        else:
            self.process = subprocess.Popen(arguments, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.reader = LineReader(self.process.stdout)

    def wait_ready(self, timeout=15):
        return self.reader.line(timeout) == "ready"

    def command(self, line, timeout=5):
        if self.fifo:
            fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)  # the fake holds it open
            os.write(fd, (line + "\n").encode())
            os.close(fd)
        else:
            self.process.stdin.write((line + "\n").encode())
            self.process.stdin.flush()
        answer = self.reader.line(timeout)
        if answer is None:
            raise Failure("no answer to %r" % line)
        return json.loads(answer)

    def terminate(self, timeout=5):
        return stop_process(self.process, timeout)


class Client:
    """A python-dbus client recording the signals of org.bluez in arrival order."""

    def __init__(self, address):
        self.bus = dbus.bus.BusConnection(address)
        self.events = []  # (kind, path, payload)
        self.bus.add_signal_receiver(lambda p, i: self.events.append(("added", str(p), i)),
                                     "InterfacesAdded", OM, path="/")
        self.bus.add_signal_receiver(lambda p, i: self.events.append(("removed", str(p), [str(x) for x in i])),
                                     "InterfacesRemoved", OM, path="/")
        self.bus.add_signal_receiver(self._changed, "PropertiesChanged", PROPS, path_keyword="path")
        # Not recorded: it wakes wait() when org.bluez comes or goes.
        self.bus.add_signal_receiver(lambda *_: None, "NameOwnerChanged", "org.freedesktop.DBus", arg0="org.bluez")

    def _changed(self, interface, changed, invalidated, path=None):
        self.events.append(("changed", str(path), (str(interface), dict(changed))))

    def pump(self):
        """Dispatches every message that has come (signals recorded, replies handed over)."""
        context = GLib.MainContext.default()
        while context.iteration(False):
            pass

    def wait(self, predicate, timeout=5.0):
        """True once PREDICATE holds, asked again after each message that comes; False when
        TIMEOUT passes first. Whatever the fake changes it announces (a signal, a reply), so a
        message is the only moment a predicate can turn."""
        context = GLib.MainContext.default()
        deadline = time.monotonic() + timeout
        while True:
            self.pump()
            if predicate():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            alarm = GLib.timeout_source_new(max(1, int(left * 1000)))
            alarm.set_callback(lambda *_: False)
            alarm.attach(context)
            context.iteration(True)  # until a message comes, or the alarm at the deadline
            alarm.destroy()

    def round_trip(self):
        """A Ping to org.bluez, then what came dispatched: the fake sends its reply after every
        signal it sent before, so those are recorded when this returns. libdbus answers a Ping
        itself, so the fake's code never sees it (nothing held is let out)."""
        peer = dbus.Interface(self.bus.get_object("org.bluez", "/", introspect=False), "org.freedesktop.DBus.Peer")
        peer.Ping(timeout=5)
        self.pump()

    def objects(self):
        manager = dbus.Interface(self.bus.get_object("org.bluez", "/"), OM)
        return manager.GetManagedObjects()

    def interface(self, path, name):
        return dbus.Interface(self.bus.get_object("org.bluez", path), name)

    def prop(self, path, interface, name):
        return self.interface(path, PROPS).Get(interface, name)

    def characteristic(self, address, uuid):
        for path, interfaces in self.objects().items():
            props = interfaces.get(CHAR)
            if props and str(path).startswith(device_path(address) + "/") and props["UUID"] == uuid16(uuid):
                return str(path)
        return None

    def index(self, predicate, start=0):
        for i in range(start, len(self.events)):
            if predicate(self.events[i]):
                return i
        return -1


def property_event(path, interface, name, value):
    return lambda e: (e[0] == "changed" and e[1] == path and e[2][0] == interface
                      and name in e[2][1] and e[2][1][name] == value)


def recv_frames(sock, count, timeout):
    frames = []
    deadline = time.monotonic() + timeout
    while len(frames) < count:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([sock], [], [], left)[0]:
            break
        data = sock.recv(1024)
        if not data:
            break
        frames.append(data)
    return frames


def valid_measurement(frame):
    return len(frame) >= 2 and frame[0] in (0x06, 0x16) and 60 <= frame[1] <= 180 and \
        (len(frame) == 4 if frame[0] == 0x16 else len(frame) == 2)


def check_startup(r, client):
    objects = client.objects()
    r.require("/org/bluez/hci0" in objects, "adapter hci0 exported")
    r.check(bool(objects["/org/bluez/hci0"][ADAPTER]["Powered"]), "adapter powered")
    r.require(device_path(A) in objects and device_path(B) in objects, "known devices exist from the start")
    r.check(device_path(C) not in objects, "discoverable unknown device absent before discovery")
    dev = objects[device_path(A)][DEVICE]
    r.check(dev["Address"] == A and dev["Name"] == "Polar H10 A1B2C3D4" and dev["Adapter"] == "/org/bluez/hci0",
            "device properties")
    r.check(uuid16("180d") in dev["UUIDs"] and not dev["Connected"] and not dev["ServicesResolved"],
            "device advertises 180d and is disconnected")


def check_connect_and_acquire(r, client, fake):
    path = device_path(A)
    device = client.interface(path, DEVICE)
    start = len(client.events)
    try:
        device.Connect(timeout=5)
        r.check(False, "first Connect fails (connect_failures 1)")
    except dbus.DBusException as error:
        r.check(error.get_dbus_name() == "org.bluez.Error.Failed" and "le-connection-abort-by-local" in str(error),
                "first Connect fails with org.bluez.Error.Failed le-connection-abort-by-local")
    client.wait(lambda: client.index(property_event(path, DEVICE, "Connected", False), start) >= 0)
    up = client.index(property_event(path, DEVICE, "Connected", True), start)
    r.check(0 <= up < client.index(property_event(path, DEVICE, "Connected", False), start),
            "the aborted connection shows Connected true then false")
    start = len(client.events)
    device.Connect(timeout=5)
    r.require(client.wait(lambda: client.index(property_event(path, DEVICE, "ServicesResolved", True), start) >= 0),
              "ServicesResolved true after Connect")
    connected = client.index(property_event(path, DEVICE, "Connected", True), start)
    gatt = client.index(lambda e: e[0] == "added" and e[1].startswith(path + "/service"), start)
    resolved = client.index(property_event(path, DEVICE, "ServicesResolved", True), start)
    r.check(0 <= connected < gatt < resolved, "order: Connected, GATT InterfacesAdded, ServicesResolved")
    objects = client.objects()
    r.check(objects[path]["org.bluez.Battery1"]["Percentage"] == 87, "Battery1 Percentage on the device")
    location = client.characteristic(A, "2a38")
    r.require(location is not None, "2a38 exported")
    value = client.interface(location, CHAR).ReadValue({})
    r.check(list(value) == [1], "ReadValue 2a38 gives the location")
    maker = client.interface(client.characteristic(A, "2a29"), CHAR).ReadValue({})
    r.check(bytes(value_byte for value_byte in maker) == b"Polar Electro Oy", "ReadValue 2a29 gives the manufacturer")
    battery = client.characteristic(A, "2a19")
    r.check(battery is not None and list(client.interface(battery, CHAR).ReadValue({})) == [90], "battery GATT 2a19")

    measurement = client.characteristic(A, "2a37")
    r.require(measurement is not None, "2a37 exported")
    props = objects[measurement][CHAR]
    r.check(list(props["Flags"]) == ["notify"] and props["NotifyAcquired"] is not None and not props["NotifyAcquired"],
            "2a37 flags notify, NotifyAcquired present and false")
    fd, mtu = client.interface(measurement, CHAR).AcquireNotify({})
    sock = socket.socket(fileno=fd.take())
    r.check(mtu > 20, "AcquireNotify gives an MTU")
    r.check(client.wait(lambda: client.prop(measurement, CHAR, "NotifyAcquired")), "NotifyAcquired true")
    answer = fake.command("stream %s 50 10" % A)
    r.check(answer["ok"], "stream command accepted")
    frames = recv_frames(sock, 10, 3)
    r.check(len(frames) == 10, "10 streamed notifications on the socket (got %d)" % len(frames))
    r.check(all(valid_measurement(f) for f in frames), "each is a valid Heart Rate Measurement")
    r.check(all(frames[i] != frames[i + 1] for i in range(len(frames) - 1)), "successive frames differ")
    fake.command("notify %s 0650" % A)
    r.check(recv_frames(sock, 1, 2) == [b"\x06\x50"], "notify command sends the given frame")
    fake.command("malformed %s 2" % A)
    bad = recv_frames(sock, 2, 2)
    r.check(len(bad) == 2 and not any(valid_measurement(f) for f in bad), "malformed frames arrive")
    stats = fake.command("stats %s" % A)
    r.check(stats["connect_calls"] == 2 and stats["connects"] == 1 and stats["acquire_notify_calls"] == 1
            and stats["sent"] == 13 and stats["subscribed"], "stats for the device: %s" % stats)

    start = len(client.events)
    r.check(fake.command("drop %s" % A)["ok"], "drop command")
    poll = select.poll()
    poll.register(sock, select.POLLIN | select.POLLHUP)
    events = poll.poll(2000)
    r.check(events and events[0][1] & select.POLLHUP and sock.recv(16) == b"", "socket HUP after drop")
    sock.close()
    r.check(client.wait(lambda: client.index(property_event(path, DEVICE, "Connected", False), start) >= 0),
            "Connected false after drop")
    removed = client.index(lambda e: e[0] == "removed" and e[1] == measurement, start)
    unresolved = client.index(property_event(path, DEVICE, "ServicesResolved", False), start)
    disconnected = client.index(property_event(path, DEVICE, "Connected", False), start)
    r.check(0 <= removed < unresolved < disconnected, "order: GATT InterfacesRemoved, ServicesResolved, Connected")
    r.check(client.characteristic(A, "2a37") is None, "GATT objects gone")

    device.Connect(timeout=5)
    measurement = client.characteristic(A, "2a37")
    r.require(measurement is not None, "reconnect after drop brings the GATT objects back")
    fd, _ = client.interface(measurement, CHAR).AcquireNotify({})
    sock = socket.socket(fileno=fd.take())
    fake.command("notify %s 1648ff03" % A)
    r.check(recv_frames(sock, 1, 2) == [b"\x16\x48\xff\x03"], "notifications flow again after reconnect")
    device.Disconnect(timeout=5)
    r.check(recv_frames(sock, 1, 2) == [], "Disconnect closes the socket")
    sock.close()
    stats = fake.command("stats %s" % A)
    r.check(stats["connects"] == 2 and stats["disconnects"] == 2 and not stats["connected"],
            "stats count the reconnect and both disconnects")


def check_start_notify(r, client, fake):
    path = device_path(B)
    client.interface(path, DEVICE).Connect(timeout=5)
    r.check(bool(client.prop(path, DEVICE, "ServicesResolved")), "B resolved when Connect returns")
    measurement = client.characteristic(B, "2a37")
    props = client.objects()[measurement][CHAR]
    r.check("NotifyAcquired" not in props, "no NotifyAcquired without notify_acquired")
    characteristic = client.interface(measurement, CHAR)
    try:
        characteristic.AcquireNotify({})
        r.check(False, "AcquireNotify refused")
    except dbus.DBusException as error:
        r.check(error.get_dbus_name() == "org.bluez.Error.NotSupported", "AcquireNotify refused with NotSupported")
    start = len(client.events)
    characteristic.StartNotify()
    r.check(client.wait(lambda: client.index(property_event(measurement, CHAR, "Notifying", True), start) >= 0),
            "Notifying true after StartNotify")
    fake.command("stream %s 50 5" % B)
    values = lambda: [e for e in client.events[start:] if e[0] == "changed" and e[1] == measurement and "Value" in e[2][1]]
    r.check(client.wait(lambda: len(values()) >= 5, 3), "5 PropertiesChanged Value (got %d)" % len(values()))
    r.check(all(valid_measurement(bytes(e[2][1]["Value"])) for e in values()), "each Value is a measurement")
    characteristic.StopNotify()
    r.check(client.wait(lambda: not client.prop(measurement, CHAR, "Notifying")), "Notifying false after StopNotify")
    r.check(not fake.command("stream %s 10 1" % B)["ok"], "stream refused when not subscribed")
    client.interface(path, DEVICE).Disconnect(timeout=5)
    r.check(not client.prop(path, DEVICE, "Connected"), "B disconnected")


def check_discovery(r, client, fake):
    adapter = client.interface("/org/bluez/hci0", ADAPTER)
    adapter.SetDiscoveryFilter({"Transport": "le", "UUIDs": dbus.Array([uuid16("180d")], signature="s")})
    start = len(client.events)
    adapter.StartDiscovery()
    r.check(client.wait(lambda: client.index(lambda e: e[0] == "added" and e[1] == device_path(C), start) >= 0, 3),
            "discoverable device appears after StartDiscovery")
    rssi = lambda e: e[0] == "changed" and e[1] == device_path(A) and "RSSI" in e[2][1]
    r.check(client.wait(lambda: client.index(rssi, start) >= 0, 3), "known devices' RSSI changes while discovering")
    stats = fake.command("stats")
    r.check(stats["discovering"] and stats["start_discovery_calls"] == 1
            and stats["discovery_filter"] == {"Transport": "le", "UUIDs": [uuid16("180d")]},
            "stats record discovery and its filter")
    adapter.StopDiscovery()
    r.check(client.wait(lambda: not client.prop("/org/bluez/hci0", ADAPTER, "Discovering")), "Discovering false")


def check_auto_stream(r, client, fake):
    path = device_path(D)
    client.interface(path, DEVICE).Connect(timeout=5)
    measurement = client.characteristic(D, "2a37")
    fd, _ = client.interface(measurement, CHAR).AcquireNotify({})
    sock = socket.socket(fileno=fd.take())
    frames = recv_frames(sock, 5, 2)
    r.check(len(frames) == 5, "auto_stream_hz streams once subscribed")
    sock.close()
    r.check(client.wait(lambda: not client.prop(measurement, CHAR, "NotifyAcquired")),
            "closing the socket releases the acquisition")
    r.check(not fake.command("stats %s" % D)["subscribed"], "stats: no longer subscribed")
    fake.command("power off")
    r.check(client.wait(lambda: not client.prop(path, DEVICE, "Connected")), "power off disconnects")
    r.check(not client.prop("/org/bluez/hci0", ADAPTER, "Powered"), "Powered false")
    fake.command("power on")
    r.check(bool(client.prop("/org/bluez/hci0", ADAPTER, "Powered")), "Powered true again")


def check_timed_drop(r, client, fake):
    path = device_path(E)
    for link in (1, 2):
        client.interface(path, DEVICE).Connect(timeout=5)
        r.check(not client.wait(lambda: not client.prop(path, DEVICE, "Connected"), 0.6),
                "drop_after_s: link %d stays up while not subscribed" % link)
        client.interface(client.characteristic(E, "2a37"), CHAR).StartNotify()
        r.check(client.wait(lambda: not client.prop(path, DEVICE, "Connected"), 3),
                "drop_after_s: link %d ends after it was subscribed" % link)
    r.check(fake.command("stats %s" % E)["disconnects"] == 2, "stats: both links counted as disconnects")


def check_disconnect_reply(r, client, fake):
    """disconnect_reply_after_s: the link goes down at once, the answer late or never."""
    answers = {}
    for address in (F, G):
        path = device_path(address)
        client.interface(path, DEVICE).Connect(timeout=5)
        client.interface(path, DEVICE).Disconnect(
            reply_handler=lambda address=address: answers.setdefault(address, "reply"),
            error_handler=lambda error, address=address: answers.setdefault(address, error.get_dbus_name()),
            timeout=30)
        r.check(client.wait(lambda: not client.prop(path, DEVICE, "Connected"), 2),
                "disconnect_reply_after_s: %s's link goes down at once" % address)
    r.check(client.wait(lambda: G in answers, 3) and answers[G] == "reply",
            "disconnect_reply_after_s 0.5: the answer comes late")
    r.check(not client.wait(lambda: F in answers, 1), "disconnect_reply_after_s never: no answer")
    r.check(fake.command("stats %s" % F)["disconnect_calls"] == 1 and fake.command("stats %s" % G)["disconnects"] == 1,
            "stats count Disconnect calls and disconnects")


def check_late_announcements(r, client, fake):
    """connect_reply link, connected_unannounced, gatt_late_s, read_delay_s (strap H)."""
    path = device_path(H)
    start = len(client.events)
    client.interface(path, DEVICE).Connect(timeout=5)
    r.check(client.index(property_event(path, DEVICE, "ServicesResolved", True), start) < 0,
            "connect_reply link: Connect answers before the services are resolved")
    r.require(client.wait(lambda: client.index(property_event(path, DEVICE, "ServicesResolved", True), start) >= 0),
              "ServicesResolved follows")
    client.round_trip()  # an announcement would have come before the reply
    r.check(client.index(property_event(path, DEVICE, "Connected", True), start) < 0 and client.prop(path, DEVICE, "Connected"),
            "connected_unannounced: Connected is true but was never announced")
    resolved = client.index(property_event(path, DEVICE, "ServicesResolved", True), start)
    measurement = lambda e: e[0] == "added" and e[1].startswith(path + "/") and \
        e[2].get(CHAR, {}).get("UUID") == uuid16("2a37")
    r.check(client.index(measurement, start) < 0, "gatt_late_s: the GATT objects are held after ServicesResolved")
    client.prop(path, DEVICE, "Address")  # any answer sends what was held first
    r.check(client.wait(lambda: client.index(measurement, start) > resolved),
            "gatt_late_s: an answer to any call sends the held objects first")
    r.check(client.index(lambda e: e[0] == "added" and e[1] == path and "org.bluez.Battery1" in e[2], start) > resolved,
            "gatt_late_s: Battery1 is held too")
    replies = []
    # Proxies without introspection send each call at once, so the reads go out before StartNotify.
    readable = [dbus.Interface(client.bus.get_object("org.bluez", client.characteristic(H, uuid), introspect=False), CHAR)
                for uuid in ("2a38", "2a29", "2a24")]
    measurement = client.interface(client.characteristic(H, "2a37"), CHAR)
    for characteristic in readable:
        characteristic.ReadValue(dbus.Dictionary({}, signature="sv"),
                                 reply_handler=lambda value: replies.append(bytes(value)),
                                 error_handler=lambda error: replies.append(error))
    measurement.StartNotify()
    r.check(client.wait(lambda: len(replies) == 3, 3) and replies[0] == b"\x01", "read_delay_s: the reads are answered")
    stats = fake.command("stats %s" % H)
    r.check(stats["most_reads_in_flight"] == 3, "read_delay_s: stats count the reads in flight")
    r.check(stats["reads_answered"] == 3 and stats["reads_answered_when_subscribed"] == 0,
            "stats count the reads answered, and how many were when the measurement was subscribed")
    client.interface(path, DEVICE).Disconnect(timeout=5)


def check_restart(r, client, fake, start_fake):
    r.check(fake.terminate() == 0, "SIGTERM: clean exit")
    r.check(client.wait(lambda: not client.bus.name_has_owner("org.bluez")), "org.bluez released")
    again = start_fake(fifo=True)
    r.require(again.wait_ready(), "restarted fake is ready (commands on a FIFO, stdin at EOF)")
    r.check(device_path(A) in client.objects(), "restarted fake exports the devices")
    r.check(again.command("stats %s" % A)["connect_calls"] == 0, "commands through the FIFO")
    return again


def check_adapter_and_devices(r, client, fake):
    path = device_path(B)
    client.interface(path, DEVICE).Connect(timeout=5)
    start = len(client.events)
    r.check(fake.command("remove-adapter")["ok"], "remove-adapter")
    r.check(client.wait(lambda: client.index(lambda e: e[0] == "removed" and e[1] == "/org/bluez/hci0", start) >= 0),
            "adapter InterfacesRemoved")
    dev_removed = client.index(lambda e: e[0] == "removed" and e[1] == path, start)
    disconnected = client.index(property_event(path, DEVICE, "Connected", False), start)
    r.check(0 <= disconnected < dev_removed, "its connected device disconnects, then is removed")
    r.check(not client.objects(), "no objects without an adapter")
    r.check(not fake.command("drop %s" % B)["ok"], "commands on an absent device fail")
    r.check(fake.command("add-adapter")["ok"], "add-adapter")
    objects = client.objects()
    r.check("/org/bluez/hci0" in objects and path in objects and device_path(C) not in objects,
            "adapter back with its known devices")
    new = "AA:BB:CC:DD:EE:05"
    answer = fake.command('add-device {"address": "%s", "name": "New", "trusted": true}' % new)
    r.check(answer["ok"] and client.wait(lambda: device_path(new) in client.objects()), "add-device of a known strap")
    client.interface("/org/bluez/hci0", ADAPTER).RemoveDevice(device_path(new))
    r.check(client.wait(lambda: client.index(lambda e: e[0] == "removed" and e[1] == device_path(new), start) >= 0),
            "RemoveDevice removes it")
    r.check(not fake.command("add-device {bad")["ok"], "add-device refuses bad JSON")
    r.check(not fake.command("frobnicate")["ok"], "unknown command refused")
    fake.command("power off")
    try:
        client.interface(path, DEVICE).Connect(timeout=5)
        r.check(False, "Connect refused while powered off")
    except dbus.DBusException as error:
        r.check(error.get_dbus_name() == "org.bluez.Error.NotReady", "Connect refused while powered off: NotReady")
    fake.command("power on")
    adapter = client.interface("/org/bluez/hci0", ADAPTER)
    try:
        adapter.SetDiscoveryFilter({"Bogus": True})
        r.check(False, "SetDiscoveryFilter refuses unknown keys")
    except dbus.DBusException as error:
        r.check(error.get_dbus_name() == "org.bluez.Error.InvalidArguments", "SetDiscoveryFilter refuses unknown keys")


def check_client_leaving(r, client, fake, address):
    """A second client's StartNotify session ends when it leaves the bus; malformed values reach it."""
    path = device_path(B)
    client.interface(path, DEVICE).Connect(timeout=5)
    measurement = client.characteristic(B, "2a37")
    other = dbus.bus.BusConnection(address)
    dbus.Interface(other.get_object("org.bluez", measurement), CHAR).StartNotify()
    r.check(client.wait(lambda: client.prop(measurement, CHAR, "Notifying")), "second client's StartNotify")
    start = len(client.events)
    fake.command("malformed %s 5" % B)
    values = lambda: [bytes(e[2][1]["Value"]) for e in client.events[start:]
                      if e[0] == "changed" and e[1] == measurement and "Value" in e[2][1]]
    r.check(client.wait(lambda: len(values()) == 5) and b"" in values(), "malformed values, the empty one included")
    other.close()
    r.check(client.wait(lambda: not client.prop(measurement, CHAR, "Notifying")),
            "its session ends when it leaves the bus")
    r.check(not fake.command("stats")["subscribed"], "stats: nothing subscribed")


def give_up(signum, frame):
    raise Failure("gave up after %d s" % OVERALL_TIMEOUT_S)


def main():
    signal.signal(signal.SIGALRM, give_up)  # nothing may hang; the children are still ended below
    signal.alarm(OVERALL_TIMEOUT_S)
    DBusGMainLoop(set_as_default=True)
    r = Results()
    scratch = tempfile.mkdtemp(prefix="fake-bluez-")
    daemon_pid = None
    fakes = []
    try:
        address = "unix:path=%s/bus" % scratch
        output = subprocess.run(["dbus-daemon", "--config-file=/usr/share/dbus-1/session.conf",
                                 "--address=" + address, "--fork", "--print-pid"],
                                capture_output=True, text=True, timeout=10, check=True).stdout
        daemon_pid = int(output.split()[0])
        scenario_path = os.path.join(scratch, "scenario.json")
        with open(scenario_path, "w") as f:
            json.dump(SCENARIO, f)

        def start_fake(fifo=False):
            fakes.append(Fake(address, scenario_path, os.path.join(scratch, "commands") if fifo else None))
            return fakes[-1]

        fake = start_fake()
        r.require(fake.wait_ready(), "fake prints ready")
        client = Client(address)
        r.require(client.bus.name_has_owner("org.bluez"), "org.bluez owned once ready")
        check_startup(r, client)
        check_connect_and_acquire(r, client, fake)
        check_start_notify(r, client, fake)
        check_discovery(r, client, fake)
        check_auto_stream(r, client, fake)
        check_timed_drop(r, client, fake)
        check_disconnect_reply(r, client, fake)
        check_late_announcements(r, client, fake)
        fake = check_restart(r, client, fake, start_fake)
        check_adapter_and_devices(r, client, fake)
        check_client_leaving(r, client, fake, address)
        r.check(fake.command("quit") == {"ok": True} and fake.process.wait(5) == 0, "quit command exits")
    except Failure as failure:
        if "gave up" in str(failure):
            r.check(False, str(failure))
    except Exception as error:  # an unexpected D-Bus error is a failure too
        r.check(False, "unexpected %s: %s" % (type(error).__name__, error))
    finally:
        for fake in fakes:
            fake.terminate()
        if daemon_pid:
            try:
                os.kill(daemon_pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        shutil.rmtree(scratch, ignore_errors=True)
    print("%d passed, %d failed" % (r.passed, r.failed))
    return 1 if r.failed or not r.passed else 0


if __name__ == "__main__":
    sys.exit(main())
