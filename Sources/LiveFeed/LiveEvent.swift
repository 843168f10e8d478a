import HealthModel

/// One thing a live reader receives, in the order the store committed it.
public enum LiveEvent: Sendable {
    /// A new sample the reader may read.
    case sample(LiveSample)
    /// A sensor's state changed (connected, searching, battery, …).
    case state(SensorActivity)
    /// The reader fell behind: `missed` events were dropped, and it continues from the newest.
    case gap(missed: Int)
    /// Nothing happened for a while: fronts send a keep-alive, so a reader that vanished
    /// without a word is noticed.
    case keepalive
    /// The feed ended this reader (its permission was withdrawn, or hrmd stops): one line why.
    case ended(reason: String)
}

/// A stored sample on its way to live readers, rendered once for all of them.
public final class LiveSample: Sendable {
    public let stored: StoredSample
    /// What the feed's renderer made of it (the HTTP front's JSON), shared by every reader.
    public let rendered: [UInt8]

    public init(stored: StoredSample, rendered: [UInt8]) {
        self.stored = stored
        self.rendered = rendered
    }

    /// The identifier of the device that measured it, when known.
    public var device: String? { stored.sample.device?.localIdentifier }
}

/// Who reads a live feed, as the front verified it: a source, and whether it is a manager
/// (who sees every source's samples).
public struct LiveReader: Sendable, Hashable {
    public var source: String
    public var isManager: Bool
    /// The types it follows.
    public var types: Set<SampleType>

    public init(source: String, isManager: Bool, types: Set<SampleType>) {
        self.source = source
        self.isManager = isManager
        self.types = types
    }
}
