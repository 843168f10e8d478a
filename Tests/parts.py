#!/usr/bin/env python3
"""Runs the parts of `make test` (each a make target), some at once, and tells what each cost.

    parts.py [--jobs N] [--log-dir DIR] PART [PART ...]

A PART is a make target, run as `make --no-print-directory PART` from the repository's root.
Parts start in the order given, at most N at a time (HRMD_TEST_JOBS, default: one more than the
machine's cores, since most parts spend their time waiting on daemons, buses and servers rather
than computing). A PART written `+TARGET` runs alone before the others start (for parts that
take the build folder's lock, such as `swift package` commands); one written `^TARGET` runs
alone after the others have ended (for a part that needs the whole machine, such as the
emulated Bluetooth VM, whose radio timing fails under others' load).

Each part's output goes to DIR/PART.log (default .build/test-parts) and is printed whole when
the part ends, under a header line, so that parts running side by side never interleave their
lines. At the end: a table of the parts with their status, wall time and the tests each
counted (read from its runner's closing line), the whole run's wall time, and one closing line
"test: N passed, N failed" over every part's tests (a part whose runner prints no count counts
as one). Exits 1 when a part failed.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The closing lines of the runners the parts use, each giving (passed, failed).
COUNTS = [
    # Swift Testing: "✔ Test run with 867 tests in 52 suites passed after 300.1 seconds."
    (re.compile(r"Test run with (\d+) tests? (?:in \d+ suites? )?passed"), lambda m: (int(m[1]), 0)),
    # "✘ Test run with 867 tests in 52 suites failed after … with 2 issues."
    (re.compile(r"Test run with (\d+) tests? (?:in \d+ suites? )?failed"), lambda m: (int(m[1]), None)),
    # XCTest: "Executed 12 tests, with 0 failures"
    (re.compile(r"Executed (\d+) tests?, with (\d+) failures?"), lambda m: (int(m[1]) - int(m[2]), int(m[2]))),
    # The plain line the Python suites and scripts print: "[word: ]N passed, N failed[, N skipped]"
    (re.compile(r"^(?:[\w.-]+: )?(\d+) passed, (\d+) failed"), lambda m: (int(m[1]), int(m[2]))),
]


def counted(log: str) -> tuple[int, int] | None:
    """The (passed, failed) counts of every closing line in a part's output, added up."""
    passed = failed = 0
    found = False
    swift_failed_total = None
    for line in log.splitlines():
        text = line.strip()
        for pattern, read in COUNTS:
            match = pattern.search(text)
            if not match:
                continue
            found = True
            got_passed, got_failed = read(match)
            if got_failed is None:
                # Swift Testing's failed line gives the total only; its issues are the failures.
                swift_failed_total = got_passed
            else:
                passed += got_passed
                failed += got_failed
            break
    if swift_failed_total is not None:
        failed += 1
        passed += max(swift_failed_total - 1, 0)
    return (passed, failed) if found else None


class Part:
    def __init__(self, target: str, alone: bool, log_dir: str):
        self.target = target
        self.alone = alone
        self.log_path = os.path.join(log_dir, f"{target}.log")
        self.process: subprocess.Popen | None = None
        self.began = 0.0
        self.seconds = 0.0
        self.status: int | None = None

    def start(self) -> None:
        self.began = time.monotonic()
        log = open(self.log_path, "w")
        # A session of its own, so that an interrupt ends the part's whole process tree.
        self.process = subprocess.Popen(
            ["make", "--no-print-directory", self.target], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()

    def finished(self) -> bool:
        assert self.process
        status = self.process.poll()
        if status is None:
            return False
        self.status = status
        self.seconds = time.monotonic() - self.began
        return True

    def output(self) -> str:
        with open(self.log_path, errors="replace") as file:
            return file.read()

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)


def report(part: Part) -> None:
    verdict = "ok" if part.status == 0 else f"FAILED (exit {part.status})"
    print(f"\n==== {part.target}: {verdict} in {part.seconds:.0f} s ====", flush=True)
    sys.stdout.write(part.output())
    print(f"==== end of {part.target} ====", flush=True)


def minutes(seconds: float) -> str:
    return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("HRMD_TEST_JOBS", (os.cpu_count() or 1) + 1)))
    parser.add_argument("--log-dir", default=os.path.join(ROOT, ".build", "test-parts"))
    parser.add_argument("parts", nargs="+")
    arguments = parser.parse_args()
    os.makedirs(arguments.log_dir, exist_ok=True)
    parts = [Part(name.lstrip("+^"), name[:1] in "+^", arguments.log_dir) for name in arguments.parts]
    last = {name.lstrip("^") for name in arguments.parts if name.startswith("^")}
    jobs = max(1, arguments.jobs)
    began = time.monotonic()

    def interrupted(number, _frame):
        for part in parts:
            part.stop()
        raise SystemExit(128 + number)

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)

    def alone(part: Part) -> None:
        print(f"test: {part.target} (alone)", flush=True)
        part.start()
        assert part.process
        part.process.wait()
        part.finished()
        report(part)

    for part in (p for p in parts if p.alone and p.target not in last):
        alone(part)
    waiting = [p for p in parts if not p.alone]
    running: list[Part] = []
    print(f"test: {len(waiting)} parts, {jobs} at a time", flush=True)
    while waiting or running:
        while waiting and len(running) < jobs:
            part = waiting.pop(0)
            print(f"test: {part.target} started", flush=True)
            part.start()
            running.append(part)
        # Each part is bounded by its own make target's timeout; this only waits for the next end.
        try:
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:
            pass
        for part in [p for p in running if p.finished()]:
            running.remove(part)
            report(part)
    for part in (p for p in parts if p.target in last):
        alone(part)

    total = time.monotonic() - began
    passed = failed = 0
    print("\ntest: time per part (parts ran side by side, so the parts add up to more than the whole)")
    print(f"  {'PART':<20} {'STATUS':<8} {'TIME':>6}  TESTS")
    for part in sorted(parts, key=lambda p: -p.seconds):
        counts = counted(part.output())
        part_passed, part_failed = counts if counts else ((1, 0) if part.status == 0 else (0, 1))
        if part.status != 0 and part_failed == 0:
            part_failed = 1
        passed += part_passed
        failed += part_failed
        tests = f"{part_passed} passed, {part_failed} failed" if counts else "-"
        status = "ok" if part.status == 0 else "FAILED"
        print(f"  {part.target:<20} {status:<8} {minutes(part.seconds):>6}  {tests}")
    print(f"  {'whole run':<20} {'':<8} {minutes(total):>6}  ({jobs} at a time)")
    failed_parts = [p.target for p in parts if p.status != 0]
    if failed_parts:
        print(f"test: FAILED: {' '.join(failed_parts)} (logs in {os.path.relpath(arguments.log_dir, ROOT)})")
    print(f"test: {passed} passed, {failed} failed", flush=True)
    return 1 if failed_parts else 0


if __name__ == "__main__":
    sys.exit(main())
