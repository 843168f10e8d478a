import ANTDecoding
import HealthModel
import HealthStore
import SensorFrames

extension FrameInterpreter {
    /// An ANT+ heart-rate broadcast (the whole ANT message): one heart-rate sample per new
    /// beat (the strap repeats each beat in about four messages), RR intervals when the beat
    /// count advanced by one or a trusted page 4 says so, and what pages 2, 3 and 7 tell
    /// about the strap. ANT+ has no body location: only the configuration gives one. The
    /// samples of a beat carry its stamp (`ANTBeatStamp`: the page's beat count and event time).
    func interpretANT(_ frame: SensorFrame, profile: inout DeviceProfile, result: inout Interpretation) {
        switch frame.kind {
        case .notify:
            break
        case .connected, .disconnected:
            profile.antBeats.forgetLastBeat()
            profile.antLastBeatCount = nil
            return
        default:
            return
        }
        let page: HeartRatePage
        let broadcast: BroadcastData
        do {
            let message = try ANTMessage(frame: frame.value)
            guard message.id == ANTMessageID.broadcastData || message.id == ANTMessageID.legacyExtendedBroadcastData else { return }
            broadcast = try BroadcastData(message)
            page = try HeartRatePage(broadcast)
        } catch {
            result.skips.append(.malformed("\(error)"))
            return
        }
        let rr = profile.antBeats.rrIntervals(for: page)
        describe(profile: &profile, page: page, deviceNumber: broadcast.deviceNumber)
        guard page.beatCount != profile.antLastBeatCount else { return }
        profile.antLastBeatCount = page.beatCount
        let reading = Reading(
            heartRate: Int(page.heartRate), rrIntervals: rr.map { Double($0) / Double(HeartRatePage.ticksPerSecond) },
            antBeat: ANTBeatStamp(count: page.beatCount, eventTime: page.beatTime))
        samples(from: reading, at: frame.time, profile: &profile, into: &result)
    }

    /// Pages 2, 3 and 7, once the strap's pages are trusted.
    private func describe(profile: inout DeviceProfile, page: HeartRatePage, deviceNumber: UInt16?) {
        switch profile.antBeats.trustedDetail(of: page) {
        case .manufacturer(let id, let serialHigh):
            profile.device.manufacturer = ANTManufacturer.name(id)
            if profile.device.name == nil, let deviceNumber {
                profile.device.name = "ANT+ heart-rate strap \(UInt32(serialHigh) << 16 | UInt32(deviceNumber))"
            }
        case .product(let hardware, let software, let model):
            profile.device.hardwareVersion = String(hardware)
            profile.device.softwareVersion = String(software)
            profile.device.model = String(model)
        case .battery(let level?, _, _):
            profile.battery = Int(level)
        default:
            break
        }
    }
}

/// ANT+ manufacturer ids of heart-rate strap makers (from the ANT+ common pages' table).
enum ANTManufacturer {
    private static let names: [UInt8: String] = [
        1: "Garmin", 2: "Garmin", 3: "Zephyr", 7: "Quarq", 9: "Saris", 13: "Dynastream OEM", 15: "Dynastream",
        16: "Timex", 23: "Suunto", 32: "Wahoo Fitness", 38: "Osynce", 48: "Pioneer", 69: "Stages Cycling",
        70: "Sigma Sport", 76: "Moxy", 86: "Elite", 89: "Tacx", 95: "Stryd", 123: "Polar Electro", 255: "Development",
    ]

    /// The maker's name, or `ANT+ manufacturer N`.
    static func name(_ id: UInt8) -> String { names[id] ?? "ANT+ manufacturer \(id)" }
}
