"""Scenarios about links: drops, silences and bluetoothd restarts; the allowlist with a
neighbour's strap; links that end at a fixed age after a rejected parameter update; a strap
that needs bonding, paired before hrmd runs, while it runs, or between two of its runs.
Registered in `scenarios.SCENARIOS` by importing this module."""

from __future__ import annotations

import re
import time

import agent
import wire
from checks import (bluez_device_path, bluez_property, bluez_set_trusted, capture_caught_up, device_row, line_after,
                    lines_naming, sent_more, stored, strap_event, wait_device_row)
from scenarios import scenario
from stack import until
from straps import StrapSpec
from world import World, strap_address

# How long after connecting the fixed-age strap ends each link. hrmd notes links that streamed
# for 5 s or more; a real strap refused its update drops at about 30 s (hrmd then names the
# rejected update as the likely cause, for ages of 20 to 40 s). 10 s keeps the scenario short:
# the diagnosis is the same, its text names a fixed age instead.
FIXED_AGE_S = 10.0


def log_pattern(address: str, text: str) -> str:
    return rf"{re.escape(address)}: {text}"


@scenario("ble", "hci")
async def reconnect(world: World) -> None:
    """One strap is dropped, then goes out of range until its supervision timeout ends the link
    and hrmd has tried again in vain, then comes back; through bluetoothd, bluetoothd is also
    restarted under the live link. hrmd reconnects each time by itself, with one new link per
    reconnection, and every notification sent while subscribed is stored (only those sent while
    bluetoothd was away are excused)."""
    [strap] = await world.add_straps(1)
    address = strap.spec.address
    log = world.hrmd.process
    await world.hrmd.start(*world.sensor_arguments([address]))
    await world.hrmd.streaming(address, 60)
    await sent_more(strap, 12)

    # The strap ends its link, as one taken off and put back on does.
    since, events, began = len(log.lines), len(strap.events), time.monotonic()
    await strap.drop_link()
    await strap_event(strap, "disconnected 0x13", 10, events)
    await log.wait_for(log_pattern(address, "backing-off"), 30, since)
    world.figures["streaming_after_drop_s"] = round(await world.hrmd.streaming(address, 60, since) - began, 2)
    await sent_more(strap, 12)

    # Out of range: no answer until the supervision timeout ends the link on both sides; hrmd
    # tries again while the strap is away; it comes back and hrmd finds it.
    since, events = len(log.lines), len(strap.events)
    await strap.go_silent()
    went = time.time()
    timed_out = await strap_event(strap, "disconnected 0x08", 30, events)
    world.figures["supervision_timeout_s"] = round(timed_out - went, 2)
    after = await line_after(log, log_pattern(address, "backing-off"), 30, since)
    # bluetoothd knows the strap, so hrmd asks it to connect; without it, hrmd scans for it.
    attempt = await line_after(log, log_pattern(address, "(connecting|searching)"), 60, after)
    world.check(not log.find(log_pattern(address, "streaming"), since), "no streaming while the strap is out of range")
    began = time.monotonic()
    await strap.come_back()
    world.figures["streaming_after_coming_back_s"] = round(await world.hrmd.streaming(address, 90, attempt) - began, 2)
    await sent_more(strap, 12)
    links = 3

    if world.bluetoothd:
        since = len(log.lines)
        world.excuse(time.time())
        began = time.monotonic()
        await world.bluetoothd.restart()
        await log.wait_for(r"BlueZ: bluetoothd :\S+ has", 30, since)
        world.figures["streaming_after_bluetoothd_restart_s"] = round(await world.hrmd.streaming(address, 90, since) - began, 2)
        await sent_more(strap, 12)
        links += 1

    code, _ = await world.hrmd.stop()
    world.check(code == 0, "hrmd exits 0 on SIGTERM")
    world.figures["links"] = strap.connections
    world.check(strap.connections == links, f"one new link per reconnection ({links} in all)")
    await capture_caught_up(world)
    ended = [link.reason for link in wire.links_to(world.capture.local, world.index, address)]
    world.figures["links_ended_on_the_wire"] = [f"0x{reason:02x}" if reason is not None else None for reason in ended]
    world.check(len(ended) == links and ended[0] == 0x13 and ended[1] == 0x08,
                "on the wire: the drop ends the first link (0x13, remote user terminated), the silence the second"
                " (0x08, connection timeout)")
    samples = (await stored(world)).get(address, [])
    world.figures[address] = world.compare(strap, samples)
    world.check(True, "stored equals sent while subscribed, across the drop, the silence"
                + (" and the bluetoothd restart" if world.bluetoothd else ""))


