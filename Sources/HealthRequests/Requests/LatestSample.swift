import HealthModel

/// The newest sample of a type the caller may read, of one device or of any: what a live
/// view shows before the first change arrives (HKSampleQuery with a limit of one, newest
/// first). Nothing when there is none.
public struct LatestSample: HealthRequest {
    public static let name = "LatestSample"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .constant

    public var app: String
    public var type: String
    /// A device's identifier; empty: any device.
    public var device: String

    public init(app: String, type: SampleType, device: String? = nil) {
        self.app = app
        self.type = type.identifier
        self.device = device ?? ""
    }

    public struct Response: Codable, Sendable {
        /// nil when the caller may read no sample of the type (of the device).
        public var sample: SampleRecord?
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let type = try SampleType.quantityNamed(type)
        let view = try await context.view(of: source)
        let query = SampleQuery(type: type, device: device.isEmpty ? nil : device, limit: 1, newestFirst: true, reader: view.reader)
        let newest = try await context.onStore { store throws(HealthStoreError) in try store.samples(query).first }
        return Response(sample: newest.map { view.record($0) })
    }
}
