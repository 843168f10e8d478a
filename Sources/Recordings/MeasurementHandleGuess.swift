import BluetoothWire
import SensorFrames
import Timestamps

/// A handle of one end's GATT server on a link.
struct ServerHandle: Hashable, Comparable {
    var server: LinkSide
    var handle: UInt16

    static func < (lhs: ServerHandle, rhs: ServerHandle) -> Bool {
        (lhs.handle, lhs.server == .remote ? 0 : 1) < (rhs.handle, rhs.server == .remote ? 0 : 1)
    }

    /// `0x000a` (with `of this host` for the capturing host's own server).
    var description: String {
        hexCode(handle) + (server == .local ? " of this host" : "")
    }
}

/// A notification on a captured link, with the record it came in.
struct CapturedNotification {
    var record: Int
    var time: Timestamp
    var value: [UInt8]
}

/// Which handle of a link carries Heart Rate Measurements (0x2A37) when the capture holds no
/// discovery of it (it began after the discovery, or the host had the strap's attributes
/// cached): the one handle whose every notification decodes as a Heart Rate Measurement
/// with a rate of at most 300. None, or more than one such handle, is no answer.
enum MeasurementHandleGuess: Equatable {
    case one(ServerHandle)
    case several([ServerHandle])
    case none

    /// The guess among handles with notifications, given whether every notification of each
    /// decodes as a measurement (`isMeasurement`).
    init(_ allMeasurements: [ServerHandle: Bool]) {
        let candidates = allMeasurements.filter(\.value).keys.sorted()
        switch candidates.count {
        case 0: self = .none
        case 1: self = .one(candidates[0])
        default: self = .several(candidates)
        }
    }

    static func isMeasurement(_ value: [UInt8]) -> Bool {
        guard let measurement = try? HeartRateMeasurement(decoding: value) else { return false }
        return measurement.heartRate <= 300
    }
}
