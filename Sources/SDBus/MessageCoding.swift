import CSystemd
@preconcurrency import Glibc

/// The type character as sd-bus takes it.
@inline(__always)
func typeCode(_ ascii: Unicode.Scalar) -> CChar { CChar(bitPattern: UInt8(ascii: ascii)) }

/// Reads the body of an `sd_bus_message` into values (non-variadic sd-bus calls only).
struct MessageReader {
    let message: OpaquePointer
    /// What this read may take, when it is bounded (a caller's arguments); nil: everything.
    var allowance: DecodeAllowance? = nil

    /// Every remaining value at the current level.
    func readAll() throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while let value = try readNext() { values.append(value) }
        return values
    }

    /// The next value, or nil at the end of the current container.
    func readNext() throws(DBusError) -> DBusValue? {
        var type: CChar = 0
        var contentsPointer: UnsafePointer<CChar>?
        let more = sd_bus_message_peek_type(message, &type, &contentsPointer)
        try check(more, "sd_bus_message_peek_type")
        guard more > 0 else { return nil }
        try allowance?.take(type)
        let contents = contentsPointer.map { String(cString: $0) } ?? ""
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "y"): return .byte(try basic(type, UInt8(0)))
        case UInt8(ascii: "b"): return .bool(try basic(type, Int32(0)) != 0)
        case UInt8(ascii: "n"): return .int16(try basic(type, Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try basic(type, UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try basic(type, Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try basic(type, UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try basic(type, Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try basic(type, UInt64(0)))
        case UInt8(ascii: "d"): return .double(try basic(type, Double(0)))
        case UInt8(ascii: "s"): return .string(try text(type))
        case UInt8(ascii: "o"): return .objectPath(try text(type))
        case UInt8(ascii: "g"): return .signature(try text(type))
        case UInt8(ascii: "h"): return .unixFD(try DBusFileDescriptor.duplicate(try basic(type, Int32(-1))))
        case UInt8(ascii: "a"): return try array(of: contents)
        case UInt8(ascii: "r"):
            return .structure(try inside(type, contents) { () throws(DBusError) in try readAll() })
        case UInt8(ascii: "v"):
            let inner = try inside(type, contents) { () throws(DBusError) in try readNext() }
            guard let inner else { throw .unexpectedReply("an empty variant") }
            return .variant(inner)
        default:
            throw .unexpectedReply("D-Bus type '\(Character(Unicode.Scalar(UInt8(bitPattern: type))))' is not supported")
        }
    }

    private func array(of element: String) throws(DBusError) -> DBusValue {
        if element == "y" {
            var pointer: UnsafeRawPointer?
            var size = 0
            try check(sd_bus_message_read_array(message, typeCode("y"), &pointer, &size), "sd_bus_message_read_array")
            try allowance?.takeValues(size)
            guard let pointer, size > 0 else { return .bytes([]) }
            return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: size)))
        }
        if element.hasPrefix("{") {
            let entrySignature = String(element.dropFirst().dropLast())
            let keySignature = String(entrySignature.prefix(1))
            let valueSignature = String(entrySignature.dropFirst())
            let entries = try inside(typeCode("a"), element) { () throws(DBusError) -> [DBusDictionaryEntry] in
                var entries: [DBusDictionaryEntry] = []
                while true {
                    let entered = entrySignature.withCString { sd_bus_message_enter_container(message, typeCode("e"), $0) }
                    try check(entered, "sd_bus_message_enter_container(e)")
                    if entered == 0 { break }
                    guard let key = try readNext(), let value = try readNext() else {
                        throw .unexpectedReply("a dictionary entry without key or value")
                    }
                    try check(sd_bus_message_exit_container(message), "sd_bus_message_exit_container(e)")
                    entries.append(DBusDictionaryEntry(key, value))
                }
                return entries
            }
            return .dictionary(key: keySignature, value: valueSignature, entries)
        }
        return .array(element: element, try inside(typeCode("a"), element) { () throws(DBusError) in try readAll() })
    }

    private func inside<T>(_ type: CChar, _ contents: String, _ body: () throws(DBusError) -> T) throws(DBusError) -> T {
        let entered = contents.withCString { sd_bus_message_enter_container(message, type, $0) }
        try check(entered, "sd_bus_message_enter_container")
        let result = try body()
        try check(sd_bus_message_exit_container(message), "sd_bus_message_exit_container")
        return result
    }

    private func basic<T>(_ type: CChar, _ initial: T) throws(DBusError) -> T {
        var value = initial
        try check(withUnsafeMutablePointer(to: &value) { sd_bus_message_read_basic(message, type, $0) }, "sd_bus_message_read_basic")
        return value
    }

    private func text(_ type: CChar) throws(DBusError) -> String {
        var pointer: UnsafePointer<CChar>?
        try check(sd_bus_message_read_basic(message, type, &pointer), "sd_bus_message_read_basic")
        guard let pointer else { return "" }
        try allowance?.takeString(strlen(pointer))
        return String(cString: pointer)
    }
}

