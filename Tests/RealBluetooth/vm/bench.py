"""The BLE benchmark on the real stack: hrmd, the bleak logger and the C floor, each in turn
against the same twenty straps through the VM's bluetoothd, CPU per 1000 notifications.

Run by `main.py bench` (run.py --bench, make bench-ble-vm). Each client records for SECONDS
(HRMD_VM_BENCH_SECONDS, default 60) once every strap is subscribed; their figures go to
out/bench.json. The straps' own Python process is the emulated radio: its CPU is reported too,
so a reader can tell the clients' cost from the emulation's.
"""

from __future__ import annotations

import asyncio
import json
import os
import time

from stack import BIN, ENV, OUT, RUN, Process, run, stored_samples
from world import World

STRAPS = 20


def process_cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


async def bench_hrmd(world: World, straps, seconds: float) -> dict:
    await world.hrmd.start(*world.sensor_arguments([strap.spec.address for strap in straps]))
    for strap in straps:
        await world.hrmd.streaming(strap.spec.address, 120)
    subscribed = time.monotonic()
    emulation = own_cpu_seconds()
    await asyncio.sleep(seconds)
    cpu = process_cpu_seconds(world.hrmd.process.process.pid)
    emulation = own_cpu_seconds() - emulation
    code, stop_seconds = await world.hrmd.stop()
    stored = sum(len(samples) for samples in (await stored_samples(world.store)).values())
    sent = sum(len(strap.sent) for strap in straps)
    return {"client": "hrmd", "exit": code, "notifications_sent_in_all": sent, "samples_stored": stored,
            "cpu_s": round(cpu, 3), "cpu_ms_per_1000_notifications": round(1e6 * cpu / max(stored, 1), 1),
            "recorded_s": round(time.monotonic() - subscribed, 1), "stop_s": round(stop_seconds, 2),
            "emulation_cpu_s": round(emulation, 1)}


async def bench_client(name: str, command: list[str], seconds: float) -> dict:
    client = Process(name, f"{OUT}/bench-{name}.log")
    emulation = own_cpu_seconds()
    await client.start(*command, env=dict(ENV, PYTHONPATH="/opt/bumble"))
    try:
        code = await client.wait(seconds + 180)
    except TimeoutError:
        await client.stop(5)
        raise
    emulation = own_cpu_seconds() - emulation
    lines = [text for _, text in client.lines if text.startswith("{")]
    if code != 0 or not lines:
        raise RuntimeError(f"{name} exited {code}: {client.lines[-3:]}")
    figures = json.loads(lines[-1])
    received = figures["notifications"]
    cpu = figures.get("cpu_total_s") or figures.get("cpu_s")
    return {"client": name, "notifications_received": received, "cpu_s": cpu,
            "cpu_ms_per_1000_notifications": round(1e6 * cpu / max(received, 1), 1),
            "cpu_recording_ms_per_1000_notifications":
                round(1e6 * figures["cpu_recording_s"] / max(figures["notifications_recording"], 1), 1)
                if figures.get("cpu_recording_s") is not None and figures.get("notifications_recording") else None,
            "emulation_cpu_s": round(emulation, 1), "raw": figures}


async def benchmark(world: World) -> None:
    seconds = float(os.environ.get("HRMD_VM_BENCH_SECONDS", "60"))
    straps = await world.add_straps(STRAPS)
    addresses = [strap.spec.address for strap in straps]
    results = world.figures.setdefault("benchmark", [])
    results.append(await bench_hrmd(world, straps, seconds))
    for name, command in [
        ("bleak", ["python3", f"{RUN}/bench/bleak_logger.py", "--db", "/tmp/bleak.sqlite", "--seconds", str(seconds), *addresses]),
        ("floor", [f"{BIN}/floor_client", str(int(seconds))]),
    ]:
        try:
            results.append(await bench_client(name, command, seconds))
        except Exception as error:  # one peer failing still leaves the others' figures
            results.append({"client": name, "error": f"{error.__class__.__name__}: {error}",
                            "cpu_ms_per_1000_notifications": None})
    with open(f"{OUT}/bench.json", "w") as file:
        json.dump(results, file, indent=1)
    for result in results:
        print(f"hrmd-vm: bench {result['client']}: {result['cpu_ms_per_1000_notifications']} ms CPU per 1000 notifications",
              flush=True)
