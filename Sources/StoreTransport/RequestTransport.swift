import CommandSupport
import Foundation
import HealthModel
import HealthRequests
import Timestamps

/// How hrmctl reaches a store: it sends the store's requests (``HealthRequests``, the same ones
/// every front serves) and streams samples and changes. Three transports: a file opened
/// directly (`--store PATH`, `HRMD_STORE`), served in this process as its owner; the store
/// service on the system bus; the central PostgreSQL store (read-only). A subcommand has one
/// code path over this, so its output is the same whichever store it reads. Every failure is
/// a one-line `CommandFailure` with the documented exit status.
public protocol RequestTransport: Sendable {
    /// Sends `request` and returns its answer, refused or served as the store's front would
    /// for hrmctl.
    func send<Request: HealthRequest>(_ request: Request) async throws(CommandFailure) -> Request.Response

    /// Calls `body` with each sample of `query`, in order, without holding them all.
    func enumerateSamples(_ query: SampleQuery, _ body: (StoredSample) -> Void) async throws(CommandFailure)
    /// The same samples as points with their contexts, for readers that print many.
    func enumeratePoints(_ query: SampleQuery, _ body: (StoredPoint, SampleContexts) -> Void) async throws(CommandFailure)
    /// Calls `body` with each change of `type` after now, until `deadline` (nil: until the
    /// process ends) or until the calling task is cancelled, which ends it as the deadline
    /// does. A file is polled every `pollInterval` seconds; the service signals; the central
    /// store notifies.
    func followChanges(
        of type: SampleType, pollInterval: Double, until deadline: ContinuousClock.Instant?, _ body: (ChangeSet) -> Void
    ) async throws(CommandFailure)
    /// Calls `body` with the events of `types` (event types) that open or end from now on
    /// (``EventFollower``), until `deadline` or until the calling task is cancelled; `ready`
    /// once the events as they are now were read (what changes after it is told). The
    /// service signals; otherwise the store is read every `pollInterval` seconds.
    func followEvents(
        of types: [SampleType], pollInterval: Double, until deadline: ContinuousClock.Instant?, ready: () -> Void,
        _ body: ([HealthEvent]) -> Void
    ) async throws(CommandFailure)
    /// Whether samples come from gateways (the central store): outputs then add a gateway
    /// column; a local store's outputs stay as they were.
    var showsGateways: Bool { get }
}

extension RequestTransport {
    /// The application name hrmctl's requests carry.
    public static var app: String { "hrmctl" }

    public var showsGateways: Bool { false }

    /// Reads the events (`Events`) every `pollInterval` seconds.
    public func followEvents(
        of types: [SampleType], pollInterval: Double, until deadline: ContinuousClock.Instant?, ready: () -> Void,
        _ body: ([HealthEvent]) -> Void
    ) async throws(CommandFailure) {
        var follower = EventFollower(types: types)
        let request = follower.request(app: Self.app)
        follower.prime(try await send(request).events)
        ready()
        while !Task.isCancelled {
            var wait = Duration.seconds(pollInterval)
            if let deadline {
                let left = deadline - .now
                if left <= .zero { return }
                wait = min(wait, left)
            }
            do { try await Task.sleep(for: wait) } catch { return }
            let news = follower.news(in: try await send(request).events)
            if !news.isEmpty { body(news) }
        }
    }

    /// Points made from `enumerateSamples`, each context numbered once.
    public func enumeratePoints(_ query: SampleQuery, _ body: (StoredPoint, SampleContexts) -> Void) async throws(CommandFailure) {
        var contexts = SampleContexts()
        try await enumerateSamples(query) { stored in
            let point = contexts.point(of: stored)
            body(point, contexts)
        }
    }

    /// The samples of `query`, in memory (for what needs them all, such as a plot).
    public func samples(_ query: SampleQuery) async throws(CommandFailure) -> [StoredSample] {
        var result: [StoredSample] = []
        try await enumerateSamples(query) { result.append($0) }
        return result
    }

    /// How many samples `query` matches.
    public func count(_ query: SampleQuery) async throws(CommandFailure) -> Int {
        var count = 0
        try await enumerateSamples(query) { _ in count += 1 }
        return count
    }
}

/// What hrmctl's subcommands ask, each one request of the catalogue in the shape the command
/// prints.
extension RequestTransport {
    /// Every source's answers, one row per (source, type), ordered by source then type.
    public func authorizations() async throws(CommandFailure) -> [AuthorizationEntry] {
        AuthorizationOrder.rows(from: try await send(Authorizations()).entries)
    }

