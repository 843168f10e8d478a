"""Where the built binaries under test are: HRMD_BIN_DIR, else the repository's .build/debug."""

import os
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def bin_dir():
    """The directory of the hrmd and hrmctl under test."""
    return os.environ.get("HRMD_BIN_DIR", os.path.join(REPO, ".build", "debug"))


def binary(name):
    """The path of one built program (hrmd, hrmctl) in bin_dir()."""
    return os.path.join(bin_dir(), name)


def hrmctl(*arguments, timeout=60, check=True):
    """Runs the built hrmctl with ARGUMENTS (no stdin): its CompletedProcess, text. CHECK: an exit
    status other than 0 raises an AssertionError with hrmctl's stderr."""
    done = subprocess.run([binary("hrmctl")] + list(arguments), capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    if check and done.returncode != 0:
        raise AssertionError("hrmctl %s exited %d: %s" % (" ".join(arguments), done.returncode, done.stderr.strip()))
    return done
