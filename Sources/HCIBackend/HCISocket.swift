import BluetoothWire
import CBluetooth
import Foundation
@preconcurrency import Glibc
import ReaderThreads

/// A raw HCI socket bound to one adapter (`hci_open_dev`) and filtered to the events hrmd
/// follows: LE meta events (advertising reports, connections, parameter requests), Command
/// Complete and Command Status (the answers to commands) and Disconnection Complete.
///
/// Commands go out with `hci_send_cmd`; events are read on a thread of their own that polls
/// the socket beside a wake-up pipe, so a quiet adapter never blocks the cooperative pool. The
/// descriptor closes when the last reference goes (the reading thread holds one until it stops).
final class HCISocket: Sendable {
    /// N of hciN.
    let adapter: UInt16
    private let descriptor: Int32
    private let wakeUp: WakeUpPipe

    /// The events the filter lets through.
    static let followedEvents: [Int32] = [EVT_LE_META_EVENT, EVT_CMD_COMPLETE, EVT_CMD_STATUS, EVT_DISCONN_COMPLETE]

    /// Opens the adapter's HCI socket and sets the filter. EBUSY: another program holds the
    /// adapter exclusively (an HCI user channel); ENODEV: there is no such adapter.
    init(adapter: UInt16) throws(BluetoothSocketError) {
        let descriptor = hci_open_dev(Int32(adapter))
        guard descriptor >= 0 else { throw .last("hci_open_dev(hci\(adapter))") }
        do {
            try Self.filterEvents(on: descriptor)
            wakeUp = try .forSocket()
        } catch {
            hci_close_dev(descriptor)
            throw error
        }
        self.adapter = adapter
        self.descriptor = descriptor
    }

    /// Takes over `descriptor`, a connected socket that speaks the HCI socket's packets (one
    /// end of a socketpair in tests), without a filter.
    init(descriptor: Int32, adapter: UInt16) throws(BluetoothSocketError) {
        do {
            wakeUp = try .forSocket()
        } catch {
            close(descriptor)
            throw error
        }
        self.adapter = adapter
        self.descriptor = descriptor
    }

    deinit { hci_close_dev(descriptor) }

    private static func filterEvents(on descriptor: Int32) throws(BluetoothSocketError) {
        var filter = hci_filter()
        hci_filter_clear(&filter)
        hci_filter_set_ptype(Int32(HCI_EVENT_PKT), &filter)
        for event in followedEvents { hci_filter_set_event(event, &filter) }
        guard setsockopt(descriptor, SOL_HCI, HCI_FILTER, &filter, socklen_t(MemoryLayout<hci_filter>.size)) == 0 else {
            throw .last("setsockopt(SOL_HCI, HCI_FILTER)")
        }
    }

    /// Sends `command` (`hci_send_cmd`). EPERM: CAP_NET_RAW is missing; ENETDOWN: the
    /// adapter is down.
    func send(_ command: HCICommand) throws(BluetoothSocketError) {
        var parameters = command.parameters
        guard let length = UInt8(exactly: parameters.count) else { throw BluetoothSocketError(call: "hci_send_cmd", errno: EINVAL) }
        guard hci_send_cmd(descriptor, command.ogf, command.ocf, length, &parameters) == 0 else { throw .last("hci_send_cmd") }
    }

    /// Reads event packets until ``stop()`` or until the socket fails, on a thread of its own:
    /// `deliver` gets each event packet without its H4 type byte, in order, on that thread;
    /// `finished` comes last, with the failure (nil after ``stop()``). EPIPE: the adapter was
    /// removed.
    func startReading(
        deliver: @escaping @Sendable ([UInt8]) -> Void, finished: @escaping @Sendable (BluetoothSocketError?) -> Void
    ) {
        let thread = Thread { [self] in
            finished(readUntilStopped(deliver))
        }
        thread.name = "hci\(adapter) events"
        thread.start()
    }

    /// Ends the reading (and so, once the last reference goes, closes the socket).
    func stop() { wakeUp.signal() }

    private func readUntilStopped(_ deliver: ([UInt8]) -> Void) -> BluetoothSocketError? {
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let readiness: WakeUpPipe.Readiness
            do {
                readiness = try wakeUp.wait(for: descriptor)
            } catch {
                return BluetoothSocketError(error)
            }
            if readiness == .wokenUp { return nil }
            // Readable, or failed (then the read fetches the socket's error).
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR {
                    if readiness == .hungUp { return BluetoothSocketError(call: "recv(hci\(adapter))", errno: EPIPE) }
                    continue
                }
                return .last("recv(hci\(adapter))")
            }
            if count == 0 { return BluetoothSocketError(call: "recv(hci\(adapter))", errno: EPIPE) }
            if buffer[0] == UInt8(HCI_EVENT_PKT) { deliver(Array(buffer[1..<count])) }
        }
    }
}
