import Foundation
import HTTPTypes
import HealthModel
import HealthRequests
import HealthStore
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import LiveFeed
import Logging
import NIOCore
import NIOSSL
import NIOWebSocket
import ServiceLifecycle

/// The store's second front: its requests as JSON over HTTP under `/api/v1/`, the live stream
/// (Server-Sent Events and WebSocket), and the dashboard's pages. One more service in hrmd's
/// group. Every caller is a token, and a token is an application: it acts as its source with
/// that source's authorization, exactly as the same source over D-Bus.
public struct HTTPFront: Service {
    /// The types the live streams send: heart rate, workouts and events.
    public static var liveTypes: [SampleType] { LiveStreams.types }

    private let settings: HTTPSettings
    private let store: HealthStore
    private let feed: LiveFeed
    private let tls: TLSConfiguration?
    private let logger: Logger

    /// Checks the settings (TLS files, the address's rule) before anything listens.
    public init(settings: HTTPSettings, store: HealthStore, feed: LiveFeed, logger: Logger) throws(HTTPFrontError) {
        self.settings = settings
        self.store = store
        self.feed = feed
        self.logger = logger
        switch (settings.certificate, settings.privateKey) {
        case (let certificate?, let key?):
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
                let privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
                tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(privateKey))
            } catch {
                throw HTTPFrontError("cannot load the TLS certificate \(certificate) or key \(key): \(error)")
            }
        case (nil, nil):
            tls = nil
            guard settings.isLoopback || settings.insecure else {
                throw HTTPFrontError(
                    "http: \(settings.host) is not a loopback address: give [http] certificate and key for TLS, or insecure = yes to serve plain HTTP on purpose")
            }
        default:
            throw HTTPFrontError("http: TLS needs both [http] certificate and key")
        }
    }

    /// The subprotocols a WebSocket upgrade offers, in order.
    static func offeredProtocols(_ request: Request) -> [String] {
        request.headers[values: .secWebSocketProtocol].flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
    }


    public func run() async throws {
        if tls == nil && !settings.isLoopback {
            logger.warning("http: serving plain HTTP on \(settings.host), which is not loopback (insecure = yes): tokens cross the network in clear")
        }
        let workers = StoreWorkers(label: "hrmd.http")
        let anchorTokens = AnchorTokens(secret: try store.serviceSecret())
        let live = LiveStreams(feed: feed, store: store, settings: settings, logger: logger)
        let gate = TokenGate(store: store, workers: workers, running: RunningRequests())
        let frontSettings = FrontSettings(maxHeartRate: settings.maxHeartRate, deviceMaxHeartRates: settings.deviceMaxHeartRates)

        let router = Router(context: FrontContext.self)
        let originCheck = OriginCheck(loopbackOnly: settings.isLoopback, secure: tls != nil)
        router.add(middleware: ErrorShapeMiddleware())
        router.add(middleware: OriginCheckMiddleware(check: originCheck))
        router.add(middleware: WebFiles(webDirectory: settings.webDirectory, javascriptDirectory: settings.javascriptDirectory))
        router.get(RouterPath(APIRoute.prefix + "/" + APIRoute.documentPath)) { [settings] _, _ -> Response in
            guard let directory = settings.webDirectory, let document = FileManager.default.contents(atPath: directory + "/" + APIRoute.documentPath) else {
                throw HTTPError(.notFound)
            }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: document)))
        }
        let api = router.group(RouterPath(APIRoute.prefix)).add(middleware: gate)
        for route in APIRoute.all {
            api.on(RouterPath(route.path), method: route.method) { [store, workers, logger] request, context -> Response in
                guard let token = context.token else { throw HTTPError(.unauthorized) }
                let caller = TokenCaller(token: token, store: store, workers: workers, tokens: anchorTokens, logger: logger)
                let parameters = try APIParameters(request, known: route.parameters)
                return APIResponses.json(try await route.answer(request, parameters, caller, frontSettings))
            }
        }
        api.get(RouterPath(APIRoute.livePath)) { request, context -> Response in
            guard let token = context.token else { throw HTTPError(.unauthorized) }
            return try live.serverSentEvents(request, token: token)
        }

        // Upgrades to a WebSocket: the token comes as `Authorization: Bearer TOKEN` or, from a
        // browser (which cannot set headers on a WebSocket), as the subprotocol `bearer.TOKEN`
        // beside `hrmd`. A refused upgrade could only be a bare 400 (the WebSocket channel
        // answers every refused upgrade so), so every upgrade is accepted and a refused token
        // gets the refusal as an error message, then the close code 1008 with the same line
        // (which a browser's page can read, unlike a failed handshake).
        let webSockets = Router(context: FrontContext.self)
        webSockets.ws(RouterPath(APIRoute.prefix + "/" + APIRoute.livePath)) { request, context in
            // A page of another origin (or one that rebound its name to this address) is
            // not upgraded: it gets a bare 400.
            if let refusal = originCheck.refusal(of: request) {
                context.logger.notice("http: WebSocket upgrade refused: \(refusal)")
                return .dontUpgrade
            }
            return .upgrade(Self.offeredProtocols(request).contains("hrmd") ? [.secWebSocketProtocol: "hrmd"] : [:])
        } onUpgrade: { inbound, outbound, context in
            let request = context.request
            let presented = request.headers[.authorization]
                ?? Self.offeredProtocols(request).first { $0.hasPrefix("bearer.") }.map { "Bearer " + $0.dropFirst(7) }
            switch await gate.check(presented) {
            case .success(let token):
                try await live.webSocket(inbound: inbound, outbound: outbound, token: token)
            case .failure(let refusal):
                try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: LiveStreams.webSocketMessage(.ended(reason: refusal.message), namingPeople: false))))
                try await outbound.close(.policyViolation, reason: String(refusal.message.prefix(120)))
            }
        }

        let requestTimeout = TimeAmount.seconds(settings.idleTimeoutSeconds)
        var http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [RequestDeadlines(timeout: requestTimeout)], idleTimeout: .seconds(settings.idleTimeoutSeconds))
        http1.httpDecoder = .init(maxHeaderFieldSize: HTTPSettings.maxHeaderBytes, maxHeaderListSize: HTTPSettings.maxHeaderBytes, maxHeaderFieldCount: 100)
        // HTTP/1.1 with the WebSocket upgrade, behind the per-address limit and a deadline for
        // the first request head (the upgrade channel's idle timeout starts only after it),
        // behind TLS when configured.
        let webSocketResponder = webSockets.buildResponder()
        let channel = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: http1, ws: .init(maxFrameSize: 16 * 1024, autoPing: .enabled(timePeriod: .seconds(30))))
        let perAddress = ConnectionsPerAddress(limit: settings.maxConnectionsPerAddress)
        let server = HTTPServerBuilder { [tls] responder in
            let plain = GuardedChannel(
                base: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: channel),
                timeout: requestTimeout, perAddress: perAddress)
            guard let tls else { return plain }
            return try TLSChannel(plain, tlsConfiguration: tls)
        }
        let scheme = tls == nil ? "http" : "https"
        let app = Application(
            router: router, server: server,
            configuration: .init(
                address: .hostname(settings.host, port: settings.port), serverName: nil,
                availableConnectionsDelegate: MaximumAvailableConnections(settings.maxConnections)),
            onServerRunning: { [logger, host = settings.host] channel in
                let port = channel.localAddress?.port ?? 0
                logger.notice("http: listening on \(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)")
            },
            logger: logger)
        try await app.run()
    }
}
