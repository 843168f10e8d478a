import HealthModel
import Timestamps

/// What requests need of a store: the operations they are served with, in the model's types.
/// The SQLite store provides them; another engine would provide the same.
public protocol RequestStore: Sendable {
    func save(_ samples: [QuantitySample], from source: HealthSource, policy: SavePolicy) throws(HealthStoreError) -> SaveReport
    func samples(_ query: SampleQuery) throws(HealthStoreError) -> [StoredSample]
    func enumerateSamples(_ query: SampleQuery, _ body: (StoredSample) throws -> Void) throws(HealthStoreError)
    func statistics(
        of type: SampleType, by bucket: StatisticsBucket, since: Timestamp?, until: Timestamp?, source: String?, reader: String?
    ) throws(HealthStoreError) -> [StatisticsBucketValue]
    func heartRateVariability(_ query: SampleQuery) throws(HealthStoreError) -> HeartRateVariability?
    func heartRateVariability(_ queries: [SampleQuery]) throws(HealthStoreError) -> HeartRateVariability?
    func statistics(_ queries: [SampleQuery], by bucket: StatisticsBucket) throws(HealthStoreError) -> [StatisticsBucketValue]
    func heartRateZones(_ query: SampleQuery, maximumHeartRate: Double) throws(HealthStoreError) -> HeartRateZones?
    func heartRateZones(_ queries: [SampleQuery], bounds: ZoneBounds) throws(HealthStoreError) -> HeartRateZones?
    func changes(of type: SampleType, since anchor: Int64, limit: Int, reader: String?) throws(HealthStoreError) -> ChangeSet
    func currentAnchor() throws(HealthStoreError) -> Int64
    func latestAnchor(of type: SampleType, reader: String?) throws(HealthStoreError) -> Int64
    func deleteSamples(of type: SampleType, source: String, device: String?, since: Timestamp?, until: Timestamp?)
        throws(HealthStoreError) -> Int
    func requestAuthorization(source: String, toShare: [SampleType], toRead: [SampleType], quota: RequestQuota?) throws(HealthStoreError)
    func authorizationStatus(source: String, type: SampleType) throws(HealthStoreError) -> AuthorizationStatus
    func setShareAuthorization(_ status: AuthorizationStatus, source: String, type: SampleType) throws(HealthStoreError)
    func setReadAuthorization(_ status: AuthorizationStatus, source: String, type: SampleType) throws(HealthStoreError)
    func authorizationAccessEntries() throws(HealthStoreError) -> [AuthorizationAccessEntry]
    func deviceSummaries() throws(HealthStoreError) -> [DeviceSummary]
    func sensorActivity() throws(HealthStoreError) -> [SensorActivity]
    func sourceSummaries() throws(HealthStoreError) -> [SourceSummary]
    /// A new token acting as `source`, expiring `lifetime` seconds from now (nil: never).
    func issueAccessToken(source: String, manager: Bool, lifetime: Int64?) throws(HealthStoreError) -> IssuedAccessToken
    func accessTokens() throws(HealthStoreError) -> [AccessTokenRecord]
    func revokeAccessTokens(matching idOrSource: String) throws(HealthStoreError) -> Int
    func people() throws(HealthStoreError) -> [Person]
    func strapAssignments() throws(HealthStoreError) -> [StrapAssignment]
    func savePerson(_ person: Person, creating: Bool) throws(HealthStoreError)
    func removePerson(named name: String) throws(HealthStoreError)
    func assignStrap(device: String, person: String, from: Timestamp, until: Timestamp?) throws(HealthStoreError)
    func saveWorkout(_ workout: Workout) throws(HealthStoreError)
    /// `writer`: the source that may change only its own workouts; nil for a manager.
    func addWorkoutEvent(_ event: WorkoutEvent, to id: String, writer: String?) throws(HealthStoreError) -> Workout
    func endWorkout(_ id: String, at time: Timestamp, writer: String?) throws(HealthStoreError) -> Workout
    func deleteWorkout(_ id: String, writer: String?) throws(HealthStoreError)
    func workouts(_ query: WorkoutQuery) throws(HealthStoreError) -> [Workout]
    func workout(_ id: String, reader: String?) throws(HealthStoreError) -> Workout?
    func workoutChanges(since anchor: Int64, limit: Int, reader: String?) throws(HealthStoreError) -> WorkoutChangeSet
    func events(_ query: EventQuery) throws(HealthStoreError) -> [HealthEvent]
    /// Deletes an event, leaving a tombstone; returns it as it was.
    func deleteEvent(_ id: String) throws(HealthStoreError) -> HealthEvent
    func waveforms(_ query: WaveformQuery) throws(HealthStoreError) -> [WaveformRecording]
    /// Hands `body` a recording's samples in time order, a chunk at a time, until it returns
    /// false; returns the recording, nil when there is none `reader` may see.
    func readWaveform(
        _ id: String, since: Timestamp?, until: Timestamp?, reader: String?, _ body: (WaveformRecording, WaveformSegment) -> Bool
    ) throws(HealthStoreError) -> WaveformRecording?
    /// Deletes a waveform recording, leaving a tombstone; returns it as it was.
    func deleteWaveform(_ id: String) throws(HealthStoreError) -> WaveformRecording
}
