import Foundation
import Timestamps

/// Someone who wears straps: whose heart a sample is. The name is the key; the rest is what
/// heart-rate zones and, later, energy and load estimates need, each optional.
public struct Person: Sendable, Hashable {
    /// The key: 1–64 characters, no control characters, no leading or trailing space.
    public var name: String
    public var birthYear: Int?
    public var sex: BiologicalSex?
    public var weightKilograms: Double?
    /// count/min at rest.
    public var restingHeartRate: Double?
    /// count/min; when absent, estimated from the birth year (``estimatedMaximumHeartRate(in:)``).
    public var maximumHeartRate: Double?
    public var zoneMethod: ZoneMethod
    /// count/min: the person's own threshold of high heart-rate events, over `[alerts] high`.
    public var alertHigh: Double?
    /// count/min: the person's own threshold of low heart-rate events, over `[alerts] low`.
    public var alertLow: Double?

    /// The most people one store keeps.
    public static let storeLimit = 1024

    public init(
        name: String, birthYear: Int? = nil, sex: BiologicalSex? = nil, weightKilograms: Double? = nil, restingHeartRate: Double? = nil,
        maximumHeartRate: Double? = nil, zoneMethod: ZoneMethod = .percentOfMaximum, alertHigh: Double? = nil, alertLow: Double? = nil
    ) {
        self.name = name
        self.birthYear = birthYear
        self.sex = sex
        self.weightKilograms = weightKilograms
        self.restingHeartRate = restingHeartRate
        self.maximumHeartRate = maximumHeartRate
        self.zoneMethod = zoneMethod
        self.alertHigh = alertHigh
        self.alertLow = alertLow
    }

    /// The maximum heart rate to use in `year`: the person's own, or Tanaka, Monahan and Seals'
    /// estimate from age (208 − 0.7 × age, J Am Coll Cardiol 2001); nil with neither.
    public func estimatedMaximumHeartRate(in year: Int) -> Double? {
        if let maximumHeartRate { return maximumHeartRate }
        guard let birthYear, year >= birthYear else { return nil }
        return (208 - 0.7 * Double(year - birthYear)).rounded()
    }

    /// The lower bounds of zones 1 to 5 in `year`, by the person's method; nil when the method
    /// lacks what it needs (a maximum or birth year; for the reserve also the resting rate).
    public func zoneBounds(in year: Int) -> ZoneBounds? {
        switch zoneMethod {
        case .bounds(let lowers): return ZoneBounds(lowers: lowers)
        case .percentOfMaximum:
            guard let maximum = estimatedMaximumHeartRate(in: year) else { return nil }
            return ZoneBounds(maximumHeartRate: maximum)
        case .heartRateReserve:
            guard let maximum = estimatedMaximumHeartRate(in: year), let resting = restingHeartRate, resting < maximum else { return nil }
            return ZoneBounds(lowers: ZoneBounds.fractions.map { (resting + $0 * (maximum - resting)).rounded() })
        }
    }

    /// The calendar year (UTC) of `time`: the year ages and estimated maxima are taken in.
    public static func year(of time: Timestamp = .now()) -> Int {
        let date = Date(timeIntervalSince1970: time.secondsSinceEpoch)
        return Calendar(identifier: .gregorian).dateComponents(in: TimeZone(secondsFromGMT: 0) ?? .current, from: date).year ?? 1970
    }

    /// Why `name` cannot name a person, or nil when it can.
    public static func problem(withName name: String) -> String? {
        guard !name.isEmpty, name.count <= 64 else { return "a person's name is 1 to 64 characters" }
        guard name.trimmingSpaces == name else { return "a person's name neither starts nor ends with a space" }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\u{7F}" }) else {
            return "a person's name holds no control characters"
        }
        return nil
    }
}

/// A person codes as plain values (the zone method as its text), so that every front carries
/// it as it is: JSON, D-Bus dictionaries.
extension Person: Codable {
    enum CodingKeys: String, CodingKey {
        case name, birthYear, sex, weightKilograms, restingHeartRate, maximumHeartRate, zones, alertHigh, alertLow
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let sexName = try container.decodeIfPresent(String.self, forKey: .sex)
        let sex = try sexName.map { name in
            guard let sex = BiologicalSex(rawValue: name) else { throw ModelError("sex is female or male, not \(name.debugDescription)") }
            return sex
        }
        self.init(
            name: try container.decode(String.self, forKey: .name),
            birthYear: try container.decodeIfPresent(Int64.self, forKey: .birthYear).map { Int(clamping: $0) }, sex: sex,
            weightKilograms: try container.decodeIfPresent(Double.self, forKey: .weightKilograms),
            restingHeartRate: try container.decodeIfPresent(Double.self, forKey: .restingHeartRate),
            maximumHeartRate: try container.decodeIfPresent(Double.self, forKey: .maximumHeartRate),
            zoneMethod: try ZoneMethod.parse(try container.decodeIfPresent(String.self, forKey: .zones) ?? "percent-max"),
            alertHigh: try container.decodeIfPresent(Double.self, forKey: .alertHigh),
            alertLow: try container.decodeIfPresent(Double.self, forKey: .alertLow))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encodeIfPresent(birthYear.map { Int64($0) }, forKey: .birthYear)
        try container.encodeIfPresent(sex?.rawValue, forKey: .sex)
        try container.encodeIfPresent(weightKilograms, forKey: .weightKilograms)
        try container.encodeIfPresent(restingHeartRate, forKey: .restingHeartRate)
        try container.encodeIfPresent(maximumHeartRate, forKey: .maximumHeartRate)
        try container.encode(zoneMethod.description, forKey: .zones)
        try container.encodeIfPresent(alertHigh, forKey: .alertHigh)
        try container.encodeIfPresent(alertLow, forKey: .alertLow)
    }

