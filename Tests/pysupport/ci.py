"""Whether a missing piece skips a test or fails it.

On a developer's machine a test whose tools are missing is skipped, with the reason; in CI
(CI=true) every test must run, so the same reason fails it instead.

    missing = requirements()          # None, or what is missing
    require(missing)                  # nothing when None; else skip_or_fail(missing)
"""

import os
import unittest


def in_ci():
    """True under CI=true: a missing piece is then a failure, not a skip."""
    return os.environ.get("CI") == "true"


def skip_or_fail(reason):
    """Skip for a missing piece; under CI=true a missing piece is a failure."""
    if in_ci():
        raise AssertionError("missing in CI: " + reason)
    raise unittest.SkipTest(reason)


def require(missing):
    """skip_or_fail(MISSING) when MISSING (a reason) is set; nothing when it is None."""
    if missing:
        skip_or_fail(missing)
