import ArgumentParser
import CommandSupport
import Foundation
import HealthModel
import HealthRequests
import JSONLines
import Timestamps

/// `hrmctl person`: the people who wear straps, and which strap each wore when.
struct PersonCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "person",
        abstract: "Add, change, list and remove people, and assign straps to them.",
        discussion: """
            A sample belongs to the person whose assignment of its device covers its start:
            hrmctl samples --output json then shows "person", and that person's zones
            replace --max-hr. Zones are 50, 60, 70, 80 and 90 % of the maximum heart rate
            (percent-max, the default), the same fractions of the reserve above the resting
            rate (reserve, Karvonen), or five bounds of your own (B1,B2,B3,B4,B5 in
            count/min). Without a maximum, it is estimated from the birth year
            (208 - 0.7 x age, Tanaka 2001); with neither, zones need bounds. People are a
            manager's to change.

            Examples:
              hrmctl person add ann --birth-year 1990 --resting-hr 52
              hrmctl person assign ann AA:BB:CC:DD:EE:01 --from 2026-11-29T07:00:00Z
              hrmctl person set ann --zones reserve
              hrmctl person list --output json
            """,
        subcommands: [Add.self, Change.self, List.self, Remove.self, Assign.self])

    /// What `add` and `set` take; `set` changes only what is given.
    struct PersonOptions: ParsableArguments {
        @Option(help: ArgumentHelp("The year the person was born (1900…2100).", valueName: "year")) var birthYear: Int?
        @Option(help: ArgumentHelp("female or male.", valueName: "sex")) var sex: BiologicalSex?
        @Option(help: ArgumentHelp("Body weight in kg.", valueName: "kg")) var weight: Double?
        @Option(name: .customLong("resting-hr"), help: ArgumentHelp("Resting heart rate, count/min.", valueName: "bpm")) var restingHR: Double?
        @Option(name: .customLong("max-hr"), help: ArgumentHelp("Maximum heart rate, count/min.", valueName: "bpm")) var maxHR: Double?
        @Option(help: ArgumentHelp("percent-max, reserve, or B1,B2,B3,B4,B5 (lower bounds of zones 1-5).", valueName: "method"))
        var zones: String?
        @Option(help: ArgumentHelp("Their own high heart-rate event threshold, count/min (over [alerts] high).", valueName: "bpm"))
        var alertHigh: Double?
        @Option(help: ArgumentHelp("Their own low heart-rate event threshold, count/min (over [alerts] low).", valueName: "bpm"))
        var alertLow: Double?

        /// `person` with what was given.
        func applied(to person: Person) throws(ValidationError) -> Person {
            var person = person
            if let birthYear { person.birthYear = birthYear }
            if let sex { person.sex = sex }
            if let weight { person.weightKilograms = weight }
            if let restingHR { person.restingHeartRate = restingHR }
            if let maxHR { person.maximumHeartRate = maxHR }
            if let alertHigh { person.alertHigh = alertHigh }
            if let alertLow { person.alertLow = alertLow }
            if let zones {
                do { person.zoneMethod = try ZoneMethod.parse(zones) } catch { throw ValidationError("--zones: \(error)") }
            }
            if let problem = person.problem { throw ValidationError(problem) }
            return person
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a person.")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: ArgumentHelp("The person's name (1-64 characters).", valueName: "name")) var name: String
        @OptionGroup var options: PersonOptions

        func validate() throws { _ = try options.applied(to: Person(name: name)) }

        func run() async throws {
            try await reportingFailures {
                _ = try await storeOptions.access(.createIfMissing).send(SavePerson(try options.applied(to: Person(name: name)), creating: true))
                print("added \(TerminalText.escaped(name))")
            }
        }
    }

    struct Change: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Change what is given of a person; the rest stays.")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: ArgumentHelp("The person's name.", valueName: "name")) var name: String
        @OptionGroup var options: PersonOptions

        func run() async throws {
            try await reportingFailures {
                let store = try storeOptions.access(.existingOnly)
                guard let person = try await store.send(People()).people.first(where: { $0.name == name }) else {
                    throw CommandFailure("no person named \(name.debugDescription); add them with hrmctl person add", status: .usage)
                }
                let changed: Person
                do throws(ValidationError) { changed = try options.applied(to: person) } catch { throw CommandFailure(error.message, status: .usage) }
                _ = try await store.send(SavePerson(changed, creating: false))
                print("changed \(TerminalText.escaped(name))")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove a person and their strap assignments (their samples stay, belonging to nobody).")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: ArgumentHelp("The person's name.", valueName: "name")) var name: String

        func run() async throws {
            try await reportingFailures {
                _ = try await storeOptions.access(.existingOnly).send(RemovePerson(named: name))
                print("removed \(TerminalText.escaped(name))")
            }
        }
    }

    struct Assign: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "assign",
            abstract: "Make a strap's samples in a time range a person's.",
            discussion: """
                Open-ended without --until. The strap's assignment that covers --from ends
                there, so assigning a strap to someone else hands it over from that moment.
                """)
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: ArgumentHelp("The person's name.", valueName: "name")) var name: String
        @Argument(help: ArgumentHelp("The strap's identifier, as hrmctl devices lists it.", valueName: "device-id")) var device: String
        @Option(help: ArgumentHelp("From WHEN: RFC 3339 or an age such as 2h (default now).", valueName: "when")) var from: String?
        @Option(help: ArgumentHelp("Until WHEN (exclusive; default open-ended).", valueName: "when")) var until: String?

        func range(now: Timestamp = .now()) throws(ValidationError) -> (from: Timestamp, until: Timestamp?) {
            let start = try TimeExpression.option(from, "--from", now: now) ?? now
            let end = try TimeExpression.option(until, "--until", now: now)
            if let end, end <= start { throw ValidationError("--until is not after --from") }
            return (start, end)
        }

        func validate() throws { _ = try range() }

        func run() async throws {
            try await reportingFailures {
                let range: (from: Timestamp, until: Timestamp?)
                do throws(ValidationError) { range = try self.range() } catch { throw CommandFailure(error.message, status: .usage) }
                _ = try await storeOptions.access(.existingOnly).send(AssignStrap(person: name, device: device, from: range.from, until: range.until))
                let until = range.until.map { " until \(RFC3339.string(from: $0))" } ?? ""
                print("\(TerminalText.escaped(device)) is \(TerminalText.escaped(name))'s from \(RFC3339.string(from: range.from))\(until)")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List people, their zones and their straps.")
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table

        func run() async throws {
            try await reportingFailures {
                let answer = try await storeOptions.access().send(People())
                let year = Person.year()
                let straps = Dictionary(grouping: answer.assignments, by: \.person)
                func number(_ value: Double?) -> String { value.map { $0.rounded() == $0 ? String(Int($0)) : String($0) } ?? "" }
                switch output {
                case .json:
                    for person in answer.people {
                        printJSONLine(PersonJSON.object(person, assignments: straps[person.name] ?? [], year: year))
                    }
                case .csv:
                    print("name,birthYear,sex,weightKg,restingHR,maxHR,zones,straps")
                    for person in answer.people {
                        print(csvRow([
                            person.name, person.birthYear.map(String.init) ?? "", person.sex?.rawValue ?? "", number(person.weightKilograms),
                            number(person.restingHeartRate), number(person.maximumHeartRate), person.zoneMethod.description,
                            (straps[person.name] ?? []).map(\.device).joined(separator: " "),
                        ]))
                    }
                case .table:
                    guard !answer.people.isEmpty else { print("no people"); return }
                    printTable(
                        header: ["NAME", "BORN", "MAX HR", "ZONES FROM (count/min)", "STRAPS NOW"],
                        rows: answer.people.map { person in
                            let now = Timestamp.now()
                            let bounds = person.zoneBounds(in: year).map { $0.lowers.map { String(Int($0.rounded())) }.joined(separator: " ") }
                            return [
                                person.name, person.birthYear.map(String.init) ?? "", number(person.estimatedMaximumHeartRate(in: year)),
                                bounds ?? "needs --max-hr, --birth-year or bounds",
                                (straps[person.name] ?? []).filter { $0.covers(now) }.map(\.device).joined(separator: " "),
                            ]
                        })
                }
            }
        }
    }
}

extension BiologicalSex: ExpressibleByArgument {}