@scenario("ble", "hci")
async def allowlist(world: World) -> None:
    """The allowlist with a neighbour's strap advertising Heart Rate beside the user's. Through
    bluetoothd, the trusted mode (`--sensor ble`): hrmd discovers, the user trusts their strap
    (Device1.Trusted, as `bluetoothctl trust` sets it) and hrmd takes it; the neighbour's,
    known to bluetoothd but not trusted, is never connected. Without bluetoothd, the listed
    mode (`--sensor ble:ADDRESS`): hrmd says once that it hears a strap it does not admit, and
    never connects it. Either way nothing of the neighbour's is stored or listed."""
    log = world.hrmd.process
    if world.bluetoothd:
        [mine] = await world.add_straps(1)
        neighbour = await world.add_strap(StrapSpec(address=strap_address(0x42), name="Neighbour HRM", first_bpm=150))
        address, other = mine.spec.address, neighbour.spec.address
        await world.hrmd.start("--sensor=ble")
        await log.wait_for(r"BlueZ: discovering heart-rate straps", 30)
        # Both straps advertise Heart Rate: discovery makes both known to bluetoothd.
        for strap in (mine, neighbour):
            await until(lambda s=strap: bluez_property(world, s.spec.address, "Address"), 60,
                        f"bluetoothd discovered {strap.spec.address}", every=0.5)
        world.check(not log.find(log_pattern(address, "connecting")), "no strap is connected before one is trusted")
        await bluez_set_trusted(world, address)
        await world.hrmd.streaming(address, 60)
        world.check(await bluez_property(world, other, "Trusted") == "boolean false", "the neighbour's strap stays untrusted")
    else:
        # The neighbour advertises first, alone: hrmd stops scanning once every listed strap is
        # connected, so the user's strap comes only once hrmd has said it heard the neighbour's.
        neighbour = await world.add_strap(StrapSpec(address=strap_address(0x42), name="Neighbour HRM", first_bpm=150))
        address, other = strap_address(1), neighbour.spec.address
        await world.hrmd.start(*world.sensor_arguments([address]))
        await log.wait_for(log_pattern(other, r"a heart-rate strap \(Neighbour HRM\) that is not admitted"), 60)
        [mine] = await world.add_straps(1)
        world.check(mine.spec.address == address, "the user's strap has the listed address")
        await world.hrmd.streaming(address, 60)
    await sent_more(mine, 20)
    code, _ = await world.hrmd.stop()
    world.check(code == 0, "hrmd exits 0 on SIGTERM")

    said = lines_naming(world, other)
    world.figures["log_lines_naming_the_neighbour"] = said
    if world.bluetoothd:
        world.check(not said, "hrmd says nothing of the neighbour's strap (bluetoothd's, not trusted)")
    else:
        world.check(len(said) == 1, "hrmd says once that it hears the neighbour's strap and does not admit it")
    world.check(neighbour.connections == 0, "the neighbour's strap was never connected")
    await capture_caught_up(world)
    world.check(not wire.links_to(world.capture.local, world.index, other), "the capture shows no link to the neighbour's strap")
    heart_rate, rr = await stored(world), await stored(world, "rr-interval")
    world.check(other not in heart_rate and other not in rr, "nothing of the neighbour's strap is stored")
    world.check(await device_row(world.store, other) is None, "hrmctl devices does not list the neighbour's strap")
    world.figures[address] = world.compare(mine, heart_rate.get(address, []))
    world.check(True, "the user's strap: stored equals sent while subscribed")


