import SDBus

/// What an Import did: the counters `hrmctl replay` prints, and whether hrmd may share
/// heart rate (without it nothing is stored).
public struct ImportSummary: Sendable, Hashable {
    public var frames = 0
    public var stored = 0
    public var unchanged = 0
    public var denied = 0
    public var lost = 0
    public var badLines = 0
    /// Frames (or parts) skipped, by reason.
    public var skipped: [String: Int] = [:]
    public var hrmdMayShare = false

    public init() {}

    public var wireValue: DBusValue {
        WireDictionary.value([
            ("frames", .uint32(UInt32(clamping: frames))), ("stored", .uint32(UInt32(clamping: stored))),
            ("unchanged", .uint32(UInt32(clamping: unchanged))), ("denied", .uint32(UInt32(clamping: denied))),
            ("lost", .uint32(UInt32(clamping: lost))), ("badLines", .uint32(UInt32(clamping: badLines))),
            ("skipped", .dictionary(key: "s", value: "u", skipped.sorted { $0.key < $1.key }.map {
                DBusDictionaryEntry(.string($0.key), .uint32(UInt32(clamping: $0.value)))
            })),
            ("hrmdMayShare", .bool(hrmdMayShare)),
        ])
    }

    public init(wire value: DBusValue) throws(WireError) {
        let entries = try WireDictionary(value, context: "import summary")
        frames = Int(try entries.integer("frames") ?? 0)
        stored = Int(try entries.integer("stored") ?? 0)
        unchanged = Int(try entries.integer("unchanged") ?? 0)
        denied = Int(try entries.integer("denied") ?? 0)
        lost = Int(try entries.integer("lost") ?? 0)
        badLines = Int(try entries.integer("badLines") ?? 0)
        hrmdMayShare = try entries.bool("hrmdMayShare") ?? false
        if let skips = entries.entries["skipped"]?.stringKeyed {
            for (reason, count) in skips { skipped[reason] = Int(count.integer ?? 0) }
        }
    }
}