    /// The requests nobody has answered yet, in the same order.
    public func pendingRequests() async throws(CommandFailure) -> [AuthorizationRequest] {
        AuthorizationRequest.pending(in: try await send(Authorizations()).entries)
    }

    /// Records the user's answer for `source` and `type`.
    public func setAuthorization(_ status: AuthorizationStatus, source: String, type: SampleType, access: AuthorizationAccess)
        async throws(CommandFailure)
    {
        _ = try await send(SetAuthorization(status, source: source, type: type, access: access))
    }

    /// Makes a bearer token for the HTTP front acting as `source`, expiring in `lifetime`
    /// seconds (nil: never).
    public func issueAccessToken(source: String, manager: Bool, lifetime: Int64?) async throws(CommandFailure) -> IssuedAccessToken {
        let made = try await send(CreateAccessToken(source: source, manager: manager, expiresIn: lifetime))
        let record = AccessTokenRecord(
            id: made.id, source: source, manager: manager, created: .now(),
            expires: made.expires == 0 ? nil : Timestamp(microsecondsSinceEpoch: made.expires), revoked: nil)
        return IssuedAccessToken(record: record, token: made.token)
    }

    /// Every access token, oldest first.
    public func accessTokens() async throws(CommandFailure) -> [AccessTokenRecord] {
        try await send(AccessTokens()).tokens
    }

    /// Revokes the token with this id or every token of this source; how many.
    public func revokeAccessTokens(matching idOrSource: String) async throws(CommandFailure) -> Int {
        Int(try await send(RevokeAccessTokens(idOrSource: idOrSource)).revoked)
    }

    /// Statistics per bucket (1d buckets are days of the local time zone), canonical unit.
    public func statistics(of type: SampleType, by bucket: StatisticsBucketName, since: Timestamp?, until: Timestamp?)
        async throws(CommandFailure) -> [StatisticsBucketValue]
    {
        let request = Statistics(
            app: Self.app, type: type, bucket: bucket, since: since, until: until, timeZone: TimeZone.current.identifier)
        return try await send(request).buckets
    }

    /// Heart-rate variability of the RR intervals in the range; nil without beats.
    public func heartRateVariability(since: Timestamp?, until: Timestamp?) async throws(CommandFailure) -> HeartRateVariability? {
        try await send(HeartRateVariabilityRequest(app: Self.app, since: since, until: until)).variability
    }

    /// Time in heart-rate zones over the range; empty without samples.
    public func heartRateZones(since: Timestamp?, until: Timestamp?, maximumHeartRate: Double) async throws(CommandFailure)
        -> [HeartRateZones.Zone]
    {
        try await send(HeartRateZonesRequest(app: Self.app, since: since, until: until, maxHeartRate: maximumHeartRate)).zones
    }

    /// Every device, and what the daemon says of each sensor now.
    public func devices() async throws(CommandFailure) -> (devices: [DeviceSummary], activity: [SensorActivity]) {
        let answer = try await send(Devices())
        return (answer.devices, answer.activity)
    }

    /// Every source that wrote samples.
    public func sources() async throws(CommandFailure) -> [SourceSummary] {
        try await send(Sources()).sources
    }

    /// Deletes `source`'s samples of `type` in the range, leaving tombstones; returns how many.
    public func deleteSamples(of type: SampleType, source: String, since: Timestamp?, until: Timestamp?) async throws(CommandFailure) -> Int {
        Int(try await send(DeleteSamples(app: Self.app, type: type, source: source, since: since, until: until)).deleted)
    }

    /// Whose samples are whose, for outputs that name the person; nil where people are not
    /// this caller's to read (an application that is not a manager of the store service) or
    /// the store keeps none (the central store).
    public func personLookup() async throws(CommandFailure) -> PersonLookup? {
        try await peopleOfSamples()?.lookup
    }

    /// Whose samples are whose and the people who wore a strap, for exports that name them
    /// (FHIR's Patients); nil where people are not this caller's to read.
    public func peopleOfSamples() async throws(CommandFailure) -> PeopleOfSamples? {
        do {
            let answer = try await send(People())
            let wearing = Set(answer.assignments.map(\.person))
            return PeopleOfSamples(lookup: PersonLookup(answer.assignments), wearers: answer.people.filter { wearing.contains($0.name) })
        } catch {
            if error.status == .permissionDenied || error.status == .usage { return nil }
            throw error
        }
    }
}

/// The people who wore straps, and which sample is whose.
public struct PeopleOfSamples: Sendable {
    public var lookup: PersonLookup
    /// Everyone with a strap assignment, by name.
    public var wearers: [Person]
}
