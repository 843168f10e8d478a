import CPostgreSQL
import Glibc

/// The rows of one statement's answer, in text format. Reading it is safe from any thread; it
/// frees libpq's result when released. Rows and columns count from 0; an index out of range
/// is a programming error and traps.
public final class PostgresResult: @unchecked Sendable {
    private let handle: OpaquePointer
    private let pq: LibPQ
    /// How many rows the statement returned.
    public let rowCount: Int
    /// How many columns each row has.
    public let columnCount: Int

    init(_ handle: OpaquePointer, pq: LibPQ) {
        self.handle = handle
        self.pq = pq
        rowCount = Int(pq.tupleCount(handle))
        columnCount = Int(pq.fieldCount(handle))
    }

    deinit { pq.clear(handle) }

    var handleForErrors: OpaquePointer { handle }

    /// The rows an INSERT, UPDATE, DELETE, MERGE, SELECT, COPY … touched (PQcmdTuples), nil
    /// for statements that report none.
    public var affectedRows: Int? { Int(LibPQ.text(pq.commandTuples(handle))) }

    /// The command tag, such as `INSERT 0 3` or `COMMIT`.
    public var commandStatus: String { LibPQ.text(pq.commandStatus(handle)) }

    /// The name of a column.
    public func columnName(_ column: Int) -> String {
        precondition(column >= 0 && column < columnCount, "column \(column) out of range")
        return LibPQ.text(pq.fieldName(handle, Int32(column)))
    }

    /// The index of the column with this name, if there is one.
    public func column(named name: String) -> Int? {
        (0..<columnCount).first { columnName($0) == name }
    }

    /// Whether a value is SQL NULL.
    public func isNull(_ row: Int, _ column: Int) -> Bool {
        check(row, column)
        return pq.getIsNull(handle, Int32(row), Int32(column)) == 1
    }

    /// A value's text; nil for NULL.
    public func string(_ row: Int, _ column: Int) -> String? {
        if isNull(row, column) { return nil }
        return LibPQ.text(pq.getValue(handle, Int32(row), Int32(column)))
    }

    /// A bigint (or any integer) value. Throws `.badValue` for NULL or a value that is not one.
    public func int64(_ row: Int, _ column: Int) throws(PostgresError) -> Int64 {
        try parse(row, column) { bytes in TextNumbers.int64(bytes, bytes.startIndex, bytes.endIndex) }
    }

    /// An integer value as `Int`. Throws `.badValue` for NULL or a value that is not one.
    public func int(_ row: Int, _ column: Int) throws(PostgresError) -> Int {
        Int(try int64(row, column))
    }

    /// A double precision (or real, or numeric) value. Throws `.badValue` for NULL or a value that is not one.
    public func double(_ row: Int, _ column: Int) throws(PostgresError) -> Double {
        try parse(row, column) { bytes in TextNumbers.double(bytes, bytes.startIndex, bytes.endIndex) }
    }

    /// A boolean value (`t` or `f`). Throws `.badValue` for NULL or anything else.
    public func bool(_ row: Int, _ column: Int) throws(PostgresError) -> Bool {
        try parse(row, column) { bytes in
            guard bytes.count == 1 else { return nil }
            return bytes[0] == UInt8(ascii: "t") ? true : bytes[0] == UInt8(ascii: "f") ? false : nil
        }
    }

    /// A one-dimensional bigint[] (or int[], smallint[]) value, NULL elements as nil.
    /// Throws `.badValue` for a NULL array or text that is not such an array.
    public func int64Array(_ row: Int, _ column: Int) throws(PostgresError) -> [Int64?] {
        try parse(row, column) { bytes in TextArray.parse(bytes, element: TextNumbers.int64) }
    }

    /// A one-dimensional integer[] value, NULL elements as nil.
    public func int32Array(_ row: Int, _ column: Int) throws(PostgresError) -> [Int32?] {
        try parse(row, column) { bytes in
            TextArray.parse(bytes) { bytes, start, end in TextNumbers.int64(bytes, start, end).flatMap { Int32(exactly: $0) } }
        }
    }

    /// A one-dimensional double precision[] (or real[], numeric[]) value, NULL elements as nil.
    public func doubleArray(_ row: Int, _ column: Int) throws(PostgresError) -> [Double?] {
        try parse(row, column) { bytes in TextArray.parse(bytes, element: TextNumbers.double) }
    }

    /// Like `int64Array`, for arrays without NULL elements: one is a `.badValue`.
    public func int64Elements(_ row: Int, _ column: Int) throws(PostgresError) -> [Int64] {
        try parse(row, column) { bytes in TextArray.parseNonNull(bytes, element: TextNumbers.int64) }
    }

    /// Like `int32Array`, for arrays without NULL elements: one is a `.badValue`.
    public func int32Elements(_ row: Int, _ column: Int) throws(PostgresError) -> [Int32] {
        try parse(row, column) { bytes in
            TextArray.parseNonNull(bytes) { bytes, start, end in TextNumbers.int64(bytes, start, end).flatMap { Int32(exactly: $0) } }
        }
    }

    /// Like `doubleArray`, for arrays without NULL elements: one is a `.badValue`.
    public func doubleElements(_ row: Int, _ column: Int) throws(PostgresError) -> [Double] {
        try parse(row, column) { bytes in TextArray.parseNonNull(bytes, element: TextNumbers.double) }
    }

