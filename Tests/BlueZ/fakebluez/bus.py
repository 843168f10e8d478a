"""D-Bus plumbing: interface names, typed values, objects with properties, the object manager."""

import sys

import dbus
import dbus.service

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


class PropertyObject(dbus.service.Object):
    """An exported object whose interfaces carry properties (org.freedesktop.DBus.Properties)."""

    def __init__(self, bluez, path, interfaces):
        self.bluez = bluez
        self.path = dbus.ObjectPath(path)
        self.interfaces = interfaces  # {interface: {name: typed D-Bus value}}
        super().__init__()

    def _message_cb(self, connection, message):
        self.bluez.flush()  # held signals go out before any answer, as gdbus sends them
        super()._message_cb(connection, message)

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

    def __init__(self, bluez, bus, verbose):
        super().__init__(bus, "/")
        self.bluez = bluez
        self.bus = bus
        self.verbose = verbose
        self.objects = {}  # path -> PropertyObject

    def _message_cb(self, connection, message):
        self.bluez.flush()  # held signals go out before any answer, as gdbus sends them
        super()._message_cb(connection, message)

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

    def add_interface(self, obj, interface, props, announce=True):
        obj.interfaces[interface] = props
        if announce:
            self.announce_interface(obj, interface)

    def announce_interface(self, obj, interface):
        """InterfacesAdded for one interface of `obj` (added without announcing it)."""
        self.InterfacesAdded(obj.path, dbus.Dictionary(
            {interface: dbus.Dictionary(obj.interfaces[interface], signature="sv")}, signature="sa{sv}"))

    def announce(self, obj):
        """InterfacesAdded for `obj` (exported without announcing it)."""
        self.InterfacesAdded(obj.path, obj.managed_interfaces())

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
