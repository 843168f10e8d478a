import ArgumentParser
import CommandSupport
import HealthModel
import HealthRequests
import Foundation
import JSONLines
import StoreTransport
import Timestamps

/// `hrmctl events`: the high and low heart-rate, contact and battery events hrmd recorded.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "List the events hrmd recorded (high or low heart rate, contact lost, battery low, disconnected), newest first.",
        discussion: """
            hrmd writes an event when a rule of [alerts] (or the wearer's own thresholds) holds:
            heart rate above `high` for `high-for` outside workouts, below `low` for `low-for`, no
            skin contact for `contact-lost-for`, a battery under `battery-low` percent, a strap's
            link down for `disconnected-for` until it is heard again. An event
            that still lasts is open: it has no end yet. Applications read events with read
            authorization of their type; only hrmd writes them.
            """)

    @OptionGroup var storeOptions: StoreOptions
    @Option(help: ArgumentHelp("Events that last after WHEN: RFC 3339 or an age such as 7d.", valueName: "when")) var since: String?
    @Option(help: ArgumentHelp("Events that start before WHEN.", valueName: "when")) var until: String?
    @Option(help: ArgumentHelp("Only events of TYPE (see hrmctl types).", valueName: "type")) var type: String?
    @Option(help: ArgumentHelp("Only this person's.", valueName: "name")) var person: String?
    @Option(help: ArgumentHelp("Only this strap's.", valueName: "device-id")) var device: String?
    @Option(help: ArgumentHelp("At most N (1-10000).", valueName: "n")) var limit: Int = 100
    @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table

    func validate() throws {
        guard (1...EventQuery.answerLimit).contains(limit) else { throw ValidationError("--limit must be 1…\(EventQuery.answerLimit)") }
        _ = try eventType()
    }

    private func eventType() throws(ValidationError) -> SampleType? {
        guard let type else { return nil }
        do { return try SampleType.eventType(named: type) } catch { throw ValidationError(error.description) }
    }

    func run() async throws {
        try await reportingFailures {
            let now = Timestamp.now()
            let events = try await storeOptions.access().send(
                Events(
                    app: ServiceTransport.app, since: try WorkoutCommand.time(since, "--since", now: now),
                    until: try WorkoutCommand.time(until, "--until", now: now), type: try eventType(), person: person, device: device,
                    limit: limit)
            ).events
            switch output {
            case .json:
                for event in events { printJSONLine(EventJSON.object(event)) }
            case .csv:
                print("id,type,start,end,device,person,threshold,extreme")
                for event in events {
                    print(csvRow([
                        event.id, event.type.identifier, RFC3339.string(from: event.start), event.end.map { RFC3339.string(from: $0) } ?? "",
                        event.device ?? "", event.person ?? "", event.threshold.map(Self.number) ?? "", event.extreme.map(Self.number) ?? "",
                    ]))
                }
            case .table:
                guard !events.isEmpty else { print("no events"); return }
                printTable(
                    header: ["TYPE", "WHO", "START", "DURATION", "THRESHOLD", "EXTREME"],
                    rows: events.map { event in
                        [
                            event.type.identifier, event.person ?? event.device ?? "", RFC3339.string(from: event.start, fractionDigits: 0),
                            event.isOpen ? "open, \(ElapsedText.text(event.latest, since: event.start))" : ElapsedText.text(event.latest, since: event.start),
                            event.threshold.map(Self.number) ?? "", event.extreme.map(Self.number) ?? "",
                        ]
                    })
            }
        }
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}
