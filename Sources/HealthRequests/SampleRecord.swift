import HealthModel
import HealthUnits
import Timestamps

/// A stored sample as the service hands it out: the same keys as a dictionary (`a{sv}`, in
/// QuerySamples and Changes) and as a JSON line (QuerySamplesToFile). Times are microseconds
/// since the epoch, the value is in the type's canonical unit.
public struct SampleRecord: Codable, Sendable, Hashable {
    public var id: Int64
    public var type: String
    public var start: Int64
    public var end: Int64
    public var value: Double
    public var unit: String
    public var source: String
    /// The device that measured it, with what is known of it (keys `identifier`, `name`,
    /// `manufacturer`, `model`, `hardwareVersion`, `firmwareVersion`, `softwareVersion`).
    public var device: HealthDevice?
    public var metadata: Metadata

    public init(
        id: Int64, type: String, start: Int64, end: Int64, value: Double, unit: String, source: String, device: HealthDevice?,
        metadata: Metadata
    ) {
        self.id = id
        self.type = type
        self.start = start
        self.end = end
        self.value = value
        self.unit = unit
        self.source = source
        self.device = device
        self.metadata = metadata
    }

    /// What is known about a sample beyond its value; other keys are strings.
    public struct Metadata: Codable, Sendable, Hashable {
        public var sensorLocation: String?
        public var sensorContact: Bool?
        public var syncIdentifier: String?
        public var syncVersion: Int64?
        public var extra: [String: String] = [:]

        private struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(_ string: String) { stringValue = string }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        public static let knownKeys: Set<String> = ["sensorLocation", "sensorContact", "syncIdentifier", "syncVersion"]

        public init(sensorLocation: String?, sensorContact: Bool?, syncIdentifier: String?, syncVersion: Int64?, extra: [String: String]) {
            self.sensorLocation = sensorLocation
            self.sensorContact = sensorContact
            self.syncIdentifier = syncIdentifier
            self.syncVersion = syncVersion
            self.extra = extra
        }

        /// The metadata of a stored sample.
        public init(_ metadata: SampleMetadata) {
            self.init(
                sensorLocation: metadata.sensorLocation?.name, sensorContact: metadata.sensorContact,
                syncIdentifier: metadata.syncIdentifier, syncVersion: metadata.syncVersion.map(Int64.init), extra: metadata.extra)
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            sensorLocation = try container.decodeIfPresent(String.self, forKey: Key("sensorLocation"))
            sensorContact = try container.decodeIfPresent(Bool.self, forKey: Key("sensorContact"))
            syncIdentifier = try container.decodeIfPresent(String.self, forKey: Key("syncIdentifier"))
            syncVersion = try container.decodeIfPresent(Int64.self, forKey: Key("syncVersion"))
            for key in container.allKeys where !Self.knownKeys.contains(key.stringValue) {
                extra[key.stringValue] = try container.decode(String.self, forKey: key)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encodeIfPresent(sensorLocation, forKey: Key("sensorLocation"))
            try container.encodeIfPresent(sensorContact, forKey: Key("sensorContact"))
            try container.encodeIfPresent(syncIdentifier, forKey: Key("syncIdentifier"))
            try container.encodeIfPresent(syncVersion, forKey: Key("syncVersion"))
            for (key, value) in extra.sorted(by: { $0.key < $1.key }) { try container.encode(value, forKey: Key(key)) }
        }
    }
}

extension SampleRecord {
    /// The record of a stored sample.
    public init(_ stored: StoredSample) {
        let sample = stored.sample
        id = stored.id
        type = sample.type.identifier
        start = sample.start.microsecondsSinceEpoch
        end = sample.end.microsecondsSinceEpoch
        value = sample.canonicalValue
        unit = sample.type.canonicalUnit.unitString
        source = stored.source.name
        device = sample.device
        metadata = Metadata(sample.metadata)
    }

    /// The stored sample this record describes (the client's side).
    public func storedSample() throws(WireError) -> StoredSample {
        let sampleType = try SampleType.parse(type)
        let parsedUnit: HealthUnit
        do { parsedUnit = try HealthUnit(from: unit) } catch { throw WireError("sample \(id): \(error)") }
        let sample: QuantitySample
        do {
            sample = try QuantitySample(
                type: sampleType, quantity: Quantity(unit: parsedUnit, doubleValue: value),
                start: Timestamp(microsecondsSinceEpoch: start), end: Timestamp(microsecondsSinceEpoch: end),
                device: device,
                metadata: SampleMetadata(
                    sensorLocation: metadata.sensorLocation.flatMap(HeartRateSensorLocation.init(name:)),
                    sensorContact: metadata.sensorContact, syncIdentifier: metadata.syncIdentifier,
                    syncVersion: metadata.syncVersion.map(Int.init(truncatingIfNeeded:)), extra: metadata.extra))
        } catch {
            throw WireError("sample \(id): \(error)")
        }
        return StoredSample(id: id, source: HealthSource(name: source), sample: sample)
    }
}
