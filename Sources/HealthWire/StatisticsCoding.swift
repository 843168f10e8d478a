import HealthRequests
import Foundation
import HealthModel
import SDBus
import Timestamps

extension StatisticsBucketValue {
    /// `(start, end, count, min, avg, max, sum)`.
    public static let wireSignature = "(xxudddd)"

    public var wireValue: DBusValue {
        .structure([
            .int64(start.microsecondsSinceEpoch), .int64(end.microsecondsSinceEpoch), .uint32(UInt32(clamping: count)),
            .double(minimum), .double(average), .double(maximum), .double(sum),
        ])
    }

    public init(wire value: DBusValue) throws(WireError) {
        guard case .structure(let fields) = value.unwrapped, fields.count == 7,
              let start = fields[0].integer, let end = fields[1].integer, let count = fields[2].integer,
              case .double(let minimum) = fields[3], case .double(let average) = fields[4],
              case .double(let maximum) = fields[5], case .double(let sum) = fields[6]
        else { throw WireError("a statistics bucket is not \(Self.wireSignature)") }
        self.init(
            start: Timestamp(microsecondsSinceEpoch: start), end: Timestamp(microsecondsSinceEpoch: end), count: Int(count),
            minimum: minimum, average: average, maximum: maximum, sum: sum)
    }
}

extension HeartRateVariability {
    /// `beats` u, `meanNN` d, `sdnn` d, `rmssd` d (absent when no two beats are adjacent).
    public var wireValue: DBusValue {
        WireDictionary.value([
            ("beats", .uint32(UInt32(clamping: beats))), ("meanNN", .double(meanNN)), ("sdnn", .double(sdnn)),
            ("rmssd", rmssd.map(DBusValue.double)),
        ])
    }

    /// The variability a dictionary describes; nil for the empty one (no beats).
    public static func fromWire(_ value: DBusValue) throws(WireError) -> HeartRateVariability? {
        let entries = try WireDictionary(value, context: "variability")
        guard let beats = try entries.integer("beats"), beats > 0 else { return nil }
        return HeartRateVariability(
            beats: Int(beats), meanNN: try entries.requiredNumber("meanNN"), sdnn: try entries.requiredNumber("sdnn"),
            rmssd: try entries.number("rmssd"))
    }
}

extension HeartRateZones.Zone {
    /// `(zone, lower, upper, seconds)`.
    public static let wireSignature = "(uddd)"

    public var wireValue: DBusValue {
        .structure([.uint32(UInt32(clamping: number)), .double(lower), .double(upper), .double(seconds)])
    }

    public init(wire value: DBusValue) throws(WireError) {
        guard case .structure(let fields) = value.unwrapped, fields.count == 4, let number = fields[0].integer,
              case .double(let lower) = fields[1], case .double(let upper) = fields[2], case .double(let seconds) = fields[3]
        else { throw WireError("a zone is not \(Self.wireSignature)") }
        self.init(number: Int(number), lower: lower, upper: upper, seconds: seconds)
    }
}
