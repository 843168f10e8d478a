import HealthModel
import GRDB

/// How many samples a chunk takes before it closes, so that chunk rows share the pages of
/// table `series` without waste.
///
/// SQLite keeps each row whole in a leaf page of the table's b-tree (rows up to nearly a page
/// long), so a page holds whole rows only. Rows of about one size fill a page when that size
/// is just under a whole fraction of it and waste the rest when it is just over: in a 4 KiB
/// page (4088 bytes for cells) rows of 810 bytes fit five to a page, rows of 830 only four,
/// leaving a fifth of every page empty. The chunks of a live stream all grow to about one
/// size, so a bound on the count alone makes that waste the rule in some stores.
///
/// A chunk therefore closes when its row would outgrow a quarter of a page (1022 bytes of
/// cell in a 4 KiB page): rows grow in place as the open chunk takes each flush, and when one
/// no longer fits its page SQLite moves it to a new page, so a page keeps four rows of up to
/// a quarter each. A quarter page of heart rates at 4 Hz holds some 330 samples; RR intervals
/// some 200 beats. Highly compressible series close at `SeriesBlobs.maximumCount` first.
struct ChunkBudget {
    /// The most bytes a chunk row's cell may take.
    let cellBytes: Int

    /// The budget for pages of `pageSize` bytes: a quarter of the leaf page less its 8-byte
    /// header.
    init(pageSize: Int) {
        cellBytes = max(pageSize - 8, 4) / 4
    }

    /// The budget of the store behind `db`, from its page size.
    init(_ db: Database) throws {
        self.init(pageSize: try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096)
    }

    /// Whether a chunk row whose cell takes `bytes` is within budget.
    func admits(cellBytes bytes: Int) -> Bool {
        bytes <= cellBytes
    }

    /// The longest run of `points` from index `start` (at most `SeriesBlobs.maximumCount`,
    /// at least one sample) whose row is within budget, encoded; `cellBytes` gives the size
    /// of a chunk's row. The count tried first is all of them, or `hint` when fewer (the
    /// count the chunk before closed at, say).
    func longestChunk(of points: SeriesPoints, from start: Int, hint: Int? = nil, cellBytes: (EncodedChunk) -> Int) -> EncodedChunk {
        func encoded(_ count: Int) -> (chunk: EncodedChunk, bytes: Int) {
            let chunk = EncodedChunk(points.selecting(start..<start + count))
            return (chunk, cellBytes(chunk))
        }
        let available = min(points.count - start, SeriesBlobs.maximumCount)
        // The size grows about in proportion to the count (each chunk picks its own codes, so
        // not exactly): the count that fits is searched between `low` (fits, or is the least)
        // and `high` (does not), guessed from the bytes per sample of the last try, and
        // halved instead whenever a guess did not halve the range.
        var fitting: EncodedChunk?
        var (low, high) = (1, available + 1)
        var guess = min(hint ?? available, available)
        while high - low > 1 {
            let range = high - low
            let count = min(max(guess, low + 1), high - 1)
            let tried = encoded(count)
            if admits(cellBytes: tried.bytes) {
                (low, fitting) = (count, tried.chunk)
                if count == available { break }
            } else {
                high = count
            }
            guess = 2 * (high - low) > range ? (low + high) / 2 : count * self.cellBytes / tried.bytes
        }
        return fitting ?? encoded(1).chunk
    }
}

/// The bytes SQLite's record format takes for a row, and the cell that holds it in a table
/// leaf page (https://sqlite.org/fileformat2.html, "Record Format" and "B-tree Pages").
enum SQLiteRecord {
    /// The record of `values`, in column order: a header of serial types, then the bodies.
    /// Doubles are those of REAL columns: a whole one is stored as an integer (SQLite's
    /// space optimisation for REAL affinity).
    static func payloadBytes(of values: [DatabaseValue]) -> Int {
        var header = 0, body = 0
        for value in values {
            let (serialType, bytes) = serialType(of: value)
            header += varintLength(serialType)
            body += bytes
        }
        // The header begins with its own length, that varint included.
        let headerLength = header + varintLength(UInt64(header + 1))
        return headerLength + body
    }

    /// The bytes a row's cell takes in a table leaf page: the payload's length, the rowid,
    /// the payload, and the cell's 2-byte pointer.
    static func cellBytes(payload: Int, rowID: Int64) -> Int {
        varintLength(UInt64(payload)) + varintLength(UInt64(bitPattern: rowID)) + payload + 2
    }

    private static func serialType(of value: DatabaseValue) -> (type: UInt64, bytes: Int) {
        switch value.storage {
        case .null: return (0, 0)
        case .int64(let integer): return integerSerialType(integer)
        case .double(let double):
            if double.rounded() == double, double.magnitude < 0x1p63 {
                let integer = integerSerialType(Int64(double))
                // A whole double that would take 8 bytes as an integer stays a double.
                return integer.bytes < 8 ? integer : (7, 8)
            }
            return (7, 8)
        case .string(let string):
            let length = string.utf8.count
            return (UInt64(length) * 2 + 13, length)
        case .blob(let data):
            return (UInt64(data.count) * 2 + 12, data.count)
        }
    }

    private static func integerSerialType(_ value: Int64) -> (type: UInt64, bytes: Int) {
        if value == 0 || value == 1 { return (8 + UInt64(value), 0) }
        let magnitude = value < 0 ? ~value : value
        switch magnitude {
        case ..<0x80: return (1, 1)
        case ..<0x8000: return (2, 2)
        case ..<0x80_0000: return (3, 3)
        case ..<0x8000_0000: return (4, 4)
        case ..<0x8000_0000_0000: return (5, 6)
        default: return (6, 8)
        }
    }

    /// The length of SQLite's varint of `value` (7 bits a byte, the ninth byte 8 bits).
    static func varintLength(_ value: UInt64) -> Int {
        let bits = 64 - value.leadingZeroBitCount
        return bits > 56 ? 9 : max(1, (bits + 6) / 7)
    }
}
