import Timestamps

/// A device that wrote samples, with what it wrote.
public struct DeviceSummary: Codable, Sendable, Hashable {
    public var device: HealthDevice
    public var sampleCount: Int
    public var lastSeen: Timestamp?
    /// The location of its most recent sample, when it had one.
    public var lastLocation: HeartRateSensorLocation?

    public init(device: HealthDevice, sampleCount: Int, lastSeen: Timestamp?, lastLocation: HeartRateSensorLocation?) {
        self.device = device
        self.sampleCount = sampleCount
        self.lastSeen = lastSeen
        self.lastLocation = lastLocation
    }
}

/// A source that wrote samples, with what it wrote.
public struct SourceSummary: Codable, Sendable, Hashable {
    public var source: HealthSource
    public var sampleCount: Int
    public var lastSample: Timestamp?

    public init(source: HealthSource, sampleCount: Int, lastSample: Timestamp?) {
        self.source = source
        self.sampleCount = sampleCount
        self.lastSample = lastSample
    }
}
