/// A change to an event that a detector reports, carrying the event as it now is.
public enum EventUpdate: Sendable, Equatable, CustomStringConvertible {
    /// The event's condition has lasted long enough: it is visible, open (`end` nil).
    case opened(DetectedEvent)
    /// An open event's extreme changed (a higher high, a lower low or battery level); still open.
    case extended(DetectedEvent)
    /// The event ended; `end` is set.
    case closed(DetectedEvent)

    /// The event as this update leaves it.
    public var event: DetectedEvent {
        switch self {
        case .opened(let event), .extended(let event), .closed(let event): event
        }
    }

    public var description: String {
        switch self {
        case .opened(let event): "opened \(event)"
        case .extended(let event): "extended \(event)"
        case .closed(let event): "closed \(event)"
        }
    }
}
