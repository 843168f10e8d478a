import SensorFrames
import Testing

@testable import Ingest

@Suite("Frame inbox")
struct FrameInboxTests {
    /// The frames' offsets from `Frames.base`, in the order `inputs` holds them.
    private func offsets(_ inputs: [FrameInbox.Input]) -> [Double] {
        inputs.compactMap { input in
            guard case .frame(let frame) = input else { return nil }
            return frame.time.secondsSinceEpoch - Frames.base.secondsSinceEpoch
        }
    }

    @Test("a full inbox refuses and counts; what it took comes out whole and in order, then the end")
    func refusesWhenFullAndKeepsOrder() async {
        let inbox = FrameInbox(capacity: 8)
        for second in 0..<10 { inbox.submit(Frames.measurement(Frames.heartRate(70), at: Double(second))) }
        #expect(inbox.refusedCount == 2)
        inbox.finish()
        #expect(!inbox.submit(Frames.measurement(Frames.heartRate(70), at: 10)))
        #expect(inbox.refusedCount == 3)
        var batch: [FrameInbox.Input] = []
        var taken: [FrameInbox.Input] = []
        while await inbox.nextBatch(into: &batch) {
            taken += batch
            batch.removeAll(keepingCapacity: true)
        }
        #expect(offsets(taken) == (0..<8).map(Double.init))
    }

    @Test("a tick hands over the frames queued before it, in order with it")
    func tickHandsOverQueuedFrames() async {
        let inbox = FrameInbox()
        for second in 0..<3 { inbox.submit(Frames.measurement(Frames.heartRate(70), at: Double(second))) }
        inbox.report(SensorStatus(transport: .ble, device: Frames.strap, state: .streaming))
        inbox.tick()
        var batch: [FrameInbox.Input] = []
        #expect(await inbox.nextBatch(into: &batch))
        #expect(offsets(batch) == [0, 1, 2])
        #expect(batch.count == 5)
        guard case .tick = batch.last else {
            Issue.record("the tick is not last: \(batch)")
            return
        }
    }
}
