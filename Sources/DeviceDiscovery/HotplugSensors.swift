import Logging
import SensorBackend
import SensorFrames
import Synchronization

/// Serves every device of one kind udev finds, for as long as it is plugged in: one child
/// backend per device (made by `makeBackend`), started when the device appears and cancelled
/// when it goes. A device already served is not started twice, and devices configured by
/// path elsewhere are left to their own backend. With none plugged in it reports `.waiting`.
public struct HotplugSensors: SensorBackend {
    public let kind: HotplugSensorKind
    /// Device nodes (or hrmd symlinks) served by a backend of their own.
    public let excludedPaths: Set<String>
    private let source: any HotplugEventSource
    private let logger: Logger
    private let makeBackend: @Sendable (HotplugDevice) -> any SensorBackend

    /// `ant` or `serial`.
    public var name: String { kind.rawValue }

    public init(
        kind: HotplugSensorKind, excluding excludedPaths: Set<String> = [], source: any HotplugEventSource = UdevHotplugEvents(),
        logger: Logger, makeBackend: @escaping @Sendable (HotplugDevice) -> any SensorBackend
    ) {
        self.kind = kind
        self.excludedPaths = excludedPaths
        self.source = source
        self.logger = logger
        self.makeBackend = makeBackend
    }

    /// What the serving loop reacts to: a device event, or a child backend that ended by itself.
    private enum Input: Sendable {
        case device(HotplugEvent)
        case childEnded(syspath: String, generation: Int)
    }

    /// One device being served.
    private struct Served {
        var device: HotplugDevice
        var generation: Int
        var stop: AsyncStream<Never>.Continuation
    }

    public func run(into sink: FrameSink) async throws {
        let events = try source.events()
        let (inputs, input) = AsyncStream<Input>.makeStream()
        // Discarding: children served and gone over a long run leave nothing behind.
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await event in events { input.yield(.device(event)) }
                input.finish()
            }
            var served: [String: Served] = [:]
            var scanned = false
            var generation = 0
            func reportWhenIdle() {
                guard scanned, served.isEmpty else { return }
                sink.report(SensorStatus(transport: transport, device: SensorID(name), state: .waiting(reason: "no \(kind.deviceNoun) plugged in")))
            }
            for await item in inputs {
                switch item {
                case .device(.added(let device)):
                    guard device.kind == kind, served[device.syspath] == nil, !isExcluded(device) else { continue }
                    generation += 1
                    let (stop, stopper) = AsyncStream<Never>.makeStream()
                    served[device.syspath] = Served(device: device, generation: generation, stop: stopper)
                    logger.info("\(device.kind.deviceNoun) \(device.devnode) added", metadata: metadata(of: device))
                    let backend = makeBackend(device)
                    group.addTask { [generation, logger, transport] in
                        await Self.serve(backend, for: device, transport: transport, until: stop, into: sink, logger: logger)
                        input.yield(.childEnded(syspath: device.syspath, generation: generation))
                    }
                case .device(.removed(let syspath)):
                    guard let entry = served.removeValue(forKey: syspath) else { continue }
                    logger.info("\(entry.device.kind.deviceNoun) \(entry.device.devnode) removed", metadata: metadata(of: entry.device))
                    entry.stop.finish()
                    reportWhenIdle()
                case .device(.initialScanFinished):
                    scanned = true
                    if served.isEmpty { logger.info("waiting for \(kind.indefiniteNoun) to be plugged in") }
                    reportWhenIdle()
                case .childEnded(let syspath, let ended):
                    guard let entry = served[syspath], entry.generation == ended else { continue }
                    served.removeValue(forKey: syspath)
                    logger.warning("\(entry.device.kind.deviceNoun) \(entry.device.devnode) is no longer served: its backend ended")
                    reportWhenIdle()
                }
            }
            group.cancelAll()
        }
    }

    /// Runs `backend` until `stop` finishes (the device was removed) or the task is cancelled.
    /// After an unplug, every sensor the backend reported on is reported stopped for that reason.
    private static func serve(
        _ backend: any SensorBackend, for device: HotplugDevice, transport: SensorTransport, until stop: AsyncStream<Never>,
        into sink: FrameSink, logger: Logger
    ) async {
        let reported = ReportedSensors()
        let childSink = FrameSink({ sink.send($0) }, status: { status in
            reported.insert(status.device)
            sink.report(status)
        })
        let unplugged = await withTaskGroup(of: Bool.self) { serving in
            serving.addTask {
                do {
                    try await backend.run(into: childSink)
                } catch {
                    logger.error("\(backend.name) cannot run: \(error)")
                }
                return false
            }
            serving.addTask {
                for await _ in stop {}
                return !Task.isCancelled
            }
            let first = await serving.next() ?? false
            serving.cancelAll()
            await serving.waitForAll()
            return first
        }
        guard unplugged else { return }
        for id in reported.all {
            sink.report(SensorStatus(transport: transport, device: id, state: .stopped(reason: "\(device.devnode) was unplugged")))
        }
    }

    private func isExcluded(_ device: HotplugDevice) -> Bool {
        excludedPaths.contains(device.devnode) || device.symlink.map(excludedPaths.contains) == true
    }

    private var transport: SensorTransport {
        switch kind {
        case .ant: .ant
        case .serial: .serial
        }
    }

    private func metadata(of device: HotplugDevice) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["syspath": "\(device.syspath)"]
        if let vendor = device.vendorID, let model = device.modelID { metadata["usb"] = "\(vendor):\(model)" }
        if let serial = device.serial { metadata["serial"] = "\(serial)" }
        if let symlink = device.symlink { metadata["symlink"] = "\(symlink)" }
        if let baud = device.baud { metadata["baud"] = "\(baud)" }
        return metadata
    }
}

/// The sensors one child backend has reported on.
private final class ReportedSensors: Sendable {
    private let ids = Mutex<Set<SensorID>>([])
    func insert(_ id: SensorID) { _ = ids.withLock { $0.insert(id) } }
    var all: [SensorID] { ids.withLock { $0.sorted() } }
}
