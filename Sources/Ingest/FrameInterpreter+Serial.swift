import HealthModel
import HealthStore
import SensorFrames

extension FrameInterpreter {
    /// One line of the serial heart-rate line protocol (``SerialHeartRateLine``): a heart-rate
    /// sample, RR intervals and the battery level. A serial sensor has no location field:
    /// only the configuration gives one.
    func interpretSerialLine(_ frame: SensorFrame, profile: inout DeviceProfile, result: inout Interpretation) {
        guard frame.kind == .notify else { return }
        let line: SerialHeartRateLine
        do {
            line = try SerialHeartRateLine(parsing: frame.value)
        } catch {
            result.skips.append(.malformed("\(error)"))
            return
        }
        if let battery = line.batteryPercent { profile.battery = battery }
        guard let heartRate = line.heartRate else { return }
        let reading = Reading(heartRate: heartRate, rrIntervals: line.rrIntervalsMilliseconds.map { Double($0) / 1000 })
        samples(from: reading, at: frame.time, profile: &profile, into: &result)
    }
}
