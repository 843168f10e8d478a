import ByteSources

/// Decodes FIT activity files into their heart-rate content: header and CRCs, definition
/// and data messages in both byte orders, compressed-timestamp headers, developer fields
/// skipped, chained files read one after the other.
///
/// `decodeActivity` gives a file's content whole; `FITHeartRateSummary` and
/// `FITHeartRateRecords`/`FITRRIntervals` stream a file of any size in bounded memory.
public enum FITDecoder {
    /// FIT time 0 in Unix seconds: 1989-12-31T00:00:00Z.
    public static let epochOffset: Int64 = 631_065_600
    /// FIT times below this are device-relative (seconds since the device's power-on).
    public static let relativeLimit: UInt32 = 0x1000_0000

    /// Unix seconds of an absolute FIT time; nil for a device-relative one (below 0x10000000).
    public static func unixSeconds(fromFIT time: UInt32) -> Int64? {
        time >= relativeLimit ? Int64(time) + epochOffset : nil
    }

    /// Decodes a whole file. Strict: throws on any damage (bad header, CRC mismatch,
    /// truncation, undefined local message, malformed definition, trailing bytes).
    public static func decodeActivity(_ bytes: [UInt8]) throws(FITError) -> FITActivity {
        let activity = try decodeActivityPartially(bytes)
        if let damage = activity.damage { throw damage }
        return activity
    }

    /// Lenient: throws only when the bytes do not start with a valid FIT header; for damage
    /// after it, returns what was read before the damage with `damage` set. Every complete
    /// message before the damage counts; for a file CRC mismatch (found at the end) that is
    /// every message, though the file's bytes are suspect.
    public static func decodeActivityPartially(_ bytes: [UInt8]) throws(FITError) -> FITActivity {
        var walk = try FITMessageWalk(ByteSource(bytes))
        var collector = FITActivityCollector()
        while let message = walk.next() { collector.add(message) }
        return collector.finish(damage: walk.damage)
    }
}
