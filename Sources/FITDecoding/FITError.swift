/// What is wrong with a FIT file, with where; descriptions are one line.
public enum FITError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No FIT header: too short, or no ".FIT" signature.
    case notAFITFile
    /// The header's own CRC does not match.
    case headerCRCMismatch
    /// The file ends before the data size the header announces (plus its CRC).
    case truncated(atOffset: Int)
    /// The CRC over header and data does not match the one at the end of the file.
    case fileCRCMismatch(expected: UInt16, actual: UInt16)
    /// A data message uses a local message type no definition introduced.
    case undefinedLocalMessage(Int, atOffset: Int)
    /// A definition that cannot be right (a field larger than the record, say).
    case malformedDefinition(atOffset: Int)

    public var description: String {
        switch self {
        case .notAFITFile: "not a FIT file (no .FIT header)"
        case .headerCRCMismatch: "FIT header CRC does not match"
        case .truncated(let offset): "FIT file is truncated at byte \(offset)"
        case .fileCRCMismatch(let expected, let actual):
            "FIT file CRC does not match (file says \(String(expected, radix: 16)), data gives \(String(actual, radix: 16)))"
        case .undefinedLocalMessage(let type, let offset): "FIT data message at byte \(offset) uses undefined local message type \(type)"
        case .malformedDefinition(let offset): "malformed FIT definition message at byte \(offset)"
        }
    }
}
