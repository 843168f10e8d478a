import HealthModel

/// The user's answer to the caller's application sharing a type (HKHealthStore's
/// authorizationStatus(for:)). Read answers are never told, as in HealthKit.
public struct AuthorizationStatusRequest: HealthRequest {
    public static let name = "AuthorizationStatus"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .constant

    public var app: String
    public var type: String

    public init(app: String, type: SampleType) {
        self.app = app
        self.type = type.identifier
    }

    public struct Response: Codable, Sendable {
        /// `notDetermined`, `sharingDenied` or `sharingAuthorized`.
        public var status: String
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let type = try SampleType.named(type)
        let status = try await context.onStore { store throws(HealthStoreError) in try store.authorizationStatus(source: source, type: type) }
        return Response(status: status.description)
    }
}
