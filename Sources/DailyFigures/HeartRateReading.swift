/// One heart-rate reading reported by a sensor.
public struct HeartRateReading: Sendable, Hashable {
    /// When the reading was taken, in microseconds since the Unix epoch.
    public var start: Microseconds
    /// The heart rate, in beats per minute.
    public var beatsPerMinute: Double

    /// Creates a reading taken at `start` showing `beatsPerMinute`.
    public init(start: Microseconds, beatsPerMinute: Double) {
        self.start = start
        self.beatsPerMinute = beatsPerMinute
    }
}
