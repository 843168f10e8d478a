import BluetoothWire
@testable import HCIBackend
import SensorFrames
import TestSupport
import Testing

/// The hci backend with hrmd's ATT client and StrapLink on the bearer, against a scripted GATT
/// server: what nothing after the backend can tell from a strap through bluetoothd.
@Suite("The hci backend through the ATT client", .timeLimit(.minutes(HangBound.suiteMinutes)))
struct HCISensorsGATTTests {
    private let strap = GATTTable(GATTTable.strapServices())

    /// On the 2a37 CCCD write: answer, send `value` as a notification, hang up.
    private func streams(_ value: [UInt8]) -> ScriptedGATTServer.Cue {
        ScriptedGATTServer.Cue(
            ATTPDU.Opcode.writeRequest, handle: strap.cccdHandle(of: .heartRateMeasurement),
            [.answer, .send(notification(.heartRateMeasurement, in: strap, value)), .hangUp])
    }

    @Test("a listed strap: the BlueZ backend's frames and states, then a drop, a backoff and a second link")
    func framesAndStates() async throws {
        let controller = ScriptedController()
        let access = ScriptedAccess(.controller(controller))
        let first = try ScriptedGATTServer(table: strap, cues: [streams([0x16, 72])])
        let second = try ScriptedGATTServer(table: strap, cues: [streams([0x16, 73])])
        access.connect(to: first.clientDescriptor, second.clientDescriptor)
        let delivered = Delivered()
        let polar = Straps.polar.description
        // The servers serve while held: however late the backend reaches them on a busy machine.
        defer { withExtendedLifetime((first, second)) {} }
        try await withBackend(access: access, link: HCISensors.strapLink, settings: .init(addresses: [Straps.polar]), delivered: delivered) {
            for round in 1...2 {
                try await controller.advertise([Straps.report(Straps.polar)], until: "link \(round) ends") {
                    delivered.kinds(of: polar).filter { $0 == .disconnected }.count == round
                }
            }
        }
        let summary = delivered.frames(of: polar).map { frame in
            [frame.kind.name, frame.characteristic?.description, frame.value.isEmpty ? nil : HexBytes.string(frame.value)]
                .compactMap { $0 }.joined(separator: " ")
        }
        let link = ["connected"] + strapReads(battery: "57") + ["notify 2a37 1648", "disconnected"]
        #expect(Array(summary.prefix(link.count)) == link)
        #expect(delivered.transports == [.ble])
        let states = delivered.states(of: polar)
        #expect(Array(states.prefix(3)) == [.searching, .connecting, .streaming])
        guard states.count > 3, case .backingOff(_, "the strap closed the link") = states[3] else {
            Issue.record("not backing off after the drop: \(states)")
            return
        }
    }
}
