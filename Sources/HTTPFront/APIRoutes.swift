import Foundation
import HTTPTypes
import HealthModel
import HealthRequests
import Hummingbird
import JSONLines
import Timestamps

/// One route of the API under `/api/v1/`: its method, path and query parameters (which the
/// OpenAPI document must list the same), the store request it serves, and how it reads the
/// request's arguments from the URL and shapes the answer as JSON. Every rule is the
/// request's own; a route only translates.
struct APIRoute: Sendable {
    let method: HTTPRequest.Method
    /// Under `/api/v1/`, such as `samples`.
    let path: String
    let parameters: [String]
    /// The name of the request it serves; nil for the front's own (whoami, settings).
    let serves: String?
    let answer: @Sendable (Request, APIParameters, TokenCaller, FrontSettings) async throws -> JSONValue

    init(
        _ method: HTTPRequest.Method, _ path: String, parameters: [String] = [], serves: String?,
        answer: @escaping @Sendable (Request, APIParameters, TokenCaller, FrontSettings) async throws -> JSONValue
    ) {
        self.method = method
        self.path = path
        self.parameters = parameters
        self.serves = serves
        self.answer = answer
    }
}

/// What routes read of the front's configuration.
struct FrontSettings: Sendable {
    var maxHeartRate: Double
    var deviceMaxHeartRates: [String: Double]
}

extension APIRoute {
    /// Serves `request` as `caller`: its access rule first, then the request itself.
    static func serve<Served: HealthRequest>(_ request: Served, as caller: TokenCaller) async throws(RequestFailure) -> Served.Response {
        if Served.access == .manager { try await caller.requireManager(for: Served.name) }
        return try await request.serve(in: caller)
    }

    /// Where every route of the API is.
    static let prefix = "/api/v1"
    /// The live stream's path under ``prefix`` (``LiveStreams``).
    static let livePath = "live"
    /// The OpenAPI document's path under ``prefix``: the web directory's `openapi.json`, served without a token.
    static let documentPath = "openapi.json"

    /// Every route of the API but the live stream (``livePath``) and the OpenAPI document (``documentPath``).
    static let all: [APIRoute] = common + workouts + events + waveforms

