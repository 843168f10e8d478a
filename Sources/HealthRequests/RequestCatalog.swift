import HealthModel
/// Every request the store serves. A front serves exactly these; a test checks each front's
/// table against it.
public enum RequestCatalog {
    public static let all: [any HealthRequest.Type] = [
        RequestAuthorization.self, AuthorizationStatusRequest.self, SaveSamples.self, QuerySamples.self, QuerySamplesToFile.self,
        Statistics.self, HeartRateVariabilityRequest.self, HeartRateZonesRequest.self, Changes.self, CurrentAnchor.self,
        Anchor.self, Observe.self, Unobserve.self, DeleteSamples.self, SetAuthorization.self, Authorizations.self, Devices.self,
        Sources.self, Import.self, LatestSample.self, SamplePage.self, CreateAccessToken.self, AccessTokens.self, RevokeAccessTokens.self,
        People.self, SavePerson.self, RemovePerson.self, AssignStrap.self, PersonZones.self, PersonStatistics.self, PersonVariability.self, StartWorkout.self, AddWorkoutEvent.self,
        EndWorkout.self, Workouts.self, WorkoutDetails.self, WorkoutHeartRate.self, WorkoutChanges.self, DeleteWorkout.self, Events.self,
        DeleteEvent.self, Waveforms.self, WaveformSamples.self, DeleteWaveform.self,
    ]

    /// The request named `name`.
    public static func request(named name: String) -> (any HealthRequest.Type)? { byName[name] }

    private static let byName: [String: any HealthRequest.Type] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
}
