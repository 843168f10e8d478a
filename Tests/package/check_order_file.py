#!/usr/bin/env python3
"""Fails when Sources/hrmd/hrmd.order, the order of hrmd's functions in its release link
(bench/hrmd-order-file.sh makes it), has gone stale: when too few of the functions it lists
from hrmd's own modules are still functions of the built hrmd.

The linker skips names that no longer exist and puts functions it does not list after the
listed ones, so the file tolerates some drift; once much of hrmd's own code has been renamed,
moved or removed since the profile, the functions that run are no longer laid out together.
Only names of this package's modules count (Sources/*: the Swift runtime's and the other
packages' come and go with their versions), and only those a debug build names the same way
(specialisations, merged functions, outlined copies and the parts of async functions are left
out), so the debug build the tests use is enough: `nm` on it, no release build, no profile.

    Tests/package/check_order_file.py [HRMD]     # default .build/debug/hrmd (or $HRMD_BIN_DIR/hrmd)

Prints the share of listed names found; exit status 1 below MIN_SHARE, 2 when hrmd is not built."""
import os
import re
import subprocess
import sys

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORDER_FILE = os.path.join(PACKAGE_DIR, "Sources", "hrmd", "hrmd.order")
MIN_SHARE = 0.95

# What only an optimised build names the same way: generic (Tg, TG) and function signature
# (Tf) specialisations, merged functions (Tm), outlined copies and destroys
# (Wo…), partial-application forwarders (TA), and the parts an async function is split into at
# its suspension points (TQ…_, TY…_), which follow the optimiser's inlining; and names with a
# suffix the compiler or the profiler adds to tell copies apart ('2, .5).
OPTIMISED_ONLY = re.compile(r"T[gG][0-9]|Tf[0-9a-zA-Z]|Tm$|Tm_|WO[a-z]|TA$|T[QY][0-9]*_|['.]")


def package_modules():
    sources = os.path.join(PACKAGE_DIR, "Sources")
    return {name for name in os.listdir(sources) if os.path.isdir(os.path.join(sources, name))}


def module_of(symbol):
    """The module a Swift symbol ($s…) starts in, or None."""
    match = re.match(r"\$s(\d+)", symbol)
    if not match:
        return None
    length = int(match.group(1))
    start = match.end()
    return symbol[start:start + length]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("HRMD_BIN_DIR", os.path.join(PACKAGE_DIR, ".build", "debug")), "hrmd")
    if not os.path.exists(binary):
        print(f"check-order: {binary} is not built (swift build)", file=sys.stderr)
        return 2
    nm = subprocess.run(["nm", "--defined-only", "--format=just-symbols", binary], check=True, capture_output=True, text=True).stdout
    defined = set(nm.split())
    modules = package_modules()
    with open(ORDER_FILE) as handle:
        listed = [line.strip() for line in handle if line.strip() and not line.startswith("#")]
    own = [name for name in listed if module_of(name) in modules and not OPTIMISED_ONLY.search(name)]
    if not own:
        print(f"check-order: {ORDER_FILE} lists none of hrmd's own functions")
        return 1
    found = sum(1 for name in own if name in defined)
    share = found / len(own)
    line = f"{found} of the {len(own)} functions of hrmd's modules it lists are in {os.path.relpath(binary, PACKAGE_DIR)} ({share:.0%}; at least {MIN_SHARE:.0%})"
    if share < MIN_SHARE:
        print(f"check-order: Sources/hrmd/hrmd.order is stale: only {line}; remake it: make release && bash bench/hrmd-order-file.sh && make release")
        return 1
    print(f"check-order: ok ({line})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
