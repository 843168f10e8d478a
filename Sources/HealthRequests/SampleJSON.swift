import HealthModel
import JSONLines

/// A sample's JSON shape, the one every front writes (`hrmctl samples --output json`, the HTTP
/// API, the live stream): `type`, `start`, `end`, `value`, then `unit`, `source`, `device`
/// and `metadata`; `device` is null when unknown and leaves out details not known; `metadata`
/// leaves out what is unknown, its other keys sorted. The members after `value` are what
/// samples of one context share, so a writer of many samples renders them once per context.
public enum SampleJSON {
    /// `unit`, `source`, `device`, `metadata`, in that order.
    public static func members(unit: String, source: String, device: HealthDevice?, metadata: SampleRecord.Metadata)
        -> [(String, JSONValue)]
    {
        [("unit", .string(unit)), ("source", .string(source)), ("device", Self.device(device)), ("metadata", Self.metadata(metadata))]
    }

    /// The device: `name`, `identifier`, then the details that are known.
    public static func device(_ device: HealthDevice?) -> JSONValue {
        guard let device else { return .null }
        var members: [(String, JSONValue)] = [("name", .optional(device.name)), ("identifier", .string(device.localIdentifier))]
        let details: [(String, String?)] = [
            ("manufacturer", device.manufacturer), ("model", device.model), ("hardwareVersion", device.hardwareVersion),
            ("firmwareVersion", device.firmwareVersion), ("softwareVersion", device.softwareVersion),
        ]
        for case let (key, text?) in details { members.append((key, .string(text))) }
        return .object(members)
    }

    /// The metadata: location, contact, sync identifier and version, then the other keys sorted.
    public static func metadata(_ metadata: SampleRecord.Metadata) -> JSONValue {
        var members: [(String, JSONValue)] = []
        if let location = metadata.sensorLocation { members.append(("sensorLocation", .string(location))) }
        if let contact = metadata.sensorContact { members.append(("sensorContact", .string(contact ? "detected" : "notDetected"))) }
        if let sync = metadata.syncIdentifier {
            members.append(("syncIdentifier", .string(sync)))
            members.append(("syncVersion", .number(Double(metadata.syncVersion ?? 0))))
        }
        for (key, text) in metadata.extra.sorted(by: { $0.key < $1.key }) { members.append((key, .string(text))) }
        return .object(members)
    }
}
