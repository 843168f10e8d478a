#!/usr/bin/env bash
# Builds the libFuzzer targets of Tests/Fuzz/Targets (one per parser) with coverage and
# AddressSanitizer, and runs them from their seed corpora.
#
#   Tests/Fuzz/fuzz.sh [--seconds N | --runs N] [TARGET...]      (default: every target, 60 s each)
#
# The modules are built optimized (as OSS-Fuzz builds: five times the executions of a
# debug build) by SwiftPM in .build/fuzz with -sanitize=fuzzer,address (one flag:
# SwiftPM's --sanitize fuzzer --sanitize address would keep only the last, and lose the
# coverage), archived, and each target is linked against the archive with swiftc, since an
# executable target's own main would replace libFuzzer's. Corpora grow in .build/fuzz/corpus;
# a crash leaves its input in .build/fuzz/crashes and fails the run (exit 1). Prints one line
# per target: executions, coverage (edges), corpus size, time. FUZZ_BUILD names another build
# directory (a smoke run beside a long campaign). A target's TARGET.options file beside its
# source (OSS-Fuzz's convention) adds libFuzzer flags, one per line, # for comments.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=${FUZZ_BUILD:-.build/fuzz}
limit=(-max_total_time=60)
targets=()
while [ $# -gt 0 ]; do
    case $1 in
        --seconds) limit=(-max_total_time="$2"); shift 2 ;;
        --runs) limit=(-runs="$2"); shift 2 ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "fuzz.sh: unknown option $1" >&2; exit 64 ;;
        *) targets+=("$1"); shift ;;
    esac
done
if [ ${#targets[@]} -eq 0 ]; then
    for file in Tests/Fuzz/Targets/*.swift; do targets+=("$(basename "$file" .swift)"); done
fi

# The modules every target may import, built once with coverage and AddressSanitizer.
for module in Recordings HealthWire ANTDecoding CommandSupport HRMConfiguration SeriesCoding PMDDecoding; do
    swift build -c release --scratch-path "$build" -Xswiftc -sanitize=fuzzer,address -Xswiftc -g --target "$module" >"$build.log" 2>&1 \
        || { cat "$build.log" >&2; exit 1; }
done
# Every library module's objects (no executable's, no test suite's) in one archive: the
# linker takes only what a target needs.
archive=$build/libhrmd-fuzz.a
rm -f "$archive"
find "$build/release/" -name '*.o' -path '*.build/*' \
    ! -path '*Tests.build/*' ! -path '*-tool.build/*' \
    ! -path '*/hrmd.build/*' ! -path '*/hrmctl.build/*' \
    ! -path '*/hotplug-probe.build/*' ! -path '*/capture-writer.build/*' -print0 \
    | xargs -0 ar rcs "$archive"

seeds_for() {
    local target=$1 corpus=$2
    mkdir -p "$corpus"
    if [ -d "Tests/Fuzz/seeds/$target" ]; then cp Tests/Fuzz/seeds/"$target"/* "$corpus"/; fi
    case $target in
        fit) cp Tests/FITDecodingTests/Fixtures/*.fit "$corpus"/ ;;
        trace)
            # The start of each recorded trace: the header and its first frames of every kind.
            for file in Tests/fixtures/old-stores/traces/*.jsonl Tests/fixtures/old-stores/v*/mock-session.trace.jsonl; do
                head -n 40 "$file" >"$corpus/$(echo "$file" | tr / -)"
            done ;;
        btsnoop)
            # make test's build-tests built it: building it again would wait for .build's lock,
            # which a release build beside this run (check-service's install) holds for minutes.
            if [ ! -x .build/debug/capture-writer ]; then
                swift build --product capture-writer >"$build.log" 2>&1 || { cat "$build.log" >&2; exit 1; }
            fi
            local captures
            captures=$(mktemp -d)
            .build/debug/capture-writer "$captures"
            cp "$captures"/*.btsnoop "$corpus"/
            rm -rf "$captures" ;;
    esac
}

# The C modules the Swift modules import (system libraries, SwiftPM's C targets, GRDB's SQLite).
module_maps=()
for map in Sources/C*/module.modulemap "$build"/release/*.build/module.modulemap \
    "$build"/checkouts/swift-system/Sources/CSystem/include/module.modulemap \
    "$build"/checkouts/GRDB.swift/Sources/GRDBSQLite/module.modulemap; do
    [ -f "$map" ] && module_maps+=(-Xcc -fmodule-map-file="$map")
done

failed=0
mkdir -p "$build/bin" "$build/crashes"
for target in "${targets[@]}"; do
    source=Tests/Fuzz/Targets/$target.swift
    [ -f "$source" ] || { echo "fuzz.sh: no target $target" >&2; exit 64; }
    binary=$build/bin/fuzz-$target
    swiftc -O -sanitize=fuzzer,address -parse-as-library -g -I "$build/release/Modules" "${module_maps[@]}" "$source" "$archive" \
        -lsystemd -ludev -lsqlite3 -o "$binary" 2> >(grep -v 'Cannot export local symbol\|mktemp' >&2)
    corpus=$build/corpus/$target
    seeds_for "$target" "$corpus"
    log=$build/$target.log
    options=()
    if [ -f "Tests/Fuzz/Targets/$target.options" ]; then
        while read -r flag; do options+=("$flag"); done < <(grep -v '^[[:space:]]*\(#\|$\)' "Tests/Fuzz/Targets/$target.options")
    fi
    start=$(date +%s)
    # Swift's own crash handler would stand in the sanitizer's way.
    if SWIFT_BACKTRACE=enable=no "$binary" "$corpus" "${limit[@]}" "${options[@]}" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$build/crashes/$target-" >"$log" 2>&1; then
        status=ok
    else
        status="CRASH (input in $build/crashes, log $log)"
        failed=1
    fi
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    edges=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
    files=$(find "$corpus" -type f | wc -l)
    printf '%-8s %s: %s executions, %s edges covered, corpus %s files, %s s\n' \
        "$target" "$status" "$runs" "$edges" "$files" "$(( $(date +%s) - start ))"
done
exit $failed
