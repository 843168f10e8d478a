import HealthModel

/// An application asks the user to let it share (write) and read types: each (type, access)
/// not answered yet becomes a pending request a manager answers (HKHealthStore's
/// requestAuthorization).
public struct RequestAuthorization: HealthRequest {
    public static let name = "RequestAuthorization"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .constant

    public var app: String
    public var share: [String]
    public var read: [String]

    public init(app: String, share: [SampleType], read: [SampleType]) {
        self.app = app
        self.share = share.map(\.identifier)
        self.read = read.map(\.identifier)
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> NoResponse {
        let source = try context.source(app: app)
        guard share.count + read.count <= RequestBudgets.typesPerRequest else {
            throw .invalidArguments("a request names at most \(RequestBudgets.typesPerRequest) types")
        }
        let shareTypes = try share.map { name throws(RequestFailure) in try SampleType.named(name) }
        let readTypes = try read.map { name throws(RequestFailure) in try SampleType.named(name) }
        let quota = RequestQuota(
            owner: AppName.source(user: context.user, app: ""), perOwner: RequestBudgets.applicationsPerUser, inAll: RequestBudgets.sources)
        try await context.onStore { store throws(HealthStoreError) in
            try store.requestAuthorization(source: source, toShare: shareTypes, toRead: readTypes, quota: quota)
        }
        context.log(
            .info, "asks to share [\(shareTypes.map(\.identifier).joined(separator: ", "))] and read [\(readTypes.map(\.identifier).joined(separator: ", "))]",
            ["source": source])
        return NoResponse()
    }
}

extension SampleType {
    /// The type a request names, or the failure that lists the known ones.
    public static func named(_ name: String) throws(RequestFailure) -> SampleType {
        do { return try SampleType.parse(name) } catch { throw error.failure }
    }

    /// The quantity type a request names, or its failure.
    public static func quantityNamed(_ name: String) throws(RequestFailure) -> SampleType {
        do { return try SampleType.parseQuantity(name) } catch { throw error.failure }
    }
}
