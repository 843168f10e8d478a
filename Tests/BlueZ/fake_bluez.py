#!/usr/bin/python3
"""A fake bluetoothd for tests: heart-rate straps on a private D-Bus bus.

Usage:
    /usr/bin/python3 fake_bluez.py --address unix:path=DIR/bus --scenario FILE.json
                                   [--commands FIFO] [--verbose]

It connects to the given bus, exports the objects bluetoothd would export, then requests the
name org.bluez and prints `ready` on stdout. From then on it reads one command per line on
stdin (end of file quits: keep it open) or, with --commands, on a FIFO it opens itself
read-write (made if missing; writers may open and close it at will; stdin is then ignored, so
a child started with stdin on /dev/null works). Each command is answered with one JSON line
on stdout ({"ok": true, ...} or {"ok": false, "error": "..."}):

    drop ADDR                 the strap goes out of range (same sequence as Disconnect)
    notify ADDR HEX           one Heart Rate Measurement notification with the given bytes
    stream ADDR HZ COUNT      COUNT generated notifications at HZ (answers when started)
    malformed ADDR N          N malformed Heart Rate Measurement notifications (empty values
                              only through StartNotify: on a socket they would read as EOF)
    stats [ADDR]              counters (sent, dropped, connects, connect_calls, disconnects,
                              start_notify_calls, acquire_notify_calls, reads, subscribed,
                              connected, discovering, discovery_filter, start_discovery_calls,
                              stop_discovery_calls, ...): for ADDR alone, else summed over the
                              devices (subscribed and connected then count devices) with
                              "devices": {ADDR: {...}}
    power on|off              the adapter's Powered (off disconnects every strap)
    remove-adapter [NAME]     the adapter disappears (hci0 by default)
    add-adapter [NAME]        it comes back, with its known devices
    add-device JSON           a new strap, described like a scenario device
    quit                      exit (SIGTERM and SIGINT do the same: the name is released)

Scenario file:
    {"adapters": ["hci0"],
     "devices": [{"address": "AA:BB:CC:DD:EE:FF", "name": "Polar H10 A1B2C3D4",
                  "trusted": true, "paired": false, "discoverable": false, "location": 1,
                  "manufacturer": "Polar Electro Oy", "model": "H10", "hardware": "...",
                  "firmware": "...", "software": "...", "battery": 87, "battery_gatt": 90,
                  "notify_acquired": true, "connect_failures": 0, "auto_stream_hz": 0}]}

A paired or trusted device exists from the start; a discoverable unknown one appears only after
StartDiscovery. Connect sets Connected, about 100 ms later adds the GATT objects (Heart Rate
0x180d with 0x2a37 and 0x2a38, Device Information 0x180a, Battery 0x180f when battery_gatt is
set, org.bluez.Battery1 on the device when battery is set), sets ServicesResolved, then
replies, as bluetoothd does for LE. The first connect_failures Connect calls fail with
org.bluez.Error.Failed "le-connection-abort-by-local", after Connected went true then false
(the link bluetoothd made and aborted). Disconnect closes the acquired notify
socket, clears Notifying, removes the GATT objects, then clears ServicesResolved and Connected.
With auto_stream_hz > 0 the strap streams generated measurements whenever it is subscribed.
"""

import argparse
import json
import os
import signal
import socket
import sys
import time

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

BUS_NAME = "org.bluez"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
PROPERTIES = "org.freedesktop.DBus.Properties"
INTROSPECTABLE = "org.freedesktop.DBus.Introspectable"
ADAPTER = "org.bluez.Adapter1"
DEVICE = "org.bluez.Device1"
BATTERY = "org.bluez.Battery1"
GATT_SERVICE = "org.bluez.GattService1"
GATT_CHARACTERISTIC = "org.bluez.GattCharacteristic1"
GATT_DESCRIPTOR = "org.bluez.GattDescriptor1"

HEART_RATE_MEASUREMENT = "2a37"
CONNECT_DELAY_S = 0.03
SERVICE_DISCOVERY_DELAY_S = 0.1
ADVERTISING_INTERVAL_S = 1.0
ATT_MTU = 247
NAME_WAIT_S = 3.0
DISCOVERY_FILTER_KEYS = {"UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"}


def full_uuid(short):
    """The 128-bit form of a 16-bit Bluetooth SIG UUID given as 4 hex digits."""
    return "0000%s-0000-1000-8000-00805f9b34fb" % short


def byte_array(data):
    return dbus.Array([dbus.Byte(b) for b in data], signature="y")


def string_array(items):
    return dbus.Array([dbus.String(s) for s in items], signature="s")


def plain(value):
    """A D-Bus value as plain JSON-friendly Python."""
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.Byte, dbus.Int16, dbus.UInt16, dbus.Int32, dbus.UInt32, dbus.Int64, dbus.UInt64)):
        return int(value)
    if isinstance(value, dbus.Double):
        return float(value)
    if isinstance(value, dbus.Array):
        return [plain(v) for v in value]
    if isinstance(value, dbus.Dictionary):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (dbus.String, dbus.ObjectPath)):
        return str(value)
    return value


class BluezError(dbus.DBusException):
    """An error reply named like bluetoothd's (org.bluez.Error.NAME)."""

    def __init__(self, name, message=""):
        super().__init__(message, name=name if "." in name else "org.bluez.Error." + name)


