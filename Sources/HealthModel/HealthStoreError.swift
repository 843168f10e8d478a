import Timestamps

/// What can go wrong with the store, each with its cause; descriptions are one line.
public enum HealthStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The store file does not exist and the caller did not ask to create it.
    case missing(path: String)
    /// The store could not be created (directory missing, read-only file system, …).
    case cannotCreate(path: String, reason: String)
    /// The store exists but could not be opened or read.
    case cannotOpen(path: String, reason: String)
    /// The file or its directory is not accessible to this user.
    case permissionDenied(path: String, reason: String)
    /// The store was written by a newer version with migrations this one does not know.
    case newerSchema(path: String)
    /// The type name is not one the store knows.
    case unknownType(String)
    /// A quantity's unit does not fit the sample type.
    case incompatibleUnit(type: String, unit: String)
    /// A sample whose end is before its start.
    case invalidInterval(start: Timestamp, end: Timestamp)
    /// A save that must be all or nothing holds types the source may not share (their
    /// identifiers, in storage order); nothing was written.
    case shareNotAuthorized(source: String, types: [String])
    /// SQLite reported an error.
    case database(String)
    /// A chunk of samples (a row of table `series`) cannot be decoded: the file was damaged.
    case damagedSeries(chunk: Int64, reason: String)
    /// SQLite found the file damaged (a page of garbage, a truncated file, a WAL of another
    /// file); nothing was written to it.
    case damaged(path: String, reason: String)
    /// The file is a store, but its write-ahead log (`PATH-wal`) is another database's:
    /// SQLite would read it into the store. Nothing was written.
    case foreignWriteAheadLog(path: String)
    /// A bound on what one program or user may record was reached (the message names it);
    /// nothing was written.
    case limitReached(String)
    /// A store another engine keeps (the central PostgreSQL store) failed, or cannot do what
    /// was asked of it: that engine's own line, and what kind of failure it is.
    case engine(EngineFailure)
    /// What was asked does not fit what the store holds (a person added twice, a strap assigned
    /// to nobody the store knows); nothing was written.
    case conflict(String)

    /// The conflict of a person's name the store does not have.
    public static func noPerson(named name: String) -> HealthStoreError {
        .conflict("no person named \(name.debugDescription); add them with hrmctl person add")
    }

    public var description: String {
        switch self {
        case .missing(let path): "no store at \(path)"
        case .limitReached(let what): what
        case .engine(let failure): failure.message
        case .conflict(let what): what
        case .cannotCreate(let path, let reason): "cannot create the store \(path): \(reason)"
        case .cannotOpen(let path, let reason): "cannot open the store \(path): \(reason)"
        case .permissionDenied(let path, let reason): "permission denied for the store \(path): \(reason)"
        case .newerSchema(let path): "the store \(path) was written by a newer hrmd; upgrade hrmd to read it"
        case .unknownType(let name): "unknown sample type '\(name)'"
        case .incompatibleUnit(let type, let unit): "unit \(unit) is not compatible with \(type)"
        case .invalidInterval(let start, let end): "sample ends (\(end)) before it starts (\(start))"
        case .shareNotAuthorized(let source, let types):
            "\(source) may not store \(types.joined(separator: ", ")); nothing was saved"
        case .database(let message): "store error: \(message)"
        case .damagedSeries(let chunk, let reason):
            "the store holds a damaged chunk of samples (series row \(chunk): \(reason))"
        case .damaged(let path, let reason):
            "the store \(path) is damaged (\(reason)); keep a copy, stop hrmd, and recover what it holds with"
                + " 'sqlite3 \(path) .recover | sqlite3 recovered.sqlite'"
        case .foreignWriteAheadLog(let path):
            "the store \(path) is damaged: its write-ahead log \(path)-wal is another database's, which SQLite would merge into it;"
                + " nothing was written; move the log away ('mv \(path)-wal \(path)-wal.foreign') to read the store as last checkpointed"
        }
    }
}

/// A failure of a store another engine keeps, told by kind, so that a caller reports it as it
/// would that engine's own error.
public struct EngineFailure: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// The engine cannot be reached: the connection failed, broke or timed out.
        case unreachable
        /// The engine refused the caller's role.
        case permissionDenied
        /// The store is read-only to this caller (the message says who writes it).
        case readOnly
        /// The arguments are not ones the engine can answer (a time zone it does not know).
        case invalidArguments
        /// The answer would be past a budget (the message names it).
        case limitReached
        /// Anything else the engine said.
        case failed
    }

    public var kind: Kind
    /// One line, as the engine's error says it.
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}
