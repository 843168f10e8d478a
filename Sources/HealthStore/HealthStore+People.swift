import GRDB
import HealthModel
import Timestamps

/// People and the straps they wore (tables `person` and `assignment`). A sample belongs to
/// whoever's assignment of its device covers its start; samples are never rewritten for it.
extension HealthStore {
    /// Every person, by name (bytes).
    public func people() throws(HealthStoreError) -> [Person] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT name, birthYear, sex, weightKilograms, restingHeartRate, maximumHeartRate, zones, alertHigh, alertLow
                    FROM person ORDER BY CAST(name AS BLOB)
                    """
            ).map(Self.person)
        }
    }

    /// Every assignment, by device, then start.
    public func strapAssignments() throws(HealthStoreError) -> [StrapAssignment] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT a.device, p.name, a.start, a.end FROM assignment a JOIN person p ON p.id = a.personId
                    ORDER BY CAST(a.device AS BLOB), a.start
                    """
            ).map { row in
                StrapAssignment(
                    device: row[0], person: row[1], from: Timestamp(microsecondsSinceEpoch: row[2]),
                    until: (row[3] as Int64?).map(Timestamp.init(microsecondsSinceEpoch:)))
            }
        }
    }

    /// Adds `person` (`creating`), or replaces the record of the person of that name.
    /// Adding a name the store has, or replacing one it has not, is a conflict.
    public func savePerson(_ person: Person, creating: Bool) throws(HealthStoreError) {
        if let problem = person.problem { throw .conflict(problem) }
        try write { db in
            let exists = try Bool.fetchOne(db, sql: "SELECT 1 FROM person WHERE name = ?", arguments: [person.name]) ?? false
            let values: StatementArguments = [
                person.birthYear, person.sex?.rawValue, person.weightKilograms, person.restingHeartRate, person.maximumHeartRate,
                person.zoneMethod.description, person.alertHigh, person.alertLow, person.name,
            ]
            if creating {
                guard !exists else {
                    throw HealthStoreError.conflict("a person named \(person.name.debugDescription) exists; change them with hrmctl person set")
                }
                let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM person") ?? 0
                guard count < Person.storeLimit else {
                    throw HealthStoreError.limitReached("the store has \(count) people, the most it keeps (\(Person.storeLimit))")
                }
                try db.execute(
                    sql: """
                        INSERT INTO person (birthYear, sex, weightKilograms, restingHeartRate, maximumHeartRate, zones, alertHigh, alertLow, name)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: values)
            } else {
                guard exists else { throw HealthStoreError.noPerson(named: person.name) }
                try db.execute(
                    sql: """
                        UPDATE person SET birthYear = ?, sex = ?, weightKilograms = ?, restingHeartRate = ?, maximumHeartRate = ?,
                            zones = ?, alertHigh = ?, alertLow = ? WHERE name = ?
                        """,
                    arguments: values)
            }
        }
    }

    /// Removes the person named `name` and their assignments (their devices' samples stay,
    /// belonging to nobody); a name the store has not is a conflict.
    public func removePerson(named name: String) throws(HealthStoreError) {
        try write { db in
            try db.execute(sql: "DELETE FROM assignment WHERE personId IN (SELECT id FROM person WHERE name = ?)", arguments: [name])
            try db.execute(sql: "DELETE FROM person WHERE name = ?", arguments: [name])
            guard db.changesCount > 0 else { throw HealthStoreError.noPerson(named: name) }
        }
    }

    /// Assigns `device` to the person named `person` over [from, until) (nil: open-ended). An
    /// assignment of the device that covers `from` ends there; later ones the new range covers
    /// are cut to start at its end, or removed when it covers them whole.
    public func assignStrap(device: String, person: String, from: Timestamp, until: Timestamp?) throws(HealthStoreError) {
        guard !device.isEmpty else { throw .conflict("name the device to assign (its identifier, as hrmctl devices lists it)") }
        if let until, until <= from { throw .conflict("an assignment ends after it starts") }
        let start = from.microsecondsSinceEpoch
        let end = until?.microsecondsSinceEpoch
        try write { db in
            guard let personID = try Int64.fetchOne(db, sql: "SELECT id FROM person WHERE name = ?", arguments: [person]) else {
                throw HealthStoreError.noPerson(named: person)
            }
            // The one that covers the new start ends there.
            try db.execute(
                sql: "UPDATE assignment SET end = ? WHERE device = ? AND start < ? AND (end IS NULL OR end > ?)",
                arguments: [start, device, start, start])
            // Later ones inside the new range go; one that reaches past its end starts there
            // (no other starts at that end, since a device's assignments never overlap).
            if let end {
                try db.execute(
                    sql: "DELETE FROM assignment WHERE device = ? AND start >= ? AND start < ? AND end IS NOT NULL AND end <= ?",
                    arguments: [device, start, end, end])
                try db.execute(
                    sql: "UPDATE assignment SET start = ? WHERE device = ? AND start >= ? AND start < ?",
                    arguments: [end, device, start, end])
            } else {
                try db.execute(sql: "DELETE FROM assignment WHERE device = ? AND start >= ?", arguments: [device, start])
            }
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM assignment") ?? 0
            guard count < StrapAssignment.storeLimit else {
                throw HealthStoreError.limitReached(
                    "the store has \(count) strap assignments, the most it keeps (\(StrapAssignment.storeLimit)); remove people no longer recorded")
            }
            try db.execute(
                sql: "INSERT INTO assignment (device, start, end, personId) VALUES (?, ?, ?, ?)",
                arguments: [device, start, end, personID])
        }
    }

    private static func person(_ row: Row) throws -> Person {
        let zones: ZoneMethod
        do { zones = try ZoneMethod.parse(row[6]) } catch { throw HealthStoreError.database("person \((row[0] as String).debugDescription): \(error)") }
        return Person(
            name: row[0], birthYear: (row[1] as Int64?).map { Int($0) }, sex: (row[2] as String?).flatMap(BiologicalSex.init(rawValue:)),
            weightKilograms: row[3], restingHeartRate: row[4], maximumHeartRate: row[5], zoneMethod: zones, alertHigh: row[7], alertLow: row[8])
    }
}
