"""A minimal heart-rate logger on bleak: the Python peer hrmd is benchmarked against.

Usage:
    python bleak_logger.py --db FILE --seconds N [--acquire] ADDRESS...

It scans once until every address is seen, connects to all of them at once (BleakClient),
subscribes to Heart Rate Measurement (0x2A37) with start_notify (bleak's default, BlueZ's
StartNotify; with --acquire, AcquireNotify where the characteristic offers it), decodes the bpm of each
notification and inserts one row (time, address, bpm) into SQLite, committing once a second
like a sane logger. After N seconds of recording it unsubscribes, disconnects and prints one
JSON line: notifications received, rows stored, frames rejected as malformed, its own CPU
time (user + sys, for the whole run and for the recording window), peak RSS, and the bytes it
had made the kernel write to storage when the recording ended (write_bytes of /proc/self/io).

It talks to BlueZ on the system bus: point DBUS_SYSTEM_BUS_ADDRESS at a private bus with the
fake bluetoothd to run it without a radio (bench/run_ble_bench.sh does).
"""

import argparse
import asyncio
import json
import resource
import sqlite3
import sys
import time

from bleak import BleakClient, BleakScanner

HEART_RATE_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
COMMIT_INTERVAL_S = 1.0


def decode_bpm(value):
    """The bpm of a Heart Rate Measurement value, or None when it is malformed."""
    if len(value) < 2:
        return None
    flags = value[0]
    if flags & 0x01:
        return int.from_bytes(value[1:3], "little") if len(value) >= 3 else None
    return value[1]


def write_bytes():
    """What this process has made the kernel write to storage so far (/proc/self/io), or None."""
    try:
        with open("/proc/self/io") as io:
            for line in io:
                if line.startswith("write_bytes:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Store:
    """The readings table, written in batches."""

    def __init__(self, path):
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS readings (time REAL NOT NULL, address TEXT NOT NULL, "
                        "bpm INTEGER NOT NULL)")
        self.db.commit()
        self.pending = []

    def add(self, address, bpm):
        self.pending.append((time.time(), address, bpm))

    def commit(self):
        if self.pending:
            self.db.executemany("INSERT INTO readings (time, address, bpm) VALUES (?, ?, ?)", self.pending)
            self.db.commit()
            self.pending = []

    def count(self):
        return self.db.execute("SELECT count(*) FROM readings").fetchone()[0]


class Counters:
    def __init__(self, devices):
        self.notifications = 0
        self.rejected = 0
        self.disconnects = 0
        self.devices = devices
        self.subscribed = 0
        self.all_subscribed = asyncio.Event()

    def one_subscribed(self):
        self.subscribed += 1
        if self.subscribed == self.devices:
            self.all_subscribed.set()


async def find_devices(addresses, timeout):
    """One scan until every address has been seen."""
    wanted = {a.upper() for a in addresses}
    found = {}
    all_seen = asyncio.Event()

    def seen(device, advertisement):
        if device.address.upper() in wanted:
            found[device.address.upper()] = device
            if len(found) == len(wanted):
                all_seen.set()

    async with BleakScanner(detection_callback=seen):
        try:
            await asyncio.wait_for(all_seen.wait(), timeout)
        except asyncio.TimeoutError:
            pass
    missing = wanted - set(found)
    if missing:
        raise SystemExit("not found: " + ", ".join(sorted(missing)))
    return [found[a.upper()] for a in addresses]


async def record(device, store, counters, stop, acquire):
    def disconnected(client):
        counters.disconnects += 1

    def on_notification(characteristic, value):
        counters.notifications += 1
        bpm = decode_bpm(value)
        if bpm is None:
            counters.rejected += 1
        else:
            store.add(device.address, bpm)

    async with BleakClient(device, disconnected_callback=disconnected) as client:
        await client.start_notify(HEART_RATE_MEASUREMENT, on_notification, bluez={"use_start_notify": not acquire})
        counters.one_subscribed()
        await stop.wait()
        if client.is_connected:
            await client.stop_notify(HEART_RATE_MEASUREMENT)


async def commit_every_second(store, stop):
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), COMMIT_INTERVAL_S)
        except asyncio.TimeoutError:
            pass
        store.commit()


async def run(options):
    store = Store(options.db)
    devices = await find_devices(options.addresses, options.scan_timeout)
    counters = Counters(len(devices))
    stop = asyncio.Event()
    async with asyncio.TaskGroup() as group:
        for device in devices:
            group.create_task(record(device, store, counters, stop, options.acquire))
        group.create_task(commit_every_second(store, stop))
        try:
            await asyncio.wait_for(counters.all_subscribed.wait(), options.scan_timeout)
        except asyncio.TimeoutError:
            print("only %d of %d subscribed" % (counters.subscribed, len(devices)), file=sys.stderr)
        started = time.monotonic()
        cpu_at_start = cpu_seconds()
        notifications_at_start = counters.notifications
        await asyncio.sleep(options.seconds)
        written = write_bytes()
        stop.set()
    store.commit()
    return {
        "devices": len(devices),
        "subscribed": counters.subscribed,
        "seconds": round(time.monotonic() - started, 3),
        "notifications": counters.notifications,
        "notifications_recording": counters.notifications - notifications_at_start,
        "rejected": counters.rejected,
        "rows": store.count(),
        "disconnects": counters.disconnects,
        "cpu_recording_s": round(cpu_seconds() - cpu_at_start, 3),
        "cpu_total_s": round(cpu_seconds(), 3),
        "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "write_bytes": written,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="SQLite file to write")
    parser.add_argument("--seconds", type=float, default=60, help="how long to record")
    parser.add_argument("--scan-timeout", type=float, default=20, help="how long to look for the devices")
    parser.add_argument("--acquire", action="store_true", help="subscribe with AcquireNotify where offered")
    parser.add_argument("addresses", nargs="+", metavar="ADDRESS")
    options = parser.parse_args()
    print(json.dumps(asyncio.run(run(options))), flush=True)


if __name__ == "__main__":
    sys.exit(main())
