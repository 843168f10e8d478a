"""org.bluez.Device1: one strap seen by one adapter, its connection sequence and notifications."""

import dbus
import dbus.service
from gi.repository import GLib

from .bus import (BATTERY, CONNECT_DELAY_S, DEVICE, HEART_RATE_MEASUREMENT, SERVICE_DISCOVERY_DELAY_S,
                  BluezError, PropertyObject, full_uuid, string_array)
from .gatt import GattCharacteristic, GattDescriptor, GattService
from .strap import Stream


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

    def _answer_connect(self):
        """Connect's success reply, once (held signals go out first, as gdbus sends them)."""
        if self.connecting is not None:
            reply, _ = self.connecting
            self.connecting = None
            self.bluez.flush()
            reply()

    @dbus.service.method(DEVICE, in_signature="", out_signature="", async_callbacks=("reply", "error"))
    def Disconnect(self, reply, error):
        """The link goes down at once; the answer comes as disconnect_reply_after_s says: at once
        (0), that many seconds later, or never ("never"), like a bluetoothd that answers only
        once a strap out of range has acknowledged the end of the link."""
        self.strap.counters["disconnect_calls"] += 1
        self.disconnect()
        delay = self.strap.config["disconnect_reply_after_s"]
        if delay == "never":
            return
        if float(delay) <= 0:
            return reply()

        def late_reply():
            reply()
            return False
        GLib.timeout_add(max(1, int(float(delay) * 1000)), late_reply)

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
        self.strap.counters["reads_answered"] = 0  # of this link
        if self.strap.config["connected_unannounced"]:
            # bluetoothd 5.66 when the ATT socket's callback ran before the kernel's Device
            # Connected event: the device is connected, but Connected is never announced.
            self.interfaces[DEVICE]["Connected"] = dbus.Boolean(True)
        else:
            self.update(DEVICE, Connected=dbus.Boolean(True))
        if self.strap.config["connect_reply"] == "link":
            self._answer_connect()  # bluetoothd 5.66 (LE): the reply once the ATT channel is up
        GLib.timeout_add(int(SERVICE_DISCOVERY_DELAY_S * 1000), self._services_resolved, generation)
        return False

    def _services_resolved(self, generation):
        if generation != self.generation:
            return False
        late = float(self.strap.config["gatt_late_s"] or 0)
        self._export_gatt(late)
        uuids = ["1800", "1801", "180a", "180d"] + (["180f"] if self.strap.config["battery_gatt"] is not None else [])
        self.update(DEVICE, UUIDs=string_array([full_uuid(u) for u in uuids]))
        self.update(DEVICE, ServicesResolved=dbus.Boolean(True))
        self.strap.counters["connects"] += 1
        self._answer_connect()
        return False

    def _export_gatt(self, late=0.0):
        """Exports the GATT objects (and Battery1). With `late` > 0 their InterfacesAdded are
        held back (FakeBluez.hold) so that ServicesResolved goes out first, as bluetoothd's gdbus
        sends them when a message flushes its changes in the order it queued their objects;
        the services and characteristics whose short UUIDs gatt_early lists go out at once."""
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
        early = set(config["gatt_early"] or [])
        for obj in objects:
            held = late > 0 and getattr(obj, "short_uuid", None) not in early
            manager.export(obj, announce=not held)
            if held:
                self.bluez.hold(lambda obj=obj: manager.announce(obj) if obj in self.gatt else None, late)
        self.gatt = objects
        if config["battery"] is not None:
            manager.add_interface(self, BATTERY, {"Percentage": dbus.Byte(int(config["battery"])),
                                                  "Source": dbus.String("org.bluez.Device1")}, announce=late <= 0)
            if late > 0:
                self.bluez.hold(lambda: manager.announce_interface(self, BATTERY) if BATTERY in self.interfaces else None,
                                late)

    def disconnect(self):
        """Link loss or Disconnect: bluetoothd's order of events."""
        self.bluez.flush()  # what was held goes out before its objects are removed, as gdbus does
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
        if characteristic.subscribed:
            self.strap.counters["reads_answered_when_subscribed"] = self.strap.counters["reads_answered"]
        hz = float(self.strap.config["auto_stream_hz"] or 0)
        automatic = [s for s in self.streams if s.count is None]
        drop_after = float(self.strap.config["drop_after_s"] or 0)
        if characteristic.subscribed and hz > 0 and not automatic:
            self.streams.append(Stream(self, hz, None, self.strap.frames.next))
        elif not characteristic.subscribed:
            for stream in list(self.streams):
                stream.stop()
        if characteristic.subscribed and drop_after > 0:
            GLib.timeout_add(max(1, int(drop_after * 1000)), self._timed_drop, self.generation)

    def _timed_drop(self, generation):
        """drop_after_s: the strap ends each link that long after it was subscribed."""
        if generation == self.generation and self.connected:
            self.disconnect()
        return False

    def forget_client(self, name):
        for obj in self.gatt:
            if isinstance(obj, GattCharacteristic):
                obj.forget_client(name)
