import CMosquitto
import Foundation
import Secrets
import Synchronization

/// A failure libmosquitto reported: the call, its code and libmosquitto's own words for it (the
/// system's, for an `errno` failure).
public struct MosquittoError: Error, Sendable, Equatable, CustomStringConvertible {
    public var call: String
    public var code: Int32
    public var message: String

    /// The error of `call`'s result `code`; reads `errno` at once for an `errno` failure.
    init(_ call: String, code: Int32) {
        self.call = call
        self.code = code
        if code == Int32(MOSQ_ERR_ERRNO.rawValue) {
            message = String(cString: strerror(errno))
        } else {
            message = sentence(mosquitto_strerror(code))
        }
    }

    public var description: String { "\(call): \(message)" }
}

/// One message for the broker. Every message hrmd sends is QoS 1.
public struct MosquittoMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var retain: Bool

    public init(topic: String, payload: [UInt8], retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.retain = retain
    }

    public init(topic: String, text: String, retain: Bool = false) {
        self.init(topic: topic, payload: Array(text.utf8), retain: retain)
    }
}

/// How a connection reaches its broker and introduces itself.
public struct MosquittoOptions: Sendable {
    /// Which certificates sign the broker's, for TLS.
    public enum TrustedCertificates: Sendable, Equatable {
        /// The system's CA store (`/etc/ssl/certs`).
        case system
        /// The CA certificates in this PEM file.
        case file(String)
    }

    public var host: String
    public var port: Int
    public var clientID: String
    public var username: String?
    /// Handed to libmosquitto only; never printed.
    public var password: Secret?
    /// nil: plain TCP.
    public var tls: TrustedCertificates?
    /// What the broker publishes for us when we vanish without a word.
    public var will: MosquittoMessage?
    public var keepaliveSeconds: Int32 = 30
    /// QoS 1 messages on the wire without their acknowledgement (libmosquitto holds the rest).
    public var maxInflight: UInt32 = 20
    /// Messages handed to libmosquitto and not yet acknowledged, at most: past this the
    /// connection refuses more (live data is dropped, never queued without bound).
    public var maxUnacknowledged = 1000
    /// The wait before connecting again: the first, doubled after each failure up to the last.
    public var reconnectDelay: (first: Duration, last: Duration) = (.seconds(1), .seconds(60))
    /// How long the broker may take to answer a connection (CONNACK).
    public var answerTimeout: Duration = .seconds(10)

    public init(host: String, port: Int, clientID: String) {
        self.host = host
        self.port = port
        self.clientID = clientID
    }
}

/// What a connection tells its owner, from its own thread, once per change.
public enum MosquittoEvent: Sendable, Equatable {
    /// The broker accepted the connection.
    case connected
    /// The broker answered and refused (CONNACK `code`): `reason` in libmosquitto's words.
    case refused(code: Int32, reason: String)
    /// No connection: the broker cannot be reached, or did not answer in time.
    case unreachable(reason: String)
    /// An accepted connection ended.
    case lost(reason: String)
}

/// What became of a message handed to ``MosquittoConnection/publish(_:)``.
public enum MosquittoPublishResult: Sendable, Equatable {
    /// libmosquitto has it and sends it.
    case queued
    /// Not connected now: dropped.
    case notConnected
    /// Too many messages wait for their acknowledgement: dropped.
    case backlogged
    /// libmosquitto refused it.
    case failed(MosquittoError)
}

/// One client of one broker over libmosquitto, kept connected by a thread of its own: it
/// connects, runs libmosquitto's loop, and after a failure waits (1 s, doubling to 60 s) and
/// connects again, until ``stop(farewell:within:)``. Nothing here blocks a caller: `publish`
/// only queues (libmosquitto's threaded mode, the loop thread writes), and the events go to
/// `onEvent` on the loop thread.
public final class MosquittoConnection: Sendable {
    private enum Phase: Sendable, Equatable {
        case idle, connecting, connected, refused, stopping, stopped
    }

    private struct State: Sendable {
        var phase = Phase.idle
        /// QoS 1 messages sent and not yet acknowledged, by message id.
        var unacknowledged: Set<Int32> = []
        /// Acknowledgements that came before `publish` returned their id.
        var earlyAcknowledgements: Set<Int32> = []
        /// Whether the current connection was accepted (for the event at its end).
        var accepted = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    /// libmosquitto's handle: used from the loop thread and, for publish and disconnect (which
    /// libmosquitto's threaded mode allows), from callers.
    private final class Handle: @unchecked Sendable {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
    }

    private static let libraryReady: Bool = {
        mosquitto_lib_init()
        return true
    }()

