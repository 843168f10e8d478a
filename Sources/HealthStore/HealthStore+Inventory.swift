import HealthModel
import GRDB
import Timestamps


extension HealthStore {
    /// Every device with its sample count, last sample time and last location: the store's
    /// owner's inventory, one entry per local identifier. Each source has its own record of
    /// an identifier (its samples carry only that); here they merge: the counts and times are
    /// those of every source's samples of the identifier, the location that of the latest, and
    /// the details (name, manufacturer, model, versions) those of one record, the daemon's
    /// (`hrmd`, which reads them off the strap) when it has one, else the earliest source's
    /// (lowest id). Another source naming the daemon's strap thus adds to its counts but does
    /// not change what the daemon said it is.
    public func deviceSummaries() throws(HealthStoreError) -> [DeviceSummary] {
        try read { db in
            let records = try Row.fetchAll(
                db,
                sql: """
                    SELECT d.localIdentifier, d.name, d.manufacturer, d.model, d.hardwareVersion, d.firmwareVersion,
                           d.softwareVersion, IFNULL(SUM(s.count), 0), MAX(s.last),
                           (SELECT sensorLocation FROM series WHERE deviceId = d.id ORDER BY last DESC LIMIT 1),
                           d.sourceId IS (SELECT id FROM source WHERE name = ?) AS daemon
                    FROM device d LEFT JOIN series s ON s.deviceId = d.id
                    GROUP BY d.id ORDER BY d.localIdentifier, daemon DESC, d.sourceId
                    """,
                arguments: [HealthSource.daemonName])
            var summaries: [DeviceSummary] = []
            for row in records {
                let lastSeen = (row[8] as Int64?).map(Timestamp.init(microsecondsSinceEpoch:))
                let location = (row[9] as Int?).flatMap(HeartRateSensorLocation.init(rawValue:))
                let identifier: String = row[0]
                // Records come by identifier, the one whose details are shown first.
                if let merged = summaries.last, merged.device.localIdentifier == identifier {
                    summaries[summaries.count - 1].sampleCount += row[7] as Int
                    if let lastSeen, merged.lastSeen.map({ lastSeen > $0 }) ?? true {
                        summaries[summaries.count - 1].lastSeen = lastSeen
                        summaries[summaries.count - 1].lastLocation = location
                    }
                    continue
                }
                summaries.append(DeviceSummary(
                    device: HealthDevice(
                        localIdentifier: identifier, name: row[1], manufacturer: row[2], model: row[3],
                        hardwareVersion: row[4], firmwareVersion: row[5], softwareVersion: row[6]),
                    sampleCount: row[7], lastSeen: lastSeen, lastLocation: location))
            }
            return summaries
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
