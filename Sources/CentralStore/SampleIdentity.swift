import HealthModel

/// What makes two samples from different gateways the same sample (docs/central-store.md,
/// identity):
///
/// - A device is its local identifier (a BLE address, `ant:NUMBER`, a serial sensor's name),
///   whichever gateway heard it: a strap that moves from room to room is one device series.
/// - A sample with a sync identifier is that source's sample under that identifier; the highest
///   version is the one shown (HealthKit's sync identifier and version).
/// - A sample made from an ANT+ beat is that device's beat: the beat count and beat event
///   time of the page, heard by any receiver, within `beatWindow` of each other (the count
///   wraps every 256 beats and the time every 64 s, so the pair repeats only minutes apart).
/// - Any other sample is its type, device (or, without one, its source) and start to the
///   microsecond: no sensor gives two readings of one type at one instant, and a recording
///   replayed anywhere keeps its times.
///
/// A gateway's own samples are never compared with each other here: its local store has
/// already kept each once, and the cursor sends each once.
public struct SampleIdentity: Sendable {
    /// How far apart two gateways' receptions of one ANT+ beat may be: clock skew between
    /// gateways plus the reception delay (a beat is broadcast about four times over 1 s).
    public static let beatWindow: Int64 = 5_000_000

    /// Where samples are placed: the device's central id, or the source's negated when there
    /// is no device.
    public struct Series: Hashable, Sendable {
        public var device: Int32?
        public var source: Int32

        public init(device: Int32?, source: Int32) {
            self.device = device
            self.source = source
        }
    }

    private var starts: [Series: Set<Int64>] = [:]
    private var beats: [Series: [Int32: [Int64]]] = [:]

    public init() {}

    /// Remembers a sample another gateway stored.
    public mutating func add(series: Series, start: Int64, beat: Int32?) {
        if let beat {
            beats[series, default: [:]][beat, default: []].append(start)
        } else {
            starts[series, default: []].insert(start)
        }
    }

    /// Whether a sample at `start` (with this ANT+ beat stamp, if any) is one already stored.
    public func contains(series: Series, start: Int64, beat: Int32?) -> Bool {
        if let beat {
            guard let heard = beats[series]?[beat] else { return false }
            return heard.contains { abs($0 - start) <= Self.beatWindow }
        }
        return starts[series]?.contains(start) ?? false
    }

    public var isEmpty: Bool { starts.isEmpty && beats.isEmpty }
}
