/// Time conversions for PMD timestamps.
///
/// PMD timestamps are nanoseconds since Polar's epoch, 2000-01-01T00:00:00Z, and stamp the
/// LAST sample of each frame.
public enum PMDClock {
    /// Seconds from the Unix epoch (1970-01-01) to Polar's epoch (2000-01-01).
    public static let polarEpochUnixSeconds: Int64 = 946_684_800
    /// The same offset in nanoseconds.
    public static let polarEpochUnixNanoseconds: Int64 = 946_684_800_000_000_000

    /// Converts a Polar-epoch ns timestamp to Unix-epoch ns; nil if it does not fit in Int64
    /// (after year 2262).
    public static func unixNanoseconds(polarNanoseconds: UInt64) -> Int64? {
        guard polarNanoseconds <= UInt64(Int64.max) else { return nil }
        let (sum, overflow) = Int64(polarNanoseconds).addingReportingOverflow(polarEpochUnixNanoseconds)
        return overflow ? nil : sum
    }

    /// Converts a Unix-epoch ns time to Polar-epoch ns; nil before 2000-01-01.
    public static func polarNanoseconds(unixNanoseconds: Int64) -> UInt64? {
        let (diff, overflow) = unixNanoseconds.subtractingReportingOverflow(polarEpochUnixNanoseconds)
        return overflow || diff < 0 ? nil : UInt64(diff)
    }
}

/// Assigns a device time to every sample of consecutive frames of one stream.
///
/// The frame timestamp is the time of its last sample. When the previous frame's timestamp
/// is known and earlier, the samples are spaced by `(t − t_prev) / n` (n = samples in this
/// frame), so sample *i* (0-based) is at `t − (n − 1 − i) × interval` — the first sample
/// lands one interval after the previous frame's last one, and the device's real sample rate
/// is followed. For the first frame (or after a timestamp that did not advance, e.g. a
/// reset) the nominal interval `1 / nominalSampleRate` is used. Times are clamped at 0.
public struct PMDSampleTimer: Equatable, Hashable, Sendable {
    /// Nominal sample rate in Hz used when there is no usable previous frame.
    public var nominalSampleRate: Double
    /// Timestamp of the previous frame's last sample, if any.
    public private(set) var previousFrameTimestamp: UInt64?
    /// The sample interval (ns) used for the most recent frame.
    public private(set) var lastInterval: Double = 0

    /// Creates a timer. A non-positive or non-finite rate gives interval 0 for first frames.
    public init(nominalSampleRate: Double) {
        self.nominalSampleRate = nominalSampleRate
    }

    /// Forgets the previous frame (call when a measurement is restarted).
    public mutating func reset() { previousFrameTimestamp = nil }

    /// Device times (Polar-epoch ns) of the `sampleCount` samples of a frame stamped
    /// `frameTimestamp`, oldest first; the last equals `frameTimestamp`. Records the frame.
    public mutating func sampleTimes(frameTimestamp: UInt64, sampleCount: Int) -> [UInt64] {
        defer { previousFrameTimestamp = frameTimestamp }
        guard sampleCount > 0 else { return [] }
        let interval: Double
        if let previous = previousFrameTimestamp, frameTimestamp > previous {
            interval = Double(frameTimestamp - previous) / Double(sampleCount)
        } else if nominalSampleRate.isFinite && nominalSampleRate > 0 {
            interval = 1_000_000_000 / nominalSampleRate
        } else {
            interval = 0
        }
        lastInterval = interval
        var times: [UInt64] = []
        times.reserveCapacity(sampleCount)
        for i in 0..<sampleCount {
            let back = (interval * Double(sampleCount - 1 - i)).rounded()
            if back >= Double(frameTimestamp) {
                times.append(0)
            } else {
                times.append(frameTimestamp - UInt64(back))
            }
        }
        return times
    }
}

/// Maps device time to host wall-clock time without following transport jitter.
///
/// For each frame, `hostReceiveTime − deviceTime(last sample)` is the clock offset plus the
/// (always positive) BLE/OS delivery delay. The least-delayed frame gives the best estimate,
/// so the mapper keeps the MINIMUM of these observations as the offset. It therefore only
/// ever moves earlier and does not wander with delivery jitter; after the first few frames
/// it is typically within one connection interval of the true offset.
///
/// Limitations: a device clock running slower than the host (offset growing over time) is
/// not followed, and a host clock step is not detected; call ``reset()`` after reconnects
/// or host clock changes.
public struct PMDHostTimeMapper: Equatable, Hashable, Sendable {
    /// Current offset estimate: host Unix ns minus device Unix ns; nil before any frame.
    public private(set) var offset: Int64?
    /// Number of observations used.
    public private(set) var observationCount: Int = 0

    /// Creates an empty mapper.
    public init() {}

    /// Forgets the estimate.
    public mutating func reset() { offset = nil; observationCount = 0 }

    /// Records a frame: `deviceTimestamp` is its header timestamp (Polar-epoch ns of the last
    /// sample), `hostReceiveTime` the host Unix-epoch ns when the notification arrived.
    /// Observations that overflow are ignored.
    public mutating func observe(deviceTimestamp: UInt64, hostReceiveTime: Int64) {
        guard let device = PMDClock.unixNanoseconds(polarNanoseconds: deviceTimestamp) else { return }
        let (candidate, overflow) = hostReceiveTime.subtractingReportingOverflow(device)
        guard !overflow else { return }
        observationCount += 1
        if let current = offset { offset = min(current, candidate) } else { offset = candidate }
    }

    /// Host Unix-epoch ns of a device time (Polar-epoch ns); nil before the first
    /// observation or on overflow.
    public func hostTime(deviceTimestamp: UInt64) -> Int64? {
        guard let offset, let device = PMDClock.unixNanoseconds(polarNanoseconds: deviceTimestamp) else { return nil }
        let (sum, overflow) = device.addingReportingOverflow(offset)
        return overflow ? nil : sum
    }
}

extension PMDClock {
    /// Device times of PPI samples: the last sample is at `frameTimestamp` and each earlier
    /// sample precedes the next by that next sample's interval (as in Polar's SDK). Times are
    /// clamped at 0. A frame timestamp of 0 (device without a clock) gives all zeros.
    public static func ppiSampleTimes(frameTimestamp: UInt64, samples: [PMDPPISample]) -> [UInt64] {
        guard frameTimestamp != 0 else { return Array(repeating: 0, count: samples.count) }
        var times = Array(repeating: UInt64(0), count: samples.count)
        var t = frameTimestamp
        for i in samples.indices.reversed() {
            times[i] = t
            let step = UInt64(samples[i].intervalMs) * 1_000_000
            t = t > step ? t - step : 0
        }
        return times
    }
}
