import HealthModel
import HealthRequests
import SDBus

extension SampleRecord.Metadata {
    /// The metadata as a dictionary (`a{sv}`), unknown parts left out and the other keys sorted.
    public var wireValue: DBusValue {
        WireDictionary.value(
            [
                ("sensorLocation", sensorLocation.wire), ("sensorContact", sensorContact.map(DBusValue.bool)),
                ("syncIdentifier", syncIdentifier.wire), ("syncVersion", syncVersion.map(DBusValue.int64)),
            ] + extra.sorted { $0.key < $1.key }.map { ($0.key, DBusValue.string($0.value)) })
    }
}

extension SampleRecord {
    /// The record as a dictionary (`a{sv}`), unknown parts left out.
    public var wireValue: DBusValue {
        WireDictionary.value([
            ("id", .int64(id)), ("type", .string(type)), ("start", .int64(start)), ("end", .int64(end)),
            ("value", .double(value)), ("unit", .string(unit)), ("source", .string(source)),
            ("device", device.map { device in
                WireDictionary.value([
                    ("identifier", .string(device.localIdentifier)), ("name", device.name.wire),
                    ("manufacturer", device.manufacturer.wire), ("model", device.model.wire),
                    ("hardwareVersion", device.hardwareVersion.wire), ("firmwareVersion", device.firmwareVersion.wire),
                    ("softwareVersion", device.softwareVersion.wire),
                ])
            }),
            ("metadata", metadata.wireValue),
        ])
    }

    /// The record a dictionary (`a{sv}`) describes.
    public init(wire value: DBusValue) throws(WireError) {
        let entries = try WireDictionary(value, context: "sample")
        var device: HealthDevice?
        if let entry = try entries.dictionary("device") {
            device = HealthDevice(
                localIdentifier: try entry.requiredString("identifier"), name: try entry.string("name"),
                manufacturer: try entry.string("manufacturer"), model: try entry.string("model"),
                hardwareVersion: try entry.string("hardwareVersion"), firmwareVersion: try entry.string("firmwareVersion"),
                softwareVersion: try entry.string("softwareVersion"))
        }
        let metadata = try entries.dictionary("metadata")
        var extra: [String: String] = [:]
        for (key, value) in metadata?.entries ?? [:] where !Metadata.knownKeys.contains(key) {
            if case .string(let text) = value { extra[key] = text }
        }
        self.init(
            id: try entries.requiredInteger("id"), type: try entries.requiredString("type"), start: try entries.requiredInteger("start"),
            end: try entries.requiredInteger("end"), value: try entries.requiredNumber("value"), unit: try entries.requiredString("unit"),
            source: try entries.requiredString("source"), device: device,
            metadata: Metadata(
                sensorLocation: try metadata?.string("sensorLocation"), sensorContact: try metadata?.bool("sensorContact"),
                syncIdentifier: try metadata?.string("syncIdentifier"), syncVersion: try metadata?.integer("syncVersion"),
                extra: extra))
    }
}
