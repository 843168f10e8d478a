#!/usr/bin/env python3
"""Checks docs/store-service.md against dbus/org.hrmd.Health1.xml.

The page documents each member of the interface under a `### Name` heading, inside the
section `## Methods`, `## Signals` or `## Properties`, followed by its signature as the
first code span of a line:

    `QuerySamples(s app, s type, x since, x until, u limit) → (aa{sv} samples)`
    `SamplesChanged(s type, t anchor)`
    `Version: s, read`

A method with no out arguments has no `→ (…)` part. Every member of the XML must be there
with the same argument names, signatures and directions (and a property with the same type
and access), and the page must name no member the XML lacks. One line per difference;
exit 1 when there is any.

    Tests/docs/check_interface_doc.py [--xml FILE] [--doc FILE]
"""

import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INTERFACE = "org.hrmd.Health1"
SECTIONS = {"methods": "method", "signals": "signal", "properties": "property"}
ARROW = "→"


def from_xml(path):
    """{(kind, name): description} of the interface's members."""
    tree = ET.parse(path)
    interface = next((i for i in tree.getroot().iter("interface") if i.get("name") == INTERFACE), None)
    if interface is None:
        sys.exit(f"{path}: no interface {INTERFACE}")
    members = {}
    for element in interface:
        kind = element.tag
        if kind not in ("method", "signal", "property"):
            continue
        name = element.get("name")
        if kind == "property":
            members[(kind, name)] = {"type": element.get("type"), "access": element.get("access")}
            continue
        args_in, args_out = [], []
        for arg in element.iter("arg"):
            direction = arg.get("direction") or ("out" if kind == "signal" else "in")
            pair = (arg.get("type"), arg.get("name") or "")
            (args_out if direction == "out" and kind == "method" else args_in).append(pair)
        members[(kind, name)] = {"in": args_in, "out": args_out}
    return members


def parse_args(text, where, problems):
    """`s app, as share` → [("s", "app"), ("as", "share")]."""
    text = text.strip()
    if not text:
        return []
    pairs = []
    for part in text.split(","):
        words = part.split()
        if len(words) != 2:
            problems.append(f"{where}: cannot read the argument '{part.strip()}' (expected 'SIGNATURE name')")
            continue
        pairs.append((words[0], words[1]))
    return pairs


def balanced(text, start):
    """The index just after the parenthesis that closes the one at `start`, or None."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def split_signature(signature):
    """`Name(in…) → (out…)` → (name, in text, out text or None); None when unreadable."""
    match = re.match(r"^(\w+)\(", signature)
    if not match:
        return None
    end = balanced(signature, match.end() - 1)
    if end is None:
        return None
    name, args_in, rest = match.group(1), signature[match.end():end - 1], signature[end:].strip()
    if not rest:
        return name, args_in, None
    if not rest.startswith(ARROW):
        return None
    rest = rest[len(ARROW):].strip()
    if not rest.startswith("(") or balanced(rest, 0) != len(rest):
        return None
    return name, args_in, rest[1:-1]
PROPERTY = re.compile(r"^(?P<name>\w+):\s*(?P<type>\S+),\s*(?P<access>read|write|readwrite)$")


def from_doc(path, problems):
    members = {}
    kind = None
    heading = None
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    in_fence = False
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if line.startswith("## "):
            kind = SECTIONS.get(line[3:].strip().lower())
            heading = None
            continue
        if line.startswith("### ") and kind:
            heading = (line[4:].strip(), number)
            continue
        if heading is None or not line.strip():
            continue
        where = f"{shown(path)}:{number}"
        span = re.match(r"^`([^`]+)`", line.strip())
        name, heading_line = heading
        heading = None  # only the first non-blank line after a heading is the signature
        if span is None:
            problems.append(f"{where}: '### {name}' is not followed by its signature in backticks")
            continue
        signature = span.group(1).strip()
        if kind == "property":
            match = PROPERTY.match(signature)
            if not match:
                problems.append(f"{where}: cannot read the property signature `{signature}` (expected `Name: TYPE, read`)")
                continue
            entry = {"type": match.group("type"), "access": match.group("access")}
        else:
            parts = split_signature(signature)
            if parts is None:
                problems.append(f"{where}: cannot read the {kind} signature `{signature}` (expected `Name(SIG name, …) {ARROW} (SIG name, …)`)")
                continue
            signed, args_in, args_out = parts
            entry = {"in": parse_args(args_in, where, problems), "out": parse_args(args_out or "", where, problems)}
            if kind == "signal" and args_out is not None:
                problems.append(f"{where}: the signal {name} has no out arguments")
        if kind == "property":
            signed = match.group("name")
        if signed != name:
            problems.append(f"{where}: the heading says {name} but the signature says {signed}")
        if (kind, name) in members:
            problems.append(f"{where}: {kind} {name} is documented twice")
        entry["line"] = number
        members[(kind, name)] = entry
    return members


def shown(path):
    """A path as messages name it: relative to the repository when inside it."""
    path = os.path.abspath(path)
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def describe(pairs):
    return ", ".join(f"{sig} {name}" for sig, name in pairs) or "nothing"


def compare(xml_members, doc_members, doc_path):
    problems = []
    doc_name = shown(doc_path)
    for (kind, name), want in sorted(xml_members.items()):
        have = doc_members.get((kind, name))
        if have is None:
            problems.append(f"{doc_name}: the {kind} {name} of {INTERFACE} is not documented")
            continue
        where = f"{doc_name}:{have['line']}"
        if kind == "property":
            if have["type"] != want["type"]:
                problems.append(f"{where}: property {name} has type {have['type']} here, {want['type']} in the XML")
            if have["access"] != want["access"]:
                problems.append(f"{where}: property {name} is {have['access']} here, {want['access']} in the XML")
            continue
        for direction in ("in", "out"):
            if have[direction] != want[direction]:
                label = "arguments" if kind == "signal" else f"{direction} arguments"
                problems.append(
                    f"{where}: {kind} {name} {label}: ({describe(have[direction])}) here, ({describe(want[direction])}) in the XML"
                )
    for (kind, name), have in sorted(doc_members.items()):
        if (kind, name) not in xml_members:
            problems.append(f"{doc_name}:{have['line']}: {kind} {name} is not in the XML")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--xml", default=os.path.join(ROOT, "dbus", "org.hrmd.Health1.xml"))
    parser.add_argument("--doc", default=os.path.join(ROOT, "docs", "store-service.md"))
    args = parser.parse_args()
    problems = []
    doc_members = from_doc(args.doc, problems)
    problems += compare(from_xml(args.xml), doc_members, args.doc)
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(1)
    print(f"{shown(args.doc)} matches {shown(args.xml)}: {len(doc_members)} members")


if __name__ == "__main__":
    main()
