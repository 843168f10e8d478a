import HealthModel
import HealthRequests
import SDBus

/// Requests and answers as D-Bus arguments, both ways: a request's (or an answer's) stored
/// properties are the method's arguments, matched by name with the interface's table
/// (``HealthInterface``), each coded as the table's signature says. Values with a coding of
/// their own (``WireCodable``) use it; `a{sv}` options are a struct's optional properties; a
/// ``PassedFile`` is a descriptor (`h`). The service decodes requests and encodes answers,
/// the client the reverse: one coding, two directions.
public enum RequestCoding {
    /// The arguments of `value` for the arguments `layout` names, in the layout's order.
    public static func encode<Value: Encodable>(_ value: Value, as layout: [DBusArgument]) throws(WireError) -> [DBusValue] {
        let encoder = ArgumentEncoder(layout: layout)
        do { try value.encode(to: encoder) } catch let error as WireError { throw error } catch {
            throw WireError("\(error)")
        }
        var values: [DBusValue] = []
        for argument in layout {
            guard let encoded = encoder.storage.values[argument.name] else {
                throw WireError("\(Value.self) has no \(argument.name.quoted) (\(argument.signature))")
            }
            values.append(encoded)
        }
        return values
    }

    /// The value that `values` (laid out as `layout` says) describe.
    public static func decode<Value: Decodable>(_ type: Value.Type, from values: [DBusValue], as layout: [DBusArgument]) throws(WireError)
        -> Value
    {
        guard values.count == layout.count else {
            throw WireError("\(values.count) arguments, not the \(layout.count) of \(layout.map(\.signature).joined())")
        }
        do {
            return try Value(from: ArgumentDecoder(values: values, layout: layout))
        } catch let error as WireError {
            throw error
        } catch {
            throw WireError("\(error)")
        }
    }
}

/// One argument of a method: its name and D-Bus signature.
public struct DBusArgument: Sendable, Hashable {
    public var name: String
    public var signature: String

    public init(name: String, signature: String) {
        self.name = name
        self.signature = signature
    }
}

/// Arrays of values with their own coding, coded element by element.
protocol WireCodableArray {
    static func fromWire(_ value: DBusValue, signature: String) throws(WireError) -> Self
    var wireElements: [DBusValue] { get }
    /// The signature of one element.
    static var elementSignature: String { get }
}

extension WireCodableArray {
    var wireElementSignature: String { Self.elementSignature }
}

extension Array: WireCodableArray where Element: WireCodable {
    static func fromWire(_ value: DBusValue, signature: String) throws(WireError) -> [Element] {
        guard let elements = value.elements else { throw WireError("not an array (\(signature))") }
        try Element.checkWireCount(elements.count)
        var decoded: [Element] = []
        decoded.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() { decoded.append(try Element.fromWire(element, index: index)) }
        return decoded
    }

    var wireElements: [DBusValue] { map(\.wireValue) }

    static var elementSignature: String { Element.wireSignature }
}

extension WireCodable {
    /// No bound by default.
    public static func checkWireCount(_ count: Int) throws(WireError) {}
}

/// A value whose D-Bus form is its own properties as a dictionary `a{sv}` (absent optionals
/// left out, unknown keys ignored): declaring the conformance is all a model type needs to
/// travel, alone or in arrays (`aa{sv}`). Its properties are plain values (strings, flags,
/// `Int64`, `UInt32`, `UInt16`, `Double`, arrays of `Double`, `Int64` or `String`) or values with a
/// coding of their own (``WireCodable``, arrays of them), so one of these may hold others; a
/// test round-trips each such type.
public protocol WireOptions: WireCodable, Codable {}

extension WireOptions {
    public static var wireSignature: String { "a{sv}" }

    public var wireValue: DBusValue {
        let encoder = OptionsEncoder()
        do { try encode(to: encoder) } catch { preconditionFailure("\(Self.self) holds a value that is not plain: \(error)") }
        return WireDictionary.value(encoder.storage.entries)
    }

    public static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> Self {
        let context = index.map { "\(Self.self) \($0)" } ?? "\(Self.self)"
        do {
            return try Self(from: OptionsDecoder(entries: try WireDictionary(value, context: context)))
        } catch let error as WireError {
            throw error
        } catch {
            throw WireError("\(context): \(error)")
        }
    }
}

// MARK: Encoding

private final class ArgumentStorage {
    var values: [String: DBusValue] = [:]
}

private struct ArgumentEncoder: Encoder {
    let layout: [DBusArgument]
    let storage = ArgumentStorage()
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(ArgumentsContainer<Key>(layout: layout, storage: storage))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { fatalError("a request's arguments are its named properties") }
    func singleValueContainer() -> any SingleValueEncodingContainer { fatalError("a request's arguments are its named properties") }
}

