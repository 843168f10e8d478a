import HealthModel

/// From now on the caller is told (`SamplesChanged`) when samples of a type it may read
/// change, until it unobserves or leaves. The type `workout` tells of workouts started,
/// changed, ended or deleted (read them with `WorkoutChanges`).
public struct Observe: HealthRequest {
    public static let name = "Observe"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .constant

    public var app: String
    public var type: String

    public init(app: String, type: SampleType) {
        self.app = app
        self.type = type.identifier
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> NoResponse {
        let source = try context.source(app: app)
        let type = try SampleType.named(type)
        try context.front.observe(source: source, type: type, isManager: try await context.isManager())
        return NoResponse()
    }
}

/// Stops what ``Observe`` started.
public struct Unobserve: HealthRequest {
    public static let name = "Unobserve"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .constant

    public var app: String
    public var type: String

    public init(app: String, type: SampleType) {
        self.app = app
        self.type = type.identifier
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> NoResponse {
        let source = try context.source(app: app)
        context.front.unobserve(source: source, type: try SampleType.named(type))
        return NoResponse()
    }
}
