import BluetoothWire
@preconcurrency import Glibc
import Logging
import ReaderThreads

/// A strap heard advertising: what connecting to it takes, and what it said of itself.
struct Sighting: Sendable, Hashable {
    var address: BluetoothAddress
    var addressType: LEAddressType
    var name: String?
    var time: ContinuousClock.Instant
}

/// An adapter ready to drive: what the kernel says of it, and its controller.
struct OpenAdapter: Sendable {
    var info: AdapterInfo
    var controller: any ControllerChannel
}

/// How the backend reaches adapters and straps: through the kernel in hrmd (``KernelHCI``),
/// scripted in tests.
protocol HCIAccess: Sendable {
    /// Finds the adapter, checks that hrmd may drive it, brings it up when it is down, and
    /// opens its controller.
    func open(_ choice: AdapterChoice, logger: Logger) async throws(HCIProblem) -> OpenAdapter
    /// Opens an ATT bearer from `adapter` to the strap of `sighting`, bounded by `timeout`.
    func connect(from adapter: AdapterInfo, to sighting: Sighting, timeout: Duration) async throws(BluetoothSocketError) -> ATTBearer
}

/// The kernel's Bluetooth sockets and libbluetooth. Opening checks, in order: that the kernel
/// has Bluetooth sockets, that the adapter exists, that hrmd has CAP_NET_RAW and
/// CAP_NET_ADMIN (without CAP_NET_ADMIN the kernel hides LE events instead of failing), that
/// the adapter is up (bringing it up when it is not); then it opens the adapter's HCI socket.
/// All of it runs on a thread of its own: bringing an adapter up waits for its initialisation.
/// A cancelled caller (hrmd stopping) does not wait for that: it gets ECANCELED at once, and an
/// adapter the thread opens after that is closed again.
struct KernelHCI: HCIAccess {
    func open(_ choice: AdapterChoice, logger: Logger) async throws(HCIProblem) -> OpenAdapter {
        try await onOwnThread(
            named: "open \(choice)", abandonedOnCancel: .failed(BluetoothSocketError(call: "open \(choice)", errno: ECANCELED)),
            discard: { $0.controller.close() }
        ) { () throws(HCIProblem) in
            try openNow(choice, logger: logger)
        }
    }

    private func openNow(_ choice: AdapterChoice, logger: Logger) throws(HCIProblem) -> OpenAdapter {
        var adapter = try attempt(on: choice) { () throws(BluetoothSocketError) in
            try HCIAdapters.checkSockets()
            return try Self.find(choice)
        }
        let lacking = (try? CapabilitySet.effective().lacking()) ?? []
        guard lacking.isEmpty else { throw .missingCapabilities(lacking) }
        if !adapter.isUp {
            do {
                try HCIAdapters.bringUp(adapter.index)
                adapter = try HCIAdapters.info(adapter.index)
            } catch {
                // rfkill, the adapter gone, or another program holding it say so themselves.
                throw [ERFKILL, ENODEV, EBUSY].contains(error.errno)
                    ? HCIProblem(error, adapter: .index(adapter.index), .current)
                    : .adapterDown(adapter: adapter.name, because: error.description)
            }
            guard adapter.isUp else { throw .adapterDown(adapter: adapter.name, because: nil) }
            logger.notice("\(adapter.name) was down; hrmd brought it up")
        }
        let index = adapter.index
        let socket = try attempt(on: .index(index)) { () throws(BluetoothSocketError) in try HCISocket(adapter: index) }
        return OpenAdapter(info: adapter, controller: HCIController(socket: socket, logger: logger))
    }

    func connect(from adapter: AdapterInfo, to sighting: Sighting, timeout: Duration) async throws(BluetoothSocketError) -> ATTBearer {
        try await L2CAPSocket.connectATT(from: adapter.address, to: sighting.address, addressType: sighting.addressType, timeout: timeout)
    }

    /// The chosen adapter: `hci_get_route` for the first one up, else the first the kernel
    /// lists (down), else ENODEV.
    static func find(_ choice: AdapterChoice) throws(BluetoothSocketError) -> AdapterInfo {
        switch choice {
        case .index(let index):
            return try HCIAdapters.info(index)
        case .first:
            do {
                return try HCIAdapters.info(try HCIAdapters.firstUp())
            } catch where error.errno == ENODEV {
                guard let index = try HCIAdapters.all().first else { throw error }
                return try HCIAdapters.info(index)
            }
        }
    }

    private func attempt<T>(on adapter: AdapterChoice, _ body: () throws(BluetoothSocketError) -> T) throws(HCIProblem) -> T {
        do {
            return try body()
        } catch {
            throw HCIProblem(error, adapter: adapter, .current)
        }
    }
}
