"""Scenarios about what is stored and shown: `hrmctl devices` states and battery, RR intervals
and skin contact, a recording (`--record`) and the run's capture replayed by `hrmctl replay`,
a vendor characteristic whose bytes look like heart rate. Registered in `scenarios.SCENARIOS`
by importing this module."""

from __future__ import annotations

import glob
import os
import shutil
import time

import wire
from checks import (capture_caught_up, compare_kept, contact_of, flatten, hrmctl, replay, same_samples, sent_more,
                    settled_capture, stored, wait_device_row)
from scenarios import scenario
from stack import OUT, stored_samples
from world import World, stamp

LOCATIONS = {0: "other", 1: "chest", 2: "wrist", 3: "finger", 4: "hand", 5: "earLobe", 6: "foot"}


@scenario("ble", "hci")
async def devices_and_battery(world: World) -> None:
    """`hrmctl devices` while hrmd runs: the strap's row shows it streaming, with its battery,
    body location (wrist, read from 0x2A38), transport and Device Information; a battery change
    the strap notifies shows; out of range the row leaves `streaming` and says why; back in
    range it streams again; after hrmd's stop the row says `stopped`."""
    [strap] = await world.add_straps(1, location=2, battery=87, serial="VH-0001", firmware="2.1.0")
    address = strap.spec.address
    store = world.store
    await world.hrmd.start(*world.sensor_arguments([address]))
    await world.hrmd.streaming(address, 60)
    row = await wait_device_row(store, address, lambda r: r.get("state") == "streaming" and r.get("battery") == 87
                                and r.get("location"), 30, "streaming, battery 87, a location")
    world.figures["streaming_row"] = row
    world.check(row.get("location") == LOCATIONS[strap.spec.location], f"location {row.get('location')}")
    world.check(row.get("transport") == "ble", "transport ble")
    world.check((row.get("manufacturer"), row.get("model"), row.get("firmwareVersion")) ==
                (strap.spec.manufacturer, strap.spec.model, strap.spec.firmware), "Device Information: manufacturer, model, firmware")

    began = time.monotonic()
    await strap.set_battery(55)
    row = await wait_device_row(store, address, lambda r: r.get("battery") == 55, 30, "battery 55")
    world.figures["battery_change_shown_after_s"] = round(time.monotonic() - began, 1)
    world.check(row.get("state") == "streaming", "the battery change shows while streaming")

    await strap.go_silent()
    row = await wait_device_row(store, address, lambda r: r.get("state") in ("backing-off", "connecting", "searching"),
                                30, "leaves streaming")
    world.figures["out_of_range_row"] = {key: row.get(key) for key in ("state", "stateDetail")}
    world.check(bool(row.get("stateDetail")) or row.get("state") != "backing-off", "backing-off says why")
    await strap.come_back()
    await wait_device_row(store, address, lambda r: r.get("state") == "streaming", 90, "streams again")
    await sent_more(strap, 8)

    code, _ = await world.hrmd.stop()
    world.check(code == 0, "hrmd exits 0 on SIGTERM")
    row = await wait_device_row(store, address, lambda r: True, 10, "is listed")
    world.figures["stopped_row"] = {key: row.get(key) for key in ("state", "stateDetail", "battery", "samples")}
    world.check(row.get("state") == "stopped", f"after hrmd's stop the row says stopped ({row.get('state')})")
    samples = (await stored(world)).get(address, [])
    rr = (await stored(world, "rr-interval")).get(address, [])
    world.check(row.get("samples") == len(samples) + len(rr),
                f"the row counts the stored samples ({row.get('samples')}: {len(samples)} heart rate, {len(rr)} RR)")
    world.figures[address] = world.compare(strap, samples)


