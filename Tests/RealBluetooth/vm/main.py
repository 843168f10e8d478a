"""Runs the chosen scenarios inside the VM and writes one result file per scenario and backend.

Usage (in the VM, through vm-main): main.py [SCENARIO[:BACKEND] ...]; none means all.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
import traceback

from scenarios import KNOWN_PROBLEMS, SCENARIOS
from stack import OUT, SystemBus, run
from world import World


def chosen(arguments: list[str]) -> list[tuple[str, str]]:
    runs = []
    for name, (_, backends) in SCENARIOS.items():
        if not arguments and name in KNOWN_PROBLEMS:
            print(f"hrmd-vm: {name} not run unless named (a known problem: {KNOWN_PROBLEMS[name]})", flush=True)
            continue
        for backend in backends:
            if not arguments or any(a in (name, f"{name}:{backend}") for a in arguments):
                runs.append((name, backend))
    unknown = [a for a in arguments if a.split(":")[0] not in SCENARIOS]
    if unknown:
        raise SystemExit(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
    return runs


async def main(arguments: list[str]) -> int:
    os.makedirs(OUT, exist_ok=True)
    logging.basicConfig(
        filename=f"{OUT}/straps.log", level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if os.environ.get("HRMD_VM_DEBUG"):
        logging.getLogger("bumble.controller").setLevel(logging.DEBUG)
    await run("modprobe", "hci_vhci")
    bus = SystemBus()
    await bus.start()
    failures = 0
    if arguments == ["bench"]:
        from bench import benchmark
        runs, functions = [("bench", "ble")], {"bench": benchmark}
    else:
        runs, functions = chosen(arguments), {name: function for name, (function, _) in SCENARIOS.items()}
    for name, backend in runs:
        function = functions[name]
        began = time.monotonic()
        result = {"scenario": name, "backend": backend}
        print(f"hrmd-vm: {name} ({backend}) ...", flush=True)
        try:
            world = World(bus, name, backend)
            try:
                async with world:
                    await function(world)
            finally:
                result["figures"] = world.figures
                result["checks"] = world.checks
            result["passed"] = True
        except Exception as error:
            failures += 1
            result["passed"] = False
            result["error"] = f"{error.__class__.__name__}: {error}"
            result["traceback"] = traceback.format_exc()
        result["seconds"] = round(time.monotonic() - began, 1)
        with open(f"{OUT}/{name}-{backend}.result.json", "w") as file:
            json.dump(result, file, indent=1)
        verdict = "ok" if result["passed"] else f"FAILED: {result['error']}"
        print(f"hrmd-vm: {name} ({backend}) {verdict} in {result['seconds']} s", flush=True)
    await bus.daemon.stop()
    with open(f"{OUT}/dmesg.log", "w") as file:
        file.write(await run("dmesg", check=False))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
