"""Runs the chosen scenarios inside the VM and writes one result file per scenario and backend.

Usage (in the VM, through vm-main): main.py [--vm=K/N] [SCENARIO[:BACKEND] ...]; none means all.
With --vm=K/N this VM is the K-th of N that run.py boots at once: it runs its share of the
chosen runs (`share`), and names its own logs (straps, dmesg, the bus) with `-vmK`.
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


def chosen(arguments: list[str], quiet: bool = False) -> list[tuple[str, str]]:
    runs = []
    for name, (_, backends) in SCENARIOS.items():
        if not arguments and name in KNOWN_PROBLEMS:
            if quiet:
                continue
            print(f"hrmd-vm: {name} not run unless named (a known problem: {KNOWN_PROBLEMS[name]})", flush=True)
            continue
        for backend in backends:
            if not arguments or any(a in (name, f"{name}:{backend}") for a in arguments):
                runs.append((name, backend))
    unknown = [a for a in arguments if a.split(":")[0] not in SCENARIOS]
    if unknown:
        raise SystemExit(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
    return runs


# Roughly how long each run takes (seconds, measured under TCG on a busy 2-core machine), to
# share the runs among the VMs evenly. A run not listed counts as DEFAULT_COST.
COSTS = {
    "one-strap": 30, "twenty-straps": 150, "reconnect": 60, "allowlist": 55, "fixed-age-drops": 75,
    "bonding": 45, "pairing-later": 90, "devices-and-battery": 75, "contact-and-rr": 42,
    "record-replay": 95, "vendor-stream": 75,
}
DEFAULT_COST = 40.0
# Scenarios whose runs (one per backend) go to the same VM, one after the other: twenty straps
# keep the emulation busy, and two such runs at once on a small machine starve both VMs.
TOGETHER = {"twenty-straps"}


def share(runs: list[tuple[str, str]], vm: int, vms: int) -> list[tuple[str, str]]:
    """The runs VM number `vm` (1-based) of `vms` takes: the longest first (the runs of a TOGETHER
    scenario as one), each to the VM with the least work so far, ties to the lower number, so that
    every VM computes the same split. Each VM keeps its runs in the suite's order."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for name, backend in runs:
        groups.setdefault(name if name in TOGETHER else f"{name}:{backend}", []).append((name, backend))
    cost = {key: sum(COSTS.get(name, DEFAULT_COST) for name, _ in group) for key, group in groups.items()}
    loads = [0.0] * vms
    owner: dict[tuple[str, str], int] = {}
    for key in sorted(groups, key=lambda k: -cost[k]):
        least = loads.index(min(loads))
        loads[least] += cost[key]
        for run in groups[key]:
            owner[run] = least
    return [run for run in runs if owner[run] == vm - 1]


async def main(arguments: list[str]) -> int:
    vm, vms = 1, 1
    if arguments and arguments[0].startswith("--vm="):
        vm, vms = (int(n) for n in arguments.pop(0).removeprefix("--vm=").split("/"))
    suffix = f"-vm{vm}" if vms > 1 else ""
    os.makedirs(OUT, exist_ok=True)
    logging.basicConfig(
        filename=f"{OUT}/straps{suffix}.log", level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if os.environ.get("HRMD_VM_DEBUG"):
        logging.getLogger("bumble.controller").setLevel(logging.DEBUG)
    await run("modprobe", "hci_vhci")
    bus = SystemBus(suffix)
    await bus.start()
    failures = 0
    if arguments == ["bench"]:
        from bench import benchmark
        runs, functions = [("bench", "ble")], {"bench": benchmark}
    else:
        runs, functions = chosen(arguments, quiet=vm > 1), {name: function for name, (function, _) in SCENARIOS.items()}
        runs = share(runs, vm, vms)
    # run.py counts the boot until this line, the scenarios from it.
    print(f"hrmd-vm: ready; {len(runs)} run(s) here", flush=True)
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
                result["phases"] = world.phases
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
    with open(f"{OUT}/dmesg{suffix}.log", "w") as file:
        file.write(await run("dmesg", check=False))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