    /// Why the person's values are not ones to keep, or nil when they are: the name's rule, and
    /// each number within what a person can have.
    public var problem: String? {
        if let problem = Person.problem(withName: name) { return problem }
        if let birthYear, !(1900...2100).contains(birthYear) { return "a birth year is 1900 to 2100, not \(birthYear)" }
        if let weightKilograms, !(weightKilograms.isFinite && (2...400).contains(weightKilograms)) {
            return "a weight is 2 to 400 kg, not \(weightKilograms)"
        }
        if let restingHeartRate, !(restingHeartRate.isFinite && (25...150).contains(restingHeartRate)) {
            return "a resting heart rate is 25 to 150 count/min, not \(restingHeartRate)"
        }
        if let maximumHeartRate, !(maximumHeartRate.isFinite && (100...250).contains(maximumHeartRate)) {
            return "a maximum heart rate is 100 to 250 count/min, not \(maximumHeartRate)"
        }
        if let restingHeartRate, let maximumHeartRate, restingHeartRate >= maximumHeartRate {
            return "the resting heart rate is below the maximum"
        }
        for (name, value) in [("a high alert", alertHigh), ("a low alert", alertLow)] {
            if let value, !(value.isFinite && (20...250).contains(value)) { return "\(name) is 20 to 250 count/min, not \(value)" }
        }
        if let alertHigh, let alertLow, alertLow >= alertHigh { return "the low alert is below the high alert" }
        return nil
    }
}

/// HealthKit's biological sex, as far as heart-rate estimates use it.
public enum BiologicalSex: String, Sendable, Hashable, Codable, CaseIterable {
    case female
    case male
}

/// How a person's five heart-rate zones are placed.
public enum ZoneMethod: Sendable, Hashable, Codable, CustomStringConvertible {
    /// 50, 60, 70, 80 and 90 % of the maximum heart rate.
    case percentOfMaximum
    /// The same fractions of the heart-rate reserve above the resting rate (Karvonen).
    case heartRateReserve
    /// The person's own lower bounds of zones 1 to 5, rising.
    case bounds([Double])

    /// `percent-max`, `reserve`, or the five bounds joined by commas.
    public var description: String {
        switch self {
        case .percentOfMaximum: "percent-max"
        case .heartRateReserve: "reserve"
        case .bounds(let lowers): lowers.map { $0.rounded() == $0 ? String(Int($0)) : String($0) }.joined(separator: ",")
        }
    }

    /// Reads what ``description`` writes; the line says what was wrong.
    public static func parse(_ text: String) throws(ModelError) -> ZoneMethod {
        switch text {
        case "percent-max": return .percentOfMaximum
        case "reserve": return .heartRateReserve
        default:
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            let values = parts.compactMap { Double($0.trimmingSpaces) }
            guard parts.count == 5, values.count == 5, ZoneBounds(lowers: values) != nil else {
                throw ModelError(
                    "zones are percent-max, reserve, or five rising lower bounds of zones 1 to 5 in count/min (such as 98,117,137,156,176), not \(text.debugDescription)")
            }
            return .bounds(values)
        }
    }
}

/// The lower bounds of heart-rate zones 1 to 5 in count/min: zone 0 is below the first, zone
/// 5 from the last upwards.
public struct ZoneBounds: Sendable, Hashable {
    public let lowers: [Double]

    /// The fractions of the maximum (or of the reserve) where zones 1 to 5 start.
    public static let fractions = [0.5, 0.6, 0.7, 0.8, 0.9]

    /// Five rising bounds within 30…250 count/min; nil otherwise.
    public init?(lowers: [Double]) {
        guard lowers.count == 5, lowers.allSatisfy({ $0.isFinite && (30...250).contains($0) }),
            zip(lowers, lowers.dropFirst()).allSatisfy({ $0 < $1 })
        else { return nil }
        self.lowers = lowers
    }

    /// 50, 60, 70, 80 and 90 % of `maximumHeartRate`.
    public init(maximumHeartRate: Double) {
        lowers = Self.fractions.map { $0 * maximumHeartRate }
    }
}

