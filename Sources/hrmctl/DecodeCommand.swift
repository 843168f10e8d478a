import JSONLines
import ArgumentParser
import CommandSupport
import SensorFrames

/// `hrmctl decode`: one raw GATT value, decoded.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode one raw GATT heart-rate value given in hex.",
        discussion: """
            HEX may be written 164a0004, "16 4a 00 04", 16:4a:00:04 or 0x164a0004. A
            value that does not decode is exit 65 with a one-line reason.

            JSON for 2a37:
              {"heartRate":85,"sensorContact":"detected","energyExpended":50,
               "rrIntervals":[0.0322265625]}
            energyExpended is in kJ (null when absent); rrIntervals in seconds
            (raw / 1024), oldest first; sensorContact is unsupported, notDetected
            or detected.
            JSON for 2a38: {"sensorLocation":"chest"}

            EXAMPLES
              hrmctl decode 1648d2031a04 --output json
              hrmctl decode --characteristic 2a38 01
            """)

    enum Characteristic: String, ExpressibleByArgument, CaseIterable {
        case heartRateMeasurement = "2a37"
        case bodySensorLocation = "2a38"
    }

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json }

    @Option(help: "2a37 (Heart Rate Measurement) or 2a38 (Body Sensor Location).")
    var characteristic: Characteristic = .heartRateMeasurement
    @Option(help: "text or json.") var output: Format = .text
    @Argument(help: "The raw value in hex (several words are joined).") var hex: [String]

    func run() throws {
        try reportingFailures {
            do {
                let bytes = try HexBytes.parse(hex.joined())
                switch characteristic {
                case .heartRateMeasurement: show(try HeartRateMeasurement(decoding: bytes))
                case .bodySensorLocation: show(try BodySensorLocation(decoding: bytes))
                }
            } catch {
                throw CommandFailure("cannot decode \(characteristic.rawValue) value: \(error)", status: .dataError)
            }
        }
    }

    private func show(_ measurement: HeartRateMeasurement) {
        switch output {
        case .json:
            printJSONLine(.object([
                ("heartRate", .number(Double(measurement.heartRate))),
                ("sensorContact", .string(measurement.sensorContact.rawValue)),
                ("energyExpended", measurement.energyExpended.map { .number(Double($0)) } ?? .null),
                ("rrIntervals", .array(measurement.rrIntervalSeconds.map(JSONValue.number))),
            ]))
        case .text:
            print("heart rate       \(measurement.heartRate) count/min")
            print("sensor contact   \(measurement.sensorContact.rawValue)")
            print("energy expended  \(measurement.energyExpended.map { "\($0) kJ" } ?? "not present")")
            let rr = measurement.rrIntervalSeconds.map { DisplayNumber(value: $0).description + " s" }
            print("RR intervals     \(rr.isEmpty ? "none" : rr.joined(separator: ", "))")
        }
    }

    private func show(_ location: BodySensorLocation) {
        switch output {
        case .json: printJSONLine(.object([("sensorLocation", .string(location.name))]))
        case .text: print("sensor location  \(location.name)")
        }
    }
}
