import HealthModel
import HealthRequests

/// The names of the store service on D-Bus (README, `dbus/org.hrmd.Health1.xml`).
public enum HealthBus {
    /// The service's well-known name on the system bus.
    public static let name = "org.hrmd.Health"
    /// The one object it serves.
    public static let path = "/org/hrmd/Health"
    /// Its interface.
    public static let interface = "org.hrmd.Health1"
    /// The polkit action that makes a caller a manager of the store.
    public static let manageAction = "org.hrmd.health.manage"
    /// The source name of the daemon's own recorder; no bus caller can ever be it.
    public static let daemonSource = HealthSource.daemonName
    /// The systemd unit that provides the service (named in "not running" messages).
    public static let unit = "hrmd.service"
}

/// The D-Bus error names the service answers with.
public enum HealthBusError {
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    public static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
    /// A save of a type the caller's source may not share.
    public static let notAuthorized = "org.hrmd.Health1.Error.NotAuthorized"
    /// An import that is not a readable recording.
    public static let badData = "org.hrmd.Health1.Error.BadData"
    /// The store failed; the message says why.
    public static let failed = "org.hrmd.Health1.Error.Failed"
    /// What the bus daemon answers when nobody owns the name and it cannot be activated.
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
}

/// The documented limits per call: past them a call is refused with InvalidArgs (or
/// LimitsExceeded for calls in flight and observations), never served partly.
public enum HealthBusLimits {
    /// Samples one SaveSamples takes.
    public static let samplesPerSave = RequestBudgets.samplesPerSave
    /// Samples (or change events) one QuerySamples or Changes returns.
    public static let samplesPerQuery = RequestBudgets.samplesPerQuery
    /// Types one caller may observe at once (one per type and app).
    public static let observationsPerCaller = 32
    /// Observations in all.
    public static let observations = 4096
    /// Calls received and not yet taken by the service; more are answered LimitsExceeded at once.
    public static let pendingCalls = 512
    /// Calls of one uid received and not yet answered, over all its connections; more are
    /// answered LimitsExceeded at once, before their arguments are decoded.
    public static let callsPerUser = 256
    /// Calls of one uid the service works on at once; its other calls wait behind them, never
    /// in front of another user's.
    public static let runningCallsPerUser = 8
    /// About how many bytes the decoded arguments of one uid's unanswered calls may occupy.
    public static let argumentBytesPerUser = 48 << 20
    /// The same over all callers.
    public static let argumentBytesInAll = 96 << 20
    /// File descriptors (QuerySamplesToFile's pipe, Import's file) one uid's unanswered calls
    /// may hold.
    public static let descriptorsPerUser = 64
    /// The same over all callers.
    public static let descriptorsInAll = 1024
    /// Values (each string, number, container and element counts one) one call's arguments
    /// may hold; a call over it is answered LimitsExceeded without being decoded further.
    public static let argumentValues = 400_000
    /// Bytes of all strings in one call's arguments together.
    public static let argumentStringBytes = 8 << 20
    /// Bytes of one reply's body at most: a query whose answer would be larger is refused
    /// with LimitsExceeded (ask for fewer samples, or use QuerySamplesToFile). The bus daemon
    /// takes messages up to 32 MiB, and disconnects a sender of a larger one.
    public static let replyBytes = 8 << 20
    /// Bytes of one string argument (an application, type, source, bucket or time zone name)
    /// at most; strings inside samples have their own bounds (SampleSubmission).
    public static let stringArgumentBytes = RequestBudgets.stringArgumentBytes
    /// Observations of one uid over all its connections.
    public static let observationsPerUser = 256
    /// Application names one user may have authorization records for (requests or answers).
    public static let applicationsPerUser = RequestBudgets.applicationsPerUser
    /// Sources with authorization records in all: a bound on what `Authorizations` lists.
    public static let sources = RequestBudgets.sources
    /// Imports one uid may run at once.
    public static let importsPerUser = 1
    /// Message lines one Import returns (the count of bad lines is always complete).
    public static let importMessages = 100
    /// Types one RequestAuthorization names.
    public static let typesPerRequest = RequestBudgets.typesPerRequest
}

extension RequestFailure.Kind {
    /// The D-Bus error name of a failure of this kind.
    public var busErrorName: String {
        switch self {
        case .invalidArguments: HealthBusError.invalidArgs
        case .accessDenied: HealthBusError.accessDenied
        case .notAuthorized: HealthBusError.notAuthorized
        case .limitsExceeded: HealthBusError.limitsExceeded
        case .badData: HealthBusError.badData
        case .failed: HealthBusError.failed
        case .unknownRequest: "org.freedesktop.DBus.Error.UnknownMethod"
        }
    }
}
