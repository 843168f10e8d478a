@preconcurrency import Glibc
import ArgumentParser
import StoreTransport
import CommandSupport
import Foundation
import HealthModel
import HealthStore
import HealthUnits
import JSONLines
import Timestamps
import WorkoutFiles

/// `hrmctl export`: stored samples in formats other tools read.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export stored samples as CSV, JSON Lines, FHIR R4 or Open mHealth.",
        discussion: """
            csv and jsonl are the shapes of "hrmctl samples" (UTC, milliseconds). fhir is one
            FHIR R4 Bundle (type collection) of vital-signs heart-rate Observations: LOINC
            8867-4, UCUM /min, the device, and the body site (SNOMED CT) when known; each
            person who wore a strap (hrmctl person) is a Patient, and their samples'
            Observations name them as subject (for a manager of the store). omh is
            one Open mHealth heart-rate 2.0 data point per line. fhir and omh take heart-rate
            only.

            EXAMPLES
              hrmctl export --format fhir --since 1d --output today.fhir.json
              hrmctl export --format csv --type rr-interval --since 2h
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case csv, jsonl, fhir, omh }

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var range: RangeOptions
    @Option(help: "csv, jsonl, fhir or omh.") var format: Format
    @Option(help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file")) var output: String?
    @Option(help: ArgumentHelp("Only this person's samples: their straps', each within its assignment (see hrmctl person).", valueName: "name"))
    var person: String?

    func validate() throws {
        let (query, _) = try range.resolved()
        if (format == .fhir || format == .omh) && query.type != .heartRate {
            throw ValidationError("--format \(format.rawValue) exports heart-rate only")
        }
    }

    func run() async throws {
        try await reportingFailures {
            let (query, unit) = try range.resolved()
            let store = try storeOptions.access()
            var filter = try await PersonFilter.make(person, store: store)
            let sink = try LineSink(path: output)
            var count = 0
            switch format {
            case .csv, .jsonl:
                let writer = SampleLinesExport(
                    format == .csv ? .csv : .json, type: query.type, unit: unit, showsGateway: store.showsGateways,
                    people: format != .jsonl ? nil : filter != nil ? filter?.lookup : try await store.personLookup())
                writer.begin(sink)
                try await store.enumeratePoints(query) { point, contexts in
                    if filter != nil, filter?.keeps(device: contexts[point.context].device?.localIdentifier, start: point.start) != true { return }
                    writer.write(point, contexts, to: sink)
                    count += 1
                }
                writer.end(sink)
            case .fhir, .omh:
                let writer: any SampleExportWriter =
                    format == .fhir ? FHIRBundleExport(people: try await store.peopleOfSamples()) : OpenMHealthExport()
                writer.begin(sink)
                try await store.enumerateSamples(query) { stored in
                    if filter != nil, filter?.keeps(device: stored.sample.device?.localIdentifier, start: stored.sample.start) != true { return }
                    writer.write(stored, first: count == 0, to: sink)
                    count += 1
                }
                writer.end(sink)
            }
            try sink.close()
            if count == 0 { printError("no samples", program: "hrmctl") }
        }
    }
}

/// Where export lines go: standard output or a file.
final class LineSink {
    private let file: UnsafeMutablePointer<FILE>
    private let path: String?

    init(path: String?) throws(CommandFailure) {
        self.path = path
        if let path {
            guard let file = fopen(path, "we") else {
                throw CommandFailure("cannot create \(path): \(String(cString: strerror(errno)))", status: .cannotCreate)
            }
            self.file = file
        } else {
            file = stdout
        }
    }

    func write(_ text: String) { fputs(text, file) }

    /// Writes the lines of `buffer` once it holds a block, or all of them when `all`.
    func write(_ buffer: LineBuffer, all: Bool = false) {
        if all { buffer.write(to: file) } else { buffer.writeIfFull(to: file) }
    }

    func close() throws(CommandFailure) {
        guard let path else {
            fflush(file)
            return
        }
        let failed = fflush(file) != 0 || ferror(file) != 0
        fclose(file)
        if failed { throw CommandFailure("cannot write \(path): \(String(cString: strerror(errno)))", status: .cannotCreate) }
    }
}

/// One export format.
protocol SampleExportWriter {
    func begin(_ sink: LineSink)
    func write(_ stored: StoredSample, first: Bool, to sink: LineSink)
    func end(_ sink: LineSink)
}

/// `csv` and `jsonl`: the lines of `hrmctl samples`.
final class SampleLinesExport {
    private var lines: SampleLineFormatter
    private let buffer = LineBuffer()
    private let showsGateway: Bool

    init(_ shape: SampleLineFormatter.Shape, type: SampleType, unit: HealthUnit, showsGateway: Bool = false, people: PersonLookup? = nil) {
        lines = SampleLineFormatter(shape, type: type, unit: unit, people: people)
        self.showsGateway = showsGateway
    }

    func begin(_ sink: LineSink) {
        if lines.shape == .csv { sink.write(SampleLineFormatter.csvHeader(showsGateway: showsGateway) + "\n") }
    }

    func write(_ point: StoredPoint, _ contexts: SampleContexts, to sink: LineSink) {
        lines.append(point, contexts: contexts, to: buffer)
        sink.write(buffer)
    }

    func end(_ sink: LineSink) { sink.write(buffer, all: true) }
}

/// One FHIR R4 Bundle (collection) of vital-signs heart-rate Observations, streamed. Each
/// person who wore a strap (`hrmctl person`) is a Patient at the start of the Bundle, and the
/// Observations of their samples name them as `subject`.
final class FHIRBundleExport: SampleExportWriter {
    /// Whose samples are whose; nil or empty: no Patients, no subjects.
    private var people: PeopleOfSamples?
    /// Each Patient's `urn:uuid:` by the person's name.
    private var patients: [String: String] = [:]
    /// Whether an entry was written (the Patients count).
    private var wroteEntry = false

    init(people: PeopleOfSamples?) { self.people = people }

    func begin(_ sink: LineSink) {
        sink.write(#"{"resourceType":"Bundle","type":"collection","timestamp":"\#(RFC3339.string(from: .now()))","entry":["# + "\n")
        for person in people?.wearers ?? [] {
            let url = "urn:uuid:\(UUID().uuidString.lowercased())"
            patients[person.name] = url
            sink.write((wroteEntry ? ",\n" : "") + FHIRResource.entry(url, FHIRResource.patient(person)).serialized)
            wroteEntry = true
        }
    }

    func write(_ stored: StoredSample, first: Bool, to sink: LineSink) {
        let sample = stored.sample
        let bpm = DisplayNumber(value: (try? sample.quantity.doubleValue(for: .countPerMinute)) ?? .nan)
        var observation = FHIRResource.heartRateObservation(id: "hrmd-\(stored.id)", time: sample.start, bpm: bpm.json)
        if let name = people?.lookup.person(device: sample.device?.localIdentifier, at: sample.start), let url = patients[name] {
            observation.append(("subject", FHIRResource.reference(url, display: name)))
        }
        if let device = sample.device {
            let name = device.name.map { "\($0) (\(device.localIdentifier))" } ?? device.localIdentifier
            observation.append(("device", .object([("display", .string(name))])))
        }
        if let location = sample.metadata.sensorLocation, location != .other {
            var site: [(String, JSONValue)] = []
            if let (code, display) = Self.snomed(location) {
                site.append(("coding", .array([.object([
                    ("system", .string("http://snomed.info/sct")), ("code", .string(code)), ("display", .string(display)),
                ])])))
            }
            site.append(("text", .string(location.name)))
            observation.append(("bodySite", .object(site)))
        }
        let entry = FHIRResource.entry("urn:uuid:\(UUID().uuidString.lowercased())", observation)
        sink.write((wroteEntry ? ",\n" : "") + entry.serialized)
        wroteEntry = true
    }

    func end(_ sink: LineSink) { sink.write("\n]}\n") }

    /// SNOMED CT body structures for the sensor locations that have a clear one.
    static func snomed(_ location: HeartRateSensorLocation) -> (String, String)? {
        switch location {
        case .chest: ("51185008", "Thoracic structure")
        case .wrist: ("8205005", "Wrist region structure")
        case .finger: ("7569003", "Finger structure")
        case .hand: ("85562004", "Hand structure")
        case .foot: ("56459004", "Foot structure")
        case .earLobe, .other: nil
        }
    }
}

/// Open mHealth heart-rate 2.0 data points, one per line.
struct OpenMHealthExport: SampleExportWriter {
    func begin(_ sink: LineSink) {}

    func write(_ stored: StoredSample, first: Bool, to sink: LineSink) {
        let sample = stored.sample
        let bpm = DisplayNumber(value: (try? sample.quantity.doubleValue(for: .countPerMinute)) ?? .nan)
        let point = JSONValue.object([
            ("header", .object([
                ("id", .string("hrmd-\(stored.id)")),
                ("creation_date_time", .string(RFC3339.string(from: sample.start))),
                ("schema_id", .object([("namespace", .string("omh")), ("name", .string("heart-rate")), ("version", .string("2.0"))])),
                ("acquisition_provenance", .object([
                    ("source_name", .string(stored.source.name)), ("modality", .string("sensed")),
                ])),
            ])),
            ("body", .object([
                ("heart_rate", .object([("value", bpm.json), ("unit", .string("beats/min"))])),
                ("effective_time_frame", .object([("date_time", .string(RFC3339.string(from: sample.start)))])),
            ])),
        ])
        sink.write(point.serialized + "\n")
    }

    func end(_ sink: LineSink) {}
}
