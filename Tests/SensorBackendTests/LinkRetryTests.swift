import Logging
import SensorBackend
import SensorFrames
import SensorTestSupport
import Testing

@Suite("Between one link of a strap and the next")
struct LinkRetryTests {
    private struct Halfway: JitterSource {
        func next() -> Double { 0.5 }  // no spread
    }

    private let strap: SensorID = "AA:BB:CC:DD:EE:01"

    private func retry(_ collector: FrameCollector) -> LinkRetry {
        let board = StatusBoard(sink: collector.sink, transport: .ble, logger: Logger(label: "test"))
        return LinkRetry(
            device: strap, board: board, backoff: Backoff(initial: .seconds(1), maximum: .seconds(8)), jitter: Halfway(),
            diagnosis: LinkAgeDiagnosis(minimumLinks: 2))
    }

    @Test("failed attempts back off doubling to the cap; a link that streamed starts afresh")
    func delays() {
        let collector = FrameCollector()
        var retry = retry(collector)
        let failures = (1...5).map { _ in retry.linkEnded(reason: "connection failed", streamedFor: nil) }
        #expect(failures == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8)])
        #expect(retry.linkEnded(reason: "the strap disconnected", streamedFor: .seconds(600)) == .seconds(1))
        #expect(retry.linkEnded(reason: "connection failed", streamedFor: nil) == .seconds(2))
    }

    @Test("each end is a backing-off report with its reason; links ending at the same age carry the diagnosis")
    func reports() {
        let collector = FrameCollector()
        var retry = retry(collector)
        _ = retry.linkEnded(reason: "the strap disconnected", streamedFor: .seconds(30))
        _ = retry.linkEnded(reason: "the strap disconnected", streamedFor: .seconds(31))
        let reports = collector.statuses.filter { $0.device == strap }
        #expect(reports.count == 2)
        guard case .backingOff(_, "the strap disconnected") = reports.last?.state else {
            Issue.record("not backing off: \(reports)")
            return
        }
        #expect(reports.first?.note == nil)
        #expect(reports.last?.note?.contains("links each ended about") == true, "\(String(describing: reports.last?.note))")
    }
}
