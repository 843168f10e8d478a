/// How far the heart rate falls in the first minute after a workout ends.
///
/// For a workout ending at `end`, the figure is computed as follows.
///
/// 1. **At end.** The mean beats per minute of the readings whose `start`
///    lies in `[end − 10 s, end]`, both bounds included.
/// 2. **After one minute.** The mean beats per minute of the readings whose
///    `start` lies in `[end + 55 s, end + 65 s]`, both bounds included.
/// 3. **Figure.** `atEnd − afterOneMinute`, in beats per minute. It is
///    reported as is, so it may be zero or negative.
///
/// Each of the two means needs at least 2 readings; when either has fewer
/// (the strap did not keep recording) there is no figure.
public struct HeartRateRecovery: Sendable, Hashable {
    /// The fall in heart rate, `atEndBeatsPerMinute − afterOneMinuteBeatsPerMinute`,
    /// in beats per minute. Negative when the heart rate rose.
    public var dropBeatsPerMinute: Double
    /// Mean beats per minute of the readings starting in `[end − 10 s, end]`.
    public var atEndBeatsPerMinute: Double
    /// Mean beats per minute of the readings starting in `[end + 55 s, end + 65 s]`.
    public var afterOneMinuteBeatsPerMinute: Double

    /// Creates a recovery figure from the two means; the drop is their difference.
    public init(atEndBeatsPerMinute: Double, afterOneMinuteBeatsPerMinute: Double) {
        self.dropBeatsPerMinute = atEndBeatsPerMinute - afterOneMinuteBeatsPerMinute
        self.atEndBeatsPerMinute = atEndBeatsPerMinute
        self.afterOneMinuteBeatsPerMinute = afterOneMinuteBeatsPerMinute
    }

    /// Offsets from the workout's end, both included, of the readings
    /// averaged at the end: `−10 s ... 0 s`.
    public static let atEndOffsets: ClosedRange<Microseconds> = (-10 * Span.second)...0
    /// Offsets from the workout's end, both included, of the readings
    /// averaged one minute later: `55 s ... 65 s`.
    public static let afterOneMinuteOffsets: ClosedRange<Microseconds> = (55 * Span.second)...(65 * Span.second)
    /// Readings each mean needs: 2.
    public static let minimumReadingsPerMean = 2

    /// Computes the one-minute heart-rate recovery of a workout ending at
    /// `workoutEnd`, by the method described on ``HeartRateRecovery``.
    ///
    /// - Parameters:
    ///   - workoutEnd: The instant the workout ended.
    ///   - readings: Heart-rate readings around the end of the workout;
    ///     readings outside the two spans are ignored.
    /// - Returns: The figure, or `nil` when either span holds fewer than 2 readings.
    public static func oneMinute(workoutEnd: Microseconds, readings: [HeartRateReading]) -> HeartRateRecovery? {
        let atEndSpan = clampedSum(workoutEnd, atEndOffsets.lowerBound)...clampedSum(workoutEnd, atEndOffsets.upperBound)
        let afterSpan = clampedSum(workoutEnd, afterOneMinuteOffsets.lowerBound)...clampedSum(workoutEnd, afterOneMinuteOffsets.upperBound)
        var atEnd = RunningMean()
        var afterOneMinute = RunningMean()
        for reading in readings {
            if atEndSpan.contains(reading.start) {
                atEnd.add(reading.beatsPerMinute)
            } else if afterSpan.contains(reading.start) {
                afterOneMinute.add(reading.beatsPerMinute)
            }
        }
        guard atEnd.count >= minimumReadingsPerMean,
              afterOneMinute.count >= minimumReadingsPerMean,
              let atEndMean = atEnd.mean,
              let afterMean = afterOneMinute.mean
        else { return nil }
        return HeartRateRecovery(atEndBeatsPerMinute: atEndMean, afterOneMinuteBeatsPerMinute: afterMean)
    }
}
