/// The names of the store service on D-Bus (CONTRACT.md, `dbus/org.hrmd.Health1.xml`).
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
    public static let daemonSource = "hrmd"
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
    public static let samplesPerSave = 10_000
    /// Samples (or change events) one QuerySamples or Changes returns.
    public static let samplesPerQuery = 10_000
    /// Types one caller may observe at once (one per type and app).
    public static let observationsPerCaller = 32
    /// Observations in all.
    public static let observations = 4096
    /// Calls received and not yet answered; more are answered LimitsExceeded at once.
    public static let pendingCalls = 512
    /// Message lines one Import returns (the count of bad lines is always complete).
    public static let importMessages = 100
    /// Types one RequestAuthorization names.
    public static let typesPerRequest = 64
}
