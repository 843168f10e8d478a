"""What the scenarios share: hrmctl as a user runs it, comparisons of what straps sent with
what a store holds, and bounded waits on the capture and on `hrmctl devices`.

Every wait is for an event and bounded: a log line, a strap event, a row of `hrmctl devices`,
a record in the capture.
"""

from __future__ import annotations

import asyncio
import re
import os
import shutil
import time
import types

import wire
from stack import BIN, devices, run, stored_samples
from world import World, stamp


async def hrmctl(*arguments: str, timeout: float = 120, check: bool = True) -> str:
    return await run(f"{BIN}/hrmctl", *arguments, timeout=timeout, check=check)


async def fresh_store(path: str) -> str:
    """A new store at `path` where hrmd's source may store every type."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    await hrmctl("auth", "grant", "hrmd", "all", "--store", path)
    return path


async def replay(path: str, store: str) -> str:
    """`hrmctl replay FILE` into a fresh `store`; returns its summary line."""
    await fresh_store(store)
    out = await hrmctl("replay", path, "--store", store, timeout=180)
    return next((line for line in out.splitlines() if line.startswith("replayed")), out.strip()[-200:])


def contact_of(value: bytes) -> bool | None:
    """The contact a Heart Rate Measurement reports: None when it does not support contact."""
    flags = value[0]
    if not flags & 0x04:
        return None
    return bool(flags & 0x02)


def compare_kept(world: World, strap, stored: list[dict], keep) -> dict:
    """`world.compare` over the notifications `keep(entry)` says hrmd stores (the others, such as
    those reporting no skin contact, must not be stored: one stored would match none and fail)."""
    view = types.SimpleNamespace(spec=strap.spec, events=strap.events, sent=[e for e in strap.sent if keep(e)])
    figures = world.compare(view, stored)
    figures["sent_not_stored_by_policy"] = len(strap.sent) - len(view.sent)
    return figures


def same_samples(live: list[dict], other: list[dict], tolerance: float) -> dict:
    """`other` holds the samples of `live`, one for one and in order, with the same type, value,
    unit, device identifier and metadata, starting within `tolerance` seconds of each; returns
    the counts and the largest time difference. Raises AssertionError naming the first that
    differs."""
    if len(live) != len(other):
        raise AssertionError(f"{len(live)} samples live, {len(other)} replayed")
    largest = 0.0
    for number, (a, b) in enumerate(zip(live, other)):
        for key in ("type", "value", "unit"):
            if a.get(key) != b.get(key):
                raise AssertionError(f"sample {number}: {key} {a.get(key)!r} live, {b.get(key)!r} replayed ({a['start']})")
        if (a.get("device") or {}).get("identifier") != (b.get("device") or {}).get("identifier"):
            raise AssertionError(f"sample {number}: device {a.get('device')} live, {b.get('device')} replayed")
        if a.get("metadata") != b.get("metadata") and not location_not_yet_read(a, b, other[:number]):
            raise AssertionError(f"sample {number}: metadata {a.get('metadata')} live, {b.get('metadata')} replayed")
        difference = abs(stamp(a["start"]) - stamp(b["start"]))
        if difference > tolerance:
            raise AssertionError(f"sample {number}: {a['value']} at {a['start']} live, at {b['start']} replayed")
        largest = max(largest, difference)
    return {"samples": len(live), "largest_time_difference_ms": round(1000 * largest, 1)}


def location_not_yet_read(live: dict, replayed: dict, replayed_before: list[dict]) -> bool:
    """Whether `replayed` differs from `live` only by lacking the body sensor location, before
    any earlier replayed sample of its device had one: the capture may show the strap's first
    notification ahead of the location's read response (hrmd, through bluetoothd, may know the
    location first), and a replay can place only what came before."""
    a, b = dict(live.get("metadata") or {}), dict(replayed.get("metadata") or {})
    if "sensorLocation" not in a or "sensorLocation" in b:
        return False
    a.pop("sensorLocation")
    device = (replayed.get("device") or {}).get("identifier")
    earlier = [s for s in replayed_before if (s.get("device") or {}).get("identifier") == device]
    return a == b and not any("sensorLocation" in (s.get("metadata") or {}) for s in earlier)


def flatten(by_device: dict[str, list[dict]]) -> list[dict]:
    return sorted((s for samples in by_device.values() for s in samples), key=lambda s: (s["start"], str(s.get("device"))))


async def device_row(store: str, identifier: str) -> dict | None:
    return next((row for row in await devices(store) if row.get("identifier") == identifier), None)


async def wait_device_row(store: str, identifier: str, predicate, timeout: float, what: str) -> dict:
    """Polls `hrmctl devices` (hrmd rewrites its rows every 5 s, and at once on a change of
    state) until `identifier`'s row satisfies `predicate`, bounded; returns the row."""
    deadline = time.monotonic() + timeout
    row = None
    while True:
        row = await device_row(store, identifier)
        if row is not None and predicate(row):
            return row
        if time.monotonic() >= deadline:
            raise TimeoutError(f"hrmctl devices: {identifier} {what} within {timeout:.0f} s (last row: {row})")
        await asyncio.sleep(1.0)


