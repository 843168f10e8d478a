import HealthModel

/// A manager reads every device that wrote samples, and what the recording daemon says of
/// each sensor now.
public struct Devices: HealthRequest {
    public static let name = "Devices"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .perStored("device")

    public init() {}

    public struct Response: Codable, Sendable {
        public var devices: [DeviceSummary]
        public var activity: [SensorActivity]
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let (devices, activity) = try await context.onStore { store throws(HealthStoreError) in
            (try store.deviceSummaries(), try store.sensorActivity())
        }
        return Response(devices: devices, activity: activity)
    }
}
