import SDBus

/// Sends notifications to the desktop's notification server
/// (`org.freedesktop.Notifications` on the session bus).
public struct DesktopNotifier: Sendable {
    /// The notification server's well-known name, path and interface.
    public static let service = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"

    /// The application name notifications carry.
    public let appName: String
    private let connection: DBusConnection

    /// A notifier on `connection` (the user's session bus).
    public init(connection: DBusConnection, appName: String = "hrmd") {
        self.connection = connection
        self.appName = appName
    }

    /// Shows `notification` (replacing the one with id `replacing`, when given) and returns its
    /// id. Fails with the server's error, or `ServiceUnknown` when no server runs.
    public func show(_ notification: EventNotification, replacing: UInt32? = nil) async throws(DBusError) -> UInt32 {
        let hints: [DBusDictionaryEntry] = [
            DBusDictionaryEntry(.string("urgency"), .variant(.byte(notification.urgency))),
            DBusDictionaryEntry(.string("category"), .variant(.string("device"))),
        ]
        let reply = try await connection.call(
            destination: Self.service, path: Self.path, interface: Self.service, member: "Notify",
            arguments: [
                .string(appName), .uint32(replacing ?? 0), .string("heart"), .string(notification.summary), .string(notification.body),
                .strings([]), .dictionary(key: "s", value: "v", hints), .int32(-1),
            ],
            timeout: .seconds(10))
        guard case .uint32(let id)? = reply.first else {
            throw .unexpectedReply("Notify answered \(reply), not a notification id")
        }
        return id
    }
}
