@preconcurrency import Glibc
import ArgumentParser
import CommandSupport
import DesktopNotifications
import HealthModel
import HealthRequests
import SDBus
import StoreTransport

/// `hrmctl notify`: hrmd's events as desktop notifications for the user who runs it.
struct NotifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notify",
        abstract: "Show hrmd's events (high or low heart rate, contact lost, battery low) as desktop notifications.",
        discussion: """
            Follows the events as hrmd saves them (hrmctl watch --type, for several types) and
            shows each one on the desktop (org.freedesktop.Notifications on the session bus):
            a notification when an event opens (critical for heart rate), replaced by another
            when it ends. It reads as the application hrmctl of the user who runs it: a
            manager of the store sees every event; anyone else needs read authorization of the
            event types, which it asks for at start (a manager grants it with
            hrmctl auth grant USER/hrmctl high-heart-rate-event --read). A notification server
            that is not running, or fails, is said once and tried again at the next event.

            It is meant to run in the desktop session as the user unit hrmd-notify.service:
              systemctl --user enable --now hrmd-notify.service

            EXAMPLES
              hrmctl notify
              hrmctl notify --type high-heart-rate-event --type low-heart-rate-event
            """)

    @OptionGroup var storeOptions: StoreOptions
    @Option(name: .customLong("type"), help: ArgumentHelp("An event type to notify of (repeat it; default: every event type).", valueName: "type"))
    var types: [String] = []
    @Option(help: ArgumentHelp("Seconds between reads of a store file.", valueName: "seconds")) var interval: Double = 1
    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds")) var duration: Double?

    func validate() throws {
        _ = try eventTypes()
        guard interval >= 0.05, interval <= 60 else { throw ValidationError("--interval must be 0.05…60 seconds") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be positive") }
    }

    private func eventTypes() throws(ValidationError) -> [SampleType] {
        guard !types.isEmpty else { return SampleType.eventTypes }
        var chosen: [SampleType] = []
        for name in types {
            let type: SampleType
            do { type = try SampleType.eventType(named: name) } catch { throw ValidationError(error.description) }
            if !chosen.contains(type) { chosen.append(type) }
        }
        return chosen
    }

    func run() async throws {
        try await reportingFailures {
            let chosen = try eventTypes()
            let session: DBusConnection
            do {
                session = try DBusConnection.session()
            } catch {
                throw CommandFailure(
                    "no session bus to show notifications on (\(error)): run hrmctl notify in a desktop session, as the user unit hrmd-notify.service",
                    status: .unavailable)
            }
            let store = try storeOptions.access()
            // The request a manager sees (hrmctl auth requests); refused or not, events come
            // by the read rule.
            _ = try? await store.send(RequestAuthorization(app: ServiceTransport.app, share: [], read: chosen))
            let shower = NotificationShower(notifier: DesktopNotifier(connection: session))
            let (news, arrivals) = AsyncStream<[HealthEvent]>.makeStream()
            let deadline = duration.map { ContinuousClock.now.advanced(by: .seconds($0)) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await events in news {
                        for event in events { await shower.show(event) }
                    }
                }
                do {
                    try await store.followEvents(of: chosen, pollInterval: interval, until: deadline, ready: {
                        print("hrmctl: notifying of \(chosen.map(\.identifier).joined(separator: ", ")) events")
                        fflush(stdout)
                    }) { events in arrivals.yield(events) }
                } catch {
                    arrivals.finish()
                    throw error
                }
                arrivals.finish()
                try await group.waitForAll()
            }
        }
    }
}

/// Shows events one after another, replacing an event's opening notification by its end, and
/// says once (on stderr) when the notification server fails and once when it works again.
actor NotificationShower {
    private let notifier: DesktopNotifier
    /// The notification shown for each event, by event id.
    private var shown: [String: UInt32] = [:]
    private var failing = false

    init(notifier: DesktopNotifier) { self.notifier = notifier }

    func show(_ event: HealthEvent) async {
        do {
            let id = try await notifier.show(EventNotification(event), replacing: shown[event.id])
            shown[event.id] = event.isOpen ? id : nil
            if failing { printError("notifications are shown again", program: "hrmctl") }
            failing = false
        } catch {
            if !failing { printError("cannot show a notification: \(error); trying again at the next event", program: "hrmctl") }
            failing = true
        }
    }
}
