import ByteSources
import FITDecoding
import Foundation
import HealthModel
import Testing
import Timestamps

@testable import WorkoutFiles

@Suite("Workouts as FIT activities and TCX files")
struct WorkoutFilesTests {
    static let start = Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000)

    static func at(_ seconds: Double) -> Timestamp { start.advanced(bySeconds: seconds) }

    /// Ten minutes of running with a lap at 4 min and a pause from 5 to 6 min; one sample a
    /// second, rising from 100 to about 160 count/min.
    static func recording(activity: WorkoutActivity = .running) -> WorkoutRecording {
        let workout = Workout(
            id: "1b0c2e1e-0000-4000-8000-000000000001", source: "root/hrmctl", person: "ann", device: nil, activity: activity, start: start,
            end: at(600), events: [WorkoutEvent(.lap, at: at(240)), WorkoutEvent(.pause, at: at(300)), WorkoutEvent(.resume, at: at(360))])
        let points = stride(from: 0.0, to: 600, by: 1).map { WorkoutPoint(time: at($0), value: 100 + $0 / 10) }
        var builder = WorkoutSummary.Builder(
            workout: workout, physiology: WorkoutPhysiology(person: Person(name: "ann", maximumHeartRate: 190), year: 2026), now: at(600))
        for point in points { builder.add(point.value, at: point.time.secondsSinceEpoch, device: "strap") }
        return WorkoutRecording(workout: workout, summary: builder.summary(), points: points)
    }

    @Test("the FIT file reads back whole with our own decoder: an activity, its CRCs right, a record per active second")
    func fitReadsBack() throws {
        let recording = Self.recording()
        let bytes = try FITActivityWriter().write(recording)
        #expect(Array(bytes[8..<12]) == Array(".FIT".utf8))
        let activity = try FITDecoder.decodeActivity(bytes)
        #expect(activity.fileType == 4)
        #expect(activity.creatorManufacturer == 255)
        #expect(activity.records.count == 540, "600 s less the minute paused")
        let first = try #require(activity.records.first)
        #expect(first.unixSeconds == Self.start.microsecondsSinceEpoch / 1_000_000)
        #expect(first.heartRate == 100)
        #expect(!activity.records.contains { record in
            guard let seconds = record.unixSeconds else { return true }
            let offset = seconds - Self.start.microsecondsSinceEpoch / 1_000_000
            return offset >= 300 && offset < 360
        }, "no record inside the pause")
        let times = activity.records.compactMap(\.unixSeconds)
        #expect(times == times.sorted())
    }

    @Test("a flipped byte is caught by the file's CRC")
    func fitCRC() throws {
        var bytes = try FITActivityWriter().write(Self.recording())
        bytes[40] ^= 0x01
        #expect(throws: FITError.self) { try FITDecoder.decodeActivity(bytes) }
    }

    @Test("every activity has a FIT sport, and a time FIT cannot hold is refused in one line")
    func sportsAndTimes() throws {
        for activity in WorkoutActivity.allCases {
            let sport = FITSport(activity)
            #expect(activity == .other ? sport.sport == 0 : sport.sport != 0 || sport.subSport != 0, "\(activity)")
            _ = try FITActivityWriter().write(Self.recording(activity: activity))
        }
        var old = Self.recording()
        old.workout.start = Timestamp(microsecondsSinceEpoch: 0)
        #expect(throws: WorkoutFileError.self) { try FITActivityWriter().write(old) }
    }

    @Test("the TCX file has a lap per lap, a track per stretch of active time, a trackpoint per active sample")
    func tcxShape() throws {
        let xml = TCXWriter().write(Self.recording())
        func count(_ text: String) -> Int { xml.components(separatedBy: text).count - 1 }
        let laps = xml.components(separatedBy: "<Lap ").dropFirst()
        #expect(laps.count == 2)
        #expect(laps.map { $0.components(separatedBy: "<Track>").count - 1 } == [1, 2], "the pause splits the second lap's track")
        #expect(count("<Trackpoint>") == 540)
        #expect(xml.contains("<Activity Sport=\"Running\">"))
        #expect(xml.contains("<Id>\(RFC3339.string(from: Self.start))</Id>"))
        #expect(xml.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<TrainingCenterDatabase "))
        #expect(TCXWriter.sport(.yoga) == "Other" && TCXWriter.sport(.cycling) == "Biking")
        #expect(TCXWriter.escaped("a<b>&\u{1}c") == "a&lt;b&gt;&amp;c")
    }

    @Test("a FIT file's session reads back as the workout it was written from: activity, start, end, laps and pauses")
    func sessionsReadBack() throws {
        for activity in WorkoutActivity.allCases {
            let recording = Self.recording(activity: activity)
            let bytes = try FITActivityWriter().write(recording)
            let sessions = try FITHeartRateSummary(scanning: ByteSource(bytes)).sessions
            #expect(sessions.isComplete)
            let read = try #require(FITSessionWorkout.all(sessions).first)
            #expect(FITSessionWorkout.all(sessions).count == 1)
            #expect(read.activity == activity)
            #expect(read.start == recording.workout.start && read.end == recording.workout.end)
            #expect(read.events == recording.workout.events)
            let workout = read.workout(id: "x", source: "hrmd", person: nil, device: "fit-1")
            #expect(workout.problem == nil)
        }
    }

    @Test("a FIT sport hrmd does not write reads as the activity of its sport, or other")
    func foreignSports() {
        #expect(WorkoutActivity(fitSport: 1, subSport: 3) == .running, "treadmill running is running")
        #expect(WorkoutActivity(fitSport: 10, subSport: 43) == .yoga)
        #expect(WorkoutActivity(fitSport: 10, subSport: 99) == .other)
        #expect(WorkoutActivity(fitSport: 200, subSport: 0) == .other)
    }

    @Test("a hostile file of 10,000 sessions and 40,000 timer stops keeps a bounded part, counted")
    func manySessions() throws {
        var messages = FITMessages()
        let base = try FITActivityWriter.time(Self.start)
        for index in 0..<10_000 {
            let start = base + UInt32(index * 10)
            for offset in 1...4 {
                messages.add(.event, [.uint32(253, start + UInt32(offset)), .enumeration(0, 0), .enumeration(1, 4)])
            }
            messages.add(.session, [.uint32(253, start + 9), .uint32(2, start), .enumeration(5, 1), .enumeration(6, 0), .uint32(7, 9000)])
        }
        let bytes = messages.file(profileVersion: FITActivityWriter.profileVersion)
        let sessions = try FITHeartRateSummary(scanning: ByteSource(bytes)).sessions
        #expect(sessions.sessionCount == 10_000)
        #expect(sessions.sessions.count == FITSessions.sessionLimit)
        #expect(sessions.marks.count == FITSessions.markLimit)
        #expect(sessions.marksDropped == 40_000 - FITSessions.markLimit)
        #expect(!sessions.isComplete)
        let workouts = FITSessionWorkout.all(sessions)
        #expect(workouts.count == FITSessions.sessionLimit)
        #expect(workouts.allSatisfy { $0.events.count == 1 && $0.events[0].type == .pause }, "repeated stops pause once")
    }

    @Test("a session without a start, or ending before it starts, is counted, not kept")
    func unusableSessions() throws {
        var messages = FITMessages()
        let base = try FITActivityWriter.time(Self.start)
        messages.add(.session, [.uint32(253, base + 10), .enumeration(5, 1)])
        messages.add(.session, [.uint32(253, base + 10), .uint32(2, base + 20), .enumeration(5, 1)])
        messages.add(.session, [.uint32(253, base + 10), .uint32(2, base), .enumeration(5, 2)])
        let sessions = try FITHeartRateSummary(scanning: ByteSource(messages.file(profileVersion: 2140))).sessions
        #expect(sessions.sessionCount == 3 && sessions.unusableSessions == 2)
        #expect(sessions.isComplete)
        #expect(FITSessionWorkout.all(sessions).map(\.activity) == [.cycling])
        #expect(FITSessionWorkout.all(sessions).first?.end == Self.at(10))
    }
}
