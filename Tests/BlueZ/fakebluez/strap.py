"""The simulated strap: its description, counters and generated heart-rate values."""

import time

from gi.repository import GLib


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
                "adapter": None, "address_type": "public", "drop_after_s": 0, "disconnect_reply_after_s": 0,
                "connect_reply": "resolved", "connected_unannounced": False, "gatt_late_s": 0, "gatt_early": [],
                "read_delay_s": 0}
    COUNTERS = ("sent", "dropped", "connects", "connect_calls", "disconnects", "disconnect_calls",
                "start_notify_calls", "acquire_notify_calls", "reads", "reads_in_flight", "most_reads_in_flight",
                "reads_answered", "reads_answered_when_subscribed")

    def __init__(self, description, default_adapter):
        unknown = set(description) - set(self.DEFAULTS) - {"address"}
        if unknown:
            raise ValueError("unknown device keys: %s" % ", ".join(sorted(unknown)))
        if "address" not in description:
            raise ValueError("device without address")
        self.config = dict(self.DEFAULTS)
        self.config.update(description)
        self.address = self.config["address"].upper()
        reply_after = self.config["disconnect_reply_after_s"]
        if reply_after != "never" and not isinstance(reply_after, (int, float)):
            raise ValueError("disconnect_reply_after_s: seconds or \"never\", not %r" % (reply_after,))
        if self.config["connect_reply"] not in ("resolved", "link"):
            raise ValueError("connect_reply: \"resolved\" or \"link\", not %r" % (self.config["connect_reply"],))
        self.adapter_name = self.config["adapter"] or default_adapter
        self.known = bool(self.config["paired"] or self.config["trusted"])
        self.failures_left = int(self.config["connect_failures"])
        self.frames = HeartRateFrames()
        self.malformed_sent = 0
        self.counters = dict.fromkeys(self.COUNTERS, 0)

    def path(self):
        return "/org/bluez/%s/dev_%s" % (self.adapter_name, self.address.replace(":", "_"))

    def visible_without_discovery(self):
        return self.known


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
