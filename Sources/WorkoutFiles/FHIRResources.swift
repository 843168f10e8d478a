import HealthModel
import JSONLines
import Timestamps

/// The FHIR R4 resources hrmd's files hold (the sample export's and the workout export's), as
/// JSON members to which a caller appends what its file knows more (subject, device, body
/// site, encounter).
public enum FHIRResource {
    /// The Patient of `person`: the name, and gender and birth year when known.
    public static func patient(_ person: Person) -> [(String, JSONValue)] {
        var patient: [(String, JSONValue)] = [("resourceType", .string("Patient")), ("name", .array([.object([("text", .string(person.name))])]))]
        if let sex = person.sex { patient.append(("gender", .string(sex.rawValue))) }
        if let year = person.birthYear, (0...9999).contains(year) {
            let digits = String(year)
            patient.append(("birthDate", .string(String(repeating: "0", count: 4 - digits.count) + digits)))
        }
        return patient
    }

    /// A vital-signs heart-rate Observation (LOINC 8867-4, the FHIR heartrate profile) of
    /// `bpm` count/min at `time`.
    public static func heartRateObservation(id: String, time: Timestamp, bpm: JSONValue) -> [(String, JSONValue)] {
        [
            ("resourceType", .string("Observation")),
            ("id", .string(id)),
            ("meta", .object([("profile", .array([.string("http://hl7.org/fhir/StructureDefinition/heartrate")]))])),
            ("status", .string("final")),
            ("category", category("vital-signs", "Vital Signs")),
            ("code", loinc("8867-4", "Heart rate")),
            ("effectiveDateTime", .string(RFC3339.string(from: time))),
            ("valueQuantity", quantity(bpm, unit: "beats/minute", code: "/min")),
        ]
    }

    /// A reference to the entry at `url`, shown as `display`.
    public static func reference(_ url: String, display: String? = nil) -> JSONValue {
        .object([("reference", .string(url))] + (display.map { [("display", .string($0))] } ?? []))
    }

    /// A Bundle entry: its `fullUrl` and resource.
    public static func entry(_ url: String, _ resource: [(String, JSONValue)]) -> JSONValue {
        .object([("fullUrl", .string(url)), ("resource", .object(resource))])
    }

    /// A UCUM quantity.
    static func quantity(_ value: JSONValue, unit: String, code: String) -> JSONValue {
        .object([("value", value), ("unit", .string(unit)), ("system", .string("http://unitsofmeasure.org")), ("code", .string(code))])
    }

    /// An observation category of HL7's code system.
    static func category(_ code: String, _ display: String) -> JSONValue {
        .array([.object([
            ("coding", .array([.object([
                ("system", .string("http://terminology.hl7.org/CodeSystem/observation-category")),
                ("code", .string(code)), ("display", .string(display)),
            ])])),
            ("text", .string(display)),
        ])])
    }

    /// A LOINC code.
    static func loinc(_ code: String, _ display: String) -> JSONValue {
        .object([
            ("coding", .array([.object([("system", .string("http://loinc.org")), ("code", .string(code)), ("display", .string(display))])])),
            ("text", .string(display)),
        ])
    }
}

/// Writes a workout as a FHIR R4 Bundle (collection): the person as a Patient (when the
/// workout is someone's), the workout as a finished Encounter of theirs (its activity as the
/// type, its start and end as the period, its active time as the length), an Observation of
/// the exercise's active duration (LOINC 55411-3), and a heart-rate Observation per sample of
/// the active time, each naming the Encounter and the Patient.
public struct FHIRWorkoutWriter: Sendable {
    public init() {}

    /// The Bundle; `person` is the workout's person's record, when it has one. `now` is the
    /// Bundle's timestamp.
    public func write(_ recording: WorkoutRecording, person: Person?, now: Timestamp = .now()) -> String {
        let workout = recording.workout
        var entries: [JSONValue] = []
        var subject: [(String, JSONValue)] = []
        if let person {
            let url = "urn:uuid:\(Workout.newID())"
            entries.append(FHIRResource.entry(url, FHIRResource.patient(person)))
            subject = [("subject", FHIRResource.reference(url, display: person.name))]
        }
        let encounterURL = "urn:uuid:\(workout.id)"
        let period = JSONValue.object([
            ("start", .string(RFC3339.string(from: workout.start))), ("end", .string(RFC3339.string(from: recording.end))),
        ])
        let activeMinutes = JSONValue.number((recording.summary.activeSeconds / 60 * 1000).rounded() / 1000)
        let encounter: [(String, JSONValue)] =
            [
                ("resourceType", .string("Encounter")),
                ("identifier", .array([.object([("system", .string("urn:ietf:rfc:3986")), ("value", .string(encounterURL))])])),
                ("status", .string("finished")),
                ("class", .object([
                    ("system", .string("http://terminology.hl7.org/CodeSystem/v3-ActCode")), ("code", .string("FLD")), ("display", .string("field")),
                ])),
                ("type", .array([.object([("text", .string(workout.activity.rawValue))])])),
            ] + subject + [
                ("period", period),
                ("length", FHIRResource.quantity(activeMinutes, unit: "min", code: "min")),
            ]
        entries.append(FHIRResource.entry(encounterURL, encounter))
        let context = [("encounter", FHIRResource.reference(encounterURL))] + subject
        var duration: [(String, JSONValue)] = [
            ("resourceType", .string("Observation")),
            ("status", .string("final")),
            ("category", FHIRResource.category("activity", "Activity")),
            ("code", FHIRResource.loinc("55411-3", "Exercise duration")),
        ]
        duration += context + [("effectivePeriod", period), ("valueQuantity", FHIRResource.quantity(activeMinutes, unit: "min", code: "min"))]
        entries.append(FHIRResource.entry("urn:uuid:\(Workout.newID())", duration))
        for (index, point) in recording.activePoints.enumerated() {
            let observation = FHIRResource.heartRateObservation(id: "hrmd-workout-\(index + 1)", time: point.time, bpm: .number(point.value)) + context
            entries.append(FHIRResource.entry("urn:uuid:\(Workout.newID())", observation))
        }
        let bundle = JSONValue.object([
            ("resourceType", .string("Bundle")), ("type", .string("collection")), ("timestamp", .string(RFC3339.string(from: now))),
            ("entry", .array(entries)),
        ])
        return bundle.serialized + "\n"
    }
}
