import HealthRequests
import HealthModel
import SDBus

extension RecordingImportSummary {
    /// The summary Import returns: `frames`, `stored`, `unchanged`, `denied`, `lost`,
    /// `badLines`, `badRecords`, `workoutsStored`, `workoutsUnchanged`,
    /// `workoutsDenied`, `workoutsRefused` u; `skipped` a{su}; `hrmdMayShare` b.
    public var wireValue: DBusValue {
        WireDictionary.value([
            ("frames", .uint32(UInt32(clamping: frames))), ("stored", .uint32(UInt32(clamping: stored))),
            ("unchanged", .uint32(UInt32(clamping: unchanged))), ("denied", .uint32(UInt32(clamping: denied))),
            ("lost", .uint32(UInt32(clamping: lost))), ("badLines", .uint32(UInt32(clamping: badLines))),
            ("badRecords", .uint32(UInt32(clamping: badRecords))),
            ("workoutsStored", .uint32(UInt32(clamping: workoutsStored))),
            ("workoutsUnchanged", .uint32(UInt32(clamping: workoutsUnchanged))),
            ("workoutsDenied", .uint32(UInt32(clamping: workoutsDenied))),
            ("workoutsRefused", .uint32(UInt32(clamping: workoutsRefused))),
            ("skipped", .dictionary(key: "s", value: "u", skipped.sorted { $0.key < $1.key }.map {
                DBusDictionaryEntry(.string($0.key), .uint32(UInt32(clamping: $0.value)))
            })),
            ("hrmdMayShare", .bool(mayShareHeartRate)),
        ])
    }

    public init(wire value: DBusValue) throws(WireError) {
        let entries = try WireDictionary(value, context: "import summary")
        self.init()
        frames = Int(try entries.integer("frames") ?? 0)
        stored = Int(try entries.integer("stored") ?? 0)
        unchanged = Int(try entries.integer("unchanged") ?? 0)
        denied = Int(try entries.integer("denied") ?? 0)
        lost = Int(try entries.integer("lost") ?? 0)
        badLines = Int(try entries.integer("badLines") ?? 0)
        badRecords = Int(try entries.integer("badRecords") ?? 0)
        workoutsStored = Int(try entries.integer("workoutsStored") ?? 0)
        workoutsUnchanged = Int(try entries.integer("workoutsUnchanged") ?? 0)
        workoutsDenied = Int(try entries.integer("workoutsDenied") ?? 0)
        workoutsRefused = Int(try entries.integer("workoutsRefused") ?? 0)
        heartRateShareStatus = try entries.bool("hrmdMayShare") == true ? .sharingAuthorized : .sharingDenied
        storedNothingForLackOfAuthorization = !mayShareHeartRate && denied > 0 && stored == 0
        if let skips = entries.entries["skipped"]?.stringKeyed {
            for (reason, count) in skips where (count.integer ?? 0) > 0 { skipped[reason] = Int(count.integer ?? 0) }
        }
    }

    /// Adds the counts of another import (hrmctl replays several files, one Import each).
    public mutating func add(_ other: RecordingImportSummary) {
        frames += other.frames
        stored += other.stored
        unchanged += other.unchanged
        denied += other.denied
        lost += other.lost
        badLines += other.badLines
        badRecords += other.badRecords
        workoutsStored += other.workoutsStored
        workoutsUnchanged += other.workoutsUnchanged
        workoutsDenied += other.workoutsDenied
        workoutsRefused += other.workoutsRefused
        skipped.merge(other.skipped, uniquingKeysWith: +)
        heartRateShareStatus = other.heartRateShareStatus
        storedNothingForLackOfAuthorization = !mayShareHeartRate && denied > 0 && stored == 0
    }
}