private struct ArgumentsContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let layout: [DBusArgument]
    let storage: ArgumentStorage
    var codingPath: [any CodingKey] { [] }

    func signature(of key: Key) throws -> String {
        guard let argument = layout.first(where: { $0.name == key.stringValue }) else {
            throw WireError("no argument \(key.stringValue.quoted) in \(layout.map(\.name))")
        }
        return argument.signature
    }

    mutating func encodeNil(forKey key: Key) throws {
        storage.values[key.stringValue] = try WireValues.empty(try signature(of: key))
    }

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        guard let value else { return try encodeNil(forKey: key) }
        try encode(value, forKey: key)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        storage.values[key.stringValue] = try WireValues.encode(value, signature: try signature(of: key))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        fatalError("nested arguments are coded as values")
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { fatalError("nested arguments are coded as values") }
    mutating func superEncoder() -> any Encoder { fatalError("requests have no superclass") }
    mutating func superEncoder(forKey key: Key) -> any Encoder { fatalError("requests have no superclass") }
}

/// One argument's value, both ways.
private enum WireValues {
    /// The value of an absent optional argument: the empty container of its signature.
    static func empty(_ signature: String) throws -> DBusValue {
        if signature == "a{sv}" { return WireDictionary.value([]) }
        if signature.hasPrefix("a") { return .array(element: String(signature.dropFirst()), []) }
        throw WireError("an argument of signature \(signature) cannot be absent")
    }

    static func encode<T: Encodable>(_ value: T, signature: String) throws -> DBusValue {
        if let coded = value as? any WireCodable { return coded.wireValue }
        if let coded = value as? any WireCodableArray { return .array(element: String(signature.dropFirst()), coded.wireElements) }
        if let file = value as? PassedFile { return .unixFD(try DBusFileDescriptor.duplicate(file.descriptor)) }
        switch (signature, value) {
        case ("s", let text as String): return .string(text)
        case ("as", let texts as [String]): return .strings(texts)
        case ("x", let number as Int64): return .int64(number)
        case ("t", let number as UInt64): return .uint64(number)
        case ("u", let number as UInt32): return .uint32(number)
        case ("q", let number as UInt16): return .uint16(number)
        case ("d", let number as Double): return .double(number)
        case ("b", let flag as Bool): return .bool(flag)
        case ("a{sv}", _):
            let encoder = OptionsEncoder()
            try value.encode(to: encoder)
            return WireDictionary.value(encoder.storage.entries)
        default: throw WireError("\(T.self) does not travel as \(signature)")
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from value: DBusValue, signature: String, name: String) throws -> T {
        if let coded = T.self as? any WireCodable.Type { return try coded.fromWire(value, index: nil) as! T }
        if let coded = T.self as? any WireCodableArray.Type { return try coded.fromWire(value, signature: signature) as! T }
        if T.self == PassedFile.self {
            guard let file = value.fileDescriptor else { throw WireError("\(name) must be a file descriptor (h)") }
            return PassedFile(descriptor: file.rawValue) as! T
        }
        switch signature {
        case "s":
            guard case .string(let text) = value.unwrapped, T.self == String.self else { throw WireError("\(name) must be a string") }
            return try bounded(text, name) as! T
        case "as":
            guard let elements = value.elements, T.self == [String].self else { throw WireError("\(name) must be a string array") }
            return try elements.map { element in
                guard case .string(let text) = element.unwrapped else { throw WireError("\(name) must be a string array") }
                return try bounded(text, name)
            } as! T
        case "a{sv}":
            return try T(from: OptionsDecoder(entries: try WireDictionary(value, context: name)))
        default:
            let plain: Any
            switch value.unwrapped {
            case .int64(let number): plain = number
            case .uint64(let number): plain = number
            case .uint32(let number): plain = number
            case .uint16(let number): plain = number
            case .double(let number): plain = number
            case .bool(let flag): plain = flag
            default: throw WireError("\(name) must be \(signature)")
            }
            guard let typed = plain as? T else { throw WireError("\(name) must be \(signature)") }
            return typed
        }
    }

    /// A string argument, at most `RequestBudgets.stringArgumentBytes` long (no name,
    /// identifier or zone the service knows is longer).
    private static func bounded(_ text: String, _ name: String) throws -> String {
        guard text.utf8.count <= RequestBudgets.stringArgumentBytes else {
            throw WireError("\(name) \(text.quoted) is over \(RequestBudgets.stringArgumentBytes) bytes")
        }
        return text
    }
}

// MARK: Options (a{sv})

private final class OptionsStorage {
    var entries: [(String, DBusValue?)] = []
}

/// A struct of optional plain values as a dictionary `a{sv}`, absent ones left out.
private struct OptionsEncoder: Encoder {
    let storage = OptionsStorage()
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(OptionsContainer<Key>(storage: storage))
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { fatalError("options are named") }
    func singleValueContainer() -> any SingleValueEncodingContainer { fatalError("options are named") }
}

private struct OptionsContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let storage: OptionsStorage
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws {}

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let encoded: DBusValue
        switch value {
        case let text as String: encoded = .string(text)
        case let flag as Bool: encoded = .bool(flag)
        case let number as Int64: encoded = .int64(number)
        case let number as UInt32: encoded = .uint32(number)
        case let number as UInt16: encoded = .uint16(number)
        case let number as Double: encoded = .double(number)
        case let numbers as [Double]: encoded = .array(element: "d", numbers.map { .double($0) })
        case let numbers as [Int64]: encoded = .array(element: "x", numbers.map { .int64($0) })
        case let texts as [String]: encoded = .strings(texts)
        case let coded as any WireCodable: encoded = coded.wireValue
        case let coded as any WireCodableArray: encoded = .array(element: coded.wireElementSignature, coded.wireElements)
        default: throw WireError("option \(key.stringValue) of type \(T.self) has no D-Bus coding")
        }
        storage.entries.append((key.stringValue, encoded))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        fatalError("options are plain values")
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { fatalError("options are plain values") }
    mutating func superEncoder() -> any Encoder { fatalError("options are plain values") }
    mutating func superEncoder(forKey key: Key) -> any Encoder { fatalError("options are plain values") }
}

