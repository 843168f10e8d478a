#!/bin/bash
# Regenerates Sources/hrmd/hrmd.order, the order in which the release link lays out the
# functions hrmd runs: first every function that ran in the profiled runs, together, then the
# rest. The kernel maps a file's pages 64 KiB at a time around each page fault, so functions
# that run spread over the whole 20 MB of code would make most of it resident; packed together
# they take a few MB (bench/README.md, memory).
#
# It runs the release hrmd under valgrind's callgrind: 20 mock straps, then 20 straps on the
# fake bluetoothd on a private bus (half StartNotify, half AcquireNotify), then 20 mock straps
# with 16 live clients on the HTTP front (bench/live_clients.py), and lists the
# functions of hrmd that ran, by mangled name. Names that later disappear are skipped by the
# linker; functions added since the last run go after the listed ones, so the file only needs
# refreshing when the layout has drifted (make release, then this, then make release again).
#
#   bash bench/hrmd-order-file.sh            # uses .build/release (HRMD_BIN_DIR to change)
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${HRMD_BIN_DIR:-.build/release}
source bench/fake-bluetoothd.sh
scratch=$(mktemp -d)
trap 'stop_fake_bluetoothd; rm -rf "$scratch"' EXIT

# valgrind cannot read the toolchain's DWARF; the symbol table is all it needs here.
cp "$bin/hrmd" "$scratch/hrmd"
strip --strip-debug "$scratch/hrmd"
"$bin/hrmctl" auth grant hrmd all --store "$scratch/store.sqlite" > /dev/null

profile() {
    local name=$1
    shift
    valgrind --tool=callgrind --callgrind-out-file="$scratch/$name.callgrind" --compress-strings=no --demangle=no \
        "$scratch/hrmd" --store "$scratch/store.sqlite" "$@" 2> "$scratch/$name.log"
}

mocks=()
for index in $(seq 20); do mocks+=(--sensor "mock:hz=4,seed=$index,contact-loss=0"); done
echo "profiling hrmd with 20 mock straps" >&2
profile mock "${mocks[@]}" --duration 20

/usr/bin/python3 -c "
import json, sys
devices = [{'address': 'C0:FF:EE:00:00:%02X' % i, 'name': 'Strap %d' % i, 'trusted': True, 'location': 1,
            'battery': 80, 'auto_stream_hz': 4, 'notify_acquired': i % 2 == 0} for i in range(20)]
json.dump({'adapters': ['hci0'], 'devices': devices}, open(sys.argv[1], 'w'))" "$scratch/scenario.json"
start_fake_bluetoothd "$scratch" "$scratch/scenario.json" "$scratch/fake.err"
echo "profiling hrmd with 20 straps on the fake bluetoothd" >&2
DBUS_SYSTEM_BUS_ADDRESS=$address profile ble --sensor ble --duration 30

# The HTTP front with 20 mock straps: 8 WebSocket and 8 Server-Sent Events clients (a token
# holds 16 streams) on the
# live stream and a few API requests, as the dashboard makes them.
"$bin/hrmctl" auth grant hrmd/bench heart-rate --read --store "$scratch/store.sqlite" > /dev/null
token=$("$bin/hrmctl" auth token create hrmd/bench --store "$scratch/store.sqlite" | tail -1)
echo "profiling hrmd with 20 mock straps and 16 live clients on the HTTP front" >&2
profile http "${mocks[@]}" --http 127.0.0.1:0 --duration 40 &
profiled=$!
port=
for _ in $(seq 600); do
    port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$scratch/http.log" 2>/dev/null | grep -o '[0-9]*$' || true)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { echo "hrmd-order-file: the HTTP front did not start" >&2; exit 1; }
/usr/bin/python3 bench/live_clients.py --port "$port" --token "$token" --seconds 25 --websockets 8 --events 8 >&2
wait "$profiled"

# Every function of hrmd itself (ob=…/hrmd) that callgrind saw run, once each: those every run
# ran first, then those of each run alone, so each kind of run finds its code in one stretch.
/usr/bin/python3 - "$scratch"/mock.callgrind "$scratch"/ble.callgrind "$scratch"/http.callgrind > Sources/hrmd/hrmd.order <<'EOF'
import sys
runs = []
for path in sys.argv[1:]:
    names, in_hrmd = set(), False
    for line in open(path, errors="replace"):
        if line.startswith("ob="):
            in_hrmd = line.rstrip("\n").endswith("/hrmd")
        elif line.startswith("fn=") and in_hrmd and not line.startswith("fn=0x"):
            names.add(line[3:].strip())
    runs.append(names)
shared = set.intersection(*runs)
order = sorted(shared) + [name for names in runs for name in sorted(names - shared)]
print("\n".join(dict.fromkeys(order)))
EOF
echo "Sources/hrmd/hrmd.order: $(wc -l < Sources/hrmd/hrmd.order) functions" >&2
