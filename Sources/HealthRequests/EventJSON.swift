import HealthModel
import JSONLines
import Timestamps

/// An event's JSON shape, the one every front writes (`hrmctl events --output json`, the HTTP
/// API): type, start, end (while it lasts, `latest`: the end of its last reading so far),
/// device, person (when known), metadata (threshold and extreme, when the type has them), id.
public enum EventJSON {
    public static func object(_ event: HealthEvent) -> JSONValue {
        var members: [(String, JSONValue)] = [("type", .string(event.type.identifier)), ("start", .string(RFC3339.string(from: event.start)))]
        if let end = event.end {
            members.append(("end", .string(RFC3339.string(from: end))))
        } else {
            members.append(("latest", .string(RFC3339.string(from: event.latest))))
        }
        if let device = event.device { members.append(("device", .string(device))) }
        if let person = event.person { members.append(("person", .string(person))) }
        var metadata: [(String, JSONValue)] = []
        if let threshold = event.threshold { metadata.append(("threshold", .number(threshold))) }
        if let extreme = event.extreme { metadata.append(("extreme", .number(extreme))) }
        members.append(("metadata", .object(metadata)))
        members.append(("id", .string(event.id)))
        return .object(members)
    }
}
