/// FIT times in Unix seconds. Absolute FIT times count from 1989-12-31T00:00:00Z; times
/// below 0x10000000 count from a device's power-on (its "system time"), and only a
/// `timestamp_correlation` message turns them into absolute ones: the latest one before a
/// record anchors it, and the file's first one anchors the records before it.
///
/// Anchors follow the file front to back, keeping two offsets whatever its length.
struct FITTimeAnchors {
    /// Absolute FIT time − system time, of the file's first correlation (known in advance
    /// from an earlier pass, or once the walk has met it).
    private(set) var first: Int64?
    /// The same, of the latest correlation met.
    private var latest: Int64?

    /// Anchors for a walk that knows the file's first correlation from an earlier pass.
    init(first: Int64? = nil) {
        self.first = first
    }

    /// A `timestamp_correlation`: `absolute` FIT time was system time `system`; it anchors
    /// the records from here on (and those before it, when it is the first).
    mutating func correlate(absolute: UInt32, system: UInt32) {
        guard absolute >= FITDecoder.relativeLimit, system < FITDecoder.relativeLimit else { return }
        let offset = Int64(absolute) - Int64(system)
        latest = offset
        if first == nil { first = offset }
    }

    /// Unix seconds of a record met now with time `timestamp`: directly when it is absolute,
    /// through the correlation in force when it is device-relative, nil when none is known
    /// (yet: a later first correlation anchors it, see `unixSeconds(of:offset:)`).
    func unixSeconds(of timestamp: UInt32) -> Int64? {
        Self.unixSeconds(of: timestamp, offset: latest ?? first)
    }

    /// Unix seconds of FIT time `timestamp`, a device-relative one anchored by `offset`.
    static func unixSeconds(of timestamp: UInt32, offset: Int64?) -> Int64? {
        if let absolute = FITDecoder.unixSeconds(fromFIT: timestamp) { return absolute }
        return offset.map { Int64(timestamp) + $0 + FITDecoder.epochOffset }
    }
}