@scenario("ble", "hci")
async def fixed_age_drops(world: World) -> None:
    """A strap asks for connection parameters the host rejects (an L2CAP Connection Parameter
    Update Request answered `rejected`), then ends every link at the same age, as such straps do
    on Linux. After three links hrmd warns once, naming the fixed age and the remedy for its
    backend, and shows the diagnosis in `hrmctl devices`; nothing sent while subscribed is lost."""
    [strap] = await world.add_straps(1, rejected_update_drop_after=FIXED_AGE_S)
    address = strap.spec.address
    log = world.hrmd.process
    await world.hrmd.start(*world.sensor_arguments([address]))
    [(_, match)] = await log.wait_for(
        log_pattern(address, r"the last 3 links each ended about ([0-9.]+) s after streaming began: (.*)"),
        5 * FIXED_AGE_S + 90)
    world.figures["diagnosis"] = match.group(0)
    age = float(match.group(1))
    world.check(FIXED_AGE_S - 5 <= age <= FIXED_AGE_S, f"the diagnosis names the links' age ({age} s)")
    remedy = "main.conf" if world.bluetoothd else "conn_min_interval"
    world.check(remedy in match.group(2), f"the diagnosis names the remedy for {world.backend} ({remedy})")
    row = await wait_device_row(world.store, address, lambda r: "the last 3 links" in (r.get("stateDetail") or ""),
                                30, "shows the diagnosis")
    world.figures["devices_row"] = {key: row.get(key) for key in ("state", "stateDetail")}
    # Stopped while a link streams, not in the middle of a reconnection: what the capture shows
    # of the links' ends is then the strap's doing and hrmd's stop, not a connection attempt
    # that bluetoothd completes after hrmd's Disconnect was already answered.
    await world.hrmd.streaming(address, FIXED_AGE_S + 30, len(log.lines))
    code, _ = await world.hrmd.stop()
    world.check(code == 0, "hrmd exits 0 on SIGTERM")
    world.check(len(log.find(log_pattern(address, "the last 3 links"))) == 1, "the warning is given once")

    await capture_caught_up(world)
    refused = [text for _, text in strap.events if text.startswith("parameter update refused")]
    world.figures["links"] = strap.connections
    world.check(len(refused) >= 3, f"the strap's update was refused on every link ({len(refused)})")
    links = wire.links_to(world.capture.local, world.index, address)
    ended = [link for link in links if link.disconnected is not None and link.reason == 0x3B]
    world.check(len(ended) >= 3, f"the capture shows {len(ended)} links ended by the strap (0x3B)")
    for link in ended:
        updates = wire.parameter_updates(link)
        world.check(len(updates) == 1 and updates[0][1] == 1,
                    f"link 0x{link.handle:04x}: one Connection Parameter Update Request on the wire, answered rejected")
    world.figures["link_seconds"] = [round(link.disconnected - link.connected, 1) for link in ended]
    samples = (await stored(world)).get(address, [])
    world.figures[address] = world.compare(strap, samples)
    world.check(True, "stored equals sent while subscribed, on every link")


@scenario("ble", "hci")
async def bonding(world: World) -> None:
    """A strap whose Heart Rate Measurement CCCD needs an encrypted link. Through bluetoothd, as
    the README has it: the user pairs the strap once (an agent and Device1.Pair, as
    `bluetoothctl pair` does), then hrmd's links are encrypted and the notifications flow, and
    after a drop the bond encrypts the next link without pairing again. Without bluetoothd hrmd
    cannot pair: the CCCD write is refused on every attempt, hrmd says so (`the strap requires
    pairing ... the hci backend cannot pair`) and retries with backoff, storing nothing."""
    [strap] = await world.add_straps(1, needs_bonding=True)
    address = strap.spec.address
    log = world.hrmd.process
    if world.bluetoothd:
        await agent.discover(f"/org/bluez/hci{world.index}", bluez_device_path(world, address))
        world.figures["agent_requests"] = await agent.pair(bluez_device_path(world, address))
        world.check(await bluez_property(world, address, "Paired") == "boolean true", "bluetoothd paired the strap")
        await world.hrmd.start(*world.sensor_arguments([address]))
        await streams_on_the_bond(world, strap, since=0, paired_at=0.0)
        return

    await world.hrmd.start(*world.sensor_arguments([address]))
    [(_, first)] = await log.wait_for(log_pattern(address, r"backing-off \((.*)\)"), 60)
    world.figures["reason"] = first.group(1)
    world.check("requires pairing" in first.group(1) and "cannot pair" in first.group(1),
                "hrmd says the strap requires pairing, which the hci backend cannot do")
    await log.wait_for(log_pattern(address, r"backing-off"), 60, count=2)
    code, _ = await world.hrmd.stop()
    world.check(code == 0, "hrmd exits 0 on SIGTERM")
    world.check(not log.find(log_pattern(address, "streaming")), "the strap never streams")
    world.check(not strap.sent, "the strap never notified heart rate")
    await capture_caught_up(world)
    links = wire.links_to(world.capture.local, world.index, address)
    refusals = sum(len(wire.encryption_refusals(link)) for link in links)
    world.figures["wire"] = {"links": len(links), "refusals": refusals}
    world.check(refusals >= 2, f"each attempt: the CCCD write refused for want of encryption, on the wire ({refusals})")
    world.check(all(link.encrypted is None and not link.channel(wire.SMP) for link in links), "no link is paired or encrypted")
    world.check(not await stored(world), "nothing is stored")


