import ByteSources
import FITDecoding
import TestSupport
import Testing

/// A FIT file streamed in two passes (`FITHeartRateSummary`, then `FITHeartRateRecords` and
/// `FITRRIntervals`) gives what decoding it whole gives, reading its source front to back.
@Suite("Streamed FIT files")
struct FITStreamingTests {
    typealias Field = FITBuilder.Field
    let start: UInt32 = 1_100_000_000
    let recordFields: [Field] = [.timestamp, .uint8(3)]

    /// Where the reads of a source began, in order.
    final class Reads: @unchecked Sendable {
        var offsets: [Int] = []
        /// Reads that began before the one before them.
        var backward: Int { zip(offsets, offsets.dropFirst()).filter { $1 < $0 }.count }
    }

    /// `bytes` served as a file's window would be: a small window from each read on, its
    /// reads noted in `reads`.
    func windowed(_ bytes: [UInt8], reads: Reads = Reads()) -> ByteSource {
        ByteSource(count: bytes.count) { offset, length in
            reads.offsets.append(offset)
            return Array(bytes[offset..<min(bytes.count, offset + max(length, 64))])
        }
    }

    /// Streams `bytes` and checks the result against `FITDecoder.decodeActivityPartially`.
    func checkStreamed(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let whole = try FITDecoder.decodeActivityPartially(bytes)
        let summary = try FITHeartRateSummary(scanning: windowed(bytes))
        let records = Array(try FITHeartRateRecords(windowed(bytes), summary: summary))
        let intervals = Array(try FITRRIntervals(windowed(bytes)))
        #expect(records == whole.records, sourceLocation: sourceLocation)
        #expect(intervals == whole.rrIntervals, sourceLocation: sourceLocation)
        #expect(summary.recordCount == whole.records.count, sourceLocation: sourceLocation)
        #expect(summary.unanchoredCount == whole.records.filter { $0.unixSeconds == nil }.count, sourceLocation: sourceLocation)
        #expect(summary.firstUnixSeconds == whole.records.lazy.compactMap(\.unixSeconds).first, sourceLocation: sourceLocation)
        #expect(summary.strap == whole.devices.first { $0.deviceType == 120 }, sourceLocation: sourceLocation)
        #expect(summary.recorder == whole.devices.first { $0.deviceIndex == 0 }, sourceLocation: sourceLocation)
        #expect(summary.creatorSerial == whole.creatorSerial, sourceLocation: sourceLocation)
        #expect(summary.damage == whole.damage, sourceLocation: sourceLocation)
    }

    @Test("the fixtures, whole and cut anywhere, stream as they decode whole",
          arguments: ["garmin-edge-820-bike.fit", "garmin-fenix-5-bike.fit", "activity-filecrc.fit", "activity-unexpected-eof.fit"])
    func fixtures(name: String) throws {
        let bytes = try Fixtures.bytes(name)
        try checkStreamed(bytes)
        for cut in stride(from: 14, to: bytes.count, by: 97) { try checkStreamed(Array(bytes.prefix(cut))) }
    }

    @Test("correlations anchor the streamed records as they anchor the whole file's")
    func correlated() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 20, fields: recordFields)
        builder.define(local: 1, global: 162, fields: [.timestamp, .uint32(1)])
        builder.define(local: 2, global: 78, fields: [.uint16(0, count: 2)])
        builder.data(local: 0, le32(900) + [60])
        builder.data(local: 2, le16(800) + le16(810))
        builder.data(local: 1, le32(start) + le32(1000))
        builder.data(local: 0, le32(1010) + [61])
        builder.data(local: 1, le32(start + 50) + le32(1030))
        builder.data(local: 0, le32(1040) + [62])
        builder.data(local: 2, le16(820) + le16(0xFFFF))
        let bytes = builder.file()
        try checkStreamed(bytes)
        let summary = try FITHeartRateSummary(scanning: ByteSource(bytes))
        #expect(summary.firstUnixSeconds == Int64(start - 100) + FITDecoder.epochOffset)
        #expect(summary.unanchoredCount == 0)
    }

    @Test("records without an anchor are counted, and the first absolute one starts the file")
    func unanchored() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 20, fields: recordFields)
        builder.data(local: 0, le32(900) + [60])
        builder.data(local: 0, le32(start) + [61])
        builder.data(local: 0, le32(901) + [62])
        let bytes = builder.file()
        try checkStreamed(bytes)
        let summary = try FITHeartRateSummary(scanning: ByteSource(bytes))
        #expect(summary.unanchoredCount == 2)
        #expect(summary.firstUnixSeconds == Int64(start) + FITDecoder.epochOffset)
    }

    @Test("chained files and their damage stream as they decode whole")
    func chained() throws {
        var first = FITBuilder()
        first.define(local: 0, global: 20, fields: recordFields)
        first.data(local: 0, le32(start) + [70])
        var second = FITBuilder()
        second.define(local: 3, global: 20, fields: recordFields)
        second.data(local: 3, le32(start + 1) + [71])
        let chained = first.file() + second.file()
        try checkStreamed(chained)
        try checkStreamed(chained + [1, 2, 3])
        var corrupt = chained
        corrupt[corrupt.count - 3] ^= 0xFF
        try checkStreamed(corrupt)
    }

    @Test("every pass reads its source front to back")
    func forwardOnly() throws {
        let bytes = try Fixtures.bytes("garmin-fenix-5-bike.fit")
        let scan = Reads(), records = Reads(), intervals = Reads()
        let summary = try FITHeartRateSummary(scanning: windowed(bytes, reads: scan))
        #expect(Array(try FITHeartRateRecords(windowed(bytes, reads: records), summary: summary)).count == summary.recordCount)
        _ = Array(try FITRRIntervals(windowed(bytes, reads: intervals)))
        for reads in [scan, records, intervals] {
            #expect(reads.offsets.count > 10)
            #expect(reads.backward == 0, "\(reads.offsets.prefix(20))")
        }
    }

    @Test("a source that fails to read is damage that names the errno's text")
    func unreadable() throws {
        let bytes = try Fixtures.bytes("garmin-edge-820-bike.fit")
        let failing = ByteSource(count: bytes.count) { offset, length throws(ByteSourceError) in
            guard offset < 40 else { throw ByteSourceError(offset: offset, errno: 5, reason: "Input/output error") }
            return Array(bytes[offset..<min(bytes.count, offset + length)])
        }
        let summary = try FITHeartRateSummary(scanning: failing)
        guard case .unreadable(let error)? = summary.damage else {
            Issue.record("expected a read error, got \(String(describing: summary.damage))")
            return
        }
        #expect(error.errno == 5)
        #expect("\(summary.damage!)".contains("Input/output error"))
    }
}
