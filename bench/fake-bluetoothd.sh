# Sourced by the benchmark scripts: the fake bluetoothd (Tests/BlueZ/fake_bluez.py) on a
# private bus, run from the repository's top directory.
#
#   start_fake_bluetoothd SCRATCH SCENARIO ERRORS
#
# starts a dbus-daemon listening in SCRATCH and the fake on it with the SCENARIO file (its
# stderr to ERRORS), waits until the fake is ready, and sets `address` (for
# DBUS_SYSTEM_BUS_ADDRESS), `bus_pid` and `fake_pid`; the fake's commands go to descriptor 3
# and its answers to SCRATCH/fake.out. `stop_fake_bluetoothd` (an EXIT trap) stops both.
# `write_bench_scenario` writes the benchmarks' scenario of identical straps.
bus_pid="" fake_pid=""

start_fake_bluetoothd() {
    local scratch=$1 scenario=$2 errors=$3
    address="unix:path=$scratch/bus"
    bus_pid=$(dbus-daemon --config-file=/usr/share/dbus-1/session.conf --address="$address" --fork --print-pid)
    mkfifo "$scratch/commands"
    /usr/bin/python3 Tests/BlueZ/fake_bluez.py --address "$address" --scenario "$scenario" \
        < "$scratch/commands" > "$scratch/fake.out" 2> "$errors" &
    fake_pid=$!
    exec 3> "$scratch/commands"
    for _ in $(seq 150); do
        grep -qx ready "$scratch/fake.out" && return 0
        sleep 0.1
    done
    echo "fake bluetoothd did not start" >&2
    return 1
}

# Writes the benchmarks' scenario to FILE: STRAPS trusted straps streaming at HZ while
# subscribed, offering AcquireNotify when ACQUIRE is 1; prints their addresses.
#
#   write_bench_scenario FILE STRAPS HZ ACQUIRE
write_bench_scenario() {
    /usr/bin/python3 -c "
import json, sys
n, hz, acquire = int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == '1'
addresses = ['C0:FF:EE:00:%02X:%02X' % (i // 256, i % 256) for i in range(n)]
devices = [{'address': a, 'name': 'Bench strap %d' % i, 'trusted': True, 'auto_stream_hz': hz,
            'notify_acquired': acquire}
           for i, a in enumerate(addresses)]
json.dump({'adapters': ['hci0'], 'devices': devices}, open(sys.argv[1], 'w'))
print(' '.join(addresses))" "$@"
}

# Stops what start_fake_bluetoothd started, if anything.
stop_fake_bluetoothd() {
    exec 3>&- 2>/dev/null || true
    [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
    [ -n "$bus_pid" ] && kill "$bus_pid" 2>/dev/null
    return 0
}
