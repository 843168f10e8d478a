import HealthModel

/// The anchor of the newest change of a type the caller may see, as this caller is shown
/// anchors: where it starts following changes from.
public struct Anchor: HealthRequest {
    public static let name = "Anchor"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .constant

    public var app: String
    public var type: String

    public init(app: String, type: SampleType) {
        self.app = app
        self.type = type.identifier
    }

    public struct Response: Codable, Sendable {
        public var anchor: UInt64
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let type = try SampleType.quantityNamed(type)
        let view = try await context.view(of: source)
        let anchor = try await context.onStore { store throws(HealthStoreError) in try store.latestAnchor(of: type, reader: view.reader) }
        return Response(anchor: view.anchor(anchor))
    }
}
