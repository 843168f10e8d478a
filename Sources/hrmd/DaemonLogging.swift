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
                var handler = JournalLogHandler(identifier: "hrmd")
                handler.logLevel = level
                return handler
            }
            var handler = StreamLogHandler.standardError(label: label)
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
