import BluetoothWire
import Logging
import SensorBackend
import SensorFrames

/// BLE heart-rate straps straight through the kernel's Bluetooth sockets, for machines
/// without bluetoothd: LE scanning on the adapter's HCI socket while an admitted strap is
/// missing, one L2CAP connection on the ATT channel per strap, GATT through hrmd's own ATT
/// client. From the outside it is the BlueZ backend: the same frames, states, backoff and
/// `hrmctl devices` rows (transport `ble`, the strap's address as its device).
///
/// Whatever keeps it from working — no Bluetooth in the kernel, no adapter, an adapter down or
/// held by another program, missing capabilities — is a `waiting` state, retried with
/// backoff; it never stops hrmd.
public struct HCISensors: SensorBackend {
    public struct Settings: Sendable, Hashable {
        public var adapter: AdapterChoice
        /// The straps to record (`--sensor ble:ADDRESS`).
        public var addresses: [BluetoothAddress]
        /// Also admit any strap advertising the Heart Rate service.
        public var anyStrap: Bool
        /// How long one connection attempt may take.
        public var connectTimeout: Duration
        public var backoff: Backoff
        /// Spots a strap whose links keep ending at the same age (its remedy is the kernel's).
        public var linkAgeDiagnosis: LinkAgeDiagnosis

        public init(
            adapter: AdapterChoice = .first, addresses: [BluetoothAddress] = [], anyStrap: Bool = false,
            connectTimeout: Duration = .seconds(20), backoff: Backoff = Backoff(),
            linkAgeDiagnosis: LinkAgeDiagnosis = LinkAgeDiagnosis(host: .kernel)
        ) {
            self.adapter = adapter
            self.addresses = addresses
            self.anyStrap = anyStrap
            self.connectTimeout = connectTimeout
            self.backoff = backoff
            self.linkAgeDiagnosis = linkAgeDiagnosis
        }

        var admission: StrapAdmission { StrapAdmission(listed: addresses, anyStrap: anyStrap) }
    }

    public let settings: Settings
    /// How long an adapter must have worked for its loss to count as the first failure again.
    static let settledLifetime: Duration = .seconds(30)
    private let logger: Logger
    private let jitter: any JitterSource
    private let access: any HCIAccess
    private let link: LinkRunner

    public init(settings: Settings, logger: Logger = Logger(label: "hrmd.hci"), jitter: any JitterSource = SystemJitter()) {
        self.init(settings: settings, logger: logger, jitter: jitter, access: KernelHCI(), link: Self.strapLink)
    }

    init(settings: Settings, logger: Logger, jitter: any JitterSource, access: any HCIAccess, link: @escaping LinkRunner) {
        self.settings = settings
        self.logger = logger
        self.jitter = jitter
        self.access = access
        self.link = link
    }

    /// `hci`, or `hci:hciN` for a named adapter.
    public var name: String {
        switch settings.adapter {
        case .first: "hci"
        case .index: "hci:\(settings.adapter)"
        }
    }

    /// Who hears about a problem before any strap was heard: the listed straps, else the backend.
    private var namedTargets: [SensorID] {
        settings.addresses.isEmpty ? [SensorID(name)] : settings.addresses.map { SensorID($0.description) }
    }

    public func run(into sink: FrameSink) async throws {
        let board = StatusBoard(sink: sink, transport: .ble, logger: logger)
        var failures = 0
        while !Task.isCancelled {
            let problem: HCIProblem
            do throws(HCIProblem) {
                let adapter = try await access.open(settings.adapter, logger: logger)
                logger.info("\(adapter.info.name) (\(adapter.info.address)) opened: following heart-rate straps without bluetoothd")
                let parts = BackendParts(
                    sink: sink, board: board, settings: settings, access: access, link: link, jitter: jitter, logger: logger)
                let lifetime = AdapterLifetime(adapter: adapter, backendName: name, parts: parts)
                let opened = ContinuousClock.now
                guard let ended = await lifetime.run() else { return }
                // A lifetime that lasted starts the count afresh; a short one is one more failure.
                if opened.duration(to: .now) >= Self.settledLifetime { failures = 0 }
                problem = ended
            } catch {
                if Task.isCancelled { return }  // stopping: not a problem to report
                problem = error
            }
            failures += 1
            board.reportAll(problem.state, including: namedTargets)
            let delay = settings.backoff.delay(attempt: failures, unit: jitter.next())
            do { try await Task.sleep(for: delay) } catch { return }
        }
    }
}

/// What the backend hands to each adapter lifetime, and each lifetime to its straps'
/// connections: where frames and states go, the settings, and the ways out to the kernel.
struct BackendParts: Sendable {
    let sink: FrameSink
    let board: StatusBoard
    let settings: HCISensors.Settings
    let access: any HCIAccess
    let link: LinkRunner
    let jitter: any JitterSource
    let logger: Logger
}
