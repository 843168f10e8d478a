import HealthModel
import Timestamps

// A person's analyses: the analyses of the application requests, over the samples of the
// straps assigned to the person, each within its assignment. Who wore which strap is a
// manager's to read, so each is a manager's request.

/// A manager reads the time a person spent in each of their own heart-rate zones in [since,
/// until): over the samples of the straps assigned to them, each within its assignment. A
/// `maxHeartRate` above 0 overrides the person's zones with 50…90 % of it.
public struct PersonZones: HealthRequest {
    public static let name = "PersonZones"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .perSeries

    public var person: String
    public var since: Int64
    public var until: Int64
    /// count/min, 100…250; 0: the person's own zones.
    public var maxHeartRate: Double

    public init(person: String, since: Timestamp?, until: Timestamp?, maxHeartRate: Double?) {
        self.person = person
        self.since = WireTime.since(since)
        self.until = WireTime.until(until)
        self.maxHeartRate = maxHeartRate ?? 0
    }

    public struct Response: Codable, Sendable {
        public var zones: [HeartRateZones.Zone]
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let range = try WireTime.checked(since: since, until: until)
        let override = maxHeartRate
        guard override == 0 || (100...250).contains(override) else {
            throw .invalidArguments("maxHeartRate must be 100…250 count/min (or 0 for the person's own zones), not \(override)")
        }
        let name = person
        let year = Person.year()
        let zones = try await context.onStore { store throws(HealthStoreError) -> [HeartRateZones.Zone] in
            let person = try store.person(named: name)
            guard let bounds = override > 0 ? ZoneBounds(maximumHeartRate: override) : person.zoneBounds(in: year) else {
                throw .conflict(
                    "\(name.debugDescription)'s zones need a maximum heart rate, a birth year or bounds (hrmctl person set \(name) --max-hr BPM), or give --max-hr")
            }
            let queries = try store.sampleQueries(of: person, type: .heartRate, since: range.since, until: range.until)
            return try store.heartRateZones(queries, bounds: bounds)?.zones ?? []
        }
        return Response(zones: zones)
    }
}

/// A manager reads statistics per time bucket of one type over a person's samples, as
/// ``Statistics`` gives them over a caller's.
public struct PersonStatistics: HealthRequest {
    public static let name = "PersonStatistics"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .answer(StatisticsBucket.maximumCount, of: "bucket")

    public var person: String
    public var type: String
    /// `1h`, `1d`, … (``StatisticsBucketName``).
    public var bucket: String
    public var since: Int64
    public var until: Int64
    public var options: Statistics.Options

    public init(person: String, type: SampleType, bucket: StatisticsBucketName, since: Timestamp?, until: Timestamp?, timeZone: String?) {
        self.person = person
        self.type = type.identifier
        self.bucket = bucket.rawValue
        self.since = WireTime.since(since)
        self.until = WireTime.until(until)
        self.options = Statistics.Options(timeZone: timeZone)
    }

    public typealias Response = Statistics.Response

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let type = try SampleType.quantityNamed(type)
        let range = try WireTime.checked(since: since, until: until)
        let bucket = try Statistics.bucket(named: bucket, timeZone: options.timeZone)
        let name = person
        let buckets = try await context.onStore { store throws(HealthStoreError) in
            try store.statistics(store.sampleQueries(of: store.person(named: name), type: type, since: range.since, until: range.until), by: bucket)
        }
        return Response(buckets: buckets)
    }
}

/// A manager reads the heart-rate variability of a person's RR intervals, as
/// ``HeartRateVariabilityRequest`` gives it over a caller's.
public struct PersonVariability: HealthRequest {
    public static let name = "PersonVariability"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .perSeries

    public var person: String
    public var since: Int64
    public var until: Int64

    public init(person: String, since: Timestamp?, until: Timestamp?) {
        self.person = person
        self.since = WireTime.since(since)
        self.until = WireTime.until(until)
    }

    public typealias Response = HeartRateVariabilityRequest.Response

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let range = try WireTime.checked(since: since, until: until)
        let name = person
        return Response(variability: try await context.onStore { store throws(HealthStoreError) in
            try store.heartRateVariability(
                store.sampleQueries(of: store.person(named: name), type: .rrInterval, since: range.since, until: range.until))
        })
    }
}

extension RequestStore {
    /// The person named `name`; a name the store does not have is a conflict.
    func person(named name: String) throws(HealthStoreError) -> Person {
        guard let person = try people().first(where: { $0.name == name }) else {
            throw .noPerson(named: name)
        }
        return person
    }

    /// One query of `type` per strap assignment of `person` that meets [since, until),
    /// narrowed to it: the person's samples are what these select.
    func sampleQueries(of person: Person, type: SampleType, since: Timestamp?, until: Timestamp?) throws(HealthStoreError) -> [SampleQuery] {
        try strapAssignments().filter { $0.person == person.name }.compactMap { assignment -> SampleQuery? in
            let start = max(assignment.from, since ?? assignment.from)
            let end = [assignment.until, until].compactMap { $0 }.min()
            if let end, end <= start { return nil }
            return SampleQuery(type: type, since: start, until: end, device: assignment.device)
        }
    }
}
