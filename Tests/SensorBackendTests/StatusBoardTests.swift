import Logging
import SensorBackend
import SensorFrames
import SensorTestSupport
import Synchronization
import Testing

@Suite("Status board")
struct StatusBoardTests {
    /// Keeps each log line with its level.
    private final class LogLines: Sendable {
        private let lines = Mutex<[(Logger.Level, String)]>([])
        var all: [(Logger.Level, String)] { lines.withLock { $0 } }
        func append(_ level: Logger.Level, _ message: String) { lines.withLock { $0.append((level, message)) } }

        var logger: Logger { Logger(label: "test") { _ in Handler(lines: self) } }

        struct Handler: LogHandler {
            let lines: LogLines
            var logLevel: Logger.Level = .trace
            var metadata: Logger.Metadata = [:]
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) { lines.append(event.level, event.message.description) }
        }
    }

    private let strap: SensorID = "AA:BB:CC:DD:EE:01"
    private let other: SensorID = "AA:BB:CC:DD:EE:02"

    @Test("a repeated state is reported once; a note rides on every later report, and a changed note is a change")
    func notesRideOnReports() {
        let collector = FrameCollector()
        let board = StatusBoard(sink: collector.sink, transport: .ble, logger: LogLines().logger)
        board.report(strap, .streaming)
        board.report(strap, .streaming)
        #expect(collector.statuses.map(\.note) == [nil])
        board.note(strap, "links end at 30 s")
        #expect(collector.statuses.count == 1, "a note alone is not a report")
        board.report(strap, .streaming)
        board.report(strap, .streaming)
        board.report(strap, .connecting)
        board.report(other, .connecting)
        #expect(collector.statuses.map(\.state) == [.streaming, .streaming, .connecting, .connecting])
        #expect(collector.statuses.map(\.note) == [nil, "links end at 30 s", "links end at 30 s", nil])
        #expect(collector.statuses.allSatisfy { $0.transport == .ble })
        board.note(strap, nil)
        board.report(strap, .connecting)
        #expect(collector.statuses.last?.state == .connecting && collector.statuses.last?.note == nil)
        #expect(collector.statuses.count == 5)
    }

    @Test("a note is logged once, as a warning, when set; its withdrawal once, as info")
    func notesAreLoggedOnce() {
        let lines = LogLines()
        let board = StatusBoard(sink: FrameCollector().sink, transport: .ble, logger: lines.logger)
        board.note(strap, nil)
        board.note(strap, "links end at 30 s")
        board.note(strap, "links end at 30 s")
        board.note(strap, nil)
        board.note(strap, nil)
        #expect(lines.all.map(\.0) == [.warning, .info])
        #expect(lines.all.map(\.1) == ["\(strap): links end at 30 s", "\(strap): no longer holds: links end at 30 s"])
    }

    @Test("a device with only a note is among those a state for every sensor goes to")
    func reportAllReachesNotedDevices() {
        let collector = FrameCollector()
        let board = StatusBoard(sink: collector.sink, transport: .ble, logger: LogLines().logger)
        board.note(strap, "links end at 150 s")
        board.reportAll(.waiting(reason: "no system bus"), including: [other])
        #expect(collector.statuses.map(\.device) == [strap, other])
        #expect(collector.statuses.map(\.note) == ["links end at 150 s", nil])
    }
}
