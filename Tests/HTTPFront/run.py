#!/usr/bin/python3
"""Runs the HTTP front's tests (test_*.py here) against the built hrmd and hrmctl, and prints
"N passed, N failed, N skipped".

Run: /usr/bin/python3 Tests/HTTPFront/run.py [-k PATTERN]
HRMD_BIN_DIR chooses the hrmd and hrmctl to test (default .build/debug); CI=true turns a missing piece
(the binaries, sqlite3, openssl) into a failure instead of a skip. Exits 1 on a failure.
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


class Result(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.passed = 0

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1


def main():
    sys.path.insert(0, HERE)
    loader = unittest.TestLoader()
    if "-k" in sys.argv[1:]:
        loader.testNamePatterns = ["*%s*" % sys.argv[sys.argv.index("-k") + 1]]
    suite = loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    runner = unittest.TextTestRunner(verbosity=2, resultclass=Result, stream=sys.stdout)
    result = runner.run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    reasons = sorted({reason for _, reason in result.skipped})
    for reason in reasons:
        print("skipped: " + reason)
    print("%d passed, %d failed, %d skipped" % (result.passed, failed, len(result.skipped)))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
