import ByteSources

/// What is wrong with a FIT file, and where (byte offsets count from the start of the
/// bytes given to the decoder). Each description is one line.
public enum FITError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes do not start with a FIT file header: fewer than 12 bytes, no ".FIT"
    /// signature, or a header size below 12 (or of 13, which leaves no room for its CRC).
    case notAFITFile
    /// The header's own CRC (header size 14 and up, when not 0) does not match its bytes.
    case headerCRCMismatch
    /// The CRC at the end of the file does not match the one of the header and data.
    case fileCRCMismatch(expected: UInt16, actual: UInt16)
    /// The bytes end at `offset` (the end of the file, or of the data section the header
    /// announces) before the header, record or file CRC being read is complete.
    case truncated(atOffset: Int)
    /// The data message at `offset` uses a local message type no definition introduced.
    case undefinedLocalMessage(Int, atOffset: Int)
    /// The definition message at `offset` cannot be right (its architecture is neither
    /// little nor big endian).
    case malformedDefinition(atOffset: Int)
    /// The bytes after a file's CRC, from `offset` on, are not another (chained) FIT file.
    case unexpectedTrailingBytes(atOffset: Int)
    /// The file could not be read on (an I/O error, with its errno).
    case unreadable(ByteSourceError)

    public var description: String {
        switch self {
        case .notAFITFile:
            "not a FIT file (no FIT header with a .FIT signature)"
        case .headerCRCMismatch:
            "FIT header CRC does not match the header"
        case .fileCRCMismatch(let expected, let actual):
            "FIT file CRC does not match: the file says 0x\(Self.hex(expected)), its bytes give 0x\(Self.hex(actual))"
        case .truncated(let offset):
            "FIT file is truncated: it ends at byte \(offset) inside a header, record or CRC"
        case .undefinedLocalMessage(let type, let offset):
            "FIT data message at byte \(offset) uses local message type \(type), which no definition introduced"
        case .malformedDefinition(let offset):
            "FIT definition message at byte \(offset) is malformed (architecture neither little nor big endian)"
        case .unexpectedTrailingBytes(let offset):
            "FIT file has bytes after its CRC, from byte \(offset), that are not another FIT file"
        case .unreadable(let error):
            "FIT file cannot be read on: \(error)"
        }
    }

    private static func hex(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}
