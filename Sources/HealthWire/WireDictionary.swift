import HealthRequests
import SDBus

/// The entries of an `a{sv}` with typed, checked access: a wrongly typed or missing entry
/// is a `WireError` naming the key and the type it needs.
public struct WireDictionary: Sendable {
    public let entries: [String: DBusValue]
    /// What the dictionary describes, for messages ("sample 3").
    public let context: String

    public init(_ value: DBusValue, context: String) throws(WireError) {
        guard let entries = value.stringKeyed else { throw WireError("\(context) is not a dictionary (a{sv})") }
        self.init(wrapped: entries, context: context)
    }

    private init(wrapped entries: [String: DBusValue], context: String) {
        self.entries = entries.mapValues(\.unwrapped)
        self.context = context
    }

    /// Builds the dictionary `a{sv}` from its entries, leaving out the nil ones.
    public static func value(_ entries: [(String, DBusValue?)]) -> DBusValue {
        .properties(entries.compactMap { key, value in value.map { (key, $0) } })
    }

    public func contains(_ key: String) -> Bool { entries[key] != nil }

    public func string(_ key: String) throws(WireError) -> String? {
        guard let value = entries[key] else { return nil }
        guard case .string(let text) = value else { throw mistyped(key, "a string (s)") }
        return text
    }

    public func requiredString(_ key: String) throws(WireError) -> String {
        guard let text = try string(key) else { throw missing(key) }
        return text
    }

    /// Any D-Bus integer type that fits in an Int64.
    public func integer(_ key: String) throws(WireError) -> Int64? {
        guard let value = entries[key] else { return nil }
        guard let number = value.integer else { throw mistyped(key, "an integer (x)") }
        return number
    }

    public func requiredInteger(_ key: String) throws(WireError) -> Int64 {
        guard let number = try integer(key) else { throw missing(key) }
        return number
    }

    /// A double, or any integer type.
    public func number(_ key: String) throws(WireError) -> Double? {
        guard let value = entries[key] else { return nil }
        if case .double(let number) = value { return number }
        guard let integer = value.integer else { throw mistyped(key, "a number (d)") }
        return Double(integer)
    }

    public func requiredNumber(_ key: String) throws(WireError) -> Double {
        guard let number = try number(key) else { throw missing(key) }
        return number
    }

    public func bool(_ key: String) throws(WireError) -> Bool? {
        guard let value = entries[key] else { return nil }
        guard case .bool(let flag) = value else { throw mistyped(key, "a boolean (b)") }
        return flag
    }

    public func dictionary(_ key: String) throws(WireError) -> WireDictionary? {
        guard let value = entries[key] else { return nil }
        guard let entries = value.stringKeyed else { throw mistyped(key, "a dictionary (a{sv})") }
        return WireDictionary(wrapped: entries, context: "\(context) \(key)")
    }

    private func mistyped(_ key: String, _ needed: String) -> WireError {
        WireError("\(context): \(key.quoted) must be \(needed), not \(entries[key]?.signature ?? "?")")
    }

    private func missing(_ key: String) -> WireError { WireError("\(context): \(key.quoted) is missing") }
}

/// Optional values as bus values, for dictionaries built with `WireDictionary.value`.
extension Optional where Wrapped == String {
    var wire: DBusValue? { map(DBusValue.string) }
}