    /// Reads a non-NULL value's bytes (NUL-terminated after its end) with `parser`; nil from
    /// it, or NULL, is a `.badValue`.
    private func parse<T>(_ row: Int, _ column: Int, _ parser: (UnsafeBufferPointer<UInt8>) -> T?) throws(PostgresError) -> T {
        if isNull(row, column) { throw .badValue(row: row, column: column, text: "NULL") }
        let value = pq.getValue(handle, Int32(row), Int32(column))!
        let length = Int(pq.getLength(handle, Int32(row), Int32(column)))
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: length)
        guard let parsed = parser(bytes) else {
            throw .badValue(row: row, column: column, text: String(cString: value))
        }
        return parsed
    }

    private func check(_ row: Int, _ column: Int) {
        precondition(row >= 0 && row < rowCount, "row \(row) out of range (\(rowCount) rows)")
        precondition(column >= 0 && column < columnCount, "column \(column) out of range (\(columnCount) columns)")
    }
}

/// Numbers in PostgreSQL's text output, read from bytes in place.
enum TextNumbers {
    /// A decimal integer in `bytes[start..<end]`, optionally signed; nil if anything else or out of range.
    static func int64(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Int64? {
        var index = start
        var negative = false
        if index < end, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
            negative = bytes[index] == UInt8(ascii: "-")
            index += 1
        }
        guard index < end else { return nil }
        // Accumulated negative, so that Int64.min fits.
        var value: Int64 = 0
        while index < end {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = times10.subtractingReportingOverflow(Int64(digit))
            guard !overflow1, !overflow2 else { return nil }
            value = next
            index += 1
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    /// A float in `bytes[start..<end]` (NaN, Infinity, -Infinity included), read with strtod:
    /// the text must be followed by a byte strtod stops at (`,`, `}`, `"` or the NUL libpq puts
    /// after every value).
    static func double(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Double? {
        guard start < end, let base = bytes.baseAddress else { return nil }
        let first = bytes[start]
        // strtod skips leading white space; PostgreSQL writes none.
        guard first != UInt8(ascii: " ") && first != UInt8(ascii: "\t") else { return nil }
        let begin = UnsafeRawPointer(base.advanced(by: start) as UnsafePointer<UInt8>).assumingMemoryBound(to: CChar.self)
        var stop: UnsafeMutablePointer<CChar>?
        let value = strtod(begin, &stop)
        guard let stop, UnsafePointer<CChar>(stop) - begin == end - start else { return nil }
        return value
    }
}

/// One-dimensional arrays in PostgreSQL's text output (`{1,2,NULL}`, `[0:1]={1,2}`), read
/// byte by byte without making a String of each element.
enum TextArray {
    typealias ElementParser<T> = (UnsafeBufferPointer<UInt8>, Int, Int) -> T?

    static func parse<T>(_ bytes: UnsafeBufferPointer<UInt8>, element: ElementParser<T>) -> [T?]? {
        var values: [T?] = []
        let ok = scan(bytes) { start, end, quoted in
            if !quoted && isNull(bytes, start, end) {
                values.append(nil)
                return true
            }
            guard let value = element(bytes, start, end) else { return false }
            values.append(value)
            return true
        }
        return ok ? values : nil
    }

    static func parseNonNull<T>(_ bytes: UnsafeBufferPointer<UInt8>, element: ElementParser<T>) -> [T]? {
        var values: [T] = []
        let ok = scan(bytes) { start, end, _ in
            guard let value = element(bytes, start, end) else { return false }
            values.append(value)
            return true
        }
        return ok ? values : nil
    }

    private static func isNull(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        end - start == 4 && bytes[start] | 0x20 == UInt8(ascii: "n") && bytes[start + 1] | 0x20 == UInt8(ascii: "u")
            && bytes[start + 2] | 0x20 == UInt8(ascii: "l") && bytes[start + 3] | 0x20 == UInt8(ascii: "l")
    }

    /// Calls `element` with each element's byte range and whether it was quoted; false from
    /// it, or a malformed array, ends the scan with false.
    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>, _ element: (Int, Int, Bool) -> Bool) -> Bool {
        let end = bytes.count
        var index = 0
        if index < end, bytes[index] == UInt8(ascii: "[") {
            // Bounds decoration: skip to the "=" before the braces.
            while index < end, bytes[index] != UInt8(ascii: "=") { index += 1 }
            index += 1
        }
        guard index < end, bytes[index] == UInt8(ascii: "{") else { return false }
        index += 1
        guard index < end else { return false }
        if bytes[index] == UInt8(ascii: "}") { return index + 1 == end }
        while true {
            let start: Int
            let stop: Int
            var quoted = false
            if bytes[index] == UInt8(ascii: "\"") {
                quoted = true
                start = index + 1
                var close = start
                while close < end, bytes[close] != UInt8(ascii: "\"") {
                    if bytes[close] == UInt8(ascii: "\\") { return false }
                    close += 1
                }
                guard close < end else { return false }
                stop = close
                index = close + 1
            } else {
                start = index
                while index < end, bytes[index] != UInt8(ascii: ","), bytes[index] != UInt8(ascii: "}") {
                    if bytes[index] == UInt8(ascii: "{") { return false }
                    index += 1
                }
                stop = index
            }
            guard index < end, element(start, stop, quoted) else { return false }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                guard index < end else { return false }
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { return false }
            return index + 1 == end
        }
    }
}

extension PostgresResult {
    var resultStatus: ExecStatusType { pq.resultStatus(handleForErrors) }
    var errorMessage: String { LibPQ.text(pq.resultErrorMessage(handleForErrors)) }

    func field(_ code: Int32) -> String? {
        guard let value = pq.resultErrorField(handleForErrors, code) else { return nil }
        let text = PostgresError.oneLine(String(cString: value))
        return text.isEmpty ? nil : text
    }
}
