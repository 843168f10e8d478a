import ArgumentParser
import CLISupport
import Foundation
import HealthStore
import HealthUnits
import Timestamps

/// `hrmctl samples`: the stored samples of one type over a range.
struct SamplesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "samples",
        abstract: "Print stored samples, oldest first.",
        discussion: """
            WHEN is an RFC 3339 time (2026-11-20T10:00:00Z) or an age: 90s, 15m, 2h, 7d
            ago. A sample is in the range when it starts at or after --since and before
            --until. Tables show local time; JSON and CSV show UTC with milliseconds.

            JSON (--output json) prints one object per line, like journalctl -o json:
              {"type":"heart-rate","start":"…","end":"…","value":72,
               "unit":"count/min","source":"hrmd",
               "device":{"name":…,"identifier":…},
               "metadata":{"sensorLocation":"chest"}}
            metadata leaves out what is unknown.

            EXAMPLES
              hrmctl samples --since 15m
              hrmctl samples --type rr-interval --unit ms --since 1h --output csv
            """)

    @OptionGroup var storeOptions: StoreOptions
    @Option(help: ArgumentHelp("The sample type (see hrmctl types).", valueName: "type")) var type: String = "heart-rate"
    @Option(help: ArgumentHelp("Only samples that start at or after WHEN.", valueName: "when")) var since: String?
    @Option(help: ArgumentHelp("Only samples that start before WHEN.", valueName: "when")) var until: String?
    @Option(help: ArgumentHelp("Show values in this unit, e.g. count/s (must fit the type).", valueName: "unit")) var unit: String?
    @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table

    func validate() throws { _ = try resolved() }

    func run() throws {
        try reportingFailures {
            let (query, displayUnit) = try resolved()
            let store = try storeOptions.location.open(.existingOnly)
            let printer = SamplePrinter(format: output, unit: displayUnit)
            var count = 0
            try storeFailure {
                try store.enumerateSamples(query) { stored in
                    if count == 0 { printer.printHeader() }
                    count += 1
                    printer.print(stored)
                }
            }
            if count == 0 {
                if output == .table { print("no samples") } else { printError("no samples", program: "hrmctl") }
            }
        }
    }

    private func resolved() throws(ValidationError) -> (SampleQuery, HealthUnit) {
        guard let sampleType = SampleType(identifier: type) else {
            throw ValidationError("unknown type '\(type)' (known: \(SampleType.all.map(\.identifier).joined(separator: ", ")))")
        }
        var displayUnit = sampleType.canonicalUnit
        if let unit {
            do { displayUnit = try HealthUnit(from: unit) } catch { throw ValidationError("--unit: \(error)") }
            guard displayUnit.isCompatible(with: sampleType.canonicalUnit) else {
                throw ValidationError("unit \(unit) is not compatible with \(sampleType.identifier) (\(sampleType.canonicalUnit.unitString))")
            }
        }
        let now = Timestamp.now()
        func time(_ text: String?, _ flag: String) throws(ValidationError) -> Timestamp? {
            guard let text else { return nil }
            guard let time = TimeExpression.parse(text, now: now) else {
                throw ValidationError("\(flag) '\(text)' is not \(TimeExpression.expected)")
            }
            return time
        }
        let query = SampleQuery(type: sampleType, since: try time(since, "--since"), until: try time(until, "--until"))
        if let start = query.since, let end = query.until, end < start {
            throw ValidationError("--until (\(end)) is before --since (\(start))")
        }
        return (query, displayUnit)
    }
}
