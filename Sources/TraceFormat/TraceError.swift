/// Why a trace line could not be read; descriptions are one line.
public enum TraceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The first line is not an hrmd-trace header.
    case notATrace
    /// The header names a version this reader does not know.
    case unsupportedVersion(Int)
    /// The line is not a JSON object.
    case malformedJSON
    /// A required key is absent or of the wrong JSON type.
    case missingKey(String)
    /// A key holds a value that cannot be used.
    case invalidValue(key: String, value: String)

    public var description: String {
        switch self {
        case .notATrace: "not an hrmd trace (the first line must be {\"format\":\"hrmd-trace\",\"version\":1,…})"
        case .unsupportedVersion(let version): "hrmd-trace version \(version) is not supported (this hrmd reads version 1)"
        case .malformedJSON: "not a JSON object"
        case .missingKey(let key): "missing or mistyped key '\(key)'"
        case .invalidValue(let key, let value): "invalid \(key) '\(value)'"
        }
    }
}
