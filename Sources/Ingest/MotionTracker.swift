import HealthModel
import SensorFrames
import Timestamps

/// HealthKit's heart-rate motion context (`HKHeartRateMotionContext`), from the wearer's own
/// strap: whether they were still or moving when a heart rate was measured.
public enum MotionContext: String, Sendable, Hashable {
    case sedentary
    case active

    /// The metadata key heart-rate samples carry it under.
    public static let metadataKey = "motionContext"
}

/// Works out the motion context of a strap's heart-rate samples from the acceleration the same
/// strap streams. Pure: the samples' own times, no clock.
///
/// **The rule.** Over the window of ``windowSeconds`` that ends ``leadSeconds`` before a
/// heart-rate sample, take the acceleration vectors (x, y, z, mG) and their deviation about
/// their mean: the root of the summed variances of the three axes. Below ``activeThreshold`` the
/// wearer was sedentary, at or above it active. Gravity is the same in every instant, so it adds
/// nothing whichever way the strap is turned; what is left is the wearer's own movement:
/// breathing moves a chest strap by a few mG, walking by a few hundred. A sample gets no
/// context unless acceleration covers at least ``coverageSeconds`` of the window. The window
/// ends before the sample so that the acceleration it needs has arrived whenever the sample is
/// taken (a strap's acceleration frames come up to a second after their samples): live and
/// replayed, the same samples get the same context.
struct MotionTracker {
    static let windowSeconds = 10.0
    static let leadSeconds = 2.0
    static let coverageSeconds = 5.0
    /// mG of deviation of the acceleration vector.
    static let activeThreshold = 50.0

    /// What one strap's acceleration left: each instant's time (µs) and axes, oldest first, as
    /// far back as a window needs.
    private var instants: [SensorID: [(time: Int64, x: Double, y: Double, z: Double)]] = [:]
    /// Each strap's acceleration rate, for the coverage.
    private var frequencies: [SensorID: Double] = [:]

    /// Takes a segment of a strap's acceleration (x, y, z interleaved, mG).
    mutating func add(_ segment: WaveformSegment, frequency: Double, of device: SensorID) {
        var kept = instants[device] ?? []
        for instant in 0..<segment.instantCount(channels: 3) {
            let time = segment.time(ofInstant: instant, frequency: frequency).microsecondsSinceEpoch
            if let last = kept.last, time <= last.time { continue }
            kept.append((time, Double(segment.values[3 * instant]), Double(segment.values[3 * instant + 1]),
                         Double(segment.values[3 * instant + 2])))
        }
        // Keep what a sample up to a minute later could still ask for.
        let horizon = (kept.last?.time ?? 0) - Int64((Self.windowSeconds + Self.leadSeconds + 60) * 1e6)
        if let firstKept = kept.firstIndex(where: { $0.time >= horizon }), firstKept > 0 { kept.removeFirst(firstKept) }
        instants[device] = kept
        frequencies[device] = frequency
    }

    /// Forgets a strap's acceleration (its stream ended).
    mutating func forget(_ device: SensorID) {
        instants[device] = nil
        frequencies[device] = nil
    }

    /// The context of a heart-rate sample of `device` at `time`; nil when its acceleration does
    /// not cover the window.
    func context(of device: SensorID, at time: Timestamp) -> MotionContext? {
        guard let kept = instants[device], let frequency = frequencies[device] else { return nil }
        let end = time.microsecondsSinceEpoch - Int64(Self.leadSeconds * 1e6)
        let start = end - Int64(Self.windowSeconds * 1e6)
        guard let first = kept.firstIndex(where: { $0.time >= start }) else { return nil }
        let window = kept[first...].prefix { $0.time < end }
        let count = Double(window.count)
        guard count / frequency >= Self.coverageSeconds, count > 1 else { return nil }
        func variance(_ axis: KeyPath<(time: Int64, x: Double, y: Double, z: Double), Double>) -> Double {
            let mean = window.reduce(0) { $0 + $1[keyPath: axis] } / count
            return window.reduce(0) { $0 + ($1[keyPath: axis] - mean) * ($1[keyPath: axis] - mean) } / (count - 1)
        }
        let deviation = (variance(\.x) + variance(\.y) + variance(\.z)).squareRoot()
        return deviation < Self.activeThreshold ? .sedentary : .active
    }
}
