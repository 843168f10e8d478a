#!/usr/bin/env bash
# The BLE benchmark's floor: bench/floor_client.c, a C program on sd-bus that only receives
# and counts the notifications of STRAPS fake straps (default 20) streaming at HZ (4) for
# SECONDS (60), on a private D-Bus bus with the fake bluetoothd. Its CPU time per 1000
# notifications is the least any BlueZ client can spend; hrmd's and the bleak logger's are
# read against it. Leaves the raw figures and summary.json in $BENCH_OUT.
#
#   bash bench/run_floor_bench.sh                     # 20 straps, 4 Hz, 60 s, StartNotify
#   ACQUIRE=1 bash bench/run_floor_bench.sh            # AcquireNotify sockets instead
set -euo pipefail
cd "$(dirname "$0")/.."

straps=${STRAPS:-20}
hz=${HZ:-4}
seconds=${SECONDS_TO_RUN:-60}
out=${BENCH_OUT:-bench-out/floor}
acquire=${ACQUIRE:-0}

mkdir -p "$out"
source bench/fake-bluetoothd.sh
scratch=$(mktemp -d)
trap 'stop_fake_bluetoothd; rm -rf "$scratch"' EXIT

# shellcheck disable=SC2046
cc -O2 -o "$scratch/floor_client" bench/floor_client.c $(pkg-config --cflags --libs libsystemd)

write_bench_scenario "$scratch/scenario.json" "$straps" "$hz" "$acquire" > /dev/null

start_fake_bluetoothd "$scratch" "$scratch/scenario.json" "$out/fake.err"

options=()
[ "$acquire" = 1 ] && options+=(--acquire)
DBUS_SYSTEM_BUS_ADDRESS=$address /usr/bin/time -v -o "$out/time.txt" \
    "$scratch/floor_client" "${options[@]}" "$seconds" > "$out/client.json"

/usr/bin/python3 - "$out" <<'EOF'
import json, re, sys
out = sys.argv[1]
client = json.load(open(out + "/client.json"))
timing = open(out + "/time.txt").read()
def field(name):
    return float(re.search(re.escape(name) + r": ([0-9.]+)", timing).group(1))
received = client["notifications"]
summary = {
    "straps": client["straps"], "subscribed": client["subscribed"], "subscribed_with": client["notify"],
    "notifications_received": received,
    "cpu_s": client["cpu_total_s"],
    "cpu_ms_per_1000_notifications": round(1e6 * client["cpu_total_s"] / max(received, 1), 2),
    "cpu_recording_ms_per_1000_notifications": round(1e6 * client["cpu_recording_s"] / max(client["notifications_recording"], 1), 2),
    "peak_rss_mib": round(field("Maximum resident set size (kbytes)") / 1024, 1),
}
json.dump(summary, open(out + "/summary.json", "w"), indent=1)
for key, value in summary.items():
    print("%-40s %s" % (key, value))
EOF
