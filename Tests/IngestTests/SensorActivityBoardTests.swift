import HealthModel
import HealthStore
import SensorFrames
import Testing
import Timestamps

@testable import Ingest

@Suite("Sensor activity board")
struct SensorActivityBoardTests {
    let start = Timestamp(microsecondsSinceEpoch: 1_800_000_000_000_000)
    func at(_ seconds: Double) -> Timestamp { start.advanced(bySeconds: seconds) }

    @Test("states keep their since time until they change; frames count and mark the last notification")
    func statesAndFrames() {
        var board = SensorActivityBoard()
        let strap: SensorID = "AA:BB:CC:DD:EE:FF"
        board.note(SensorStatus(time: at(0), transport: .ble, device: strap, state: .connecting))
        board.note(SensorStatus(time: at(1), transport: .ble, device: strap, state: .streaming))
        board.note(SensorStatus(time: at(2), transport: .ble, device: strap, state: .streaming))
        board.count(SensorFrame(time: at(3), transport: .ble, device: strap, kind: .notify, characteristic: .heartRateMeasurement, value: [0, 70]), skipped: 0)
        board.count(SensorFrame(time: at(4), transport: .ble, device: strap, kind: .read, characteristic: .batteryLevel, value: [50]), skipped: 1)
        #expect(board.streamingCount == 1)
        let rows = board.rows(at: at(5), battery: { _ in 50 })
        #expect(rows == [SensorActivity(
            identifier: strap.rawValue, transport: "ble", state: "streaming", since: at(1), battery: 50,
            lastFrame: at(3), frames: 2, skipped: 1, updatedAt: at(5))])
    }

    @Test("rows are due on a change or after the heartbeat, not otherwise")
    func dueness() {
        var board = SensorActivityBoard()
        #expect(board.due(at: at(0)), "never written")
        _ = board.rows(at: at(0), battery: { _ in nil })
        #expect(!board.due(at: at(1)))
        board.note(SensorStatus(time: at(1), transport: .ant, device: "ant-1", state: .searching))
        #expect(board.due(at: at(1)))
        _ = board.rows(at: at(1), battery: { _ in nil })
        #expect(!board.due(at: at(5.9)))
        #expect(board.due(at: at(6)))
    }

    @Test("a sensor heard without a report is streaming; replayed FIT frames are not sensors; stopping marks all")
    func implicitAndStopped() {
        var board = SensorActivityBoard()
        board.count(SensorFrame(time: at(0), transport: .mock, device: "mock-1", kind: .notify), skipped: 0)
        board.count(SensorFrame(time: at(0), transport: .fit, device: "fit", kind: .notify), skipped: 0)
        board.note(SensorStatus(time: at(0), transport: .ble, device: "ble", state: .waiting(reason: "no adapter")))
        #expect(board.streamingCount == 1)
        board.stopAll(at: at(9), reason: "hrmd stopped")
        let rows = board.rows(at: at(9), battery: { _ in nil })
        #expect(rows.map(\.identifier) == ["ble", "mock-1"])
        #expect(rows.allSatisfy { $0.state == "stopped" && $0.detail == "hrmd stopped" && $0.since == at(9) })
    }

    @Test("a note joins the state's detail with \"; \", or stands alone; a new note keeps the since time; nil clears it")
    func notesInTheDetail() {
        var board = SensorActivityBoard()
        let strap: SensorID = "AA:BB:CC:DD:EE:FF"
        let retry = at(9)
        let backingOff = SensorState.backingOff(retryAt: retry, reason: "the strap disconnected")
        board.note(SensorStatus(time: at(1), transport: .ble, device: strap, state: .streaming))
        _ = board.rows(at: at(1), battery: { _ in nil })
        board.note(SensorStatus(time: at(2), transport: .ble, device: strap, state: .streaming, note: "links end at 30 s"))
        #expect(board.due(at: at(2)), "a changed note is a change")
        var row = board.rows(at: at(2), battery: { _ in nil })[0]
        #expect(row.detail == "links end at 30 s")
        #expect(row.since == at(1))
        board.note(SensorStatus(time: at(3), transport: .ble, device: strap, state: backingOff, note: "links end at 30 s"))
        row = board.rows(at: at(3), battery: { _ in nil })[0]
        #expect(row.detail == "\(backingOff.detail ?? ""); links end at 30 s")
        #expect(row.state == "backing-off" && row.since == at(3))
        board.note(SensorStatus(time: at(4), transport: .ble, device: strap, state: .connecting))
        row = board.rows(at: at(4), battery: { _ in nil })[0]
        #expect(row.detail == nil)
    }

    @Test("stopping keeps the note beside the reason")
    func stoppingKeepsTheNote() {
        var board = SensorActivityBoard()
        board.note(SensorStatus(time: at(0), transport: .ble, device: "AA:BB:CC:DD:EE:FF", state: .streaming, note: "links end at 150 s"))
        board.stopAll(at: at(1), reason: "hrmd stopped")
        #expect(board.rows(at: at(1), battery: { _ in nil }).map(\.detail) == ["hrmd stopped; links end at 150 s"])
    }
}
