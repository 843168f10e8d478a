/// What hrmd learns about its devices: present at start-up, plugged in, unplugged.
public enum HotplugEvent: Sendable, Hashable {
    /// A device to serve: present at start-up, plugged in, or newly marked by a change.
    case added(HotplugDevice)
    /// The device at this sysfs path is gone (or no longer marked); stop serving it.
    case removed(syspath: String)
    /// Every device present at start-up was reported; from here on only plugging changes things.
    case initialScanFinished

    /// The event for a udev `action` on the device at `syspath`, which is `device` when hrmd
    /// serves such a device; nil when the action changes nothing for hrmd.
    public init?(action: String, syspath: String, device: HotplugDevice?) {
        switch action {
        case "add", "change":
            if let device {
                self = .added(device)
            } else if action == "change" {
                self = .removed(syspath: syspath)  // a rule change unmarked it
            } else {
                return nil
            }
        case "remove":
            self = .removed(syspath: syspath)
        default:
            return nil
        }
    }
}

/// Where `HotplugSensors` learns about devices: udev in hrmd, a scripted list in tests.
public protocol HotplugEventSource: Sendable {
    /// The devices present now (each `.added`, then `.initialScanFinished`), then every change
    /// until the stream's consumer stops. Throws when devices cannot be watched at all.
    func events() throws -> AsyncStream<HotplugEvent>
}
