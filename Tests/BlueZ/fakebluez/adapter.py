"""org.bluez.Adapter1: power, discovery and the devices it knows."""

import dbus
import dbus.service
from gi.repository import GLib

from .bus import (ADAPTER, ADVERTISING_INTERVAL_S, DEVICE, DISCOVERY_FILTER_KEYS, BluezError, PropertyObject,
                  plain, string_array)


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
        self.rssi_jitter = 0

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
            GLib.timeout_add(50, lambda: self._advertise() and False)  # the first adverts, once
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
        self.rssi_jitter = 1 - self.rssi_jitter  # so that every advert changes RSSI
        for strap in self.bluez.straps_on(self.name):
            device = self.devices.get(strap.address)
            if device is None and strap.config["discoverable"]:
                self.bluez.add_device(self, strap)
            elif device is not None and not device.connected:
                device.update(DEVICE, RSSI=dbus.Int16(int(strap.config["rssi"]) - self.rssi_jitter))
        return True