    private static let common: [APIRoute] = [
        APIRoute(.get, "whoami", serves: nil) { _, _, caller, _ in
            .object([
                ("source", .string(caller.token.source)), ("manager", .bool(caller.token.manager)), ("token", .string(caller.token.id)),
                ("expires", APIShapes.time(caller.token.expires)),
            ])
        },
        APIRoute(.get, "samples", parameters: ["type", "since", "until", "device", "limit", "cursor"], serves: SamplePage.name) {
            _, query, caller, _ in
            let request = SamplePage(
                app: caller.app, type: try SampleType.quantityNamed(query.type()), since: try query.time("since"), until: try query.time("until"),
                limit: Int(try query.unsigned("limit") ?? 1000),
                options: .init(device: query.string("device"), cursor: query.string("cursor")))
            let page = try await serve(request, as: caller)
            // Who wore which strap is a manager's to read: only a manager's samples name their person.
            var people = caller.token.manager ? PersonLookup(try await serve(People(), as: caller).assignments) : nil
            let samples = page.samples.map { record in
                APIShapes.sample(record, person: people?.person(device: record.device?.localIdentifier, at: Timestamp(microsecondsSinceEpoch: record.start)))
            }
            return .object([("samples", .array(samples)), ("next", page.next.isEmpty ? .null : .string(page.next))])
        },
        APIRoute(.get, "latest", parameters: ["type", "device"], serves: LatestSample.name) { _, query, caller, _ in
            let newest = try await serve(
                LatestSample(app: caller.app, type: try SampleType.quantityNamed(query.type()), device: query.string("device")), as: caller)
            return .object([("sample", newest.sample.map(APIShapes.sample) ?? .null)])
        },
        APIRoute(.get, "statistics", parameters: ["type", "by", "since", "until", "timezone"], serves: Statistics.name) {
            _, query, caller, _ in
            let type = try SampleType.quantityNamed(query.type())
            let bucketName = query.string("by") ?? "1h"
            let bucket: StatisticsBucketName
            do throws(WireError) { bucket = try StatisticsBucketName.parse(bucketName) } catch { throw error.failure }
            let answer = try await serve(
                Statistics(
                    app: caller.app, type: type, bucket: bucket, since: try query.time("since"), until: try query.time("until"),
                    timeZone: query.string("timezone") ?? "UTC"),
                as: caller)
            return .object([("buckets", .array(answer.buckets.map { APIShapes.bucket($0, unit: type.canonicalUnit.unitString) }))])
        },
        APIRoute(.get, "hrv", parameters: ["since", "until"], serves: HeartRateVariabilityRequest.name) { _, query, caller, _ in
            let answer = try await serve(
                HeartRateVariabilityRequest(app: caller.app, since: try query.time("since"), until: try query.time("until")), as: caller)
            return .object([("variability", APIShapes.variability(answer.variability))])
        },
        APIRoute(.get, "zones", parameters: ["since", "until", "max"], serves: HeartRateZonesRequest.name) { _, query, caller, settings in
            let answer = try await serve(
                HeartRateZonesRequest(
                    app: caller.app, since: try query.time("since"), until: try query.time("until"),
                    maxHeartRate: try query.number("max") ?? settings.maxHeartRate),
                as: caller)
            return .object([("zones", .array(answer.zones.map(APIShapes.zone)))])
        },
        APIRoute(.get, "changes", parameters: ["type", "anchor", "limit"], serves: Changes.name) { _, query, caller, _ in
            let anchor = try query.anchor()
            let answer = try await serve(
                Changes(app: caller.app, type: try SampleType.quantityNamed(query.type()), anchor: Int64(bitPattern: anchor), limit: Int(try query.unsigned("limit") ?? 1000)),
                as: caller)
            return .object([
                ("added", .array(answer.added.map(APIShapes.sample))),
                ("deleted", .array(answer.deleted.map { .object([("id", .string(String($0.id))), ("type", .string($0.type.identifier))]) })),
                ("anchor", .string(String(answer.newAnchor))),
            ])
        },
        APIRoute(.get, "authorization", parameters: ["type"], serves: AuthorizationStatusRequest.name) { _, query, caller, _ in
            let type = try SampleType.quantityNamed(query.type())
            let answer = try await serve(AuthorizationStatusRequest(app: caller.app, type: type), as: caller)
            return .object([("source", .string(caller.token.source)), ("type", .string(type.identifier)), ("share", .string(answer.status))])
        },
        APIRoute(.post, "authorization", serves: RequestAuthorization.name) { request, _, caller, _ in
            let asked = try await AuthorizationAsk.read(request)
            let share = try asked.share.map { name throws(RequestFailure) in try SampleType.named(name) }
            let read = try asked.read.map { name throws(RequestFailure) in try SampleType.named(name) }
            _ = try await serve(RequestAuthorization(app: caller.app, share: share, read: read), as: caller)
            return .object([("source", .string(caller.token.source)), ("pending", .bool(true))])
        },
        APIRoute(.get, "authorization/requests", serves: Authorizations.name) { _, _, caller, _ in
            let answer = try await serve(Authorizations(), as: caller)
            let pending = answer.entries.filter { $0.status == .notDetermined }
            return .object([
                ("requests", .array(pending.map {
                    .object([
                        ("source", .string($0.source)), ("type", .string($0.type.identifier)), ("access", .string($0.access.rawValue)),
                        ("verified", .bool(VerifiedApp.isVerified(source: $0.source))),
                    ])
                }))
            ])
        },
        APIRoute(.get, "devices", serves: Devices.name) { _, _, caller, _ in
            let answer = try await serve(Devices(), as: caller)
            return .object([("devices", .array(answer.devices.map(APIShapes.device))), ("sensors", .array(answer.activity.map(APIShapes.sensor)))])
        },
        APIRoute(.get, "sources", serves: Sources.name) { _, _, caller, _ in
            .object([("sources", .array(try await serve(Sources(), as: caller).sources.map(APIShapes.source)))])
        },
        APIRoute(.get, "people", serves: People.name) { _, _, caller, _ in
            let answer = try await serve(People(), as: caller)
            let year = Person.year()
            let straps = Dictionary(grouping: answer.assignments, by: \.person)
            return .object([("people", .array(answer.people.map { PersonJSON.object($0, assignments: straps[$0.name] ?? [], year: year) }))])
        },
        APIRoute(.get, "settings", serves: nil) { _, _, _, settings in
            .object([
                ("maxHeartRate", .number(settings.maxHeartRate)),
                ("devices", .object(settings.deviceMaxHeartRates.sorted { $0.key < $1.key }.map { ($0.key, .object([("maxHeartRate", .number($0.value))])) })),
            ])
        },
    ]
}

/// The body of `POST /api/v1/authorization`: the types to ask to share and to read.
struct AuthorizationAsk: Decodable {
    var share: [String] = []
    var read: [String] = []

    enum CodingKeys: String, CodingKey { case share, read }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        share = try container.decodeIfPresent([String].self, forKey: .share) ?? []
        read = try container.decodeIfPresent([String].self, forKey: .read) ?? []
    }

    static func read(_ request: Request) async throws -> AuthorizationAsk {
        let body = try await request.body.collect(upTo: HTTPSettings.maxBodyBytes)
        do {
            return try JSONDecoder().decode(AuthorizationAsk.self, from: Data(buffer: body))
        } catch {
            throw RequestFailure.invalidArguments(#"the body must be JSON like {"share":["heart-rate"],"read":["heart-rate"]}"#)
        }
    }
}
