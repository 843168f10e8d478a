import CSystemd
@preconcurrency import Glibc

/// Tells the service manager about hrmd's state through sd_notify(3): readiness, a status
/// line, watchdog keep-alives, reloading and stopping. Without $NOTIFY_SOCKET (not run by
/// systemd) every call does nothing.
public struct ServiceNotifier: Sendable {
    /// Whether a service manager listens.
    public let isActive: Bool
    /// How often the watchdog wants a keep-alive (half its timeout), when it is enabled for
    /// this process.
    public let watchdogInterval: Duration?

    public init() {
        isActive = getenv("NOTIFY_SOCKET") != nil
        var microseconds: UInt64 = 0
        if sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 {
            watchdogInterval = .microseconds(Int64(microseconds / 2))
        } else {
            watchdogInterval = nil
        }
    }

    /// READY=1 with a status line: the store is open and the backends have started.
    public func ready(status: String) { send("READY=1\nSTATUS=\(status)") }

    /// STATUS=…: one line people see in `systemctl status`.
    public func status(_ text: String) { send("STATUS=\(text)") }

    /// WATCHDOG=1: the ingest loop is alive.
    public func watchdogKeepAlive() { send("WATCHDOG=1") }

    /// RELOADING=1 while the configuration is read again; call `ready` after.
    public func reloading() { send("RELOADING=1") }

    /// STOPPING=1: shutdown has begun.
    public func stopping() { send("STOPPING=1") }

    private func send(_ state: String) {
        guard isActive else { return }
        _ = sd_notify(0, state)
    }
}
