import HealthRequests
import Synchronization

/// Takes turns per user: at most `perUser` calls of one uid run at once, and the rest of that
/// uid's calls wait, in order, behind them, never in front of another user's. What keeps a user
/// who floods the service (or whose calls hang on polkit) from holding the store workers and
/// the answers other users wait for. The waiting calls are bounded by the bus layer's limit on
/// each uid's unanswered calls.
final class UserTurns: Sendable {
    private struct Turns {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    let perUser: Int
    private let turns = Mutex<[UInt32: Turns]>([:])

    init(perUser: Int) { self.perUser = perUser }

    /// Runs `body` in one of `uid`'s turns, waiting for one first when all are taken.
    func run<T: Sendable>(as uid: UInt32, _ body: () async -> T) async -> T {
        await begin(uid)
        defer { end(uid) }
        return await body()
    }

    private func begin(_ uid: UInt32) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = turns.withLock { all in
                var own = all[uid] ?? Turns()
                defer { all[uid] = own }
                guard own.running < perUser else {
                    own.waiting.append(continuation)
                    return false
                }
                own.running += 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    /// Hands the turn to `uid`'s next waiting call, if any.
    private func end(_ uid: UInt32) {
        let next = turns.withLock { all -> CheckedContinuation<Void, Never>? in
            guard var own = all[uid] else { return nil }
            defer { all[uid] = own.running == 0 && own.waiting.isEmpty ? nil : own }
            guard !own.waiting.isEmpty else {
                own.running -= 1
                return nil
            }
            return own.waiting.removeFirst()
        }
        next?.resume()
    }
}
