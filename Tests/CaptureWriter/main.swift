// capture-writer DIR: writes the btsnoop captures the tests build (Tests/Support/StrapCapture)
// into DIR, each with what Wireshark must find in it, for Tests/captures/check-captures.sh:
//   NAME.btsnoop          the capture
//   NAME.att.expected     its notifications and reads, as the script's tshark query prints them
//   NAME.links.expected   its LE connection and disconnection events, likewise
//   NAME.frames.expected  how many records tshark must read
import BluetoothWire
import Foundation
import TestSupport

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: capture-writer DIR\n".utf8))
    exit(64)
}
let directory = CommandLine.arguments[1]

func write(_ name: String, _ capture: StrapCapture, cutting: Int = 0) throws {
    let session = capture.build()
    let bytes = Array(session.bytes.dropLast(cutting))
    try Data(bytes).write(to: URL(fileURLWithPath: "\(directory)/\(name).btsnoop"))
    let expectation = TSharkExpectation(capture: capture, session: session, whole: cutting == 0)
    try expectation.attRows.map { $0 + "\n" }.joined().write(toFile: "\(directory)/\(name).att.expected", atomically: true, encoding: .utf8)
    try expectation.linkRows.map { $0 + "\n" }.joined().write(toFile: "\(directory)/\(name).links.expected", atomically: true, encoding: .utf8)
    let frames = cutting == 0 ? session.builder.recordCount : session.builder.recordCount - 1
    try "\(frames)\n".write(toFile: "\(directory)/\(name).frames.expected", atomically: true, encoding: .utf8)
}

do {
    try write("strap-h4", StrapCapture(datalink: .uart))
    try write("strap-h1", StrapCapture(datalink: .hci))
    var monitor = StrapCapture(datalink: .monitor)
    monitor.enhancedConnection = true
    try write("strap-monitor", monitor)
    let late = StrapCapture.lateStart(datalink: .uart)
    try write("after-discovery", late)
    // The last record (the disconnection) cut in the middle of its data.
    try write("truncated", StrapCapture(datalink: .uart), cutting: 3)
} catch {
    FileHandle.standardError.write(Data("capture-writer: \(error)\n".utf8))
    exit(1)
}
