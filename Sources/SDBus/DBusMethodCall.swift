import Synchronization

/// A method call an exported object received. Answer it exactly once, with `reply` or
/// `fail`, from any thread or task; the answer is built and sent on the connection's loop
/// thread. A second answer is ignored; a call dropped without an answer is answered
/// `org.freedesktop.DBus.Error.Failed` ("the service did not answer"); once the connection
/// is closed, answering does nothing.
public final class DBusMethodCall: Sendable {
    /// What the service answered.
    enum Answer: Sendable {
        case values([DBusValue])
        case error(name: String, message: String)
    }

    /// The method's name (dispatch on it).
    public let member: String
    /// The caller's unique name (`:1.42`): the destination of signals meant for it alone.
    public let sender: String
    /// The caller's effective uid as the bus daemon reports it (`GetConnectionUnixUser`, the
    /// peer credentials of its socket): a client cannot forge it. Never read from /proc.
    public let senderUID: UInt32
    /// The call's arguments, already checked against the method's input signature by sd-bus.
    /// Unix fds are owned duplicates (`DBusFileDescriptor`).
    public let arguments: [DBusValue]
    /// Whether the caller allows interactive authorization (polkit may ask its user).
    public let allowsInteractiveAuthorization: Bool

    private let loop: BusEventLoop
    private let id: UInt64
    private let answered = Atomic<Bool>(false)

    init(
        loop: BusEventLoop, id: UInt64, member: String, sender: String, senderUID: UInt32, arguments: [DBusValue],
        allowsInteractiveAuthorization: Bool
    ) {
        self.loop = loop
        self.id = id
        self.member = member
        self.sender = sender
        self.senderUID = senderUID
        self.arguments = arguments
        self.allowsInteractiveAuthorization = allowsInteractiveAuthorization
    }

    deinit {
        if !answered.load(ordering: .acquiring) {
            let id = id
            loop.enqueue { $0.answerCall(id: id, with: .error(name: DBusMethodCall.failed, message: "the service did not answer")) }
        }
    }

    /// Answers with these values; they must match the method's output signature, else the
    /// caller gets `org.freedesktop.DBus.Error.Failed` instead.
    public func reply(_ values: [DBusValue] = []) {
        answer(.values(values))
    }

    /// Answers with a D-Bus error (`org.example.Error.NotAuthorized`, human-readable message).
    /// An invalid error name is replaced by `org.freedesktop.DBus.Error.Failed`.
    public func fail(name: String, message: String) {
        answer(.error(name: name, message: message))
    }

    /// Whether this call was answered already (by `reply`, `fail`, or the connection itself).
    public var isAnswered: Bool { answered.load(ordering: .acquiring) }

    private func answer(_ answer: Answer) {
        guard claim() else { return }
        let id = id
        loop.enqueue { $0.answerCall(id: id, with: answer) }
    }

    /// Takes the right to answer; false when somebody answered before.
    private func claim() -> Bool {
        !answered.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Answers at once; only on the loop thread (calls the loop itself refuses).
    func answerOnLoopThread(_ answer: Answer) {
        guard claim() else { return }
        loop.answerCall(id: id, with: answer)
    }

    static let failed = "org.freedesktop.DBus.Error.Failed"
}
