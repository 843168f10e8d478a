import ANTDecoding
import Logging
import SensorBackends
import SensorDecoding
import TestSupport
import Testing

@Suite("tty backends on a real pty")
struct TTYSensorTests {
    let logger = Logger(label: "test")

    @Test("an ANT stick with two straps: both stream as their own devices, through garbage and bad checksums")
    func antStick() async throws {
        let terminal = try PseudoTerminal()
        let stick = FakeANTStick(
            terminal: terminal, straps: [.init(deviceNumber: 1001, rrTicks: 1024), .init(deviceNumber: 2002, rrTicks: 768)],
            hz: 8, garbageEvery: 5)
        stick.start()
        defer { stick.stop() }
        let collector = FrameCollector()
        let sensor = ANTStickSensor(settings: .init(path: terminal.devicePath, channels: 3), logger: logger)
        let streamed = await withTaskGroup(of: Bool.self) { group in
            group.addTask { try? await sensor.run(into: collector.sink); return false }
            let streamed = await collector.wait { frames in
                // Until the third channel is set up too: a busy machine can make the stick retry
                // a command, and the straps stream before the set-up ends.
                Set(frames.filter { $0.kind == .notify }.map(\.device)).count == 2
                    && frames.filter { $0.kind == .notify }.count >= 20
                    && stick.commands.contains(ANTMessage(id: 0x5A, payload: [2, 2, 1]))
            }
            group.cancelAll()
            return streamed
        }
        #expect(streamed)
        let frames = collector.frames
        #expect(Set(frames.map(\.device)) == ["ant-1001", "ant-2002"])
        #expect(frames.filter { $0.kind == .connected }.count == 2)
        for frame in frames where frame.kind == .notify {
            let message = try ANTMessage(frame: frame.value)
            #expect(message.id == ANTMessageID.broadcastData)
        }
        // The set-up went out in order and the third channel was opened with both straps excluded.
        // A command the backend sent again (its answer was late on a busy machine) counts once.
        let sent = stick.commands.map(\.id)
        let commands = sent.indices.filter { $0 == 0 || sent[$0 - 1] != sent[$0] }.map { sent[$0] }
        #expect(Array(commands.prefix(8)) == [0x4A, 0x46, 0x42, 0x51, 0x43, 0x45, 0x66, 0x4B])
        #expect(stick.commands.contains(ANTMessage(id: 0x5A, payload: [2, 2, 1])))
        #expect(collector.statuses.contains { $0.device == "ant-2002" && $0.state == .streaming })
    }

    @Test("a stick that never answers: the backend backs off and retries")
    func silentStick() async throws {
        let terminal = try PseudoTerminal()
        let collector = FrameCollector()
        let sensor = ANTStickSensor(settings: .init(path: terminal.devicePath), logger: logger)
        let backedOff = await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await sensor.run(into: collector.sink) }
            let backedOff = await collector.status { $0.state.name == "backing-off" }
            group.cancelAll()
            return backedOff
        }
        let status = try #require(backedOff)
        #expect(status.device == SensorID("ant:\(terminal.devicePath)"))
        #expect(status.state.detail?.contains("did not answer a reset") == true, "\(status.state)")
        #expect(collector.frames.isEmpty)
    }

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
