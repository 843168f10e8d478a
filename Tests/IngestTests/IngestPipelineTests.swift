import GRDB
import HealthModel
import HealthStore
import HealthUnits
import Logging
import SensorBackend
import SensorFrames
import SensorSimulator
import TestSupport
import Testing
import Timestamps

@testable import Ingest

@Suite("Ingest pipeline", .timeLimit(.minutes(HangBound.suiteMinutes)))
struct IngestPipelineTests {
    let store: HealthStore
    let pipeline: IngestPipeline

    init() throws {
        store = try HealthStore(writer: DatabaseQueue())
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        pipeline = IngestPipeline(
            store: store,
            settings: IngestSettings(source: HealthSource(name: "hrmd"), flushInterval: .milliseconds(20), maxBatch: 50),
            logger: logger)
    }

    @Test("frames become stored samples; finishing the inbox flushes everything")
    func storesAndFlushes() async throws {
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        async let run: Void = pipeline.run()
        pipeline.inbox.submit(Frames.location(.chest))
        for second in 0..<120 { pipeline.inbox.submit(Frames.measurement(Frames.heartRate(70), at: Double(second))) }
        pipeline.inbox.finish()
        await run
        #expect(try store.sampleCount(of: .heartRate) == 120)
        let counters = pipeline.snapshot
        #expect(counters.frames == 121)
        #expect(counters.stored == 120)
        #expect(counters.pending == 0)
        #expect(try store.samples(SampleQuery(type: .heartRate)).allSatisfy { $0.sample.metadata.sensorLocation == .chest })
    }

    @Test("the pipeline records its request, stores nothing until granted, then stores")
    func grantMidStream() async throws {
        async let run: Void = pipeline.run()
        try await eventually("the request is recorded") {
            try store.authorizations().contains { $0.source == "hrmd" && $0.type == .heartRate && $0.share == .notDetermined }
        }
        for second in 0..<10 { pipeline.inbox.submit(Frames.measurement(Frames.heartRate(70), at: Double(second))) }
        try await eventually("the first batch is denied") { pipeline.snapshot.denied >= 10 }
        #expect(try store.sampleCount(of: .heartRate) == 0)

        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        for second in 10..<20 { pipeline.inbox.submit(Frames.measurement(Frames.heartRate(71), at: Double(second))) }
        try await eventually("the batch after the grant is stored") { try store.sampleCount(of: .heartRate) == 10 }

        try store.setShareAuthorization(.sharingDenied, source: "hrmd", type: .heartRate)
        for second in 20..<30 { pipeline.inbox.submit(Frames.measurement(Frames.heartRate(72), at: Double(second))) }
        pipeline.inbox.finish()
        await run
        let values = try store.samples(SampleQuery(type: .heartRate)).map { try $0.sample.quantity.doubleValue(for: .countPerMinute) }
        #expect(values == Array(repeating: 71, count: 10))
    }

    @Test("bad frames are counted as skips and never stop the good ones")
    func badFramesSkipped() async throws {
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        async let run: Void = pipeline.run()
        let bad = SensorFrame(time: Frames.base, transport: .ble, device: "bad" , kind: .notify, characteristic: .heartRateMeasurement, value: [0x10])
        for second in 0..<20 {
            pipeline.inbox.submit(bad)
            pipeline.inbox.submit(Frames.measurement(Frames.heartRate(70), at: Double(second)))
            pipeline.inbox.submit(Frames.measurement(Frames.heartRate(0), at: Double(second), device: "zero"))
        }
        pipeline.inbox.finish()
        await run
        #expect(pipeline.snapshot.skipped == 40)
        #expect(try store.sampleCount(of: .heartRate) == 20)
    }

    @Test("the mock sensor streams through the pipeline into the store")
    func mockSensorEndToEnd() async throws {
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .rrInterval)
        let mock = MockSensor(settings: .init(id: "mock-1", hz: 50, location: .wrist, seed: 3, contactLossProbability: 0))
        let sink = FrameSink { [inbox = pipeline.inbox] in inbox.submit($0) }
        async let run: Void = pipeline.run()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await mock.run(into: sink) }
            try await eventually("the mock's beats arrive") {
                try store.sampleCount(of: .heartRate) >= 20 && store.sampleCount(of: .rrInterval) >= 2
            }
            group.cancelAll()
        }
        pipeline.inbox.finish()
        await run
        let samples = try store.samples(SampleQuery(type: .heartRate))
        #expect(samples.allSatisfy { $0.sample.metadata.sensorLocation == .wrist })
        #expect(samples.allSatisfy { $0.sample.device?.localIdentifier == "mock-1" && $0.sample.device?.manufacturer == "hrmd" })
        #expect(try samples.allSatisfy { (30...220).contains(try $0.sample.quantity.doubleValue(for: .countPerMinute)) })
        #expect(try store.sampleCount(of: .rrInterval) >= 2)
    }
}
