/// A configuration that cannot be used, with where it came from; descriptions are one line.
public enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A problem at a line of a configuration file, naming the key when there is one.
    case invalidLine(file: String, line: Int, key: String?, message: String)
    /// A `--sensor` specification that cannot be parsed.
    case invalidSensor(spec: String, message: String)
    /// The configuration file could not be read.
    case unreadable(file: String, reason: String)

    public var description: String {
        switch self {
        case .invalidLine(let file, let line, let key?, let message): "\(file):\(line): key '\(key)': \(message)"
        case .invalidLine(let file, let line, nil, let message): "\(file):\(line): \(message)"
        case .invalidSensor(let spec, let message): "invalid sensor '\(spec)': \(message)"
        case .unreadable(let file, let reason): "cannot read \(file): \(reason)"
        }
    }
}
