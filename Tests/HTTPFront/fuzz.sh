#!/bin/bash
# Fuzzes hrmd's HTTP API with schemathesis from its OpenAPI document: hrmd with two mock straps
# on a free loopback port, a manager's token (so that every route is reached) and an
# application's, then schemathesis against http://127.0.0.1:PORT/api/v1/openapi.json with the
# bearer header and the checks not_a_server_error, status_code_conformance,
# content_type_conformance and response_schema_conformance. hrmd must still run at the end.
#
#   Tests/HTTPFront/fuzz.sh [--max-examples N] [--seconds S]
#
# SCHEMATHESIS (default .build/venv-http-fuzz/bin/schemathesis, made by `make http-fuzz-venv`),
# HRMD_BIN_DIR (default .build/debug). --seconds bounds the whole run (default 600). The examples
# schemathesis found are kept in .build/http-fuzz-examples for the next run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${HRMD_BIN_DIR:-$repo/.build/debug}
schemathesis=${SCHEMATHESIS:-$repo/.build/venv-http-fuzz/bin/schemathesis}
max_examples=100
seconds=600
while [ $# -gt 0 ]; do
	case "$1" in
	--max-examples) max_examples=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	*) echo "usage: $0 [--max-examples N] [--seconds S]" >&2; exit 64 ;;
	esac
done

for program in "$bin/hrmd" "$bin/hrmctl" "$schemathesis"; do
	[ -x "$program" ] || { echo "fuzz.sh: no $program (build it; make http-fuzz-venv makes schemathesis)" >&2; exit 1; }
done

work=$(mktemp -d -t hrmd-http-fuzz.XXXXXX)
hrmd_pid=
cleanup() {
	if [ -n "$hrmd_pid" ] && kill -0 "$hrmd_pid" 2>/dev/null; then
		kill -TERM "$hrmd_pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$hrmd_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$hrmd_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

store=$work/s.sqlite
printf '[http]\nweb = %s\n' "$repo/web" > "$work/hrmd.conf"
"$bin/hrmctl" auth grant hrmd all --store "$store" > /dev/null
manager=$("$bin/hrmctl" auth token create root/fuzz --manager --store "$store" | tail -n 1)
"$bin/hrmctl" auth grant root/fuzz heart-rate --read --store "$store" > /dev/null
"$bin/hrmd" --store "$store" --config "$work/hrmd.conf" --http 127.0.0.1:0 --duration $((seconds + 120)) \
	--sensor mock:id=fuzz-1,hz=2 --sensor mock:id=fuzz-2,hz=2,location=wrist 2> "$work/hrmd.log" &
hrmd_pid=$!

# The port, from hrmd's line "http: listening on http://127.0.0.1:PORT" (bounded: 60 s).
port=
for _ in $(seq 600); do
	port=$(sed -n 's|.*http: listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$work/hrmd.log" | head -n 1)
	[ -n "$port" ] && break
	kill -0 "$hrmd_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$port" ]; then
	echo "fuzz.sh: hrmd did not listen within 60 s:" >&2
	tail -n 20 "$work/hrmd.log" >&2
	exit 1
fi
echo "fuzz.sh: hrmd on port $port; schemathesis for at most ${seconds}s, $max_examples examples per operation"

status=0
# From the temporary directory: schemathesis keeps files of its own in the working directory.
(cd "$work" && timeout --kill-after=10 "$seconds" "$schemathesis" run "http://127.0.0.1:$port/api/v1/openapi.json" \
	--header "Authorization: Bearer $manager" \
	--checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
	--max-examples "$max_examples" --request-timeout 10 --workers 2 --no-color \
	--generation-database "$repo/.build/http-fuzz-examples") || status=$?

if ! kill -0 "$hrmd_pid" 2>/dev/null; then
	echo "fuzz.sh: hrmd is no longer running; its log ends:" >&2
	tail -n 30 "$work/hrmd.log" >&2
	exit 1
fi
if grep -q "$manager" "$work/hrmd.log"; then
	echo "fuzz.sh: the token is in hrmd's log" >&2
	exit 1
fi
if [ "$status" -ne 0 ]; then
	echo "fuzz.sh: schemathesis found failures (exit $status); hrmd's last lines:" >&2
	tail -n 20 "$work/hrmd.log" >&2
	exit "$status"
fi
echo "fuzz.sh: no failures; hrmd still runs"
