@testable import SeriesCoding
import Testing

/// Damaged chunks: the decoders throw typed errors, or decode to something, and never trap.
@Suite("Corrupt and truncated series chunks")
struct CorruptChunkTests {
    /// Valid chunks of every shape and both kinds, small enough to cut everywhere.
    static func validChunks() -> [(name: String, bytes: [UInt8], isHeartbeat: Bool)] {
        var series = TestSeries(seed: 0xC0)
        var chunks = TestSeries.Shape.allCases.flatMap { shape in
            [1, 2, 3, 70].map { ("\(shape) × \($0)", encode(series.series(shape, count: $0)), false) }
        }
        for gapRate in [0, 0.05, 0.9] {
            for count in [1, 2, 90] { chunks.append(("\(count) beats, gaps \(gapRate)", encode(series.beats(count, gapRate: gapRate)), true)) }
        }
        return chunks
    }

    /// Decodes as the chunk's kind; returns the error, if any.
    static func decodeError(_ bytes: [UInt8], isHeartbeat: Bool) -> SeriesCodingError? {
        do {
            if isHeartbeat { _ = try HeartbeatSeriesReader.decode(bytes) } else { _ = try QuantitySeriesReader.decode(bytes) }
            return nil
        } catch {
            return error
        }
    }

    @Test("every strict prefix of a valid chunk is reported truncated where it ends")
    func everyPrefix() {
        for chunk in Self.validChunks() {
            #expect(Self.decodeError(chunk.bytes, isHeartbeat: chunk.isHeartbeat) == nil, "\(chunk.name)")
            for length in 0..<chunk.bytes.count {
                let error = Self.decodeError(Array(chunk.bytes.prefix(length)), isHeartbeat: chunk.isHeartbeat)
                #expect(error == .truncated(atBit: 8 * length), "\(chunk.name) cut to \(length) bytes")
            }
        }
    }

    @Test("every single bit flipped: a typed error or some points, never a trap")
    func everyBitFlipped() {
        for chunk in Self.validChunks() {
            for bit in 0..<8 * chunk.bytes.count {
                var damaged = chunk.bytes
                damaged[bit / 8] ^= 0x80 >> UInt8(bit % 8)
                let error = Self.decodeError(damaged, isHeartbeat: chunk.isHeartbeat)
                if bit < 8 { #expect(error == .unknownVersion(damaged[0]), "\(chunk.name) bit \(bit)") }
                if (8..<16).contains(bit), case .wrongKind = error {} else if (8..<16).contains(bit) {
                    Issue.record("\(chunk.name) bit \(bit): \(String(describing: error))")
                }
            }
        }
    }

    @Test("random damage of several bits and random tails, many times over")
    func randomDamage() {
        var random = TestSeries(seed: 0xDA3A6E)
        let chunks = Self.validChunks()
        for round in 0..<20_000 {
            let chunk = chunks[round % chunks.count]
            var damaged = chunk.bytes
            for _ in 0..<1 + random.below(6) {
                let bit = 16 + random.below(8 * damaged.count - 16)
                damaged[bit / 8] ^= 0x80 >> UInt8(bit % 8)
            }
            if random.below(4) == 0 {
                damaged = Array(damaged.prefix(2 + random.below(damaged.count - 1))) + (0..<random.below(12)).map { _ in UInt8(random.below(256)) }
            }
            _ = Self.decodeError(damaged, isHeartbeat: chunk.isHeartbeat)
            _ = Self.decodeError(damaged, isHeartbeat: !chunk.isHeartbeat)
            _ = try? QuantitySeriesEncoder(resuming: damaged)
            _ = try? HeartbeatSeriesEncoder(resuming: damaged)
        }
    }

    @Test("random bytes after a valid version and kind never trap")
    func randomBytes() {
        var random = TestSeries(seed: 0xB17E5)
        for round in 0..<20_000 {
            let kind = round % 2 == 0 ? SeriesFormat.Kind.quantity : .heartbeat
            let body = (0..<random.below(40)).map { _ in UInt8(random.below(256)) }
            _ = Self.decodeError([SeriesFormat.version, kind.rawValue] + body, isHeartbeat: kind == .heartbeat)
        }
    }

    @Test("bytes after the last point, or bits set in the padding, are a count mismatch")
    func trailingData() throws {
        let chunk = encode([QuantitySeriesPoint(time: 0, value: 0)])
        // 8 bits of count, 1 of mode, 8 of time, 8 of scale, 8 of integer: 7 bits of padding.
        #expect(chunk == [SeriesFormat.version, 0x51, 0x01, 0x00, 0x00, 0x80, 0x00])
        var padded = chunk
        padded[padded.count - 1] |= 1
        #expect(throws: SeriesCodingError.countMismatch(declared: 1)) { try QuantitySeriesReader.decode(padded) }
        for tail: UInt8 in [0, 0xFF] {
            #expect(throws: SeriesCodingError.countMismatch(declared: 1)) { try QuantitySeriesReader.decode(chunk + [tail]) }
            #expect(throws: SeriesCodingError.countMismatch(declared: 0)) { try QuantitySeriesReader.decode([1, 0x51, 0, tail]) }
            #expect(throws: SeriesCodingError.countMismatch(declared: 3)) {
                try HeartbeatSeriesReader.decode(encode([Heartbeat(offset: 1), Heartbeat(offset: 2), Heartbeat(offset: 4)]) + [tail])
            }
        }
    }

