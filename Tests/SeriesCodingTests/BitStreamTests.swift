@testable import SeriesCoding
import Testing

@Suite("Bit writer and reader")
struct BitStreamTests {
    @Test("random fields of 0 to 64 bits read back as written, through every refill path")
    func fields() throws {
        var random = TestSeries(seed: 0xB175)
        for _ in 0..<200 {
            let fields = (0..<random.below(300)).map { _ in
                let width = random.below(65)
                return (width: width, value: random.random.next() & BitWriter.mask(width))
            }
            var writer = BitWriter()
            for field in fields { writer.write(field.value, width: field.width) }
            let totalBits = fields.reduce(0) { $0 + $1.width }
            #expect(writer.bitCount == totalBits)
            let bytes = writer.finished()
            #expect(bytes.count == (totalBits + 7) / 8)
            var reader = BitReader(bytes)
            for field in fields { #expect(try reader.read(field.width) == field.value) }
            #expect(reader.position == totalBits)
            try reader.expectEnd(declaredCount: 0)
        }
    }

    @Test("higher bits than the width are ignored when writing")
    func maskedWrites() throws {
        var writer = BitWriter()
        writer.write(0xFF, width: 4)
        writer.write(.max, width: 0)
        writer.write(.max, width: 3)
        #expect(writer.finished() == [0b1111_1110])
    }

    @Test("varints: LEB128 bytes, both signs, every length")
    func varints() throws {
        var writer = BitWriter()
        writer.writeVarint(300)
        #expect(writer.finished() == [0xAC, 0x02])
        let unsigned: [UInt64] = [0, 1, 127, 128, 16_383, 16_384, 1 << 35, .max - 1, .max]
        let signed: [Int64] = [0, -1, 1, -64, 64, .min, .max, 1_767_225_600_000_000]
        writer = BitWriter()
        writer.write(true)  // misaligned on purpose
        for value in unsigned { writer.writeVarint(value) }
        for value in signed { writer.writeSignedVarint(value) }
        var reader = BitReader(writer.finished())
        #expect(try reader.readBit())
        for value in unsigned {
            #expect(try reader.readVarint() == value)
            #expect(BitWriter.varintBitCount(value) == 8 * max(1, (64 - value.leadingZeroBitCount + 6) / 7))
        }
        for value in signed { #expect(try reader.readSignedVarint() == value) }
    }

    @Test("zigzag maps small magnitudes of either sign to small numbers, and back")
    func zigzag() {
        #expect([0, -1, 1, -2, 2].map(ZigZag.encode) == [0, 1, 2, 3, 4])
        for value: Int64 in [.min, .min + 1, -1, 0, 1, .max] { #expect(ZigZag.decode(ZigZag.encode(value)) == value) }
        #expect(ZigZag.encode(.min) == .max)
    }

    @Test("reading past the end throws, wherever the end is")
    func pastTheEnd() throws {
        for length in 0..<20 {
            let bytes = [UInt8](repeating: 0xA5, count: length)
            var reader = BitReader(bytes)
            #expect(reader.remainingBits == 8 * length)
            var read = 0
            while read + 13 <= 8 * length {
                _ = try reader.read(13)
                read += 13
            }
            #expect(throws: SeriesCodingError.truncated(atBit: 8 * length)) { _ = try reader.read(13) }
            var wide = BitReader(bytes)
            if length < 8 { #expect(throws: SeriesCodingError.truncated(atBit: 8 * length)) { _ = try wide.read(64) } }
        }
    }

    @Test("truncated-unary prefixes, near the end too")
    func unary() throws {
        // 0 | 10 | 110 | 111 | 111 (limit 3), then 11 and 1 with limit 2 and 1.
        var writer = BitWriter()
        for (bits, width) in [(0b0, 1), (0b10, 2), (0b110, 3), (0b111, 3), (0b111, 3), (0b11, 2), (0b1, 1)] {
            writer.write(UInt64(bits), width: width)
        }
        var reader = BitReader(writer.finished())
        for expected in [0, 1, 2, 3, 3] { #expect(try reader.readUnary(limit: 3) == expected) }
        #expect(try reader.readUnary(limit: 2) == 2)
        #expect(try reader.readUnary(limit: 1) == 1)
        #expect(try reader.readUnary(limit: 0) == 0)
        var ones = BitReader([0xFF])
        _ = try ones.read(6)
        #expect(throws: SeriesCodingError.truncated(atBit: 8)) { _ = try ones.readUnary(limit: 3) }
    }

    @Test("a reader can start at any byte")
    func offset() throws {
        var reader = BitReader([1, 2, 3], fromByte: 2)
        #expect(try reader.read(8) == 3)
        #expect(BitReader([1], fromByte: 5).remainingBits == 0)
    }
}
