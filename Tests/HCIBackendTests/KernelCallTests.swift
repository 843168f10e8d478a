import BluetoothWire
import Foundation
@preconcurrency import Glibc
@testable import HCIBackend
import Testing

/// Whether this kernel has Bluetooth sockets at all; the kernel these tests were written on has none.
private let kernelHasNoBluetooth: Bool = {
    let probe = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), 1)
    defer { if probe >= 0 { close(probe) } }
    return probe < 0 && errno == EAFNOSUPPORT
}()

/// The libbluetooth-facing layer: each call fails with a typed error naming the call and its
/// errno. On a kernel without Bluetooth every one of them meets EAFNOSUPPORT, which is what
/// these tests check there.
@Suite("Kernel calls without Bluetooth", .enabled(if: kernelHasNoBluetooth, "this kernel has Bluetooth sockets"))
struct KernelCallTests {
    private func expectNoBluetooth(_ call: String, _ body: () throws(BluetoothSocketError) -> Void) {
        do {
            try body()
            Issue.record("\(call) succeeded on a kernel without Bluetooth")
        } catch {
            #expect(error == BluetoothSocketError(call: call, errno: EAFNOSUPPORT), "\(error)")
        }
    }

    @Test("socket(AF_BLUETOOTH) fails with EAFNOSUPPORT")
    func sockets() {
        expectNoBluetooth("socket(AF_BLUETOOTH)") { () throws(BluetoothSocketError) in try HCIAdapters.checkSockets() }
    }

    @Test("hci_get_route finds no adapter: EAFNOSUPPORT, not a crash")
    func route() {
        expectNoBluetooth("hci_get_route") { () throws(BluetoothSocketError) in _ = try HCIAdapters.firstUp() }
    }

    @Test("HCIGETDEVLIST, hci_devinfo and HCIDEVUP each say which call failed")
    func adapterCalls() {
        expectNoBluetooth("socket(AF_BLUETOOTH)") { () throws(BluetoothSocketError) in _ = try HCIAdapters.all() }
        expectNoBluetooth("hci_devinfo(hci0)") { () throws(BluetoothSocketError) in _ = try HCIAdapters.info(0) }
        expectNoBluetooth("hci_devinfo(hci7)") { () throws(BluetoothSocketError) in _ = try HCIAdapters.info(7) }
        expectNoBluetooth("socket(AF_BLUETOOTH)") { () throws(BluetoothSocketError) in try HCIAdapters.bringUp(0) }
    }

    @Test("finding the first adapter gives up with hci_get_route's error")
    func findFirst() {
        expectNoBluetooth("hci_get_route") { () throws(BluetoothSocketError) in _ = try KernelHCI.find(.first) }
        expectNoBluetooth("hci_devinfo(hci2)") { () throws(BluetoothSocketError) in _ = try KernelHCI.find(.index(2)) }
    }

    @Test("hci_open_dev fails with EAFNOSUPPORT")
    func openDevice() {
        expectNoBluetooth("hci_open_dev(hci0)") { () throws(BluetoothSocketError) in _ = try HCISocket(adapter: 0) }
    }

    @Test("the L2CAP socket fails with EAFNOSUPPORT before any connect")
    func l2cap() async throws {
        let strap = try #require(BluetoothAddress("AA:BB:CC:DD:EE:01"))
        do {
            _ = try await L2CAPSocket.connectATT(from: strap, to: strap, addressType: .random, timeout: .seconds(1))
            Issue.record("an L2CAP socket on a kernel without Bluetooth")
        } catch {
            #expect(error == BluetoothSocketError(call: "socket(AF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP)", errno: EAFNOSUPPORT))
        }
    }

    @Test("opening the adapter is the no-Bluetooth problem, in words")
    func openAdapter() async {
        do {
            _ = try await KernelHCI().open(.first, logger: .init(label: "test"))
            Issue.record("an adapter opened on a kernel without Bluetooth")
        } catch {
            #expect(error == .noBluetooth(kernelHasBluetooth: HCIAdapters.kernelHasBluetooth))
            #expect(error.state == .waiting(reason: "the kernel has no Bluetooth support (socket(AF_BLUETOOTH): EAFNOSUPPORT)"))
        }
    }
}

@Suite("Capabilities")
struct CapabilityTests {
    @Test("capget's effective set is the one /proc/self/status shows")
    func effectiveSet() throws {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("CapEff:") })
        let shown = try #require(UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16))
        #expect(try CapabilitySet.effective().mask == shown)
    }

    @Test("the lacking capabilities are named in order: CAP_NET_RAW, then CAP_NET_ADMIN")
    func lacking() {
        #expect(CapabilitySet(mask: 0).lacking() == [.netRaw, .netAdmin])
        #expect(CapabilitySet(mask: 1 << 13).lacking() == [.netAdmin])
        #expect(CapabilitySet(mask: 1 << 12).lacking() == [.netRaw])
        #expect(CapabilitySet(mask: 1 << 12 | 1 << 13).lacking().isEmpty)
        #expect(CapabilitySet(mask: ~0).lacking().isEmpty)
        #expect(CapabilitySet(mask: 0).lacking().map(\.description) == ["CAP_NET_RAW", "CAP_NET_ADMIN"])
    }
}