def log(verbose, *words):
    if verbose:
        print("fake_bluez:", *words, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Exported objects: properties and the object manager


class PropertyObject(dbus.service.Object):
    """An exported object whose interfaces carry properties (org.freedesktop.DBus.Properties)."""

    def __init__(self, bluez, path, interfaces):
        self.bluez = bluez
        self.path = dbus.ObjectPath(path)
        self.interfaces = interfaces  # {interface: {name: typed D-Bus value}}
        super().__init__()

    def managed_interfaces(self):
        result = {INTROSPECTABLE: dbus.Dictionary({}, signature="sv"),
                  PROPERTIES: dbus.Dictionary({}, signature="sv")}
        for interface, props in self.interfaces.items():
            result[interface] = dbus.Dictionary(props, signature="sv")
        return dbus.Dictionary(result, signature="sa{sv}")

    def update(self, interface, always=False, **changes):
        """Sets properties and emits PropertiesChanged with those that changed."""
        props = self.interfaces[interface]
        changed = {}
        for name, value in changes.items():
            if always or name not in props or props[name] != value or type(props[name]) is not type(value):
                props[name] = value
                changed[name] = value
        if changed:
            self.PropertiesChanged(interface, dbus.Dictionary(changed, signature="sv"), string_array([]))

    def set_property(self, interface, name, value):
        """Writes a writable property; subclasses accept theirs."""
        raise dbus.DBusException("Property '%s' is not writable" % name,
                                 name="org.freedesktop.DBus.Error.PropertyReadOnly")

    def _props(self, interface):
        if interface not in self.interfaces:
            raise dbus.DBusException("No such interface '%s'" % interface,
                                     name="org.freedesktop.DBus.Error.InvalidArgs")
        return self.interfaces[interface]

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        props = self._props(interface)
        if name not in props:
            raise dbus.DBusException("No such property '%s'" % name,
                                     name="org.freedesktop.DBus.Error.InvalidArgs")
        return props[name]

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return dbus.Dictionary(self._props(interface), signature="sv")

    @dbus.service.method(PROPERTIES, in_signature="ssv", out_signature="")
    def Set(self, interface, name, value):
        props = self._props(interface)
        if name not in props:
            raise dbus.DBusException("No such property '%s'" % name,
                                     name="org.freedesktop.DBus.Error.InvalidArgs")
        self.set_property(interface, name, value)

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


class ObjectManager(dbus.service.Object):
    """The root object: GetManagedObjects and the InterfacesAdded/Removed signals."""

    def __init__(self, bus, verbose):
        super().__init__(bus, "/")
        self.bus = bus
        self.verbose = verbose
        self.objects = {}  # path -> PropertyObject

    def export(self, obj, announce=True):
        obj.add_to_connection(self.bus, obj.path)
        self.objects[obj.path] = obj
        log(self.verbose, "added", obj.path)
        if announce:
            self.InterfacesAdded(obj.path, obj.managed_interfaces())

    def unexport(self, obj):
        if self.objects.pop(obj.path, None) is None:
            return
        interfaces = list(obj.managed_interfaces().keys())
        self.InterfacesRemoved(obj.path, string_array(interfaces))
        obj.remove_from_connection()
        log(self.verbose, "removed", obj.path)

    def add_interface(self, obj, interface, props):
        obj.interfaces[interface] = props
        self.InterfacesAdded(obj.path, dbus.Dictionary(
            {interface: dbus.Dictionary(props, signature="sv")}, signature="sa{sv}"))

    def remove_interface(self, obj, interface):
        if obj.interfaces.pop(interface, None) is not None:
            self.InterfacesRemoved(obj.path, string_array([interface]))

    @dbus.service.method(OBJECT_MANAGER, in_signature="", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return dbus.Dictionary({path: obj.managed_interfaces() for path, obj in self.objects.items()},
                               signature="oa{sa{sv}}")

    @dbus.service.signal(OBJECT_MANAGER, signature="oa{sa{sv}}")
    def InterfacesAdded(self, path, interfaces):
        pass

    @dbus.service.signal(OBJECT_MANAGER, signature="oas")
    def InterfacesRemoved(self, path, interfaces):
        pass


# --------------------------------------------------------------------------------------------
# The simulated strap: what persists across connections and adapter removals


class HeartRateFrames:
    """Generated Heart Rate Measurement values: uint8 bpm cycling 60..180, contact detected,
    an RR interval every other frame (flags 0x16 / 0x06), so successive frames differ."""

    MALFORMED = [
        b"",                   # empty
        b"\x01\x50",           # uint16 bpm announced, one byte present
        b"\x10\x48",           # RR interval announced, none present
        b"\x08\x48\x01",       # energy expended announced, one byte present
        b"\x11\x50\x00\x01",   # uint16 bpm, RR announced with a dangling byte
    ]

    def __init__(self):
        self.index = 0

    def next(self):
        bpm = 60 + self.index % 121
        with_rr = self.index % 2 == 0
        self.index += 1
        if with_rr:
            rr = round(60.0 / bpm * 1024)
            return bytes([0x16, bpm, rr & 0xFF, rr >> 8])
        return bytes([0x06, bpm])

    def malformed(self, n):
        return self.MALFORMED[n % len(self.MALFORMED)]


class Strap:
    """One scenario device: its description, its counters and its frame generator."""

    DEFAULTS = {"name": None, "trusted": False, "paired": False, "discoverable": False, "location": 1,
                "manufacturer": "Polar Electro Oy", "model": "H10", "hardware": "39044024.10",
                "firmware": "5.0.0", "software": "3.0.0", "battery": None, "battery_gatt": None,
                "notify_acquired": False, "connect_failures": 0, "auto_stream_hz": 0, "rssi": -60,
                "adapter": None, "address_type": "public"}

    def __init__(self, description, default_adapter):
        unknown = set(description) - set(self.DEFAULTS) - {"address"}
        if unknown:
            raise ValueError("unknown device keys: %s" % ", ".join(sorted(unknown)))
        if "address" not in description:
            raise ValueError("device without address")
        self.config = dict(self.DEFAULTS)
        self.config.update(description)
        self.address = self.config["address"].upper()
        self.adapter_name = self.config["adapter"] or default_adapter
        self.known = bool(self.config["paired"] or self.config["trusted"])
        self.failures_left = int(self.config["connect_failures"])
        self.frames = HeartRateFrames()
        self.malformed_sent = 0
        self.counters = {"sent": 0, "dropped": 0, "connects": 0, "connect_calls": 0, "disconnects": 0,
                         "start_notify_calls": 0, "acquire_notify_calls": 0, "reads": 0}

    def path(self):
        return "/org/bluez/%s/dev_%s" % (self.adapter_name, self.address.replace(":", "_"))

    def visible_without_discovery(self):
        return self.known


# --------------------------------------------------------------------------------------------
# GATT objects


class GattService(PropertyObject):
    def __init__(self, bluez, device, handle, uuid):
        super().__init__(bluez, "%s/service%04x" % (device.path, handle), {GATT_SERVICE: {
            "UUID": dbus.String(full_uuid(uuid)), "Device": device.path, "Primary": dbus.Boolean(True),
            "Includes": dbus.Array([], signature="o"), "Handle": dbus.UInt16(handle)}})


class GattDescriptor(PropertyObject):
    def __init__(self, bluez, characteristic, handle, uuid):
        super().__init__(bluez, "%s/desc%04x" % (characteristic.path, handle), {GATT_DESCRIPTOR: {
            "UUID": dbus.String(full_uuid(uuid)), "Characteristic": characteristic.path,
            "Value": byte_array(b""), "Handle": dbus.UInt16(handle)}})

    @dbus.service.method(GATT_DESCRIPTOR, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        return byte_array(b"\x00\x00")


class GattCharacteristic(PropertyObject):
    """A remote characteristic: ReadValue, StartNotify/StopNotify, AcquireNotify."""

    def __init__(self, bluez, device, service, handle, uuid, flags, value=None, acquirable=False):
        props = {"UUID": dbus.String(full_uuid(uuid)), "Service": service.path, "Value": byte_array(b""),
                 "Flags": string_array(flags), "Notifying": dbus.Boolean(False),
                 "Handle": dbus.UInt16(handle), "MTU": dbus.UInt16(ATT_MTU)}
        if acquirable and "notify" in flags:
            props["NotifyAcquired"] = dbus.Boolean(False)
        super().__init__(bluez, "%s/char%04x" % (service.path, handle), {GATT_CHARACTERISTIC: props})
        self.device = device
        self.short_uuid = uuid
        self.flags = flags
        self.value = value
        self.notify_clients = set()  # bus names with a StartNotify session
        self.acquired = None  # our end of the AcquireNotify socket
        self.acquired_watch = None

    @property
    def subscribed(self):
        return self.acquired is not None or bool(self.notify_clients)

    def _require_connected(self):
        if not self.device.connected:
            raise BluezError("Failed", "Not connected")

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        self._require_connected()
        if "read" not in self.flags or self.value is None:
            raise BluezError("NotPermitted", "Read not permitted")
        self.device.strap.counters["reads"] += 1
        offset = int(options.get("offset", 0))
        if offset > len(self.value):
            raise BluezError("InvalidOffset", "Invalid offset")
        value = byte_array(self.value[offset:])
        self.update(GATT_CHARACTERISTIC, Value=value)
        return value

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="aya{sv}", out_signature="")
    def WriteValue(self, value, options):
        raise BluezError("NotPermitted", "Write not permitted")

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="", out_signature="", sender_keyword="sender")
    def StartNotify(self, sender=None):
        self._require_connected()
        if "notify" not in self.flags and "indicate" not in self.flags:
            raise BluezError("NotSupported", "Operation is not supported")
        if self.acquired is not None:
            raise BluezError("NotPermitted", "Notify acquired")
        if self.short_uuid == HEART_RATE_MEASUREMENT:
            self.device.strap.counters["start_notify_calls"] += 1
        if sender in self.notify_clients:
            return
        self.notify_clients.add(sender)
        self.update(GATT_CHARACTERISTIC, Notifying=dbus.Boolean(True))
        self.device.subscription_changed(self)

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="", out_signature="", sender_keyword="sender")
    def StopNotify(self, sender=None):
        if sender not in self.notify_clients:
            raise BluezError("Failed", "No notify session started")
        self.forget_client(sender)

    def forget_client(self, sender):
        if sender in self.notify_clients:
            self.notify_clients.discard(sender)
            if not self.subscribed:
                self.update(GATT_CHARACTERISTIC, Notifying=dbus.Boolean(False))
                self.device.subscription_changed(self)

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="a{sv}", out_signature="hq")
    def AcquireNotify(self, options):
        self._require_connected()
        if "NotifyAcquired" not in self.interfaces[GATT_CHARACTERISTIC]:
            raise BluezError("NotSupported", "Operation is not supported")
        if self.acquired is not None:
            raise BluezError("NotPermitted", "Notify acquired")
        if self.notify_clients:
            raise BluezError("InProgress", "Notify session in progress")
        if self.short_uuid == HEART_RATE_MEASUREMENT:
            self.device.strap.counters["acquire_notify_calls"] += 1
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setblocking(False)
        fd = dbus.types.UnixFd(theirs.fileno())  # duplicates the descriptor
        theirs.close()
        self.acquired = ours
        self.acquired_watch = GLib.io_add_watch(ours.fileno(), GLib.PRIORITY_DEFAULT,
                                                GLib.IO_HUP | GLib.IO_ERR, self._client_released)
        self.update(GATT_CHARACTERISTIC, NotifyAcquired=dbus.Boolean(True), Notifying=dbus.Boolean(True))
        self.device.subscription_changed(self)
        return fd, dbus.UInt16(ATT_MTU)

    def _client_released(self, fd, condition):
        self.acquired_watch = None
        self.release_acquired()
        return False

    def release_acquired(self):
        """Closes our end of the notify socket (the client sees HUP)."""
        if self.acquired is None:
            return
        if self.acquired_watch is not None:
            GLib.source_remove(self.acquired_watch)
            self.acquired_watch = None
        self.acquired.close()
        self.acquired = None
        self.update(GATT_CHARACTERISTIC, NotifyAcquired=dbus.Boolean(False))
        if not self.subscribed:
            self.update(GATT_CHARACTERISTIC, Notifying=dbus.Boolean(False))
            self.device.subscription_changed(self)

    def stop_all(self):
        """Disconnection: the socket closes and every notify session ends."""
        self.release_acquired()
        if self.notify_clients:
            self.notify_clients.clear()
            self.update(GATT_CHARACTERISTIC, Notifying=dbus.Boolean(False))
            self.device.subscription_changed(self)

    def deliver(self, value):
        """One notification: a send() on the acquired socket, else PropertiesChanged Value."""
        counters = self.device.strap.counters
        if self.acquired is not None:
            try:
                self.acquired.send(value)
            except BlockingIOError:
                counters["dropped"] += 1
                return False
            except OSError:
                self.release_acquired()
                return False
        elif self.notify_clients:
            self.update(GATT_CHARACTERISTIC, always=True, Value=byte_array(value))
        else:
            return False
        counters["sent"] += 1
        return True


