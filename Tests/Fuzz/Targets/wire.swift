// libFuzzer target: typed values as they arrive from the bus, decoded by the store service
// (sample submissions, type, status, access, bucket and application names) and by its
// clients (every reply the service sends). The input is read as a recipe for a value tree of
// any D-Bus type, with the members' names drawn from the ones the service knows. The same
// values, as a call's arguments, are decoded as every request the service serves, and as
// every answer a client reads, the way the service's and the client's coding do.
import HealthRequests
import HealthModel
import HealthWire
import SDBus

/// Builds D-Bus values from fuzz input, a byte at a time; runs out gracefully.
private struct ValueRecipe {
    static let names = [
        "type", "start", "end", "value", "unit", "device", "metadata", "sensorLocation", "sensorContact", "syncIdentifier",
        "syncVersion", "identifier", "name", "manufacturer", "model", "heart-rate", "rr-interval", "count/min", "ms", "kcal",
        "sharingAuthorized", "sharingDenied", "notDetermined", "share", "read", "1m", "5m", "1h", "1d", "chest", "hrmd", "",
    ]
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func integer() -> UInt64 {
        (0..<8).reduce(UInt64(0)) { value, _ in value << 8 | UInt64(byte()) }
    }

    mutating func string() -> String {
        let choice = byte()
        if choice < 200 { return Self.names[Int(choice) % Self.names.count] }
        let count = Int(byte() % 24)
        return String(decoding: (0..<count).map { _ in byte() }, as: UTF8.self)
    }

    /// Another value, or nil when the input is used up.
    mutating func nextValue() -> DBusValue? { index < bytes.count ? value() : nil }

    mutating func value(depth: Int = 0) -> DBusValue {
        let kind = depth > 4 ? byte() % 7 : byte() % 11
        switch kind {
        case 0: return .string(string())
        case 1: return .int64(Int64(bitPattern: integer()))
        case 2: return .uint64(integer())
        case 3: return .double(Double(bitPattern: integer()))
        case 4: return .bool(byte() & 1 == 1)
        case 5: return .uint32(UInt32(truncatingIfNeeded: integer()))
        case 6: return .int32(Int32(truncatingIfNeeded: Int64(bitPattern: integer())))
        case 7: return .variant(value(depth: depth + 1))
        case 8: return .array(element: "v", (0..<Int(byte() % 6)).map { _ in .variant(value(depth: depth + 1)) })
        case 9: return .structure((0..<Int(byte() % 6)).map { _ in value(depth: depth + 1) })
        default:
            return .dictionary(
                key: "s", value: "v",
                (0..<Int(byte() % 8)).map { _ in DBusDictionaryEntry(.string(string()), .variant(value(depth: depth + 1))) })
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWire(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var recipe = ValueRecipe(bytes: UnsafeBufferPointer(start: data, count: size))
    let value = recipe.value()
    let name = recipe.string()
    _ = try? SampleSubmission.sample(from: value, index: 0)
    _ = try? SampleType.parse(name)
    _ = try? AuthorizationStatus.parse(name)
    _ = try? AuthorizationAccess.parse(name)
    _ = try? StatisticsBucketName.parse(name)
    _ = try? AppName.validate(name)
    _ = try? SampleRecord(wire: value)
    _ = try? AuthorizationAccessEntry(wire: value)
    _ = try? DeletedSample(wire: value, type: .heartRate)
    _ = try? DeviceSummary(wire: value)
    _ = try? SensorActivity(wire: value)
    _ = try? SourceSummary(wire: value)
    _ = try? StatisticsBucketValue(wire: value)
    _ = try? HeartRateZones.Zone(wire: value)
    _ = try? HeartRateVariability.fromWire(value)
    _ = try? RecordingImportSummary(wire: value)
    // The value and what follows it as a call's arguments, decoded as each request and answer.
    var arguments = [value]
    while arguments.count < 6, let next = recipe.nextValue() { arguments.append(next) }
    for request in RequestCatalog.all {
        decodeCall(request, arguments)
    }
    return 0
}

/// Decodes `arguments` as a call of `Request` and as its answer, as the service and the client do.
func decodeCall<Request: HealthRequest>(_ type: Request.Type, _ arguments: [DBusValue]) {
    guard let layout = HealthInterface.layouts[Request.name] else { return }
    _ = try? RequestCoding.decode(Request.self, from: Array(arguments.prefix(layout.inputs.count)), as: layout.inputs)
    _ = try? RequestCoding.decode(Request.Response.self, from: Array(arguments.prefix(layout.outputs.count)), as: layout.outputs)
}
