import HealthRequests
import HealthModel
import HealthUnits
import SDBus
import Timestamps

/// A sample an application saves (one dictionary of SaveSamples): `type` s, `start` x,
/// optional `end` x (default `start`), `value` d, `unit` s (any unit compatible with the
/// type's), optional `device` s and `metadata` a{sv} (`sensorLocation` s, `sensorContact` b,
/// `syncIdentifier` s, `syncVersion` x, other keys strings).
public enum SampleSubmission {
    /// Metadata keys besides the known ones a sample may carry, and their longest value.
    public static let maximumExtraMetadata = 16
    public static let maximumTextLength = 256
    /// The longest unit string a sample may name (the longest unit hrmd knows is far shorter).
    public static let maximumUnitLength = 64

    /// The sample a dictionary describes, checked: a known type, a compatible unit, a
    /// finite value, an interval that does not run backwards.
    public static func sample(from value: DBusValue, index: Int) throws(WireError) -> QuantitySample {
        let context = "sample \(index)"
        let entries = try WireDictionary(value, context: context)
        let typeName = try entries.requiredString("type")
        let type: SampleType
        do { type = try SampleType.parseQuantity(typeName) } catch { throw WireError("\(context): \(error)") }
        let unitName = try entries.requiredString("unit")
        let unit: HealthUnit
        guard unitName.utf8.count <= maximumUnitLength else {
            throw WireError("\(context): unit \(unitName.quoted) is over \(maximumUnitLength) bytes")
        }
        do { unit = try HealthUnit(from: unitName) } catch { throw WireError("\(context): \(error)") }
        guard unit.isCompatible(with: type.canonicalUnit) else {
            throw WireError("\(context): unit \(unitName) is not compatible with \(typeName) (\(type.canonicalUnit.unitString))")
        }
        let number = try entries.requiredNumber("value")
        guard number.isFinite else { throw WireError("\(context): the value is not a finite number") }
        let start = try entries.requiredInteger("start")
        let end = try entries.integer("end") ?? start
        do {
            try WireTime.check(start, "start")
            try WireTime.check(end, "end")
        } catch {
            throw WireError("\(context): \(error)")
        }
        let device = try entries.string("device").map { identifier throws(WireError) in
            try checkedText(identifier, "device", context)
            return HealthDevice(localIdentifier: identifier)
        }
        let metadata = try Self.metadata(try entries.dictionary("metadata"), context: context)
        do {
            return try QuantitySample(
                type: type, quantity: Quantity(unit: unit, doubleValue: number),
                start: Timestamp(microsecondsSinceEpoch: start), end: Timestamp(microsecondsSinceEpoch: end),
                device: device, metadata: metadata)
        } catch {
            throw WireError("\(context): \(error)")
        }
    }

    private static func metadata(_ entries: WireDictionary?, context: String) throws(WireError) -> SampleMetadata {
        guard let entries else { return .empty }
        var metadata = SampleMetadata()
        if let name = try entries.string("sensorLocation") {
            guard let location = HeartRateSensorLocation(name: name) else {
                throw WireError(
                    "\(context): unknown sensorLocation \(name.quoted) (known: \(HeartRateSensorLocation.allCases.map(\.name).joined(separator: ", ")))")
            }
            metadata.sensorLocation = location
        }
        metadata.sensorContact = try entries.bool("sensorContact")
        if let identifier = try entries.string("syncIdentifier") {
            try checkedText(identifier, "syncIdentifier", context)
            metadata.syncIdentifier = identifier
        }
        if let version = try entries.integer("syncVersion") {
            guard metadata.syncIdentifier != nil else { throw WireError("\(context): syncVersion needs a syncIdentifier") }
            metadata.syncVersion = Int(version)
        }
        let extraKeys = entries.entries.keys.filter { !SampleRecord.Metadata.knownKeys.contains($0) }.sorted()
        guard extraKeys.count <= maximumExtraMetadata else {
            throw WireError("\(context): at most \(maximumExtraMetadata) metadata keys besides the known ones")
        }
        for key in extraKeys {
            let text = try entries.requiredString(key)
            try checkedText(key, "a metadata key", context)
            try checkedText(text, "metadata \(key.quoted)", context)
            metadata.extra[key] = text
        }
        return metadata
    }

    private static func checkedText(_ text: String, _ what: String, _ context: String) throws(WireError) {
        guard !text.isEmpty, text.utf8.count <= maximumTextLength else {
            throw WireError("\(context): \(what) must have 1 to \(maximumTextLength) bytes")
        }
    }

    /// The dictionary that saves `sample` (a client's side).
    public static func wireValue(_ sample: QuantitySample) -> DBusValue {
        WireDictionary.value([
            ("type", .string(sample.type.identifier)), ("start", .int64(sample.start.microsecondsSinceEpoch)),
            ("end", .int64(sample.end.microsecondsSinceEpoch)), ("value", .double(sample.quantity.doubleValueInOwnUnit)),
            ("unit", .string(sample.quantity.unit.unitString)), ("device", (sample.device?.localIdentifier).wire),
            ("metadata", SampleRecord.Metadata(sample.metadata).wireValue),
        ])
    }
}

extension Quantity {
    /// The number in the quantity's own unit.
    fileprivate var doubleValueInOwnUnit: Double { (try? doubleValue(for: unit)) ?? .nan }
}
