import NIOCore
import NIOHTTPTypes

/// Deadlines for every request of a connection once HTTP is decoded: a request's body must be
/// complete within `timeout` of its head, and the next head within `timeout` of the end of the
/// last answer (and of the last request). Whatever the client sends meanwhile buys no time:
/// Hummingbird's idle timeout is reset by every byte read, so a client trickling a body or its
/// next head a byte at a time would hold its connection for ever under it alone. While an
/// answer is being made or streamed (a live stream), no deadline runs.
final class RequestDeadlines: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    /// A head came and its end has not.
    private var readingRequest = false
    /// A request was read in part or whole, and its answer has not ended.
    private var answerPending = false

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        // Added when the first head is in (it follows at once): a deadline until it does.
        if context.channel.isActive { arm(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { disarm() }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            readingRequest = true
            answerPending = true
            arm(context)
        case .body:
            break
        case .end:
            readingRequest = false
            if answerPending { disarm() } else { arm(context) }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            answerPending = false
            // An answer that came before its request's end leaves the body's deadline running.
            if !readingRequest { arm(context) }
        }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext) {
        disarm()
        deadline = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: timeout) {
            context.close(promise: nil)
        }
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }
}
