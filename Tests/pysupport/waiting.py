"""Bounded waits on a condition the test cannot be told about (a row count, a file, a bus name,
a port): the condition is checked again every INTERVAL until it holds or TIMEOUT passes. Where
the event itself can be waited on (a log line, a message, a reply), wait on it instead
(processes.Output, a Condition): these are for state that only polling can see.

    wait_for(lambda: os.path.exists(path), 10)                 # its value, or False at the bound
    wait_until(lambda: store.count() >= 5, 30, "5 samples")    # its value, or AssertionError
"""

import time

INTERVAL_S = 0.05


def wait_for(predicate, timeout, interval=INTERVAL_S):
    """PREDICATE's value once it is true; False when TIMEOUT passes first."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def wait_until(predicate, timeout, what, interval=INTERVAL_S, retry_on=()):
    """PREDICATE's value once it is true; an AssertionError naming WHAT when TIMEOUT passes first.
    An exception of a class in RETRY_ON (a page mid-navigation, a file mid-write) counts as not
    yet and is named in the failure."""
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except retry_on as error:
            last_error = error
        if time.monotonic() >= deadline:
            raise AssertionError("gave up after %.1f s waiting for %s%s"
                                 % (timeout, what, " (last error: %s)" % last_error if last_error else ""))
        time.sleep(interval)
