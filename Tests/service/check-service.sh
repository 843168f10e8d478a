#!/usr/bin/env bash
# The service as it installs: `make install` into a scratch DESTDIR gives the expected tree,
# the unit passes `systemd-analyze verify` without warnings, and its security exposure
# (`systemd-analyze security --offline`) is at most 2.0. Prints "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAILED: $*"; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
destdir="$scratch/root"

if make --no-print-directory install PREFIX=/usr DESTDIR="$destdir" > "$scratch/install.log" 2>&1; then
    pass "make install PREFIX=/usr DESTDIR=…"
else
    fail "make install: $(tail -5 "$scratch/install.log")"
fi

expected=(
    usr/bin/hrmd usr/bin/hrmctl
    usr/lib/systemd/system/hrmd.service
    usr/lib/sysusers.d/hrmd.conf usr/lib/tmpfiles.d/hrmd.conf
    usr/lib/udev/rules.d/60-hrmd.rules
    etc/hrmd/hrmd.conf.example etc/hrmd/hrmd.conf
    usr/share/man/man8/hrmd.8 usr/share/man/man1/hrmctl.1
    usr/share/bash-completion/completions/hrmd usr/share/bash-completion/completions/hrmctl
    usr/share/zsh/site-functions/_hrmd usr/share/zsh/site-functions/_hrmctl
    usr/share/fish/vendor_completions.d/hrmd.fish usr/share/fish/vendor_completions.d/hrmctl.fish
)
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
    security=$(systemd-analyze security --offline=yes --root="$destdir" "$unit" 2>&1)
    score=$(printf '%s\n' "$security" | sed -n 's/.*Overall exposure level for hrmd.service: \([0-9.]*\).*/\1/p')
    if [ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }'; then
        pass "security exposure $score ≤ 2.0"
    else
        fail "security exposure ${score:-unknown} > 2.0: $(printf '%s\n' "$security" | grep '✗' | head -5)"
    fi
else
    fail "systemd-analyze is not installed"
fi

if make --no-print-directory uninstall PREFIX=/usr DESTDIR="$destdir" > /dev/null 2>&1 \
    && [ -z "$(find "$destdir" -type f)" ]; then
    pass "make uninstall removes every installed file"
else
    fail "make uninstall left: $(find "$destdir" -type f | head -5)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