@scenario("ble", "hci")
async def contact_and_rr(world: World) -> None:
    """RR intervals and skin contact. Each notification carries one RR interval; while the strap
    reports contact lost, hrmd stores neither its heart rate nor its RR interval (as documented:
    "contact supported, not detected" is skipped) and logs the first skip; every other
    notification gives one heart-rate sample (metadata sensorContact detected) and one RR
    interval ending at it, of the value sent."""
    [strap] = await world.add_straps(1)
    address = strap.spec.address
    await world.hrmd.start(*world.sensor_arguments([address]))
    await world.hrmd.streaming(address, 60)
    await sent_more(strap, 12)
    strap.set_contact(False)
    await sent_more(strap, 12)
    strap.set_contact(True)
    await sent_more(strap, 12)
    code, _ = await world.hrmd.stop()
    world.check(code == 0, "hrmd exits 0 on SIGTERM")

    heart_rate = (await stored(world)).get(address, [])
    world.figures["heart_rate"] = compare_kept(world, strap, heart_rate, lambda entry: contact_of(entry.value) is not False)
    lost = [entry for entry in strap.sent if contact_of(entry.value) is False]
    world.check(len(lost) >= 12, f"{len(lost)} notifications sent while subscribed reported no contact")
    world.check(True, "heart rate: stored equals sent, less those reporting no contact")
    world.check(all((s.get("metadata") or {}).get("sensorContact") == "detected" for s in heart_rate),
                "every stored sample says sensorContact detected")
    skips = world.hrmd.process.find(r"skipped a frame: contact not detected")
    world.check(len(skips) == 1, "the first skip for lost contact is logged, once")

    rr = (await stored(world, "rr-interval")).get(address, [])
    world.figures["rr_intervals"] = len(rr)
    world.check(len(rr) == len(heart_rate), f"one RR interval per stored heart-rate sample ({len(rr)}, {len(heart_rate)})")
    # Each stored sample is a notification sent; its RR interval is the one that notification carried.
    kept = {round(stamp(s["start"]), 3): s for s in heart_rate}
    for sample in rr:
        beat = kept.get(round(stamp(sample["end"]), 3))
        if beat is None:
            raise AssertionError(f"the RR interval ending at {sample['end']} ends at no stored beat")
        sent_ms = round(60 / beat["value"] * 1024) / 1024 * 1000
        if abs(sample["value"] - sent_ms) >= 0.01 or sample["unit"] != "ms":
            raise AssertionError(f"RR {sample['value']} {sample['unit']} at {sample['end']} is not the {sent_ms:.3f} ms sent")
    world.check(True, "every RR interval stored ends at its beat and is the one sent with it (1/1024 s, in ms)")


async def replay_matches(world: World, live: list[dict], replayed: list[dict], tolerance: float) -> dict:
    """`replayed` holds `live`, one for one; it may hold more only after hrmd was asked to stop
    (notifications that reached the host, not hrmd)."""
    extra = replayed[len(live):]
    stopped = world.hrmd.stop_requested_at or float("inf")
    world.check(all(stamp(s["start"]) >= stopped - tolerance for s in extra),
                f"the replay's {len(extra)} extra samples all came after hrmd's stop was asked for")
    figures = same_samples(live, replayed[:len(live)], tolerance)
    figures["extra_after_stop"] = len(extra)
    return figures


