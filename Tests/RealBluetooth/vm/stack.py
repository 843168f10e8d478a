"""The VM's side of the real stack: the system bus, bluetoothd, btmon, and hrmd under test.

Every wait here is for an event (a log line, a bus name, a socket) and bounded; a bound that
passes raises TimeoutError naming what did not happen.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import time

RUN = "/run/hrmd-vm"
BIN = f"{RUN}/bin"
OUT = f"{RUN}/out"
BLUETOOTHD = "/usr/libexec/bluetooth/bluetoothd"
ENV = dict(os.environ, LD_LIBRARY_PATH=f"{RUN}/lib", HOME="/root")


async def run(*command: str, timeout: float = 60, check: bool = True) -> str:
    """Runs a command to its end (bounded) and returns its standard output."""
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=ENV)
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout)
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
        raise TimeoutError(f"{' '.join(command)} did not finish within {timeout:.0f} s")
    if check and process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {process.returncode}: {err.decode(errors='replace').strip()[-400:]}")
    return out.decode(errors="replace")


async def until(predicate, timeout: float, what: str, every: float = 0.05):
    """Polls a cheap local check (a file, a bus name) until it holds, bounded."""
    deadline = time.monotonic() + timeout
    while True:
        result = await predicate() if asyncio.iscoroutinefunction(predicate) else predicate()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{what} within {timeout:.0f} s")
        await asyncio.sleep(every)


class Process:
    """A long-running program whose output lines are kept and can be waited for."""

    def __init__(self, name: str, log_path: str | None = None):
        self.name = name
        self.lines: list[tuple[float, str]] = []
        self.process: asyncio.subprocess.Process | None = None
        self._grew = asyncio.Event()
        self._log = open(log_path, "a") if log_path else None
        self._reader: asyncio.Task | None = None

    async def start(self, *command: str, env=None) -> None:
        self.process = await asyncio.create_subprocess_exec(
            *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env or ENV)
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.process and self.process.stdout
        while line := await self.process.stdout.readline():
            text = line.decode(errors="replace").rstrip("\n")
            self.lines.append((time.monotonic(), text))
            if self._log:
                self._log.write(text + "\n")
                self._log.flush()
            self._grew.set()
        self._grew.set()

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    def find(self, pattern: str, since: int = 0) -> list[tuple[float, re.Match]]:
        expression = re.compile(pattern)
        return [(at, match) for at, text in self.lines[since:] if (match := expression.search(text))]

    async def wait_for(self, pattern: str, timeout: float, since: int = 0, count: int = 1) -> list[tuple[float, re.Match]]:
        """Waits until `count` lines after line `since` match `pattern`; returns them."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.find(pattern, since)
            if len(found) >= count:
                return found[:count]
            if self.process is not None and self.process.returncode is not None and self._reader and self._reader.done():
                raise RuntimeError(f"{self.name} exited ({self.process.returncode}) before {count} line(s) matched {pattern!r}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{self.name}: {count} line(s) matching {pattern!r} within {timeout:.0f} s "
                                   f"(saw {len(found)}){self._context(pattern)}")
            self._grew.clear()
            try:
                await asyncio.wait_for(self._grew.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    def _context(self, pattern: str) -> str:
        """The last lines naming what `pattern` waited for (its part before the last `: `), for a
        failure's message: what the process said about it instead."""
        subject = re.sub(r"\\(.)", r"\1", pattern.rpartition(": ")[0] or pattern)
        lines = [text for _, text in self.lines if subject in text][-4:] or [text for _, text in self.lines][-4:]
        return "".join(f"\n    | {text[:200]}" for text in lines)

    async def signal(self, number: int) -> None:
        if self.running:
            self.process.send_signal(number)

    async def wait(self, timeout: float) -> int:
        assert self.process
        try:
            code = await asyncio.wait_for(self.process.wait(), timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"{self.name} did not exit within {timeout:.0f} s")
        if self._reader:
            await asyncio.wait_for(self._reader, 10)
        return code

    async def stop(self, timeout: float = 10) -> int | None:
        """SIGTERM, then SIGKILL past `timeout`."""
        if not self.running:
            return self.process.returncode if self.process else None
        self.process.send_signal(signal.SIGTERM)
        try:
            return await self.wait(timeout)
        except TimeoutError:
            self.process.kill()
            return await self.wait(10)


class SystemBus:
    """The VM's system bus: Debian's dbus-daemon with its default policy."""

    SOCKET = "/run/dbus/system_bus_socket"

    def __init__(self):
        self.daemon = Process("dbus-daemon", f"{OUT}/dbus-daemon.log")

    async def start(self) -> None:
        os.makedirs("/run/dbus", exist_ok=True)
        await self.daemon.start("dbus-daemon", "--system", "--nofork", "--nopidfile", "--nosyslog")
        await until(lambda: os.path.exists(self.SOCKET), 20, "the system bus socket appeared")

    async def has_owner(self, name: str) -> bool:
        out = await run("dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                        "org.freedesktop.DBus.NameHasOwner", f"string:{name}", timeout=10)
        return "boolean true" in out


class Bluetoothd:
    """Debian's own bluetoothd, in the foreground, with its state directory emptied first."""

    def __init__(self, bus: SystemBus, label: str):
        self.bus = bus
        self.label = label
        self.process: Process | None = None
        self.starts = 0

    async def start(self, fresh: bool = True) -> None:
        if fresh:
            shutil.rmtree("/var/lib/bluetooth", ignore_errors=True)
            os.makedirs("/var/lib/bluetooth", mode=0o700, exist_ok=True)
        self.starts += 1
        self.process = Process("bluetoothd", f"{OUT}/{self.label}.bluetoothd.log")
        await self.process.start(BLUETOOTHD, "-n", "-d")
        await until(lambda: self.bus.has_owner("org.bluez"), 20, "bluetoothd took org.bluez")

    async def stop(self) -> None:
        if self.process:
            await self.process.stop(10)
            await until(lambda: self._gone(), 20, "org.bluez released")

    async def _gone(self) -> bool:
        return not await self.bus.has_owner("org.bluez")

    async def restart(self) -> None:
        await self.stop()
        await self.start(fresh=False)


class Capture:
    """The host interface of every controller, captured to a btsnoop file (capture.py, btmon's
    format), written in the VM's memory and copied out when it stops."""

    def __init__(self, path: str):
        self.path = path
        self.local = "/tmp/" + os.path.basename(path)
        self.process = Process("capture", path.replace(".btsnoop", ".capture.log"))

    async def start(self) -> None:
        here = os.path.dirname(os.path.abspath(__file__))
        await self.process.start("python3", os.path.join(here, "capture.py"), self.local)
        await until(lambda: os.path.exists(self.local) and os.path.getsize(self.local) >= 16, 20, "the capture began")

    async def stop(self) -> None:
        code = await self.process.stop(10)
        shutil.copyfile(self.local, self.path)
        if code != 0:
            raise RuntimeError(f"the capture ended with status {code}: {self.path} may be cut short")


async def power_on(index: int) -> None:
    """Powers the adapter on through the kernel's management interface (no bluetoothd needed)."""
    await run("btmgmt", "--index", str(index), "power", "on", timeout=20)


class Hrmd:
    """hrmd as a user runs it, with its log kept and its lines waited for."""

    def __init__(self, label: str, store: str):
        self.label = label
        self.store = store
        self.process = Process("hrmd", f"{OUT}/{label}.hrmd.log")
        self.started_at = 0.0
        self.stop_requested_at: float | None = None  # wall clock, as the straps stamp what they send

    async def start(self, *arguments: str) -> None:
        if not os.path.exists(self.store):
            await run(f"{BIN}/hrmctl", "auth", "grant", "hrmd", "all", "--store", self.store)
        self.started_at = time.monotonic()
        await self.process.start(f"{BIN}/hrmd", "--store", self.store, "--log-level", "info", *arguments)

    async def streaming(self, address: str, timeout: float, since: int = 0) -> float:
        """Waits for `address` to reach streaming; returns when it did (monotonic)."""
        [(at, _)] = await self.process.wait_for(rf"{re.escape(address)}: streaming", timeout, since)
        return at

    async def stop(self, timeout: float = 30) -> tuple[int, float]:
        """SIGTERM; returns the exit status and the seconds until hrmd exited."""
        began = time.monotonic()
        self.stop_requested_at = time.time()
        await self.process.signal(signal.SIGTERM)
        code = await self.process.wait(timeout)
        return code, time.monotonic() - began


async def stored_samples(store: str, kind: str = "heart-rate") -> dict[str, list[dict]]:
    """The samples in `store`, by device identifier, oldest first."""
    out = await run(f"{BIN}/hrmctl", "samples", "--store", store, "--type", kind, "--output", "json", timeout=60)
    by_device: dict[str, list[dict]] = {}
    for line in out.splitlines():
        if line.strip():
            sample = json.loads(line)
            by_device.setdefault((sample.get("device") or {}).get("identifier", "?"), []).append(sample)
    return by_device


async def devices(store: str) -> list[dict]:
    out = await run(f"{BIN}/hrmctl", "devices", "--store", store, "--output", "json", timeout=60)
    text = out.strip()
    if text.startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class CPUWindow:
    """CPU time spent in the VM between `start()` and `stop()`: the whole machine (both vCPUs)
    and each program by name, to tell hrmd's share from the emulated controller's."""

    TICK = os.sysconf("SC_CLK_TCK")

    @staticmethod
    def _machine() -> tuple[int, int]:
        with open("/proc/stat") as file:
            fields = [int(v) for v in file.readline().split()[1:]]
        idle = fields[3] + fields[4]
        return sum(fields), idle

    @staticmethod
    def _programs() -> dict[str, int]:
        ticks: dict[str, int] = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as file:
                    text = file.read()
                with open(f"/proc/{pid}/cmdline", "rb") as file:
                    argv = file.read().split(b"\0")
            except OSError:
                continue
            name = text[text.index("(") + 1:text.rindex(")")]
            if name.startswith("python") and len(argv) > 1:
                name = os.path.basename(argv[1].decode(errors="replace"))
            fields = text[text.rindex(")") + 2:].split()
            ticks[name] = ticks.get(name, 0) + int(fields[11]) + int(fields[12])
        return ticks

    def start(self) -> None:
        self.began = time.monotonic()
        self.machine = self._machine()
        self.programs = self._programs()

    def stop(self) -> dict:
        seconds = time.monotonic() - self.began
        total, idle = self._machine()
        busy = (total - self.machine[0]) - (idle - self.machine[1])
        programs = self._programs()
        shares = {name: round((ticks - self.programs.get(name, 0)) / self.TICK / seconds * 100, 1)
                  for name, ticks in programs.items() if ticks - self.programs.get(name, 0) > 0}
        return {"seconds": round(seconds, 1),
                "vm_busy_percent": round(100 * busy / max(1, total - self.machine[0]), 1),
                "percent_of_one_cpu": dict(sorted(shares.items(), key=lambda item: -item[1])[:6])}
