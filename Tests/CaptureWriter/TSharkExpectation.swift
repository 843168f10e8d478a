import BluetoothWire
import TestSupport

/// What `tshark -T fields` must print for a `StrapCapture`, column for column, in the layout
/// of the queries in Tests/captures/check-captures.sh.
struct TSharkExpectation {
    let capture: StrapCapture
    let session: StrapCapture.Session
    /// Whether the capture is whole (a truncated one ends inside its last record).
    let whole: Bool

    /// The ATT query's rows: time, opcode, handle, UUID, heart rate, energy, RR intervals,
    /// location, battery, device name, manufacturer, model, hardware, firmware, software, raw
    /// value. Without discovery in the capture Wireshark knows no handle's UUID and shows the
    /// raw value.
    var attRows: [String] {
        let mapped = capture.includesDiscovery
        var rows = session.reads.map { read in row(read, opcode: 0x0B, columns: [Self.readColumn[read.uuid] ?? 15: text(of: read)]) }
        var measurements = capture.measurements.makeIterator()
        for notification in session.notifications {
            guard mapped else {
                rows.append(row(notification, opcode: 0x1B, mapped: false, columns: [15: hex(notification.value)]))
                continue
            }
            if notification.uuid == 0x2A37, let measurement = measurements.next() {
                rows.append(row(notification, opcode: 0x1B, columns: [
                    4: "\(measurement.heartRate)", 5: measurement.energy.map { "\($0)" } ?? "",
                    6: measurement.rrIntervals.map { "\($0)" }.joined(separator: ","),
                ]))
            } else {
                rows.append(row(notification, opcode: 0x1B, columns: [Self.readColumn[notification.uuid] ?? 15: text(of: notification)]))
            }
        }
        return rows
    }

    /// The link query's rows: time, event code, LE subevent, connection handle, peer address.
    var linkRows: [String] {
        var rows: [String] = []
        if let time = session.connectedAt {
            rows.append([seconds(time), "0x3e", capture.enhancedConnection ? "0x0a" : "0x01", hex16(capture.connectionHandle),
                         StrapCapture.strap.description.lowercased()].joined(separator: "\t"))
        }
        if whole {
            rows.append([seconds(session.disconnectedAt), "0x05", "", hex16(capture.connectionHandle), ""].joined(separator: "\t"))
        }
        return rows
    }

    /// The column of the field Wireshark dissects each characteristic's value into.
    private static let readColumn: [UInt16: Int] = [
        0x2A38: 7, 0x2A19: 8, 0x2A00: 9, 0x2A29: 10, 0x2A24: 11, 0x2A27: 12, 0x2A26: 13, 0x2A28: 14,
    ]

    /// The value as Wireshark prints its field: the location as a hex enumeration, the
    /// battery level in decimal, strings as they are.
    private func text(of value: StrapCapture.Value) -> String {
        switch value.uuid {
        case 0x2A38: "0x" + hex(value.value)
        case 0x2A19: value.value.map { "\($0)" }.joined()
        default: String(decoding: value.value, as: UTF8.self)
        }
    }

    private func row(_ value: StrapCapture.Value, opcode: UInt8, mapped: Bool = true, columns: [Int: String]) -> String {
        var fields = [seconds(value.time), "0x" + hex([opcode]), hex16(value.handle), mapped ? hex16(value.uuid) : ""]
        fields += (4...15).map { columns[$0] ?? "" }
        return fields.joined(separator: "\t")
    }

    private func seconds(_ microseconds: Int64) -> String {
        let fraction = String(microseconds % 1_000_000)
        return "\(microseconds / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction + "000"
    }

    private func hex16(_ value: UInt16) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { $0 < 0x10 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