@scenario("ble", "hci")
async def record_replay(world: World) -> None:
    """`hrmd --record DIR` over two links (the strap drops once), then `hrmctl replay` of the
    recording into a fresh store gives exactly the same heart-rate and RR samples (times, values,
    devices, metadata); and `hrmctl replay` of the run's capture (the monitor channel, as
    `btmon -w` writes it) gives the same samples again, at the capture's times (within 2 s of
    hrmd's)."""
    [strap] = await world.add_straps(1)
    address = strap.spec.address
    traces = f"/tmp/{world.label}.traces"
    shutil.rmtree(traces, ignore_errors=True)
    os.makedirs(traces)
    log = world.hrmd.process
    await world.hrmd.start(*world.sensor_arguments([address]), f"--record={traces}")
    await world.hrmd.streaming(address, 60)
    await sent_more(strap, 16)
    since = len(log.lines)
    await strap.drop_link()
    await world.hrmd.streaming(address, 60, since)
    await sent_more(strap, 16)
    code, _ = await world.hrmd.stop()
    world.check(code == 0, "hrmd exits 0 on SIGTERM")

    live = {kind: flatten(await stored(world, kind)) for kind in ("heart-rate", "rr-interval")}
    world.figures[address] = world.compare(strap, [s for s in live["heart-rate"] if s["device"]["identifier"] == address])
    files = sorted(glob.glob(f"{traces}/*.trace.jsonl"))
    world.check(bool(files), f"hrmd wrote a trace ({len(files)} file(s))")
    os.makedirs(f"{OUT}/{world.label}.traces", exist_ok=True)
    for path in files:
        shutil.copy2(path, f"{OUT}/{world.label}.traces/")

    trace_store = f"/tmp/{world.label}.trace-replay.sqlite"
    for path in files:
        world.figures.setdefault("trace_replay", []).append(await replay_all(path, trace_store, fresh=path == files[0]))
    for kind in ("heart-rate", "rr-interval"):
        replayed = flatten(await stored_samples(trace_store, kind))
        world.check(replayed == live[kind], f"the recording replayed: the same {kind} samples ({len(replayed)} of {len(live[kind])})")
    # Into the live store, the recording stores nothing new: every sample is already there.
    again = [await hrmctl("replay", path, "--store", world.store, timeout=180) for path in files]
    world.figures["trace_replay_into_the_live_store"] = [out.strip().splitlines()[-1] for out in again]
    world.check(all(" 0 samples stored;" in f" {out}" for out in again), "the recording replayed into the live store stores nothing new")

    capture = await settled_capture(world, f"/tmp/{world.label}.settled.btsnoop")
    capture_store = f"/tmp/{world.label}.capture-replay.sqlite"
    world.figures["capture_replay"] = await replay(capture, capture_store)
    for kind in ("heart-rate", "rr-interval"):
        replayed = flatten(await stored_samples(capture_store, kind))
        world.figures[f"capture_{kind}"] = await replay_matches(world, live[kind], replayed, 2.0)
        world.check(True, f"the capture replayed: the same {kind} samples")


async def replay_all(path: str, store: str, fresh: bool) -> str:
    if fresh:
        return await replay(path, store)
    out = await hrmctl("replay", path, "--store", store, timeout=180)
    return out.strip().splitlines()[-1] if out.strip() else ""


@scenario("ble", "hci")
async def vendor_stream(world: World) -> None:
    """A strap with a vendor characteristic that notifies, on every link and unasked, bytes that
    decode as a heart-rate measurement (00 48: 72 bpm). They cross the air (the capture shows
    them on the vendor handle) but are never stored, live or from the capture: the store holds
    exactly the Heart Rate Measurements sent."""
    [strap] = await world.add_straps(1, vendor_stream=True)
    address = strap.spec.address
    await world.hrmd.start(*world.sensor_arguments([address]))
    await world.hrmd.streaming(address, 60)
    await sent_more(strap, 24)
    await strap.wait_for(lambda: strap.vendor_sent >= 24, 30, "24 vendor notifications")
    code, _ = await world.hrmd.stop()
    world.check(code == 0, "hrmd exits 0 on SIGTERM")

    await capture_caught_up(world)
    links = wire.links_to(world.capture.local, world.index, address)
    on_wire = sum(len(link.notifications(strap.vendor.handle)) for link in links)
    world.figures["vendor_notifications"] = {"sent": strap.vendor_sent, "on_the_wire": on_wire}
    world.check(on_wire >= 24, f"the vendor notifications reach the host ({on_wire} in the capture)")
    live = (await stored(world)).get(address, [])
    figures = world.compare(strap, live)
    world.figures[address] = figures
    world.check(figures["stored"] <= len(strap.sent), "no more samples stored than measurements sent")
    world.check(True, "stored equals the Heart Rate Measurements sent: no vendor bytes")
    capture = await settled_capture(world, f"/tmp/{world.label}.settled.btsnoop")
    store = f"/tmp/{world.label}.capture-replay.sqlite"
    world.figures["capture_replay"] = await replay(capture, store)
    replayed = flatten(await stored_samples(store, "heart-rate"))
    world.figures["capture_heart_rate"] = await replay_matches(world, live, replayed, 2.0)
    world.check(True, "the capture replayed: the same samples, no vendor bytes")
