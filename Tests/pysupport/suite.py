"""What every Python test folder's run.py shares: discover test_*.py in one folder, run them
(-k PATTERN picks some), print each skip reason once and "N passed, N failed, N skipped".
"""

import sys
import unittest


class Result(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.passed = 0

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1


def run(folder, after=None):
    """Runs the tests in `folder`; `after` runs once they ended. The exit status: 1 on a failure."""
    sys.path.insert(0, folder)
    loader = unittest.TestLoader()
    if "-k" in sys.argv[1:]:
        loader.testNamePatterns = ["*%s*" % sys.argv[sys.argv.index("-k") + 1]]
    suite = loader.discover(folder, pattern="test_*.py", top_level_dir=folder)
    runner = unittest.TextTestRunner(verbosity=2, resultclass=Result, stream=sys.stdout)
    result = runner.run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    for reason in sorted({reason for _, reason in result.skipped}):
        print("skipped: " + reason)
    if after:
        after()
    print("%d passed, %d failed, %d skipped" % (result.passed, failed, len(result.skipped)))
    return 0 if result.wasSuccessful() else 1
