import JSONLines
import ArgumentParser
import HealthModel
import CommandSupport
import HealthStore

/// `hrmctl types`: the sample types the store knows.
struct TypesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "types",
        abstract: "List the sample types, their canonical units and how they aggregate.",
        discussion: "With --workouts, the activity types a workout may have instead.")

    @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table
    @Flag(help: "List workout activity types (hrmctl workout start --activity) and HealthKit's name for each.") var workouts = false

    private struct TypeLine {
        var type: String
        var unit: String
        var aggregation: String
        var description: String
    }

    func run() throws {
        if workouts { return listActivities() }
        let lines = SampleType.all.map {
            TypeLine(type: $0.identifier, unit: $0.canonicalUnit.unitString, aggregation: $0.aggregation.rawValue, description: $0.summary)
        }
        switch output {
        case .json:
            for line in lines {
                printJSONLine(.object([
                    ("type", .string(line.type)), ("unit", .string(line.unit)),
                    ("aggregation", .string(line.aggregation)), ("description", .string(line.description)),
                ]))
            }
        case .csv:
            print("type,unit,aggregation,description")
            lines.forEach { print(csvRow([$0.type, $0.unit, $0.aggregation, $0.description])) }
        case .table:
            printTable(header: ["TYPE", "UNIT", "AGGREGATION", "DESCRIPTION"], rows: lines.map { [$0.type, $0.unit, $0.aggregation, $0.description] })
        }
    }

    private func listActivities() {
        let rows = WorkoutActivity.allCases.map { [$0.rawValue, "HKWorkoutActivityType." + $0.healthKitName] }
        switch output {
        case .json: rows.forEach { printJSONLine(.object([("activity", .string($0[0])), ("healthKit", .string($0[1]))])) }
        case .csv:
            print("activity,healthKit")
            rows.forEach { print(csvRow($0)) }
        case .table: printTable(header: ["ACTIVITY", "HEALTHKIT"], rows: rows)
        }
    }
}
