#!/usr/bin/python3
"""Live-stream benchmark: hrmd's WebSocket stream against a Python relay, in the same run.

20 mock straps at 4 Hz record into a fresh store through hrmd (release build); 200 WebSocket
clients (in a few client processes) follow the live stream. Measured while the clients listen:

- latency from a strap's notification (the sample's start time, stamped by the mock as it
  notifies) to a client's receipt of the message: p50, p99, max;
- CPU seconds (user + system, /proc/PID/stat) per 1000 frames delivered to every client;
- hrmd's resident memory (VmRSS and its peak VmHWM) with the clients connected.

The peer is bench/python_relay.py, a relay as its users write one (one source of samples,
`websockets.broadcast` to every client), fed by the same hrmd with one stream: its CPU is the
relay process's alone, its latency is end to end through hrmd and the relay.

    HRMD_BIN_DIR=.build/release python3 bench/live_bench.py [--clients 200] [--straps 20] [--hz 4]
        [--seconds 30] [--flush 0.05] [--json FILE]
"""

import argparse
import asyncio
import datetime
import json
import multiprocessing
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def memory_kib(pid):
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0])
    return values


def wait_for_line(process, pattern, deadline_seconds=120):
    """The first match of `pattern` in the process's stderr, within the deadline."""
    deadline = time.monotonic() + deadline_seconds
    buffered = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 1)
        if not ready:
            if process.poll() is not None:
                break
            continue
        chunk = os.read(process.stderr.fileno(), 65536)
        if not chunk:
            break
        buffered += chunk
        match = re.search(pattern, buffered.decode(errors="replace"))
        if match:
            return match
    sys.exit(f"live_bench: no line matching {pattern!r} within {deadline_seconds} s")


def drain(process):
    """Keeps reading a child's stderr so it never blocks on a full pipe."""
    import threading

    def run():
        while os.read(process.stderr.fileno(), 65536):
            pass

    threading.Thread(target=run, daemon=True).start()


async def listen(url, headers, count, window_start, window_end, subprotocols, first):
    import websockets

    latencies = []
    received = []

    async def one(index):
        messages = 0
        async with websockets.connect(
            url, extra_headers=headers[index % len(headers)], subprotocols=subprotocols, max_queue=None, ping_interval=None, open_timeout=60
        ) as socket:
            while True:
                timeout = window_end - time.time()
                if timeout <= 0:
                    break
                try:
                    text = await asyncio.wait_for(socket.recv(), timeout)
                except asyncio.TimeoutError:
                    break
                now = time.time()
                start = text.find('"start":"')
                if start < 0:
                    continue
                stamp = datetime.datetime.fromisoformat(text[start + 9:start + 33].replace("Z", "+00:00")).timestamp()
                if window_start <= stamp:
                    latencies.append((now - stamp) * 1000)
                    messages += 1
        received.append(messages)

    async def one_sse(index):
        # Server-Sent Events over a plain socket: the samples are the `data:` lines.
        host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        authorization = headers[index % len(headers)].get("Authorization", "")
        writer.write(f"GET /api/v1/live HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n"
                     f"Authorization: {authorization}\r\n\r\n".encode())
        await writer.drain()
        messages = 0
        pending = b""
        while True:
            timeout = window_end - time.time()
            if timeout <= 0:
                break
            try:
                chunk = await asyncio.wait_for(reader.read(65536), timeout)
            except asyncio.TimeoutError:
                break
            if not chunk:
                break
            now = time.time()
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                start = line.find(b'"start":"')
                if not line.startswith(b"data: ") or start < 0:
                    continue
                text = line[start + 9:start + 33].decode()
                stamp = datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
                if window_start <= stamp:
                    latencies.append((now - stamp) * 1000)
                    messages += 1
        writer.close()
        received.append(messages)

    client = one_sse if url.startswith("http") else one
    await asyncio.gather(*(client(first + index) for index in range(count)))
    return latencies, received


def client_process(url, headers, count, window_start, window_end, subprotocols, first, results):
    latencies, received = asyncio.run(listen(url, headers, count, window_start, window_end, subprotocols, first))
    results.put((latencies, received))


def run_clients(url, headers, clients, processes, window_start, window_end, subprotocols=None):
    results = multiprocessing.Queue()
    workers = []
    first = 0
    for index in range(processes):
        count = clients // processes + (1 if index < clients % processes else 0)
        worker = multiprocessing.Process(
            target=client_process, args=(url, headers, count, window_start, window_end, subprotocols, first, results))
        first += count
        worker.start()
        workers.append(worker)
    latencies, received = [], []
    for _ in workers:
        part, counts = results.get(timeout=window_end - time.time() + 120)
        latencies += part
        received += counts
    for worker in workers:
        worker.join(timeout=30)
    return latencies, received


