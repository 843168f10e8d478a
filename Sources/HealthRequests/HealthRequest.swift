import HealthModel

/// One request the store serves, defined once for every front (D-Bus, HTTP): its typed
/// arguments (the stored properties, in the order the front passes them, named as the front
/// names them), its typed answer, who may make it, its budgets (checked in ``serve(in:)``) and
/// what it does. A front decodes the arguments, finds the caller, hands the request to
/// ``serve(in:)`` and encodes the answer; it adds no rule of its own.
public protocol HealthRequest: Codable, Sendable {
    /// What the request answers; its properties are the answer's parts, in order.
    associatedtype Response: Codable, Sendable

    /// The request's name: the D-Bus method (`QuerySamples`).
    static var name: String { get }
    /// Who may make it.
    static var access: RequestAccess { get }
    /// What the memory serving it grows with, at most, whatever the store holds (hrmd's peak
    /// over every read request's worst case is checked in `make test`).
    static var memory: RequestMemory { get }

    /// Does what the request asks, as the caller of `context`.
    func serve(in context: some RequestContext) async throws(RequestFailure) -> Response
}

/// Who may make a request.
public enum RequestAccess: Sendable, Hashable {
    /// Any application, as its own source: what it sees and may change follows the user's
    /// answers for that source (a manager sees everything).
    case application
    /// Only a manager of the store (polkit's `org.hrmd.health.manage`); everyone else is refused
    /// before the request is served.
    case manager
}

/// What the memory of serving one request grows with, at most: the bound each request
/// declares, so that no request's cost grows with the history in the store.
public enum RequestMemory: Sendable, Hashable, CustomStringConvertible {
    /// A few values, whatever the store holds.
    case constant
    /// Its answer (or its arguments), at most `items` of `of` each: a budget refuses more.
    case answer(Int, of: String)
    /// It streams the samples it reads through a few numbers per series (a source's samples
    /// from one device), within ``HeartAnalysisBudget/samples`` read.
    case perSeries
    /// It passes samples through a file descriptor a page at a time.
    case streamed
    /// One entry per `String` the store holds: no budget bounds how many the store may hold yet.
    case perStored(String)

    public var description: String {
        switch self {
        case .constant: "a few values"
        case .answer(let items, let what): "its answer: at most \(items) \(what)s"
        case .perSeries: "a few numbers per series read (at most \(HeartAnalysisBudget.samples) samples read)"
        case .streamed: "a page of samples at a time"
        case .perStored(let what): "one entry per \(what) in the store"
        }
    }
}

/// An answer with nothing in it.
public struct NoResponse: Codable, Sendable, Hashable {
    public init() {}
}

/// Why a request failed: what kind of failure (each front has its own word for each kind,
/// such as a D-Bus error name) and one line for the caller.
public struct RequestFailure: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The arguments do not have the shape or meaning the request needs.
        case invalidArguments
        /// The caller may not make this request.
        case accessDenied
        /// A save of a type the caller's source may not share.
        case notAuthorized
        /// Past a budget: too many at once, or too large an answer.
        case limitsExceeded
        /// A recording to import that cannot be read.
        case badData
        /// The store failed; the message says why.
        case failed
        /// No request of that name.
        case unknownRequest
    }

    public let kind: Kind
    public let message: String
    /// The store's own error, when the store failed: a caller in the store's process (hrmctl
    /// on a file) tells its kinds apart, as a missing file from a damaged one.
    public let cause: HealthStoreError?

    public init(_ kind: Kind, _ message: String, cause: HealthStoreError? = nil) {
        self.kind = kind
        self.message = message
        self.cause = cause
    }

    public var description: String { "\(kind.rawValue): \(message)" }

    public static func invalidArguments(_ message: String) -> RequestFailure { RequestFailure(.invalidArguments, message) }

    public static func accessDenied(_ message: String) -> RequestFailure { RequestFailure(.accessDenied, message) }

    /// The store failed: every error of the store that is not about the arguments.
    public static func store(_ error: HealthStoreError) -> RequestFailure {
        let kind: Kind =
            switch error {
            case .unknownType, .incompatibleUnit, .invalidInterval, .conflict: .invalidArguments
            case .shareNotAuthorized: .notAuthorized
            case .limitReached: .limitsExceeded
            case .engine(let failure):
                switch failure.kind {
                case .readOnly, .invalidArguments: .invalidArguments
                case .limitReached: .limitsExceeded
                case .unreachable, .permissionDenied, .failed: .failed
                }
            default: .failed
            }
        return RequestFailure(kind, error.description, cause: error)
    }
}

