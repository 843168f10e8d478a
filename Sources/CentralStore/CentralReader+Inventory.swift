import Foundation
import HealthModel
import PostgresClient
import Timestamps

/// Devices and sources as the central store knows them.
extension CentralReader {
    /// Every device by identifier (one central record each, whichever gateway heard it), with
    /// its sample count over every type, the start of its latest sample, and that sample's
    /// location; ordered by identifier as bytes.
    public func deviceSummaries() throws(CentralStoreError) -> [DeviceSummary] {
        try Self.run { () throws(PostgresError) -> Result<[DeviceSummary], CentralStoreError> in
            let rows = try connection.execute("""
                WITH s AS (
                    SELECT device_id, count::bigint AS n, last_start AS t, sensor_location AS loc FROM hrmd.chunk
                    UNION ALL
                    SELECT device_id, 1, start_time, sensor_location FROM \(Self.latestSyncedAllTypes) x
                )
                SELECT d.identifier, d.name, d.manufacturer, d.model, d.hardware_version, d.firmware_version, d.software_version,
                       coalesce((SELECT sum(n) FROM s WHERE s.device_id = d.id), 0),
                       (SELECT max(t) FROM s WHERE s.device_id = d.id),
                       (SELECT loc FROM s WHERE s.device_id = d.id ORDER BY t DESC LIMIT 1)
                FROM hrmd.device d ORDER BY d.identifier COLLATE "C"
                """)
            var summaries: [DeviceSummary] = []
            for row in 0..<rows.rowCount {
                summaries.append(DeviceSummary(
                    device: HealthDevice(
                        localIdentifier: rows.string(row, 0) ?? "", name: rows.string(row, 1), manufacturer: rows.string(row, 2),
                        model: rows.string(row, 3), hardwareVersion: rows.string(row, 4), firmwareVersion: rows.string(row, 5),
                        softwareVersion: rows.string(row, 6)),
                    sampleCount: Int(try rows.int64(row, 7)),
                    lastSeen: rows.isNull(row, 8) ? nil : Timestamp(microsecondsSinceEpoch: try rows.int64(row, 8)),
                    lastLocation: rows.isNull(row, 9) ? nil : HeartRateSensorLocation(rawValue: try rows.int(row, 9))))
            }
            return .success(summaries)
        }
    }

    /// Every source with its sample count over every type and the start of its latest
    /// sample; ordered by name as bytes.
    public func sourceSummaries() throws(CentralStoreError) -> [SourceSummary] {
        try Self.run { () throws(PostgresError) -> Result<[SourceSummary], CentralStoreError> in
            let rows = try connection.execute("""
                WITH s AS (
                    SELECT source_id, count::bigint AS n, last_start AS t FROM hrmd.chunk
                    UNION ALL
                    SELECT source_id, 1, start_time FROM \(Self.latestSyncedAllTypes) x
                )
                SELECT r.name, r.version, coalesce(sum(s.n), 0), max(s.t)
                FROM hrmd.source r LEFT JOIN s ON s.source_id = r.id
                GROUP BY r.id ORDER BY r.name COLLATE "C"
                """)
            var summaries: [SourceSummary] = []
            for row in 0..<rows.rowCount {
                summaries.append(SourceSummary(
                    source: HealthSource(name: rows.string(row, 0) ?? "", version: rows.string(row, 1)),
                    sampleCount: Int(try rows.int64(row, 2)),
                    lastSample: rows.isNull(row, 3) ? nil : Timestamp(microsecondsSinceEpoch: try rows.int64(row, 3))))
            }
            return .success(summaries)
        }
    }
}
