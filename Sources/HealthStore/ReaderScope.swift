import HealthModel
import GRDB

/// Which sources' samples a reading program sees, decided inside its read transaction: every
/// source's with read authorization for the type, else only its own (as in HealthKit, a read
/// denial is not an error and is not revealed). No reader is the store's owner: everything.
struct ReaderScope {
    /// The source the reader is restricted to, or nil when it sees every source.
    let restrictedTo: String?

    init(reader: String?, type: SampleType, _ db: Database) throws {
        guard let reader else {
            restrictedTo = nil
            return
        }
        let status = try HealthStore.status(of: .read, source: reader, type: type, db)
        restrictedTo = status == .sharingAuthorized ? nil : reader
    }

    /// The condition that keeps rows whose `column` (a source id) the reader may see, with its
    /// argument; nil when it sees every source.
    func condition(on column: String) -> (sql: String, arguments: StatementArguments)? {
        restrictedTo.map { ("\(column) = (SELECT id FROM source WHERE name = ?)", [$0]) }
    }
}
