#!/bin/bash
# Checks udev/60-hrmd.rules with `udevadm test` against fake sysfs devices: an ANT stick,
# a serial sensor a local rule marks, and a plain serial port.
#
# `udevadm test` is not a dry run (systemd 252 creates nodes and links in /dev and writes the
# udev database), so it runs only inside a private mount namespace: tmpfs over /sys, /run and
# /dev (with null, zero, urandom and pts bound back), the rules bound over the rules
# directories, and a copy of /etc/group that has the hrmd group. Nothing outside changes.
#
# Needs root for unshare -m. Without root, or where private mount namespaces are not
# permitted (some containers), it says SKIP and why, and exits 0: it never runs udevadm test
# outside a private namespace.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rules=${HRMD_RULES:-$(cd "$here/../.." && pwd)/udev/60-hrmd.rules}

fail() { echo "check-rules: FAIL: $*" >&2; exit 1; }

if [ "${1:-}" != --inside ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "check-rules: SKIP (needs root for a private mount namespace)" >&2
        exit 0
    fi
    command -v udevadm >/dev/null || fail "udevadm is missing (apt-get install udev)"
    command -v unshare >/dev/null || fail "unshare is missing (util-linux)"
    [ -f "$rules" ] || fail "no rules at $rules"
    if ! unshare --mount true 2>/dev/null; then
        echo "check-rules: SKIP (unshare --mount is not permitted here; the rules are never tested against the real /dev)" >&2
        exit 0
    fi
    real_dev() { ls -lA /dev/hrmd /dev/char 2>/dev/null || true; }
    before=$(real_dev)
    unshare --mount --propagation private "${BASH_SOURCE[0]}" --inside
    [ "$(real_dev)" = "$before" ] || fail "udevadm test changed the real /dev"
    exit 0
fi

# ---- inside the private mount namespace ----
scratch=$(mktemp -d)
mount -t tmpfs hrmd-check "$scratch"
mkdir "$scratch/host-dev" "$scratch/rules" "$scratch/empty"
mount --bind /dev "$scratch/host-dev"

# /dev and /run: empty tmpfs, with the few nodes udevadm needs.
mount -t tmpfs hrmd-dev /dev
for node in null zero urandom; do
    touch "/dev/$node"
    mount --bind "$scratch/host-dev/$node" "/dev/$node"
done
mkdir /dev/pts
mount --bind "$scratch/host-dev/pts" /dev/pts
ln -s pts/ptmx /dev/ptmx
mount -t tmpfs hrmd-run /run

# Only hrmd's rules and the local rule a user would write for a serial sensor.
cp "$rules" "$scratch/rules/60-hrmd.rules"
cat > "$scratch/rules/59-hrmd-local.rules" <<'EOF'
SUBSYSTEM=="tty", ATTRS{idVendor}=="2341", ATTRS{idProduct}=="0043", ENV{HRMD_SENSOR}="serial", ENV{HRMD_BAUD}="9600"
EOF
mount --bind "$scratch/rules" /etc/udev/rules.d
for dir in /usr/lib/udev/rules.d /lib/udev/rules.d; do
    [ -d "$dir" ] && mount --bind "$scratch/empty" "$dir"
done

# The hrmd group, as systemd-sysusers would make it.
cp /etc/group "$scratch/group"
grep -q '^hrmd:' "$scratch/group" || echo 'hrmd:x:977:' >> "$scratch/group"
mount --bind "$scratch/group" /etc/group
hrmd_gid=$(awk -F: '$1 == "hrmd" { print $3 }' /etc/group)

# A fake sysfs: USB devices with a tty below each, and a plain serial port.
mount -t tmpfs hrmd-sys /sys
mkdir -p /sys/bus/usb/devices /sys/bus/usb-serial /sys/class/tty /sys/dev/char
usb_tty() { # NAME BUSPORT VENDOR PRODUCT MAJOR:MINOR
    local name=$1 port=$2 vendor=$3 product=$4 devnum=$5
    local usb=/sys/devices/pci0000:00/0000:00:14.0/usb1/$port
    local interface=$usb/$port:1.0
    local tty=$interface/$name/tty/$name
    mkdir -p "$tty"
    printf '%s\n' "$vendor" > "$usb/idVendor"
    printf '%s\n' "$product" > "$usb/idProduct"
    printf 'SN%s\n' "$product" > "$usb/serial"
    printf 'DEVTYPE=usb_device\nPRODUCT=%s/%s/100\n' "${vendor#0}" "${product#0}" > "$usb/uevent"
    ln -s /sys/bus/usb "$usb/subsystem"
    printf 'DEVTYPE=usb_interface\n' > "$interface/uevent"
    ln -s /sys/bus/usb "$interface/subsystem"
    : > "$interface/$name/uevent"
    ln -s /sys/bus/usb-serial "$interface/$name/subsystem"
    tty_node "$name" "$tty" "$devnum"
}
tty_node() { # NAME SYSPATH MAJOR:MINOR
    printf 'MAJOR=%s\nMINOR=%s\nDEVNAME=%s\n' "${3%:*}" "${3#*:}" "$1" > "$2/uevent"
    printf '%s\n' "$3" > "$2/dev"
    ln -s /sys/class/tty "$2/subsystem"
    ln -s "$2" "/sys/class/tty/$1"
}
usb_tty ttyUSB0 1-1 0fcf 1008 188:0
usb_tty ttyACM0 1-2 2341 0043 166:0
mkdir -p /sys/devices/platform/serial8250/tty/ttyS0
tty_node ttyS0 /sys/devices/platform/serial8250/tty/ttyS0 4:64

failures=0
check() { # DEVICE OUTPUT PATTERN WHAT
    if grep -qE "$3" <<<"$2"; then
        echo "ok   $1: $4"
    else
        echo "FAIL $1: $4 (no line matching /$3/)"
        failures=$((failures + 1))
    fi
}
refuse() { # DEVICE OUTPUT PATTERN WHAT
    if grep -qiE "$3" <<<"$2"; then
        echo "FAIL $1: $4:"
        grep -iE "$3" <<<"$2" | sed 's/^/       /'
        failures=$((failures + 1))
    else
        echo "ok   $1: $4"
    fi
}
# SYSTEMD_DEVICE_VERIFY_SYSFS=0: sd-device accepts a /sys that is not sysfs. The container
# line about PID 1's environment is noise, not a finding.
run_test() {
    SYSTEMD_DEVICE_VERIFY_SYSFS=0 udevadm test --action=add "/sys/class/tty/$1" 2>&1 | grep -v 'Failed to read \$container of PID 1' || true
}

for device in ttyUSB0 ttyACM0 ttyS0; do
    output=$(run_test "$device")
    [ -n "${VERBOSE:-}" ] && printf '%s\n' "$output"
    check "$device" "$output" "Reading rules file: /etc/udev/rules.d/60-hrmd.rules" "the rules were read"
    refuse "$device" "$output" "invalid|error|failed to|unknown (key|group|user)|ignoring" "no invalid rule, error or unknown group"
    case $device in
    ttyUSB0)
        check "$device" "$output" "^HRMD_SENSOR=ant$" "marked HRMD_SENSOR=ant"
        check "$device" "$output" "60-hrmd.rules:[0-9]+ GROUP $hrmd_gid$" "GROUP hrmd"
        check "$device" "$output" "60-hrmd.rules:[0-9]+ MODE 0660" "MODE 0660"
        check "$device" "$output" "^DEVLINKS=.*/dev/hrmd/ant-ttyUSB0" "symlink /dev/hrmd/ant-ttyUSB0"
        check "$device" "$output" "^SYSTEMD_WANTS=hrmd.service$" "SYSTEMD_WANTS=hrmd.service"
        check "$device" "$output" "^(CURRENT_)?TAGS=.*:systemd:" "tagged systemd"
        ;;
    ttyACM0)
        check "$device" "$output" "^HRMD_SENSOR=serial$" "marked HRMD_SENSOR=serial by the local rule"
        check "$device" "$output" "^HRMD_BAUD=9600$" "HRMD_BAUD from the local rule"
        check "$device" "$output" "^DEVLINKS=.*/dev/hrmd/serial-ttyACM0" "symlink /dev/hrmd/serial-ttyACM0"
        check "$device" "$output" "60-hrmd.rules:[0-9]+ MODE 0660" "MODE 0660"
        check "$device" "$output" "^SYSTEMD_WANTS=hrmd.service$" "SYSTEMD_WANTS=hrmd.service"
        ;;
    ttyS0)
        refuse "$device" "$output" "HRMD_SENSOR|hrmd/|SYSTEMD_WANTS" "left alone"
        ;;
    esac
done

[ "$failures" = 0 ] || fail "$failures check(s) failed (VERBOSE=1 shows udevadm's output)"
echo "check-rules: the udev rules mark, group, link and start hrmd as expected"
