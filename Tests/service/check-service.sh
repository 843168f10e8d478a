#!/usr/bin/env bash
# The service as it installs: `make install` into a scratch DESTDIR gives the expected tree,
# the unit passes `systemd-analyze verify` without warnings, and its security exposure
# (`systemd-analyze security --offline`) is at most 2.0, also with the hci drop-in applied
# (which adds AF_BLUETOOTH and CAP_NET_RAW/CAP_NET_ADMIN and nothing else); the unit serves org.hrmd.Health with a
# private store; sysusers and tmpfiles make (and tighten) that store under --root; the D-Bus
# policy, activation file, interface XML and polkit action are well-formed and say what they
# must; a dbus-daemon with a system-like configuration takes the installed policy, lists the
# name as activatable, lets root own it and refuses it to nobody (root only; skipped
# otherwise). Prints "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAILED: $*"; }

scratch=$(mktemp -d)
trap '[ -n "${bus_pid:-}" ] && kill "$bus_pid" 2> /dev/null; rm -rf "$scratch"' EXIT
destdir="$scratch/root"

if make --no-print-directory install PREFIX=/usr DESTDIR="$destdir" > "$scratch/install.log" 2>&1; then
    pass "make install PREFIX=/usr DESTDIR=…"
else
    fail "make install: $(tail -5 "$scratch/install.log")"
fi

