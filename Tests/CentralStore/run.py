#!/usr/bin/python3
"""Runs the central store's tests (test_*.py here) and prints "N passed, N failed, N skipped".

Run: /usr/bin/python3 Tests/CentralStore/run.py [-k PATTERN]
The tests start PostgreSQL servers of their own (Tests/pysupport/postgres.py; as root the server
runs as uid 65534). CI=true turns a missing piece (PostgreSQL's binaries, psql, setpriv) into a
failure instead of a skip. Exits 1 on a failure.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "pysupport"))
import suite  # noqa: E402


if __name__ == "__main__":
    sys.exit(suite.run(HERE))
