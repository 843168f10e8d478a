#!/usr/bin/env python3
"""Checks the shape of the product's manifest, from `swift package dump-package`:

- the client library (HealthClient) depends on at most CLIENT_MODULE_LIMIT modules, counting
  every module it links, in this package and in others;
- no target under Sources/ depends on a target outside Sources/ (test support, benchmarks);
- no target has unsafe flags, so any package may depend on this one;
- the products are what users link and nothing more: hrmd, hrmctl and HealthClient (the
  benchmarks' library products exist only under HRMD_BENCHMARKS=1, which this check unsets);
- every dependency a target declares is imported by one of its files (the compiler's
  `--explicit-target-dependency-import-check` checks the other way: nothing imported undeclared).

One line per problem; exit status 1 when there is one."""
import glob
import json
import os
import re
import subprocess
import sys

CLIENT = "HealthClient"
# The model, the requests with the sample JSON shape every front writes (and JSONLines, the one
# file that writes JSON), their D-Bus coding, sd-bus, units and times.
CLIENT_MODULE_LIMIT = 9
PRODUCTS = ["hrmd", "hrmctl", CLIENT]


def manifest():
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            return json.load(f)
    environment = {key: value for key, value in os.environ.items() if key != "HRMD_BENCHMARKS"}
    out = subprocess.run(
        ["swift", "package", "dump-package"], check=True, capture_output=True, text=True, env=environment).stdout
    return json.loads(out)


def dependencies(target):
    """(kind, name) of each dependency: ("target", NAME) in this package, ("product", NAME) elsewhere."""
    for dependency in target.get("dependencies", []):
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                name = dependency[kind][0]
                yield ("product" if kind == "product" else "target", name)


def main():
    package = manifest()
    targets = {t["name"]: t for t in package["targets"]}
    problems = []

    products = [product["name"] for product in package["products"]]
    if sorted(products) != sorted(PRODUCTS):
        problems.append(f"the products are {', '.join(products)}; users link only {', '.join(PRODUCTS)}")

    # The client's closure: in-package modules by name, other packages' products by name.
    seen, stack = set(), [("target", CLIENT)]
    while stack:
        kind, name = stack.pop()
        if (kind, name) in seen:
            continue
        seen.add((kind, name))
        if kind == "target" and name in targets:
            stack.extend(dependencies(targets[name]))
    linked = sorted(f"{name}" for kind, name in seen if name != CLIENT)
    if len(linked) > CLIENT_MODULE_LIMIT:
        problems.append(f"{CLIENT} depends on {len(linked)} modules, more than {CLIENT_MODULE_LIMIT}: {', '.join(linked)}")

    def path(target):
        if target.get("path"):
            return target["path"]
        return ("Tests/" if target["type"] == "test" else "Sources/") + target["name"]

    for target in package["targets"]:
        if target["type"] in ("test", "plugin"):
            continue
        if path(target).startswith("Sources/"):
            for kind, name in dependencies(target):
                if kind == "target" and name in targets and not path(targets[name]).startswith("Sources/") and targets[name]["type"] != "system-target":
                    problems.append(f"{target['name']} (Sources/) depends on {name} ({path(targets[name])})")
        for setting in target.get("settings", []):
            if "unsafeFlags" in json.dumps(setting):
                problems.append(f"{target['name']} has unsafe flags: {json.dumps(setting)}")

    # Product names that differ from the module they provide.
    module_of_product = {"swift-argument-parser": "ArgumentParser"}
    for target in package["targets"]:
        if target["type"] in ("system-target", "plugin", "binary"):
            continue
        imports = set()
        for source in glob.glob(path(target) + "/**/*.swift", recursive=True):
            with open(source) as f:
                for line in f:
                    match = re.match(r"\s*(?:@\w+(?:\([^)]*\))? )*(?:(?:public|package|internal|fileprivate|private) )?import (?:(?:struct|class|enum|func|protocol|typealias) )?(\w+)", line)
                    if match:
                        imports.add(match.group(1))
        for kind, name in dependencies(target):
            if kind == "target" and name in targets and targets[name]["type"] == "plugin":
                continue
            if module_of_product.get(name, name) not in imports:
                problems.append(f"{target['name']} declares {name} but none of its files imports it")

    for problem in problems:
        print(f"check-package: {problem}")
    if not problems:
        print(f"check-package: ok ({CLIENT} depends on {len(linked)} modules: {', '.join(linked)})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
