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
    from harness import artifacts_dir
    print("artifacts: " + artifacts_dir())
    print("%d passed, %d failed, %d skipped" % (result.passed, failed, len(result.skipped)))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
