import ArgumentParser
import CommandSupport
import Foundation
import HealthModel
import HealthRequests
import JSONLines
import StoreTransport
import Timestamps
import WaveformFiles

/// `hrmctl ecg`: the electrocardiogram and acceleration recordings of straps that stream them.
struct EcgCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ecg",
        abstract: "List, export and delete the ECG and acceleration recordings of straps that stream them.",
        discussion: """
            hrmd records a strap's ECG (µV, 130 Hz on a Polar H10) and acceleration (mG on x, y
            and z) when the strap streams them (mock:ecg=on,acc=on for the mock strap) and the
            user granted hrmd share authorization of electrocardiogram and acceleration
            (hrmctl auth grant hrmd electrocardiogram). A recording runs from its stream's
            start to its stop; frames lost on the way leave gaps in it.
            """,
        subcommands: [EcgListCommand.self, EcgExportCommand.self, EcgDeleteCommand.self])
}

/// `hrmctl ecg list`.
struct EcgListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the recordings, newest first.")

    @OptionGroup var storeOptions: StoreOptions
    @Option(help: ArgumentHelp("Recordings that end after WHEN: RFC 3339 or an age such as 7d.", valueName: "when")) var since: String?
    @Option(help: ArgumentHelp("Recordings that start before WHEN.", valueName: "when")) var until: String?
    @Option(help: ArgumentHelp("electrocardiogram or acceleration (default both).", valueName: "type")) var type: String?
    @Option(help: ArgumentHelp("Only this strap's.", valueName: "device-id")) var device: String?
    @Option(help: ArgumentHelp("At most N (1-10000).", valueName: "n")) var limit: Int = 100
    @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table

    func validate() throws {
        guard (1...WaveformQuery.answerLimit).contains(limit) else { throw ValidationError("--limit must be 1…\(WaveformQuery.answerLimit)") }
        _ = try waveformType()
    }

    private func waveformType() throws(ValidationError) -> SampleType? {
        guard let type else { return nil }
        guard let named = SampleType(identifier: type), named.kind == .waveform else {
            throw ValidationError("--type must be \(SampleType.waveformTypes.map(\.identifier).joined(separator: " or ")), not '\(type)'")
        }
        return named
    }

    func run() async throws {
        try await reportingFailures {
            let now = Timestamp.now()
            let recordings = try await storeOptions.access().send(
                Waveforms(
                    app: ServiceTransport.app, since: try WorkoutCommand.time(since, "--since", now: now),
                    until: try WorkoutCommand.time(until, "--until", now: now), type: try waveformType(), device: device, limit: limit)
            ).recordings
            switch output {
            case .json:
                for recording in recordings { printJSONLine(WaveformJSON.object(recording)) }
            case .csv:
                print("id,type,device,start,end,frequency,instants,open")
                for recording in recordings {
                    print(csvRow([
                        recording.id, recording.type.identifier, recording.device ?? "", RFC3339.string(from: recording.start),
                        RFC3339.string(from: recording.end), WaveformJSON.number(recording.frequency), String(recording.instantCount),
                        recording.isOpen ? "true" : "false",
                    ]))
                }
            case .table:
                guard !recordings.isEmpty else { print("no recordings"); return }
                printTable(
                    header: ["ID", "TYPE", "DEVICE", "START", "DURATION", "RATE"],
                    rows: recordings.map { recording in
                        [
                            recording.id, recording.type.identifier, recording.device ?? "",
                            RFC3339.string(from: recording.start, fractionDigits: 0),
                            (recording.isOpen ? "recording, " : "") + ElapsedText.text(recording.end, since: recording.start),
                            "\(WaveformJSON.number(recording.frequency)) Hz",
                        ]
                    })
            }
        }
    }
}

