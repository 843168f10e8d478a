import HealthRequests
import ArgumentParser
import StoreTransport
import CommandSupport
import Foundation
import HealthModel
import HealthStore
import HealthUnits
import HealthWire
import JSONLines
import Timestamps

/// `hrmctl stats`: count, minimum, average and maximum per time bucket.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Summarize stored samples per minute, hour or day; HRV; time in zones.",
        discussion: """
            --by: like HealthKit's statistics collection query, one line per non-empty bucket,
            oldest first, with the count, minimum, average and maximum (and the sum, for
            cumulative types such as active-energy-burned). 1m, 5m and 1h buckets are
            aligned to the clock in UTC; 1d buckets are calendar days in the local time
            zone (the store service is told hrmctl's time zone).

            JSON (--output json), one object per bucket:
              {"start":"…","end":"…","count":60,"min":61,"avg":72.4,"max":90,
               "unit":"count/min"}

            --hrv: heart-rate variability over the range from the stored RR intervals:
            mean NN, SDNN, and RMSSD over adjacent beats only (ms).
            --zones --max-hr N: time in zones 0 (below 50 % of N) and 1–5 (50–60, 60–70,
            70–80, 80–90, 90 % and above); a sample lasts until the next one, at most 5 s.
            --person NAME: over the person's samples only (the straps assigned to them,
            each within its assignment; see hrmctl person), with --by, --hrv or --zones;
            --zones then uses the person's own zones, which --max-hr overrides.

            EXAMPLES
              hrmctl stats --by 1h --since 1d
              hrmctl stats --hrv --since 10m
              hrmctl stats --zones --max-hr 185 --since 2h
              hrmctl stats --zones --person ann --since 2h
              hrmctl stats --by 1h --person ann --since 1d
              hrmctl stats --by 1d --since 7d --output json
            """)

    enum Bucket: String, ExpressibleByArgument, CaseIterable {
        case minute = "1m", fiveMinutes = "5m", hour = "1h", day = "1d"

        var name: StatisticsBucketName {
            switch self {
            case .minute: .minute
            case .fiveMinutes: .fiveMinutes
            case .hour: .hour
            case .day: .day
            }
        }
    }

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var range: RangeOptions
    @Option(help: "Bucket size: 1m, 5m, 1h or 1d.") var by: Bucket?
    @Flag(help: "Heart-rate variability over the range from RR intervals: mean NN, SDNN, RMSSD.") var hrv = false
    @Flag(help: "Time in heart-rate zones over the range (needs --max-hr or --person).") var zones = false
    @Option(name: .customLong("max-hr"), help: ArgumentHelp("Maximum heart rate for --zones, count/min.", valueName: "bpm"))
    var maxHeartRate: Double?
    @Option(help: ArgumentHelp("Only this person's samples (see hrmctl person); with --zones, in their own zones.", valueName: "name"))
    var person: String?
    @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table

    func validate() throws {
        _ = try range.resolved()
        guard [by != nil, hrv, zones].filter({ $0 }).count == 1 else {
            throw ValidationError("choose one of --by 1m|5m|1h|1d, --hrv or --zones")
        }
        if zones {
            if let maxHeartRate, !(100...250).contains(maxHeartRate) { throw ValidationError("--max-hr must be between 100 and 250") }
            guard maxHeartRate != nil || person != nil else { throw ValidationError("--zones needs --max-hr between 100 and 250, or --person") }
        }
    }

    func run() async throws {
        try await reportingFailures {
            let (query, unit) = try range.resolved()
            let store = try storeOptions.access()
            if hrv { return try await printVariability(store: store, query: query) }
            if zones { return try await printZones(store: store, query: query) }
            guard let by else { return }
            let buckets = if let person {
                try await store.send(PersonStatistics(
                    person: person, type: query.type, bucket: by.name, since: query.since, until: query.until,
                    timeZone: TimeZone.current.identifier)).buckets
            } else {
                try await store.statistics(of: query.type, by: by.name, since: query.since, until: query.until)
            }
            guard !buckets.isEmpty else {
                if output == .table { print("no samples") } else { printError("no samples", program: "hrmctl") }
                return
            }
            let cumulative = query.type.aggregation == .cumulative
            func shown(_ value: Double) -> DisplayNumber {
                DisplayNumber(value: (try? query.type.canonicalUnit.convert(value, to: unit)) ?? .nan)
            }
            switch output {
            case .json:
                for bucket in buckets {
                    var members: [(String, JSONValue)] = [
                        ("start", .string(RFC3339.string(from: bucket.start))), ("end", .string(RFC3339.string(from: bucket.end))),
                        ("count", .number(Double(bucket.count))), ("min", shown(bucket.minimum).json),
                        ("avg", shown(bucket.average).json), ("max", shown(bucket.maximum).json),
                    ]
                    if cumulative { members.append(("sum", shown(bucket.sum).json)) }
                    members.append(("unit", .string(unit.unitString)))
                    printJSONLine(.object(members))
                }
            case .csv:
                print("start,end,count,min,avg,max,sum,unit")
                for bucket in buckets {
                    print(csvRow([
                        RFC3339.string(from: bucket.start), RFC3339.string(from: bucket.end), String(bucket.count),
                        shown(bucket.minimum).description, shown(bucket.average).description, shown(bucket.maximum).description,
                        shown(bucket.sum).description, unit.unitString,
                    ]))
                }
            case .table:
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.dateFormat = by == .day ? "yyyy-MM-dd" : "yyyy-MM-dd HH:mm"
                let header = ["START (local)", "COUNT", "MIN", "AVG", "MAX"] + (cumulative ? ["SUM"] : []) + ["UNIT"]
                printTable(header: header, rows: buckets.map { bucket in
                    [
                        formatter.string(from: Date(timeIntervalSince1970: bucket.start.secondsSinceEpoch)), String(bucket.count),
                        shown(bucket.minimum).description, shown(bucket.average).description, shown(bucket.maximum).description,
                    ] + (cumulative ? [shown(bucket.sum).description] : []) + [unit.unitString]
                })
            }
        }
    }

    private func printVariability(store: any RequestTransport, query: SampleQuery) async throws {
        let found = if let person {
            try await store.send(PersonVariability(person: person, since: query.since, until: query.until)).variability
        } else {
            try await store.heartRateVariability(since: query.since, until: query.until)
        }
        guard let variability = found else {
            if output == .table { print("no samples") } else { printError("no samples", program: "hrmctl") }
            return
        }
        let rows: [(String, Double?)] = [
            ("meanNN", variability.meanNN), ("sdnn", variability.sdnn), ("rmssd", variability.rmssd),
        ]
        switch output {
        case .json:
            printJSONLine(.object(
                [("beats", .number(Double(variability.beats)))]
                    + rows.map { ($0.0, $0.1.map { DisplayNumber(value: $0).json } ?? .null) } + [("unit", .string("ms"))]))
        case .csv:
            print("beats,meanNN,sdnn,rmssd,unit")
            print(csvRow([String(variability.beats)] + rows.map { $0.1.map { DisplayNumber(value: $0).description } ?? "" } + ["ms"]))
        case .table:
            printTable(
                header: ["BEATS", "MEAN NN", "SDNN", "RMSSD", "UNIT"],
                rows: [[String(variability.beats)] + rows.map { $0.1.map { String(format: "%.1f", $0) } ?? "-" } + ["ms"]])
        }
    }

    private func printZones(store: any RequestTransport, query: SampleQuery) async throws {
        let zones: [HeartRateZones.Zone]
        if let person {
            zones = try await store.send(PersonZones(person: person, since: query.since, until: query.until, maxHeartRate: maxHeartRate)).zones
        } else {
            guard let maxHeartRate else { return }
            zones = try await store.heartRateZones(since: query.since, until: query.until, maximumHeartRate: maxHeartRate)
        }
        guard !zones.isEmpty else {
            if output == .table { print("no samples") } else { printError("no samples", program: "hrmctl") }
            return
        }
        let result = HeartRateZones(zones: zones)
        func bound(_ value: Double) -> JSONValue { value.isFinite ? .number(value.rounded()) : .null }
        switch output {
        case .json:
            for zone in result.zones {
                printJSONLine(.object([
                    ("zone", .number(Double(zone.number))), ("lower", bound(zone.lower)), ("upper", bound(zone.upper)),
                    ("seconds", DisplayNumber(value: zone.seconds).json), ("unit", .string("count/min")),
                ]))
            }
        case .csv:
            print("zone,lower,upper,seconds")
            for zone in result.zones {
                print(csvRow([String(zone.number), String(Int(zone.lower.rounded())), zone.upper.isFinite ? String(Int(zone.upper.rounded())) : "", DisplayNumber(value: zone.seconds).description]))
            }
        case .table:
            let total = max(1, result.zones.reduce(0) { $0 + $1.seconds })
            printTable(header: ["ZONE", "COUNT/MIN", "TIME", "SHARE"], rows: result.zones.map { zone in
                let range = zone.upper.isFinite ? "\(Int(zone.lower.rounded()))–\(Int(zone.upper.rounded()))" : "≥\(Int(zone.lower.rounded()))"
                let minutes = Int(zone.seconds) / 60, seconds = Int(zone.seconds) % 60
                return [String(zone.number), range, String(format: "%d:%02d", minutes, seconds), String(format: "%.0f%%", zone.seconds / total * 100)]
            })
        }
    }
}
