import Foundation
import HealthModel
import Timestamps

/// Statistics per time bucket of one type, non-empty buckets oldest first, in the type's
/// canonical unit (HKStatisticsCollectionQuery), over what the caller may read.
public struct Statistics: HealthRequest {
    public static let name = "Statistics"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .answer(StatisticsBucket.maximumCount, of: "bucket")

    public var app: String
    public var type: String
    /// `1h`, `1d`, … (``StatisticsBucketName``).
    public var bucket: String
    public var since: Int64
    public var until: Int64
    public var options: Options

    public struct Options: Codable, Sendable, Hashable {
        /// The IANA time zone that places `1d` buckets (UTC when absent).
        public var timeZone: String?

        public init(timeZone: String? = nil) { self.timeZone = timeZone }
    }

    public init(app: String, type: SampleType, bucket: StatisticsBucketName, since: Timestamp?, until: Timestamp?, timeZone: String?) {
        self.app = app
        self.type = type.identifier
        self.bucket = bucket.rawValue
        self.since = WireTime.since(since)
        self.until = WireTime.until(until)
        self.options = Options(timeZone: timeZone)
    }

    public struct Response: Codable, Sendable {
        public var buckets: [StatisticsBucketValue]
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let type = try SampleType.quantityNamed(type)
        let range = try WireTime.checked(since: since, until: until)
        let bucket = try Self.bucket(named: bucket, timeZone: options.timeZone)
        let reader = try await context.view(of: source).reader
        let buckets = try await context.onStore { store throws(HealthStoreError) in
            try store.statistics(of: type, by: bucket, since: range.since, until: range.until, source: nil, reader: reader)
        }
        return Response(buckets: buckets)
    }

    /// The bucket a request names (`1h`, `1d`, …), its days in the IANA zone `timeZone`
    /// (UTC when nil).
    static func bucket(named bucket: String, timeZone zoneName: String?) throws(RequestFailure) -> StatisticsBucket {
        let name: StatisticsBucketName
        do { name = try StatisticsBucketName.parse(bucket) } catch { throw error.failure }
        var timeZone = TimeZone(identifier: "UTC")!
        if let zoneName {
            guard let named = TimeZone(identifier: zoneName) else { throw .invalidArguments("unknown time zone \(zoneName.quoted)") }
            timeZone = named
        }
        return name.bucket(timeZone: timeZone)
    }
}
