import BluetoothWire
import Logging

/// Turns an adapter's LE scanning on while a wanted strap is missing and off once none is,
/// one change at a time, with the commands of `BluetoothWire.HCICommand`.
///
/// The kernel scans and stops scanning by itself around the connections it makes for L2CAP
/// sockets; its commands' answers reach the event pump, which calls ``forget()`` so scanning
/// is set again from what the roster wants. A refusal by the controller is logged and tried
/// again at the next update; a failure of the socket itself (EPERM: CAP_NET_RAW missing;
/// ENETDOWN: the adapter went down) ends the adapter's lifetime through `fail`.
actor ScanSwitch {
    private enum Belief { case on, off, unknown }

    /// Active scanning (scan responses carry the straps' names), 60 ms interval, 30 ms window.
    static let parameters = HCICommand.leSetScanParameters(active: true, interval: 0x0060, window: 0x0030)
    /// The LE Set Scan Parameters and LE Set Scan Enable opcodes, whoever sends them.
    static let opcodes: Set<UInt16> = [parameters.opcode, HCICommand.leSetScanEnable(false, filterDuplicates: false).opcode]

    private let controller: any ControllerChannel
    private let roster: StrapRoster
    private let adapter: String
    private let logger: Logger
    private let fail: @Sendable (BluetoothSocketError) -> Void
    private var belief = Belief.unknown
    private var lastRefusal: HCICommandFailure?
    private var updating = false
    private var queued: [CheckedContinuation<Void, Never>] = []

    init(
        controller: any ControllerChannel, roster: StrapRoster, adapter: String, logger: Logger,
        fail: @escaping @Sendable (BluetoothSocketError) -> Void
    ) {
        self.controller = controller
        self.roster = roster
        self.adapter = adapter
        self.logger = logger
        self.fail = fail
    }

    /// Brings scanning in line with the roster; returns once the commands were answered.
    func update() async {
        await takeTurn()
        defer { passTurn() }
        switch (roster.scanDemand, belief) {
        case (.scan, .on), (.idle, .off), (.holdForConnection, .off), (.holdForConnection, .unknown):
            return  // an unknown scan while connecting may be the kernel's own, for that connection
        case (.scan, _):
            // Parameters can change only while scanning is off; the kernel may have left it on.
            guard await run(.leSetScanEnable(false, filterDuplicates: false), ignoringRefusal: true),
                await run(Self.parameters),
                await run(.leSetScanEnable(true, filterDuplicates: false))
            else { return }
            belief = .on
            logger.info("\(adapter): scanning for heart-rate straps")
        case (.idle, _), (.holdForConnection, .on):
            guard await run(.leSetScanEnable(false, filterDuplicates: false), ignoringRefusal: true) else { return }
            if belief == .on { logger.info("\(adapter): scanning stopped") }
            belief = .off
        }
    }

    /// Another program (the kernel) changed scanning: what hrmd set no longer holds.
    func forget() { belief = .unknown }

    /// Turns scanning off without waiting for the answer: hrmd is stopping, and its task may
    /// no longer wait.
    func stopNow() {
        guard belief != .off else { return }
        controller.post(.leSetScanEnable(false, filterDuplicates: false))
        belief = .off
    }

    /// Runs one command: true when it was taken (or refused, with `ignoringRefusal`: turning
    /// off what is already off is refused by some controllers).
    private func run(_ command: HCICommand, ignoringRefusal: Bool = false) async -> Bool {
        do {
            _ = try await controller.execute(command)
            lastRefusal = nil
            return true
        } catch {
            switch error {
            case .io(let failure):
                fail(failure)
            case .refused where ignoringRefusal:
                return true
            case .refused, .noAnswer:
                if lastRefusal != error { logger.warning("\(adapter): \(error); hrmd tries again") }
                lastRefusal = error
            case .closed:
                break
            }
            belief = .unknown
            return false
        }
    }

    private func takeTurn() async {
        if updating {
            await withCheckedContinuation { queued.append($0) }
        } else {
            updating = true
        }
    }

    private func passTurn() {
        if queued.isEmpty {
            updating = false
        } else {
            queued.removeFirst().resume()
        }
    }
}
