import SDBus
import Synchronization
import Logging
import SensorBackend
import SensorFrames

/// What every strap's connection shares within one bluetoothd lifetime: the bus, the object
/// model, where frames and states go, the backend's settings, jitter and logger.
struct ConnectionContext: Sendable {
    let bus: DBusConnection
    let model: BlueZModel
    let sink: FrameSink
    let board: StatusBoard
    let settings: BlueZSensors.Settings
    let jitter: any JitterSource
    let logger: Logger
}

/// One admitted strap's life through bluetoothd, one ``StrapLink`` after another: wait for it
/// and its adapter, connect, wait for services, subscribe to Heart Rate Measurement once while
/// reading the body sensor location, device information and battery, stream until the link
/// drops, then back off and do it again, until cancelled.
struct StrapConnection: Sendable {
    let address: String
    let context: ConnectionContext

    var id: SensorID { SensorID(address) }

    /// The Device Information characteristics read after connecting.
    static let deviceInformation = DeviceInformationField.deviceInformationService.map(\.characteristic.rawValue)

    enum Outcome: Error, Equatable {
        case cancelled
        /// The link ended (or never came up); `streamedFor` is how long notifications had been
        /// flowing, nil when they never started.
        case ended(reason: String, streamedFor: Duration?)

        /// The link ended `reason`; streaming had begun at `streamingSince`, if at all.
        static func ended(_ reason: String, streamingSince: ContinuousClock.Instant?) -> Outcome {
            .ended(reason: reason, streamedFor: streamingSince.map { $0.duration(to: .now) })
        }
    }

    /// How the Heart Rate Measurement subscription of the previous link was made, so a
    /// reconnect does not subscribe twice to what bluetoothd still remembers.
    struct Memory {
        var startNotifyPath: String?
    }

    func run() async {
        var memory = Memory()
        // A new bluetoothd may run with new settings: the retry starts with no diagnosis.
        var retry = LinkRetry(
            device: id, board: context.board, backoff: context.settings.backoff, jitter: context.jitter,
            diagnosis: context.settings.linkAgeDiagnosis)
        while !Task.isCancelled {
            let outcome = await link(memory: &memory)
            guard case .ended(let reason, let streamedFor) = outcome, !Task.isCancelled else { return }
            let delay = retry.linkEnded(reason: reason, streamedFor: streamedFor)
            do { try await Task.sleep(for: delay) } catch { return }
        }
    }

    // MARK: One link

    enum Event: Sendable {
        case change(BlueZChange)
        case socketClosed
        case bluetoothdGone
        case tick
    }

    private func link(memory: inout Memory) async -> Outcome {
        // This strap's device and everything under it (services, characteristics), and the
        // objects above devices (adapters): not the other straps.
        let deviceComponent = "dev_" + address.uppercased().replacing(":", with: "_")
        let (_, changes) = context.model.watch { $0.concerns(deviceComponent: deviceComponent) }
        let (events, feed) = AsyncStream<Event>.makeStream()
        let ticks = TickNeed()
        return await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await change in changes { feed.yield(.change(change)) }
                feed.yield(.bluetoothdGone)
            }
            group.addTask {
                // Only the wait for ServicesResolved has a deadline to check: one tick a second
                // keeps it within a second, and the ticks stop once it is over.
                while ticks.areNeeded, (try? await Task.sleep(for: .seconds(1))) != nil { feed.yield(.tick) }
            }
            var link = StrapLink(strap: self, events: events.makeAsyncIterator(), feed: feed, ticks: ticks)
            let outcome = await link.run(memory: &memory)
            group.cancelAll()
            return outcome
        }
    }
}

/// Whether a link still wants its once-a-second tick: only until its wait for the
/// services is over, so a streaming strap is woken by its notifications alone.
final class TickNeed: Sendable {
    private let needed = Atomic<Bool>(true)

    var areNeeded: Bool { needed.load(ordering: .relaxed) }

    func end() { needed.store(false, ordering: .relaxed) }
}
