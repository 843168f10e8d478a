/// What an ANT+ heart-rate page says about the beat it reports: the strap's beat count and
/// the beat's event time, as the strap broadcast them.
///
/// An ANT+ strap broadcasts, so every receiver in range hears the same pages: the stamp,
/// together with the device and a time window of a few seconds (the count wraps every 256
/// beats, the event time every 64 s), identifies one beat whichever gateway recorded it,
/// although receive times differ by a few hundred milliseconds. A central store uses it to
/// keep one copy of a beat that two gateways stored. It identifies the beat, not a sample:
/// the heart-rate sample and the RR intervals made from one page carry the same stamp.
public struct ANTBeatStamp: Codable, Sendable, Hashable {
    /// The strap's beat count (byte 6 of the page), wrapping at 256.
    public var count: UInt8
    /// The beat's event time (bytes 4–5), in 1/1024 s, wrapping every 64 s.
    public var eventTime: UInt16

    public init(count: UInt8, eventTime: UInt16) {
        self.count = count
        self.eventTime = eventTime
    }

    /// Both in one integer, `count << 16 | eventTime` (how the store keeps it).
    public var packed: Int32 { Int32(count) << 16 | Int32(eventTime) }

    /// The stamp `packed` holds: the count from bits 16–23, the event time from bits 0–15.
    public init(packed: Int32) {
        self.count = UInt8(truncatingIfNeeded: packed >> 16)
        self.eventTime = UInt16(truncatingIfNeeded: packed)
    }
}
