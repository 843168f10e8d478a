import HealthModel
import Foundation
import GRDB

/// One save transaction. Authorization is read per type inside it; devices are resolved;
/// identities are claimed and anchors given in the order of the batch (so a sample's id is
/// the same as when every sample was a row of its own); sync versions replace what they
/// supersede; and the accepted samples are placed into chunks at the end.
struct SampleWriter {
    let db: Database
    let sourceID: Int64
    let sourceName: String
    private(set) var report = SaveReport()
    /// What this save added or replaced.
    private(set) var changes = ChangeCollector()
    private var anchors: AnchorSequence
    private var devices: DeviceRows
    private var hours = HourSummaries()
    /// The ANT+ beat stamps of the samples given anchors, by anchor (`ANTBeats`).
    private var beats: [(anchor: Int64, stamp: ANTBeatStamp)] = []
    /// What the store's saves remember (`WriteCache`), brought up to date by this one.
    private(set) var cache: WriteCache.Contents
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    /// A sample of the batch (by its index) with where it belongs.
    private struct Entry {
        var index: Int
        var type: SampleType
        var key: SeriesKey
        var shape: ChunkShape
        var start: Int64
        var value: Double
        var antBeat: ANTBeatStamp?

        /// The sample as a change announces it, given id `anchor`.
        func added(anchor: Int64) -> ChangeCollector.AddedPoint {
            ChangeCollector.AddedPoint(type: type, key: key, shape: shape, start: start, value: value, anchor: anchor, antBeat: antBeat)
        }
    }

    init(db: Database, source: HealthSource, cache: WriteCache.Contents) throws {
        self.db = db
        self.cache = cache
        if let sourceID = cache.sources[source] {
            self.sourceID = sourceID
        } else {
            self.sourceID = try HealthStore.upsertSource(source, db)
            self.cache.sources[source] = sourceID
        }
        self.sourceName = source.name
        self.anchors = try AnchorSequence(db)
        self.devices = DeviceRows(db, sourceID: self.sourceID, known: cache.devices)
    }

    /// Saves `samples` (see `HealthStore.save`).
    mutating func save(_ samples: [QuantitySample]) throws {
        var entries: [Entry] = []
        entries.reserveCapacity(samples.count)
        var identities = IdentityIndex()
        for (index, sample) in samples.enumerated() {
            guard try isAuthorized(sample.type) else {
                report.denied[sample.type, default: 0] += 1
                continue
            }
            let key = SeriesKey(typeID: sample.type.storageID, sourceID: sourceID, deviceID: try sample.device.map { try devices.id(of: $0) })
            let value = sample.canonicalValue
            let entry = Entry(
                index: index, type: sample.type, key: key, shape: try ChunkShape(sample, value: value, encoder: encoder),
                start: sample.start.microsecondsSinceEpoch, value: value, antBeat: sample.antBeat)
            identities.expect(key, start: entry.start)
            entries.append(entry)
        }
        cache.devices = devices.known
        var placement = ChunkPlacement()
        for entry in entries {
            if let sync = entry.shape.sync {
                try saveSynced(entry, stamp: sync, &identities)
            } else if try identities.claim(entry.key, start: entry.start, &cache, db) {
                anchors.last += 1
                placement.add(entry.key, shape: entry.shape, start: entry.start, value: entry.value, anchor: anchors.last)
                if let stamp = entry.antBeat { beats.append((anchors.last, stamp)) }
                hours.add(typeID: entry.key.typeID, sourceID: sourceID, start: entry.start, value: entry.value)
                report.stored += 1
                changes.recordAdded(entry.added(anchor: anchors.last), source: sourceName)
            } else {
                report.unchanged += 1
            }
        }
        try placement.write(&cache, db)
        try ANTBeats.record(beats, db)
        try hours.write(db)
        try anchors.save(db)
    }