# --------------------------------------------------------------------------------------------
# Adapter and device


class Stream:
    """Generated notifications at a rate, COUNT of them or until unsubscribed (count None)."""

    def __init__(self, device, hz, count, frames):
        self.device = device
        self.count = count
        self.frames = frames  # callable returning the next value
        self.sent = 0
        self.interval = 1.0 / hz
        self.next_due = time.monotonic() + self.interval
        self.source = GLib.timeout_add(max(1, int(self.interval * 1000)), self._tick)

    @property
    def remaining(self):
        return None if self.count is None else self.count - self.sent

    def _tick(self):
        self.source = None  # this timeout ends here; a new one is scheduled below
        now = time.monotonic()
        while self.next_due <= now + 0.001 and (self.count is None or self.sent < self.count):
            characteristic = self.device.heart_rate_characteristic()
            if characteristic is None or not characteristic.subscribed:
                self.stop()
                return False
            characteristic.deliver(self.frames())
            self.sent += 1
            self.next_due += self.interval
        if self.count is not None and self.sent >= self.count:
            self.stop()
            return False
        delay_ms = max(1, int((self.next_due - time.monotonic()) * 1000))
        self.source = GLib.timeout_add(delay_ms, self._tick)
        return False

    def stop(self):
        if self.source is not None:
            GLib.source_remove(self.source)
            self.source = None
        if self in self.device.streams:
            self.device.streams.remove(self)


