"""The scenarios: each runs in a fresh world against one backend and raises on a failed check.

A scenario returns nothing; it records its figures in `world.figures` and its passed checks in
`world.checks`. Backends: `ble` (hrmd through the real bluetoothd) and `hci` (hrmd on the
kernel's HCI and L2CAP sockets, no bluetoothd).
"""

from __future__ import annotations

import asyncio

from world import World

SCENARIOS = {}


def scenario(*backends: str):
    def register(function):
        SCENARIOS[function.__name__.replace("_", "-")] = (function, backends)
        return function
    return register


@scenario("ble", "hci")
async def one_strap(world: World) -> None:
    """One listed strap streams for a while: every notification sent while subscribed is stored,
    in order, and the body sensor location and device information are read."""
    [strap] = await world.add_straps(1)
    address = strap.spec.address
    await world.hrmd.start(*world.sensor_arguments([address]))
    await world.hrmd.streaming(address, 60)
    await strap.wait_for(lambda: len(strap.sent) >= 40, 60, "40 notifications sent")
    code, seconds = await world.hrmd.stop()
    world.figures["stop_seconds"] = round(seconds, 2)
    world.check(code == 0, "hrmd exits 0 on SIGTERM")
    stored = await world.stored()
    world.figures[address] = world.compare(strap, stored.get(address, []))
    world.check(True, "stored equals sent while subscribed")
