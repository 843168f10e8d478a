import ANTBackend
import ANTDecoding
import Logging
import SensorFrames
import SensorTestSupport
import TestSupport
import Testing

@Suite("the ANT stick backend on a real pty")
struct ANTStickSensorTests {
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
        // Answers given on a pty come at once; a test process starved by the tests beside it may
        // read them seconds late, which the stick's one-second timeout would take for silence.
        let sensor = ANTStickSensor(settings: .init(path: terminal.devicePath, channels: 3, responseTimeout: 20), logger: logger)
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
        // Each strap connected as its own device (a busy machine may stall the stick long
        // enough for a channel to lose its strap and find it again: a second connect, not a third device).
        #expect(Set(frames.filter { $0.kind == .connected }.map(\.device)) == ["ant-1001", "ant-2002"])
        for frame in frames where frame.kind == .notify {
            let message = try ANTMessage(frame: frame.value)
            #expect(message.id == ANTMessageID.broadcastData)
        }
        // The set-up went out in order and the third channel was opened with both straps excluded.
        // A command the backend sent again (its answer was late on a busy machine) counts once,
        // and a set-up that started over (too late an answer ends it) is read from its last reset.
        let sent = stick.commands.map(\.id)
        let deduplicated = sent.indices.filter { $0 == 0 || sent[$0 - 1] != sent[$0] }.map { sent[$0] }
        let commands = deduplicated.lastIndex(of: 0x4A).map { Array(deduplicated[$0...]) } ?? deduplicated
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
}
