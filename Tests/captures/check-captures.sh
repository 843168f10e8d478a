#!/usr/bin/env bash
# Checks the btsnoop captures the tests build (Tests/Support/StrapCapture, written by the
# capture-writer executable) against Wireshark's own reading of them: tshark must read every
# record (and say that the truncated capture is cut short), see the LE connection and
# disconnection, put the ACL fragments back together, map the handles to 0x2A37, 0x2A38,
# 0x2A19 and the Device Information strings from the discovery the capture holds, and find the
# values the capture was built with, time for time. So the captures the replay tests use are
# real btsnoop, HCI, L2CAP and ATT, not just what our own reader accepts.
#
# Needs tshark (apt-get install tshark; `make deps` installs it). Without it: SKIP, except in
# CI (CI set), where that is a failure. CAPTURE_WRITER chooses the writer (default
# .build/debug/capture-writer). Prints "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
writer=${CAPTURE_WRITER:-.build/debug/capture-writer}

if ! command -v tshark > /dev/null; then
    if [ -n "${CI:-}" ]; then echo "check-captures: FAIL: tshark is missing (make deps installs it)" >&2; exit 1; fi
    echo "check-captures: SKIP (tshark is missing; make deps installs it)" >&2
    exit 0
fi
[ -x "$writer" ] || { echo "check-captures: FAIL: no $writer (swift build --build-tests builds it)" >&2; exit 1; }

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAILED: $*"; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$writer" "$scratch" || { echo "check-captures: FAIL: $writer did not write the captures" >&2; exit 1; }

# tshark as a user, quietly: no personal preferences, no name resolution.
shark() { tshark -n "$@" 2>&1 >&3 3>&- | grep -v '^Running as user' > "$scratch/tshark.err"; } 3>&1

att_fields=(frame.time_epoch btatt.opcode btatt.handle btatt.uuid16
    btatt.heart_rate_measurement.value.8 btatt.heart_rate_measurement.energy_expended btatt.heart_rate_measurement.rr_interval
    btatt.body_sensor_location btatt.battery_level btatt.device_name btatt.manufacturer_string btatt.model_number_string
    btatt.hardware_revision_string btatt.firmware_revision_string btatt.software_revision_string btatt.value)
link_fields=(frame.time_epoch bthci_evt.code bthci_evt.le_meta_subevent bthci_evt.connection_handle bthci_evt.bd_addr)
fields() { for field in "$@"; do printf -- '-e\n%s\n' "$field"; done; }
mapfile -t att_args < <(fields "${att_fields[@]}")
mapfile -t link_args < <(fields "${link_fields[@]}")

for capture in "$scratch"/*.btsnoop; do
    name=$(basename "$capture" .btsnoop)
    expected_frames=$(cat "$scratch/$name.frames.expected")

    frames=$(shark -r "$capture" -T fields -e frame.number | wc -l)
    if [ "$name" = truncated ]; then
        if [ "$frames" = "$expected_frames" ] && grep -q "cut short" "$scratch/tshark.err"; then
            pass "$name: tshark reads $frames records and says the file is cut short"
        else
            fail "$name: tshark read $frames records (expected $expected_frames, then 'cut short'): $(cat "$scratch/tshark.err")"
        fi
    elif [ "$frames" = "$expected_frames" ] && [ ! -s "$scratch/tshark.err" ]; then
        pass "$name: tshark reads all $frames records"
    else
        fail "$name: tshark read $frames of $expected_frames records: $(cat "$scratch/tshark.err")"
    fi

    # A capture that begins mid-connection has packets "out of any connection handle session".
    malformed=$(shark -r "$capture" -Y '_ws.malformed || (_ws.expert.severity >= "warning" && !(_ws.expert.message contains "out of any"))' | wc -l)
    if [ "$malformed" = 0 ]; then pass "$name: nothing malformed, no expert warnings"; else fail "$name: $malformed frames malformed or warned about"; fi

    shark -r "$capture" -Y 'btatt.opcode == 0x1b || btatt.opcode == 0x0b' -T fields "${att_args[@]}" > "$scratch/$name.att"
    if diff -u "$scratch/$name.att.expected" "$scratch/$name.att" > "$scratch/$name.att.diff"; then
        pass "$name: $(wc -l < "$scratch/$name.att") notifications and reads, handles, UUIDs and values as built"
    else
        fail "$name: notifications and reads differ (expected -, tshark +):"; cat "$scratch/$name.att.diff"
    fi

    shark -r "$capture" -Y 'bthci_evt.le_meta_subevent == 0x01 || bthci_evt.le_meta_subevent == 0x0a || bthci_evt.code == 0x05' \
        -T fields "${link_args[@]}" > "$scratch/$name.links"
    if diff -u "$scratch/$name.links.expected" "$scratch/$name.links" > "$scratch/$name.links.diff"; then
        pass "$name: connection events as built"
    else
        fail "$name: connection events differ (expected -, tshark +):"; cat "$scratch/$name.links.diff"
    fi
done

echo "check-captures: $passed passed, $failed failed"
[ "$failed" = 0 ]
