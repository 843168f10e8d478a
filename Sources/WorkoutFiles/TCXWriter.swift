import HealthModel
import Timestamps

/// Writes a workout as a TCX file (Garmin's Training Center Database v2, as its schema
/// defines it): one `Activity` with one `Lap` per lap, each with its time, energy, average
/// and maximum heart rate, and its heart-rate samples as `Trackpoint`s; a pause ends a
/// `Track` and the resume starts the next, as Garmin's devices write them.
public struct TCXWriter: Sendable {
    public init() {}

    public func write(_ recording: WorkoutRecording) -> String {
        let workout = recording.workout
        let summary = recording.summary
        let points = recording.activePoints
        let active = workout.activeIntervals(now: recording.end)
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xsi:schemaLocation="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2 http://www.garmin.com/xmlschemas/TrainingCenterDatabasev2.xsd">
              <Activities>
                <Activity Sport="\(Self.sport(workout.activity))">
                  <Id>\(Self.time(workout.start))</Id>

            """
        let totalEnergy = summary.energyKilocalories ?? 0
        for lap in summary.laps {
            let share = summary.activeSeconds > 0 ? lap.activeSeconds / summary.activeSeconds : 0
            xml += "      <Lap StartTime=\"\(Self.time(lap.start))\">\n"
            xml += "        <TotalTimeSeconds>\(Self.number(lap.activeSeconds))</TotalTimeSeconds>\n"
            xml += "        <DistanceMeters>0</DistanceMeters>\n"
            xml += "        <Calories>\(Int((totalEnergy * share).rounded()))</Calories>\n"
            if let heartRate = lap.heartRate, let average = Self.bpm(heartRate.average), let maximum = Self.bpm(heartRate.maximum) {
                xml += "        <AverageHeartRateBpm><Value>\(average)</Value></AverageHeartRateBpm>\n"
                xml += "        <MaximumHeartRateBpm><Value>\(maximum)</Value></MaximumHeartRateBpm>\n"
            }
            xml += "        <Intensity>Active</Intensity>\n"
            xml += "        <TriggerMethod>Manual</TriggerMethod>\n"
            let span = TimeSpan(lap.start.secondsSinceEpoch, lap.end.secondsSinceEpoch)
            // One Track per stretch of active time inside the lap.
            for stretch in active {
                let inLap = points.filter { span.contains($0.time.secondsSinceEpoch) && stretch.contains($0.time.secondsSinceEpoch) }
                    .compactMap { point in Self.bpm(point.value).map { (point.time, $0) } }
                guard !inLap.isEmpty else { continue }
                xml += "        <Track>\n"
                for (time, bpm) in inLap {
                    xml += "          <Trackpoint><Time>\(Self.time(time))</Time><HeartRateBpm><Value>\(bpm)</Value></HeartRateBpm></Trackpoint>\n"
                }
                xml += "        </Track>\n"
            }
            xml += "      </Lap>\n"
        }
        xml += """
                  <Notes>\(Self.escaped("hrmd workout \(workout.id)" + (workout.person.map { " of \($0)" } ?? "")))</Notes>
                </Activity>
              </Activities>
            </TrainingCenterDatabase>

            """
        return xml
    }

    /// TCX knows three sports.
    static func sport(_ activity: WorkoutActivity) -> String {
        switch activity {
        case .running: "Running"
        case .cycling: "Biking"
        default: "Other"
        }
    }

    /// RFC 3339 in UTC with milliseconds, as TCX's `xsd:dateTime`.
    static func time(_ time: Timestamp) -> String { RFC3339.string(from: time) }

    /// A heart rate as TCX's `unsignedByte` of at least 1; nil when it is none.
    static func bpm(_ value: Double) -> Int? {
        guard value.isFinite else { return nil }
        let rounded = Int(value.rounded())
        return (1...255).contains(rounded) ? rounded : nil
    }

    static func number(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    /// Text for XML: `&`, `<` and `>` escaped, control characters dropped.
    static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case _ where scalar.value < 0x20 && scalar != "\t" && scalar != "\n": continue
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
