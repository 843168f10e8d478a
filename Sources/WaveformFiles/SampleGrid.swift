/// A strip laid on one series of evenly spaced instants from its first instant to its last,
/// for the formats that hold one continuous series with gaps marked in it (WFDB, FHIR's
/// SampledData): each segment starts at the grid instant nearest its start, and the instants
/// between segments are gaps.
///
/// A segment whose start falls between two grid instants is moved to the nearer one, so its
/// times in such a file are off by at most half a sample period; a segment that would land on
/// its predecessor's last instant (it starts less than half a period after it) goes to the next
/// instant instead, off by less than a period.
struct SampleGrid: Sendable {
    /// Where each segment's first instant lies in the series.
    let segmentStarts: [Int]
    /// The number of instants in the series, gaps included.
    let instantCount: Int

    /// The most instants a series may have, gaps included.
    static let instantLimit = Int(Int32.max)

    init(_ strip: WaveformStrip) throws(WaveformFileError) {
        let origin = strip.firstInstantNanoseconds
        var starts: [Int] = []
        starts.reserveCapacity(strip.segments.count)
        var end = 0
        for segment in strip.segments {
            // The strip's span fits in Int64 nanoseconds (checked when it was made).
            let since = segment.startNanoseconds &- origin
            // At most 2⁶³ ns × 10⁶ Hz: about 9.2 × 10¹⁵, an Int.
            let nearest = (Double(since) * strip.frequency / 1e9).rounded()
            guard nearest < Double(Self.instantLimit) else { throw .seriesTooLong(instants: Int(nearest), limit: Self.instantLimit) }
            let start = max(end, Int(nearest))
            starts.append(start)
            end = start + strip.instantCount(of: segment)
            guard end <= Self.instantLimit else { throw .seriesTooLong(instants: end, limit: Self.instantLimit) }
        }
        segmentStarts = starts
        instantCount = end
    }

    /// Calls `body` with each instant of the series in order: its samples (one per channel) or
    /// nil in a gap.
    func forEachInstant(of strip: WaveformStrip, _ body: (ArraySlice<Int32>?) -> Void) {
        let channels = strip.channelCount
        var next = 0
        for (segment, start) in zip(strip.segments, segmentStarts) {
            while next < start {
                body(nil)
                next += 1
            }
            var index = 0
            while index < segment.samples.count {
                body(segment.samples[index..<index + channels])
                index += channels
            }
            next += strip.instantCount(of: segment)
        }
    }
}
