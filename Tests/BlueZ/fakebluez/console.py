"""Commands, one a line, each answered with one JSON line on stdout."""

import json
import os
import sys

from gi.repository import GLib

from .strap import Stream, Strap


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
        for key in Strap.COUNTERS:
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
