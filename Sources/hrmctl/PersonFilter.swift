import CommandSupport
import HealthModel
import HealthRequests
import StoreTransport
import Timestamps

/// `--person NAME`: keeps the samples of the straps assigned to NAME, each within its
/// assignment. Who wore which strap is a manager's to read, so through the store service it
/// needs a manager; a name the store does not have is a usage error.
struct PersonFilter {
    let name: String
    /// Whose every sample is (the whole store's assignments, not only this person's).
    private(set) var lookup: PersonLookup

    /// The filter for `name`, or nil without one.
    static func make(_ name: String?, store: any RequestTransport) async throws(CommandFailure) -> PersonFilter? {
        guard let name else { return nil }
        let answer = try await store.send(People())
        guard answer.people.contains(where: { $0.name == name }) else {
            throw CommandFailure("no person named \(name.debugDescription); see hrmctl person list", status: .usage)
        }
        return PersonFilter(name: name, lookup: PersonLookup(answer.assignments))
    }

    /// Whether a sample of `device` that starts at `start` is the person's.
    mutating func keeps(device: String?, start: Timestamp) -> Bool {
        lookup.person(device: device, at: start) == name
    }
}
