#!/usr/bin/env python3
"""Checks that a waveform file hrmd wrote (Sources/WaveformFiles) reads back, through its
format's own reader, as exactly the samples it was written from, at their times.

    check_waveform_file.py --format edf|wfdb|csv|fhir FILE --expect EXPECT.json

FILE is the .edf, the WFDB record's .hea, the .csv or the FHIR Observation's .json. EXPECT.json
holds what was written:

    {"frequency": 130, "channels": ["ECG"], "unit": "uV", "exact": true,
     "segments": [{"start_ns": 1795000000123456789, "samples": [12, -7, ...]}, ...]}

with the samples of each segment interleaved by instant (x0 y0 z0 x1 ...). "unit" is optional;
"exact" (default true) says the writer stated an exact mapping, so every value must read back
equal; when false (EDF+ with samples beyond 16 bits) a value may be off by one digital step
of its channel. Times may be off by less than one sample period.

The readers:
- EDF+C: pyedflib (EDFlib), its header, signals and annotations; EDFlib checks that the data
  records' time-keeping annotations follow each other as EDF+C requires as it opens the file,
  and their onsets, which pyedflib does not return, are read here from the annotation signal.
- EDF+D: EDFlib (so pyedflib) refuses every discontinuous file by design, after checking its
  header; the refusal must be for that alone. Its samples, their times (from the records'
  time-keeping annotations) and its annotations are then read with Luna (lunapi), which
  supports EDF+D.
- In both, instants inside an annotation "No data (padding)" are padding, not samples.
- WFDB: wfdb.rdrecord (invalid samples as NaN), and each signal's checksum over its samples.
- CSV: the csv module. FHIR: fhir.resources (FHIR R4) validates the Observation, then its
  SampledData is read as the specification defines it.
Exits 0 when everything matches; otherwise prints one line saying what differs and exits 1.
"""

import argparse
import csv
import datetime
import json
import math
import os
import sys
from decimal import Decimal

# The annotation hrmd's EDF+ writer marks padded (no data) instants with.
EDF_PADDING = "No data (padding)"
EPOCH = datetime.datetime(1970, 1, 1)


class Mismatch(Exception):
    """What differs, in one line."""


