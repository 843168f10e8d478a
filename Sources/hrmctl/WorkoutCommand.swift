import ArgumentParser
import CommandSupport
import Foundation
import HealthModel
import HealthRequests
import JSONLines
import StoreTransport
import Timestamps
import WorkoutFiles

/// `hrmctl workout`: start, pause, resume, lap, mark and end workouts, and read them back
/// with their figures.
struct WorkoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workout",
        abstract: "Record workouts (start, pause, resume, lap, marker, end) and show them with their figures.",
        discussion: """
            A workout is a person's (or a strap's, when nobody wears it by name). It lives in
            the store, not in hrmctl: start it now and end it from another shell, after a
            reboot, or enter a past session with --at. Without an ID, pause, resume, lap,
            marker and end act on the open workout of --person (or --device).

            Its figures cover the heart-rate samples of the person's straps inside its
            active time (from start to end, outside pauses): average, minimum and maximum,
            time in the person's zones, laps (each lap event ends one), the drop in heart
            rate in the minute after the end, energy (with the person's sex, weight and
            birth year) and Banister's TRIMP.

            Writing workouts needs share authorization of the type workout for hrmctl's
            source (USER/hrmctl) unless you are a manager of the store (its owner, or root
            on the service).

            Examples:
              hrmctl workout start --person ann --activity running
              hrmctl workout lap --person ann
              hrmctl workout end --person ann
              hrmctl workout list --since 7d
              hrmctl workout show 0f8e... --output json
            """,
        subcommands: [Start.self, Pause.self, Resume.self, Lap.self, Marker.self, End.self, List.self, Show.self, Export.self, Delete.self])

    /// Parses `--at` and the other times of the workout commands.
    static func time(_ text: String?, _ flag: String, now: Timestamp = .now()) throws(CommandFailure) -> Timestamp? {
        do { return try TimeExpression.option(text, flag, now: now) } catch { throw CommandFailure(error.message, status: .usage) }
    }

    /// One line for a workout as it is now.
    static func line(_ verb: String, _ workout: Workout) -> String {
        let whose = workout.person ?? workout.device ?? ""
        return "\(verb) \(workout.activity.rawValue) of \(TerminalText.escaped(whose)) (\(workout.id))"
    }

    /// Which open workout an event goes to: the one named, or the open one of a person or
    /// device.
    struct Target: ParsableArguments {
        @Argument(help: ArgumentHelp("The workout's id (default: the open workout of --person or --device).", valueName: "id")) var id: String?
        @Option(help: ArgumentHelp("The person whose open workout it is.", valueName: "name")) var person: String?
        @Option(help: ArgumentHelp("The strap whose open workout it is (when nobody wears it by name).", valueName: "device-id")) var device: String?
        @Option(help: ArgumentHelp("When: RFC 3339 or an age such as 5m (default now).", valueName: "when")) var at: String?

        func validate() throws {
            if id == nil && person == nil && device == nil { throw ValidationError("name the workout: an ID, --person or --device") }
        }
    }

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "start", abstract: "Start a workout; prints its id as the last line.")
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: ArgumentHelp("Whose workout it is.", valueName: "name")) var person: String?
        @Option(help: ArgumentHelp("The strap, when nobody wears it by name (or whose wearer then it is).", valueName: "device-id"))
        var device: String?
        @Option(help: ArgumentHelp("What they do (hrmctl types --workouts).", valueName: "type")) var activity: String = "other"
        @Option(help: ArgumentHelp("When it started: RFC 3339 or an age such as 30m (default now).", valueName: "when")) var at: String?

        func validate() throws {
            if person == nil && device == nil { throw ValidationError("a workout is a person's or a strap's: give --person or --device") }
            do { _ = try WorkoutActivity.parse(activity) } catch { throw ValidationError("--activity: \(error)") }
        }

        func run() async throws {
            try await reportingFailures {
                let activity: WorkoutActivity
                do { activity = try WorkoutActivity.parse(self.activity) } catch { throw CommandFailure("--activity: \(error)", status: .usage) }
                let start = try WorkoutCommand.time(at, "--at")
                let workout = try await storeOptions.access(.createIfMissing).send(
                    StartWorkout(app: ServiceTransport.app, person: person, device: device, activity: activity, at: start)
                ).workout
                print(WorkoutCommand.line("started", workout) + " at \(RFC3339.string(from: workout.start))")
                print(workout.id)
            }
        }
    }

    /// What pause, resume, lap and marker share: the event they add.
    static func add(_ type: WorkoutEventType, _ target: Target, _ storeOptions: StoreOptions) async throws {
        try await reportingFailures {
            let at = try time(target.at, "--at")
            let workout = try await storeOptions.access(.existingOnly).send(
                AddWorkoutEvent(app: ServiceTransport.app, id: target.id, person: target.person, device: target.device, type: type, at: at)
            ).workout
            let time = workout.events.last.map { RFC3339.string(from: $0.time) } ?? ""
            print(line("\(type.rawValue) in", workout) + " at \(time)")
        }
    }

    struct Pause: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "pause", abstract: "Pause a workout: its time stops counting.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var target: Target
        func run() async throws { try await WorkoutCommand.add(.pause, target, storeOptions) }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "resume", abstract: "Resume a paused workout.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var target: Target
        func run() async throws { try await WorkoutCommand.add(.resume, target, storeOptions) }
    }

    struct Lap: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "lap", abstract: "End a lap; the next starts.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var target: Target
        func run() async throws { try await WorkoutCommand.add(.lap, target, storeOptions) }
    }

    struct Marker: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "marker", abstract: "Mark a moment in a workout.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var target: Target
        func run() async throws { try await WorkoutCommand.add(.marker, target, storeOptions) }
    }

    struct End: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "end", abstract: "End a workout.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var target: Target

        func run() async throws {
            try await reportingFailures {
                let at = try WorkoutCommand.time(target.at, "--at")
                let workout = try await storeOptions.access(.existingOnly).send(
                    EndWorkout(app: ServiceTransport.app, id: target.id, person: target.person, device: target.device, at: at)
                ).workout
                print(WorkoutCommand.line("ended", workout) + " at \(workout.end.map { RFC3339.string(from: $0) } ?? "")")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List workouts, newest first.")
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: ArgumentHelp("Workouts that end after WHEN: RFC 3339 or an age such as 7d.", valueName: "when")) var since: String?
        @Option(help: ArgumentHelp("Workouts that start before WHEN.", valueName: "when")) var until: String?
        @Option(help: ArgumentHelp("Only this person's.", valueName: "name")) var person: String?
        @Option(help: ArgumentHelp("Only this strap's.", valueName: "device-id")) var device: String?
        @Option(help: ArgumentHelp("At most N (1-1000).", valueName: "n")) var limit: Int = 100
        @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table

        func validate() throws {
            guard (1...WorkoutQuery.answerLimit).contains(limit) else { throw ValidationError("--limit must be 1…\(WorkoutQuery.answerLimit)") }
        }

        func run() async throws {
            try await reportingFailures {
                let now = Timestamp.now()
                let workouts = try await storeOptions.access().send(
                    Workouts(
                        app: ServiceTransport.app, since: try WorkoutCommand.time(since, "--since", now: now),
                        until: try WorkoutCommand.time(until, "--until", now: now), person: person, device: device, limit: limit)
                ).workouts
                switch output {
                case .json:
                    for workout in workouts { printJSONLine(WorkoutJSON.object(workout, now: now)) }
                case .csv:
                    print("id,person,device,activity,start,end,events,source")
                    for workout in workouts {
                        print(csvRow([
                            workout.id, workout.person ?? "", workout.device ?? "", workout.activity.rawValue, RFC3339.string(from: workout.start),
                            workout.end.map { RFC3339.string(from: $0) } ?? "", String(workout.events.count), workout.source,
                        ]))
                    }
                case .table:
                    guard !workouts.isEmpty else { print("no workouts"); return }
                    printTable(
                        header: ["ID", "WHO", "ACTIVITY", "START", "DURATION", "LAPS"],
                        rows: workouts.map { workout in
                            [
                                workout.id, workout.person ?? workout.device ?? "", workout.activity.rawValue,
                                RFC3339.string(from: workout.start, fractionDigits: 0),
                                workout.isOpen ? "open, \(ElapsedText.text(workout.effectiveEnd(now: now), since: workout.start))"
                                    : ElapsedText.text(workout.effectiveEnd(now: now), since: workout.start),
                                String(workout.laps(now: now).count),
                            ]
                        })
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show a workout with its heart rate, zones, laps, recovery, energy and TRIMP.")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: ArgumentHelp("The workout's id (hrmctl workout list).", valueName: "id")) var id: String
        @Option(help: "table or json (one object).") var output: OutputFormat = .table

        func validate() throws {
            if output == .csv { throw ValidationError("--output is table or json for one workout") }
        }

        func run() async throws {
            try await reportingFailures {
                let now = Timestamp.now()
                let answer = try await storeOptions.access().send(WorkoutDetails(app: ServiceTransport.app, id: id))
                switch output {
                case .json, .csv: printJSONLine(WorkoutJSON.object(answer.workout, summary: answer.summary, now: now))
                case .table: WorkoutReport(workout: answer.workout, summary: answer.summary).print()
                }
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write an ended workout as a FIT activity, a TCX file, a FHIR Bundle or JSON, for Garmin Connect, Strava, GoldenCheetah, TrainingPeaks or a health record.",
            discussion: """
                fit: a FIT activity (file_id, timer events, a record a second of the active
                time, a lap per lap, the session and the activity). tcx: Garmin's Training
                Center Database v2, a Lap per lap with its Trackpoints, a Track per stretch
                between pauses. fhir: a FHIR R4 Bundle, the workout as an Encounter of the
                person (a Patient) with an exercise-duration Observation and a heart-rate
                Observation per sample of the active time. json: what workout show --output
                json prints, with "samples" (each sample's time and count/min) from start to
                end.
                """)

        enum Format: String, ExpressibleByArgument, CaseIterable {
            case fit, tcx, fhir, json
        }

        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: ArgumentHelp("The workout's id (hrmctl workout list).", valueName: "id")) var id: String
        @Option(help: "fit, tcx, fhir or json.") var format: Format
        @Option(name: [.customShort("o"), .customLong("output-file")], help: ArgumentHelp("The file to write (replaced whole).", valueName: "file"))
        var outputFile: String

        func run() async throws {
            try await reportingFailures {
                let access = try storeOptions.access()
                let answer = try await access.send(WorkoutHeartRate(app: ServiceTransport.app, id: id))
                guard answer.workout.end != nil else {
                    throw CommandFailure("the workout \(id) is open; end it first (hrmctl workout end \(id))", status: .usage)
                }
                let recording = WorkoutRecording(workout: answer.workout, summary: answer.summary, points: answer.points, rrIntervals: answer.rrIntervals)
                let bytes: [UInt8]
                switch format {
                case .fit:
                    do { bytes = try FITActivityWriter().write(recording) } catch { throw CommandFailure("\(error)", status: .dataError) }
                case .tcx: bytes = Array(TCXWriter().write(recording).utf8)
                case .fhir:
                    // The person's record, when the caller may list people (a manager); else their name.
                    var person: Person?
                    if let name = answer.workout.person {
                        person = (try? await access.send(People()))?.people.first { $0.name == name } ?? Person(name: name)
                    }
                    bytes = Array(FHIRWorkoutWriter().write(recording, person: person).utf8)
                case .json:
                    bytes = Array((WorkoutJSON.object(answer.workout, summary: answer.summary, samples: answer.points).serialized + "\n").utf8)
                }
                do {
                    try Data(bytes).write(to: URL(fileURLWithPath: outputFile), options: .atomic)
                } catch {
                    throw CommandFailure("cannot write \(outputFile): \(error.localizedDescription)", status: .cannotCreate)
                }
                print("wrote \(TerminalText.escaped(outputFile)): \(format.rawValue), \(answer.points.count) heart-rate samples, \(answer.summary.laps.count) laps")
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a workout (its samples stay).")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: ArgumentHelp("The workout's id.", valueName: "id")) var id: String

        func run() async throws {
            try await reportingFailures {
                _ = try await storeOptions.access(.existingOnly).send(DeleteWorkout(app: ServiceTransport.app, id: id))
                print("deleted \(id)")
            }
        }
    }
}

/// A span of time as a person reads it: `1:02:03` or `12:34`.
enum ElapsedText {
    static func text(_ end: Timestamp, since start: Timestamp) -> String { text(seconds: end.secondsSinceEpoch - start.secondsSinceEpoch) }

    static func text(seconds: Double) -> String {
        let total = Int(max(0, seconds).rounded())
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }
}

/// `workout show` as a person reads it in a terminal.
struct WorkoutReport {
    let workout: Workout
    let summary: WorkoutSummary

    func print() {
        func bpm(_ value: Double) -> String { String(Int(value.rounded())) }
        Swift.print("\(workout.activity.rawValue) of \(TerminalText.escaped(workout.person ?? workout.device ?? "")) (\(workout.id))")
        Swift.print("  from \(RFC3339.string(from: workout.start, fractionDigits: 0)) \(workout.end.map { "to " + RFC3339.string(from: $0, fractionDigits: 0) } ?? "(open)")")
        Swift.print("  elapsed \(ElapsedText.text(seconds: summary.elapsedSeconds)), active \(ElapsedText.text(seconds: summary.activeSeconds))")
        if let heartRate = summary.heartRate {
            Swift.print("  heart rate: average \(bpm(heartRate.average)), min \(bpm(heartRate.minimum)), max \(bpm(heartRate.maximum)) count/min")
        } else {
            Swift.print("  heart rate: no samples")
        }
        if let zones = summary.zones {
            Swift.print("  zones: " + zones.filter { $0.number > 0 }.map { "Z\($0.number) \(ElapsedText.text(seconds: $0.seconds))" }.joined(separator: "  "))
        }
        if let recovery = summary.recoveryOneMinute { Swift.print("  recovery (1 min): \(bpm(recovery)) count/min") }
        if let energy = summary.energyKilocalories { Swift.print("  energy: \(Int(energy.rounded())) kcal") }
        Swift.print("  TRIMP: \(Int(summary.trimp.rounded()))")
        guard summary.laps.count > 1 else { return }
        printTable(
            header: ["LAP", "START", "ACTIVE", "AVG HR", "MAX HR"],
            rows: summary.laps.enumerated().map { index, lap in
                [
                    String(index + 1), RFC3339.string(from: lap.start, fractionDigits: 0), ElapsedText.text(seconds: lap.activeSeconds),
                    lap.heartRate.map { bpm($0.average) } ?? "", lap.heartRate.map { bpm($0.maximum) } ?? "",
                ]
            })
    }
}
