#!/usr/bin/python3
"""Runs the pages' tests (test_*.py here) and prints "N passed, N failed, N skipped".

Run: /usr/bin/python3 Tests/web/run.py [-k PATTERN]
They start the built hrmd with mock straps and its HTTP front, and drive Debian's headless
Chromium (chromium, chromium-driver, python3-selenium; the day view needs libjs-dygraphs).
HRMD_BIN_DIR chooses the hrmd and hrmctl (default .build/debug); screenshots and hrmd's logs go
to HRMD_TEST_ARTIFACTS (default .build/test-artifacts/web). CI=true turns a missing piece into a
failure instead of a skip. Exits 1 on a failure.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "pysupport"))
import suite  # noqa: E402


def print_artifacts():
    from harness import artifacts_dir
    print("artifacts: " + artifacts_dir())


if __name__ == "__main__":
    sys.exit(suite.run(HERE, after=print_artifacts))
