#!/usr/bin/env python3
"""make bench-ecg: how small hrmd keeps an ECG, and how fast it hands a strip out.

Signals (µV integers at 130 Hz, the Polar H10's rate): an hour of neurokit2's simulated ECG
(`ecg_simulate(duration=3600, sampling_rate=130, heart_rate=70, noise=0.01)`), and the real
ECG scipy ships (MIT-BIH record 208, 360 Hz, five minutes), resampled to 130 Hz. Each is made
into PMD frames as an H10 sends them (73 samples, raw) in an hrmd trace and replayed into an
empty store with `hrmctl replay` (release); then, in the same run:

- **Size**: the store's waveform chunks, beside the `flac` command over the same integers as
  16-bit PCM (default level, and -8; its file, and its audio frames alone, without the
  metadata and padding a .flac carries), and beside the table a user's logger would write
  (one SQLite row of time and µV per sample, after VACUUM).
- **Lossless**: `hrmctl ecg export --format csv` gives back every value.
- **A 30-second strip from the API**: `GET /api/v1/waveforms/samples` of 30 s (hrmd's HTTP
  front, keep-alive, 200 requests: median and p99), beside the peer: the same 30 s read from
  the user's table with Python's sqlite3 and made into the same JSON.
- **An hour's export**: `hrmctl ecg export --format csv` of the whole hour, its time and peak
  RSS beside a 30-second export's.
"""

import argparse
import http.client
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

RATE = 130
FRAME = 73
DEVICE = "AA:BB:CC:DD:EE:F0"
POLAR_EPOCH_UNIX_S = 946_684_800
START_UNIX_S = 1_795_000_000


def binary(name):
    return os.path.join(os.environ.get("HRMD_BIN_DIR", ".build/release"), name)


def run(*arguments, **options):
    done = subprocess.run(list(arguments), capture_output=True, text=True, timeout=1800, **options)
    if done.returncode != 0:
        sys.exit("%s failed: %s" % (" ".join(arguments[:3]), done.stderr.strip()))
    return done.stdout


def signals():
    import neurokit2 as nk
    import numpy
    from scipy import signal as scipy_signal
    from scipy.misc import electrocardiogram

    simulated = nk.ecg_simulate(duration=3600, sampling_rate=RATE, heart_rate=70, noise=0.01, random_state=20261130)
    real = scipy_signal.resample_poly(electrocardiogram(), RATE, 360)
    return [
        ("neurokit2 ECG, 1 h", [int(v) for v in numpy.round(simulated * 1000)]),
        ("MIT-BIH 208 at 130 Hz, 5 min", [int(v) for v in numpy.round(real * 1000)]),
    ]


