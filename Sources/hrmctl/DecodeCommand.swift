import JSONLines
import ArgumentParser
import CommandSupport
import PMDDecoding
import SensorFrames

/// `hrmctl decode`: one raw GATT value, or one Polar PMD data frame, decoded.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode one raw GATT heart-rate value, or one Polar PMD data frame (--pmd), given in hex.",
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

            With --pmd, HEX is one notification of Polar's PMD data characteristic
            (FB005C82-…): ECG (µV) or acceleration (mG per axis), raw or delta-compressed.
            It prints one JSON line with the frame's samples, oldest first, and its
            timestamp: nanoseconds since 2000-01-01T00:00:00Z on the strap's clock, the time
            of the frame's last sample:
              {"type":"ecg","timestamp_ns":599228800000000000,"microvolts":[-36,-41,…]}
              {"type":"acc","timestamp_ns":…,"millig":[[-10,984,121],…]}
            PPI frames (Verity Sense, OH1) print "type":"ppi" with "samples" of
            heartRate, intervalMs, errorEstimateMs, blocker and skinContact.

            EXAMPLES
              hrmctl decode 1648d2031a04 --output json
              hrmctl decode --characteristic 2a38 01
              hrmctl decode --pmd 00ea545c6f2e6b0b0000feffff030000
            """)

    enum Characteristic: String, ExpressibleByArgument, CaseIterable {
        case heartRateMeasurement = "2a37"
        case bodySensorLocation = "2a38"
    }

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json }

    @Option(help: "2a37 (Heart Rate Measurement) or 2a38 (Body Sensor Location).")
    var characteristic: Characteristic = .heartRateMeasurement
    @Option(help: "text or json (json with --pmd).") var output: Format = .text
    @Flag(help: "HEX is a Polar PMD data frame (ECG, acceleration, PPI); prints it as one JSON line.") var pmd = false
    @Argument(help: "The raw value in hex (several words are joined).") var hex: [String]

    func run() throws {
        try reportingFailures {
            if pmd { return try decodePMD() }
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

    private func decodePMD() throws(CommandFailure) {
        let frame: PMDDataFrame
        do {
            frame = try PMDDataFrame(bytes: try HexBytes.parse(hex.joined()))
        } catch {
            throw CommandFailure("cannot decode PMD frame: \(error)", status: .dataError)
        }
        var members: [(String, JSONValue)] = [("timestamp_ns", .integer(Int64(clamping: frame.header.timestamp)))]
        switch frame.samples {
        case .ecg(let microvolts):
            members.insert(("type", .string("ecg")), at: 0)
            members.append(("microvolts", .array(microvolts.map { .number(Double($0)) })))
        case .acc(let samples):
            members.insert(("type", .string("acc")), at: 0)
            members.append(("millig", .array(samples.map { .array([.number(Double($0.x)), .number(Double($0.y)), .number(Double($0.z))]) })))
        case .ppi(let samples):
            members.insert(("type", .string("ppi")), at: 0)
            members.append(("samples", .array(samples.map { sample in
                .object([
                    ("heartRate", .number(Double(sample.heartRate))), ("intervalMs", .number(Double(sample.intervalMs))),
                    ("errorEstimateMs", .number(Double(sample.errorEstimateMs))), ("blocker", .bool(sample.blocker)),
                    ("skinContact", .bool(sample.skinContact)),
                ])
            })))
        }
        printJSONLine(.object(members))
    }

    private func show(_ location: BodySensorLocation) {
        switch output {
        case .json: printJSONLine(.object([("sensorLocation", .string(location.name))]))
        case .text: print("sensor location  \(location.name)")
        }
    }
}
