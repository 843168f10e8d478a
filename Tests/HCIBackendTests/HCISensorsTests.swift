import BluetoothWire
@preconcurrency import Glibc
@testable import HCIBackend
import SensorBackend
import SensorFrames
import TestSupport
import Testing

@Suite("The hci backend on scripted adapters", .timeLimit(.minutes(HangBound.suiteMinutes)))
struct HCISensorsTests {
    private let polar = Straps.polar.description
    private let scanOff = HCICommand.leSetScanEnable(false, filterDuplicates: false)
    private let scanOn = HCICommand.leSetScanEnable(true, filterDuplicates: false)

    private func isWaiting(_ state: SensorState?, _ reason: String) -> Bool { state == .waiting(reason: reason) }

    private func streaming(_ delivered: Delivered, _ device: String) -> Bool { delivered.states(of: device).last == .streaming }

    @Test("problems opening the adapter are waiting states, retried until the adapter opens")
    func problemsWaitedOut() async throws {
        let controller = ScriptedController()
        let access = ScriptedAccess(
            .problem(.noBluetooth(kernelHasBluetooth: false)), .problem(.noAdapter(.first)), .problem(.missingCapabilities([.netRaw])),
            .controller(controller))
        let delivered = Delivered()
        try await withBackend(access: access, settings: .init(anyStrap: true), delivered: delivered) {
            try await eventually("the adapter opens") { delivered.states(of: "hci").last == .searching }
        }
        let reasons = delivered.states(of: "hci").compactMap { state -> String? in
            if case .waiting(let reason) = state { return reason }
            return nil
        }
        #expect(reasons == [
            "the kernel has no Bluetooth support (socket(AF_BLUETOOTH): EAFNOSUPPORT)", "no Bluetooth adapter",
            "hrmd lacks CAP_NET_RAW, which hci needs (install the hci drop-in, or setcap cap_net_raw,cap_net_admin+ep on hrmd)",
        ])
        #expect(access.opened == 4)
        #expect(delivered.transports == [.ble])
    }

    @Test("a problem concerns the listed straps, not the backend's name")
    func problemOnListedStraps() async throws {
        let access = ScriptedAccess(.problem(.adapterBusy(adapter: "hci1")))
        let delivered = Delivered()
        try await withBackend(access: access, settings: .init(adapter: .index(1), addresses: [Straps.polar]), delivered: delivered) {
            try await eventually("the strap waits") { isWaiting(delivered.states(of: polar).last, "hci1 is busy: another program holds it exclusively") }
        }
        #expect(delivered.states(of: "hci:hci1").isEmpty)
        #expect(HCISensors(settings: .init(adapter: .index(1))).name == "hci:hci1")
        #expect(HCISensors(settings: .init()).name == "hci")
    }

    @Test("a listed strap: heard, connected (scanning held), streaming, dropped, backed off, and back")
    func listedStrapLifecycle() async throws {
        let controller = ScriptedController()
        let access = ScriptedAccess(.controller(controller))
        let links = ScriptedLinks()
        let delivered = Delivered()
        try await withBackend(access: access, links: links, settings: .init(addresses: [Straps.polar]), delivered: delivered) {
            try await eventually("scanning") { controller.commands.contains(scanOn) }
            #expect(controller.commands.prefix(3) == [scanOff, ScanSwitch.parameters, scanOn])
            try await controller.advertise([Straps.report(Straps.polar)], until: "streaming") { streaming(delivered, polar) }
            #expect(access.connects.first?.addressType == .random)
            #expect(controller.commands.last == scanOff, "scanning stops for the connection and stays off: nothing else is missing")
            // Searching may last only a moment (the strap's last advertisement is still fresh),
            // so the check counts searches instead of looking at the latest state.
            let searches = delivered.states(of: polar).filter { $0 == .searching }.count
            links.drop()
            try await eventually("searching again") { delivered.states(of: polar).filter { $0 == .searching }.count > searches }
            try await controller.advertise([Straps.report(Straps.polar)], until: "streaming again") {
                streaming(delivered, polar) && access.connects.count == 2
            }
        }
        let states = delivered.states(of: polar)
        #expect(Array(states.prefix(3)) == [.searching, .connecting, .streaming])
        guard states.count > 3, case .backingOff(_, "the strap disconnected") = states[3] else {
            Issue.record("not backing off after the drop: \(states)")
            return
        }
        #expect(delivered.kinds(of: polar).prefix(4) == [.connected, .notify, .disconnected, .connected])
    }

    @Test("a failed connection backs off with the reason, and hears the strap again")
    func connectionFailure() async throws {
        let controller = ScriptedController()
        let access = ScriptedAccess(.controller(controller))
        access.failConnects(BluetoothSocketError(call: "connect", errno: ETIMEDOUT))
        let delivered = Delivered()
        try await withBackend(access: access, settings: .init(addresses: [Straps.polar]), delivered: delivered) {
            try await eventually("scanning") { controller.commands.contains(scanOn) }
            try await controller.advertise([Straps.report(Straps.polar)], until: "searching after the failure") {
                delivered.states(of: polar).count >= 4
            }
            try await controller.advertise([Straps.report(Straps.polar)], until: "streaming") { streaming(delivered, polar) }
        }
        let failed = delivered.states(of: polar).first {
            if case .backingOff(_, let reason) = $0 { return reason.contains("the strap did not answer") }
            return false
        }
        #expect(failed != nil, "\(delivered.states(of: polar))")
    }

    @Test("a link that comes up for a strap whose attempt gave up is disconnected; one for an address not followed is left alone")
    func orphanLinkDisconnected() async throws {
        let controller = ScriptedController()
        let delivered = Delivered()
        @Sendable func linkUp(_ peer: BluetoothAddress, handle: UInt16) -> HCIEvent {
            .leConnectionComplete(
                LEConnectionComplete(
                    status: 0, handle: handle, role: .central, peerAddressType: .public, peer: peer, interval: 24, latency: 0,
                    supervisionTimeout: 400))
        }
        let stranger = try #require(BluetoothAddress("C0:FF:EE:00:00:99"))
        try await withBackend(access: ScriptedAccess(.controller(controller)), settings: .init(addresses: [Straps.polar]), delivered: delivered) {
            try await eventually("searching") { delivered.states(of: polar).last == .searching }
            controller.send(linkUp(stranger, handle: 0x12))
            controller.send(linkUp(Straps.polar, handle: 0x11))
            try await eventually("the strap's orphaned link disconnected") { controller.commands.contains(.disconnect(handle: 0x11)) }
            // Events are handled in order: the stranger's link was handled before the strap's.
        }
        #expect(!controller.commands.contains(.disconnect(handle: 0x12)))
    }

    @Test("connection-parameter requests are answered as asked, or refused outside the spec")
    func parameterRequests() async throws {
        let controller = ScriptedController()
        let delivered = Delivered()
        let invalid = ConnectionParameters(minimumInterval: 2, maximumInterval: 1, latency: 0, supervisionTimeout: 10)
        try await withBackend(access: ScriptedAccess(.controller(controller)), settings: .init(addresses: [Straps.polar]), delivered: delivered) {
            controller.send(.leRemoteConnectionParameterRequest(handle: 0x40, Straps.validRequest))
            controller.send(.leRemoteConnectionParameterRequest(handle: 0x41, invalid))
            try await eventually("both answered") {
                controller.commands.contains(.leRemoteConnectionParameterRequestReply(handle: 0x40, Straps.validRequest))
                    && controller.commands.contains(.leRemoteConnectionParameterRequestNegativeReply(handle: 0x41, reason: 0x3B))
            }
        }
    }

    @Test("the controller refusing an answer (the kernel answered first) ends nothing")
    func refusedAnswer() async throws {
        let controller = ScriptedController()
        let access = ScriptedAccess(.controller(controller))
        let answer = HCICommand.leRemoteConnectionParameterRequestReply(handle: 0x40, Straps.validRequest)
        controller.refuse(answer.opcode, with: .refused(opcode: answer.opcode, status: 0x02))
        let delivered = Delivered()
        try await withBackend(access: access, settings: .init(addresses: [Straps.polar]), delivered: delivered) {
            controller.send(.leRemoteConnectionParameterRequest(handle: 0x40, Straps.validRequest))
            try await eventually("answered") { controller.commands.contains(answer) }
            try await controller.advertise([Straps.report(Straps.polar)], until: "streaming") { streaming(delivered, polar) }
        }
        #expect(access.opened == 1)
    }

    @Test("any strap: a heart-rate advertiser is connected, a kettle is not")
    func anyStrap() async throws {
        let controller = ScriptedController()
        let access = ScriptedAccess(.controller(controller))
        let delivered = Delivered()
        try await withBackend(access: access, settings: .init(anyStrap: true), delivered: delivered) {
            try await eventually("searching") { delivered.states(of: "hci").last == .searching }
            try await controller.advertise([Straps.report(Straps.kettle, Straps.otherData), Straps.report(Straps.garmin)], until: "streaming") {
                streaming(delivered, Straps.garmin.description)
            }
        }
        #expect(access.connects.map(\.address) == [Straps.garmin])
        #expect(delivered.states(of: Straps.kettle.description).isEmpty)
    }

    @Test("listed straps only: a neighbour's strap is never connected")
    func neighbourIgnored() async throws {
        let controller = ScriptedController()
        let access = ScriptedAccess(.controller(controller))
        let delivered = Delivered()
        try await withBackend(access: access, settings: .init(addresses: [Straps.polar]), delivered: delivered) {
            try await eventually("scanning") { controller.commands.contains(scanOn) }
            try await controller.advertise([Straps.report(Straps.neighbour), Straps.report(Straps.polar)], until: "streaming") {
                streaming(delivered, polar)
            }
        }
        #expect(access.connects.map(\.address) == [Straps.polar])
    }

    @Test("nothing admitted: the backend says how to list straps, and does not scan")
    func nothingAdmitted() async throws {
        let controller = ScriptedController()
        let delivered = Delivered()
        try await withBackend(access: ScriptedAccess(.controller(controller)), settings: .init(), delivered: delivered) {
            try await eventually("the advice") { isWaiting(delivered.states(of: "hci").last, StrapAdmission.nothingAdmitted) }
            controller.send(.leAdvertisingReports([Straps.report(Straps.polar)]))
            // The backend handles the controller's events in order: once it has answered the
            // event sent after the report, it has handled the report (and started whatever the
            // report made it start, a scan included).
            controller.send(.leRemoteConnectionParameterRequest(handle: 0x40, Straps.validRequest))
            let answer = HCICommand.leRemoteConnectionParameterRequestReply(handle: 0x40, Straps.validRequest)
            try await eventually("the answer to the event after the report") { controller.commands.contains(answer) }
        }
        #expect(!controller.commands.contains(scanOn))
    }

    @Test("the adapter going away is a waiting state, and the adapter is opened again")
    func adapterGone() async throws {
        let first = ScriptedController(), second = ScriptedController()
        let access = ScriptedAccess(.controller(first), .controller(second))
        let delivered = Delivered()
        try await withBackend(access: access, settings: .init(addresses: [Straps.polar]), delivered: delivered) {
            try await eventually("scanning") { first.commands.contains(scanOn) }
            first.hangUp(BluetoothSocketError(call: "recv(hci0)", errno: EPIPE))
            try await eventually("scanning on the new one") { second.commands.contains(scanOn) }
        }
        #expect(delivered.states(of: polar).contains(.waiting(reason: "hci0 went away")))
    }

    @Test("a socket refusing a command (the adapter is down) ends the adapter's lifetime")
    func socketRefusal() async throws {
        let first = ScriptedController(), second = ScriptedController()
        first.refuse(0x200C, with: .io(BluetoothSocketError(call: "hci_send_cmd", errno: ENETDOWN)))
        let access = ScriptedAccess(.controller(first), .controller(second))
        let delivered = Delivered()
        try await withBackend(access: access, settings: .init(addresses: [Straps.polar]), delivered: delivered) {
            try await eventually("scanning on the new one") { second.commands.contains(scanOn) }
        }
        #expect(delivered.states(of: polar).contains(.waiting(reason: "hci0 is down")))
    }

    @Test("the kernel changing scanning makes hrmd set it again; stopping turns it off")
    func kernelScanning() async throws {
        let controller = ScriptedController()
        let delivered = Delivered()
        try await withBackend(access: ScriptedAccess(.controller(controller)), settings: .init(addresses: [Straps.polar]), delivered: delivered) {
            try await eventually("scanning") { controller.commands.contains(scanOn) }
            controller.send(.commandComplete(opcode: scanOn.opcode, returnParameters: [0]))
            try await eventually("scanning set again") { controller.commands.filter { $0 == scanOn }.count == 2 }
        }
        #expect(controller.commands.last == scanOff)
    }
}
