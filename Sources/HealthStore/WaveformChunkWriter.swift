import Foundation
import GRDB
import HealthModel
import SeriesCoding
import Timestamps

/// Codes one waveform chunk's integers (``WaveformEncoder``); the store keeps the chunk's
/// start and instant count beside it.
enum WaveformChunkCoding {
    static func encode(_ values: ArraySlice<Int32>, channels: Int) -> [UInt8] {
        var encoder = WaveformEncoder(channels: channels)
        encoder.append(interleaved: values)
        return encoder.encoded()
    }

    /// The chunk's values; a chunk that does not decode, or holds another number of instants
    /// or channels than its row says, is damage: `damagedSeries` names it by its start (µs).
    static func decode(_ bytes: [UInt8], channels: Int, instants: Int, start: Int64) throws(HealthStoreError) -> [Int32] {
        let reader: WaveformReader
        let values: [Int32]
        do {
            reader = try WaveformReader(bytes)
            values = try reader.samples()
        } catch {
            throw .damagedSeries(chunk: start, reason: "a waveform chunk does not decode: \(error)")
        }
        guard reader.channels == channels, reader.count == instants, values.count == instants * channels else {
            throw .damagedSeries(
                chunk: start,
                reason: "a waveform chunk holds \(reader.count) instants of \(reader.channels) channels, its row says \(instants) of \(channels)")
        }
        return values
    }
}

/// Appends one part's segments to a recording's chunks inside a write transaction: it fills
/// the recording's last chunk when a segment continues it, starts new chunks otherwise, and
/// leaves out instants whose times the recording holds already.
struct WaveformChunkWriter {
    /// The recording as stored before this part; nil for a new one.
    let stored: WaveformRecording?
    private var recording: WaveformRecording
    private var rowID: Int64?
    private let channels: Int
    /// One sample period, µs.
    private let period: Double
    /// The recording's last chunk, decoded, while it may grow.
    private var tail: (start: Int64, values: [Int32])?
    private var storedInstants = 0
    private var unchangedInstants = 0
    private var savedSegments: [WaveformSegment] = []
    /// The anchor the recording's row was created with by this part, if it was.
    private var createdAnchor: Int64?

    init(part: WaveformPart, _ db: Database) throws {
        let storedRow = try HealthStore.storedWaveformRow(part.recording.id, db)
        stored = storedRow?.recording
        rowID = storedRow?.rowID
        recording = stored ?? part.recording
        channels = part.recording.type.channels.count
        period = 1e6 / part.recording.frequency
        if stored == nil {
            recording.instantCount = 0
            if let first = part.segments.first(where: { !$0.values.isEmpty }) { (recording.start, recording.end) = (first.start, first.start) }
        } else {
            if let rowID, let last = try Row.fetchOne(
                db, sql: "SELECT start, instants, data FROM waveformChunk WHERE waveformId = ? ORDER BY start DESC LIMIT 1",
                arguments: [rowID]), (last[1] as Int) < HealthStore.chunkInstants
            {
                tail = (last[0], try WaveformChunkCoding.decode(Array(last[2] as Data), channels: channels, instants: last[1], start: last[0]))
            }
        }
    }

    /// The part as stored, for the change it announces; nil when it stored nothing and
    /// changed nothing.
    private(set) var savedPart: WaveformPart?

    private var halfPeriod: Int64 { Int64(period / 2) }

    private func offset(ofInstant index: Int) -> Int64 { Int64((Double(index) * period).rounded()) }