async def streams_on_the_bond(world: World, strap, since: int, paired_at: float) -> None:
    """hrmd streams from the paired strap (after log line `since`), the strap drops its link,
    hrmd streams again; then the wire shows pairing once (after `paired_at`), heart rate only on
    encrypted links, the last link encrypted with the bond, and the store holds what was sent."""
    address = strap.spec.address
    log = world.hrmd.process
    await world.hrmd.streaming(address, 90, since)
    await sent_more(strap, 12)
    since, events = len(log.lines), len(strap.events)
    await strap.drop_link()
    await strap_event(strap, "disconnected", 10, events)
    await world.hrmd.streaming(address, 60, since)
    await sent_more(strap, 12)
    code, _ = await world.hrmd.stop()
    world.check(code == 0, "hrmd exits 0 on SIGTERM")

    await capture_caught_up(world)
    links = wire.links_to(world.capture.local, world.index, address)
    paired_on = [link for link in links if link.encrypted is not None
                 and any(f.time > paired_at for f in link.channel(wire.SMP))]
    world.check(len(paired_on) == 1, f"pairing (SMP) then encryption on the wire, once ({len(paired_on)})")
    streamed = [link for link in links if link.notifications(strap.measurement.handle)]
    world.figures["wire"] = {"links": len(links), "streamed": len(streamed),
                             "refusals": [len(wire.encryption_refusals(link)) for link in links]}
    world.check(len(streamed) >= 2, f"heart rate on two links at least ({len(streamed)})")
    world.check(all(link.encrypted is not None and all(n.time > link.encrypted for n in link.notifications(strap.measurement.handle))
                    for link in streamed), "heart rate is notified only on encrypted links, once encrypted")
    world.check(not streamed[-1].channel(wire.SMP), "the link after the drop is encrypted with the bond, without pairing again")
    samples = (await stored(world)).get(address, [])
    world.figures[address] = world.compare(strap, samples)
    world.check(True, "stored equals sent while subscribed, on both links")


# Only through bluetoothd: without it hrmd cannot pair at all (see `bonding`).
@scenario("ble")
async def pairing_later(world: World) -> None:
    """hrmd runs before the user has paired a strap that needs bonding (no agent: bluetoothd
    cannot confirm Just Works, so the CCCD write stays refused) and backs off, storing nothing;
    the user then pairs it while hrmd runs (an agent and Device1.Pair, as `bluetoothctl pair`
    does). hrmd must stream from it by itself within a minute, as after any other change."""
    [strap] = await world.add_straps(1, needs_bonding=True)
    address = strap.spec.address
    log = world.hrmd.process
    await world.hrmd.start(*world.sensor_arguments([address]))
    [(_, reason)] = await log.wait_for(log_pattern(address, r"backing-off \((.*)\)"), 90)
    world.figures["unpaired_reason"] = reason.group(1)
    world.check(not strap.sent, "unpaired: the strap never notifies heart rate")
    paired_at = time.time()
    since = len(log.lines)
    world.figures["agent_requests"] = await agent.pair(bluez_device_path(world, address))
    world.check(await bluez_property(world, address, "Paired") == "boolean true", "bluetoothd paired the strap")
    # bluetoothd held the CCCD write of hrmd's AcquireNotify, which hrmd gave up waiting for,
    # until the pairing: the strap then counts a subscription that no longer leads to hrmd, until
    # bluetoothd drops it. What it sends before hrmd streams again cannot reach hrmd.
    streaming = await world.hrmd.streaming(address, 60, since)
    world.excuse(paired_at, time.time() - (time.monotonic() - streaming))
    try:
        await streams_on_the_bond(world, strap, since, paired_at)
    finally:
        world.figures["reasons_after_pairing"] = sorted({m.group(1) for _, m in log.find(log_pattern(address, r"backing-off \((.*?); next"), since)})


# Only through bluetoothd, as `pairing-later`.
@scenario("ble", known_problem=(
    "bluetoothd 5.66 keeps Heart Rate Measurement marked as acquired for an AcquireNotify whose "
    "client left before the strap was paired, so a restarted hrmd is refused AcquireNotify and "
    "StartNotify until bluetoothd restarts; dropping the link does not clear it"))
async def pairing_after_restart(world: World) -> None:
    """As `pairing-later`, but the user stops hrmd before pairing (hrmd was waiting for bluetoothd
    to answer its AcquireNotify, whose CCCD write bluetoothd holds for want of encryption), pairs
    the strap, and starts hrmd again. hrmd must stream from it within 45 s."""
    [strap] = await world.add_straps(1, needs_bonding=True)
    address = strap.spec.address
    log = world.hrmd.process
    await world.hrmd.start(*world.sensor_arguments([address]))
    # bluetoothd tries to pair for the CCCD write, with no agent to confirm Just Works.
    await strap_event(strap, "pairing failed", 60)
    code, _ = await world.hrmd.stop()
    world.check(code == 0, "hrmd exits 0 on SIGTERM")
    paired_at = time.time()
    world.figures["agent_requests"] = await agent.pair(bluez_device_path(world, address))
    world.check(await bluez_property(world, address, "Paired") == "boolean true", "bluetoothd paired the strap")
    since = len(log.lines)
    await world.hrmd.start(*world.sensor_arguments([address]))
    try:
        await world.hrmd.streaming(address, 45, since)
    finally:
        world.figures["reasons_after_pairing"] = sorted({m.group(1) for _, m in log.find(log_pattern(address, r"backing-off \((.*?); next"), since)})
    await streams_on_the_bond(world, strap, since, paired_at)