/// `hrmctl ecg export`.
struct EcgExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a recording, or a strap's ECG over a time range, as EDF+, WFDB, CSV or FHIR.",
        discussion: """
            edf: EDF+ (EDF+D when the stretch has gaps), values exact when they fit 16 bits.
            wfdb: PhysioNet's WFDB record, FILE.hea and FILE.dat (FILE names the header; the
            signal file is written beside it). csv: a line per instant, its time and values.
            fhir: one FHIR R4 Observation with valueSampledData (\"E\" marks the instants of gaps).
            """)

    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: ArgumentHelp("The recording's id (hrmctl ecg list).", valueName: "id")) var id: String?
    @Option(help: ArgumentHelp("Instead of an id: this strap's recordings over --since … --until.", valueName: "device-id")) var device: String?
    @Option(help: ArgumentHelp("electrocardiogram (default) or acceleration, with --device.", valueName: "type")) var type: String = "electrocardiogram"
    @Option(help: ArgumentHelp("From WHEN: RFC 3339 or an age such as 10m.", valueName: "when")) var since: String?
    @Option(help: ArgumentHelp("Until WHEN.", valueName: "when")) var until: String?
    @Option(help: "edf, wfdb, csv or fhir.") var format: WaveformFileFormat
    @Option(name: [.customShort("o"), .customLong("output-file")], help: ArgumentHelp("The file to write.", valueName: "file")) var outputFile: String

    func validate() throws {
        guard (id == nil) != (device == nil) else { throw ValidationError("name a recording (ID) or a strap (--device ID), not both") }
        if device != nil, since == nil || until == nil { throw ValidationError("--device needs --since and --until") }
        guard let named = SampleType(identifier: type), named.kind == .waveform else {
            throw ValidationError("--type must be \(SampleType.waveformTypes.map(\.identifier).joined(separator: " or "))")
        }
    }

    func run() async throws {
        try await reportingFailures {
            let now = Timestamp.now()
            let from = try WorkoutCommand.time(since, "--since", now: now)
            let to = try WorkoutCommand.time(until, "--until", now: now)
            let access = try await storeOptions.access()
            var ids: [String] = []
            if let id {
                ids = [id]
            } else {
                let listed = try await access.send(
                    Waveforms(app: ServiceTransport.app, since: from, until: to, type: SampleType(identifier: type), device: device,
                              limit: WaveformQuery.answerLimit)
                ).recordings
                ids = listed.sorted { $0.start < $1.start }.map(\.id)
                guard !ids.isEmpty else { throw CommandFailure("no \(type) of \(device ?? "") between \(since ?? "") and \(until ?? "")", status: .noInput) }
            }
            var recording: WaveformRecording?
            var segments: [HealthModel.WaveformSegment] = []
            for id in ids {
                var cursor = from
                while true {
                    let answer = try await access.send(WaveformSamples(app: ServiceTransport.app, id: id, since: cursor, until: to))
                    recording = recording ?? answer.recording
                    for piece in answer.segments {
                        segments.append(joining: piece, frequency: answer.recording.frequency, channels: answer.recording.channels.count)
                    }
                    guard answer.next != 0 else { break }
                    cursor = Timestamp(microsecondsSinceEpoch: answer.next)
                }
            }
            guard let recording, !segments.isEmpty else { throw CommandFailure("the recording holds no samples in that range", status: .noInput) }
            let strip = try WaveformStrip(
                recordingID: recording.id, deviceID: recording.device ?? "", kind: recording.type == .acceleration ? .acceleration : .ecg,
                frequency: recording.frequency,
                segments: segments.map { StripSegment(startNanoseconds: $0.start.microsecondsSinceEpoch * 1000, samples: $0.values) })
            try write(strip)
        }
    }

    private func write(_ strip: WaveformStrip) throws {
        switch format {
        case .edf:
            let file = try EDFPlusWriter().write(strip)
            try Self.save(file.bytes, to: outputFile)
            if !file.isExact { FileHandle.standardError.write(Data("hrmctl: values beyond 16 bits were scaled to fit EDF+\n".utf8)) }
        case .wfdb:
            let base = outputFile.hasSuffix(".hea") ? String(outputFile.dropLast(4)) : outputFile
            let name = URL(fileURLWithPath: base).lastPathComponent
            let record = try WFDBWriter().write(strip, recordName: name)
            let folder = URL(fileURLWithPath: base).deletingLastPathComponent()
            try Self.save(record.signals, to: folder.appendingPathComponent(record.signalFileName).path)
            try Self.save(record.headerBytes, to: folder.appendingPathComponent(record.headerFileName).path)
        case .csv:
            try Self.save(Array(WaveformCSVWriter().write(strip).utf8), to: outputFile)
        case .fhir:
            try Self.save(Array(try FHIRWaveformWriter().write(strip).utf8), to: outputFile)
        }
    }

    private static func save(_ bytes: [UInt8], to path: String) throws {
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CommandFailure("cannot write \(path): \(error.localizedDescription)", status: .cannotCreate)
        }
    }
}

/// The file formats `hrmctl ecg export` writes.
enum WaveformFileFormat: String, ExpressibleByArgument, CaseIterable {
    case edf, wfdb, csv, fhir
}

/// `hrmctl ecg delete`.
struct EcgDeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a recording that has ended, and its samples (a manager of the store).")

    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: ArgumentHelp("The recording's id.", valueName: "id")) var id: String

    func run() async throws {
        try await reportingFailures {
            _ = try await storeOptions.access().send(DeleteWaveform(app: ServiceTransport.app, id: id))
            print("deleted \(id)")
        }
    }
}