class Device(PropertyObject):
    """org.bluez.Device1 for one strap on one adapter."""

    def __init__(self, bluez, adapter, strap):
        config = strap.config
        props = {"Address": dbus.String(strap.address), "AddressType": dbus.String(config["address_type"]),
                 "Alias": dbus.String(config["name"] or strap.address.replace(":", "-")),
                 "Paired": dbus.Boolean(bool(config["paired"])), "Bonded": dbus.Boolean(bool(config["paired"])),
                 "Trusted": dbus.Boolean(bool(config["trusted"])), "Blocked": dbus.Boolean(False),
                 "LegacyPairing": dbus.Boolean(False), "Connected": dbus.Boolean(False),
                 "ServicesResolved": dbus.Boolean(False), "UUIDs": string_array([full_uuid("180d")]),
                 "Adapter": adapter.path, "RSSI": dbus.Int16(int(config["rssi"])),
                 "Appearance": dbus.UInt16(0x0341)}
        if config["name"]:
            props["Name"] = dbus.String(config["name"])
        super().__init__(bluez, strap.path(), {DEVICE: props})
        self.adapter = adapter
        self.strap = strap
        self.connected = False
        self.connecting = None  # (reply, error) while a Connect is pending
        self.generation = 0  # bumps on every disconnect: pending connection steps check it
        self.gatt = []  # exported GATT objects, services first
        self.streams = []

    # -- D-Bus

    @dbus.service.method(DEVICE, in_signature="", out_signature="", async_callbacks=("reply", "error"))
    def Connect(self, reply, error):
        self.strap.counters["connect_calls"] += 1
        if not self.adapter.powered:
            return error(BluezError("NotReady", "Resource Not Ready"))
        if self.connecting is not None:
            return error(BluezError("InProgress", "In Progress"))
        if self.connected:
            return reply()
        if self.strap.failures_left > 0:
            self.strap.failures_left -= 1
            GLib.timeout_add(int(CONNECT_DELAY_S * 1000), self._aborted_link_up, error)
            return
        self.connecting = (reply, error)
        generation = self.generation
        GLib.timeout_add(int(CONNECT_DELAY_S * 1000), self._link_up, generation)

    @dbus.service.method(DEVICE, in_signature="", out_signature="")
    def Disconnect(self):
        self.disconnect()

    @dbus.service.method(DEVICE, in_signature="", out_signature="")
    def Pair(self):
        self.update(DEVICE, Paired=dbus.Boolean(True), Bonded=dbus.Boolean(True))
        self.strap.known = True

    def set_property(self, interface, name, value):
        if interface == DEVICE and name in ("Trusted", "Blocked"):
            self.update(DEVICE, **{name: dbus.Boolean(bool(value))})
            if name == "Trusted" and value:
                self.strap.known = True
        elif interface == DEVICE and name == "Alias":
            self.update(DEVICE, Alias=dbus.String(value))
        else:
            super().set_property(interface, name, value)

    # -- connection sequence

    def _aborted_link_up(self, error):
        """bluetoothd 5.62+: the link comes up, is torn down at once, then Connect fails."""
        self.update(DEVICE, Connected=dbus.Boolean(True))

        def link_down():
            self.update(DEVICE, Connected=dbus.Boolean(False))
            error(BluezError("Failed", "le-connection-abort-by-local"))
            return False
        GLib.timeout_add(20, link_down)
        return False

    def _link_up(self, generation):
        if generation != self.generation:
            return False
        self.connected = True
        self.update(DEVICE, Connected=dbus.Boolean(True))
        GLib.timeout_add(int(SERVICE_DISCOVERY_DELAY_S * 1000), self._services_resolved, generation)
        return False

    def _services_resolved(self, generation):
        if generation != self.generation:
            return False
        self._export_gatt()
        uuids = ["1800", "1801", "180a", "180d"] + (["180f"] if self.strap.config["battery_gatt"] is not None else [])
        self.update(DEVICE, UUIDs=string_array([full_uuid(u) for u in uuids]))
        self.update(DEVICE, ServicesResolved=dbus.Boolean(True))
        self.strap.counters["connects"] += 1
        if self.connecting is not None:
            reply, _ = self.connecting
            self.connecting = None
            reply()
        return False

    def _export_gatt(self):
        config = self.strap.config
        manager = self.bluez.manager
        acquirable = bool(config["notify_acquired"])
        objects = []
        heart_rate = GattService(self.bluez, self, 0x000a, "180d")
        measurement = GattCharacteristic(self.bluez, self, heart_rate, 0x000b, HEART_RATE_MEASUREMENT,
                                         ["notify"], acquirable=acquirable)
        objects += [heart_rate, measurement, GattDescriptor(self.bluez, measurement, 0x000d, "2902")]
        if config["location"] is not None:
            objects.append(GattCharacteristic(self.bluez, self, heart_rate, 0x000e, "2a38", ["read"],
                                              value=bytes([int(config["location"]) & 0xFF])))
        information = GattService(self.bluez, self, 0x0010, "180a")
        objects.append(information)
        handle = 0x0011
        for uuid, key in (("2a29", "manufacturer"), ("2a24", "model"), ("2a27", "hardware"),
                          ("2a26", "firmware"), ("2a28", "software")):
            if config[key] is not None:
                objects.append(GattCharacteristic(self.bluez, self, information, handle, uuid, ["read"],
                                                  value=str(config[key]).encode()))
            handle += 2
        if config["battery_gatt"] is not None:
            battery = GattService(self.bluez, self, 0x001b, "180f")
            level = GattCharacteristic(self.bluez, self, battery, 0x001c, "2a19", ["read", "notify"],
                                       value=bytes([int(config["battery_gatt"]) & 0xFF]), acquirable=acquirable)
            objects += [battery, level, GattDescriptor(self.bluez, level, 0x001e, "2902")]
        for obj in objects:
            manager.export(obj)
        self.gatt = objects
        if config["battery"] is not None:
            manager.add_interface(self, BATTERY, {"Percentage": dbus.Byte(int(config["battery"])),
                                                  "Source": dbus.String("org.bluez.Device1")})

    def disconnect(self):
        """Link loss or Disconnect: bluetoothd's order of events."""
        self.generation += 1
        was_connected = self.connected
        for stream in list(self.streams):
            stream.stop()
        for obj in self.gatt:
            if isinstance(obj, GattCharacteristic):
                obj.stop_all()
        for obj in reversed(self.gatt):
            self.bluez.manager.unexport(obj)
        self.gatt = []
        self.bluez.manager.remove_interface(self, BATTERY)
        self.update(DEVICE, ServicesResolved=dbus.Boolean(False))
        self.connected = False
        self.update(DEVICE, Connected=dbus.Boolean(False))
        if self.connecting is not None:
            _, error = self.connecting
            self.connecting = None
            error(BluezError("Failed", "le-connection-abort-by-local"))
        if was_connected:
            self.strap.counters["disconnects"] += 1

    # -- notifications

    def heart_rate_characteristic(self):
        for obj in self.gatt:
            if isinstance(obj, GattCharacteristic) and obj.short_uuid == HEART_RATE_MEASUREMENT:
                return obj
        return None

    def subscribed(self):
        characteristic = self.heart_rate_characteristic()
        return characteristic is not None and characteristic.subscribed

    def subscription_changed(self, characteristic):
        if characteristic.short_uuid != HEART_RATE_MEASUREMENT:
            return
        hz = float(self.strap.config["auto_stream_hz"] or 0)
        automatic = [s for s in self.streams if s.count is None]
        if characteristic.subscribed and hz > 0 and not automatic:
            self.streams.append(Stream(self, hz, None, self.strap.frames.next))
        elif not characteristic.subscribed:
            for stream in list(self.streams):
                stream.stop()

    def forget_client(self, name):
        for obj in self.gatt:
            if isinstance(obj, GattCharacteristic):
                obj.forget_client(name)


