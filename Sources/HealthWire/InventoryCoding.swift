import HealthRequests
import HealthModel
import SDBus
import Timestamps

extension DeletedSample {
    /// `(id, source, anchor)`.
    public static let wireSignature = "(xst)"

    public var wireValue: DBusValue { .structure([.int64(id), .string(source), .uint64(UInt64(bitPattern: anchor))]) }

    public init(wire value: DBusValue, type: SampleType) throws(WireError) {
        guard case .structure(let fields) = value.unwrapped, fields.count == 3, let id = fields[0].integer,
              let source = fields[1].string, let anchor = fields[2].anchor
        else { throw WireError("a deleted sample is not \(Self.wireSignature)") }
        self.init(id: id, type: type, source: source, anchor: anchor)
    }
}

extension DeviceSummary {
    public var wireValue: DBusValue {
        WireDictionary.value([
            ("identifier", .string(device.localIdentifier)), ("name", device.name.wire),
            ("manufacturer", device.manufacturer.wire), ("model", device.model.wire),
            ("hardwareVersion", device.hardwareVersion.wire), ("firmwareVersion", device.firmwareVersion.wire),
            ("softwareVersion", device.softwareVersion.wire), ("sampleCount", .uint32(UInt32(clamping: sampleCount))),
            ("lastSeen", lastSeen.map { .int64($0.microsecondsSinceEpoch) }), ("location", lastLocation.map { .string($0.name) }),
        ])
    }

    public init(wire value: DBusValue) throws(WireError) {
        let entries = try WireDictionary(value, context: "device")
        self.init(
            device: HealthDevice(
                localIdentifier: try entries.requiredString("identifier"), name: try entries.string("name"),
                manufacturer: try entries.string("manufacturer"), model: try entries.string("model"),
                hardwareVersion: try entries.string("hardwareVersion"), firmwareVersion: try entries.string("firmwareVersion"),
                softwareVersion: try entries.string("softwareVersion")),
            sampleCount: Int(try entries.integer("sampleCount") ?? 0),
            lastSeen: try entries.integer("lastSeen").map(Timestamp.init(microsecondsSinceEpoch:)),
            lastLocation: try entries.string("location").flatMap(HeartRateSensorLocation.init(name:)))
    }
}

extension SensorActivity {
    public var wireValue: DBusValue {
        WireDictionary.value([
            ("identifier", .string(identifier)), ("transport", .string(transport)), ("state", .string(state)),
            ("detail", detail.wire), ("since", .int64(since.microsecondsSinceEpoch)),
            ("updatedAt", .int64(updatedAt.microsecondsSinceEpoch)),
            ("lastFrame", lastFrame.map { .int64($0.microsecondsSinceEpoch) }), ("battery", battery.map { .uint32(UInt32(clamping: $0)) }),
            ("frames", .int64(Int64(frames))), ("skipped", .int64(Int64(skipped))),
        ])
    }

    public init(wire value: DBusValue) throws(WireError) {
        let entries = try WireDictionary(value, context: "sensor activity")
        self.init(
            identifier: try entries.requiredString("identifier"), transport: try entries.requiredString("transport"),
            state: try entries.requiredString("state"), detail: try entries.string("detail"),
            since: Timestamp(microsecondsSinceEpoch: try entries.requiredInteger("since")),
            battery: try entries.integer("battery").map { Int($0) },
            lastFrame: try entries.integer("lastFrame").map(Timestamp.init(microsecondsSinceEpoch:)),
            frames: Int(try entries.integer("frames") ?? 0), skipped: Int(try entries.integer("skipped") ?? 0),
            updatedAt: Timestamp(microsecondsSinceEpoch: try entries.requiredInteger("updatedAt")))
    }
}

extension SourceSummary {
    public var wireValue: DBusValue {
        WireDictionary.value([
            ("name", .string(source.name)), ("version", source.version.wire), ("sampleCount", .uint32(UInt32(clamping: sampleCount))),
            ("lastSample", lastSample.map { .int64($0.microsecondsSinceEpoch) }),
        ])
    }

    public init(wire value: DBusValue) throws(WireError) {
        let entries = try WireDictionary(value, context: "source")
        self.init(
            source: HealthSource(name: try entries.requiredString("name"), version: try entries.string("version")),
            sampleCount: Int(try entries.integer("sampleCount") ?? 0),
            lastSample: try entries.integer("lastSample").map(Timestamp.init(microsecondsSinceEpoch:)))
    }
}
