import Foundation
import GRDB

/// Ways a store file gets damaged, for the tests that show nothing writes into it.
public enum StoreDamage {
    /// What went wrong damaging a file.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Overwrites a leaf page of the samples' table (the `skipping`-th, in page order) with
    /// garbage, as a bad sector or a stray write would.
    public static func garbagePage(in path: String, skipping: Int = 0) throws {
        let page = try DatabaseQueue(path: path).read { db in
            try Int.fetchOne(
                db, sql: "SELECT pageno FROM dbstat WHERE name = 'series' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET ?",
                arguments: [skipping])
        }
        guard let page else { throw Failure(description: "\(path) has no leaf page \(skipping) of series") }
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(page - 1) * 4096)
        try handle.write(contentsOf: Data(repeating: 0xDE, count: 4096))
        try handle.close()
    }

    /// Cuts the file after its first `pages` pages.
    public static func truncate(_ path: String, keepingPages pages: Int) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(pages) * 4096)
        try handle.close()
    }

    /// Puts a write-ahead log of another SQLite database beside the store as its `-wal` file
    /// (a backup restored beside a stale log), after checkpointing the store so that only the
    /// log is foreign. The other database is made in `directory`.
    public static func foreignLog(beside path: String, in directory: String) throws {
        let other = "\(directory)/other-\(UUID().uuidString).sqlite"
        let pool = try DatabasePool(path: other)
        try pool.write { db in
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            try db.execute(sql: "CREATE TABLE notes (text TEXT)")
            for _ in 0..<100 { try db.execute(sql: "INSERT INTO notes VALUES (?)", arguments: [String(repeating: "n", count: 100)]) }
        }
        guard let log = FileManager.default.contents(atPath: other + "-wal"), log.count > 4096 else {
            throw Failure(description: "the other database left no write-ahead log")
        }
        try DatabaseQueue(path: path).writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try? FileManager.default.removeItem(atPath: path + "-wal")
        try? FileManager.default.removeItem(atPath: path + "-shm")
        try log.write(to: URL(fileURLWithPath: path + "-wal"))
        try pool.close()
    }
}
