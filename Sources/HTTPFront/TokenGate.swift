import HTTPTypes
import HealthModel
import HealthStore
import Hummingbird
import Synchronization

/// The door of the API: a request passes only with `Authorization: Bearer TOKEN` naming a
/// valid token of the store (else 401 and one line why), and only while its token has fewer
/// than ``requestsPerToken`` requests running (else 429), so one client cannot take the
/// store's workers from the others. The token itself is never logged.
struct TokenGate: RouterMiddleware {
    typealias Context = FrontContext
    /// Requests one token may have running at once.
    static let requestsPerToken = 8

    let store: HealthStore
    let workers: StoreWorkers
    let running: RunningRequests

    func handle(_ request: Request, context: FrontContext, next: (Request, FrontContext) async throws -> Response) async throws -> Response {
        let token: AccessTokenRecord
        switch await check(request.headers[.authorization]) {
        case .success(let record): token = record
        case .failure(let refusal): return refusal.response
        }
        guard running.enter(token.id) else {
            return APIResponses.error(
                .tooManyRequests, "this token already has \(Self.requestsPerToken) requests running; wait for their answers", headers: [.retryAfter: "1"])
        }
        defer { running.leave(token.id) }
        var context = context
        context.token = token
        return try await next(request, context)
    }

    /// The record of the token in `header`, or the 401 that refuses it.
    func check(_ header: String?) async -> Result<AccessTokenRecord, Refusal> {
        guard let header, header.utf8.count <= 256 else { return .failure(Refusal("no token: send Authorization: Bearer TOKEN")) }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            return .failure(Refusal("the Authorization header must be 'Bearer TOKEN'"))
        }
        return await check(token: String(parts[1]))
    }

    /// The record of a presented token, or the 401 that refuses it.
    func check(token text: String) async -> Result<AccessTokenRecord, Refusal> {
        let verdict: AccessTokenCheck
        do {
            verdict = try await workers.run { [store] () throws(HealthStoreError) in try store.checkAccessToken(text) }
        } catch {
            return .failure(Refusal("the token cannot be checked now: \(error)", status: .serviceUnavailable))
        }
        if case .valid(let record) = verdict { return .success(record) }
        return .failure(Refusal(verdict.refusal ?? "the token is not valid"))
    }

    /// A token refused: the answer to send.
    struct Refusal: Error {
        let message: String
        let status: HTTPResponse.Status

        init(_ message: String, status: HTTPResponse.Status = .unauthorized) {
            self.message = message
            self.status = status
        }

        var response: Response {
            APIResponses.error(status, message, headers: status == .unauthorized ? [.wwwAuthenticate: "Bearer realm=\"hrmd\""] : [:])
        }
    }
}

/// How many requests each token has running.
final class RunningRequests: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    func enter(_ token: String) -> Bool {
        counts.withLock { counts in
            let now = counts[token, default: 0]
            guard now < TokenGate.requestsPerToken else { return false }
            counts[token] = now + 1
            return true
        }
    }

    func leave(_ token: String) {
        counts.withLock { counts in
            let left = counts[token, default: 1] - 1
            counts[token] = left > 0 ? left : nil
        }
    }
}