    mutating func append(_ segment: WaveformSegment, _ db: Database) throws {
        var start = segment.start.microsecondsSinceEpoch
        var values = segment.values[...]
        if recording.instantCount > 0 || stored != nil {
            // Instants a whole period (nearly) before the recording's end are stored already;
            // a segment starting less than that before it is a strap whose clock runs a little
            // fast (its stream was cut to follow it): it is kept, in a chunk of its own.
            let end = recording.end.microsecondsSinceEpoch
            let storedBefore = end - Int64(period * 0.9)
            if start < storedBefore {
                let covered = Int((Double(storedBefore - start) / period).rounded(.up))
                let skipped = min(covered, values.count / channels)
                unchangedInstants += skipped
                values = values.dropFirst(skipped * channels)
                start += offset(ofInstant: skipped)
            }
        }
        guard !values.isEmpty else { return }
        savedSegments.append(WaveformSegment(start: Timestamp(microsecondsSinceEpoch: start), values: Array(values)))
        try ensureRow(db)
        var placed = 0
        let instants = values.count / channels
        // A segment that starts where the last chunk ends fills it first.
        if var last = tail {
            let lastCount = last.values.count / channels
            let lastEnd = last.start + offset(ofInstant: lastCount)
            if abs(start - lastEnd) <= halfPeriod {
                let taken = min(instants, HealthStore.chunkInstants - lastCount)
                last.values.append(contentsOf: values.prefix(taken * channels))
                try writeChunk(start: last.start, values: last.values[...], db)
                placed = taken
                tail = last.values.count / channels < HealthStore.chunkInstants ? last : nil
            } else {
                tail = nil
            }
        }
        while placed < instants {
            let count = min(instants - placed, HealthStore.chunkInstants)
            let chunkStart = start + offset(ofInstant: placed)
            let chunk = values.dropFirst(placed * channels).prefix(count * channels)
            try writeChunk(start: chunkStart, values: chunk, db)
            tail = count < HealthStore.chunkInstants ? (chunkStart, Array(chunk)) : nil
            placed += count
        }
        storedInstants += instants
        recording.instantCount += instants
        recording.end = Timestamp(microsecondsSinceEpoch: max(recording.end.microsecondsSinceEpoch, start + offset(ofInstant: instants)))
    }

    /// Writes the recording's row (a new anchor) when the part stored samples or ended it.
    mutating func finish(isOpen: Bool, _ db: Database) throws -> WaveformSaveReport {
        let ended = stored.map { $0.isOpen && !isOpen } ?? false
        if storedInstants > 0 || ended {
            recording.isOpen = isOpen
            try ensureRow(db)
            let anchor = try createdAnchor ?? Self.nextAnchor(db)
            try db.cachedStatement(sql: #"UPDATE waveform SET anchor = ?, "end" = ?, instants = ?, open = ? WHERE id = ?"#)
                .execute(arguments: [
                    anchor, recording.end.microsecondsSinceEpoch, recording.instantCount, recording.isOpen, rowID,
                ])
            savedPart = WaveformPart(recording: recording, segments: savedSegments)
        }
        return WaveformSaveReport(stored: storedInstants, unchanged: unchangedInstants, recording: recording)
    }

    /// Creates the recording's row on its first stored instant.
    private mutating func ensureRow(_ db: Database) throws {
        guard rowID == nil else { return }
        let sourceID = try HealthStore.upsertSource(HealthSource(name: recording.source), db)
        let anchor = try Self.nextAnchor(db)
        createdAnchor = anchor
        try db.execute(
            sql: """
                INSERT INTO waveform (uuid, anchor, typeId, sourceId, device, frequency, start, "end", instants, open)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 1)
                """,
            arguments: [
                recording.id, anchor, recording.type.storageID, sourceID, recording.device, recording.frequency,
                recording.start.microsecondsSinceEpoch, recording.start.microsecondsSinceEpoch,
            ])
        rowID = db.lastInsertedRowID
    }

    /// Takes the next anchor of the store's one sequence.
    private static func nextAnchor(_ db: Database) throws -> Int64 {
        var anchors = try AnchorSequence(db)
        anchors.last += 1
        try anchors.save(db)
        return anchors.last
    }

    private func writeChunk(start: Int64, values: ArraySlice<Int32>, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO waveformChunk (waveformId, start, instants, data) VALUES (?, ?, ?, ?)")
            .execute(arguments: [rowID, start, values.count / channels, Data(WaveformChunkCoding.encode(values, channels: channels))])
    }
}
