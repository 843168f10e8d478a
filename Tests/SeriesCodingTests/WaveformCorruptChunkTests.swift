@testable import SeriesCoding
import Testing

/// Damaged waveform chunks: the reader throws typed errors, or decodes to something, and never
/// traps.
@Suite("Corrupt and truncated waveform chunks")
struct WaveformCorruptChunkTests {
    /// Valid chunks of every subframe type, small enough to cut everywhere.
    static func validChunks() -> [(name: String, bytes: [UInt8])] {
        var signals = TestWaveforms(seed: 0xC0)
        var chunks: [(String, [UInt8])] = [("empty", encodeWaveform([]))]
        for count in [1, 2, 3, 40] {
            chunks.append(("ECG × \(count)", encodeWaveform(signals.ecg(count))))
            chunks.append(("walk × \(count)", encodeWaveform(signals.randomWalk(count, step: 300))))
            chunks.append(("extremes × \(count)", encodeWaveform(signals.extremes(count))))
            chunks.append(("acceleration × \(count)", encodeWaveform(signals.acceleration(count), channels: 3)))
            chunks.append(("constant × \(count)", encodeWaveform([Int32](repeating: -77, count: 2 * count), channels: 2)))
        }
        chunks.append(("ECG × 200", encodeWaveform(signals.ecg(200))))
        return chunks
    }

    /// The error decoding `bytes` throws, if any.
    static func decodeError(_ bytes: [UInt8]) -> SeriesCodingError? {
        do {
            _ = try WaveformReader.decode(bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test("every strict prefix of a valid chunk is reported truncated where it ends")
    func everyPrefix() {
        for chunk in Self.validChunks() {
            #expect(Self.decodeError(chunk.bytes) == nil, "\(chunk.name)")
            for length in 0..<chunk.bytes.count {
                #expect(Self.decodeError(Array(chunk.bytes.prefix(length))) == .truncated(atBit: 8 * length), "\(chunk.name) cut to \(length) bytes")
            }
        }
    }

    @Test("every single bit flipped: a typed error or some samples, never a trap")
    func everyBitFlipped() {
        for chunk in Self.validChunks() {
            for bit in 0..<8 * chunk.bytes.count {
                var damaged = chunk.bytes
                damaged[bit / 8] ^= 0x80 >> UInt8(bit % 8)
                let error = Self.decodeError(damaged)
                if bit < 8 { #expect(error == .unknownVersion(damaged[0]), "\(chunk.name) bit \(bit)") }
                if (8..<16).contains(bit) { #expect(error == .wrongKind(found: damaged[1], expected: 0x57), "\(chunk.name) bit \(bit)") }
            }
        }
    }

    @Test("random damage of several bits and random tails, many times over")
    func randomDamage() {
        var random = TestWaveforms(seed: 0xDA3A6E)
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
            _ = Self.decodeError(damaged)
            _ = try? WaveformEncoder(resuming: damaged)
        }
    }

    @Test("random bytes after a valid version and kind never trap, and never decode to more instants than bits")
    func randomBytes() {
        var random = TestWaveforms(seed: 0xB17E5)
        for _ in 0..<20_000 {
            let bytes = [SeriesFormat.version, 0x57] + (0..<random.below(40)).map { _ in UInt8(random.below(256)) }
            guard let reader = try? WaveformReader(bytes) else { continue }
            #expect(reader.count <= 8 * bytes.count)
            if let samples = try? reader.samples() { #expect(samples.count == reader.count * reader.channels) }
        }
    }

    @Test("prologue errors: empty, unknown versions, version 1, other kinds, counts beyond the bytes")
    func prologue() {
        #expect(throws: SeriesCodingError.truncated(atBit: 0)) { try WaveformReader.decode([]) }
        #expect(throws: SeriesCodingError.truncated(atBit: 8)) { try WaveformReader.decode([2]) }
        #expect(throws: SeriesCodingError.unknownVersion(1)) { try WaveformReader.decode([1, 0x57, 0, 0]) }
        #expect(throws: SeriesCodingError.unknownVersion(3)) { try WaveformReader.decode([3, 0x57, 0, 0]) }
        #expect(throws: SeriesCodingError.wrongKind(found: 0x51, expected: 0x57)) { try WaveformReader.decode([2, 0x51, 0, 0]) }
        #expect(throws: SeriesCodingError.wrongKind(found: 0x57, expected: 0x51)) { try QuantitySeriesReader.decode([2, 0x57, 0, 0]) }
        // No channels byte.
        #expect(throws: SeriesCodingError.truncated(atBit: 24)) { try WaveformReader.decode([2, 0x57, 0]) }
        // 22 instants in the 21 bits after the channels: one too many for a bit each.
        #expect(throws: SeriesCodingError.truncated(atBit: 48)) { try WaveformReader.decode([2, 0x57, 22, 0, 0, 0]) }
        #expect(throws: SeriesCodingError.countMismatch(declared: 21)) { try WaveformReader.decode([2, 0x57, 21, 0, 0, 0]) }
        // 2⁶² instants in a few bytes: caught before anything is allocated.
        #expect(throws: SeriesCodingError.truncated(atBit: 112)) {
            try WaveformReader.decode([2, 0x57, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0, 0, 0])
        }
    }

    @Test("bytes after the last subframe, or bits set in the padding, are a count mismatch")
    func trailingData() throws {
        let chunk = encodeWaveform([5, 5])
        // 3 bits of channels, 2 of type, 6 of width, 4 of value (zigzag 10): 1 bit of padding.
        #expect(chunk == [SeriesFormat.version, 0x57, 2, 0b000_00_000, 0b100_1010_0])
        #expect(try WaveformReader.decode(chunk) == [5, 5])
        var padded = chunk
        padded[padded.count - 1] |= 1
        #expect(throws: SeriesCodingError.countMismatch(declared: 2)) { try WaveformReader.decode(padded) }
        for tail: UInt8 in [0, 0xFF] {
            #expect(throws: SeriesCodingError.countMismatch(declared: 2)) { try WaveformReader.decode(chunk + [tail]) }
            #expect(throws: SeriesCodingError.countMismatch(declared: 0)) { try WaveformReader.decode([2, 0x57, 0, 0, tail]) }
        }
        #expect(throws: SeriesCodingError.countMismatch(declared: 0)) { try WaveformReader.decode([2, 0x57, 0, 1]) }
    }

    @Test("predictor orders the format does not define, or beyond the instants, are corrupt headers")
    func predictorOrders() {
        for order: UInt64 in 5...7 {
            #expect(throws: SeriesCodingError.corruptHeader(.predictorOrder(order))) {
                try WaveformReader.decode(Self.chunk(count: 20) { $0.write(2, width: 2); $0.write(order, width: 3) })
            }
        }
        #expect(throws: SeriesCodingError.corruptHeader(.predictorOrder(3))) {
            try WaveformReader.decode(Self.chunk(count: 2) { $0.write(2, width: 2); $0.write(3, width: 3) })
        }
        for order: UInt64 in 13...16 {
            #expect(throws: SeriesCodingError.corruptHeader(.predictorOrder(order))) {
                try WaveformReader.decode(Self.chunk(count: 20) { $0.write(3, width: 2); $0.write(order - 1, width: 4) })
            }
        }
        #expect(throws: SeriesCodingError.corruptHeader(.predictorOrder(4))) {
            try WaveformReader.decode(Self.chunk(count: 3) { $0.write(3, width: 2); $0.write(3, width: 4) })
        }
    }

