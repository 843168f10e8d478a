import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Closes a connection that has not sent a complete request head within the idle timeout of
/// connecting. Hummingbird's idle timeout starts only once the first request head has been
/// read when the channel can upgrade to a WebSocket, so without this a client that connects
/// and sends nothing, or sends its head a byte at a time, would keep its connection (and one
/// of `max-connections`) for ever. Sits in front of the HTTP decoder (behind TLS, so that a
/// slow handshake counts too) and leaves the pipeline once the first head is in; from then on
/// Hummingbird's own idle timeout applies between requests.
struct RequestHeadDeadline<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let timeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(FirstHeadDeadlineHandler(timeout: timeout))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }.flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandler(ParserErrorCloser())
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Watches the bytes of a connection until the end of its first request head (an empty line)
/// and closes the connection when that does not come within `timeout` of the connection's start.
final class FirstHeadDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    /// The last bytes seen, for an empty line split across reads.
    private var tail: [UInt8] = []
    private var done = false

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return context.fireChannelRead(data) }
        let bytes = tail + Array(unwrapInboundIn(data).readableBytesView)
        guard Self.holdsEmptyLine(bytes) else {
            tail = Array(bytes.suffix(3))
            return context.fireChannelRead(data)
        }
        done = true
        deadline?.cancel()
        deadline = nil
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    private func start(_ context: ChannelHandlerContext) {
        guard deadline == nil, !done else { return }
        let loop = context.eventLoop
        deadline = loop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: timeout) { [weak self] in
            guard let self, !self.done else { return }
            context.close(promise: nil)
        }
    }

    /// Whether `bytes` hold an empty line: `\r\n\r\n` (or `\n\n`).
    static func holdsEmptyLine(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 2 else { return false }
        for index in 1..<bytes.count where bytes[index] == UInt8(ascii: "\n") {
            if bytes[index - 1] == UInt8(ascii: "\n") { return true }
            if index >= 3, bytes[index - 1] == UInt8(ascii: "\r"), bytes[index - 2] == UInt8(ascii: "\n") { return true }
        }
        return false
    }
}

/// Closes a connection whose request the HTTP decoder refused (a head over the size limits,
/// a malformed request line). The WebSocket upgrade pipeline leaves such errors to a handler
/// that is added only once a request was read, so without this the connection stayed open,
/// answered nothing and kept one of `max-connections` for ever. Passes everything else on.
final class ParserErrorCloser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is HTTPParserError {
            context.close(promise: nil)
            return
        }
        context.fireErrorCaught(error)
    }
}