def stamp(unix_ns):
    seconds, nanos = divmod(unix_ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + ".%06dZ" % (nanos // 1000)


def write_trace(path, values):
    """A connection, the ECG start request and its answer, then raw ECG frames, each arriving
    20 ms after its last sample."""
    period = 1e9 / RATE
    start = START_UNIX_S * 1_000_000_000
    with open(path, "w") as out:
        out.write('{"format":"hrmd-trace","version":1}\n')
        def line(ns, kind, characteristic=None, value=None):
            entry = {"t": stamp(ns), "transport": "ble", "device": DEVICE, "kind": kind}
            if characteristic:
                entry["characteristic"] = characteristic
                entry["value"] = value
            out.write(json.dumps(entry) + "\n")
        line(start - 2_000_000_000, "connected")
        line(start - 1_000_000_000, "write", "5c81", "02000001820001010e00")
        line(start - 990_000_000, "notify", "5c81", "f002000000")
        for first in range(0, len(values), FRAME):
            chunk = values[first:first + FRAME]
            last = start + round((first + len(chunk) - 1) * period)
            polar = last - POLAR_EPOCH_UNIX_S * 1_000_000_000
            body = bytes([0]) + polar.to_bytes(8, "little") + bytes([0])
            body += b"".join((v & 0xFFFFFF).to_bytes(3, "little") for v in chunk)
            line(last + 20_000_000, "notify", "5c82", body.hex())


def flac_sizes(work, values):
    raw = os.path.join(work, "ecg.raw")
    with open(raw, "wb") as file:
        file.write(b"".join(max(-32768, min(32767, v)).to_bytes(2, "little", signed=True) for v in values))
    sizes = {}
    for name, level in (("flac", []), ("flac -8", ["-8"])):
        out = os.path.join(work, "ecg.flac")
        run("flac", "--silent", "--force", *level, "--force-raw-format", "--endian=little", "--sign=signed", "--channels=1",
            "--bps=16", "--sample-rate=%d" % RATE, "-o", out, raw)
        listing = run("metaflac", "--list", out)
        metadata = sum(int(m) + 4 for m in re.findall(r"^  length: (\d+)$", listing, re.M)) + 4
        sizes[name] = (os.path.getsize(out), os.path.getsize(out) - metadata)
    return sizes


def peer_table(work, values):
    path = os.path.join(work, "peer-%d.sqlite" % len(values))
    if os.path.exists(path):
        os.remove(path)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE ecg (t REAL NOT NULL, device TEXT NOT NULL, uv INTEGER NOT NULL)")
        db.execute("CREATE INDEX ecg_t ON ecg (device, t)")
        db.executemany("INSERT INTO ecg VALUES (?, ?, ?)",
                       ((START_UNIX_S + i / RATE, DEVICE, v) for i, v in enumerate(values)))
    with sqlite3.connect(path) as db:
        db.execute("VACUUM")
    return path


def peak_rss(*arguments):
    """The command's peak resident set, KiB (GNU time's %M)."""
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *arguments], capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        sys.exit("%s failed: %s" % (" ".join(arguments[:3]), done.stderr.strip()))
    return int(done.stderr.strip().splitlines()[-1])


def measure(name, values, work, results):
    trace = os.path.join(work, "ecg.trace.jsonl")
    store = os.path.join(work, "store.sqlite")
    for path in (store, store + "-wal", store + "-shm"):
        if os.path.exists(path):
            os.remove(path)
    write_trace(trace, values)
    run(binary("hrmctl"), "auth", "grant", "hrmd", "heart-rate", "electrocardiogram", "--store", store)
    began = time.monotonic()
    run(binary("hrmctl"), "replay", trace, "--store", store)
    replay_s = time.monotonic() - began
    with sqlite3.connect(store) as db:
        chunk_bytes, chunks = db.execute("SELECT SUM(LENGTH(data)), COUNT(*) FROM waveformChunk").fetchone()
    recording = json.loads(run(binary("hrmctl"), "ecg", "list", "--output", "json", "--store", store).splitlines()[0])
    exported = os.path.join(work, "all.csv")
    began = time.monotonic()
    export_rss = peak_rss(binary("hrmctl"), "ecg", "export", recording["id"], "--format", "csv", "-o", exported, "--store", store)
    export_s = time.monotonic() - began
    strip_rss = peak_rss(binary("hrmctl"), "ecg", "export", recording["id"], "--since", stamp((START_UNIX_S + 60) * 1_000_000_000),
                         "--until", stamp((START_UNIX_S + 90) * 1_000_000_000), "--format", "csv", "-o", exported + ".strip",
                         "--store", store)
    with open(exported) as file:
        back = [int(row.split(",")[1]) for row in file.read().splitlines()[1:]]
    if back != values:
        sys.exit("%s: the export does not give back the samples replayed" % name)
    flac = flac_sizes(work, values)
    peer = peer_table(work, values)
    entry = {
        "signal": name, "samples": len(values), "replay_s": round(replay_s, 3),
        "store_chunk_bytes": chunk_bytes, "store_chunks": chunks, "store_bits_per_sample": round(8 * chunk_bytes / len(values), 2),
        "flac_file_bytes": flac["flac"][0], "flac_frames_bytes": flac["flac"][1],
        "flac8_file_bytes": flac["flac -8"][0], "flac8_frames_bytes": flac["flac -8"][1],
        "flac_bits_per_sample": round(8 * flac["flac"][1] / len(values), 2),
        "peer_table_bytes": os.path.getsize(peer), "export_all_csv_s": round(export_s, 3),
        "export_all_peak_rss_kib": export_rss, "export_30s_peak_rss_kib": strip_rss,
    }
    results.append(entry)
    return store, recording, peer


def strip_timing(store, recording, peer, work):
    """GET 30 s of samples through hrmd's HTTP front, beside the peer's sqlite3 read of the same 30 s."""
    run(binary("hrmctl"), "auth", "grant", "bench/ecg", "electrocardiogram", "--read", "--store", store)
    token = run(binary("hrmctl"), "auth", "token", "create", "bench/ecg", "--store", store).strip().splitlines()[-1]
    config = os.path.join(work, "hrmd.conf")
    with open(config, "w") as file:
        file.write("[http]\nlisten = 127.0.0.1:0\n")
    daemon = subprocess.Popen([binary("hrmd"), "--store", store, "--config", config, "--sensor", "mock:id=idle,hz=1"],
                              stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        port = None
        deadline = time.monotonic() + 30
        while port is None and time.monotonic() < deadline:
            line = daemon.stderr.readline()
            if not line:
                break
            found = re.search(r"http: listening on http://127\.0\.0\.1:(\d+)", line)
            port = found and found.group(1)
        if port is None:
            sys.exit("hrmd's HTTP front did not start")
        start_s = START_UNIX_S + 600
        since, until = stamp(start_s * 1_000_000_000), stamp((start_s + 30) * 1_000_000_000)
        path = "/api/v1/waveforms/samples?id=%s&since=%s&until=%s" % (recording["id"], since, until)
        connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=30)
        times, size = [], 0
        for _ in range(200):
            began = time.perf_counter()
            connection.request("GET", path, headers={"Authorization": "Bearer " + token})
            response = connection.getresponse()
            body = response.read()
            times.append(time.perf_counter() - began)
            if response.status != 200:
                sys.exit("GET %s: %d %s" % (path, response.status, body[:200]))
            size = len(body)
        answer = json.loads(body)
        instants = sum(len(s["values"]) for s in answer["segments"])
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
    peer_times = []
    with sqlite3.connect(peer) as db:
        for _ in range(200):
            began = time.perf_counter()
            rows = db.execute("SELECT t, uv FROM ecg WHERE device = ? AND t >= ? AND t < ? ORDER BY t",
                              (DEVICE, start_s, start_s + 30)).fetchall()
            json.dumps({"segments": [{"start": rows[0][0], "values": [r[1] for r in rows]}]})
            peer_times.append(time.perf_counter() - began)
    def ms(values, q):
        return round(1000 * (statistics.median(values) if q == 50 else sorted(values)[int(len(values) * 0.99) - 1]), 2)
    return {"strip_instants": instants, "strip_json_bytes": size,
            "api_strip_ms_p50": ms(times, 50), "api_strip_ms_p99": ms(times, 99),
            "peer_sqlite_strip_ms_p50": ms(peer_times, 50), "peer_sqlite_strip_ms_p99": ms(peer_times, 99)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the figures here")
    arguments = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="hrmd-ecg-bench-") as work:
        strip = None
        for name, values in signals():
            store, recording, peer = measure(name, values, work, results)
            if strip is None:
                strip = strip_timing(store, recording, peer, work)
    for entry in results:
        print("%s (%d samples): store %d bytes in %d chunks (%.2f bits/sample); flac %d bytes (frames %d, %.2f bits/sample), "
              "flac -8 frames %d; the logger's table %d bytes; replay %.2f s; whole export %.2f s, peak RSS %d KiB (30 s: %d KiB)"
              % (entry["signal"], entry["samples"], entry["store_chunk_bytes"], entry["store_chunks"], entry["store_bits_per_sample"],
                 entry["flac_file_bytes"], entry["flac_frames_bytes"], entry["flac_bits_per_sample"], entry["flac8_frames_bytes"],
                 entry["peer_table_bytes"], entry["replay_s"], entry["export_all_csv_s"], entry["export_all_peak_rss_kib"],
                 entry["export_30s_peak_rss_kib"]))
    print("30-second strip (%d instants, %d bytes of JSON): hrmd's API p50 %.2f ms, p99 %.2f ms; "
          "the logger's table through sqlite3 p50 %.2f ms, p99 %.2f ms"
          % (strip["strip_instants"], strip["strip_json_bytes"], strip["api_strip_ms_p50"], strip["api_strip_ms_p99"],
             strip["peer_sqlite_strip_ms_p50"], strip["peer_sqlite_strip_ms_p99"]))
    if arguments.json:
        with open(arguments.json, "w") as file:
            json.dump({"signals": results, "strip": strip}, file, indent=2)


if __name__ == "__main__":
    main()