    @Test("a Rice selector stepping outside 0...31 is a corrupt header")
    func riceSelectors() {
        for (first, step) in [(0, Int64(-1)), (31, 1), (20, 12), (5, -40)] {
            #expect(throws: SeriesCodingError.corruptHeader(.riceSelector), "\(first) \(step)") {
                try WaveformReader.decode(Self.chunk(count: 20) { writer in
                    writer.write(2, width: 2)  // fixed
                    writer.write(0, width: 3)  // order 0: no first sample
                    writer.write(1, width: 4)  // two partitions
                    writer.write(0, width: 1)  // steps in Rice 0
                    writer.write(UInt64(first), width: 5)
                    // Partition 0: ten residuals of 0.
                    if first == RiceResidualCode.escapeSelector {
                        writer.write(0, width: 6)
                        writer.write(0, width: 10)
                    } else {
                        for _ in 0..<10 { writer.write(1 << UInt64(first), width: first + 1) }
                    }
                    // The step in Rice 0: its zero bits and a one bit.
                    for _ in 0..<ZigZag.encode(step) { writer.write(false) }
                    writer.write(true)
                })
            }
        }
    }

    @Test("samples beyond Int32 are corrupt samples, wherever they come from")
    func samplesBeyondInt32() {
        // A constant of 2³¹.
        #expect(throws: SeriesCodingError.corruptSample(channel: 1, instant: 0)) {
            try WaveformReader.decode(Self.chunk(count: 2, channels: 2) { writer in
                writer.write(0, width: 2)
                writer.write(1, width: 6)
                writer.write(1, width: 1)  // channel 0: all −1
                writer.write(0, width: 2)
                writer.write(33, width: 6)
                writer.write(ZigZag.encode(1 << 31), width: 33)  // channel 1: all 2³¹
            })
        }
        // Verbatim, the third sample of 40 bits.
        #expect(throws: SeriesCodingError.corruptSample(channel: 0, instant: 2)) {
            try WaveformReader.decode(Self.chunk(count: 3) { writer in
                writer.write(1, width: 2)
                writer.write(40, width: 6)
                for value: Int64 in [0, Int64(Int32.max), Int64(Int32.max) + 1] { writer.write(ZigZag.encode(value), width: 40) }
            })
        }
        // Fixed order 1: Int32.max, then a residual of +1 in an escape.
        #expect(throws: SeriesCodingError.corruptSample(channel: 0, instant: 1)) {
            try WaveformReader.decode(Self.chunk(count: 2) { writer in
                writer.write(2, width: 2)
                writer.write(1, width: 3)
                writer.write(32, width: 6)
                writer.write(ZigZag.encode(Int64(Int32.max)), width: 32)
                writer.write(0, width: 4)  // one partition
                writer.write(0, width: 1)
                writer.write(31, width: 5)  // escape…
                writer.write(1, width: 6)  // …of 2 bits
                writer.write(ZigZag.encode(1), width: 2)
            })
        }
        // A Rice residual of 80·2³⁰.
        #expect(throws: SeriesCodingError.corruptSample(channel: 0, instant: 0)) {
            try WaveformReader.decode(
                Self.chunk(count: 1) { writer in
                    writer.write(2, width: 2)
                    writer.write(0, width: 3)
                    writer.write(0, width: 4)
                    writer.write(0, width: 1)
                    writer.write(30, width: 5)  // Rice 30
                    for _ in 0..<2 { writer.write(0, width: 40) }
                    writer.write(1, width: 1)
                    writer.write(0, width: 30)
                })
        }
    }

    /// A chunk of `count` instants whose subframes `body` writes, then zero bits enough for
    /// the count to pass the reader's first check.
    static func chunk(count: Int, channels: Int = 1, _ body: (inout BitWriter) -> Void) -> [UInt8] {
        var writer = WaveformFormat.writer(count: count, channels: channels, capacity: 64)
        body(&writer)
        for _ in 0...count / 64 { writer.write(0, width: 64) }
        return writer.finished()
    }
}
