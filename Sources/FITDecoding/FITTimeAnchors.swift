/// FIT times in Unix seconds. Absolute FIT times count from 1989-12-31T00:00:00Z; times
/// below 0x10000000 count from a device's power-on (its "system time"), and only a
/// `timestamp_correlation` message turns them into absolute ones.
struct FITTimeAnchors {
    /// The correlations seen so far: from the record `firstRecord` on, absolute FIT time =
    /// system time + `offset` (until the next correlation).
    private var correlations: [(firstRecord: Int, offset: Int64)] = []

    /// A `timestamp_correlation`: `absolute` FIT time was system time `system`; it applies
    /// from record `recordIndex` on (and to the records before it, when it is the first).
    mutating func correlate(absolute: UInt32, system: UInt32, fromRecord recordIndex: Int) {
        guard absolute >= FITDecoder.relativeLimit, system < FITDecoder.relativeLimit else { return }
        correlations.append((recordIndex, Int64(absolute) - Int64(system)))
    }

    /// Unix seconds of record `recordIndex`'s time `timestamp`: directly when it is
    /// absolute, through the correlation in force when it is device-relative, nil when the
    /// file gives none.
    func unixSeconds(of timestamp: UInt32, record recordIndex: Int) -> Int64? {
        if let absolute = FITDecoder.unixSeconds(fromFIT: timestamp) { return absolute }
        guard let first = correlations.first else { return nil }
        let inForce = correlations.last { $0.firstRecord <= recordIndex } ?? first
        return Int64(timestamp) + inForce.offset + FITDecoder.epochOffset
    }
}
