import HealthRequests
import HTTPTypes
import Hummingbird
import JSONLines
import NIOCore

/// The front's answers: JSON bodies, and every error as `{"error":"one line"}`.
enum APIResponses {
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        var body = value.serialized
        body += "\n"
        return Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    static func error(_ status: HTTPResponse.Status, _ message: String, headers extra: HTTPFields = [:]) -> Response {
        var response = json(.object([("error", .string(message))]), status: status)
        response.headers.append(contentsOf: extra)
        return response
    }

    /// The status of each kind of request failure.
    static func status(of kind: RequestFailure.Kind) -> HTTPResponse.Status {
        switch kind {
        case .invalidArguments, .badData: .badRequest
        case .accessDenied, .notAuthorized: .forbidden
        case .limitsExceeded: .tooManyRequests
        case .unknownRequest: .notFound
        case .failed: .internalServerError
        }
    }

    static func failure(_ failure: RequestFailure) -> Response { error(status(of: failure.kind), failure.message) }
}

/// Turns every error that reaches it (an unknown route, a body over the limit, a failed
/// request) into the API's one-line JSON error, and keeps the reasons of server-side failures
/// in the log rather than in the answer.
struct ErrorShapeMiddleware: RouterMiddleware {
    typealias Context = FrontContext

    func handle(_ request: Request, context: FrontContext, next: (Request, FrontContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let failure as RequestFailure {
            if failure.kind == .failed { context.logger.error("\(request.method) \(request.uri.path) failed: \(failure.message)") }
            return APIResponses.failure(failure)
        } catch let refusal as RequestFailureResponse {
            return APIResponses.error(refusal.status, refusal.message)
        } catch let error as HTTPError {
            return APIResponses.error(error.status, error.body ?? Self.reason(error.status))
        } catch let error as any HTTPResponseError {
            return APIResponses.error(error.status, Self.reason(error.status))
        } catch {
            context.logger.error("\(request.method) \(request.uri.path) failed: \(error)")
            return APIResponses.error(.internalServerError, "the request failed; hrmd's log says why")
        }
    }

    private static func reason(_ status: HTTPResponse.Status) -> String {
        switch status {
        case .notFound: "no such route"
        case .contentTooLarge: "the request body is larger than \(HTTPSettings.maxBodyBytes) bytes"
        case .methodNotAllowed: "this route does not take that method"
        default: status.reasonPhrase.isEmpty ? "request refused (\(status.code))" : status.reasonPhrase
        }
    }
}
