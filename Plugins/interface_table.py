#!/usr/bin/env python3
"""Reads a D-Bus introspection document and writes the Swift table of its methods:
interface_table.py INTERFACE.xml OUTPUT.swift. The InterfaceTablePlugin build tool runs it, so
the service's vtable and the client's coding are made from the document, the one place a
method's arguments are written down. A method or argument it cannot read is an error."""
import sys
import xml.etree.ElementTree as ElementTree


def fail(message):
    sys.exit(f"interface_table.py: {message}")


def main():
    if len(sys.argv) != 3:
        fail("usage: interface_table.py INTERFACE.xml OUTPUT.swift")
    try:
        root = ElementTree.parse(sys.argv[1]).getroot()
    except (OSError, ElementTree.ParseError) as error:
        fail(f"cannot read {sys.argv[1]}: {error}")
    interfaces = root.findall("interface")
    if len(interfaces) != 1:
        fail(f"{sys.argv[1]} must describe one interface, not {len(interfaces)}")
    lines = []
    for method in interfaces[0].findall("method"):
        name = method.get("name")
        if not name or not name.isidentifier():
            fail(f"a method without a usable name: {name!r}")
        arguments = {"in": [], "out": []}
        for argument in method.findall("arg"):
            direction, arg_name, signature = argument.get("direction", "in"), argument.get("name"), argument.get("type")
            if direction not in arguments or not arg_name or not signature:
                fail(f"{name}: an argument needs a name, a type and the direction in or out")
            arguments[direction].append(f'("{arg_name}", "{signature}")')
        inputs = "[" + ", ".join(arguments["in"]) + "]"
        outputs = "[" + ", ".join(arguments["out"]) + "]"
        lines.append(f'        .init(name: "{name}", inputs: {inputs}, outputs: {outputs}),')
    if not lines:
        fail(f"no methods in {sys.argv[1]}")
    swift = (
        "// Generated from the interface document by Plugins/interface_table.py; edit the document, not this.\n"
        "import SDBus\n\n"
        "extension HealthInterface {\n"
        "    /// The methods of the interface document, in its order.\n"
        "    static let methods: [DBusInterfaceDescription.Method] = [\n"
        + "\n".join(lines) + "\n    ]\n}\n"
    )
    with open(sys.argv[2], "w") as output:
        output.write(swift)


if __name__ == "__main__":
    main()
