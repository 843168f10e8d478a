import HealthModel
import GRDB

/// Which sources' samples a reading program sees (``ReadScope``, the store's read rule), with
/// its grant read inside the read transaction. No reader is the store's owner: everything.
struct ReaderScope {
    /// The source the reader is restricted to, or nil when it sees every source.
    let restrictedTo: String?

    init(reader: String?, type: SampleType, _ db: Database) throws {
        let mayRead = try reader.map { try HealthStore.status(of: .read, source: $0, type: type, db) == .sharingAuthorized } ?? true
        restrictedTo = ReadScope(reader: reader, mayReadType: mayRead).restrictedTo
    }

    /// The condition that keeps rows whose `column` (a source id) the reader may see, with its
    /// argument; nil when it sees every source.
    func condition(on column: String) -> (sql: String, arguments: StatementArguments)? {
        restrictedTo.map { ("\(column) = (SELECT id FROM source WHERE name = ?)", [$0]) }
    }
}