expected=(
    usr/bin/hrmd usr/bin/hrmctl
    usr/lib/systemd/system/hrmd.service usr/lib/systemd/user/hrmd-notify.service
    usr/lib/sysusers.d/hrmd.conf usr/lib/tmpfiles.d/hrmd.conf
    usr/lib/udev/rules.d/60-hrmd.rules
    usr/share/dbus-1/system.d/org.hrmd.Health.conf
    usr/share/dbus-1/system-services/org.hrmd.Health.service
    usr/share/dbus-1/interfaces/org.hrmd.Health1.xml
    usr/share/polkit-1/actions/org.hrmd.health.policy
    usr/share/polkit-1/rules.d/50-hrmd.rules
    etc/hrmd/hrmd.conf.example etc/hrmd/hrmd.conf
    usr/share/doc/hrmd/hrmd.service.d/hci.conf usr/share/doc/hrmd/hrmd.service.d/flatpak-identity.conf
    usr/share/man/man8/hrmd.8 usr/share/man/man1/hrmctl.1
    usr/share/bash-completion/completions/hrmd usr/share/bash-completion/completions/hrmctl
    usr/share/zsh/site-functions/_hrmd usr/share/zsh/site-functions/_hrmctl
    usr/share/fish/vendor_completions.d/hrmd.fish usr/share/fish/vendor_completions.d/hrmctl.fish
)
# what the HTTP front serves: every file of web/ and web/static/ under usr/share/hrmd/web
for file in web/* web/static/*; do [ -f "$file" ] && expected+=("usr/share/hrmd/${file}"); done
for file in "${expected[@]}"; do
    if [ -s "$destdir/$file" ]; then pass "installed $file"; else fail "missing or empty: $file"; fi
done
unexpected=$(cd "$destdir" && find . -type f | sed 's|^\./||' | sort | comm -23 - <(printf '%s\n' "${expected[@]}" | sort))
if [ -z "$unexpected" ]; then pass "nothing else installed"; else fail "unexpected files: $unexpected"; fi

if "$destdir/usr/bin/hrmd" --version > /dev/null 2>&1; then pass "installed hrmd runs"; else fail "installed hrmd does not run"; fi
unit="$destdir/usr/lib/systemd/system/hrmd.service"
if grep -q "^ExecStart=/usr/bin/hrmd " "$unit"; then pass "ExecStart names the installed binary"; else fail "ExecStart: $(grep ExecStart "$unit")"; fi

if command -v systemd-analyze > /dev/null; then
    # verify wants ExecStart to exist on this machine: check a copy that points into DESTDIR.
    mkdir -p "$scratch/verify"
    sed "s|/usr/bin/hrmd|$destdir/usr/bin/hrmd|g" "$unit" > "$scratch/verify/hrmd.service"
    verify=$(systemd-analyze verify --man=no "$scratch/verify/hrmd.service" 2>&1)
    if [ -z "$verify" ]; then pass "systemd-analyze verify: no warnings"; else fail "systemd-analyze verify: $verify"; fi
    # The user unit of hrmctl notify, the same way.
    user_unit="$destdir/usr/lib/systemd/user/hrmd-notify.service"
    if grep -q "^ExecStart=/usr/bin/hrmctl notify$" "$user_unit"; then pass "the user unit runs the installed hrmctl notify"; else fail "user unit ExecStart: $(grep ExecStart "$user_unit")"; fi
    sed "s|/usr/bin/hrmctl|$destdir/usr/bin/hrmctl|g" "$user_unit" > "$scratch/verify/hrmd-notify.service"
    verify=$(systemd-analyze verify --man=no "$scratch/verify/hrmd-notify.service" 2>&1)
    if [ -z "$verify" ]; then pass "systemd-analyze verify of the user unit: no warnings"; else fail "systemd-analyze verify of the user unit: $verify"; fi
    security=$(systemd-analyze security --offline=yes --root="$destdir" "$unit" 2>&1)
    score=$(printf '%s\n' "$security" | sed -n 's/.*Overall exposure level for hrmd.service: \([0-9.]*\).*/\1/p')
    if [ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }'; then
        pass "security exposure $score ≤ 2.0"
    else
        fail "security exposure ${score:-unknown} > 2.0: $(printf '%s\n' "$security" | grep '✗' | head -5)"
    fi

    # Each drop-in, applied as the documentation says (/etc/systemd/system/hrmd.service.d/):
    # verified, scored, and changing only the lines it names.
    check_dropin() {
        local name=$1; shift
        local dropin="$destdir/usr/share/doc/hrmd/hrmd.service.d/$name.conf"
        rm -rf "$scratch/verify/hrmd.service.d" && mkdir -p "$scratch/verify/hrmd.service.d"
        cp "$dropin" "$scratch/verify/hrmd.service.d/"
        verify=$(cd "$scratch/verify" && SYSTEMD_UNIT_PATH="$scratch/verify:" systemd-analyze verify --man=no hrmd.service 2>&1)
        if [ -z "$verify" ]; then pass "systemd-analyze verify with the $name drop-in: no warnings"; else fail "verify with the $name drop-in: $verify"; fi
        local root="$scratch/root-$name"
        mkdir -p "$root/usr/lib/systemd/system" "$root/etc/systemd/system/hrmd.service.d"
        cp "$unit" "$root/usr/lib/systemd/system/" && cp "$dropin" "$root/etc/systemd/system/hrmd.service.d/"
        security=$(systemd-analyze security --offline=yes --root="$root" hrmd.service 2>&1)
        score=$(printf '%s\n' "$security" | sed -n 's/.*Overall exposure level for hrmd.service: \([0-9.]*\).*/\1/p')
        if [ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }'; then
            pass "security exposure with the $name drop-in $score ≤ 2.0"
        else
            fail "security exposure with the $name drop-in ${score:-unknown} > 2.0: $(printf '%s\n' "$security" | grep '✗' | head -5)"
        fi
        local line keys=()
        for line in "$@"; do
            if grep -qx "$line" "$dropin"; then pass "$name drop-in: $line"; else fail "the $name drop-in lacks $line"; fi
            keys+=(-e "^${line%%=*}=")
        done
        others=$(grep -v '^#' "$dropin" | grep -v '^$' | grep -v '^\[Service\]$' | grep -v "${keys[@]}")
        if [ -z "$others" ]; then pass "the $name drop-in changes nothing else"; else fail "the $name drop-in also sets: $others"; fi
    }
    check_dropin hci "CapabilityBoundingSet=CAP_NET_RAW CAP_NET_ADMIN" "AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN" \
        "RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_BLUETOOTH"
    check_dropin flatpak-identity "CapabilityBoundingSet=CAP_SYS_PTRACE" "AmbientCapabilities=CAP_SYS_PTRACE"
else
    fail "systemd-analyze is not installed"
fi

