#!/usr/bin/python3
"""Runs the HTTP front's tests (test_*.py here) against the built hrmd and hrmctl, and prints
"N passed, N failed, N skipped".

Run: /usr/bin/python3 Tests/HTTPFront/run.py [-k PATTERN]
HRMD_BIN_DIR chooses the hrmd and hrmctl to test (default .build/debug); CI=true turns a missing piece
(the binaries, sqlite3, openssl) into a failure instead of a skip. Exits 1 on a failure.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "pysupport"))
import suite  # noqa: E402


if __name__ == "__main__":
    sys.exit(suite.run(HERE))
