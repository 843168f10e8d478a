import BluetoothWire
@preconcurrency import Glibc
import Logging
import SensorBackend
import SensorFrames
import Synchronization

/// What every strap's connection shares within one adapter lifetime: the adapter, the roster
/// of admitted straps, the scan switch, and the backend's parts.
struct ConnectionContext: Sendable {
    let adapter: AdapterInfo
    let roster: StrapRoster
    let scan: ScanSwitch
    let parts: BackendParts
}

/// Runs GATT over a connected bearer until the link ends: `StrapLink` on an `ATTClient` in
/// hrmd (``HCISensors/strapLink``), scripted in tests. It owns the bearer's descriptor, sends
/// the strap's frames, and calls the closure once notifications flow.
typealias LinkRunner = @Sendable (ATTBearer, SensorID, FrameSink, _ onStreaming: @escaping @Sendable () -> Void) async -> StrapLinkEnd

/// One admitted strap's life on an adapter, one ``StrapLink`` after another: wait to hear it
/// advertise, connect its ATT channel, run GATT on it until the link ends, then back off and
/// do it again, until cancelled. The same states, frames and backoff as a strap through
/// bluetoothd.
struct StrapConnection: Sendable {
    let address: BluetoothAddress
    let sightings: AsyncStream<Sighting>
    let context: ConnectionContext

    var id: SensorID { SensorID(address.description) }
    private var parts: BackendParts { context.parts }

    /// How old a sighting may be and still be worth a connection attempt: one kept from
    /// before the last link is stale.
    static let freshness: Duration = .seconds(5)

    enum Outcome: Sendable, Equatable {
        case cancelled
        /// The link ended or never came up; `streamedFor` is how long notifications had been
        /// flowing, nil when they never started.
        case ended(reason: String, streamedFor: Duration?)
    }

    func run() async {
        var retry = LinkRetry(
            device: id, board: parts.board, backoff: parts.settings.backoff, jitter: parts.jitter,
            diagnosis: parts.settings.linkAgeDiagnosis)
        var heard = sightings.makeAsyncIterator()
        while !Task.isCancelled {
            context.roster.setPhase(.searching, of: address)
            parts.board.report(id, .searching)
            await context.scan.update()
            guard let sighting = await nextFreshSighting(&heard) else { return }
            let outcome = await link(sighting)
            context.roster.setPhase(.resting, of: address)
            guard case .ended(let reason, let streamedFor) = outcome, !Task.isCancelled else { return }
            let delay = retry.linkEnded(reason: reason, streamedFor: streamedFor)
            do { try await Task.sleep(for: delay) } catch { return }
        }
    }

    private func nextFreshSighting(_ heard: inout AsyncStream<Sighting>.AsyncIterator) async -> Sighting? {
        while let sighting = await heard.next() {
            if sighting.time.duration(to: .now) <= Self.freshness { return sighting }
        }
        return nil
    }

    /// Connects (scanning held meanwhile), then runs GATT until the link ends.
    private func link(_ sighting: Sighting) async -> Outcome {
        context.roster.setPhase(.connecting, of: address)
        parts.board.report(id, .connecting)
        await context.scan.update()
        let bearer: ATTBearer
        do {
            bearer = try await parts.access.connect(from: context.adapter, to: sighting, timeout: parts.settings.connectTimeout)
        } catch {
            if Task.isCancelled { return .cancelled }
            return .ended(reason: Self.connectionFailure(error), streamedFor: nil)
        }
        parts.logger.debug("\(id): connected (\(sighting.addressType) address, link handle \(bearer.handle))")
        context.roster.link(bearer.handle, to: address)
        defer { context.roster.unlink(bearer.handle) }
        context.roster.setPhase(.linked, of: address)
        await context.scan.update()  // other straps may still be missing
        let streaming = StreamingClock()
        let board = parts.board, id = id
        let end = await parts.link(bearer, id, parts.sink) {
            streaming.start()
            board.report(id, .streaming)
        }
        switch end {
        case .cancelled: return .cancelled
        case .ended(let reason, _): return .ended(reason: reason, streamedFor: streaming.elapsed)
        }
    }

    /// Why a connection attempt failed, said plainly.
    static func connectionFailure(_ error: BluetoothSocketError) -> String {
        let reason = switch error.errno {
        case ETIMEDOUT: "the strap did not answer (out of range, asleep or connected elsewhere?)"
        case EHOSTDOWN, EHOSTUNREACH: "the strap is out of reach"
        case ECONNREFUSED: "the strap refused the connection"
        case ECONNRESET, ECONNABORTED: "the link was aborted while connecting"
        case EBUSY, EALREADY: "the adapter is busy with another connection"
        default: "\(error)"
        }
        return "connection failed: \(reason)"
    }
}

/// When a link began streaming (set once, from the link's `onStreaming`).
private final class StreamingClock: Sendable {
    private let since = Mutex<ContinuousClock.Instant?>(nil)

    func start() { since.withLock { $0 = $0 ?? .now } }

    /// How long it has streamed; nil when it never did.
    var elapsed: Duration? { since.withLock { $0 }.map { $0.duration(to: .now) } }
}

extension HCISensors {
    /// GATT through hrmd's ATT client: `StrapLink` on the bearer. The client owns the
    /// descriptor from the start, also when it cannot start.
    static let strapLink: LinkRunner = { bearer, device, sink, onStreaming in
        let client: ATTClient
        do {
            client = try ATTClient(descriptor: bearer.descriptor)
        } catch {
            return .ended(reason: "the ATT client could not start: \(error)", streamed: false)
        }
        return await StrapLink(client: client, device: device, sink: sink).run(onStreaming: onStreaming)
    }
}
