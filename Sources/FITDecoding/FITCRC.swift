/// The FIT SDK's CRC-16 (the reflected 0x8005 polynomial, initial value 0, computed a nibble
/// at a time), as a file's header CRC and file CRC use it.
public enum FITCRC {
    @usableFromInline static let table: [UInt16] = [
        0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401,
        0xA001, 0x6C00, 0x7800, 0xB401, 0x5000, 0x9C01, 0x8801, 0x4400,
    ]

    /// The CRC after one more byte: its low nibble first, then its high nibble.
    @inlinable public static func update(_ crc: UInt16, _ byte: UInt8) -> UInt16 {
        step(step(crc, byte & 0x0F), byte >> 4)
    }

    @inlinable static func step(_ crc: UInt16, _ nibble: UInt8) -> UInt16 {
        table[Int(crc & 0x0F)] ^ ((crc >> 4) & 0x0FFF) ^ table[Int(nibble)]
    }

    /// The CRC of `bytes`, starting from 0.
    @inlinable public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt16 {
        bytes.reduce(0, update)
    }
}