class Adapter(PropertyObject):
    """org.bluez.Adapter1: power and discovery."""

    def __init__(self, bluez, name, index):
        address = "00:AA:01:00:00:%02X" % index
        super().__init__(bluez, "/org/bluez/" + name, {ADAPTER: {
            "Address": dbus.String(address), "AddressType": dbus.String("public"),
            "Name": dbus.String("fake-" + name), "Alias": dbus.String("fake-" + name),
            "Class": dbus.UInt32(0), "Powered": dbus.Boolean(True), "PowerState": dbus.String("on"),
            "Discoverable": dbus.Boolean(False), "DiscoverableTimeout": dbus.UInt32(180),
            "Pairable": dbus.Boolean(True), "PairableTimeout": dbus.UInt32(0),
            "Discovering": dbus.Boolean(False), "UUIDs": string_array([]),
            "Modalias": dbus.String("usb:v1D6Bp0246d0542"), "Roles": string_array(["central", "peripheral"])}})
        self.name = name
        self.devices = {}  # address -> Device
        self.discovery_clients = set()
        self.filters = {}  # bus name -> filter
        self.advertising_source = None

    @property
    def powered(self):
        return bool(self.interfaces[ADAPTER]["Powered"])

    @property
    def discovering(self):
        return bool(self.interfaces[ADAPTER]["Discovering"])

    @dbus.service.method(ADAPTER, in_signature="a{sv}", out_signature="", sender_keyword="sender")
    def SetDiscoveryFilter(self, properties, sender=None):
        unknown = set(properties.keys()) - DISCOVERY_FILTER_KEYS
        if unknown:
            raise BluezError("InvalidArguments", "Invalid arguments in method call")
        self.bluez.stats["set_discovery_filter_calls"] += 1
        self.filters[sender] = plain(dbus.Dictionary(properties, signature="sv"))
        self.bluez.stats["discovery_filter"] = self.filters[sender]

    @dbus.service.method(ADAPTER, in_signature="", out_signature="as")
    def GetDiscoveryFilters(self):
        return string_array(sorted(DISCOVERY_FILTER_KEYS))

    @dbus.service.method(ADAPTER, in_signature="", out_signature="", sender_keyword="sender")
    def StartDiscovery(self, sender=None):
        self.bluez.stats["start_discovery_calls"] += 1
        if not self.powered:
            raise BluezError("NotReady", "Resource Not Ready")
        if sender in self.discovery_clients:
            raise BluezError("InProgress", "Operation already in progress")
        self.discovery_clients.add(sender)
        if not self.discovering:
            self.update(ADAPTER, Discovering=dbus.Boolean(True))
            GLib.timeout_add(50, self._advertise)
            self.advertising_source = GLib.timeout_add(int(ADVERTISING_INTERVAL_S * 1000), self._advertise)

    @dbus.service.method(ADAPTER, in_signature="", out_signature="", sender_keyword="sender")
    def StopDiscovery(self, sender=None):
        self.bluez.stats["stop_discovery_calls"] += 1
        if not self.powered:
            raise BluezError("NotReady", "Resource Not Ready")
        if sender not in self.discovery_clients:
            raise BluezError("Failed", "No discovery started")
        self.forget_client(sender)

    @dbus.service.method(ADAPTER, in_signature="o", out_signature="")
    def RemoveDevice(self, path):
        device = next((d for d in self.devices.values() if d.path == path), None)
        if device is None:
            raise BluezError("DoesNotExist", "Does Not Exist")
        device.disconnect()
        device.strap.known = False
        self.bluez.manager.unexport(device)
        del self.devices[device.strap.address]

    def set_property(self, interface, name, value):
        if interface == ADAPTER and name == "Powered":
            self.set_powered(bool(value))
        elif interface == ADAPTER and name in ("Discoverable", "Pairable"):
            self.update(ADAPTER, **{name: dbus.Boolean(bool(value))})
        elif interface == ADAPTER and name == "Alias":
            self.update(ADAPTER, Alias=dbus.String(value))
        else:
            super().set_property(interface, name, value)

    def forget_client(self, name):
        self.filters.pop(name, None)
        for device in self.devices.values():
            device.forget_client(name)
        if name in self.discovery_clients:
            self.discovery_clients.discard(name)
            if not self.discovery_clients:
                self.stop_discovering()

    def stop_discovering(self):
        self.discovery_clients.clear()
        if self.advertising_source is not None:
            GLib.source_remove(self.advertising_source)
            self.advertising_source = None
        self.update(ADAPTER, Discovering=dbus.Boolean(False))

    def set_powered(self, on):
        if on == self.powered:
            return
        if not on:
            for device in self.devices.values():
                if device.connected or device.connecting:
                    device.disconnect()
            if self.discovering:
                self.stop_discovering()
        self.update(ADAPTER, Powered=dbus.Boolean(on), PowerState=dbus.String("on" if on else "off"))

    def _advertise(self):
        """While discovering: unknown discoverable straps appear; the others' RSSI refreshes."""
        if not self.discovering:
            return False
        for strap in self.bluez.straps_on(self.name):
            device = self.devices.get(strap.address)
            if device is None and strap.config["discoverable"]:
                self.bluez.add_device(self, strap)
            elif device is not None and not device.connected:
                rssi = int(strap.config["rssi"]) + (1 if int(device.interfaces[DEVICE]["RSSI"]) == int(strap.config["rssi"]) else 0)
                device.update(DEVICE, RSSI=dbus.Int16(rssi))
        return True


