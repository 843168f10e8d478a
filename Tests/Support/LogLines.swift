import Logging
import Synchronization

/// A log handler that keeps each message, in order, for a test to read.
public struct LogLines: LogHandler {
    private let box: Box
    private final class Box: Sendable { let entries = Mutex<[String]>([]) }
    public var logLevel: Logger.Level = .trace
    public var metadata: Logger.Metadata = [:]

    public init() { box = Box() }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) { box.entries.withLock { $0.append(event.message.description) } }

    /// Every message logged so far, oldest first.
    public var lines: [String] { box.entries.withLock { $0 } }

    /// A logger whose messages go to this handler.
    public var logger: Logger {
        let handler = self
        return Logger(label: "test") { _ in handler }
    }
}
