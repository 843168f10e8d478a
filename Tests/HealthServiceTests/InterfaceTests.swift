import HealthRequests
import Foundation
import HealthModel
import HealthUnits
import Timestamps
@testable import HealthService
import HealthWire
import SDBus
import Testing

@Suite("The served interface")
struct InterfaceTests {
    /// (method → (in signature, out signature, argument names)) of the XML in the repository.
    static func methodsOfXML() throws -> [String: (String, String, [String])] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("dbus/org.hrmd.Health1.xml")
        let text = try String(contentsOf: url, encoding: .utf8)
        var methods: [String: (String, String, [String])] = [:]
        let method = try Regex(#"<method name="([A-Za-z]+)">(.*?)</method>|<method name="([A-Za-z]+)"/>"#).dotMatchesNewlines()
        let argument = try Regex(#"<arg name="([A-Za-z]+)" type="([^"]+)" direction="(in|out)"/>"#)
        for match in text.matches(of: method) {
            let name = String((match.output[1].substring ?? match.output[3].substring)!)
            var inputs = "", outputs = "", names: [String] = []
            if let body = match.output[2].substring {
                for arg in body.matches(of: argument) {
                    names.append(String(arg.output[1].substring!))
                    if arg.output[3].substring == "in" { inputs += arg.output[2].substring! } else { outputs += arg.output[2].substring! }
                }
            }
            methods[name] = (inputs, outputs, names)
        }
        return methods
    }

    @Test("the vtable declares exactly the methods of dbus/org.hrmd.Health1.xml, with their signatures and names")
    func matchesXML() throws {
        let xml = try Self.methodsOfXML()
        let served = HealthInterface.description(version: "test")
        #expect(Set(served.methods.map(\.name)) == Set(xml.keys))
        for method in served.methods {
            guard let expected = xml[method.name] else { continue }
            #expect(method.inputSignature == expected.0, "\(method.name) in")
            #expect(method.outputSignature == expected.1, "\(method.name) out")
            #expect((method.inputs + method.outputs).map(\.name) == expected.2, "\(method.name) names")
        }
        #expect(served.signals.map(\.name) == ["SamplesChanged"] && served.signals.first?.signature == "st")
    }

    @Test("sources a manager may name")
    func sourceNames() {
        #expect(SourceNames.isValid("hrmd"))
        #expect(SourceNames.isValid("mary/runner"))
        #expect(SourceNames.isValid("uid-1001/x"))
        #expect(!SourceNames.isValid("mary"))
        #expect(!SourceNames.isValid("mary/Runner"))
        #expect(!SourceNames.isValid("/runner"))
        #expect(!SourceNames.isValid("a/b/c"))
    }
}

@Suite("One definition per request")
struct RequestTableTests {
    @Test("no request an application may make costs memory that grows with what the store holds")
    func applicationRequestsAreBounded() {
        for request in RequestCatalog.all where request.access == .application {
            if case .perStored = request.memory { Issue.record("\(request.name) grows with the store: \(request.memory)") }
        }
        #expect(Statistics.memory == .answer(StatisticsBucket.maximumCount, of: "bucket"))
        #expect(HeartRateZonesRequest.memory == .perSeries && HeartRateVariabilityRequest.memory == .perSeries)
        #expect(QuerySamples.memory.description == "its answer: at most \(RequestBudgets.samplesPerQuery) samples")
    }

    @Test("every request of the catalogue is a method of the interface, and every method a request")
    func catalogueMatchesInterface() {
        let methods = Set(HealthInterface.description(version: "test").methods.map(\.name))
        let requests = RequestCatalog.all.map { $0.name }
        #expect(Set(requests) == methods)
        #expect(Set(requests).count == requests.count, "a request name appears twice")
    }

