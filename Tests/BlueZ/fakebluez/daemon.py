"""The whole fake: adapters and straps from the scenario, exported under one object manager."""

from gi.repository import GLib

from .adapter import Adapter
from .bus import ObjectManager
from .device import Device
from .gatt import GattCharacteristic
from .strap import Strap


class FakeBluez:
    """The scenario's adapters and straps, the object manager, the clients on the bus."""

    def __init__(self, bus, scenario, verbose):
        self.bus = bus
        self.verbose = verbose
        self.manager = ObjectManager(self, bus, verbose)
        self.adapter_names = list(scenario.get("adapters") or ["hci0"])
        self.straps = [Strap(d, self.adapter_names[0]) for d in scenario.get("devices", [])]
        self.adapters = {}
        self.stats = {"discovery_filter": None, "start_discovery_calls": 0, "stop_discovery_calls": 0,
                      "set_discovery_filter_calls": 0}
        self.held = []  # signals not sent yet (emitting callables), oldest first: see hold()
        for name in self.adapter_names:
            self.add_adapter(name, announce=False)
        bus.add_signal_receiver(self._name_owner_changed, "NameOwnerChanged", "org.freedesktop.DBus",
                                "org.freedesktop.DBus", "/org/freedesktop/DBus")

    def _name_owner_changed(self, name, old, new):
        if name.startswith(":") and not new:
            for adapter in self.adapters.values():
                adapter.forget_client(name)

    def hold(self, emit, for_s):
        """Holds a signal back as bluetoothd's gdbus holds its changes: `emit` runs at the latest
        `for_s` seconds from now, and before the fake answers any method call (gdbus sends every
        change it holds before each message it sends), whichever comes first."""
        self.held.append(emit)
        GLib.timeout_add(max(1, int(for_s * 1000)), self._flush_once)

    def _flush_once(self):
        self.flush()
        return False

    def flush(self):
        """Sends every held signal, oldest first."""
        held, self.held = self.held, []
        for emit in held:
            emit()

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
