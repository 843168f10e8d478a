import Foundation

/// The event keys of one trace line, as UTF-8 slices (valid only inside the call that
/// produced them). Unknown keys are dropped.
struct TraceFields {
    /// The event keys.
    enum Key: CaseIterable {
        case t, transport, device, kind, characteristic, value

        var name: StaticString {
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
                candidate.name.withUTF8Buffer { $0.elementsEqual(key) }
            }) else { return nil }
            self = match
        }
    }

    private var t, transport, device, kind, characteristic, value: UnsafeBufferPointer<UInt8>?

    subscript(key: Key) -> UnsafeBufferPointer<UInt8>? {
        get {
            switch key {
            case .t: t
            case .transport: transport
            case .device: device
            case .kind: kind
            case .characteristic: characteristic
            case .value: value
            }
        }
        set {
            switch key {
            case .t: t = newValue
            case .transport: transport = newValue
            case .device: device = newValue
            case .kind: kind = newValue
            case .characteristic: characteristic = newValue
            case .value: value = newValue
            }
        }
    }

    /// Calls `body` with the event keys of `line`: found by a fast scan when the line is
    /// what hrmd writes (a flat object of plain strings), else by the full JSON parser.
    /// `body` gets nil when the line is not a JSON object.
    static func withFields<R>(
        of line: UnsafeBufferPointer<UInt8>, _ body: (TraceFields?) throws(TraceError) -> R
    ) throws(TraceError) -> R {
        if let fields = scanFlatObject(line) { return try body(fields) }
        guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
            return try body(nil)
        }
        // Lay the string values out in one buffer and hand out slices of it.
        var storage: [UInt8] = []
        var ranges: [(Key, Range<Int>)] = []
        for key in Key.allCases {
            let name = key.name.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
            guard let text = object[name] as? String else { continue }
            let start = storage.count
            storage.append(contentsOf: text.utf8)
            ranges.append((key, start..<storage.count))
        }
        return try storage.withUnsafeBufferPointer { buffer throws(TraceError) in
            var fields = TraceFields()
            for (key, range) in ranges { fields[key] = UnsafeBufferPointer(rebasing: buffer[range]) }
            return try body(fields)
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
                if let known = Key(key) { fields[known] = value }
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
