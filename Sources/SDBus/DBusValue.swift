@preconcurrency import Glibc

/// A file descriptor received from or sent over D-Bus. It is owned: closed when the last
/// reference goes away, so one that nobody keeps never leaks.
public final class DBusFileDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The descriptor number; valid while this object lives.
    public let rawValue: Int32

    /// Takes ownership of `rawValue` (it is closed on deinit).
    public init(owning rawValue: Int32) { self.rawValue = rawValue }

    /// Owns a duplicate of `rawValue`; the caller keeps its own descriptor.
    public static func duplicate(_ rawValue: Int32) throws(DBusError) -> DBusFileDescriptor {
        let copy = fcntl(rawValue, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else { throw .system(operation: "fcntl(F_DUPFD_CLOEXEC)", errno: errno) }
        return DBusFileDescriptor(owning: copy)
    }

    deinit { close(rawValue) }

    public static func == (lhs: DBusFileDescriptor, rhs: DBusFileDescriptor) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { "fd \(rawValue)" }
}

/// One entry of a D-Bus dictionary (`a{..}`).
public struct DBusDictionaryEntry: Sendable, Hashable {
    public var key: DBusValue
    public var value: DBusValue
    public init(_ key: DBusValue, _ value: DBusValue) {
        self.key = key
        self.value = value
    }
}

/// A D-Bus value of any type. Containers carry their element signatures so empty ones can
/// be written.
public indirect enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case int32(Int32)
    case int64(Int64)
    case uint16(UInt16)
    case uint32(UInt32)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    case unixFD(DBusFileDescriptor)
    /// `a<element>`; `element` is the element's signature (`y`, `s`, `(ii)`, …).
    case array(element: String, [DBusValue])
    /// `a{<key><value>}`.
    case dictionary(key: String, value: String, [DBusDictionaryEntry])
    /// `(…)`.
    case structure([DBusValue])
    /// `v`.
    case variant(DBusValue)

    /// The value's D-Bus type signature.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .int32: "i"
        case .int64: "x"
        case .uint16: "q"
        case .uint32: "u"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// A byte array (`ay`).
    public static func bytes(_ bytes: [UInt8]) -> DBusValue { .array(element: "y", bytes.map(DBusValue.byte)) }

    /// A string array (`as`).
    public static func strings(_ strings: [String]) -> DBusValue { .array(element: "s", strings.map(DBusValue.string)) }

    /// A property map (`a{sv}`); each value is wrapped in a variant.
    public static func properties(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dictionary(key: "s", value: "v", entries.map { DBusDictionaryEntry(.string($0.0), .variant($0.1)) })
    }
}

extension DBusValue {
    /// The value inside any number of variants.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    public var string: String? {
        switch unwrapped {
        case .string(let text), .objectPath(let text), .signature(let text): text
        default: nil
        }
    }

    public var bool: Bool? {
        if case .bool(let flag) = unwrapped { return flag }
        return nil
    }

    /// Any integer type that fits in an Int64.
    public var integer: Int64? {
        switch unwrapped {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .int64(let v): v
        case .uint16(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .uint64(let v): Int64(exactly: v)
        default: nil
        }
    }

    /// The bytes of an `ay`.
    public var bytes: [UInt8]? {
        guard case .array("y", let elements) = unwrapped else { return nil }
        return elements.compactMap { if case .byte(let b) = $0 { b } else { nil } }
    }

    /// The elements of any array.
    public var elements: [DBusValue]? {
        if case .array(_, let elements) = unwrapped { return elements }
        return nil
    }

    /// The strings of an `as` (or `ao`).
    public var strings: [String]? { elements?.compactMap(\.string) }

    /// A dictionary with string (or object path) keys, such as `a{sv}` or `a{oa{sa{sv}}}`.
    public var stringKeyed: [String: DBusValue]? {
        guard case .dictionary(_, _, let entries) = unwrapped else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.string else { return nil }
            result[key] = entry.value
        }
        return result
    }

    public var fileDescriptor: DBusFileDescriptor? {
        if case .unixFD(let fd) = unwrapped { return fd }
        return nil
    }
}
