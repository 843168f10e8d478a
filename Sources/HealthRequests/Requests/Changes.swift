import HealthModel

/// The samples of a type added and deleted after an anchor (0: from the beginning) that the
/// caller may read, at most `limit` events, and the anchor to pass next
/// (HKAnchoredObjectQuery). An application's anchors are opaque tokens.
public struct Changes: HealthRequest {
    public static let name = "Changes"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .answer(RequestBudgets.samplesPerQuery, of: "sample")

    public var app: String
    public var type: String
    public var anchor: UInt64
    public var limit: UInt32

    public init(app: String, type: SampleType, anchor: Int64, limit: Int) {
        self.app = app
        self.type = type.identifier
        self.anchor = UInt64(bitPattern: anchor)
        self.limit = UInt32(clamping: limit)
    }

    public struct Response: Codable, Sendable {
        public var added: [SampleRecord]
        public var deleted: [DeletedSample]
        public var newAnchor: UInt64
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let type = try SampleType.quantityNamed(type)
        let limit = try RequestBudgets.queryLimit(limit)
        let view = try await context.view(of: source)
        let plain = try view.plainAnchor(anchor)
        let changes = try await context.onStore { store throws(HealthStoreError) in
            try store.changes(of: type, since: plain, limit: limit, reader: view.reader)
        }
        return Response(
            added: changes.added.map { view.record($0) }, deleted: changes.deleted.map { view.deleted($0) },
            newAnchor: changes.anchor == plain ? anchor : view.anchor(changes.anchor))
    }
}