    @Test("each request's properties are its method's arguments, by name and in order")
    func propertiesMatchArguments() throws {
        let samples = [
            try QuantitySample(
                type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: 61), start: Timestamp(microsecondsSinceEpoch: 1),
                end: Timestamp(microsecondsSinceEpoch: 1))
        ]
        let requests: [any HealthRequest] = [
            RequestAuthorization(app: "a", share: [.heartRate], read: []), AuthorizationStatusRequest(app: "a", type: .heartRate),
            SaveSamples(app: "a", samples: samples), QuerySamples(app: "a", type: .heartRate, since: nil, until: nil, limit: 0),
            QuerySamplesToFile(app: "a", type: .heartRate, since: nil, until: nil, options: .init(limit: 3), output: PassedFile(descriptor: 0)),
            Statistics(app: "a", type: .heartRate, bucket: .hour, since: nil, until: nil, timeZone: nil),
            HeartRateVariabilityRequest(app: "a", since: nil, until: nil),
            HeartRateZonesRequest(app: "a", since: nil, until: nil, maxHeartRate: 190), Changes(app: "a", type: .heartRate, anchor: 0, limit: 0),
            CurrentAnchor(), Anchor(app: "a", type: .heartRate), Observe(app: "a", type: .heartRate), Unobserve(app: "a", type: .heartRate),
            DeleteSamples(app: "a", type: .heartRate, source: nil, since: nil, until: nil),
            SetAuthorization(.sharingAuthorized, source: "mary/a", type: .heartRate, access: .read), Authorizations(), Devices(), Sources(),
            Import(file: PassedFile(descriptor: 0), options: ImportOptions(name: "x")), LatestSample(app: "a", type: .heartRate),
            SamplePage(app: "a", type: .heartRate, since: nil, until: nil, limit: 10, options: .init(device: "d", cursor: "1.1")),
            CreateAccessToken(source: "mary/dash", manager: false, expiresIn: 3600), AccessTokens(), RevokeAccessTokens(idOrSource: "mary/dash"),
            People(), SavePerson(Person(name: "ann", birthYear: 1990, sex: .female, zoneMethod: .heartRateReserve), creating: true),
            RemovePerson(named: "ann"), AssignStrap(person: "ann", device: "AA:BB:CC:DD:EE:01", from: Timestamp(microsecondsSinceEpoch: 5), until: nil),
            PersonZones(person: "ann", since: nil, until: nil, maxHeartRate: nil),
            PersonStatistics(person: "ann", type: .heartRate, bucket: .day, since: nil, until: nil, timeZone: "Europe/Oslo"),
            PersonVariability(person: "ann", since: Timestamp(microsecondsSinceEpoch: 3), until: nil),
            StartWorkout(app: "a", person: "ann", device: nil, activity: .rowing, at: nil),
            AddWorkoutEvent(app: "a", id: nil, person: "ann", device: nil, type: .lap, at: Timestamp(microsecondsSinceEpoch: 7)),
            EndWorkout(app: "a", id: "0f", person: nil, device: nil, at: nil),
            Workouts(app: "a", since: nil, until: Timestamp(microsecondsSinceEpoch: 9), person: nil, device: "d", limit: 10),
            Events(app: "a", since: nil, until: Timestamp(microsecondsSinceEpoch: 9), type: .highHeartRateEvent, person: "p", device: nil, limit: 10),
            WorkoutDetails(app: "a", id: "0f"), WorkoutHeartRate(app: "a", id: "0f"),
            WorkoutChanges(app: "a", anchor: 5, limit: 10), DeleteWorkout(app: "a", id: "0f"), DeleteEvent(app: "a", id: "e1"),
            Waveforms(app: "a", since: nil, until: Timestamp(microsecondsSinceEpoch: 9), type: .electrocardiogram, device: "d", limit: 10),
            WaveformSamples(app: "a", id: "w1", since: Timestamp(microsecondsSinceEpoch: 3), until: nil), DeleteWaveform(app: "a", id: "w1"),
        ]
        #expect(Set(requests.map { type(of: $0).name }) == Set(RequestCatalog.all.map { $0.name }))
        for request in requests {
            let name = type(of: request).name
            let layout = try #require(HealthInterface.layouts[name])
            let arguments = try RequestCoding.encode(request, as: layout.inputs)
            #expect(arguments.map(\.signature).joined() == layout.inputs.map(\.signature).joined(), "\(name)")
            _ = try roundTrip(request, arguments, layout.inputs)
        }
    }

