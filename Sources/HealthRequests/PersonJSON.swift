import HealthModel
import JSONLines
import Timestamps

/// A person's JSON shape, the one every front writes (`hrmctl person list --output json`, the
/// HTTP API's `people`): `name`, what is known of them, `zones` and the bounds they give in
/// `year`, and their straps with the times each was theirs.
public enum PersonJSON {
    public static func object(_ person: Person, assignments: [StrapAssignment], year: Int) -> JSONValue {
        var members: [(String, JSONValue)] = [("name", .string(person.name))]
        if let birthYear = person.birthYear { members.append(("birthYear", .number(Double(birthYear)))) }
        if let sex = person.sex { members.append(("sex", .string(sex.rawValue))) }
        if let weight = person.weightKilograms { members.append(("weightKg", .number(weight))) }
        if let resting = person.restingHeartRate { members.append(("restingHeartRate", .number(resting))) }
        if let maximum = person.maximumHeartRate { members.append(("maxHeartRate", .number(maximum))) }
        members.append(("zones", .string(person.zoneMethod.description)))
        if let high = person.alertHigh { members.append(("alertHigh", .number(high))) }
        if let low = person.alertLow { members.append(("alertLow", .number(low))) }
        if let bounds = person.zoneBounds(in: year) { members.append(("zoneBounds", .array(bounds.lowers.map { .number(($0 * 100).rounded() / 100) }))) }
        members.append((
            "straps",
            .array(assignments.map { assignment in
                var strap: [(String, JSONValue)] = [("device", .string(assignment.device)), ("from", .string(RFC3339.string(from: assignment.from)))]
                if let until = assignment.until { strap.append(("until", .string(RFC3339.string(from: until)))) }
                return .object(strap)
            })
        ))
        return .object(members)
    }
}