/// A struct of optional plain values read from a dictionary `a{sv}`: numbers of any integer
/// type are taken where they fit, unknown keys are ignored.
private struct OptionsDecoder: Decoder {
    let entries: WireDictionary
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(OptionsReader<Key>(entries: entries))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw WireError("\(entries.context) is a dictionary") }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw WireError("\(entries.context) is a dictionary") }
}

private struct OptionsReader<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let entries: WireDictionary
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { entries.entries.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { entries.contains(key.stringValue) }

    func decodeNil(forKey key: Key) throws -> Bool { !entries.contains(key.stringValue) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let value = try decodeIfPresent(type, forKey: key) else { throw WireError("\(entries.context): \(key.stringValue.quoted) is missing") }
        return value
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        let name = key.stringValue
        guard entries.contains(name) else { return nil }
        switch T.self {
        case is String.Type: return try entries.string(name) as? T
        case is Bool.Type: return try entries.bool(name) as? T
        case is Double.Type: return try entries.number(name) as? T
        case is Int64.Type: return try entries.integer(name) as? T
        case is UInt32.Type:
            guard let number = try entries.integer(name) else { return nil }
            guard let fitted = UInt32(exactly: number) else { throw WireError("\(entries.context): \(name) \(number) is out of range") }
            return fitted as? T
        case is UInt16.Type:
            guard let number = try entries.integer(name) else { return nil }
            guard let fitted = UInt16(exactly: number) else { throw WireError("\(entries.context): \(name) \(number) is out of range") }
            return fitted as? T
        case is [Double].Type:
            guard let elements = entries.entries[name]?.elements else { throw WireError("\(entries.context): \(name) must be ad") }
            return try elements.map { element throws(WireError) -> Double in
                guard case .double(let number) = element.unwrapped else { throw WireError("\(entries.context): \(name) must be ad") }
                return number
            } as? T
        case is [Int64].Type:
            guard let elements = entries.entries[name]?.elements else { throw WireError("\(entries.context): \(name) must be ax") }
            return try elements.map { element throws(WireError) -> Int64 in
                guard case .int64(let number) = element.unwrapped else { throw WireError("\(entries.context): \(name) must be ax") }
                return number
            } as? T
        case is [String].Type:
            guard let elements = entries.entries[name]?.elements else { throw WireError("\(entries.context): \(name) must be as") }
            return try elements.map { element throws(WireError) -> String in
                guard case .string(let text) = element.unwrapped else { throw WireError("\(entries.context): \(name) must be as") }
                return text
            } as? T
        default:
            guard let value = entries.entries[name] else { return nil }
            if let coded = T.self as? any WireCodable.Type { return try coded.fromWire(value, index: nil) as? T }
            if let coded = T.self as? any WireCodableArray.Type { return try coded.fromWire(value, signature: "a" + coded.elementSignature) as? T }
            throw WireError("\(entries.context): \(name) of type \(T.self) has no D-Bus coding")
        }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw WireError("options are plain values")
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw WireError("options are plain values") }
    func superDecoder() throws -> any Decoder { throw WireError("options are plain values") }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw WireError("options are plain values") }
}

// MARK: Decoding

private struct ArgumentDecoder: Decoder {
    let values: [DBusValue]
    let layout: [DBusArgument]
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ArgumentsReader<Key>(values: values, layout: layout))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw WireError("a request's arguments are its named properties") }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw WireError("a request's arguments are its named properties") }
}

private struct ArgumentsReader<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let values: [DBusValue]
    let layout: [DBusArgument]
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { layout.compactMap { Key(stringValue: $0.name) } }

    func contains(_ key: Key) -> Bool { layout.contains { $0.name == key.stringValue } }

    private func argument(_ key: Key) throws -> (DBusValue, String) {
        guard let index = layout.firstIndex(where: { $0.name == key.stringValue }) else {
            throw WireError("missing argument \(key.stringValue)")
        }
        return (values[index], layout[index].signature)
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        let (value, signature) = try argument(key)
        return signature == "a{sv}" && value.stringKeyed?.isEmpty == true
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let (value, signature) = try argument(key)
        return try WireValues.decode(type, from: value, signature: signature, name: key.stringValue)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw WireError("nested arguments are coded as values")
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw WireError("nested arguments are coded as values") }
    func superDecoder() throws -> any Decoder { throw WireError("requests have no superclass") }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw WireError("requests have no superclass") }
}
