import ANTDecoding
import HealthModel
import HealthStore
import HealthUnits
import SensorFrames
import Timestamps

/// What the pipeline learned from one frame.
struct Interpretation {
    var samples: [QuantitySample] = []
    var skips: [SkipReason] = []
}

extension FrameInterpreter {
    /// Interprets `frame`, appending its samples to `samples` (no array per frame); returns
    /// the skips.
    mutating func interpret(_ frame: SensorFrame, into samples: inout [QuantitySample]) -> [SkipReason] {
        var result = Interpretation(samples: samples)
        samples = []
        interpret(frame, result: &result)
        samples = result.samples
        return result.skips
    }

    /// Interprets `frame` on its own.
    mutating func interpret(_ frame: SensorFrame) -> Interpretation {
        var result = Interpretation()
        interpret(frame, result: &result)
        return result
    }
}

/// Turns raw frames into typed samples, applying the documented stored-sample policy.
/// It keeps what each device has told about itself (location, name, versions, energy
/// counter) so that later measurements are tagged with it. Pure: no I/O, no clock.
struct FrameInterpreter {
    /// What is known about one device.
    struct DeviceProfile {
        var device: HealthDevice
        var reportedLocation: HeartRateSensorLocation?
        var battery: Int?
        /// The last Energy Expended reading and when it arrived, to turn the cumulative
        /// counter into interval samples.
        var lastEnergy: (kilojoules: UInt16, time: Timestamp)?
        /// ANT+: the beats seen so far (RR intervals, whether pages are trusted).
        var antBeats = HeartBeatTracker()
        /// ANT+: the beat count of the last page, so a heart-rate sample is stored once per beat.
        var antLastBeatCount: UInt8?
    }

    /// Locations that win over what the sensor reports (from the configuration).
    var locationOverrides: [SensorID: HeartRateSensorLocation]
    private(set) var profiles: [SensorID: DeviceProfile] = [:]

    init(locationOverrides: [SensorID: HeartRateSensorLocation] = [:]) {
        self.locationOverrides = locationOverrides
    }

    mutating func interpret(_ frame: SensorFrame, result: inout Interpretation) {
        var profile = profiles[frame.device] ?? DeviceProfile(device: HealthDevice(localIdentifier: frame.device.rawValue))
        defer { profiles[frame.device] = profile }
        switch frame.transport {
        case .ble, .mock, .fit: interpretGATT(frame, profile: &profile, result: &result)
        case .ant: interpretANT(frame, profile: &profile, result: &result)
        case .serial: interpretSerialLine(frame, profile: &profile, result: &result)
        }
    }

    private func interpretGATT(_ frame: SensorFrame, profile: inout DeviceProfile, result: inout Interpretation) {
        switch (frame.kind, frame.characteristic) {
        case (.notify, .heartRateMeasurement?):
            do {
                let measurement = try HeartRateMeasurement(decoding: frame.value)
                samples(from: Reading(measurement), at: frame.time, profile: &profile, into: &result)
            } catch {
                result.skips.append(.malformed("\(error)"))
            }
        case (.read, .bodySensorLocation?), (.notify, .bodySensorLocation?):
            do {
                let location = try BodySensorLocation(decoding: frame.value)
                profile.reportedLocation = HeartRateSensorLocation(rawValue: Int(location.rawValue))
            } catch {
                result.skips.append(.malformed("\(error)"))
            }
        case (.read, .batteryLevel?), (.notify, .batteryLevel?):
            do {
                profile.battery = try BatteryLevel.decode(frame.value)
            } catch {
                result.skips.append(.malformed("\(error)"))
            }
        case (.read, let characteristic?):
            if let field = DeviceInformationField(characteristic) {
                profile.device.set(field, to: DeviceInformationField.decodeString(frame.value))
            }
        case (.connected, _), (.disconnected, _):
            // A new connection may come after a counter reset: start the energy count afresh.
            profile.lastEnergy = nil
        default:
            break
        }
    }

    /// One heart-rate reading, whatever transport it came through.
    struct Reading {
        var heartRate: Int
        var sensorContact: SensorContact = .unsupported
        var energyExpended: UInt16?
        /// RR intervals in seconds, oldest first; the last ends at the frame's time.
        var rrIntervals: [Double] = []
        /// ANT+: the beat the page reports, stamped on the heart-rate and RR-interval samples.
        var antBeat: ANTBeatStamp?

        init(heartRate: Int, sensorContact: SensorContact = .unsupported, rrIntervals: [Double] = [], antBeat: ANTBeatStamp? = nil) {
            self.heartRate = heartRate
            self.sensorContact = sensorContact
            self.rrIntervals = rrIntervals
            self.antBeat = antBeat
        }

        init(_ measurement: HeartRateMeasurement) {
            heartRate = Int(measurement.heartRate)
            sensorContact = measurement.sensorContact
            energyExpended = measurement.energyExpended
            rrIntervals = measurement.rrIntervals.map { Double($0) / 1024 }
        }
    }

    func samples(from measurement: Reading, at time: Timestamp, profile: inout DeviceProfile, into result: inout Interpretation) {
        let metadata = SampleMetadata(
            sensorLocation: locationOverrides[SensorID(profile.device.localIdentifier)] ?? profile.reportedLocation,
            sensorContact: measurement.sensorContact == .unsupported ? nil : measurement.sensorContact == .detected)

        if let energy = measurement.energyExpended {
            if let last = profile.lastEnergy, energy > last.kilojoules, time > last.time,
               let sample = try? QuantitySample(
                   type: .activeEnergyBurned,
                   quantity: Quantity(unit: .kilojoule, doubleValue: Double(energy - last.kilojoules)),
                   start: last.time, end: time, device: profile.device, metadata: metadata)
            {
                result.samples.append(sample)
            }
            profile.lastEnergy = (energy, time)
        }

        guard measurement.sensorContact != .notDetected else {
            result.skips.append(.contactNotDetected)
            return
        }
        guard (1...300).contains(measurement.heartRate) else {
            result.skips.append(.heartRateOutOfRange)
            return
        }
        if let sample = try? QuantitySample(
            type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: Double(measurement.heartRate)),
            start: time, end: time, device: profile.device, metadata: metadata, antBeat: measurement.antBeat)
        {
            result.samples.append(sample)
        }
        // RR intervals are oldest first and the last one ends at (about) the frame's time:
        // walk back from the frame to place each beat.
        var end = time
        for seconds in measurement.rrIntervals.reversed() {
            guard seconds > 0 else {
                result.skips.append(.emptyRRInterval)
                continue
            }
            let start = end.advanced(bySeconds: -seconds)
            if let sample = try? QuantitySample(
                type: .rrInterval, quantity: Quantity(unit: .second, doubleValue: seconds),
                start: start, end: end, device: profile.device, metadata: metadata, antBeat: measurement.antBeat)
            {
                result.samples.append(sample)
            }
            end = start
        }
    }
}

extension HealthDevice {
    mutating func set(_ field: DeviceInformationField, to value: String?) {
        guard let value else { return }
        switch field {
        case .deviceName: name = value
        case .manufacturerName: manufacturer = value
        case .modelNumber: model = value
        case .hardwareRevision: hardwareVersion = value
        case .firmwareRevision: firmwareVersion = value
        case .softwareRevision: softwareVersion = value
        }
    }
}
