import Foundation
import Synchronization
import TestSupport
import Testing

@testable import HealthClient

@Suite("QuerySamplesToFile's reader: bounded, in order, stopped by cancellation", .timeLimit(.minutes(HangBound.suiteMinutes)))
struct SampleLineReaderTests {
    /// A count that a thread and a task share.
    private final class Counter: Sendable {
        private let atomic = Atomic<Int>(0)
        var value: Int { atomic.load(ordering: .relaxed) }
        func set(_ value: Int) { atomic.store(value, ordering: .relaxed) }
    }

    /// A line of QuerySamplesToFile for sample `id`.
    private static func line(_ id: Int) -> [UInt8] {
        let start = 1_700_000_000_000_000 + Int64(id) * 1_000_000
        return Array(
            #"{"id":\#(id),"type":"heart-rate","start":\#(start),"end":\#(start),"value":72,"unit":"count/min","source":"hrmd","metadata":{}}"#
                .utf8) + [0x0A]
    }

    @Test("the sample reader decodes a bounded way ahead of its consumer, whose writer then waits, and loses nothing")
    func samplesAreBounded() async throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        let writeEnd = ends[1]
        let reader = try SampleLineReader(descriptor: ends[0])
        reader.start()
        let total = SampleLineReader.capacity * 3
        let written = Counter()
        let writer = Thread {
            for id in 1...total {
                let bytes = Self.line(id)
                guard bytes.withUnsafeBytes({ write(writeEnd, $0.baseAddress, $0.count) }) == bytes.count else { break }
                written.set(id)
            }
            close(writeEnd)
        }
        writer.start()
        try await eventually("the writer got a reader's capacity ahead") { written.value >= SampleLineReader.capacity }
        // A bounded reader stops reading once it holds its capacity (an unbounded one never
        // does, and this wait fails); from then on the writer can get no further than the bound.
        try await eventually("the reader waits for room") { reader.isWaitingForRoom }
        // The capacity, a read's worth of lines (64 KiB) beyond it, and a pipe full (64 KiB).
        let bound = SampleLineReader.capacity + 2 * (65_536 / Self.line(total).count + 1)
        #expect(written.value < bound)
        var ids: [Int64] = []
        while let samples = await reader.next() { ids += samples.map(\.id) }
        #expect(ids == (1...Int64(total)).map { $0 })
        guard case .success(let count) = reader.outcome else { Issue.record("\(String(describing: reader.outcome))"); return }
        #expect(count == total)
    }

    @Test("cancelling the consumer of the sample reader stops it")
    func cancelledReader() async throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[1]) }
        let reader = try SampleLineReader(descriptor: ends[0])
        reader.start()
        let consumer = Task { await reader.next() }
        consumer.cancel()
        #expect(await consumer.value == nil)
        guard case .success(0) = reader.outcome else { Issue.record("\(String(describing: reader.outcome))"); return }
    }
}
