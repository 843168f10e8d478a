import GRDB
import HealthUnits
import Testing
import Timestamps

@testable import HealthStore

/// Builders shared by the store tests.
enum Fixture {
    static let hrmd = HealthSource(name: "hrmd", version: "0.1.0")
    static let strap = HealthDevice(localIdentifier: "AA:BB:CC:DD:EE:FF", name: "Polar H10", manufacturer: "Polar")
    static let base = Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000)

    static func memoryStore() throws -> HealthStore {
        try HealthStore(writer: DatabaseQueue())
    }

    /// A heart-rate sample `offset` seconds after `base`.
    static func heartRate(
        _ bpm: Double, at offset: Double, device: HealthDevice? = strap, metadata: SampleMetadata = .empty
    ) throws -> QuantitySample {
        let time = base.advanced(bySeconds: offset)
        return try QuantitySample(
            type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: bpm),
            start: time, end: time, device: device, metadata: metadata)
    }

    static func authorizedStore() throws -> HealthStore {
        let store = try memoryStore()
        for type in SampleType.all { try store.setShareAuthorization(.sharingAuthorized, source: hrmd.name, type: type) }
        return store
    }
}