def nanoseconds(moment):
    """A naive UTC datetime (or an aware one) as nanoseconds since the Unix epoch."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return (moment - EPOCH) // datetime.timedelta(microseconds=1) * 1000


def iso(ns):
    whole, rest = divmod(int(round(ns)), 1_000_000_000)
    return (EPOCH + datetime.timedelta(seconds=whole)).isoformat() + ".%09dZ" % rest


def expected_instants(expect):
    """[(time ns, (value per channel))] of every instant written."""
    frequency = float(expect["frequency"])
    channels = len(expect["channels"])
    instants = []
    for index, segment in enumerate(expect["segments"]):
        samples = segment["samples"]
        if len(samples) % channels:
            raise Mismatch("EXPECT segment %d: %d samples are not whole instants of %d channels" % (index, len(samples), channels))
        for instant in range(len(samples) // channels):
            time = segment["start_ns"] + round(instant * 1e9 / frequency)
            instants.append((time, tuple(samples[instant * channels:(instant + 1) * channels])))
    return instants


def compare(actual, expected, frequency, tolerances, channel_names):
    """Raises Mismatch at the first instant whose time or a value differs."""
    period = 1e9 / frequency
    for index, ((time, values), (want_time, want_values)) in enumerate(zip(actual, expected)):
        if abs(time - want_time) >= period:
            raise Mismatch("instant %d is at %s, not %s (off by %.3f ms, a sample period is %.3f ms)"
                           % (index, iso(time), iso(want_time), (time - want_time) / 1e6, period / 1e6))
        for channel, (value, want) in enumerate(zip(values, want_values)):
            if not abs(value - want) <= tolerances[channel]:
                raise Mismatch("instant %d (%s) channel %s reads %r, not %d%s"
                               % (index, iso(want_time), channel_names[channel], value, want,
                                  "" if tolerances[channel] == 0 else " (within %g)" % tolerances[channel]))
    if len(actual) != len(expected):
        raise Mismatch("the file holds %d instants, not %d" % (len(actual), len(expected)))


def matches_channel(name, channel):
    """A label names a channel when its last word is the channel's name (`ECG`, `Accel X`,
    `Accel_X` as Luna shows it)."""
    words = name.replace("_", " ").split()
    return bool(words) and words[-1].lower() == channel.lower()


def check_channels(names, expect, what):
    channels = expect["channels"]
    if len(names) != len(channels) or not all(matches_channel(n, c) for n, c in zip(names, channels)):
        raise Mismatch("the %s are %s, not the channels %s" % (what, names, channels))


# EDF+ ----------------------------------------------------------------------------------------

def edf_record_onsets(path):
    """Each data record's onset (ns after the header's start second), from the first TAL of its
    annotation signal, and the layout pyedflib reports otherwise."""
    with open(path, "rb") as file:
        raw = file.read()
    signals = int(raw[252:256].decode("ascii"))
    header_bytes = int(raw[184:192].decode("ascii"))
    records = int(raw[236:244].decode("ascii"))
    labels = [raw[256 + 16 * i:256 + 16 * (i + 1)].decode("ascii") for i in range(signals)]
    counts_at = 256 + signals * 216
    counts = [int(raw[counts_at + 8 * i:counts_at + 8 * (i + 1)].decode("ascii")) for i in range(signals)]
    annotation = labels.index("EDF Annotations ")
    record_size = 2 * sum(counts)
    offset = 2 * sum(counts[:annotation])
    onsets = []
    for record in range(records):
        start = header_bytes + record * record_size + offset
        tal = raw[start:start + 2 * counts[annotation]]
        onset = tal.split(b"\x14", 1)[0].decode("ascii")
        onsets.append(int(Decimal(onset) * 1_000_000_000))
    return raw[192:197].decode("ascii"), onsets


def read_edf(path, expect):
    import pyedflib

    try:
        reader = pyedflib.EdfReader(path)
    except Exception as error:  # EDFlib refuses files that break EDF+, and every EDF+D
        message = " ".join(str(error).split())
        if message.endswith("The file is discontinuous and cannot be read"):
            return read_edf_discontinuous(path, expect)
        raise Mismatch("pyedflib refuses %s: %s" % (os.path.basename(path), message))
    try:
        check_channels(reader.getSignalLabels(), expect, "signal labels")
        unit = expect.get("unit")
        frequency = float(expect["frequency"])
        tolerances = []
        for channel in range(reader.signals_in_file):
            if unit and reader.getPhysicalDimension(channel) != unit:
                raise Mismatch("signal %d's physical dimension is %r, not %r" % (channel, reader.getPhysicalDimension(channel), unit))
            if abs(reader.getSampleFrequency(channel) - frequency) > 1e-9 * frequency:
                raise Mismatch("signal %d is sampled at %r Hz, not %r" % (channel, reader.getSampleFrequency(channel), frequency))
            step = (reader.getPhysicalMaximum(channel) - reader.getPhysicalMinimum(channel)) / \
                (reader.getDigitalMaximum(channel) - reader.getDigitalMinimum(channel))
            tolerances.append(0 if expect.get("exact", True) else step * (1 + 1e-9))
        signals = [reader.readSignal(channel) for channel in range(reader.signals_in_file)]
        onsets, durations, texts = reader.readAnnotations()
        # The header's start second, then EDFlib's subsecond (the first record's onset, in
        # units of 100 ns; pyedflib 0.1.42's getStartdatetime() misreads it as 1 µs units).
        whole_second = nanoseconds(reader.getStartdatetime().replace(microsecond=0))
        start = whole_second + reader.starttime_subsecond * 100
        record_seconds = reader.datarecord_duration
        per_record = int(reader.getNSamples()[0] // reader.datarecords_in_file) if reader.datarecords_in_file else 0
    finally:
        reader.close()
    kind, record_onsets = edf_record_onsets(path)
    gaps = len(expect["segments"]) > 1
    if kind != ("EDF+D" if gaps else "EDF+C"):
        raise Mismatch("the file is %s, not %s" % (kind, "EDF+D (there are gaps)" if gaps else "EDF+C (one segment)"))
    if record_onsets and abs(whole_second + record_onsets[0] - start) >= 100:
        raise Mismatch("pyedflib's start %s is not the first record's onset %s" % (iso(start), iso(whole_second + record_onsets[0])))
    period = 1e9 / frequency
    # pyedflib gives annotation onsets from the start with its subsecond.
    padding = [(start + onset * 1e9, start + (onset + float(duration or 0)) * 1e9)
               for onset, duration, text in zip(onsets, durations, texts) if text == EDF_PADDING]
    instants = []
    for record, onset in enumerate(record_onsets):
        for position in range(per_record):
            time = whole_second + onset + position * record_seconds * 1e9 / per_record
            if any(first - period / 2 <= time < end - period / 2 for first, end in padding):
                continue
            index = record * per_record + position
            instants.append((time, tuple(float(signal[index]) for signal in signals)))
    return instants, tolerances


def read_edf_discontinuous(path, expect):
    """An EDF+D file's instants through Luna: each sample with its time from its record's
    onset, less those inside padding annotations."""
    import lunapi

    with open(path, "rb") as file:
        raw = file.read(256)
    if raw[192:197] != b"EDF+D":
        raise Mismatch("pyedflib calls the file discontinuous, but it is %r" % raw[192:197].decode("ascii", "replace"))
    if len(expect["segments"]) < 2:
        raise Mismatch("the file is EDF+D, not EDF+C (one segment)")
    # The start second (EDFlib has checked these fields): dd.mm.yy hh.mm.ss, 1985-2084.
    day, month, year = (int(part) for part in raw[168:176].decode("ascii").split("."))
    hour, minute, second = (int(part) for part in raw[176:184].decode("ascii").split("."))
    start = nanoseconds(datetime.datetime(year + (1900 if year >= 85 else 2000), month, day, hour, minute, second))
    project = lunapi.proj(verbose=False)
    project.silence(True)
    instance = project.inst("check")
    try:
        instance.attach_edf(path)
        headers = instance.headers()
        labels = list(headers["CH"])
        check_channels(labels, expect, "signal labels Luna reads")
        columns, matrix = instance.data(labels, time=True)
        annotations = instance.fetch_fulls_annots(["edf_annot"]) if "edf_annot" in set(instance.annots().get("Annotations", [])) else None
    except RuntimeError as error:
        raise Mismatch("Luna cannot read %s: %s" % (os.path.basename(path), " ".join(str(error).split())))
    frequency = float(expect["frequency"])
    unit = expect.get("unit")
    tolerances = []
    for _, row in headers.iterrows():
        if unit and row["PDIM"] != unit:
            raise Mismatch("signal %s's physical dimension is %r, not %r" % (row["CH"], row["PDIM"], unit))
        if abs(float(row["SR"]) - frequency) > 1e-9 * frequency:
            raise Mismatch("signal %s is sampled at %r Hz, not %r" % (row["CH"], row["SR"], frequency))
        step = (float(row["PMAX"]) - float(row["PMIN"])) / (float(row["DMAX"]) - float(row["DMIN"]))
        tolerances.append(0 if expect.get("exact", True) else step * (1 + 1e-9))
    period = 1e9 / frequency
    # Luna gives annotation times in seconds from the start second, to the millisecond, and
    # their text with every run of other characters than letters and digits as one "_".
    key = "".join(c for c in EDF_PADDING if c.isalnum())
    padding = [] if annotations is None else [
        (start + float(row["Start"]) * 1e9, start + float(row["Stop"]) * 1e9)
        for _, row in annotations.iterrows() if "".join(c for c in str(row["Instance"]) if c.isalnum()) == key]
    instants = []
    for row in matrix:
        time = start + float(row[0]) * 1e9
        if any(first - period / 2 <= time < end - period / 2 for first, end in padding):
            continue
        instants.append((time, tuple(float(value) for value in row[1:])))
    return instants, tolerances


# WFDB ----------------------------------------------------------------------------------------

def read_wfdb(path, expect):
    import wfdb

    base = path[:-4] if path.endswith(".hea") else path
    try:
        record = wfdb.rdrecord(base)
        digital = wfdb.rdrecord(base, physical=False)
    except Exception as error:
        raise Mismatch("wfdb refuses %s: %s" % (os.path.basename(path), " ".join(str(error).split())))
    check_channels(record.sig_name, expect, "signal descriptions")
    frequency = float(expect["frequency"])
    if abs(float(record.fs) - frequency) > 1e-9 * frequency:
        raise Mismatch("the record is sampled at %r Hz, not %r" % (record.fs, frequency))
    unit = expect.get("unit")
    if unit and any(u != unit for u in record.units):
        raise Mismatch("the units are %s, not %s" % (record.units, unit))
    for channel, checksum in enumerate(digital.checksum or []):
        total = int(digital.d_signal[:, channel].astype("int64").sum()) % 65536
        if total != checksum % 65536:
            raise Mismatch("signal %d's checksum is %d in the header, %d over its samples" % (channel, checksum, total))
    if record.base_datetime is None:
        raise Mismatch("the header has no base time and date")
    base_time = nanoseconds(record.base_datetime)
    instants = []
    for index, row in enumerate(record.p_signal):
        missing = [math.isnan(value) for value in row]
        if all(missing):
            continue
        if any(missing):
            raise Mismatch("sample %d is invalid in some signals only" % index)
        instants.append((base_time + index * 1e9 / float(record.fs), tuple(float(value) for value in row)))
    return instants, [0] * len(expect["channels"])


# CSV -----------------------------------------------------------------------------------------

def read_csv(path, expect):
    channels = expect["channels"]
    unit = expect.get("unit")
    with open(path, newline="") as file:
        rows = csv.reader(file)
        header = next(rows, None)
        want = ["time"] + ["%s_%s" % (c.lower(), unit.lower()) if unit else None for c in channels]
        if header is None or len(header) != len(want) or header[0] != "time" or \
                any(w is not None and h != w or not h.startswith(c.lower() + "_") for h, w, c in zip(header[1:], want[1:], channels)):
            raise Mismatch("the header is %s, not %s" % (header, want))
        instants = []
        for line, row in enumerate(rows, start=2):
            if len(row) != len(header):
                raise Mismatch("line %d has %d fields, not %d" % (line, len(row), len(header)))
            try:
                time = datetime.datetime.fromisoformat(row[0].replace("Z", "+00:00"))
                values = tuple(int(field) for field in row[1:])
            except ValueError as error:
                raise Mismatch("line %d: %s" % (line, error))
            if time.tzinfo is None or time.utcoffset() != datetime.timedelta(0):
                raise Mismatch("line %d: the time %s is not UTC" % (line, row[0]))
            instants.append((nanoseconds(time), values))
    return instants, [0] * len(channels)


# FHIR ----------------------------------------------------------------------------------------

def read_fhir(path, expect):
    from fhir.resources.observation import Observation

    with open(path) as file:
        text = file.read()
    try:
        if hasattr(Observation, "model_validate_json"):
            Observation.model_validate_json(text)
        else:
            Observation.parse_raw(text)
    except Exception as error:
        raise Mismatch("fhir.resources refuses the Observation: %s" % " ".join(str(error).split()))
    document = json.loads(text)
    if document.get("status") != "final":
        raise Mismatch("the status is %r, not final" % document.get("status"))
    channels = expect["channels"]
    if "valueSampledData" in document:
        series = [document["valueSampledData"]]
    else:
        components = document.get("component", [])
        # "Acceleration, X axis": the axis's name is the word before "axis".
        names = [" ".join(w for w in c.get("code", {}).get("text", "").replace(",", " ").split() if w != "axis") for c in components]
        check_channels(names, expect, "components' codes")
        series = [c.get("valueSampledData") for c in components]
        if any(s is None for s in series):
            raise Mismatch("a component has no valueSampledData")
    if len(series) != len(channels):
        raise Mismatch("the Observation has %d series, not %d" % (len(series), len(channels)))
    periods = {float(s["period"]) for s in series}
    if len(periods) != 1:
        raise Mismatch("the series have different periods: %s" % sorted(periods))
    period_ms = periods.pop()
    if abs(period_ms - 1000 / float(expect["frequency"])) > 1e-9 * period_ms:
        raise Mismatch("the period is %r ms, not 1000/%r" % (period_ms, expect["frequency"]))
    unit = expect.get("unit")
    ucum = {"uV": "uV", "mg": "m[g]"}.get(unit)
    for s in series:
        if s.get("dimensions") != 1:
            raise Mismatch("a series has %r dimensions, not 1" % s.get("dimensions"))
        if ucum and s["origin"].get("code") != ucum:
            raise Mismatch("the origin's UCUM code is %r, not %r" % (s["origin"].get("code"), ucum))
    tokens = [s.get("data", "").split(" ") for s in series]
    if len({len(t) for t in tokens}) != 1:
        raise Mismatch("the series have different lengths: %s" % [len(t) for t in tokens])
    start_text = document.get("effectivePeriod", {}).get("start")
    if not start_text:
        raise Mismatch("the Observation has no effectivePeriod.start")
    start = nanoseconds(datetime.datetime.fromisoformat(start_text.replace("Z", "+00:00")))
    instants = []
    for index, column in enumerate(zip(*tokens)):
        gap = [token == "E" for token in column]
        if all(gap):
            continue
        if any(gap):
            raise Mismatch("position %d is E in some series only" % index)
        values = tuple(float(s["origin"]["value"]) + float(s.get("factor", 1)) * float(Decimal(token)) for s, token in zip(series, column))
        instants.append((start + index * period_ms * 1e6, values))
    end_text = document.get("effectivePeriod", {}).get("end")
    if instants and end_text:
        end = nanoseconds(datetime.datetime.fromisoformat(end_text.replace("Z", "+00:00")))
        if abs(end - instants[-1][0]) >= period_ms * 1e6:
            raise Mismatch("effectivePeriod.end %s is not the last sample's time %s" % (end_text, iso(instants[-1][0])))
    return instants, [0] * len(channels)


READERS = {"edf": read_edf, "wfdb": read_wfdb, "csv": read_csv, "fhir": read_fhir}


def main(arguments=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--format", required=True, choices=sorted(READERS))
    parser.add_argument("file")
    parser.add_argument("--expect", required=True, help="EXPECT.json: frequency, channels and segments written")
    options = parser.parse_args(arguments)
    try:
        with open(options.expect) as file:
            expect = json.load(file)
        instants, tolerances = READERS[options.format](options.file, expect)
        compare(instants, expected_instants(expect), float(expect["frequency"]), tolerances, expect["channels"])
    except Mismatch as mismatch:
        print("%s: %s" % (options.file, mismatch))
        return 1
    except (OSError, ValueError, KeyError) as error:
        print("%s: %s" % (options.file, " ".join(str(error).split()) or type(error).__name__))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
