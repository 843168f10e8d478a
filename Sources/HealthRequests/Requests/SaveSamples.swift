import HealthModel

/// Saves samples as the caller's source; only types the user let it share are accepted, and
/// a batch with any other type is refused whole.
public struct SaveSamples: HealthRequest {
    public static let name = "SaveSamples"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .answer(RequestBudgets.samplesPerSave, of: "sample saved")

    public var app: String
    public var samples: [QuantitySample]

    public init(app: String, samples: [QuantitySample]) {
        self.app = app
        self.samples = samples
    }

    public struct Response: Codable, Sendable {
        /// Samples stored or replaced (a newer sync version of one already there).
        public var stored: UInt32
        /// Samples the store already held as they are.
        public var unchanged: UInt32
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let batch = samples
        let report = try await context.onStore { store throws(HealthStoreError) in
            try store.save(batch, from: HealthSource(name: source), policy: .refuseUnauthorized)
        }
        return Response(stored: UInt32(clamping: report.stored + report.replaced), unchanged: UInt32(clamping: report.unchanged))
    }

    /// Checks the batch's size before its samples are read.
    public static func checkCount(_ count: Int) throws(RequestFailure) {
        guard count <= RequestBudgets.samplesPerSave else {
            throw .invalidArguments("a save takes at most \(RequestBudgets.samplesPerSave) samples, not \(count); split the batch")
        }
    }
}
