import CommandSupport
import HRMConfiguration
import Logging
import SystemdSupport

/// Where hrmd logs: to the journal when its standard error is the journal's stream, else to
/// standard error.
enum DaemonLogging {
    /// Sends every logger to its place at `level` and returns hrmd's own.
    static func bootstrap(level name: LogLevelName) -> Logger {
        let level = Logger.Level(name)
        let toJournal = JournalLogHandler.stderrIsJournal
        LoggingSystem.bootstrap { label in
            if toJournal {
                var handler = EscapingLogHandler(base: JournalLogHandler(identifier: "hrmd"))
                handler.logLevel = level
                return handler
            }
            var handler = EscapingLogHandler(base: StreamLogHandler.standardError(label: label))
            handler.logLevel = level
            return handler
        }
        return Logger(label: "hrmd")
    }
}

extension Logger.Level {
    init(_ name: LogLevelName) {
        switch name {
        case .trace: self = .trace
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}

/// Writes through `base` with control characters escaped in the message and in every metadata
/// value (``TerminalText``): a strap's name or a device string holding a newline or an escape
/// sequence cannot begin a forged line of hrmd's log or reach the reader's terminal raw.
struct EscapingLogHandler<Base: LogHandler>: LogHandler {
    var base: Base

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue.mapValues(Self.escaped) }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue.map(Self.escaped) }
    }

    func log(event: LogEvent) {
        var event = event
        event.message = "\(TerminalText.escaped(event.message.description))"
        event.metadata = event.metadata?.mapValues(Self.escaped)
        base.log(event: event)
    }

    private static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(TerminalText.escaped(text))
        case .stringConvertible(let convertible): .string(TerminalText.escaped(convertible.description))
        case .array(let values): .array(values.map(escaped))
        case .dictionary(let values): .dictionary(values.mapValues(escaped))
        }
    }
}