# The unit itself stays as hardened without the drop-in: no capabilities, no Bluetooth sockets.
for line in "CapabilityBoundingSet=" "AmbientCapabilities=" "RestrictAddressFamilies=AF_UNIX AF_NETLINK"; do
    if grep -qx "$line" "$unit"; then pass "unit: $line"; else fail "unit lacks $line"; fi
done

# The unit serves the store on the bus, and the store is private to the service's user.
for line in "BusName=org.hrmd.Health" "StateDirectoryMode=0700" "UMask=0077" "User=hrmd" \
    "MemoryHigh=256M" "MemoryMax=512M" "TasksMax=256" "LimitNOFILE=2048"; do
    if grep -qx "$line" "$unit"; then pass "unit: $line"; else fail "unit lacks $line"; fi
done
if grep -q "^ExecStart=.* --serve\( \|$\)" "$unit"; then pass "unit: ExecStart serves (--serve)"; else fail "ExecStart lacks --serve: $(grep ExecStart "$unit")"; fi

# sysusers and tmpfiles under --root: a new store directory is 0700 hrmd:hrmd, and an older
# installation's 2770 directory with group-writable store files (one owned by a group member) is
# tightened to 0700/0600 hrmd:hrmd.
fsroot="$scratch/fsroot"
mkdir -p "$fsroot/etc" "$fsroot/var/lib"
if systemd-sysusers --root="$fsroot" "$destdir/usr/lib/sysusers.d/hrmd.conf" > "$scratch/sysusers.log" 2>&1 \
    && hrmd_ids=$(awk -F: '$1 == "hrmd" { print $3 ":" $4 }' "$fsroot/etc/passwd") && [ -n "$hrmd_ids" ]; then
    pass "systemd-sysusers makes the hrmd user ($hrmd_ids)"
    if systemd-tmpfiles --create --root="$fsroot" "$destdir/usr/lib/tmpfiles.d/hrmd.conf" > "$scratch/tmpfiles.log" 2>&1 \
        && [ "$(stat -c '%a %u:%g' "$fsroot/var/lib/hrmd")" = "700 $hrmd_ids" ]; then
        pass "systemd-tmpfiles --create makes /var/lib/hrmd 0700 hrmd:hrmd"
    else
        fail "tmpfiles on a new root: $(stat -c '%a %u:%g' "$fsroot/var/lib/hrmd" 2>&1) $(cat "$scratch/tmpfiles.log")"
    fi
    store="$fsroot/var/lib/hrmd"
    chmod 2770 "$store"
    for f in hrmd.sqlite hrmd.sqlite-wal hrmd.sqlite-shm; do
        : > "$store/$f"; chown "$hrmd_ids" "$store/$f"; chmod 0660 "$store/$f"
    done
    chown 1000:"${hrmd_ids#*:}" "$store/hrmd.sqlite-wal"   # written by a group member
    systemd-tmpfiles --create --root="$fsroot" "$destdir/usr/lib/tmpfiles.d/hrmd.conf" > "$scratch/tmpfiles.log" 2>&1
    modes=$(cd "$store" && stat -c '%n %a %u:%g' . hrmd.sqlite hrmd.sqlite-wal hrmd.sqlite-shm | tr '\n' ' ')
    if [ "$modes" = ". 700 $hrmd_ids hrmd.sqlite 600 $hrmd_ids hrmd.sqlite-wal 600 $hrmd_ids hrmd.sqlite-shm 600 $hrmd_ids " ]; then
        pass "systemd-tmpfiles tightens an older 2770 store directory and its files"
    else
        fail "tmpfiles left: $modes $(cat "$scratch/tmpfiles.log")"
    fi
else
    fail "systemd-sysusers --root: $(cat "$scratch/sysusers.log")"
fi

# The bus and polkit files.
share="$destdir/usr/share"
for xml in dbus-1/system.d/org.hrmd.Health.conf dbus-1/interfaces/org.hrmd.Health1.xml polkit-1/actions/org.hrmd.health.policy; do
    if out=$(xmllint --noout "$share/$xml" 2>&1); then pass "$xml parses (xmllint)"; else fail "$xml: $out"; fi
done
policy="$share/polkit-1/actions/org.hrmd.health.policy"
if out=$(xmllint --noout --dtdvalid /usr/share/polkit-1/policyconfig-1.dtd "$policy" 2>&1); then
    pass "the polkit action is valid against policyconfig-1.dtd"
