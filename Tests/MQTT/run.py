#!/usr/bin/python3
"""Runs the MQTT publisher's tests (test_*.py here) and prints "N passed, N failed, N skipped".

Run: /usr/bin/python3 Tests/MQTT/run.py [-k PATTERN]
HRMD_BIN_DIR chooses the hrmd and hrmctl to test (default .build/debug); CI=true turns a missing piece
(mosquitto, paho-mqtt, the built binaries) into a failure instead of a skip. Exits 1 on a failure.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "pysupport"))
import suite  # noqa: E402


if __name__ == "__main__":
    sys.exit(suite.run(HERE))
