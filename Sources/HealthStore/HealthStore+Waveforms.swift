import Foundation
import GRDB
import HealthModel
import Timestamps

/// What ``HealthStore/saveWaveform(_:)`` did with one part.
public struct WaveformSaveReport: Sendable, Hashable {
    /// Instants stored.
    public var stored: Int
    /// Instants left out because the recording holds their times already (a recording
    /// replayed again).
    public var unchanged: Int
    /// The recording as it is after the save.
    public var recording: WaveformRecording
}

/// A waveform recording deleted: its id, type, source and strap, as its tombstone keeps them.
public struct DeletedWaveform: Sendable, Hashable {
    public var id: String
    public var type: SampleType
    public var source: String
    public var device: String?

    public init(id: String, type: SampleType, source: String, device: String?) {
        self.id = id
        self.type = type
        self.source = source
        self.device = device
    }
}

/// Waveform recordings (tables `waveform` and `waveformChunk`): HealthKit's electrocardiograms,
/// and acceleration kept the same way. A recorder saves a recording in parts as its samples
/// come; each part that stores something takes a new anchor. A source writes a waveform type
/// with share authorization of it; a reader sees its own recordings and, with read
/// authorization of the type, every source's.
///
/// The samples are kept in chunks of at most ``chunkInstants`` consecutive instants, each
/// compressed on its own (`WaveformChunkCoding`), so reading a 30-second strip decodes a
/// chunk or two and never the day around it.
extension HealthStore {
    /// The most instants one chunk holds: about 8 s of ECG at 130 Hz.
    public static let chunkInstants = 1024

    /// Stores `part`'s samples in its recording, creating the recording with its first part.
    /// Instants whose times the recording holds already (those earlier than 0.9 of a sample
    /// period before its end) are left out, so saving a replayed recording again stores
    /// nothing new; a segment that starts where the recording ended (to within half a period)
    /// continues its last chunk, any other starts a chunk of its own: later, a gap; a little
    /// earlier, a strap clock running fast, whose samples are kept. A part with
    /// `isOpen` false ends the recording. Refused when the source may not share the type,
    /// when the part is malformed (``WaveformPart/problem``), or when its id names a
    /// recording of another type, source, strap or rate.
    @discardableResult
    public func saveWaveform(_ part: WaveformPart) throws(HealthStoreError) -> WaveformSaveReport {
        if let problem = part.problem { throw .conflict(problem) }
        return try writeAnnouncing { db in
            let given = part.recording
            let sourceID = try Self.upsertSource(HealthSource(name: given.source), db)
            guard given.type.mayBeShared(by: given.source),
                try Self.status(of: .share, sourceID: sourceID, type: given.type, db) == .sharingAuthorized
            else { throw HealthStoreError.shareNotAuthorized(source: given.source, types: [given.type.identifier]) }
            var writer = try WaveformChunkWriter(part: part, db)
            if let stored = writer.stored {
                guard stored.type == given.type, stored.source == given.source, stored.device == given.device,
                    stored.frequency == given.frequency
                else { throw HealthStoreError.conflict("the recording \(given.id) is another recording (type, source, strap or rate differ)") }
            }
            for segment in part.segments { try writer.append(segment, db) }
            let report = try writer.finish(isOpen: given.isOpen, db)
            var changes = ChangeCollector()
            if let saved = writer.savedPart { changes.recordWaveform(saved) }
            return (report, changes)
        }
    }

