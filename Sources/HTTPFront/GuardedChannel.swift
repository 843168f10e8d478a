import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// Each connection to the front as it is accepted: refused when its address already holds its
/// share of connections, closed when its first request head is not complete within `timeout`
/// of connecting, and closed when the HTTP decoder refuses what it sent.
///
/// Hummingbird's idle timeout starts only once the first request head has been read when the
/// channel can upgrade to a WebSocket, and it is reset by every byte read; without the first-head
/// deadline a client that connects and sends nothing, blank lines, or its head a byte at a time
/// would keep its connection (and one of `max-connections`) for ever. The deadline sits in
/// front of the HTTP decoder (behind TLS, so that a slow handshake counts too) and leaves the
/// pipeline once the first head is in; from then on ``RequestDeadlines`` bounds each request.
struct GuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let timeout: TimeAmount
    let perAddress: ConnectionsPerAddress

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        // A connection whose setup fails is never registered, and NIO leaves it open: it would
        // keep its socket and one of `max-connections` for ever. Each failure closes it here.
        guard let slot = perAddress.admit(channel) else {
            logger.debug("http: refused a connection from \(channel.remoteAddress?.ipAddress ?? "?"): \(perAddress.limit) already open from there")
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(ConnectionRefused.tooManyFromAddress)
        }
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers(
                AddressSlotRelease(slot: slot), WireEnd(), FirstHeadDeadlineHandler(timeout: timeout))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }.flatMapThrowing { value in
            let wire = try channel.pipeline.syncOperations.handler(type: WireEnd.self)
            try channel.pipeline.syncOperations.addHandler(ParserErrorResponder(wire: wire))
            return value
        }.flatMapErrorThrowing { error in
            logger.debug("http: closed a connection whose setup failed: \(error)")
            channel.close(promise: nil)
            throw error
        }
    }

    /// Serves the connection; what Hummingbird logs of a connection that
    /// ``ParserErrorResponder`` answered and closed is a debug line, not an error: anyone can
    /// send a malformed request, and none of them may fill the journal.
    func handle(value: Value, logger: Logger) async {
        var quiet = Logger(label: logger.label) { _ in UpgradeFailureLevel(base: logger.handler) }
        quiet.logLevel = logger.logLevel
        await base.handle(value: value, logger: quiet)
    }
}

/// Logs through `base`, with Hummingbird's error line for an upgrade that ended because the
/// connection was closed under it (a malformed request, answered and closed) as a debug line.
struct UpgradeFailureLevel: LogHandler {
    /// The line HummingbirdWebSocket logs when a connection's upgrade result is an error.
    static let upgradeFailure = "Error handling upgrade result"

    var base: any LogHandler

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        if event.level == .error && event.message.description == Self.upgradeFailure { event.level = .debug }
        guard event.level >= base.logLevel else { return }
        base.log(event: event)
    }
}

/// Why a connection was closed as soon as it was accepted.
enum ConnectionRefused: Error {
    /// Its address holds ``ConnectionsPerAddress/limit`` connections already.
    case tooManyFromAddress
}

/// Connections open per remote IP address, each counted from acceptance until it closes, so
/// that one client cannot take every one of `max-connections`. Connections without an IP
/// address (a Unix socket) are not counted.
///
/// A connection's place is given back when the connection goes inactive, before Hummingbird's
/// count of `max-connections` lets the next connection in (that count drops only once the
/// connection's close has completed): the next connection from the same address, accepted
/// because one closed, always finds that place free.
final class ConnectionsPerAddress: Sendable {
    /// Connections one address may hold at once.
    let limit: Int
    private let open = Mutex<[String: Int]>([:])

    init(limit: Int) { self.limit = limit }

