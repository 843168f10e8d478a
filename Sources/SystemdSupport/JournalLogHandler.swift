import CSystemd
@preconcurrency import Glibc
import Logging

/// A swift-log handler that writes to the systemd journal through sd_journal_sendv(3), with
/// structured fields: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, CODE_FILE/LINE/FUNC, and each
/// metadata key as an upper-case field (`device` → DEVICE=AA:BB:…), so
/// `journalctl -u hrmd DEVICE=AA:BB:CC:DD:EE:FF` finds one strap's lines. The journal adds
/// the timestamp; the message carries none.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let identifier: String

    public init(identifier: String) {
        self.identifier = identifier
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let context = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        var fields = [
            "MESSAGE=\(event.message)\(context.isEmpty ? "" : " (\(context))")",
            "PRIORITY=\(Self.priority(event.level))",
            "SYSLOG_IDENTIFIER=\(identifier)",
            "CODE_FILE=\(event.file)",
            "CODE_LINE=\(event.line)",
            "CODE_FUNC=\(event.function)",
            "LOGGER=\(event.source)",
        ]
        for (key, value) in merged {
            if let name = Self.fieldName(key) { fields.append("\(name)=\(value)") }
        }
        Self.send(fields)
    }

    /// syslog(3) priorities.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// A journal field name for a metadata key: upper case letters, digits and underscores,
    /// not starting with an underscore or digit; nil when nothing is left.
    static func fieldName(_ key: String) -> String? {
        let mapped = String(key.uppercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
        let trimmed = mapped.drop { $0 == "_" || $0.isNumber }
        guard !trimmed.isEmpty, trimmed.count <= 64 else { return nil }
        return String(trimmed)
    }

    /// One sd_journal_sendv call, the fields laid out in one buffer.
    private static func send(_ fields: [String]) {
        var buffer: [UInt8] = []
        var ranges: [Range<Int>] = []
        for field in fields {
            let start = buffer.count
            buffer.append(contentsOf: field.utf8)
            ranges.append(start..<buffer.count)
        }
        buffer.withUnsafeMutableBufferPointer { bytes in
            var vectors = ranges.map { range in
                iovec(iov_base: UnsafeMutableRawPointer(bytes.baseAddress! + range.lowerBound), iov_len: range.count)
            }
            _ = sd_journal_sendv(&vectors, Int32(vectors.count))
        }
    }

    /// Whether stderr is connected to the journal ($JOURNAL_STREAM names its device and
    /// inode), as systemd.exec(5) says to check.
    public static var stderrIsJournal: Bool {
        guard let value = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
