@preconcurrency import Glibc
import HCIBackend
import SensorFrames
import Testing

@Suite("What each failure means")
struct HCIProblemTests {
    private let privileged = HCIProblem.Circumstances(kernelHasBluetooth: true, lacking: [])
    private let unprivileged = HCIProblem.Circumstances(kernelHasBluetooth: true, lacking: [.netRaw, .netAdmin])

    private func problem(_ errno: Int32, _ adapter: AdapterChoice = .index(0), _ circumstances: HCIProblem.Circumstances? = nil) -> HCIProblem {
        HCIProblem(BluetoothSocketError(call: "call", errno: errno), adapter: adapter, circumstances ?? privileged)
    }

    @Test("EAFNOSUPPORT: no Bluetooth in the kernel, or a service not allowed AF_BLUETOOTH")
    func noBluetooth() {
        let kernel = problem(EAFNOSUPPORT, .first, .init(kernelHasBluetooth: false, lacking: []))
        #expect(kernel == .noBluetooth(kernelHasBluetooth: false))
        #expect(kernel.state == .waiting(reason: "the kernel has no Bluetooth support (socket(AF_BLUETOOTH): EAFNOSUPPORT)"))
        let restricted = problem(EAFNOSUPPORT, .first, privileged)
        #expect(restricted.description.contains("RestrictAddressFamilies=") && restricted.description.contains("network namespace"))
    }

    @Test("ENODEV: no adapter, or not the one named")
    func noAdapter() {
        #expect(problem(ENODEV, .first).description == "no Bluetooth adapter")
        #expect(problem(ENODEV, .index(1)).description == "no Bluetooth adapter hci1")
    }

    @Test("down, rfkill, busy, gone")
    func adapterStates() {
        #expect(problem(ENETDOWN).description == "hci0 is down")
        #expect(HCIProblem.adapterDown(adapter: "hci0", because: "ioctl(HCIDEVUP, hci0): Connection timed out").description
            == "hci0 is down and hrmd cannot bring it up (ioctl(HCIDEVUP, hci0): Connection timed out)")
        #expect(problem(ERFKILL).description == "hci0 is blocked by rfkill (rfkill unblock bluetooth)")
        #expect(problem(EBUSY).description == "hci0 is busy: another program holds it exclusively")
        #expect(problem(EPIPE).description == "hci0 went away")
    }

    @Test("EPERM and EACCES name the missing capabilities")
    func capabilities() {
        for errno in [EPERM, EACCES] {
            #expect(problem(errno, .index(0), unprivileged) == .missingCapabilities([.netRaw, .netAdmin]))
        }
        let one = problem(EPERM, .index(0), .init(kernelHasBluetooth: true, lacking: [.netAdmin]))
        #expect(one.description.hasPrefix("hrmd lacks CAP_NET_ADMIN, which hci needs"))
        #expect(problem(EPERM, .index(0), unprivileged).description.hasPrefix("hrmd lacks CAP_NET_RAW and CAP_NET_ADMIN"))
    }

    @Test("EPERM with every capability present, and other errnos, are said as the call said them")
    func others() {
        let denied = problem(EPERM)
        #expect(denied == .failed(BluetoothSocketError(call: "call", errno: EPERM)))
        #expect(denied.description == "call: Operation not permitted")
        #expect(problem(EIO).description == "call: Input/output error")
    }

    @Test("every problem is a waiting state")
    func waiting() {
        for errno in [EAFNOSUPPORT, ENODEV, ENETDOWN, ERFKILL, EBUSY, EPIPE, EPERM, EIO] {
            guard case .waiting = problem(errno).state else {
                Issue.record("errno \(errno) is not a waiting state")
                continue
            }
        }
    }
}