    /// Counts `channel` in when its address has room: its place, given back when the channel
    /// goes inactive or closes, whichever is first. Nil when the address has no room.
    func admit(_ channel: any Channel) -> AddressSlot? {
        guard let address = channel.remoteAddress?.ipAddress else { return AddressSlot(release: {}) }
        let admitted = open.withLock { open in
            guard open[address, default: 0] < limit else { return false }
            open[address, default: 0] += 1
            return true
        }
        guard admitted else { return nil }
        let slot = AddressSlot { [self] in
            open.withLock { open in
                let left = open[address, default: 1] - 1
                open[address] = left > 0 ? left : nil
            }
        }
        channel.closeFuture.whenComplete { _ in slot.release() }
        return slot
    }
}

/// One connection's place among its address's connections, given back once.
final class AddressSlot: Sendable {
    private let releaseOnce: Mutex<(@Sendable () -> Void)?>

    init(release: @escaping @Sendable () -> Void) { releaseOnce = Mutex(release) }

    /// Gives the place back; calls after the first do nothing.
    func release() {
        releaseOnce.withLock { release in
            let body = release
            release = nil
            return body
        }?()
    }
}

/// Gives a connection's ``AddressSlot`` back as soon as the connection goes inactive.
final class AddressSlotRelease: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let slot: AddressSlot

    init(slot: AddressSlot) { self.slot = slot }

    func channelInactive(context: ChannelHandlerContext) {
        slot.release()
        context.fireChannelInactive()
    }
}

/// Watches the bytes of a connection until the end of its first request head and closes the
/// connection when that does not come within `timeout` of the connection's start. The
/// deadline is fixed when the connection starts: bytes that arrive meanwhile, a trickle of
/// header bytes or blank lines, buy nothing.
final class FirstHeadDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    private var scanner = HeadEndScanner()
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
        guard scanner.feed(unwrapInboundIn(data).readableBytesView) else { return context.fireChannelRead(data) }
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
}

/// Finds the end of a request head in a connection's first bytes, fed as they come: the first
/// empty line after a request line. Empty lines before the request line (which HTTP lets a
/// client send, and which a hostile one sends to look finished) do not end anything.
struct HeadEndScanner {
    /// Whether a byte other than CR or LF came: the request line began.
    private var started = false
    /// Whether the current line holds nothing but CRs so far.
    private var lineIsEmpty = true

    /// Takes the next bytes; true once the head's end is among the bytes fed so far.
    mutating func feed(_ bytes: some Sequence<UInt8>) -> Bool {
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\n"):
                if started && lineIsEmpty { return true }
                lineIsEmpty = true
            case UInt8(ascii: "\r"):
                break
            default:
                started = true
                lineIsEmpty = false
            }
        }
        return false
    }
}

/// Answers a request the HTTP decoder refused (a malformed request line, a control character
/// in a header, a head over the size limits) with `400 Bad Request` and closes the connection.
/// The WebSocket upgrade pipeline leaves such errors to a handler that is added only once a
/// request was read, so without this the connection stayed open, answered nothing and kept one
/// of `max-connections` for ever. The answer goes out at the ``WireEnd``, past the HTTP
/// encoder, and only while nothing was sent on the connection yet (else it closes without a
/// word: a response under way cannot be interrupted by another). Passes everything else on.
final class ParserErrorResponder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    /// The whole answer, as NIO's own HTTP error handler words it.
    static let badRequest = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"

    private let wire: WireEnd

    init(wire: WireEnd) { self.wire = wire }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError else { return context.fireErrorCaught(error) }
        guard !wire.sentAnything, let wireContext = try? context.pipeline.syncOperations.context(handler: wire) else {
            context.close(promise: nil)
            return
        }
        wireContext.writeAndFlush(NIOAny(wireContext.channel.allocator.buffer(string: Self.badRequest)), promise: nil)
        context.close(promise: nil)
    }
}

/// The connection's end of the pipeline nearest the socket (behind TLS): it remembers whether
/// any bytes were sent, and ``ParserErrorResponder`` writes its raw answer from here.
final class WireEnd: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private(set) var sentAnything = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        sentAnything = true
        context.write(data, promise: promise)
    }
}
