#!/usr/bin/env bash
# The BLE benchmark's Python peer: STRAPS fake straps (default 20) streaming at HZ (4) for
# SECONDS (60) through bench/bleak_logger.py, on a private D-Bus bus with the fake bluetoothd.
# Prints the logger's CPU time (user+sys, /usr/bin/time) per 1000 notifications, its peak RSS,
# and rows stored against notifications the fake sent; leaves the raw figures in $BENCH_OUT.
#
#   bash bench/run_ble_bench.sh                       # 20 straps, 4 Hz, 60 s
#   STRAPS=5 SECONDS_TO_RUN=10 bash bench/run_ble_bench.sh
#   ACQUIRE=1 bash bench/run_ble_bench.sh              # AcquireNotify sockets instead of StartNotify
#
# bleak is not packaged for Debian 12 and pip refuses the system interpreter there, so the
# logger runs in a venv: .bench-venv (git-ignored), made on first use with
#   /usr/bin/python3 -m venv --system-site-packages .bench-venv && .bench-venv/bin/pip install bleak
# Set BENCH_PYTHON to use another interpreter that has bleak.
set -euo pipefail
cd "$(dirname "$0")/.."

straps=${STRAPS:-20}
hz=${HZ:-4}
seconds=${SECONDS_TO_RUN:-60}
out=${BENCH_OUT:-bench-out/ble}
python=${BENCH_PYTHON:-.bench-venv/bin/python}
acquire=${ACQUIRE:-0}

if [ ! -x "$python" ]; then
    echo "creating .bench-venv with bleak" >&2
    /usr/bin/python3 -m venv --system-site-packages .bench-venv
    .bench-venv/bin/pip install --quiet bleak
    python=.bench-venv/bin/python
fi

mkdir -p "$out"
rm -f "$out"/bleak-readings.sqlite*   # the logger's store, on the same file system as hrmd's
source bench/fake-bluetoothd.sh
scratch=$(mktemp -d)
trap 'stop_fake_bluetoothd; rm -rf "$scratch"' EXIT

addresses=$(write_bench_scenario "$scratch/scenario.json" "$straps" "$hz" "$acquire")

start_fake_bluetoothd "$scratch" "$scratch/scenario.json" "$out/fake.err"

logger_options=()
[ "$acquire" = 1 ] && logger_options+=(--acquire)
echo "bleak_logger: $straps straps at $hz Hz for $seconds s$([ "$acquire" = 1 ] && echo ", AcquireNotify")" >&2
DBUS_SYSTEM_BUS_ADDRESS=$address /usr/bin/time -v -o "$out/time.txt" \
    "$python" bench/bleak_logger.py --db "$out/bleak-readings.sqlite" --seconds "$seconds" "${logger_options[@]}" \
    $addresses > "$out/logger.json"
# The fake's own CPU time (clock ticks in /proc/PID/stat fields 14 and 15), to show it kept up.
read -r -a stat < "/proc/$fake_pid/stat"
echo "$(( (stat[13] + stat[14]) * 1000 / $(getconf CLK_TCK) ))" > "$out/fake-cpu-ms"

echo stats >&3
for _ in $(seq 50); do
    [ "$(wc -l < "$scratch/fake.out")" -ge 2 ] && break
    sleep 0.1
done
sed -n 2p "$scratch/fake.out" > "$out/fake-stats.json"

/usr/bin/python3 - "$out" <<'EOF'
import json, re, sys
out = sys.argv[1]
logger = json.load(open(out + "/logger.json"))
fake = json.load(open(out + "/fake-stats.json"))
timing = open(out + "/time.txt").read()
def field(name):
    return float(re.search(re.escape(name) + r": ([0-9.]+)", timing).group(1))
cpu = field("User time (seconds)") + field("System time (seconds)")
rss_mib = field("Maximum resident set size (kbytes)") / 1024
received = logger["notifications"]
summary = {
    "straps": logger["devices"], "subscribed": logger["subscribed"], "seconds": logger["seconds"],
    "subscribed_with": "AcquireNotify" if fake["acquire_notify_calls"] else "StartNotify",
    "sent_by_fake": fake["sent"], "dropped_by_fake": fake["dropped"], "notifications_received": received, "rows": logger["rows"],
    "rejected": logger["rejected"], "lost": fake["sent"] - received,
    "cpu_s": round(cpu, 3), "cpu_ms_per_1000_notifications": round(1000 * cpu / max(received, 1) * 1000, 1),
    "cpu_recording_ms_per_1000_notifications":
        round(1000 * logger["cpu_recording_s"] / max(logger["notifications_recording"], 1) * 1000, 1),
    "peak_rss_mib": round(rss_mib, 1),
    "fake_bluetoothd_cpu_s": int(open(out + "/fake-cpu-ms").read()) / 1000,
    "write_bytes": logger.get("write_bytes"),
    "write_bytes_per_row": round(logger["write_bytes"] / max(logger["rows"], 1), 1) if logger.get("write_bytes") is not None else None,
}
json.dump(summary, open(out + "/summary.json", "w"), indent=1)
for key, value in summary.items():
    print("%-40s %s" % (key, value))
EOF