async def capture_caught_up(world: World, timeout: float = 30) -> None:
    """Waits (after hrmd stopped) until the capture shows the end of each strap's last link: the
    capture runs in a process of its own and may lag behind what hrmd has received, but the
    monitor channel gets each packet before the socket that reads it, and the capture writes
    records in order, so everything before the disconnection is in the file then."""
    deadline = time.monotonic() + timeout
    peers = [strap.spec.address for strap in world.straps]
    while not wire.settled(world.capture.local, world.index, peers):
        if time.monotonic() >= deadline:
            raise TimeoutError(f"the capture shows a link still open {timeout:.0f} s after hrmd stopped")
        await asyncio.sleep(0.2)


async def settled_capture(world: World, copy_to: str, timeout: float = 30) -> str:
    """A copy at `copy_to` of the capture once it has caught up (`capture_caught_up`)."""
    await capture_caught_up(world, timeout)
    shutil.copyfile(world.capture.local, copy_to)
    return copy_to


def lines_naming(world: World, text: str, since: int = 0) -> list[str]:
    return [line for _, line in world.hrmd.process.lines[since:] if text in line]


async def stored(world: World, kind: str = "heart-rate") -> dict[str, list[dict]]:
    return await stored_samples(world.store, kind)


async def sent_more(strap, count: int, timeout: float = 60) -> None:
    """Waits until `strap` has sent `count` more notifications while subscribed."""
    target = len(strap.sent) + count
    await strap.wait_for(lambda: len(strap.sent) >= target, timeout, f"{count} more notifications sent")


async def strap_event(strap, prefix: str, timeout: float, since: int = 0) -> float:
    """Waits for `strap`'s next event starting with `prefix` after its event number `since`;
    returns when it happened (wall clock)."""
    def found():
        return next((at for at, text in strap.events[since:] if text.startswith(prefix)), None)
    await strap.wait_for(lambda: found() is not None, timeout, f"event {prefix!r}")
    return found()


def bluez_device_path(world: World, address: str) -> str:
    return f"/org/bluez/hci{world.index}/dev_{address.upper().replace(':', '_')}"


async def bluez_property(world: World, address: str, name: str) -> str | None:
    """A Device1 property as dbus-send prints its value (`boolean true`, `string "..."`), or None
    while bluetoothd has no such device."""
    out = await run("dbus-send", "--system", "--print-reply", "--dest=org.bluez", bluez_device_path(world, address),
                    "org.freedesktop.DBus.Properties.Get", "string:org.bluez.Device1", f"string:{name}",
                    timeout=10, check=False)
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith("variant")]
    return lines[0].removeprefix("variant").strip() if lines else None


async def bluez_set_trusted(world: World, address: str) -> None:
    """What `bluetoothctl trust ADDRESS` does: Device1.Trusted = true."""
    await run("dbus-send", "--system", "--print-reply", "--dest=org.bluez", bluez_device_path(world, address),
              "org.freedesktop.DBus.Properties.Set", "string:org.bluez.Device1", "string:Trusted",
              "variant:boolean:true", timeout=10)


async def line_after(process, pattern: str, timeout: float, since: int = 0) -> int:
    """Waits for the next line of `process` after line `since` matching `pattern`; returns the
    number of the line after it (the `since` of the next wait)."""
    await process.wait_for(pattern, timeout, since)
    expression = re.compile(pattern)
    return next(number + 1 for number in range(since, len(process.lines)) if expression.search(process.lines[number][1]))
