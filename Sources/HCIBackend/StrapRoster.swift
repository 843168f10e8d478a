import BluetoothWire
import Synchronization

/// The admitted straps of one adapter lifetime: where each one's connection stands, the
/// sightings it waits for, and which link handle is whose. Shared by the event pump (which
/// hears advertisements), the scan switch and every strap's connection.
///
/// Sightings are yielded outside the lock: yielding resumes a waiting task, and cancelling that
/// task takes the lock (in `onTermination`) while holding its own status lock.
final class StrapRoster: Sendable {
    /// What an advertising report meant.
    enum Hearing {
        /// An admitted strap already followed: its connection got the sighting.
        case followed
        /// A strap admitted just now (`anyStrap`): start its connection on these sightings.
        case admitted(BluetoothAddress, AsyncStream<Sighting>)
        /// A heart-rate strap that is not admitted, heard for the first time.
        case refused(BluetoothAddress, name: String?)
        /// Anything else (another device, a refused strap heard again).
        case ignored
    }

    private struct Strap {
        var phase: StrapPhase = .searching
        var sightings: AsyncStream<Sighting>.Continuation
        var name: String?
    }

    private struct State {
        var straps: [BluetoothAddress: Strap] = [:]
        var refused: Set<BluetoothAddress> = []
        var links: [UInt16: BluetoothAddress] = [:]
    }

    let admission: StrapAdmission
    private let state = Mutex(State())

    init(admission: StrapAdmission) {
        self.admission = admission
    }

    /// Follows every listed strap; their sightings, by address.
    func followListed() -> [(BluetoothAddress, AsyncStream<Sighting>)] {
        admission.listed.sorted().map { address in
            state.withLock { (address, Self.follow(address, in: &$0)) }
        }
    }

    /// Takes one advertising report heard at `time`.
    func heard(_ report: AdvertisingReport, at time: ContinuousClock.Instant = .now) -> Hearing {
        let address = report.address
        let (hearing, continuation, sighting) = state.withLock { state -> (Hearing, AsyncStream<Sighting>.Continuation?, Sighting?) in
            var hearing = Hearing.followed
            if state.straps[address] == nil {
                guard admission.admits(report) else {
                    let first = report.data.offersHeartRate && state.refused.insert(address).inserted
                    return (first ? .refused(address, name: report.data.localName) : .ignored, nil, nil)
                }
                hearing = .admitted(address, Self.follow(address, in: &state))
            }
            if let name = report.data.localName { state.straps[address]?.name = name }
            let sighting = Sighting(address: address, addressType: report.addressType, name: state.straps[address]?.name, time: time)
            return (hearing, state.straps[address]?.sightings, sighting)
        }
        if let continuation, let sighting { continuation.yield(sighting) }
        return hearing
    }

    private static func follow(_ address: BluetoothAddress, in state: inout State) -> AsyncStream<Sighting> {
        let (sightings, continuation) = AsyncStream.makeStream(of: Sighting.self, bufferingPolicy: .bufferingNewest(1))
        state.straps[address] = Strap(sightings: continuation)
        return sightings
    }

    func setPhase(_ phase: StrapPhase, of address: BluetoothAddress) {
        state.withLock { $0.straps[address]?.phase = phase }
    }

    /// Where `address` is in its connection's life; nil when it is not followed.
    func phase(of address: BluetoothAddress) -> StrapPhase? {
        state.withLock { $0.straps[address]?.phase }
    }

    /// What scanning should do now.
    var scanDemand: ScanDemand {
        ScanDemand(phases: state.withLock { $0.straps.values.map(\.phase) }, anyStrap: admission.anyStrap)
    }

    /// Whether no strap is followed yet.
    var isEmpty: Bool { state.withLock { $0.straps.isEmpty } }

    /// Link `handle` is `address`'s, until `unlink`.
    func link(_ handle: UInt16, to address: BluetoothAddress) {
        state.withLock { $0.links[handle] = address }
    }

    func unlink(_ handle: UInt16) {
        _ = state.withLock { $0.links.removeValue(forKey: handle) }
    }

    /// Whose link `handle` is, for logs.
    func address(of handle: UInt16) -> BluetoothAddress? {
        state.withLock { $0.links[handle] }
    }

    /// The adapter lifetime is over: every sighting stream finishes.
    func end() {
        let continuations = state.withLock { state in
            defer { state.straps.removeAll() }
            return state.straps.values.map(\.sightings)
        }
        for continuation in continuations { continuation.finish() }
    }
}