# --------------------------------------------------------------------------------------------
# The whole daemon


class FakeBluez:
    def __init__(self, bus, scenario, verbose):
        self.bus = bus
        self.verbose = verbose
        self.manager = ObjectManager(bus, verbose)
        self.adapter_names = list(scenario.get("adapters") or ["hci0"])
        self.straps = [Strap(d, self.adapter_names[0]) for d in scenario.get("devices", [])]
        self.adapters = {}
        self.stats = {"discovery_filter": None, "start_discovery_calls": 0, "stop_discovery_calls": 0,
                      "set_discovery_filter_calls": 0}
        for name in self.adapter_names:
            self.add_adapter(name, announce=False)
        bus.add_signal_receiver(self._name_owner_changed, "NameOwnerChanged", "org.freedesktop.DBus",
                                "org.freedesktop.DBus", "/org/freedesktop/DBus")

    def _name_owner_changed(self, name, old, new):
        if name.startswith(":") and not new:
            for adapter in self.adapters.values():
                adapter.forget_client(name)

    def straps_on(self, adapter_name):
        return [s for s in self.straps if s.adapter_name == adapter_name]

    def add_adapter(self, name, announce=True):
        if name in self.adapters:
            raise ValueError("adapter %s exists" % name)
        adapter = Adapter(self, name, self.adapter_names.index(name) if name in self.adapter_names else len(self.adapters))
        self.adapters[name] = adapter
        self.manager.export(adapter, announce)
        for strap in self.straps_on(name):
            if strap.visible_without_discovery():
                self.add_device(adapter, strap, announce)
        return adapter

    def remove_adapter(self, name):
        adapter = self.adapters.pop(name, None)
        if adapter is None:
            raise ValueError("no adapter %s" % name)
        adapter.set_powered(False)
        for device in list(adapter.devices.values()):
            self.manager.unexport(device)
        adapter.devices.clear()
        self.manager.unexport(adapter)

    def add_device(self, adapter, strap, announce=True):
        device = Device(self, adapter, strap)
        adapter.devices[strap.address] = device
        self.manager.export(device, announce)
        return device

    def add_strap(self, description):
        strap = Strap(description, self.adapter_names[0])
        if any(s.address == strap.address for s in self.straps):
            raise ValueError("device %s exists" % strap.address)
        self.straps.append(strap)
        adapter = self.adapters.get(strap.adapter_name)
        if adapter is not None and (strap.visible_without_discovery() or
                                    (strap.config["discoverable"] and adapter.discovering)):
            self.add_device(adapter, strap)
        return strap

    def strap(self, address):
        address = address.upper()
        for strap in self.straps:
            if strap.address == address:
                return strap
        raise ValueError("no device %s" % address)

    def device(self, address):
        strap = self.strap(address)
        adapter = self.adapters.get(strap.adapter_name)
        device = adapter.devices.get(strap.address) if adapter else None
        if device is None:
            raise ValueError("device %s is not on the bus" % strap.address)
        return device

    def shutdown(self):
        for adapter in self.adapters.values():
            for device in adapter.devices.values():
                for obj in device.gatt:
                    if isinstance(obj, GattCharacteristic) and obj.acquired is not None:
                        obj.acquired.close()
                        obj.acquired = None


