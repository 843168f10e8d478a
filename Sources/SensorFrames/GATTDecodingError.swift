/// Why a raw GATT value (or the hex text standing for one) could not be decoded.
///
/// Every case names one specific defect, so callers and tests can tell them apart;
/// ``description`` turns it into one line fit for a log or a command-line error.
public enum GATTDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The value has no bytes at all (a Heart Rate Measurement needs at least its flags byte).
    case empty

    /// A Heart Rate Measurement field announced by the flags does not fit in what is left.
    ///
    /// - Parameters:
    ///   - field: the field that does not fit: `"heart rate"` or `"energy expended"`.
    ///   - needed: the bytes that field takes.
    ///   - available: the bytes that were left when the field was due.
    case truncated(field: String, needed: Int, available: Int)

    /// The RR-Interval part of a Heart Rate Measurement (everything after the heart rate and the
    /// energy expended) has an odd number of bytes, so it is not a whole number of uint16
    /// intervals. The payload is that byte count.
    case oddRRIntervalBytes(Int)

    /// The flags of a Heart Rate Measurement announce RR-Intervals but no byte follows; the
    /// specification says the field holds one or more intervals.
    case missingRRIntervals

    /// A Body Sensor Location value in the range the specification reserves for future use (7–255).
    case reservedSensorLocation(UInt8)

    /// A fixed-size value has the wrong number of bytes.
    case wrongLength(expected: Int, actual: Int)

    /// Text that should spell bytes in hexadecimal does not; the payload says why.
    case malformedHex(String)

    /// One line saying what is wrong, for instance
    /// `heart rate measurement truncated: energy expended needs 2 bytes, 1 left`.
    public var description: String {
        switch self {
        case .empty:
            return "empty value: there is not even a flags byte to decode"
        case let .truncated(field, needed, available):
            return "heart rate measurement truncated: \(field) needs \(Self.bytes(needed)), \(available) left"
        case let .oddRRIntervalBytes(count):
            return "heart rate measurement RR-interval field has \(Self.bytes(count)), "
                + "not a whole number of 2-byte intervals"
        case .missingRRIntervals:
            return "heart rate measurement flags announce RR-intervals but no bytes follow"
        case let .reservedSensorLocation(value):
            return "body sensor location \(value) is reserved for future use (known: 0 to 6)"
        case let .wrongLength(expected, actual):
            return "wrong length: expected \(Self.bytes(expected)), got \(actual)"
        case let .malformedHex(reason):
            return "malformed hex: \(reason)"
        }
    }

    private static func bytes(_ count: Int) -> String {
        count == 1 ? "1 byte" : "\(count) bytes"
    }
}
