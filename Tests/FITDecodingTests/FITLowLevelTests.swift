@testable import FITDecoding
import TestSupport
import Testing

@Suite("FIT CRC and base types")
struct FITLowLevelTests {
    @Test("the CRC is CRC-16/ARC: the standard check value, byte by byte the same")
    func crc() {
        let check = Array("123456789".utf8)
        #expect(FITCRC.checksum(check) == 0xBB3D)
        #expect(FITCRC.checksum([UInt8]()) == 0)
        #expect(check.reduce(0, FITCRC.update) == 0xBB3D)
        #expect(FITCRC.checksum(check + [0x3D, 0xBB]) == 0)
    }

    @Test("integer base types in both byte orders, their no-value markers, arrays; others read as nothing")
    func baseTypes() {
        func read(_ code: UInt8, _ bytes: [UInt8], bigEndian: Bool = false) -> [Int64] {
            FITBaseType(code: code).elements(of: bytes[...], bigEndian: bigEndian)
        }
        #expect(read(0x02, [0xFE]) == [254] && read(0x02, [0xFF]) == [])
        #expect(read(0x01, [0x80]) == [-128] && read(0x01, [0x7F]) == [])
        #expect(read(0x84, [0x34, 0x12]) == [0x1234] && read(0x84, [0x12, 0x34], bigEndian: true) == [0x1234])
        #expect(read(0x83, [0xFE, 0xFF]) == [-2] && read(0x83, [0xFF, 0x7F]) == [])
        #expect(read(0x85, [0xFF, 0xFF, 0xFF, 0xFE], bigEndian: true) == [-2])
        #expect(read(0x86, [0xFF, 0xFF, 0xFF, 0xFF]) == [] && read(0x86, [1, 0, 0, 0x80]) == [0x8000_0001])
        #expect(read(0x8C, [0, 0, 0, 0]) == [] && read(0x0A, [0]) == [] && read(0x8B, [0, 0]) == [])
        #expect(read(0x8E, [0xFE] + [UInt8](repeating: 0xFF, count: 7)) == [-2])
        #expect(read(0x8F, [UInt8](repeating: 0xFF, count: 8)) == [])
        #expect(read(0x90, [1, 0, 0, 0, 0, 0, 0, 0]) == [1])
        #expect(read(0x84, [0x20, 0x03, 0xFF, 0xFF, 0x52, 0x03]) == [800, 850])
        #expect(read(0x84, [1, 2, 3]) == [], "not a whole number of elements")
        #expect(read(0x07, Array("abc".utf8)) == [] && read(0x88, [0, 0, 0x80, 0x3F]) == [] && read(0x0D, [1]) == [])
    }

    @Test("compressed time offsets: the first time at or after the last whose low five bits match")
    func expand() {
        #expect(FITMessageWalk.expand(offset: 5, after: 64) == 69)
        #expect(FITMessageWalk.expand(offset: 0, after: 64) == 64)
        #expect(FITMessageWalk.expand(offset: 3, after: 94) == 99)  // 94 = 64 + 30: rolled over
        #expect(FITMessageWalk.expand(offset: 31, after: 95) == 95)
        #expect(FITMessageWalk.expand(offset: 0, after: .max) == 0, "wraps as the SDK's 32-bit arithmetic does")
    }
}