    /// Deletes recording `id` and its samples, leaving a tombstone, and returns it as it was;
    /// throws `conflict` when there is none or when it is still being recorded. Only the
    /// store's owner or a manager deletes recordings: the requests check who asks.
    @discardableResult
    public func deleteWaveform(_ id: String) throws(HealthStoreError) -> WaveformRecording {
        try writeAnnouncing { db in
            guard let recording = try Self.storedWaveform(id, db) else { throw HealthStoreError.conflict("no recording \(id.debugDescription)") }
            guard !recording.isOpen else {
                throw HealthStoreError.conflict("the recording \(id) is still being recorded; it can be deleted once it has ended")
            }
            let sourceID = try Self.upsertSource(HealthSource(name: recording.source), db)
            var anchors = try AnchorSequence(db)
            anchors.last += 1
            try anchors.save(db)
            try db.execute(sql: "DELETE FROM waveform WHERE uuid = ?", arguments: [id])
            try db.execute(
                sql: "INSERT INTO deletedWaveform (anchor, uuid, typeId, sourceId, device, deletedAt) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [anchors.last, id, recording.type.storageID, sourceID, recording.device, Timestamp.now().microsecondsSinceEpoch])
            var changes = ChangeCollector()
            changes.recordDeletedWaveform(
                DeletedWaveform(id: id, type: recording.type, source: recording.source, device: recording.device))
            return (recording, changes)
        }
    }

    /// The recordings `query` asks for that its reader may see, newest start first.
    public func waveforms(_ query: WaveformQuery) throws(HealthStoreError) -> [WaveformRecording] {
        let types = query.types.isEmpty ? SampleType.waveformTypes : query.types.filter { $0.kind == .waveform }
        guard query.limit > 0, !types.isEmpty else { return [] }
        return try read { db in
            var typeConditions: [String] = []
            var arguments: StatementArguments = []
            for type in types {
                let scope = try ReaderScope(reader: query.reader, type: type, db)
                if let visible = scope.condition(on: "w.sourceId") {
                    typeConditions.append("(w.typeId = ? AND \(visible.sql))")
                    arguments += [type.storageID]
                    arguments += visible.arguments
                } else {
                    typeConditions.append("w.typeId = ?")
                    arguments += [type.storageID]
                }
            }
            var conditions = ["(" + typeConditions.joined(separator: " OR ") + ")"]
            if let since = query.since {
                conditions.append(#"w."end" > ?"#)
                arguments += [since.microsecondsSinceEpoch]
            }
            if let until = query.until {
                conditions.append("w.start < ?")
                arguments += [until.microsecondsSinceEpoch]
            }
            if let device = query.device {
                conditions.append("w.device = ?")
                arguments += [device]
            }
            arguments += [min(query.limit, WaveformQuery.answerLimit)]
            return try Row.fetchAll(
                db, sql: "\(Self.selectWaveforms) WHERE \(conditions.joined(separator: " AND ")) ORDER BY w.start DESC, w.id DESC LIMIT ?",
                arguments: arguments
            ).compactMap(Self.waveform)
        }
    }

    /// Recording `id` if `reader` may see it (nil reads as the store's owner).
    public func waveform(_ id: String, reader: String? = nil) throws(HealthStoreError) -> WaveformRecording? {
        try read { db in
            guard let recording = try Self.storedWaveform(id, db) else { return nil }
            return try Self.mayRead(recording, reader: reader, db) ? recording : nil
        }
    }

    /// Hands `body` recording `id`'s samples from `since` to before `until` (the whole
    /// recording without them), in time order, one chunk's worth at a time: memory stays
    /// that of a chunk however long the stretch. Pieces that follow each other without a gap
    /// can be joined (`Array.append(joining:frequency:channels:)`). `body` is given the
    /// recording with each piece, and returns false to stop. Returns the recording, or nil when there is none `reader` may see.
    @discardableResult
    public func readWaveform(
        _ id: String, since: Timestamp? = nil, until: Timestamp? = nil, reader: String? = nil,
        _ body: (WaveformRecording, WaveformSegment) -> Bool
    ) throws(HealthStoreError) -> WaveformRecording? {
        try read { db in
            guard let (rowID, recording) = try Self.storedWaveformRow(id, db), try Self.mayRead(recording, reader: reader, db)
            else { return nil }
            let channels = recording.channels.count
            let period = 1e6 / recording.frequency
            let sinceMicros = since?.microsecondsSinceEpoch ?? .min
            let untilMicros = until?.microsecondsSinceEpoch ?? .max
            // A chunk starting more than its longest span before `since` ends before it.
            let longestSpan = Int64((Double(Self.chunkInstants) * period).rounded(.up)) + 1
            let earliestStart = sinceMicros == .min ? Int64.min : sinceMicros - longestSpan
            let chunks = try Row.fetchCursor(
                db, sql: "SELECT start, instants, data FROM waveformChunk WHERE waveformId = ? AND start >= ? AND start < ? ORDER BY start",
                arguments: [rowID, earliestStart, untilMicros])
            while let chunk = try chunks.next() {
                let start: Int64 = chunk[0]
                let instants: Int = chunk[1]
                let data: [UInt8] = Array(chunk[2] as Data)
                let first = sinceMicros <= start ? 0 : max(0, Int(((Double(sinceMicros - start) - 0.5) / period).rounded(.up)))
                let last = untilMicros == .max ? instants : min(instants, Int(((Double(untilMicros - start) - 0.5) / period).rounded(.up)))
                guard first < last else { continue }
                let values = try WaveformChunkCoding.decode(data, channels: channels, instants: instants, start: start)
                let piece = WaveformSegment(
                    start: Timestamp(microsecondsSinceEpoch: start + Int64((Double(first) * period).rounded())),
                    values: Array(values[(first * channels)..<(last * channels)]))
                if !body(recording, piece) { break }
            }
            return recording
        }
    }

    /// The recordings saved (started, grown or ended) or deleted after `anchor` up to anchor
    /// `last`, oldest first, at most `limit`; with the anchor of the last one read.
    public func waveformChanges(since anchor: Int64, through last: Int64 = .max, limit: Int) throws(HealthStoreError)
        -> (recordings: [WaveformRecording], deleted: [DeletedWaveform], anchor: Int64)
    {
        try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT w.anchor, w.uuid, w.typeId, 0, NULL, NULL FROM waveform w WHERE w.anchor > ? AND w.anchor <= ?
                    UNION ALL
                    SELECT w.anchor, w.uuid, w.typeId, 1, s.name, w.device FROM deletedWaveform w JOIN source s ON s.id = w.sourceId
                    WHERE w.anchor > ? AND w.anchor <= ?
                    ORDER BY 1 LIMIT ?
                    """,
                arguments: [anchor, last, anchor, last, max(0, limit)])
            var result: (recordings: [WaveformRecording], deleted: [DeletedWaveform], anchor: Int64) = ([], [], anchor)
            for row in rows {
                let id: String = row[1]
                if row[3] as Bool {
                    if let type = SampleType(storageID: row[2]) {
                        result.deleted.append(DeletedWaveform(id: id, type: type, source: row[4], device: row[5]))
                    }
                } else if let recording = try Self.storedWaveform(id, db) {
                    result.recordings.append(recording)
                }
                result.anchor = row[0]
            }
            return result
        }
    }

    /// The store's one read rule (``ReaderScope``) applied to one recording.
    private static func mayRead(_ recording: WaveformRecording, reader: String?, _ db: Database) throws -> Bool {
        try ReaderScope(reader: reader, type: recording.type, db).restrictedTo.map { $0 == recording.source } ?? true
    }

    /// The columns ``waveform(_:)`` reads, over `waveform w` joined with its `source s`.
    static let selectWaveforms = """
        SELECT w.uuid, w.typeId, s.name, w.device, w.frequency, w.start, w."end", w.instants, w.open, w.id
        FROM waveform w JOIN source s ON s.id = w.sourceId
        """

    static func waveform(_ row: Row) -> WaveformRecording? {
        guard let type = SampleType(storageID: row[1]), type.kind == .waveform else { return nil }
        return WaveformRecording(
            id: row[0], type: type, source: row[2], device: row[3], frequency: row[4],
            start: Timestamp(microsecondsSinceEpoch: row[5]), end: Timestamp(microsecondsSinceEpoch: row[6]), instantCount: row[7],
            isOpen: row[8])
    }

    static func storedWaveform(_ id: String, _ db: Database) throws -> WaveformRecording? {
        try storedWaveformRow(id, db)?.recording
    }

    /// Recording `id` with its row's id (what its chunks name it by).
    static func storedWaveformRow(_ id: String, _ db: Database) throws -> (rowID: Int64, recording: WaveformRecording)? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "\(selectWaveforms) WHERE w.uuid = ?"), arguments: [id]),
            let recording = waveform(row)
        else { return nil }
        return (row[9], recording)
    }
}
