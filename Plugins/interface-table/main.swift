import Foundation

/// Reads a D-Bus introspection document and writes the Swift table of its methods:
/// `interface-table INTERFACE.xml OUTPUT.swift`. The document is the one this repository
/// writes (one element per line, arguments with name, type and direction); anything else in
/// it is ignored, and a method or argument line it cannot read is an error.
struct Method {
    var name: String
    var inputs: [(String, String)] = []
    var outputs: [(String, String)] = []
}

func attribute(_ name: String, in line: Substring) -> String? {
    guard let start = line.range(of: "\(name)=\"") else { return nil }
    guard let end = line[start.upperBound...].firstIndex(of: "\"") else { return nil }
    return String(line[start.upperBound..<end])
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("interface-table: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else { fail("usage: interface-table INTERFACE.xml OUTPUT.swift") }
guard let text = try? String(contentsOfFile: arguments[1], encoding: .utf8) else { fail("cannot read \(arguments[1])") }

var methods: [Method] = []
var current: Method?
var inComment = false
for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
    var line = rawLine.drop { $0 == " " }
    if inComment {
        guard let end = line.range(of: "-->") else { continue }
        inComment = false
        line = line[end.upperBound...].drop { $0 == " " }
    }
    if line.hasPrefix("<!--") {
        if line.range(of: "-->") == nil { inComment = true }
        continue
    }
    if line.hasPrefix("<method ") {
        guard current == nil, let name = attribute("name", in: line) else { fail("line \(number + 1): a method it cannot read") }
        if line.hasSuffix("/>") { methods.append(Method(name: name)) } else { current = Method(name: name) }
    } else if line.hasPrefix("<arg "), current != nil {
        guard let name = attribute("name", in: line), let type = attribute("type", in: line),
              let direction = attribute("direction", in: line), direction == "in" || direction == "out"
        else { fail("line \(number + 1): an argument needs name, type and direction in or out") }
        if direction == "in" { current!.inputs.append((name, type)) } else { current!.outputs.append((name, type)) }
    } else if line.hasPrefix("</method>") {
        guard let method = current else { fail("line \(number + 1): </method> outside a method") }
        methods.append(method)
        current = nil
    }
}
guard current == nil else { fail("the document ends inside method \(current!.name)") }
guard !methods.isEmpty else { fail("no methods in \(arguments[1])") }

func pairs(_ arguments: [(String, String)]) -> String {
    arguments.isEmpty ? "[]" : "[" + arguments.map { "(\"\($0.0)\", \"\($0.1)\")" }.joined(separator: ", ") + "]"
}

var swift = """
    // Generated from the interface document by interface-table; edit the document, not this.
    import SDBus

    extension HealthInterface {
        /// The methods of the interface document, in its order.
        static let methods: [DBusInterfaceDescription.Method] = [

    """
for method in methods {
    swift += "        .init(name: \"\(method.name)\", inputs: \(pairs(method.inputs)), outputs: \(pairs(method.outputs))),\n"
}
swift += "    ]\n}\n"
do { try swift.write(toFile: arguments[2], atomically: true, encoding: .utf8) } catch { fail("cannot write \(arguments[2]): \(error)") }
