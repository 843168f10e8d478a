import ArgumentParser
import CLISupport
import Foundation
import HealthStore
import HealthUnits
import JSONLines
import Timestamps

/// `hrmctl stats`: count, minimum, average and maximum per time bucket.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Summarize stored samples per minute, hour or day.",
        discussion: """
            Like HealthKit's statistics collection query: one line per non-empty bucket,
            oldest first, with the count, minimum, average and maximum (and the sum, for
            cumulative types such as active-energy-burned). 1m, 5m and 1h buckets are
            aligned to the clock in UTC; 1d buckets are calendar days in the local time
            zone.

            JSON (--output json), one object per bucket:
              {"start":"…","end":"…","count":60,"min":61,"avg":72.4,"max":90,
               "unit":"count/min"}

            EXAMPLES
              hrmctl stats --by 1h --since 1d
              hrmctl stats --by 1d --since 7d --output json
            """)

    enum Bucket: String, ExpressibleByArgument, CaseIterable {
        case minute = "1m", fiveMinutes = "5m", hour = "1h", day = "1d"

        var statisticsBucket: StatisticsBucket {
            switch self {
            case .minute: .seconds(60)
            case .fiveMinutes: .seconds(300)
            case .hour: .seconds(3600)
            case .day: .localDays
            }
        }
    }

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var range: RangeOptions
    @Option(help: "Bucket size: 1m, 5m, 1h or 1d.") var by: Bucket
    @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table

    func validate() throws { _ = try range.resolved() }

    func run() throws {
        try reportingFailures {
            let (query, unit) = try range.resolved()
            let store = try storeOptions.location.open(.existingOnly)
            let buckets = try storeFailure {
                try store.statistics(of: query.type, by: by.statisticsBucket, since: query.since, until: query.until)
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
}
