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
                              disconnect_calls, start_notify_calls, acquire_notify_calls, reads,
                              subscribed, connected, discovering, discovery_filter,
                              start_discovery_calls, stop_discovery_calls, ...): for ADDR alone, else summed over the
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
                  "notify_acquired": true, "connect_failures": 0, "auto_stream_hz": 0,
                  "drop_after_s": 0, "disconnect_reply_after_s": 0, "connect_reply": "resolved",
                  "connected_unannounced": false, "gatt_late_s": 0, "gatt_early": [],
                  "read_delay_s": 0}]}

A paired or trusted device exists from the start; a discoverable unknown one appears only after
StartDiscovery. Connect sets Connected, about 100 ms later adds the GATT objects (Heart Rate
0x180d with 0x2a37 and 0x2a38, Device Information 0x180a, Battery 0x180f when battery_gatt is
set, org.bluez.Battery1 on the device when battery is set), sets ServicesResolved, then
replies, as bluetoothd does for LE. The first connect_failures Connect calls fail with
org.bluez.Error.Failed "le-connection-abort-by-local", after Connected went true then false
(the link bluetoothd made and aborted). Disconnect closes the acquired notify
socket, clears Notifying, removes the GATT objects, then clears ServicesResolved and Connected;
it answers at once, or disconnect_reply_after_s seconds later, or with "never" not at all (a
bluetoothd waiting for a strap out of range to acknowledge the end of the link).
With connect_reply "link" Connect answers as soon as Connected is set, before the services are
resolved (bluetoothd 5.66 for LE answers once the ATT channel is up). With connected_unannounced
the link comes up without a PropertiesChanged of Connected (Get and GetManagedObjects say true),
as 5.66 does when the kernel's Device Connected event comes after the ATT channel's callback
("Device ... is already connected"). With gatt_late_s > 0 the GATT objects' InterfacesAdded (and
Battery1's) are held back: ServicesResolved goes out first, and they follow gatt_late_s later or
before the fake answers any method call, whichever comes first, as bluetoothd's gdbus flushes
its held changes before each message it sends; gatt_early lists the short UUIDs of services and
characteristics announced at once all the same. With read_delay_s > 0 each ReadValue is answered
that long after it was asked (stats: reads_in_flight, most_reads_in_flight). Stats also count
the reads answered on the current link (reads_answered) and how many had been when Heart Rate
Measurement was last subscribed (reads_answered_when_subscribed).
With auto_stream_hz > 0 the strap streams generated measurements whenever it is subscribed.
With drop_after_s > 0 it ends every link that many seconds after it was subscribed (as `drop`
does), the way a strap whose connection-parameter update is rejected drops at the same age.

The objects live in the fakebluez package beside this file (bus plumbing, adapter, device,
GATT, strap, commands).
"""

import argparse
import json
import os
import signal
import sys
import time

import dbus
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

from fakebluez.bus import BUS_NAME, NAME_WAIT_S
from fakebluez.console import Console
from fakebluez.daemon import FakeBluez


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
    # A previous instance may still be exiting: asked again each time the name's owner changes
    # (the bus's NameOwnerChanged), until NAME_WAIT_S.
    owner_changed = bus.add_signal_receiver(lambda *_: None, "NameOwnerChanged", "org.freedesktop.DBus",
                                            arg0=BUS_NAME)
    context = GLib.MainContext.default()
    deadline = time.monotonic() + NAME_WAIT_S
    while bus.request_name(BUS_NAME, dbus.bus.NAME_FLAG_DO_NOT_QUEUE) not in owned:
        left = deadline - time.monotonic()
        if left <= 0:
            print("fake_bluez: %s is already owned" % BUS_NAME, file=sys.stderr)
            return 1
        alarm = GLib.timeout_source_new(max(1, int(left * 1000)))
        alarm.set_callback(lambda *_: False)
        alarm.attach(context)
        context.iteration(True)  # until a message (the owner's change) or the deadline
        alarm.destroy()
    owner_changed.remove()

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
