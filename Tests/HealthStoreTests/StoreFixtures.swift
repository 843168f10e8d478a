import GRDB
import HealthUnits
import Testing
import Timestamps

import HealthModel
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

    /// A store file at `path` in the first schema (one row per sample): one 64 bpm sample of
    /// source hrmd from the chest strap "old strap", whose sharing of heart rate was granted.
    static func writeFirstSchemaStore(at path: String) throws {
        let old = try DatabaseQueue(path: path)
        try Schema.migrator.migrate(old, upTo: Schema.core)
        try old.write { db in
            try Schema.registerTypes(db)
            try db.execute(sql: """
                INSERT INTO source (id, name) VALUES (1, 'hrmd');
                INSERT INTO device (id, localIdentifier, name) VALUES (1, 'AA:BB:CC:DD:EE:FF', 'old strap');
                INSERT INTO authorization (sourceId, typeId, shareStatus) VALUES (1, 1, 2);
                INSERT INTO sample (typeId, sourceId, deviceId, start, "end", value, sensorLocation)
                    VALUES (1, 1, 1, 1795000000000000, 1795000000000000, 64, 1);
                """)
        }
    }

    static func authorizedStore() throws -> HealthStore {
        let store = try memoryStore()
        for type in SampleType.all { try store.setShareAuthorization(.sharingAuthorized, source: hrmd.name, type: type) }
        return store
    }
}
