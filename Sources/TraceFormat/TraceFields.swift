import Foundation

/// The keys of one trace event, as strings. Unknown keys are dropped.
struct TraceFields {
    var t: String?
    var transport: String?
    var device: String?
    var kind: String?
    var characteristic: String?
    var value: String?

    /// Reads the event keys of `line`: first by a fast scan that handles the lines hrmd
    /// writes (a flat object of plain strings), else with the full JSON parser. nil when the
    /// line is not a JSON object.
    init?(line: some StringProtocol) {
        var text = String(line)
        if let fast = text.withUTF8({ Self.scanFlatObject($0) }) {
            self = fast
            return
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return nil }
        t = object["t"] as? String
        transport = object["transport"] as? String
        device = object["device"] as? String
        kind = object["kind"] as? String
        characteristic = object["characteristic"] as? String
        value = object["value"] as? String
    }

    private init() {}

    /// The event keys, as the bytes the scan compares.
    private enum Key: CaseIterable {
        case t, transport, device, kind, characteristic, value

        var bytes: StaticString {
            switch self {
            case .t: "t"
            case .transport: "transport"
            case .device: "device"
            case .kind: "kind"
            case .characteristic: "characteristic"
            case .value: "value"
            }
        }

        init?(_ key: UnsafeBufferPointer<UInt8>) {
            guard let match = Key.allCases.first(where: { candidate in
                candidate.bytes.withUTF8Buffer { $0.elementsEqual(key) }
            }) else { return nil }
            self = match
        }
    }

    private mutating func set(_ key: Key, _ value: String) {
        switch key {
        case .t: t = value
        case .transport: transport = value
        case .device: device = value
        case .kind: kind = value
        case .characteristic: characteristic = value
        case .value: self.value = value
        }
    }

    /// A flat `{"key":"value",…}` object whose strings have no escapes; nil for anything
    /// else (the caller then uses the full parser, which also reports real errors).
    private static func scanFlatObject(_ bytes: UnsafeBufferPointer<UInt8>) -> TraceFields? {
        var index = 0
        func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        }
        /// The bytes of the string at `index` (without quotes); nil if it is not a plain string.
        func string() -> UnsafeBufferPointer<UInt8>? {
            guard index < bytes.count, bytes[index] == 0x22 else { return nil }
            index += 1
            let start = index
            while index < bytes.count, bytes[index] != 0x22 {
                if bytes[index] == 0x5C || bytes[index] < 0x20 { return nil }  // escapes: full parser
                index += 1
            }
            guard index < bytes.count else { return nil }
            defer { index += 1 }
            return UnsafeBufferPointer(rebasing: bytes[start..<index])
        }
        var fields = TraceFields()
        skipSpace()
        guard index < bytes.count, bytes[index] == 0x7B else { return nil }  // {
        index += 1
        skipSpace()
        if index < bytes.count, bytes[index] == 0x7D { index += 1 } else {
            while true {
                skipSpace()
                guard let key = string() else { return nil }
                skipSpace()
                guard index < bytes.count, bytes[index] == 0x3A else { return nil }  // :
                index += 1
                skipSpace()
                guard let value = string() else { return nil }
                if let known = Key(key) { fields.set(known, String(decoding: value, as: UTF8.self)) }
                skipSpace()
                guard index < bytes.count else { return nil }
                if bytes[index] == 0x2C { index += 1; continue }  // ,
                guard bytes[index] == 0x7D else { return nil }  // }
                index += 1
                break
            }
        }
        skipSpace()
        return index == bytes.count ? fields : nil
    }
}
