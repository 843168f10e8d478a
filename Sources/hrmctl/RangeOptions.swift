import ArgumentParser
import HealthModel
import CommandSupport
import HealthStore
import HealthUnits
import Timestamps

/// The type, time range and unit that samples, stats and export share.
struct RangeOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The sample type (see hrmctl types).", valueName: "type")) var type: String = "heart-rate"
    @Option(help: ArgumentHelp("From WHEN: RFC 3339 or an age such as 90s, 15m, 2h, 7d.", valueName: "when")) var since: String?
    @Option(help: ArgumentHelp("Until WHEN (exclusive).", valueName: "when")) var until: String?
    @Option(help: ArgumentHelp("Show values in this unit, e.g. count/s (must fit the type).", valueName: "unit")) var unit: String?

    /// The sample type, range and display unit, or a usage error (exit 64).
    func resolved(now: Timestamp = .now()) throws(ValidationError) -> (query: SampleQuery, unit: HealthUnit) {
        guard let sampleType = SampleType(identifier: type), sampleType.kind == .quantity else {
            throw ValidationError("unknown type '\(type)' (known: \(SampleType.quantityTypes.map(\.identifier).joined(separator: ", "))); workouts: hrmctl workout")
        }
        var displayUnit = sampleType.canonicalUnit
        if let unit {
            do { displayUnit = try HealthUnit(from: unit) } catch { throw ValidationError("--unit: \(error)") }
            guard displayUnit.isCompatible(with: sampleType.canonicalUnit) else {
                throw ValidationError("unit \(unit) is not compatible with \(sampleType.identifier) (\(sampleType.canonicalUnit.unitString))")
            }
        }
        let query = SampleQuery(
            type: sampleType, since: try TimeExpression.option(since, "--since", now: now),
            until: try TimeExpression.option(until, "--until", now: now))
        if let start = query.since, let end = query.until, end < start {
            throw ValidationError("--until (\(end)) is before --since (\(start))")
        }
        return (query, displayUnit)
    }
}

extension TimeExpression {
    /// The time a flag's text names (RFC 3339 or an age before `now`); nil when the flag is
    /// absent, a usage error that names the flag when the text is neither.
    static func option(_ text: String?, _ flag: String, now: Timestamp) throws(ValidationError) -> Timestamp? {
        guard let text else { return nil }
        guard let time = parse(text, now: now) else { throw ValidationError("\(flag) '\(text)' is not \(expected)") }
        return time
    }
}