    private let handle: Handle
    private let options: MosquittoOptions
    private let onEvent: @Sendable (MosquittoEvent) -> Void
    private let state = Mutex(State())
    /// Wakes the loop thread from a back-off wait when stopping.
    private let wake = NSCondition()

    /// A client with `options` set (credentials, TLS, will, limits); connects on ``start()``.
    public init(options: MosquittoOptions, onEvent: @escaping @Sendable (MosquittoEvent) -> Void) throws(MosquittoError) {
        _ = Self.libraryReady
        guard let pointer = mosquitto_new(options.clientID, true, nil) else {
            throw MosquittoError("mosquitto_new", code: Int32(MOSQ_ERR_ERRNO.rawValue))
        }
        handle = Handle(pointer)
        self.options = options
        self.onEvent = onEvent
        try check("mosquitto_threaded_set", mosquitto_threaded_set(pointer, true))
        try check("mosquitto_int_option", mosquitto_int_option(pointer, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311))
        try check("mosquitto_max_inflight_messages_set", mosquitto_max_inflight_messages_set(pointer, options.maxInflight))
        if let username = options.username {
            try check("mosquitto_username_pw_set", mosquitto_username_pw_set(pointer, username, options.password?.revealed))
        }
        switch options.tls {
        case nil:
            break
        case .file(let path):
            try check("mosquitto_tls_set", mosquitto_tls_set(pointer, path, nil, nil, nil, nil))
        case .system:
            try check("mosquitto_tls_set", mosquitto_tls_set(pointer, nil, "/etc/ssl/certs", nil, nil, nil))
            try check("mosquitto_int_option", mosquitto_int_option(pointer, MOSQ_OPT_TLS_USE_OS_CERTS, 1))
        }
        if let will = options.will {
            let code = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(pointer, will.topic, Int32(bytes.count), bytes.baseAddress, 1, will.retain)
            }
            try check("mosquitto_will_set", code)
        }
        mosquitto_user_data_set(pointer, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_connect_callback_set(pointer) { _, context, code in
            guard let context else { return }
            Unmanaged<MosquittoConnection>.fromOpaque(context).takeUnretainedValue().answered(code)
        }
        mosquitto_publish_callback_set(pointer) { _, context, messageID in
            guard let context else { return }
            Unmanaged<MosquittoConnection>.fromOpaque(context).takeUnretainedValue().acknowledged(messageID)
        }
    }

    deinit {
        mosquitto_destroy(handle.pointer)
    }

    /// Starts the loop thread (once).
    public func start() {
        let starts = state.withLock { state in
            guard state.phase == .idle else { return false }
            state.phase = .connecting
            return true
        }
        guard starts else { return }
        let thread = Thread { self.loop() }
        thread.name = "hrmd.mqtt"
        thread.start()
    }

    /// Whether the broker accepted the connection and it is up.
    public var isConnected: Bool { state.withLock { $0.phase == .connected } }

    /// Messages sent and not yet acknowledged.
    public var unacknowledgedCount: Int { state.withLock { $0.unacknowledged.count } }

    /// Hands `message` to libmosquitto (QoS 1) when connected and not backlogged; never waits.
    @discardableResult
    public func publish(_ message: MosquittoMessage) -> MosquittoPublishResult {
        let refusal: MosquittoPublishResult? = state.withLock { state in
            guard state.phase == .connected else { return .notConnected }
            guard state.unacknowledged.count < options.maxUnacknowledged else { return .backlogged }
            return nil
        }
        if let refusal { return refusal }
        var messageID: Int32 = 0
        let code = message.payload.withUnsafeBytes { bytes in
            mosquitto_publish(handle.pointer, &messageID, message.topic, Int32(bytes.count), bytes.baseAddress, 1, message.retain)
        }
        guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
            if code == Int32(MOSQ_ERR_NO_CONN.rawValue) { return .notConnected }
            return .failed(MosquittoError("mosquitto_publish", code: code))
        }
        state.withLock { state in
            if state.earlyAcknowledgements.remove(messageID) == nil { state.unacknowledged.insert(messageID) }
        }
        return .queued
    }

