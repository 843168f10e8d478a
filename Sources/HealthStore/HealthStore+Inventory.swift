import GRDB
import Timestamps

/// A device that wrote samples, with what it wrote.
public struct DeviceSummary: Sendable, Hashable {
    public var device: HealthDevice
    public var sampleCount: Int
    public var lastSeen: Timestamp?
    /// The location of its most recent sample, when it had one.
    public var lastLocation: HeartRateSensorLocation?

    public init(device: HealthDevice, sampleCount: Int, lastSeen: Timestamp?, lastLocation: HeartRateSensorLocation?) {
        self.device = device
        self.sampleCount = sampleCount
        self.lastSeen = lastSeen
        self.lastLocation = lastLocation
    }
}

/// A source that wrote samples, with what it wrote.
public struct SourceSummary: Sendable, Hashable {
    public var source: HealthSource
    public var sampleCount: Int
    public var lastSample: Timestamp?

    public init(source: HealthSource, sampleCount: Int, lastSample: Timestamp?) {
        self.source = source
        self.sampleCount = sampleCount
        self.lastSample = lastSample
    }
}

extension HealthStore {
    /// Every device with its sample count, last sample time and last location.
    public func deviceSummaries() throws(HealthStoreError) -> [DeviceSummary] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT d.localIdentifier, d.name, d.manufacturer, d.model, d.hardwareVersion, d.firmwareVersion,
                           d.softwareVersion, IFNULL(SUM(s.count), 0), MAX(s.last),
                           (SELECT sensorLocation FROM series WHERE deviceId = d.id ORDER BY last DESC LIMIT 1)
                    FROM device d LEFT JOIN series s ON s.deviceId = d.id
                    GROUP BY d.id ORDER BY d.localIdentifier
                    """
            ).map { row in
                let lastSeen: Int64? = row[8]
                let location: Int? = row[9]
                return DeviceSummary(
                    device: HealthDevice(
                        localIdentifier: row[0], name: row[1], manufacturer: row[2], model: row[3],
                        hardwareVersion: row[4], firmwareVersion: row[5], softwareVersion: row[6]),
                    sampleCount: row[7], lastSeen: lastSeen.map(Timestamp.init(microsecondsSinceEpoch:)),
                    lastLocation: location.flatMap(HeartRateSensorLocation.init(rawValue:)))
            }
        }
    }

    /// Every source with its sample count and last sample time.
    public func sourceSummaries() throws(HealthStoreError) -> [SourceSummary] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT src.name, src.version, IFNULL(SUM(s.count), 0), MAX(s.last)
                    FROM source src LEFT JOIN series s ON s.sourceId = src.id
                    GROUP BY src.id ORDER BY src.name
                    """
            ).map { row in
                let last: Int64? = row[3]
                return SourceSummary(
                    source: HealthSource(name: row[0], version: row[1]), sampleCount: row[2],
                    lastSample: last.map(Timestamp.init(microsecondsSinceEpoch:)))
            }
        }
    }
}