    /// Saves a sample with a sync identifier as a chunk of its own: nothing when the source
    /// stored that identifier at the same or a higher version; else it replaces the stored
    /// one, leaving a tombstone.
    private mutating func saveSynced(_ entry: Entry, stamp: ChunkShape.SyncStamp, _ identities: inout IdentityIndex) throws {
        if let stored = try SeriesLookup.chunk(source: sourceID, syncIdentifier: stamp.identifier, db) {
            guard stamp.version > (stored.shape.sync?.version ?? 0) else {
                report.unchanged += 1
                return
            }
            let points = try stored.points()
            let type = SampleType(storageID: stored.key.typeID) ?? entry.type
            for deleted in try Tombstones.record(points.anchors, type: type, sourceID: sourceID, sequence: &anchors, db) {
                changes.recordDeleted(DeletedSample(id: deleted.id, type: type, source: sourceName, anchor: deleted.anchor))
            }
            try db.execute(sql: "DELETE FROM series WHERE id = ?", arguments: [stored.id])
            try ANTBeats.remove(points.anchors, db)
            for start in points.starts {
                identities.remove(stored.key, start: start)
                hours.invalidate(typeID: stored.key.typeID, sourceID: sourceID, start: start)
            }
            report.replaced += 1
            guard try identities.claim(entry.key, start: entry.start, &cache, db) else { return }
        } else {
            guard try identities.claim(entry.key, start: entry.start, &cache, db) else {
                report.unchanged += 1
                return
            }
            report.stored += 1
        }
        anchors.last += 1
        var points = SeriesPoints()
        points.append(start: entry.start, value: entry.value, anchor: anchors.last, precededByGap: entry.shape.span == .beat)
        try SeriesTable.insert(key: entry.key, shape: entry.shape, points: points, db)
        if let stamp = entry.antBeat { beats.append((anchors.last, stamp)) }
        hours.add(typeID: entry.key.typeID, sourceID: sourceID, start: entry.start, value: entry.value)
        changes.recordAdded(entry.added(anchor: anchors.last), source: sourceName)
    }

    private mutating func isAuthorized(_ type: SampleType) throws -> Bool {
        if let status = report.authorization[type] { return status == .sharingAuthorized }
        let status = try HealthStore.shareStatusRequesting(sourceID: sourceID, type: type, db)
        report.authorization[type] = status
        return status == .sharingAuthorized
    }
}

/// The rows of table `device` a save uses, the saving source's own, added or filled in as
/// devices become known. Another source's record of the same identifier is never read or
/// changed: each source's record holds only what that source said.
private struct DeviceRows {
    let db: Database
    let sourceID: Int64
    /// Each device as it was last written to its row, by source and local identifier, and the row id.
    private(set) var known: [DeviceKey: (device: HealthDevice, id: Int64)]
    /// The previous sample's device: batches usually hold long runs of one device.
    private var last: (device: HealthDevice, id: Int64)?

    init(_ db: Database, sourceID: Int64, known: [DeviceKey: (device: HealthDevice, id: Int64)]) {
        self.db = db
        self.sourceID = sourceID
        self.known = known
    }

    /// The row id of the source's `device`, adding it or filling in what became known about it.
    mutating func id(of device: HealthDevice) throws -> Int64 {
        if let last, last.device == device { return last.id }
        let key = DeviceKey(sourceID: sourceID, localIdentifier: device.localIdentifier)
        let row: (device: HealthDevice, id: Int64) =
            try known[key].flatMap { $0.device == device ? $0 : nil } ?? (device, upsert(device))
        known[key] = row
        last = row
        return row.id
    }

    private func upsert(_ device: HealthDevice) throws -> Int64 {
        try Int64.fetchOne(
            db.cachedStatement(sql: """
                INSERT INTO device (sourceId, localIdentifier, name, manufacturer, model, hardwareVersion,
                                    firmwareVersion, softwareVersion)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (sourceId, localIdentifier) DO UPDATE SET
                    name = COALESCE(excluded.name, name),
                    manufacturer = COALESCE(excluded.manufacturer, manufacturer),
                    model = COALESCE(excluded.model, model),
                    hardwareVersion = COALESCE(excluded.hardwareVersion, hardwareVersion),
                    firmwareVersion = COALESCE(excluded.firmwareVersion, firmwareVersion),
                    softwareVersion = COALESCE(excluded.softwareVersion, softwareVersion)
                RETURNING id
                """),
            arguments: [
                sourceID, device.localIdentifier, device.name, device.manufacturer, device.model,
                device.hardwareVersion, device.firmwareVersion, device.softwareVersion,
            ])!
    }
}

/// A device record's key: device records belong to the source that wrote them.
struct DeviceKey: Hashable, Sendable {
    var sourceID: Int64
    var localIdentifier: String
}

/// Tombstones (table `deletedSample`): what an anchored query reports as deleted.
enum Tombstones {
    /// Records the deletion of the samples of `type` with ids `sampleIDs`, in id order, each
    /// at the next anchor of `sequence`; returns each id with its tombstone's anchor.
    @discardableResult
    static func record(_ sampleIDs: [Int64], type: SampleType, sourceID: Int64, sequence: inout AnchorSequence, _ db: Database) throws
        -> [(id: Int64, anchor: Int64)]
    {
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
        let insert = try db.cachedStatement(sql: """
            INSERT INTO deletedSample (anchor, sampleId, typeId, sourceId, deletedAt) VALUES (?, ?, ?, ?, ?)
            """)
        var recorded: [(id: Int64, anchor: Int64)] = []
        recorded.reserveCapacity(sampleIDs.count)
        for id in sampleIDs.sorted() {
            sequence.last += 1
            try insert.execute(arguments: [sequence.last, id, type.storageID, sourceID, now])
            recorded.append((id, sequence.last))
        }
        return recorded
    }
}