/// Appends values to an `sd_bus_message`, counting the bytes the body takes on the wire as it
/// goes (``size``: D-Bus marshalling, each value aligned to its type), so that a message over a
/// budget is found without a second walk over its values.
final class MessageWriter {
    let message: OpaquePointer
    /// Bytes of the body appended so far.
    private(set) var size = 0
    /// The most the body may take: past it appending stops with `DBusError.overBudget`, so an
    /// oversized message is never built whole.
    let limit: Int

    init(message: OpaquePointer, limit: Int = .max) {
        self.message = message
        self.limit = limit
    }

    /// The alignment of a value whose type signature starts as `signature` does.
    private static func alignment(of signature: String) -> Int {
        switch signature.utf8.first {
        case UInt8(ascii: "n"), UInt8(ascii: "q"): 2
        case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "h"), UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "a"): 4
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): 8
        default: 1  // y, g, v
        }
    }

    @inline(__always)
    private func checkLimit() throws(DBusError) {
        if size > limit { throw .overBudget(DBusBudgetExceeded(bound: "bytes", limit: limit)) }
    }

    func append(_ values: [DBusValue]) throws(DBusError) {
        for value in values { try append(value) }
    }

    /// Pads to `alignment` (1, 2, 4 or 8: a mask, not a division, on this per-value path) and
    /// adds `bytes`.
    @inline(__always)
    private func advance(_ bytes: Int, alignedTo alignment: Int) {
        size = ((size + alignment - 1) & -alignment) + bytes
    }

    func append(_ value: DBusValue) throws(DBusError) {
        switch value {
        case .byte(let v): try basic("y", v, 1)
        case .bool(let v): try basic("b", Int32(v ? 1 : 0), 4)
        case .int16(let v): try basic("n", v, 2)
        case .uint16(let v): try basic("q", v, 2)
        case .int32(let v): try basic("i", v, 4)
        case .uint32(let v): try basic("u", v, 4)
        case .int64(let v): try basic("x", v, 8)
        case .uint64(let v): try basic("t", v, 8)
        case .double(let v): try basic("d", v, 8)
        case .string(let v): try text("s", v)
        case .objectPath(let v): try text("o", v)
        case .signature(let v): try text("g", v)
        case .unixFD(let fd): try basic("h", fd.rawValue, 4)  // sd-bus duplicates it
        case .array(let element, let items):
            advance(4, alignedTo: 4)
            if element == "y" {
                size += items.count
                try checkLimit()
                let bytes = items.compactMap { if case .byte(let b) = $0 { b } else { nil } }
                let appended = bytes.withUnsafeBytes { sd_bus_message_append_array(message, typeCode("y"), $0.baseAddress, $0.count) }
                try check(appended, "sd_bus_message_append_array")
            } else {
                advance(0, alignedTo: Self.alignment(of: element))
                try container("a", element) { () throws(DBusError) in try append(items) }
            }
        case .dictionary(let key, let valueType, let entries):
            advance(4, alignedTo: 4)
            advance(0, alignedTo: 8)
            try container("a", "{" + key + valueType + "}") { () throws(DBusError) in
                for entry in entries {
                    advance(0, alignedTo: 8)
                    try container("e", key + valueType) { () throws(DBusError) in
                        try append(entry.key)
                        try append(entry.value)
                    }
                }
            }
        case .structure(let fields):
            advance(0, alignedTo: 8)
            try container("r", fields.map(\.signature).joined()) { () throws(DBusError) in try append(fields) }
        case .variant(let inner):
            let signature = inner.signature
            size += 1 + signature.utf8.count + 1
            try container("v", signature) { () throws(DBusError) in try append(inner) }
        }
    }

    private func basic<T>(_ type: Unicode.Scalar, _ value: T, _ width: Int) throws(DBusError) {
        advance(width, alignedTo: width)
        try checkLimit()
        var copy = value
        let appended = withUnsafePointer(to: &copy) { sd_bus_message_append_basic(message, typeCode(type), $0) }
        try check(appended, "sd_bus_message_append_basic(\(type))")
    }

    private func text(_ type: Unicode.Scalar, _ value: String) throws(DBusError) {
        if type == "g" { size += value.utf8.count + 2 } else { advance(4 + value.utf8.count + 1, alignedTo: 4) }
        try checkLimit()
        let appended = value.withCString { sd_bus_message_append_basic(message, typeCode(type), $0) }
        try check(appended, "sd_bus_message_append_basic(\(type))")
    }

    private func container(_ type: Unicode.Scalar, _ contents: String, _ body: () throws(DBusError) -> Void) throws(DBusError) {
        let opened = contents.withCString { sd_bus_message_open_container(message, typeCode(type), $0) }
        try check(opened, "sd_bus_message_open_container(\(type)\(contents))")
        try body()
        try check(sd_bus_message_close_container(message), "sd_bus_message_close_container")
    }
}

/// The error an error reply carries, or nil for other messages.
func replyError(_ message: OpaquePointer) -> DBusError? {
    guard sd_bus_message_is_method_error(message, nil) > 0, let error = sd_bus_message_get_error(message) else { return nil }
    let name = error.pointee.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
    let text = error.pointee.message.map { String(cString: $0) } ?? ""
    return .remote(name: name, message: text)
}
