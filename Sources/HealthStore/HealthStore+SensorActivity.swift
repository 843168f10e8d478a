import HealthModel
import GRDB
import Timestamps


extension HealthStore {
    /// Replaces every sensor's activity with `activities` (the recording daemon's whole view).
    public func replaceSensorActivity(_ activities: [SensorActivity]) throws(HealthStoreError) {
        try write { db in
            try db.execute(sql: "DELETE FROM sensorActivity")
            let insert = try db.cachedStatement(sql: """
                INSERT INTO sensorActivity
                    (identifier, transport, state, detail, since, battery, lastFrame, frames, skipped, updatedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for activity in activities {
                let battery = activity.battery.map { min(max($0, 0), 100) }
                try insert.execute(arguments: [
                    activity.identifier, activity.transport, activity.state, activity.detail,
                    activity.since.microsecondsSinceEpoch, battery, activity.lastFrame?.microsecondsSinceEpoch,
                    activity.frames, activity.skipped, activity.updatedAt.microsecondsSinceEpoch,
                ])
            }
        }
    }

    /// Every sensor's last reported activity, by identifier.
    public func sensorActivity() throws(HealthStoreError) -> [SensorActivity] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT identifier, transport, state, detail, since, battery, lastFrame, frames, skipped, updatedAt
                    FROM sensorActivity ORDER BY identifier
                    """
            ).map { row in
                let lastFrame: Int64? = row[6]
                return SensorActivity(
                    identifier: row[0], transport: row[1], state: row[2], detail: row[3],
                    since: Timestamp(microsecondsSinceEpoch: row[4]), battery: row[5],
                    lastFrame: lastFrame.map(Timestamp.init(microsecondsSinceEpoch:)), frames: row[7], skipped: row[8],
                    updatedAt: Timestamp(microsecondsSinceEpoch: row[9]))
            }
        }
    }
}
