/// What an event is about. The raw values are the names stored and shown (`contact-lost`).
public enum EventKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Heart rate strictly above `AlertRules.high` for at least `highFor`.
    case high
    /// Heart rate strictly below `AlertRules.low` for at least `lowFor`.
    case low
    /// The strap reporting no skin contact for at least `contactLostFor`.
    case contactLost = "contact-lost"
    /// The strap's battery under `AlertRules.batteryLow` (``BatteryWatch``).
    case batteryLow = "battery-low"
    /// The strap's link down for at least `AlertRules.disconnectedFor` (``LinkWatch``).
    case disconnected

    public var description: String { rawValue }
}
