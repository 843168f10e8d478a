"""GATT services, characteristics and descriptors of a connected strap."""

import socket

import dbus
import dbus.service
from gi.repository import GLib

from .bus import (ATT_MTU, GATT_CHARACTERISTIC, GATT_DESCRIPTOR, GATT_SERVICE, HEART_RATE_MEASUREMENT,
                  BluezError, PropertyObject, byte_array, full_uuid, string_array)


class GattService(PropertyObject):
    """A primary service, .../serviceHHHH."""

    def __init__(self, bluez, device, handle, uuid):
        super().__init__(bluez, "%s/service%04x" % (device.path, handle), {GATT_SERVICE: {
            "UUID": dbus.String(full_uuid(uuid)), "Device": device.path, "Primary": dbus.Boolean(True),
            "Includes": dbus.Array([], signature="o"), "Handle": dbus.UInt16(handle)}})
        self.short_uuid = uuid


class GattDescriptor(PropertyObject):
    """A descriptor (the Client Characteristic Configuration), .../charHHHH/descHHHH."""

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

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="a{sv}", out_signature="ay",
                         async_callbacks=("reply", "error"))
    def ReadValue(self, options, reply, error):
        """Answers at once, or read_delay_s later (a strap's answer crossing the air), when the
        reads in flight are counted: bluetoothd queues each on the link as it comes."""
        try:
            value = self._read(options)
        except dbus.DBusException as failure:
            return error(failure)
        counters = self.device.strap.counters
        delay = float(self.device.strap.config["read_delay_s"] or 0)
        if delay <= 0:
            counters["reads_answered"] += 1
            return reply(value)
        counters["reads_in_flight"] += 1
        counters["most_reads_in_flight"] = max(counters["most_reads_in_flight"], counters["reads_in_flight"])

        def answer():
            counters["reads_in_flight"] -= 1
            if self.device.connected:
                counters["reads_answered"] += 1
                reply(value)
            else:
                error(BluezError("Failed", "Not connected"))
            return False
        GLib.timeout_add(max(1, int(delay * 1000)), answer)

    def _read(self, options):
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
