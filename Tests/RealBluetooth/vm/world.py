"""One scenario's world: btmon, a fresh virtual adapter (hciN), straps on the air, bluetoothd
when the backend is `ble`, and hrmd with its own store."""

from __future__ import annotations

import asyncio
import datetime
import os
import time

from stack import OUT, RUN, Bluetoothd, Capture, Hrmd, Process, SystemBus, power_on, stored_samples
from straps import Adapter, AirLink, Strap, StrapSpec


def strap_address(number: int) -> str:
    """Random static addresses (the two top bits set), one per strap: C0:FF:EE:00:00:01, ..."""
    return f"C0:FF:EE:00:{number >> 8:02X}:{number & 0xFF:02X}"


class World:
    def __init__(self, bus: SystemBus, name: str, backend: str):
        self.bus = bus
        self.name = name
        self.backend = backend
        self.label = f"{name}-{backend}"
        self.link = AirLink()
        self.adapter = Adapter(self.link)
        self.straps: list[Strap] = []
        self.capture = Capture(f"{OUT}/{self.label}.btsnoop")
        self.bluetoothd = Bluetoothd(bus, self.label) if backend == "ble" else None
        self.store = f"/tmp/{self.label}.sqlite"
        self.hrmd = Hrmd(self.label, self.store)
        # run.py's HRMD_VM_MONITOR: every message on the system bus, with its time, for reading
        # the order in which bluetoothd said things (it changes timings: not for figures).
        self.monitor = Process("dbus-monitor", f"{OUT}/{self.label}.dbus.log") if os.path.exists(f"{RUN}/monitor") else None
        self.figures: dict = {}
        self.checks: list[str] = []
        self.excused: list[tuple[float, float | None]] = []

    async def __aenter__(self) -> "World":
        for path in (self.store, self.store + "-wal", self.store + "-shm"):
            if os.path.exists(path):
                os.remove(path)
        await self.capture.start()
        before = set(os.listdir("/sys/class/bluetooth")) if os.path.isdir("/sys/class/bluetooth") else set()
        await self.adapter.open()
        self.index = await self._new_index(before)
        if self.monitor:
            await self.monitor.start("dbus-monitor", "--system")
        if self.bluetoothd:
            await self.bluetoothd.start()
        await power_on(self.index)
        return self

    async def _new_index(self, before: set[str]) -> int:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            names = set(os.listdir("/sys/class/bluetooth")) if os.path.isdir("/sys/class/bluetooth") else set()
            new = sorted(name for name in names - before if name.startswith("hci") and ":" not in name)
            if new:
                return int(new[0][3:])
            await asyncio.sleep(0.05)
        raise TimeoutError("the kernel made no hci device for /dev/vhci within 20 s")

    async def __aexit__(self, *exc) -> None:
        if self.hrmd.process.running:
            await self.hrmd.process.stop(30)
        for strap in self.straps:
            await strap.stop()
        if self.bluetoothd:
            await self.bluetoothd.stop()
        await self.adapter.close()
        await self.capture.stop()
        if self.monitor:
            await self.monitor.stop(10)

    async def add_strap(self, spec: StrapSpec) -> Strap:
        strap = Strap(spec, self.link)
        await strap.start()
        self.straps.append(strap)
        return strap

    async def add_straps(self, count: int, first: int = 1, **options) -> list[Strap]:
        specs = [StrapSpec(address=strap_address(first + n), name=f"Strap {first + n}",
                           first_bpm=60 + (n * 7) % 100, **options) for n in range(count)]
        return [await self.add_strap(spec) for spec in specs]

    def sensor_arguments(self, addresses: list[str], any_strap: bool = False) -> list[str]:
        """hrmd's --sensor flags for the straps by this world's backend."""
        if self.backend == "ble":
            arguments = [f"--sensor=ble:{address}" for address in addresses] or ["--sensor=ble"]
        else:
            arguments = [f"--sensor=hci:hci{self.index}"] + [f"--sensor=ble:{address}" for address in addresses]
        return arguments + (["--any-strap"] if any_strap else [])

    def check(self, condition: bool, text: str) -> None:
        """A named check: recorded when it holds, AssertionError when it does not."""
        if not condition:
            raise AssertionError(text)
        self.checks.append(text)

    async def stored(self) -> dict[str, list[dict]]:
        return await stored_samples(self.store)

    def excuse(self, start: float, end: float | None = None) -> None:
        """Notifications sent between `start` and `end` (wall clock; None: until each strap's
        next disconnection) may be missing: the stack was taken away under a live link (bluetoothd
        stopped, the adapter reset), so nobody could receive them."""
        self.excused.append((start, end))

    def _excused(self, strap: Strap, time_sent: float) -> bool:
        for start, end in self.excused:
            if end is None:
                end = next((at for at, text in strap.events if at >= start and text.startswith("disconnected")), float("inf"))
            if start <= time_sent <= end:
                return True
        return False

    def compare(self, strap: Strap, stored: list[dict]) -> dict:
        """Sent while subscribed against stored, sample by sample: each stored sample is the next
        one the strap sent (same bpm, stamped within `MATCH_WINDOW` of sending), in order, none
        twice; none sent is missing but those sent after hrmd was asked to stop (a backend that
        closes its link without unsubscribing may miss the last few) or in an excused window.
        The last few sent before the stop, after the last one stored, may also be missing when
        they were still on their way: sent within the largest latency seen (and a second) before
        hrmd was asked to stop, they had not reached hrmd when it stopped reading. Earlier ones
        have no such excuse: a later notification reached hrmd, so the link carried them.
        Returns the counts and the median and largest latency from sending to the stored
        timestamp. The window only pairs a stored sample with its notification: it is not a
        latency bound (twenty straps on an emulated CPU can take seconds to reach hrmd)."""
        until = self.hrmd.stop_requested_at
        position, delays, missing, excused_missing = 0, [], [], 0
        for sample in stored:
            at, bpm = stamp(sample["start"]), round(sample["value"])
            while position < len(strap.sent):
                entry = strap.sent[position]
                if entry.bpm == bpm and -0.5 <= at - entry.time <= MATCH_WINDOW:
                    break
                if until is not None and entry.time >= until or self._excused(strap, entry.time):
                    excused_missing += 1
                else:
                    missing.append(entry)
                position += 1
            else:
                raise AssertionError(f"{strap.spec.address}: stored {bpm} bpm at {sample['start']}, which it did not send then")
            delays.append(at - strap.sent[position].time)
            position += 1
        in_flight = until - (max(delays, default=0.0) + 1.0) if until is not None else None
        for entry in strap.sent[position:]:
            if until is not None and entry.time >= in_flight or self._excused(strap, entry.time):
                excused_missing += 1
            else:
                missing.append(entry)
        if missing:
            first = missing[0]
            raise AssertionError(
                f"{strap.spec.address}: {len(missing)} of {len(strap.sent)} notifications sent while subscribed "
                f"are not stored; the first: {first.bpm} bpm sent at {first.time:.3f}")
        delays.sort()
        return {"sent": len(strap.sent), "stored": len(stored), "lost": 0, "unreceivable": excused_missing,
                "median_latency_ms": round(1000 * delays[len(delays) // 2], 1) if delays else None,
                "max_latency_ms": round(1000 * delays[-1], 1) if delays else None}


# How far after its notification a stored sample may be stamped and still be paired with it.
MATCH_WINDOW = 10.0


def stamp(text: str) -> float:
    """Seconds since the epoch of an RFC 3339 UTC time with milliseconds, as hrmctl prints it."""
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