# --------------------------------------------------------------------------------------------
# Commands on stdin


class Console:
    """Reads commands (stdin, or a FIFO it holds open), answers each with one JSON line on stdout."""

    def __init__(self, bluez, loop, fd):
        self.bluez = bluez
        self.loop = loop
        self.buffer = b""
        GLib.io_add_watch(fd, GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP | GLib.IO_ERR, self._readable)

    def _readable(self, fd, condition):
        try:
            data = os.read(fd, 65536) if condition & GLib.IO_IN else b""
        except BlockingIOError:
            return True
        if not data:
            self.loop.quit()
            return False
        self.buffer += data
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            line = line.decode("utf-8", "replace").strip()
            if line:
                self.answer(self.run(line))
        return True

    @staticmethod
    def answer(result):
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()

    def run(self, line):
        verb, _, rest = line.partition(" ")
        handler = getattr(self, "cmd_" + verb.replace("-", "_"), None)
        if handler is None:
            return {"ok": False, "error": "unknown command: %s" % verb}
        try:
            result = handler(rest.strip())
        except (ValueError, KeyError, IndexError) as error:
            return {"ok": False, "error": str(error)}
        response = {"ok": True}
        response.update(result or {})
        return response

    def _subscribed_characteristic(self, address):
        device = self.bluez.device(address)
        characteristic = device.heart_rate_characteristic()
        if characteristic is None or not characteristic.subscribed:
            raise ValueError("%s is not subscribed" % device.strap.address)
        return device, characteristic

    def cmd_drop(self, args):
        device = self.bluez.device(args)
        if not device.connected and device.connecting is None:
            raise ValueError("%s is not connected" % device.strap.address)
        device.disconnect()

    def cmd_notify(self, args):
        address, hexvalue = args.split()
        value = bytes.fromhex(hexvalue)
        _, characteristic = self._subscribed_characteristic(address)
        return {"delivered": characteristic.deliver(value)}

    def cmd_stream(self, args):
        address, hz, count = args.split()
        hz, count = float(hz), int(count)
        if hz <= 0 or count < 0:
            raise ValueError("HZ must be > 0 and COUNT >= 0")
        device, _ = self._subscribed_characteristic(address)
        device.streams.append(Stream(device, hz, count, device.strap.frames.next))

    def cmd_malformed(self, args):
        address, n = args.split()
        device, characteristic = self._subscribed_characteristic(address)
        strap = device.strap
        for _ in range(int(n)):
            value = strap.frames.malformed(strap.malformed_sent)
            strap.malformed_sent += 1
            if not value and characteristic.acquired is not None:
                # An empty datagram reads as end of file on the socket: send the next kind.
                value = strap.frames.malformed(strap.malformed_sent)
                strap.malformed_sent += 1
            characteristic.deliver(value)

    def cmd_stats(self, args):
        stats = dict(self.bluez.stats)
        adapter = self.bluez.adapters.get(self.bluez.adapter_names[0])
        stats["discovering"] = bool(adapter and adapter.discovering)
        stats["powered"] = bool(adapter and adapter.powered)
        if args:
            strap = self.bluez.strap(args)
            stats.update(self._strap_stats(strap))
            return stats
        per_device = {s.address: self._strap_stats(s) for s in self.bluez.straps}
        for key in Strap(dict(address="00:00:00:00:00:00"), "hci0").counters:
            stats[key] = sum(d[key] for d in per_device.values())
        stats["subscribed"] = sum(1 for d in per_device.values() if d["subscribed"])
        stats["connected"] = sum(1 for d in per_device.values() if d["connected"])
        stats["devices"] = per_device
        return stats

    def _strap_stats(self, strap):
        result = dict(strap.counters)
        try:
            device = self.bluez.device(strap.address)
        except ValueError:
            device = None
        result["present"] = device is not None
        result["connected"] = bool(device and device.connected)
        result["subscribed"] = bool(device and device.subscribed())
        result["streaming"] = bool(device and device.streams)
        return result

    def cmd_power(self, args):
        if args not in ("on", "off"):
            raise ValueError("power on|off")
        for adapter in self.bluez.adapters.values():
            adapter.set_powered(args == "on")

    def cmd_remove_adapter(self, args):
        self.bluez.remove_adapter(args or self.bluez.adapter_names[0])

    def cmd_add_adapter(self, args):
        self.bluez.add_adapter(args or self.bluez.adapter_names[0])

    def cmd_add_device(self, args):
        try:
            description = json.loads(args)
        except json.JSONDecodeError as error:
            raise ValueError("add-device: bad JSON: %s" % error)
        strap = self.bluez.add_strap(description)
        return {"address": strap.address}

    def cmd_quit(self, args):
        self.loop.quit()


