import CentralStore
import HealthModel
import HealthRequests
import Timestamps

/// The central store as the requests' store: what a central reader answers (samples,
/// statistics, heart-rate variability and zones, devices, sources), as the owner sees it.
/// Gateways alone write the central store, and each keeps its own authorizations, tokens and
/// anchors: every request for those is refused with ``readOnlyLine``. Used by one task at a
/// time (hrmctl's), as its reader requires.
struct CentralRequestStore: RequestStore, @unchecked Sendable {
    let reader: CentralReader

    /// What a write, or a read of what only a gateway keeps, says.
    static let readOnlyLine =
        "the central store is read-only from hrmctl: gateways write it (hrmd's [sync]); manage authorization, tokens and deletions on each gateway's store"

    /// The central store's error as the requests' store error, by what the caller makes of it.
    static func engineFailure(_ error: CentralStoreError) -> EngineFailure {
        let kind: EngineFailure.Kind =
            switch error {
            case .postgres(.connectionFailed), .postgres(.connectionLost), .postgres(.timedOut), .noCentralSchema: .unreachable
            case .postgres(.server(let state, _, _, _)) where state == "42501": .permissionDenied
            case .unknownTimeZone: .invalidArguments
            case .analysisTooLarge: .limitReached
            default: .failed
            }
        return EngineFailure(kind, error.description)
    }

    private static var readOnly: HealthStoreError { .engine(EngineFailure(.readOnly, readOnlyLine)) }

    /// Runs a reader call, its error as the store's.
    private func reading<T>(_ body: () throws(CentralStoreError) -> T) throws(HealthStoreError) -> T {
        do {
            return try body()
        } catch {
            throw .engine(Self.engineFailure(error))
        }
    }

    /// The central reader answers for every source and gateway: a query narrowed to one
    /// reader's view (an application's) is not one it can answer.
    private func requireWholeStore(reader: String?) throws(HealthStoreError) {
        guard reader == nil else { throw .engine(EngineFailure(.invalidArguments, "the central store answers its owner only")) }
    }

    func samples(_ query: SampleQuery) throws(HealthStoreError) -> [StoredSample] {
        try requireWholeStore(reader: query.reader)
        return try reading { () throws(CentralStoreError) in try reader.samples(query) }
    }

    func enumerateSamples(_ query: SampleQuery, _ body: (StoredSample) throws -> Void) throws(HealthStoreError) {
        try requireWholeStore(reader: query.reader)
        var thrown: (any Error)?
        try reading { () throws(CentralStoreError) in
            try reader.enumerateSamples(query) { sample in
                guard thrown == nil else { return }
                do { try body(sample) } catch { thrown = error }
            }
        }
        if let thrown { throw .engine(EngineFailure(.failed, "\(thrown)")) }
    }

    func statistics(
        of type: SampleType, by bucket: StatisticsBucket, since: Timestamp?, until: Timestamp?, source: String?, reader readerSource: String?
    ) throws(HealthStoreError) -> [StatisticsBucketValue] {
        try requireWholeStore(reader: readerSource ?? source)
        return try reading { () throws(CentralStoreError) in try reader.statistics(of: type, by: bucket, since: since, until: until) }
    }

    func heartRateVariability(_ query: SampleQuery) throws(HealthStoreError) -> HeartRateVariability? {
        try requireWholeStore(reader: query.reader ?? query.source ?? query.device)
        return try reading { () throws(CentralStoreError) in try reader.heartRateVariability(since: query.since, until: query.until) }
    }

    func heartRateZones(_ query: SampleQuery, maximumHeartRate: Double) throws(HealthStoreError) -> HeartRateZones? {
        try requireWholeStore(reader: query.reader ?? query.source ?? query.device)
        let zones = try reading { () throws(CentralStoreError) in
            try reader.heartRateZones(since: query.since, until: query.until, maximumHeartRate: maximumHeartRate)
        }
        return zones.isEmpty ? nil : HeartRateZones(zones: zones)
    }

    /// Zones of one's own bounds are a person's, and the central store keeps no people.
    func heartRateZones(_ queries: [SampleQuery], bounds: ZoneBounds) throws(HealthStoreError) -> HeartRateZones? {
        throw Self.noPeople
    }

    /// A person's statistics: the central store keeps no people.
    func statistics(_ queries: [SampleQuery], by bucket: StatisticsBucket) throws(HealthStoreError) -> [StatisticsBucketValue] {
        throw Self.noPeople
    }

    /// A person's heart-rate variability: the central store keeps no people.
    func heartRateVariability(_ queries: [SampleQuery]) throws(HealthStoreError) -> HeartRateVariability? {
        throw Self.noPeople
    }

    func deviceSummaries() throws(HealthStoreError) -> [DeviceSummary] {
        try reading { () throws(CentralStoreError) in try reader.deviceSummaries() }
    }

    /// The central store keeps no sensor activity: each gateway's hrmd does.
    func sensorActivity() throws(HealthStoreError) -> [SensorActivity] { [] }

    func sourceSummaries() throws(HealthStoreError) -> [SourceSummary] {
        try reading { () throws(CentralStoreError) in try reader.sourceSummaries() }
    }

    func save(_ samples: [QuantitySample], from source: HealthSource, policy: SavePolicy) throws(HealthStoreError) -> SaveReport {
        throw Self.readOnly
    }