def percentile(values, fraction):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure(label, pid, url, headers, args, subprotocols=None):
    """Connects the clients, waits for them, then measures one window."""
    warmup = 8.0
    window_start = time.time() + warmup
    window_end = window_start + args.seconds
    import threading

    sampled = {}

    def sample_cpu():
        time.sleep(max(0, window_start - time.time()))
        sampled["start"] = cpu_seconds(pid)
        time.sleep(max(0, window_end - time.time()))
        sampled["end"] = cpu_seconds(pid)
        sampled["memory"] = memory_kib(pid)

    sampler = threading.Thread(target=sample_cpu)
    sampler.start()
    latencies, received = run_clients(url, headers, args.clients, args.processes, window_start, window_end, subprotocols)
    sampler.join()
    frames = sorted(received)[len(received) // 2] if received else 0
    cpu = sampled["end"] - sampled["start"]
    result = {
        "label": label,
        "clients": len(received),
        "frames_per_client": frames,
        "messages": len(latencies),
        "latency_ms_p50": round(percentile(latencies, 0.5), 1),
        "latency_ms_p99": round(percentile(latencies, 0.99), 1),
        "latency_ms_max": round(max(latencies), 1) if latencies else None,
        "cpu_seconds": round(cpu, 3),
        "cpu_seconds_per_1000_frames": round(cpu / frames * 1000, 4) if frames else None,
        "rss_kib": sampled["memory"].get("VmRSS"),
        "peak_rss_kib": sampled["memory"].get("VmHWM"),
    }
    print(json.dumps(result), flush=True)
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--straps", type=int, default=20)
    parser.add_argument("--hz", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--flush", type=float, help="hrmd's flush-interval (seconds; default: hrmd's own while live)")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--transport", choices=["websocket", "sse"], default="websocket",
                        help="how hrmd's clients follow the stream (the relay's are WebSockets)")
    args = parser.parse_args()

    bin_dir = os.environ.get("HRMD_BIN_DIR", os.path.join(ROOT, ".build", "release"))
    hrmd, hrmctl = os.path.join(bin_dir, "hrmd"), os.path.join(bin_dir, "hrmctl")
    work = tempfile.mkdtemp(prefix="hrmd-live-bench-")
    store = os.path.join(work, "bench.sqlite")
    try:
        subprocess.run([hrmctl, "auth", "grant", "--store", store, "hrmd", "heart-rate"], check=True, capture_output=True)
        subprocess.run([hrmctl, "auth", "grant", "--store", store, "bench/live", "heart-rate", "--read"], check=True, capture_output=True)
        # A token may hold 16 streams: one token for each 10 clients, as many dashboards would.
        tokens = [
            subprocess.run(
                [hrmctl, "auth", "token", "create", "--store", store, "bench/live"], check=True, capture_output=True, text=True
            ).stdout.strip().splitlines()[-1]
            for _ in range((args.clients + 9) // 10)
        ]
        token = tokens[0]
        config = os.path.join(work, "hrmd.conf")
        with open(config, "w") as file:
            flush = f"flush-interval = {args.flush}\n" if args.flush else ""
            file.write(f"[hrmd]\n{flush}[http]\nlisten = 127.0.0.1:0\nmax-live-streams = {args.clients + 10}\n"
                       f"max-connections-per-address = {args.clients + 10}\n")
        sensors = []
        for index in range(args.straps):
            sensors += ["--sensor", f"mock:id=strap-{index:02d},hz={args.hz},seed={index + 1},bpm={60 + index}"]
        daemon = subprocess.Popen(
            [hrmd, "--store", store, "--config", config] + sensors, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
        try:
            port = wait_for_line(daemon, r"http: listening on http://127\.0\.0\.1:(\d+)").group(1)
            drain(daemon)
            base = f"ws://127.0.0.1:{port}/api/v1/live" if args.transport == "websocket" else f"http://127.0.0.1:{port}/api/v1/live"
            # What recording alone costs: the same window with no client.
            time.sleep(5)
            idle_start = cpu_seconds(daemon.pid)
            time.sleep(args.seconds)
            idle_cpu = cpu_seconds(daemon.pid) - idle_start
            results = [measure(f"hrmd ({args.transport})", daemon.pid, base, [{"Authorization": f"Bearer {t}"} for t in tokens], args)]

            relay = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "python_relay.py"), "--source", f"http://127.0.0.1:{port}/api/v1/live",
                 "--token", token, "--port", "0" if False else str(int(port) + 1)],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            try:
                ready, _, _ = select.select([relay.stdout], [], [], 60)
                if not ready or b"relay ready" not in relay.stdout.readline():
                    sys.exit("live_bench: the relay did not start")
                results.append(measure("python relay", relay.pid, f"ws://127.0.0.1:{int(port) + 1}/", [{}], args))
            finally:
                relay.terminate()
                relay.wait(timeout=30)
        finally:
            daemon.terminate()
            daemon.wait(timeout=60)
        ratio = net_ratio = None
        hrmd_result, relay_result = results
        frames = hrmd_result["frames_per_client"]
        # Delivering alone: hrmd's CPU with the clients minus its CPU recording with none.
        hrmd_result["cpu_seconds_recording_only"] = round(idle_cpu, 3)
        hrmd_result["cpu_seconds_per_1000_frames_delivering"] = (
            round((hrmd_result["cpu_seconds"] - idle_cpu) / frames * 1000, 4) if frames else None)
        if hrmd_result["cpu_seconds_per_1000_frames"] and relay_result["cpu_seconds_per_1000_frames"]:
            ratio = round(hrmd_result["cpu_seconds_per_1000_frames"] / relay_result["cpu_seconds_per_1000_frames"], 3)
            net_ratio = round(hrmd_result["cpu_seconds_per_1000_frames_delivering"] / relay_result["cpu_seconds_per_1000_frames"], 3)
        summary = {"clients": args.clients, "straps": args.straps, "hz": args.hz, "flush_interval": args.flush,
                   "transport": args.transport,
                   "results": results, "cpu_ratio_hrmd_to_relay": ratio, "cpu_ratio_delivering_to_relay": net_ratio}
        print(json.dumps(summary, indent=2))
        if args.json:
            with open(args.json, "w") as file:
                json.dump(summary, file, indent=2)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