    @Test("prologue errors: empty, unknown version, unknown kind, counts beyond the bytes or Int")
    func prologue() {
        #expect(throws: SeriesCodingError.truncated(atBit: 0)) { try QuantitySeriesReader.decode([]) }
        #expect(throws: SeriesCodingError.truncated(atBit: 8)) { try QuantitySeriesReader.decode([1]) }
        #expect(throws: SeriesCodingError.unknownVersion(0)) { try QuantitySeriesReader.decode([0, 0x51, 0]) }
        #expect(throws: SeriesCodingError.unknownVersion(3)) { try QuantitySeriesReader.decode([3, 0x51, 0]) }
        #expect(throws: SeriesCodingError.wrongKind(found: 0, expected: 0x51)) { try QuantitySeriesReader.decode([1, 0, 0]) }
        // 2⁶² points in five bytes: caught before anything is allocated.
        #expect(throws: SeriesCodingError.truncated(atBit: 112)) {
            try QuantitySeriesReader.decode([1, 0x51, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0, 0, 0])
        }
        #expect(throws: SeriesCodingError.corruptHeader(.count)) {
            try QuantitySeriesReader.decode([1, 0x51, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
        }
        #expect(throws: SeriesCodingError.corruptHeader(.overlongVarint)) {
            try HeartbeatSeriesReader.decode([1, 0x48] + [UInt8](repeating: 0xFF, count: 9) + [0x02])
        }
        #expect(throws: SeriesCodingError.corruptHeader(.overlongVarint)) {
            try HeartbeatSeriesReader.decode([1, 0x48] + [UInt8](repeating: 0x80, count: 12))
        }
    }

    @Test("header fields no encoder writes: scale 0 or too large, bad code tables, gap indices beyond the beats")
    func corruptHeaders() throws {
        #expect(throws: SeriesCodingError.corruptHeader(.scale(0))) { try QuantitySeriesReader.decode(Self.scaledChunk(scale: 0)) }
        #expect(throws: SeriesCodingError.corruptHeader(.scale(1 << 33))) { try QuantitySeriesReader.decode(Self.scaledChunk(scale: 1 << 33)) }
        #expect(try QuantitySeriesReader.decode(Self.scaledChunk(scale: 3)) == [QuantitySeriesPoint(time: 0, value: 7.0 / 3)])
        for widths in [[0], [5, 5], [9, 3], [65], [1, 2, 3, 70]] {
            #expect(throws: SeriesCodingError.corruptHeader(.residualCode), "\(widths)") {
                try QuantitySeriesReader.decode(Self.twoPointChunk(tickWidths: widths))
            }
        }
        #expect(throws: SeriesCodingError.corruptHeader(.timePredictor(3))) {
            try QuantitySeriesReader.decode(Self.twoPointChunk(tickWidths: [8], predictor: 3))
        }
        for period: Int64 in [0, -1000] {
            #expect(throws: SeriesCodingError.corruptHeader(.gridPeriod(period))) {
                try QuantitySeriesReader.decode(Self.twoPointChunk(tickWidths: [8], predictor: TickPredictor.grid.rawValue, reference: period))
            }
        }
        var writer = SeriesFormat.writer(for: .heartbeat, capacity: 8)
        writer.writeVarint(3)  // beats
        writer.write(false)  // gap list
        writer.writeVarint(2)  // two gaps
        writer.writeVarint(1)  // beat 1
        writer.writeVarint(1)  // beat 3: there are only 0, 1, 2
        #expect(throws: SeriesCodingError.corruptHeader(.gapList)) { try HeartbeatSeriesReader.decode(writer.finished()) }
    }

    @Test("an XOR window reaching past 64 bits is a corrupt point")
    func corruptXORPoint() {
        var writer = SeriesFormat.writer(for: .quantity, capacity: 32)
        writer.writeVarint(2)  // points
        writer.write(true)  // XOR
        writer.writeSignedVarint(0)  // first time
        writer.write(Double.pi.bitPattern, width: 64)
        writer.write(TickPredictor.previousDelta.rawValue, width: 2)
        writer.writeSignedVarint(1)  // reference delta
        ResidualCode(widths: [1])?.writeTable(to: &writer)
        writer.write(0, width: 1)  // point 1: residual 0
        writer.write(0b11, width: 2)  // a new window…
        writer.write(60, width: 6)  // …of 60 leading zeros…
        writer.write(9, width: 6)  // …and 10 meaningful bits
        writer.write(0x3FF, width: 10)
        #expect(throws: SeriesCodingError.corruptPoint(index: 1)) { try QuantitySeriesReader.decode(writer.finished()) }
    }

    /// One point, scaled: time 0, integer 7 under `scale`.
    static func scaledChunk(scale: UInt64) -> [UInt8] {
        var writer = SeriesFormat.writer(for: .quantity, capacity: 16)
        writer.writeVarint(1)
        writer.write(false)
        writer.writeSignedVarint(0)
        writer.writeVarint(scale)
        writer.writeSignedVarint(7)
        return writer.finished()
    }

    /// Two points, scaled, with a tick code table of these widths (valid or not), predicted by
    /// `predictor` from `reference` (a grid's phase is 0).
    static func twoPointChunk(tickWidths: [Int], predictor: UInt64 = TickPredictor.previousDelta.rawValue, reference: Int64 = 1000) -> [UInt8] {
        var writer = SeriesFormat.writer(for: .quantity, capacity: 16)
        writer.writeVarint(2)
        writer.write(false)
        writer.writeSignedVarint(0)
        writer.writeVarint(1)
        writer.writeSignedVarint(7)
        writer.write(predictor, width: 2)
        writer.writeSignedVarint(reference)
        if predictor == TickPredictor.grid.rawValue { writer.writeSignedVarint(0) }
        writer.write(UInt64(tickWidths.count - 1) & 3, width: 2)
        for width in tickWidths { writer.write(UInt64(width), width: 7) }
        writer.write(0, width: 64)
        return writer.finished()
    }
}