    func changes(of type: SampleType, since anchor: Int64, limit: Int, reader: String?) throws(HealthStoreError) -> ChangeSet {
        throw Self.readOnly
    }

    func currentAnchor() throws(HealthStoreError) -> Int64 { throw Self.readOnly }

    func latestAnchor(of type: SampleType, reader: String?) throws(HealthStoreError) -> Int64 { throw Self.readOnly }

    func deleteSamples(of type: SampleType, source: String, device: String?, since: Timestamp?, until: Timestamp?)
        throws(HealthStoreError) -> Int
    { throw Self.readOnly }

    func requestAuthorization(source: String, toShare: [SampleType], toRead: [SampleType], quota: RequestQuota?) throws(HealthStoreError) {
        throw Self.readOnly
    }

    func authorizationStatus(source: String, type: SampleType) throws(HealthStoreError) -> AuthorizationStatus { throw Self.readOnly }

    func setShareAuthorization(_ status: AuthorizationStatus, source: String, type: SampleType) throws(HealthStoreError) {
        throw Self.readOnly
    }

    func setReadAuthorization(_ status: AuthorizationStatus, source: String, type: SampleType) throws(HealthStoreError) {
        throw Self.readOnly
    }

    func authorizationAccessEntries() throws(HealthStoreError) -> [AuthorizationAccessEntry] { throw Self.readOnly }

    func issueAccessToken(source: String, manager: Bool, lifetime: Int64?) throws(HealthStoreError) -> IssuedAccessToken {
        throw Self.readOnly
    }

    func accessTokens() throws(HealthStoreError) -> [AccessTokenRecord] { throw Self.readOnly }

    func revokeAccessTokens(matching idOrSource: String) throws(HealthStoreError) -> Int { throw Self.readOnly }

    /// People are kept by each gateway's store: the central store has none.
    private static var noPeople: HealthStoreError {
        .engine(EngineFailure(.readOnly, "the central store keeps no people: each gateway's store keeps its own (hrmctl person on the gateway)"))
    }

    func people() throws(HealthStoreError) -> [Person] { throw Self.noPeople }

    func strapAssignments() throws(HealthStoreError) -> [StrapAssignment] { throw Self.noPeople }

    func savePerson(_ person: Person, creating: Bool) throws(HealthStoreError) { throw Self.noPeople }

    func removePerson(named name: String) throws(HealthStoreError) { throw Self.noPeople }

    func assignStrap(device: String, person: String, from: Timestamp, until: Timestamp?) throws(HealthStoreError) { throw Self.noPeople }

    /// Workouts are kept and changed by each gateway's store; the central store holds copies
    /// for SQL (`hrmd.workouts`), without the people whose samples their figures need.
    private static var noWorkouts: HealthStoreError {
        .engine(EngineFailure(
            .readOnly, "hrmctl workout reads a gateway's store: the central store's copies of workouts are read with SQL (hrmd.workouts)"))
    }

    func saveWorkout(_ workout: Workout) throws(HealthStoreError) { throw Self.noWorkouts }

    func addWorkoutEvent(_ event: WorkoutEvent, to id: String, writer: String?) throws(HealthStoreError) -> Workout { throw Self.noWorkouts }

    func endWorkout(_ id: String, at time: Timestamp, writer: String?) throws(HealthStoreError) -> Workout { throw Self.noWorkouts }

    func deleteWorkout(_ id: String, writer: String?) throws(HealthStoreError) { throw Self.noWorkouts }

    func workouts(_ query: WorkoutQuery) throws(HealthStoreError) -> [Workout] { throw Self.noWorkouts }

    func workout(_ id: String, reader: String?) throws(HealthStoreError) -> Workout? { throw Self.noWorkouts }

    func workoutChanges(since anchor: Int64, limit: Int, reader: String?) throws(HealthStoreError) -> WorkoutChangeSet { throw Self.noWorkouts }

    /// Events are deleted on the gateway that found them; the sync carries the deletion.
    func deleteEvent(_ id: String) throws(HealthStoreError) -> HealthEvent {
        throw .engine(EngineFailure(.readOnly, "events are deleted on the gateway whose store holds them; the sync removes them here"))
    }

    func waveforms(_ query: WaveformQuery) throws(HealthStoreError) -> [WaveformRecording] {
        throw Self.noWaveforms
    }

    func readWaveform(
        _ id: String, since: Timestamp?, until: Timestamp?, reader: String?, _ body: (WaveformRecording, WaveformSegment) -> Bool
    ) throws(HealthStoreError) -> WaveformRecording? {
        throw Self.noWaveforms
    }

    func deleteWaveform(_ id: String) throws(HealthStoreError) -> WaveformRecording {
        throw Self.noWaveforms
    }

    private static var noWaveforms: HealthStoreError {
        .engine(EngineFailure(.readOnly, "the central store keeps no ECG or acceleration yet: read them on the gateway that recorded them"))
    }

    /// Every gateway's events, as their syncs sent them.
    func events(_ query: EventQuery) throws(HealthStoreError) -> [HealthEvent] {
        try requireWholeStore(reader: query.reader)
        return try reading { () throws(CentralStoreError) in try reader.events(query) }
    }
}
