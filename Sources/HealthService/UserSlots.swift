import HealthRequests
import HealthWire
import Synchronization

/// Slots for work that may take long (a polkit check, an import): at most `perUser` held by
/// one uid and `inAll` together. Taking one past either bound fails at once with
/// LimitsExceeded naming the bound, so what one user holds never waits in another's way.
final class UserSlots: Sendable {
    let perUser: Int
    let inAll: Int
    /// What the slots are for, in messages: "authorization checks under way with polkit".
    private let what: String
    private let held = Mutex<(total: Int, byUID: [UInt32: Int])>((0, [:]))

    init(perUser: Int, inAll: Int, what: String) {
        self.perUser = perUser
        self.inAll = inAll
        self.what = what
    }

    /// Takes a slot for `uid`, or fails with LimitsExceeded.
    func take(for uid: UInt32) throws(RequestFailure) {
        let refusal: String? = held.withLock { held in
            let own = held.byUID[uid, default: 0]
            if own >= perUser { return "uid \(uid) has \(own) \(what), the most one user may have" }
            if held.total >= inAll { return "\(held.total) \(what), the most the service allows at once" }
            held.total += 1
            held.byUID[uid] = own + 1
            return nil
        }
        if let refusal { throw RequestFailure(.limitsExceeded, refusal + "; try again when one ends") }
    }

    /// Gives back a slot `uid` took.
    func release(for uid: UInt32) {
        held.withLock { held in
            held.total -= 1
            let own = held.byUID[uid, default: 1] - 1
            held.byUID[uid] = own > 0 ? own : nil
        }
    }

    /// Runs `body` holding a slot for `uid`.
    func run<T>(for uid: UInt32, _ body: () async throws(RequestFailure) -> T) async throws(RequestFailure) -> T {
        try take(for: uid)
        defer { release(for: uid) }
        return try await body()
    }
}
