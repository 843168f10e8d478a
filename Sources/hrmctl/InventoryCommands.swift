import ArgumentParser
import CLISupport
import Foundation
import HealthStore
import JSONLines
import Timestamps

/// `hrmctl devices`: the sensors that wrote samples.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "List the devices that wrote samples: location, last seen, sample count.")
    @OptionGroup var storeOptions: StoreOptions
    @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table

    func run() throws {
        try reportingFailures {
            let devices = try storeFailure { try storeOptions.location.open(.existingOnly).deviceSummaries() }
            let rows = devices.map { summary -> [(String, String?)] in
                let device = summary.device
                return [
                    ("identifier", device.localIdentifier), ("name", device.name), ("manufacturer", device.manufacturer),
                    ("model", device.model), ("firmwareVersion", device.firmwareVersion),
                    ("location", summary.lastLocation?.name), ("lastSeen", summary.lastSeen.map { RFC3339.string(from: $0) }),
                    ("samples", String(summary.sampleCount)),
                ]
            }
            printInventory(rows, output: output, empty: "no devices yet")
        }
    }
}

/// `hrmctl sources`: the programs that wrote samples.
struct SourcesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sources", abstract: "List the sources that wrote samples, with their counts.")
    @OptionGroup var storeOptions: StoreOptions
    @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table

    func run() throws {
        try reportingFailures {
            let sources = try storeFailure { try storeOptions.location.open(.existingOnly).sourceSummaries() }
            let rows = sources.map { summary -> [(String, String?)] in
                [
                    ("source", summary.source.name), ("version", summary.source.version),
                    ("lastSample", summary.lastSample.map { RFC3339.string(from: $0) }), ("samples", String(summary.sampleCount)),
                ]
            }
            printInventory(rows, output: output, empty: "no sources yet")
        }
    }
}

/// Prints rows of named columns as a table, JSON Lines (unknown values left out) or CSV.
private func printInventory(_ rows: [[(String, String?)]], output: OutputFormat, empty: String) {
    guard let first = rows.first else {
        if output == .table { print(empty) }
        return
    }
    let names = first.map(\.0)
    switch output {
    case .json:
        for row in rows {
            printJSONLine(.object(row.compactMap { key, value in
                guard let value else { return nil }
                return (key, key == "samples" ? .number(Double(value) ?? 0) : .string(value))
            }))
        }
    case .csv:
        print(names.joined(separator: ","))
        for row in rows { print(csvRow(row.map { $0.1 ?? "" })) }
    case .table:
        printTable(header: names.map { $0.uppercased() }, rows: rows.map { $0.map { $0.1 ?? "-" } })
    }
}