/// A strap worn by a person over a time range: the device's samples in [from, until) are
/// that person's. A device has at most one assignment at any time.
public struct StrapAssignment: Sendable, Hashable {
    /// The device's local identifier (a Bluetooth address, `ant:…`, a serial sensor's name).
    public var device: String
    public var person: String
    public var from: Timestamp
    /// nil: open-ended.
    public var until: Timestamp?

    /// The most assignments one store keeps (every person's history together).
    public static let storeLimit = 16384

    public init(device: String, person: String, from: Timestamp, until: Timestamp?) {
        self.device = device
        self.person = person
        self.from = from
        self.until = until
    }

    /// Whether a sample of the device that starts at `start` is the person's.
    public func covers(_ start: Timestamp) -> Bool {
        start >= from && until.map { start < $0 } ?? true
    }
}

/// An assignment codes as plain values: times in microseconds since the epoch.
extension StrapAssignment: Codable {
    enum CodingKeys: String, CodingKey { case device, person, from, until }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            device: try container.decode(String.self, forKey: .device), person: try container.decode(String.self, forKey: .person),
            from: Timestamp(microsecondsSinceEpoch: try container.decode(Int64.self, forKey: .from)),
            until: try container.decodeIfPresent(Int64.self, forKey: .until).map(Timestamp.init(microsecondsSinceEpoch:)))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(device, forKey: .device)
        try container.encode(person, forKey: .person)
        try container.encode(from.microsecondsSinceEpoch, forKey: .from)
        try container.encodeIfPresent(until?.microsecondsSinceEpoch, forKey: .until)
    }
}

/// A model value that is not what it must be: one line saying why.
public struct ModelError: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let characters = Array(self)
        guard let first = characters.firstIndex(where: { $0 != " " && $0 != "\t" }),
            let last = characters.lastIndex(where: { $0 != " " && $0 != "\t" })
        else { return "" }
        return String(characters[first...last])
    }
}

/// Whose a sample is: the person whose assignment of its device covers its start. Built once
/// from a store's assignments; asked once per sample, in any order, and quick when samples of
/// one device come in time order (the last match is tried first).
public struct PersonLookup: Sendable {
    /// Each device's assignments, by start.
    private let byDevice: [String: [StrapAssignment]]
    private var last: StrapAssignment?

    public init(_ assignments: [StrapAssignment]) {
        byDevice = Dictionary(grouping: assignments, by: \.device).mapValues { $0.sorted { $0.from < $1.from } }
    }

    /// Whether no sample can belong to anyone.
    public var isEmpty: Bool { byDevice.isEmpty }

    /// The person wearing `device` at `start`; nil for nobody.
    public mutating func person(device: String?, at start: Timestamp) -> String? {
        guard let device else { return nil }
        if let last, last.device == device, last.covers(start) { return last.person }
        guard let assignments = byDevice[device] else { return nil }
        // The last assignment that starts at or before `start`.
        var low = 0
        var high = assignments.count
        while low < high {
            let middle = (low + high) / 2
            if assignments[middle].from <= start { low = middle + 1 } else { high = middle }
        }
        guard low > 0, assignments[low - 1].covers(start) else { return nil }
        last = assignments[low - 1]
        return assignments[low - 1].person
    }
}

extension Array where Element == StrapAssignment {
    /// The person wearing `device` at `time` by these assignments, if anyone.
    public func person(wearing device: String, at time: Timestamp) -> String? {
        first { $0.device == device && $0.from <= time && ($0.until.map { time < $0 } ?? true) }?.person
    }

    /// The queries of `person`'s samples of `type` that start in `[since, until)`: one per
    /// strap assignment of theirs that overlaps the range, over the overlap.
    public func queries(of type: SampleType, person: String, since: Timestamp, until: Timestamp, reader: String?) -> [SampleQuery] {
        filter { $0.person == person }.compactMap { assignment in
            let from = Swift.max(assignment.from, since)
            let end = Swift.min(assignment.until ?? until, until)
            guard from < end else { return nil }
            return SampleQuery(type: type, since: from, until: end, device: assignment.device, reader: reader)
        }
    }

    /// The parts of `[since, until)` in which nobody wore `device`, oldest first.
    public func unworn(_ device: String, since: Timestamp, until: Timestamp) -> [(since: Timestamp, until: Timestamp)] {
        var free: [(since: Timestamp, until: Timestamp)] = [(since, until)]
        for assignment in self where assignment.device == device {
            let worn = (from: assignment.from, until: assignment.until)
            free = free.flatMap { part -> [(since: Timestamp, until: Timestamp)] in
                let wornUntil = worn.until ?? part.until
                guard worn.from < part.until, wornUntil > part.since else { return [part] }
                var left: [(since: Timestamp, until: Timestamp)] = []
                if part.since < worn.from { left.append((part.since, worn.from)) }
                if wornUntil < part.until { left.append((wornUntil, part.until)) }
                return left
            }
        }
        return free
    }
}
