import HealthModel

/// The store's anchor now, over every source and type: a manager's, since the anchor moves
/// with every stored sample (an application asks ``Anchor`` for its own view).
public struct CurrentAnchor: HealthRequest {
    public static let name = "CurrentAnchor"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .constant

    public init() {}

    public struct Response: Codable, Sendable {
        public var anchor: UInt64
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let anchor = try await context.onStore { store throws(HealthStoreError) in try store.currentAnchor() }
        return Response(anchor: UInt64(max(0, anchor)))
    }
}
