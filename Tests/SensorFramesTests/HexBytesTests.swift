import TestSupport
import SensorFrames
import Testing

@Suite("Hex text and bytes")
struct HexBytesTests {
    @Test(
        "accepted spellings",
        arguments: [
            "164a01", "164A01", "16 4a 01", "16:4a:01", "16-4A-01", "0x164a01", "0X164A01", "0x16 4a 01",
            "  164a01\n", "16\t4a  01", "16::4a 01",
        ])
    func spellings(text: String) throws {
        #expect(try HexBytes.parse(text) == [0x16, 0x4A, 0x01])
    }

    @Test("every byte value, both cases")
    func everyByte() throws {
        let all = (0...255).map { UInt8($0) }
        let lower = HexBytes.string(all)
        #expect(lower.count == 512)
        #expect(lower.hasPrefix("000102") && lower.hasSuffix("fdfeff"))
        #expect(try HexBytes.parse(lower) == all)
        #expect(try HexBytes.parse(lower.uppercased()) == all)
    }

    @Test("empty text and a bare prefix are zero bytes")
    func empty() throws {
        #expect(try HexBytes.parse("") == [])
        #expect(try HexBytes.parse("0x") == [])
        #expect(try HexBytes.parse("   ") == [])
    }

    @Test(
        "malformed text names the reason",
        arguments: [
            ("164", "odd number of hex digits (3)"),
            ("1", "odd number of hex digits (1)"),
            ("0x1", "odd number of hex digits (1)"),
            ("16g4", "\"g\" at position 3 is not a hex digit"),
            ("0x16zz", "\"z\" at position 5 is not a hex digit"),
            ("16,4a", "\",\" at position 3 is not a hex digit"),
            ("x164a", "\"x\" at position 1 is not a hex digit"),
            ("16 0x4a", "\"x\" at position 5 is not a hex digit"),
            ("1é", "\"é\" at position 2 is not a hex digit"),
            ("1 64a", "separator \" \" at position 2 splits a byte"),
            ("16:4:a0", "separator \":\" at position 5 splits a byte"),
        ] as [(String, String)])
    func malformed(text: String, reason: String) {
        #expect(throws: GATTDecodingError.malformedHex(reason)) { try HexBytes.parse(text) }
    }

    @Test("string: lowercase, two digits a byte, no separators")
    func string() {
        #expect(HexBytes.string([0x16, 0x4A, 0x01, 0xFF, 0x00, 0xAB]) == "164a01ff00ab")
        #expect(HexBytes.string([UInt8]()) == "")
        #expect(HexBytes.string([0x0F]) == "0f")
        #expect(HexBytes.string(AnySequence([0xDE, 0xAD] as [UInt8])) == "dead")  // any sequence
    }

    @Test("string then parse gives the bytes back", arguments: [7, 8, 9] as [UInt64])
    func roundTrip(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        for length in 0..<64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(try HexBytes.parse(HexBytes.string(bytes)) == bytes)
        }
    }
}