else
    fail "polkit policy: $out"
fi
action='//action[@id="org.hrmd.health.manage"]/defaults'
defaults=$(xmllint --xpath "concat($action/allow_any, ' ', $action/allow_inactive, ' ', $action/allow_active)" "$policy" 2>&1)
if [ "$defaults" = "auth_admin auth_admin auth_admin_keep" ]; then
    pass "org.hrmd.health.manage: auth_admin, auth_admin_keep when active"
else
    fail "org.hrmd.health.manage defaults: $defaults"
fi
rules="$share/polkit-1/rules.d/50-hrmd.rules"
if grep -q '"org.hrmd.health.manage"' "$rules" && grep -q 'isInGroup("hrmd")' "$rules"; then
    pass "polkit rules: group hrmd may org.hrmd.health.manage"
else
    fail "polkit rules do not name org.hrmd.health.manage and group hrmd"
fi
activation="$share/dbus-1/system-services/org.hrmd.Health.service"
for line in "[D-BUS Service]" "Name=org.hrmd.Health" "SystemdService=hrmd.service" "User=hrmd" "Exec=/bin/false"; do
    if grep -qxF "$line" "$activation"; then pass "activation file: $line"; else fail "activation file lacks $line"; fi
done

# A dbus-daemon configured like Debian's system bus (system.conf's default policy), with the
# installed policy included and the installed activation file in its service directory.
if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null || ! command -v dbus-daemon > /dev/null; then
    if [ "${CI:-}" = true ]; then
        fail "the bus policy check needs root, setpriv and dbus-daemon"
    else
        echo "SKIP: the bus policy check needs root, setpriv and dbus-daemon"
    fi
else
    busdir="$scratch/bus"
    mkdir -p "$busdir/system.d" && chmod 0755 "$scratch" "$busdir"
    cp "$share/dbus-1/system.d/org.hrmd.Health.conf" "$busdir/system.d/"
    sed -e "s|@SOCKET@|$busdir/socket|" -e "s|@SERVICE_DIR@|$share/dbus-1/system-services|" \
        -e "s|@POLICY_DIR@|$busdir/system.d|" Tests/service/system-bus.conf.in > "$busdir/system.conf"
    if bus_pid=$(timeout 10 dbus-daemon --config-file="$busdir/system.conf" --fork --print-pid 2> "$busdir/daemon.log"); then
        pass "dbus-daemon takes a system configuration that includes org.hrmd.Health.conf"
        bus=(dbus-send --bus="unix:path=$busdir/socket" --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus)
        activatable=$(timeout 10 "${bus[@]}" org.freedesktop.DBus.ListActivatableNames 2>&1)
        if grep -q '"org.hrmd.Health"' <<< "$activatable"; then
            pass "the bus lists org.hrmd.Health as activatable"
        else
            fail "not activatable: $activatable $(cat "$busdir/daemon.log")"
        fi
        request=(org.freedesktop.DBus.RequestName string:org.hrmd.Health uint32:4)
        as_nobody=$(timeout 10 setpriv --reuid=65534 --regid=65534 --clear-groups "${bus[@]}" "${request[@]}" 2>&1)
        if grep -q "org.freedesktop.DBus.Error.AccessDenied" <<< "$as_nobody"; then
            pass "nobody may not own org.hrmd.Health"
        else
            fail "nobody RequestName: $as_nobody"
        fi
        as_root=$(timeout 10 "${bus[@]}" "${request[@]}" 2>&1)
        if grep -q "uint32 1" <<< "$as_root"; then pass "root may own org.hrmd.Health"; else fail "root RequestName: $as_root"; fi
        kill "$bus_pid" 2> /dev/null; bus_pid=
    else
        fail "dbus-daemon refuses the configuration: $(cat "$busdir/daemon.log")"
    fi
fi

if make --no-print-directory uninstall PREFIX=/usr DESTDIR="$destdir" > /dev/null 2>&1 \
    && [ -z "$(find "$destdir" -type f)" ]; then
    pass "make uninstall removes every installed file"
else
    fail "make uninstall left: $(find "$destdir" -type f | head -5)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
