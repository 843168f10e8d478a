"""Two gateways hearing the same ANT+ strap: one trace of broadcast pages replayed into one
gateway's store, the same frames 300 ms later (another receiver) into the other's; both sync at
once, and the central store holds each beat once, the second copy counted as already there."""

import calendar
import datetime
import json
import os

from sync_harness import SyncTest

DEVICE = "ant-4660"
BEATS = 60


def ant_message(data):
    """A broadcast data message (0x4E) on channel 0: A4, length, id, payload, XOR checksum."""
    frame = [0xA4, 9, 0x4E, 0] + list(data)
    checksum = 0
    for byte in frame:
        checksum ^= byte
    return bytes(frame + [checksum]).hex()


def write_trace(path, first, shift_ms=0):
    """BEATS beats a second apart, four page-0 messages per beat (as a strap sends them), the
    page toggle bit flipping every four messages; returns {frame time ms: packed stamp} of the
    frames where a new beat appears (the samples' starts)."""
    stamps = {}
    with open(path, "w") as trace:
        trace.write(json.dumps({"format": "hrmd-trace", "version": 1, "recorder": "test"}) + "\n")
        moment = first + datetime.timedelta(milliseconds=shift_ms)
        trace.write(json.dumps({"t": moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "transport": "ant",
                                "device": DEVICE, "kind": "connected"}) + "\n")
        for message in range(BEATS * 4):
            beat = message // 4 + 1
            event_time = (beat * 1024) & 0xFFFF
            toggle = 0x80 if (message // 4) % 2 else 0
            data = [toggle, 0xFF, 0xFF, 0xFF, event_time & 0xFF, event_time >> 8, beat & 0xFF, 60]
            moment = first + datetime.timedelta(milliseconds=message * 250 + shift_ms + 10)
            if message % 4 == 0:
                ms = calendar.timegm(moment.timetuple()) * 1000 + moment.microsecond // 1000
                stamps[ms] = (beat & 0xFF) << 16 | event_time
            trace.write(json.dumps({"t": moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "transport": "ant",
                                    "device": DEVICE, "kind": "notify", "value": ant_message(data)}) + "\n")
    return stamps


class ANTTest(SyncTest):
    def test_two_receivers_of_one_strap_store_each_beat_once(self):
        central = self.central()
        first = datetime.datetime.utcnow().replace(microsecond=0) - datetime.timedelta(minutes=10)
        stamps = {}
        gateways = []
        for number, shift in ((1, 0), (2, 300)):
            name = "gw%d" % number
            central.add_gateway_role(name)
            trace = os.path.join(self.work, "%s.trace.jsonl" % name)
            stamps.update(write_trace(trace, first, shift))
            gateway = self.gateway(name, central.url(name), sensors=["mock:id=%s-own,hz=4,seed=%d" % (name, number)])
            gateway.grant()
            replay = gateway.hrmctl("replay", "--store", gateway.store, trace)
            self.assertIn("%d samples stored" % BEATS, replay.stdout + replay.stderr)
            gateways.append(gateway)
        self.assertEqual(len(stamps), 2 * BEATS)
        for gateway in gateways:
            gateway.start()
        for gateway in gateways:
            gateway.wait_for_line("sync: connected")
        for gateway in gateways:
            self.caught_up(central, gateway)
        for gateway in gateways:
            self.assertEqual(gateway.stop(), 0)
        beats = [row for row in central.beats() if row[2] == DEVICE]
        self.assertEqual(len(beats), BEATS, "each beat once centrally")
        self.assertEqual(len({row[3] for row in beats}), BEATS)
        already = 0
        for gateway in gateways:
            line = gateway.wait_for_line("sync: stopped:")
            already += int(line.split(" already there")[0].rsplit(" ", 1)[1])
        self.assertEqual(already, BEATS, "the second receiver's copies counted as already there")

        def beat_of(device, start_ms):
            return stamps.get(start_ms) if device == DEVICE else None
        self.check(central, gateways, beat_of=beat_of, already_there=already)
