import HealthModel

/// What one caller sees of the store: whose samples (``reader``: nil for a manager, who sees
/// every source's; else the caller's source, which sees others' only with read authorization)
/// and how sample ids and anchors are shown to it (plain to a manager, as ``AnchorTokens``
/// to an application, so that they tell it nothing about samples it may not read).
public struct CallerView: Sendable {
    public let reader: String?
    /// nil for a manager: plain numbers.
    public let tokens: AnchorTokens?

    /// What `source` sees: every source and plain numbers as a manager, else its own reader
    /// and ids and anchors as `tokens`.
    public init(source: String, isManager: Bool, tokens: AnchorTokens) {
        reader = isManager ? nil : source
        self.tokens = isManager ? nil : tokens
    }

    /// A stored sample as this caller receives it.
    public func record(_ stored: StoredSample) -> SampleRecord {
        var record = SampleRecord(stored)
        if let tokens { record.id = tokens.id(record.id) }
        return record
    }

    /// A deletion as this caller receives it.
    public func deleted(_ deletion: DeletedSample) -> DeletedSample {
        guard let tokens else { return deletion }
        var shown = deletion
        shown.id = tokens.id(deletion.id)
        shown.anchor = Int64(bitPattern: tokens.token(deletion.anchor))
        return shown
    }

    /// An anchor as this caller receives it (`t` on the wire).
    public func anchor(_ plain: Int64) -> UInt64 {
        guard let tokens else { return UInt64(max(0, plain)) }
        return tokens.token(plain)
    }

    /// The plain anchor of one this caller passed back; a manager's must be a plain anchor.
    public func plainAnchor(_ shown: UInt64) throws(RequestFailure) -> Int64 {
        guard let tokens else {
            guard shown <= UInt64(Int64.max) else { throw .invalidArguments("anchor \(shown) is out of range") }
            return Int64(shown)
        }
        return max(0, tokens.plain(shown))
    }
}
