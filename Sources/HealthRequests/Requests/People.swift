import Foundation
import HealthModel
import Timestamps

/// A manager reads every person and every strap assignment (who wore which strap when).
public struct People: HealthRequest {
    public static let name = "People"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .answer(StrapAssignment.storeLimit, of: "assignment")

    public init() {}

    public struct Response: Codable, Sendable {
        /// By name.
        public var people: [Person]
        /// By device, then start.
        public var assignments: [StrapAssignment]

        public init(people: [Person], assignments: [StrapAssignment]) {
            self.people = people
            self.assignments = assignments
        }
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let (people, assignments) = try await context.onStore { store throws(HealthStoreError) in
            (try store.people(), try store.strapAssignments())
        }
        return Response(people: people, assignments: assignments)
    }
}

/// A manager adds a person (`creating`), or replaces the record of the person of that name.
public struct SavePerson: HealthRequest {
    public static let name = "SavePerson"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .constant

    public var person: Person
    /// Add a new person (true) or replace an existing one's record (false).
    public var creating: Bool

    public init(_ person: Person, creating: Bool) {
        self.person = person
        self.creating = creating
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> NoResponse {
        if let problem = person.problem { throw .invalidArguments(problem) }
        try await context.onStore { [person, creating] store throws(HealthStoreError) in try store.savePerson(person, creating: creating) }
        context.log(.notice, creating ? "added a person" : "changed a person", ["person": person.name])
        return NoResponse()
    }
}

/// A manager removes a person and their strap assignments; the samples stay, belonging to
/// nobody.
public struct RemovePerson: HealthRequest {
    public static let name = "RemovePerson"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .constant

    public var person: String

    public init(named person: String) { self.person = person }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> NoResponse {
        try await context.onStore { [person] store throws(HealthStoreError) in try store.removePerson(named: person) }
        context.log(.notice, "removed a person", ["person": person])
        return NoResponse()
    }
}

/// A manager assigns a strap to a person over [from, until) (until absent: open-ended); the
/// device's assignment that covers `from` ends there.
public struct AssignStrap: HealthRequest {
    public static let name = "AssignStrap"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .constant

    public var person: String
    public var device: String
    public var from: Int64
    public var until: Int64

    public init(person: String, device: String, from: Timestamp, until: Timestamp?) {
        self.person = person
        self.device = device
        self.from = from.microsecondsSinceEpoch
        self.until = WireTime.until(until)
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> NoResponse {
        guard from != WireTime.noLowerBound else { throw .invalidArguments("an assignment starts at a time") }
        let range = try WireTime.checked(since: from, until: until)
        guard let start = range.since else { throw .invalidArguments("an assignment starts at a time") }
        try await context.onStore { [person, device] store throws(HealthStoreError) in
            try store.assignStrap(device: device, person: person, from: start, until: range.until)
        }
        context.log(.notice, "assigned a strap", ["person": person, "device": device])
        return NoResponse()
    }
}