    @Test("waveform recordings and their segments travel and come back as they were")
    func waveformsTravel() throws {
        let recording = WaveformRecording(
            id: "w1", type: .acceleration, source: "hrmd", device: "AA:BB:CC:DD:EE:01", frequency: 50,
            start: Timestamp(microsecondsSinceEpoch: 1_000_000), end: Timestamp(microsecondsSinceEpoch: 1_060_000), instantCount: 3,
            isOpen: true)
        let answer = WaveformSamples.Response(
            recording: recording,
            segments: [
                WaveformSegment(start: Timestamp(microsecondsSinceEpoch: 1_000_000), values: [1, -2, 1000, .min, .max, 0]),
                WaveformSegment(start: Timestamp(microsecondsSinceEpoch: 1_040_000), values: [7, 8, 9]),
            ], next: 0)
        let layout = try #require(HealthInterface.layouts[WaveformSamples.name])
        let values = try RequestCoding.encode(answer, as: layout.outputs)
        let back = try RequestCoding.decode(WaveformSamples.Response.self, from: values, as: layout.outputs)
        #expect(back.recording == recording)
        #expect(back.segments == answer.segments)
        let listLayout = try #require(HealthInterface.layouts[Waveforms.name])
        let list = Waveforms.Response(recordings: [recording])
        let listBack = try RequestCoding.decode(
            Waveforms.Response.self, from: try RequestCoding.encode(list, as: listLayout.outputs), as: listLayout.outputs)
        #expect(listBack.recordings == [recording])
    }

    @Test("people and strap assignments travel as dictionaries and come back as they were")
    func peopleTravel() throws {
        let ann = Person(
            name: "ann", birthYear: 1990, sex: .female, weightKilograms: 61.5, restingHeartRate: 52, maximumHeartRate: nil,
            zoneMethod: .bounds([100, 120, 140, 160, 170]), alertHigh: 130, alertLow: 45)
        let bob = Person(name: "bob")
        let answer = People.Response(
            people: [ann, bob],
            assignments: [
                StrapAssignment(device: "AA:BB:CC:DD:EE:01", person: "ann", from: Timestamp(microsecondsSinceEpoch: 1), until: Timestamp(microsecondsSinceEpoch: 9)),
                StrapAssignment(device: "AA:BB:CC:DD:EE:01", person: "bob", from: Timestamp(microsecondsSinceEpoch: 9), until: nil),
            ])
        let layout = try #require(HealthInterface.layouts[People.name])
        let values = try RequestCoding.encode(answer, as: layout.outputs)
        let back = try RequestCoding.decode(People.Response.self, from: values, as: layout.outputs)
        #expect(back.people == answer.people)
        #expect(back.assignments == answer.assignments)
        let saved = SavePerson(ann, creating: false)
        let saveLayout = try #require(HealthInterface.layouts[SavePerson.name])
        #expect(try roundTrip(saved, try RequestCoding.encode(saved, as: saveLayout.inputs), saveLayout.inputs).person == ann)
    }

