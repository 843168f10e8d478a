@preconcurrency import Glibc
import JSONLines
import CommandSupport
import Foundation
import HealthModel
import HealthRequests
import HealthStore
import HealthUnits
import Timestamps

/// Prints samples as a table (local time), JSON Lines or CSV (UTC, milliseconds). JSON and
/// CSV lines are gathered and written in blocks: call `flush()` when a run of samples is
/// printed.
final class SamplePrinter {
    let format: OutputFormat
    let type: SampleType
    let unit: HealthUnit
    /// Whether samples come from gateways: the table and CSV add a gateway column (JSON has a
    /// `gateway` key on each such sample whatever this says).
    let showsGateway: Bool
    private var lines: SampleLineFormatter
    private let buffer = LineBuffer()
    /// Made for the first table row: JSON and CSV never need the time zone's calendar.
    private lazy var localTime: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        return formatter
    }()

    /// `people`: whose samples are whose, for JSON's `person`.
    init(format: OutputFormat, type: SampleType, unit: HealthUnit, showsGateway: Bool = false, people: PersonLookup? = nil) {
        self.format = format
        self.type = type
        self.unit = unit
        self.showsGateway = showsGateway
        lines = SampleLineFormatter(format == .csv ? .csv : .json, type: type, unit: unit, people: people)
    }

    /// Writes the lines gathered so far.
    func flush() {
        buffer.write(to: stdout)
        fflush(stdout)
    }

    func printHeader() {
        switch format {
        case .json: break
        case .csv: Swift.print(SampleLineFormatter.csvHeader(showsGateway: showsGateway))
        case .table:
            Swift.print("START (local)            VALUE  UNIT       DEVICE             LOCATION" + (showsGateway ? "  GATEWAY" : ""))
        }
    }

    /// Contexts of the samples printed one by one (`hrmctl watch`).
    private var sampleContexts = SampleContexts()

    /// Prints a sample that came alone rather than from a query.
    func print(_ stored: StoredSample) {
        let point = sampleContexts.point(of: stored)
        print(point, sampleContexts)
    }

    func print(_ point: StoredPoint, _ contexts: SampleContexts) {
        switch format {
        case .json, .csv:
            lines.append(point, contexts: contexts, to: buffer)
            buffer.writeIfFull(to: stdout)
        case .table:
            let sample = StoredSample(point, type: type, contexts: contexts).sample
            let value = DisplayNumber(value: (try? sample.quantity.doubleValue(for: unit)) ?? .nan)
            let start = localTime.string(from: Date(timeIntervalSince1970: sample.start.secondsSinceEpoch))
            var cells = [
                start.padding(toLength: 23, withPad: " ", startingAt: 0),
                String(repeating: " ", count: max(0, 7 - value.description.count)) + value.description,
                unit.unitString.padding(toLength: 9, withPad: " ", startingAt: 0),
                TerminalText.escaped(sample.device?.localIdentifier ?? "-").padding(toLength: 17, withPad: " ", startingAt: 0),
                sample.metadata.sensorLocation?.name ?? "-",
            ]
            if showsGateway {
                cells[4] = cells[4].padding(toLength: 8, withPad: " ", startingAt: 0)
                cells.append(TerminalText.escaped(StoredSample(point, type: type, contexts: contexts).gateway ?? "-"))
            }
            Swift.print(cells.joined(separator: "  "))
        }
    }
}

extension SampleJSON {
    /// The members after `value`, which the samples of one chunk share: unit, source, device
    /// and metadata; and `gateway`, last, for a sample of the central store (the gateway that
    /// sent it). `SampleLineFormatter` writes the lines.
    static func context(of context: SampleContext, unit: HealthUnit) -> [(String, JSONValue)] {
        var members = members(
            unit: unit.unitString, source: context.source.name, device: context.device,
            metadata: SampleRecord.Metadata(context.metadata))
        if let gateway = context.gateway { members.append(("gateway", .string(gateway))) }
        return members
    }
}
