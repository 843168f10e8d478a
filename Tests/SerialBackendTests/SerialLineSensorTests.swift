import Logging
import SensorFrames
import SensorTestSupport
import SerialBackend
import TestSupport
import Testing

@Suite("the serial line backend on a real pty")
struct SerialLineSensorTests {
    let logger = Logger(label: "test")

    @Test("a serial sensor's lines become frames, however the bytes are split")
    func serialLines() async throws {
        let terminal = try PseudoTerminal()
        let collector = FrameCollector()
        let sensor = SerialLineSensor(settings: .init(path: terminal.devicePath, baud: 9600, id: "serial-test"), logger: logger)
        let ok = await withTaskGroup(of: Bool.self) { group in
            group.addTask { try? await sensor.run(into: collector.sink); return false }
            // Once the port is open (and its stale input flushed), write split lines.
            _ = await collector.status { $0.state == .searching }
            terminal.write(Array("HR 7".utf8))
            try? await Task.sleep(for: .milliseconds(30))  // not a wait: makes the two writes likely to arrive apart
            terminal.write(Array("2 RR 833\nHR 73\r\n".utf8))
            let first = await collector.wait { $0.filter { $0.kind == .notify }.count >= 2 }
            group.cancelAll()
            return first
        }
        #expect(ok, "statuses: \(collector.statuses.map(\.state))")
        let lines = collector.frames.filter { $0.kind == .notify }.map { String(decoding: $0.value, as: UTF8.self) }
        #expect(lines.prefix(2) == ["HR 72 RR 833", "HR 73"])
        #expect(collector.frames.first?.kind == .connected)
        #expect(collector.frames.allSatisfy { $0.device == "serial-test" && $0.transport == .serial })
        #expect(collector.statuses.contains { $0.state == .streaming })
    }

    @Test("the device going away: a disconnected frame and backing off, never a crash")
    func unplugged() async throws {
        var terminal: PseudoTerminal? = try PseudoTerminal()
        let path = terminal!.devicePath
        let collector = FrameCollector()
        let sensor = SerialLineSensor(settings: .init(path: path, id: "serial-test"), logger: logger)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await sensor.run(into: collector.sink) }
            _ = await collector.status { $0.state == .searching }
            terminal?.write(Array("HR 80\n".utf8))
            _ = await collector.wait { $0.contains { $0.kind == .notify } }
            terminal = nil
            _ = await collector.wait { _ in collector.statuses.contains { $0.state.name == "backing-off" } }
            group.cancelAll()
        }
        #expect(collector.frames.map(\.kind) == [.connected, .notify, .disconnected], "statuses: \(collector.statuses.map(\.state))")
        let backingOff = collector.statuses.first { $0.state.name == "backing-off" }
        #expect(backingOff?.state.detail?.contains("went away") == true, "\(String(describing: backingOff))")
    }

    @Test("a missing device is a backing-off state with the errno, never a crash")
    func missingDevice() async {
        let collector = FrameCollector()
        let sensor = SerialLineSensor(settings: .init(path: "/dev/hrmd-missing-tty"), logger: logger)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await sensor.run(into: collector.sink) }
            _ = await collector.status { _ in true }
            group.cancelAll()
        }
        let status = collector.statuses.first
        #expect(status?.state.name == "backing-off")
        #expect(status?.state.detail?.contains("cannot open /dev/hrmd-missing-tty") == true)
    }
}
