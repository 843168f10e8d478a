import Foundation
import Timestamps

/// How `statistics` groups samples in time.
public enum StatisticsBucket: Sendable, Hashable {
    /// Fixed buckets of this many seconds, aligned to the Unix epoch (1m, 5m, 1h).
    case seconds(Int64)
    /// Calendar days in this time zone, as HKStatisticsCollectionQuery uses the calendar: a
    /// day starts at local midnight, and lasts 23 or 25 hours where the zone changes its
    /// offset.
    case days(TimeZone)

    /// Calendar days in the process's time zone (TZ).
    public static var localDays: StatisticsBucket { .days(.current) }

    /// Non-empty buckets one statistics request answers at most, in every store: past it the
    /// request is refused (ask for a shorter range or wider buckets), so that neither the
    /// answer nor the totals behind it grow with the range. 100,000 is 69 days of minutes,
    /// 11 years of hours.
    public static let maximumCount = 100_000

    /// The one line a request past ``maximumCount`` is refused with.
    public static var tooManyBuckets: String {
        "statistics answer at most \(maximumCount) buckets, and the range holds more: ask for a shorter range or wider buckets"
    }
}

/// The statistics of one bucket, in the type's canonical unit.
public struct StatisticsBucketValue: Codable, Sendable, Hashable {
    public var start: Timestamp
    public var end: Timestamp
    public var count: Int
    public var minimum: Double
    public var average: Double
    public var maximum: Double
    public var sum: Double

    public init(start: Timestamp, end: Timestamp, count: Int, minimum: Double, average: Double, maximum: Double, sum: Double) {
        self.start = start
        self.end = end
        self.count = count
        self.minimum = minimum
        self.average = average
        self.maximum = maximum
        self.sum = sum
    }
}
