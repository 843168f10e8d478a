/// The part of a PMD message that a ``PMDDecodingError`` refers to.
public enum PMDField: Equatable, Hashable, Sendable {
    /// The 10-byte data frame header (type, timestamp, frame type).
    case frameHeader
    /// Sample number `index` (0-based) of a raw (uncompressed) frame.
    case sample(index: Int)
    /// The reference sample at the start of a delta-compressed frame.
    case referenceSample
    /// The two-byte header (bit width, sample count) of delta block `block` (0-based).
    case deltaBlockHeader(block: Int)
    /// The bit-packed deltas of delta block `block` (0-based).
    case deltaBlockData(block: Int)
    /// The fixed part of a control point response (`0xF0, op, type, status`).
    case controlPointResponse
    /// A control point indication that is empty or too short to be interpreted.
    case controlPointIndication
    /// The value list of a setting in a settings (TLV) parameter block.
    case settingValues(PMDSettingType)
    /// The header (setting type and count) of a setting in a settings parameter block.
    case settingHeader
    /// The feature bitmask read from the control point.
    case features
}

/// A typed error raised when PMD bytes cannot be decoded. Decoding never traps: every
/// malformed, truncated or unknown input is reported with one of these cases.
public enum PMDDecodingError: Error, Equatable, Hashable, Sendable {
    /// `field` needs `needed` bytes but only `available` are present.
    case truncated(PMDField, needed: Int, available: Int)
    /// The measurement type / frame type pair is not decoded by this module.
    /// `measurementType` is the raw byte 0 of the frame, `frameType` the raw byte 9
    /// (including the compression bit 0x80).
    case unsupported(measurementType: UInt8, frameType: UInt8)
    /// A raw frame's payload of `payloadLength` bytes is not a whole number of
    /// `sampleSize`-byte samples (the last sample is cut short).
    case partialSample(payloadLength: Int, sampleSize: Int)
    /// A frame carries no samples at all (header only).
    case noSamples
    /// Delta block `block` declares a bit width outside 1...32.
    case invalidDeltaBitWidth(block: Int, bitWidth: UInt8)
    /// A control point response did not start with 0xF0.
    case invalidResponseCode(UInt8)
    /// The features value did not start with 0x0F.
    case invalidFeaturesHeader(UInt8)
    /// A settings parameter block contains a setting type this module does not know
    /// (its value size is unknown, so the rest of the block cannot be parsed).
    case unknownSettingType(UInt8)
}

extension PMDField: CustomStringConvertible {
    /// The part in words: `the frame header`, `sample 3`, `delta block 2's data`.
    public var description: String {
        switch self {
        case .frameHeader: "the frame header"
        case .sample(let index): "sample \(index)"
        case .referenceSample: "the reference sample"
        case .deltaBlockHeader(let block): "delta block \(block)'s header"
        case .deltaBlockData(let block): "delta block \(block)'s data"
        case .controlPointResponse: "the control point response"
        case .controlPointIndication: "the control point indication"
        case .settingValues(let setting): "the values of setting \(setting)"
        case .settingHeader: "a setting's header"
        case .features: "the features"
        }
    }
}

extension PMDDecodingError: CustomStringConvertible {
    /// One line saying what is wrong, with the numbers.
    public var description: String {
        switch self {
        case .truncated(let field, let needed, let available):
            "\(field) is cut short: \(needed) bytes needed, \(available) there"
        case .unsupported(let type, let frameType):
            "measurement type \(type) with frame type 0x\(String(frameType, radix: 16)) is not one this hrmd decodes"
        case .partialSample(let length, let size):
            "the last sample is cut short: \(length) bytes of samples are not a whole number of \(size)-byte samples"
        case .noSamples: "the frame holds no samples"
        case .invalidDeltaBitWidth(let block, let width): "delta block \(block) has a bit width of \(width), outside 1…32"
        case .invalidResponseCode(let code): "a control point response starts with 0xf0, not 0x\(String(code, radix: 16))"
        case .invalidFeaturesHeader(let byte): "the features value starts with 0x0f, not 0x\(String(byte, radix: 16))"
        case .unknownSettingType(let type): "setting type \(type) is unknown, so the rest of the settings cannot be read"
        }
    }
}
