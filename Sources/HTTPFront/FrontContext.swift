import HealthModel
import HealthRequests
import Hummingbird
import HummingbirdWebSocket
import Logging

/// Hummingbird's per-request context for the front: the core storage, the WebSocket upgrade
/// hook, and the token's record once the gate has checked it.
struct FrontContext: Hummingbird.RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<FrontContext>
    /// The checked token's record; nil before the gate (and on routes without one).
    var token: AccessTokenRecord?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
    }

    var maxUploadSize: Int { HTTPSettings.maxBodyBytes }
}
