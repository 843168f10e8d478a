import ArgumentParser
import StoreTransport
import CommandSupport
import Foundation
import HealthModel
import HealthStore
import HealthUnits
import Timestamps

/// `hrmctl samples`: the stored samples of one type over a range.
struct SamplesCommand: AsyncParsableCommand {
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
              hrmctl samples --person ann --since 2h --output json
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var range: RangeOptions
    @Option(help: ArgumentHelp("Only this device (its identifier, see hrmctl devices).", valueName: "id")) var device: String?
    @Option(help: ArgumentHelp("Only this person's samples: their straps', each within its assignment (see hrmctl person).", valueName: "name"))
    var person: String?
    @Option(help: ArgumentHelp("Only this source (see hrmctl sources).", valueName: "name")) var source: String?
    @Option(help: ArgumentHelp("At most this many samples.", valueName: "n")) var limit: Int?
    @Flag(help: "Newest first.") var reverse = false
    @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table

    func validate() throws {
        _ = try range.resolved()
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() async throws {
        try await reportingFailures {
            var (query, displayUnit) = try range.resolved()
            query.device = device
            query.source = source
            query.newestFirst = reverse
            let store = try storeOptions.access()
            var filter = try await PersonFilter.make(person, store: store)
            // A person's samples are counted after the filter; anyone's by the query.
            query.limit = filter == nil ? limit : nil
            // The filter already read whose samples are whose.
            let people = output != .json ? nil : filter != nil ? filter?.lookup : try await store.personLookup()
            let printer = SamplePrinter(format: output, type: query.type, unit: displayUnit, showsGateway: store.showsGateways, people: people)
            var count = 0
            try await store.enumeratePoints(query) { point, contexts in
                if filter != nil {
                    guard limit.map({ count < $0 }) ?? true, filter?.keeps(device: contexts[point.context].device?.localIdentifier, start: point.start) == true
                    else { return }
                }
                if count == 0 { printer.printHeader() }
                count += 1
                printer.print(point, contexts)
            }
            printer.flush()
            if count == 0 {
                if output == .table { print("no samples") } else { printError("no samples", program: "hrmctl") }
            }
        }
    }
}