extension WireError {
    /// The failure of a request whose arguments this error is about.
    public var failure: RequestFailure { .invalidArguments(description) }
}

/// What a request is served with: who calls (as the front verified it, never what the caller
/// says of itself), the store, and the services of the front it came through. A front
/// implements it once.
public protocol RequestContext: Sendable {
    /// The login name of the caller's user.
    var user: String { get }
    /// Logs what a request did (a request, a grant, a deletion, an import) in the front's log:
    /// `message` is the request's own text, and every name a caller chose (a source, a file
    /// name, a token pattern) goes in `fields`, one log field each, never into the text. The
    /// front adds who called.
    func log(_ level: RequestLogLevel, _ message: String, _ fields: [String: String])

    /// The source of the caller's application `app`: `USER/APP` checked, or the source its
    /// verified label names.
    func source(app: String) throws(RequestFailure) -> String
    /// Whether the caller is a manager of the store (never asks the user).
    func isManager() async throws(RequestFailure) -> Bool
    /// Refuses a caller that is not a manager; `what` names the refused request in the message.
    func requireManager(for what: String) async throws(RequestFailure)
    /// How ids and anchors are shown to an application that is not a manager.
    var tokens: AnchorTokens { get }
    /// Runs store work off the caller's task, on the store's workers.
    func onStore<T: Sendable>(_ body: @escaping @Sendable (any RequestStore) throws(HealthStoreError) -> T) async throws(RequestFailure) -> T
    /// What this front does for the requests that hand over a file or tie the caller to the
    /// front's connection (QuerySamplesToFile, Import, Observe).
    var front: any RequestFront { get }
}

extension RequestContext {
    /// What `source` sees as this caller: everything for a manager, else its own source's view.
    public func view(of source: String) async throws(RequestFailure) -> CallerView {
        CallerView(source: source, isManager: try await isManager(), tokens: tokens)
    }
}

/// How much a request's log line matters: `info` for what applications ask, `notice` for
/// what changes the store or its authorizations.
public enum RequestLogLevel: Sendable, Hashable {
    case info
    case notice
}

/// The parts of serving that belong to the front a request came through: its files, its
/// connections.
public protocol RequestFront: Sendable {
    /// Writes every sample of `query` to `output`, one JSON line each as `view` shows it;
    /// returns how many.
    func writeSamples(_ query: SampleQuery, view: CallerView, to output: PassedFile) async throws(RequestFailure) -> Int
    /// Replays the recording in `file` into the store as the daemon's source.
    func importRecording(_ options: ImportOptions, from file: PassedFile) async throws(RequestFailure) -> ImportResult
    /// From now on the caller's connection is told when samples of `type` that `source` may
    /// read change.
    func observe(source: String, type: SampleType, isManager: Bool) throws(RequestFailure)
    /// Stops what `observe` started.
    func unobserve(source: String, type: SampleType)
}

/// A file the caller hands over with a request (a descriptor passed over D-Bus). What it
/// holds is the front's: the request only passes it back to the front.
public struct PassedFile: Codable, Sendable, Hashable {
    /// The descriptor in this process; the front keeps it open while the request runs.
    public var descriptor: Int32

    public init(descriptor: Int32) { self.descriptor = descriptor }
}
