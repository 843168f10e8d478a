@preconcurrency import Glibc
import ArgumentParser
import StoreTransport
import CommandSupport
import Foundation
import HealthModel
import HealthRequests
import HealthStore
import HealthUnits
import JSONLines
import Timestamps

/// `hrmctl watch`: follows new samples (or events) as hrmd stores them.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow new samples (or events) as they are stored, with a live line and a sparkline.",
        discussion: """
            Follows the changes after the newest one (an anchored query): through the store
            service (the default) it is told of each change (SamplesChanged), with no
            polling; a store file (--store, $HRMD_STORE) is polled every --interval seconds. On a terminal it keeps one live line: the latest value, its device, and
            a sparkline of the last 30. Otherwise, and with --output json, it prints one line
            per new sample (the JSON of "hrmctl samples"), for scripts. Ctrl-C ends it;
            --duration ends it after that many seconds.

            With an event type (--type high-heart-rate-event, low-heart-rate-event,
            sensor-contact-lost, strap-battery-low, strap-disconnected) it prints a line each time an event of it
            opens and again when it ends (json: the object of "hrmctl events", with "end" once
            it ended); events open when it starts are told when they end. Through the service
            it is told of each (SamplesChanged); a store file is read every --interval seconds.

            EXAMPLES
              hrmctl watch
              hrmctl watch --output json | jq .value
              hrmctl watch --type high-heart-rate-event --output json
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case live, table, json }

    @OptionGroup var storeOptions: StoreOptions
    @Option(help: ArgumentHelp("The sample type (see hrmctl types).", valueName: "type")) var type: String = "heart-rate"
    @Option(help: ArgumentHelp("Only this device.", valueName: "id")) var device: String?
    @Option(help: "live (a terminal line), table (a line per sample) or json. Default: live on a terminal, else table.")
    var output: Format?
    @Option(help: ArgumentHelp("Seconds between polls of a store file.", valueName: "seconds")) var interval: Double = 0.5
    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds")) var duration: Double?

    func validate() throws {
        guard let kind = SampleType(identifier: type)?.kind, kind == .quantity || kind == .category else {
            let known = (SampleType.quantityTypes + SampleType.eventTypes).map(\.identifier).joined(separator: ", ")
            throw ValidationError("unknown type '\(type)' (known: \(known))")
        }
        guard interval >= 0.05, interval <= 60 else { throw ValidationError("--interval must be 0.05…60 seconds") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be positive") }
    }

    func run() async throws {
        try await reportingFailures {
            guard let sampleType = SampleType(identifier: type) else { return }
            let store = try storeOptions.access()
            let format = output ?? (isatty(STDOUT_FILENO) == 1 ? .live : .table)
            if sampleType.kind == .category { return try await watchEvents(of: sampleType, in: store, format: format) }
            let people = format == .json ? try await store.personLookup() : nil
            let printer = SamplePrinter(
                format: format == .json ? .json : .table, type: sampleType, unit: sampleType.canonicalUnit, showsGateway: store.showsGateways,
                people: people)
            var recent: [Double] = []
            let deadline = duration.map { ContinuousClock.now.advanced(by: .seconds($0)) }
            if format == .table { printer.printHeader() }
            setvbuf(stdout, nil, _IOLBF, 0)
            try await store.followChanges(of: sampleType, pollInterval: interval, until: deadline) { changes in
                for stored in changes.added where device == nil || stored.sample.device?.localIdentifier == device {
                    let value = stored.sample.canonicalValue
                    recent = Array((recent + [value]).suffix(30))
                    switch format {
                    case .live:
                        let name = (stored.sample.device?.localIdentifier ?? "-") + (stored.gateway.map { " via \($0)" } ?? "")
                        let line = "♥ \(DisplayNumber(value: value)) \(sampleType.canonicalUnit.unitString)  \(name)  \(Sparkline.render(recent))  \(RFC3339.string(from: stored.sample.start, fractionDigits: 0))"
                        // The one print whose escape sequence is hrmd's own: the line is escaped alone.
                        Swift.print("\r\u{1B}[K" + TerminalText.escaped(line), terminator: "")
                        fflush(stdout)
                    case .table, .json:
                        printer.print(stored)
                    }
                }
                printer.flush()
            }
            if format == .live { print("") }
        }
    }

    /// Prints each event of `eventType` as it opens and as it ends, a line each.
    private func watchEvents(of eventType: SampleType, in store: any RequestTransport, format: Format) async throws(CommandFailure) {
        let deadline = duration.map { ContinuousClock.now.advanced(by: .seconds($0)) }
        setvbuf(stdout, nil, _IOLBF, 0)
        try await store.followEvents(of: [eventType], pollInterval: interval, until: deadline, ready: {
            if format != .json { print("TIME  EVENT  CHANGE  WHO  DETAILS") }
        }) { events in
            for event in events where device == nil || event.device == device {
                switch format {
                case .json:
                    printJSONLine(EventJSON.object(event))
                case .live, .table:
                    let time = RFC3339.string(from: event.end ?? event.start, fractionDigits: 0)
                    let what = event.isOpen ? "opened" : "ended after \(ElapsedText.text(event.latest, since: event.start))"
                    var line = "\(time)  \(event.type.identifier)  \(what)  \(event.person ?? event.device ?? "-")"
                    if let threshold = event.threshold { line += "  threshold \(DisplayNumber(value: threshold))" }
                    if let extreme = event.extreme { line += "  extreme \(DisplayNumber(value: extreme))" }
                    print(TerminalText.escaped(line))
                }
            }
        }
    }
}