    @Test("a workout and its figures travel as dictionaries and come back as they were")
    func workoutsTravel() throws {
        let start = Timestamp(microsecondsSinceEpoch: 1_000_000_000)
        let workout = Workout(
            id: "9b1c", source: "mary/coach", person: "ann", device: "AA:BB:CC:DD:EE:01", activity: .strengthTraining, start: start,
            end: start.advanced(bySeconds: 600),
            events: [WorkoutEvent(.pause, at: start.advanced(bySeconds: 60)), WorkoutEvent(.resume, at: start.advanced(bySeconds: 90))])
        let figures = WorkoutSummary.HeartRateFigures(average: 131.5, minimum: 90, maximum: 171, count: 570)
        let zone = HeartRateZones.Zone(number: 5, lower: 171, upper: .infinity, seconds: 3)
        let summary = WorkoutSummary(
            elapsedSeconds: 600, activeSeconds: 570, heartRate: figures, zones: [zone],
            laps: [WorkoutSummary.Lap(start: start, end: start.advanced(bySeconds: 600), activeSeconds: 570, heartRate: nil, zones: nil)],
            recoveryOneMinute: 31, energyKilocalories: nil, trimp: 12.25)
        let answer = WorkoutDetails.Response(workout: workout, summary: summary)
        let layout = try #require(HealthInterface.layouts[WorkoutDetails.name])
        let back = try RequestCoding.decode(WorkoutDetails.Response.self, from: try RequestCoding.encode(answer, as: layout.outputs), as: layout.outputs)
        #expect(back.workout == workout)
        #expect(back.summary == summary)
        let open = Workout(id: "9b1d", source: "hrmd", person: nil, device: "d", activity: .other, start: start)
        let list = Workouts.Response(workouts: [workout, open])
        let listLayout = try #require(HealthInterface.layouts[Workouts.name])
        #expect(try RequestCoding.decode(Workouts.Response.self, from: try RequestCoding.encode(list, as: listLayout.outputs), as: listLayout.outputs).workouts == [workout, open])
    }

    @Test("events travel as dictionaries, open and closed, and come back as they were")
    func eventsTravel() throws {
        let start = Timestamp(microsecondsSinceEpoch: 1_000_000_000)
        let closed = HealthEvent(
            id: "e-1", type: .highHeartRateEvent, source: "hrmd", device: "AA:BB:CC:DD:EE:01", person: "ann", start: start,
            end: start.advanced(bySeconds: 600), latest: start.advanced(bySeconds: 600), threshold: 120, extreme: 151.5)
        let open = HealthEvent(
            id: "e-2", type: .sensorContactLost, source: "hrmd", device: "d", person: nil, start: start, end: nil, latest: start.advanced(bySeconds: 31))
        let answer = Events.Response(events: [closed, open])
        let layout = try #require(HealthInterface.layouts[Events.name])
        #expect(try RequestCoding.decode(Events.Response.self, from: try RequestCoding.encode(answer, as: layout.outputs), as: layout.outputs).events == [closed, open])
    }

    /// A type made of others: laps with zones, bounds and a person inside one session.
    struct Lap: WireOptions, Hashable {
        var start: Int64
        var zones: [HeartRateZones.Zone]
        var bounds: [Double]
        var tags: [String]?
    }

    struct Session: WireOptions, Hashable {
        var name: String
        var laps: [Lap]
        var person: Person?
        var note: String?
    }

    @Test("a dictionary may hold dictionaries, arrays of them and arrays of numbers, and comes back as it was")
    func nestedDictionaries() throws {
        let zone = HeartRateZones.Zone(number: 2, lower: 120, upper: 140, seconds: 61.5)
        let session = Session(
            name: "tuesday",
            laps: [
                Lap(start: 5, zones: [zone], bounds: [90, 110.5], tags: ["hill", "ü"]),
                Lap(start: 9, zones: [], bounds: [], tags: nil),
            ],
            person: Person(name: "ann", birthYear: 1990, zoneMethod: .heartRateReserve), note: nil)
        let value = session.wireValue
        #expect(value.signature == "a{sv}")
        #expect(try Session.fromWire(value, index: nil) == session)
        #expect(try Session.fromWire(Session(name: "x", laps: [], person: nil, note: "n").wireValue, index: nil).note == "n")
        // A nested value of the wrong shape is refused, not guessed.
        let wrong = WireDictionary.value([("name", .string("x")), ("laps", .string("not laps"))])
        #expect(throws: WireError.self) { try Session.fromWire(wrong, index: nil) }
    }

    private func roundTrip<Request: HealthRequest>(_ request: Request, _ arguments: [DBusValue], _ layout: [DBusArgument]) throws -> Request {
        try RequestCoding.decode(Request.self, from: arguments, as: layout)
    }
}