def main():
    parser = argparse.ArgumentParser(description="A fake bluetoothd for tests.")
    parser.add_argument("--address", required=True, help="D-Bus address of the (private) bus")
    parser.add_argument("--scenario", required=True, help="JSON file: adapters and devices")
    parser.add_argument("--commands", metavar="FIFO",
                        help="read commands from this FIFO (made if missing) instead of stdin; stdin is ignored")
    parser.add_argument("--verbose", action="store_true", help="log object changes on stderr")
    options = parser.parse_args()
    with open(options.scenario) as f:
        scenario = json.load(f)

    DBusGMainLoop(set_as_default=True)
    loop = GLib.MainLoop()
    bus = dbus.bus.BusConnection(options.address)
    bus.set_exit_on_disconnect(False)
    bus.call_on_disconnection(lambda _: loop.quit())
    bluez = FakeBluez(bus, scenario, options.verbose)

    owned = (dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER, dbus.bus.REQUEST_NAME_REPLY_ALREADY_OWNER)
    deadline = time.monotonic() + NAME_WAIT_S  # a previous instance may still be exiting
    while bus.request_name(BUS_NAME, dbus.bus.NAME_FLAG_DO_NOT_QUEUE) not in owned:
        if time.monotonic() > deadline:
            print("fake_bluez: %s is already owned" % BUS_NAME, file=sys.stderr)
            return 1
        time.sleep(0.05)

    def terminate():
        loop.quit()
        return False

    GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGTERM, terminate)
    GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGINT, terminate)
    if options.commands:
        if not os.path.exists(options.commands):
            os.mkfifo(options.commands)
        # Opened read-write: never blocks, and writers may come and go without an end of file.
        commands = os.open(options.commands, os.O_RDWR | os.O_NONBLOCK)
    else:
        commands = sys.stdin.fileno()
    Console(bluez, loop, commands)
    print("ready", flush=True)
    loop.run()

    bluez.shutdown()
    try:
        bus.release_name(BUS_NAME)
        bus.flush()
        bus.close()
    except dbus.DBusException:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
