import ArgumentParser
import StoreTransport
import CommandSupport
import Foundation
import HealthModel
import HealthStore
import JSONLines
import Timestamps

/// `hrmctl devices`: the sensors, what they wrote and what they are doing now.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the sensors: what they wrote, their location, battery and what they are doing now.",
        discussion: """
            One row per device that wrote samples or that a running hrmd is handling.
            STATE is what hrmd last said about the sensor: waiting (for an adapter, a
            stick, the system bus), searching, connecting, streaming, backing-off (with
            the next attempt), or stopped. hrmd refreshes it every few seconds; when it
            has not for \(Int(Self.staleAfter)) s the state shows as "offline" (hrmd is not running).
            The table is followed by the details of current states (why a sensor waits,
            when it retries, what hrmd noticed about its links, such as a strap whose every
            link ends at the same age); JSON adds the same detail as stateDetail, with
            since when, frames and skips of this run.
            """)
    @OptionGroup var storeOptions: StoreOptions
    @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table

    /// Seconds after which a sensor's recorded state is no longer current.
    static let staleAfter: Double = 30

    func run() async throws {
        try await reportingFailures {
            let (summaries, activities) = try await storeOptions.access().devices()
            let rows = Self.rows(summaries: summaries, activities: activities, now: .now())
            printInventory(rows, output: output, tableColumns: [
                "identifier", "name", "model", "location", "state", "battery", "lastSeen", "samples",
            ], empty: "no devices yet")
            if output == .table {
                for (identifier, detail) in Self.currentDetails(rows) { print("\(identifier): \(detail)") }
            }
        }
    }

    /// The detail of each row whose state is current (not offline), for the lines under the table.
    static func currentDetails(_ rows: [InventoryRow]) -> [(String, String)] {
        rows.compactMap { row in
            func text(_ key: String) -> String? { row.first { $0.0 == key }?.1?.display }
            guard let identifier = text("identifier"), let state = text("state"), state != "offline", let detail = text("stateDetail")
            else { return nil }
            return (identifier, detail)
        }
    }

    /// One row per device known from samples or from the daemon's activity records.
    static func rows(summaries: [DeviceSummary], activities: [SensorActivity], now: Timestamp) -> [InventoryRow] {
        let activityByDevice = Dictionary(activities.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        var identifiers = summaries.map(\.device.localIdentifier)
        identifiers += activities.map(\.identifier).filter { id in !summaries.contains { $0.device.localIdentifier == id } }
        let summaryByDevice = Dictionary(summaries.map { ($0.device.localIdentifier, $0) }, uniquingKeysWith: { first, _ in first })
        return identifiers.sorted().map { identifier in
            let summary = summaryByDevice[identifier]
            let device = summary?.device
            let activity = activityByDevice[identifier]
            let current = activity.map { Double(now.microsecondsSinceEpoch - $0.updatedAt.microsecondsSinceEpoch) / 1e6 < staleAfter }
            let state = activity.map { current == true || $0.state == "stopped" ? $0.state : "offline" }
            let lastSeen = [summary?.lastSeen, activity?.lastFrame].compactMap { $0 }.max()
            return [
                ("identifier", .text(identifier)), ("name", device?.name.map(InventoryValue.text)),
                ("manufacturer", device?.manufacturer.map(InventoryValue.text)), ("model", device?.model.map(InventoryValue.text)),
                ("hardwareVersion", device?.hardwareVersion.map(InventoryValue.text)),
                ("firmwareVersion", device?.firmwareVersion.map(InventoryValue.text)),
                ("softwareVersion", device?.softwareVersion.map(InventoryValue.text)),
                ("location", summary?.lastLocation.map { .text($0.name) }),
                ("transport", activity.map { .text($0.transport) }),
                ("state", state.map(InventoryValue.text)),
                ("stateDetail", activity?.detail.map(InventoryValue.text)),
                ("stateSince", activity.map { .text(RFC3339.string(from: $0.since)) }),
                ("battery", activity?.battery.map { .number($0, suffix: "%") }),
                ("lastSeen", lastSeen.map { .text(RFC3339.string(from: $0)) }),
                ("frames", activity.map { .number($0.frames) }), ("skipped", activity.map { .number($0.skipped) }),
                ("samples", .number(summary?.sampleCount ?? 0)),
            ]
        }
    }
}

/// `hrmctl sources`: the programs that wrote samples.
struct SourcesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sources", abstract: "List the sources that wrote samples, with their counts.")
    @OptionGroup var storeOptions: StoreOptions
    @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table

    func run() async throws {
        try await reportingFailures {
            let sources = try await storeOptions.access().sources()
            let rows: [InventoryRow] = sources.map { summary in
                [
                    ("source", .text(summary.source.name)), ("version", summary.source.version.map(InventoryValue.text)),
                    ("lastSample", summary.lastSample.map { .text(RFC3339.string(from: $0)) }),
                    ("samples", .number(summary.sampleCount)),
                ]
            }
            printInventory(rows, output: output, tableColumns: nil, empty: "no sources yet")
        }
    }
}

/// One cell of an inventory row: text, or a count that JSON prints as a number.
enum InventoryValue {
    case text(String)
    case number(Int, suffix: String = "")

    var display: String {
        switch self {
        case .text(let text): text
        case .number(let value, let suffix): "\(value)\(suffix)"
        }
    }

    var json: JSONValue {
        switch self {
        case .text(let text): .string(text)
        case .number(let value, _): .number(Double(value))
        }
    }
}

/// Named cells in column order; nil is unknown.
typealias InventoryRow = [(String, InventoryValue?)]

/// Prints rows as a table (only `tableColumns`, when given), JSON Lines (unknown values left
/// out) or CSV (every column).
private func printInventory(_ rows: [InventoryRow], output: OutputFormat, tableColumns: [String]?, empty: String) {
    guard let first = rows.first else {
        if output == .table { print(empty) }
        return
    }
    switch output {
    case .json:
        for row in rows {
            printJSONLine(.object(row.compactMap { key, value in value.map { (key, $0.json) } }))
        }
    case .csv:
        print(first.map(\.0).joined(separator: ","))
        for row in rows { print(csvRow(row.map { $0.1?.display ?? "" })) }
    case .table:
        let names = tableColumns ?? first.map(\.0)
        let table = rows.map { row in
            names.map { name in row.first { $0.0 == name }?.1?.display ?? "-" }
        }
        printTable(header: names.map(columnTitle), rows: table)
    }
}

/// `lastSeen` → `LAST SEEN`.
private func columnTitle(_ name: String) -> String {
    name.reduce(into: "") { title, character in
        if character.isUppercase, !title.isEmpty { title += " " }
        title += character.uppercased()
    }
}