    /// Stops: sends `farewell` (when connected) and a clean disconnect, and waits up to
    /// `within` for the loop thread to end (a thread stuck in a connect is left to end with
    /// the process).
    public func stop(farewell: MosquittoMessage?, within: Duration) async {
        let wasConnected = state.withLock { state -> Bool in
            let connected = state.phase == .connected
            switch state.phase {
            case .idle: state.phase = .stopped
            case .stopped: break
            default: state.phase = .stopping
            }
            return connected
        }
        if wasConnected, let farewell {
            _ = farewell.payload.withUnsafeBytes { bytes in
                mosquitto_publish(handle.pointer, nil, farewell.topic, Int32(bytes.count), bytes.baseAddress, 1, farewell.retain)
            }
        }
        mosquitto_disconnect(handle.pointer)
        wakeLoop()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.ended() }
            group.addTask { try? await Task.sleep(for: within) }
            await group.next()
            group.cancelAll()
        }
    }

    // MARK: The loop thread

    private var isStopping: Bool { state.withLock { $0.phase == .stopping || $0.phase == .stopped } }

    private func loop() {
        var delay = options.reconnectDelay.first
        while !isStopping {
            state.withLock { state in
                if state.phase != .stopping { state.phase = .connecting }
                state.accepted = false
            }
            let code = mosquitto_connect(handle.pointer, options.host, Int32(options.port), options.keepaliveSeconds)
            if code != Int32(MOSQ_ERR_SUCCESS.rawValue) {
                let error = MosquittoError("connect", code: code)
                if !isStopping { onEvent(.unreachable(reason: "\(options.host):\(options.port): \(error.message)")) }
            } else {
                let ending = runConnection()
                if let ending, !isStopping { onEvent(ending) }
                if state.withLock({ $0.accepted }) { delay = options.reconnectDelay.first }
            }
            guard !isStopping else { break }
            pause(delay)
            delay = min(delay * 2, options.reconnectDelay.last)
        }
        let waiter = state.withLock { state in
            state.phase = .stopped
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Runs libmosquitto's loop on one connection until it ends; what to report of its end
    /// (nil when the broker's refusal was already reported).
    private func runConnection() -> MosquittoEvent? {
        let started = ContinuousClock.now
        var timedOut = false
        var code = Int32(MOSQ_ERR_SUCCESS.rawValue)
        while true {
            code = mosquitto_loop(handle.pointer, 1000, 1)
            guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else { break }
            let phase = state.withLock { $0.phase }
            if phase == .connecting && !timedOut && ContinuousClock.now - started > options.answerTimeout {
                timedOut = true
                mosquitto_disconnect(handle.pointer)
            }
        }
        let error = MosquittoError("loop", code: code)
        let phase = state.withLock { $0.phase }
        switch phase {
        case .refused: return nil
        case .connected:
            state.withLock { $0.phase = .connecting }
            return .lost(reason: error.message)
        default:
            if timedOut { return .unreachable(reason: "\(options.host):\(options.port) did not answer within \(options.answerTimeout.components.seconds) s") }
            return .unreachable(reason: "\(options.host):\(options.port): \(error.message)")
        }
    }

    /// Ends a back-off wait of the loop thread (it sees the phase changed).
    private func wakeLoop() {
        wake.lock()
        wake.broadcast()
        wake.unlock()
    }

    /// Waits `delay`, or less when stopping.
    private func pause(_ delay: Duration) {
        let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
        let deadline = Date(timeIntervalSinceNow: seconds)
        wake.lock()
        while !isStopping && Date() < deadline {
            _ = wake.wait(until: deadline)
        }
        wake.unlock()
    }

    /// The broker's CONNACK (on the loop thread).
    private func answered(_ code: Int32) {
        let accepted = code == 0
        let report = state.withLock { state -> Bool in
            guard state.phase == .connecting else { return false }
            state.phase = accepted ? .connected : .refused
            state.accepted = accepted
            state.unacknowledged.removeAll()
            state.earlyAcknowledgements.removeAll()
            return true
        }
        guard report else { return }
        onEvent(accepted ? .connected : .refused(code: code, reason: sentence(mosquitto_connack_string(code))))
    }

    /// A QoS 1 message's acknowledgement (on the loop thread).
    private func acknowledged(_ messageID: Int32) {
        state.withLock { state in
            if state.unacknowledged.remove(messageID) == nil { state.earlyAcknowledgements.insert(messageID) }
        }
    }

    /// Returns once the loop thread ended (or at once when it never started); cancelling
    /// the caller stops the wait.
    private func ended() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { state -> Bool in
                    if state.phase == .stopped || Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}

/// libmosquitto's words without their closing full stop (they go inside longer lines).
private func sentence(_ text: UnsafePointer<CChar>) -> String {
    let words = String(cString: text)
    return words.hasSuffix(".") ? String(words.dropLast()) : words
}

private func check(_ call: String, _ code: Int32) throws(MosquittoError) {
    guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else { throw MosquittoError(call, code: code) }
}
