/// Why a frame (or part of one) did not become a stored sample.
public enum SkipReason: Hashable, Sendable, CustomStringConvertible {
    /// The bytes did not decode; the associated text says how.
    case malformed(String)
    /// The strap supports contact detection and reported no skin contact.
    case contactNotDetected
    /// The heart rate was outside 1…300 count/min.
    case heartRateOutOfRange
    /// An RR interval of zero length.
    case emptyRRInterval
    /// A frame of a transport this pipeline has no decoder for.
    case unsupportedTransport(String)
    /// A PMD data frame of a measurement the strap was not asked to start, or of another
    /// frame type than its start announced.
    case pmdNotStarted
    /// A PMD data frame whose timestamp cannot be right; the text says how.
    case pmdTimestamp(String)

    /// A stable key for counting, so every malformed frame counts under one reason.
    public var category: String {
        switch self {
        case .malformed: "malformed frame"
        case .contactNotDetected: "contact not detected"
        case .heartRateOutOfRange: "heart rate out of range"
        case .emptyRRInterval: "zero RR interval"
        case .unsupportedTransport(let name): "no decoder for \(name) frames"
        case .pmdNotStarted: "PMD frame of a stream not started"
        case .pmdTimestamp: "PMD frame with an impossible timestamp"
        }
    }

    public var description: String {
        if case .malformed(let detail) = self { return "malformed frame (\(detail))" }
        if case .pmdTimestamp(let detail) = self { return "PMD frame with an impossible timestamp (\(detail))" }
        return category
    }
}
