import BluetoothWire

/// Which advertisers the hci backend may connect and record. Without bluetoothd there is no
/// list of trusted or paired devices: listed addresses (`--sensor ble:ADDRESS`) are always
/// admitted, and `anyStrap` also admits any device advertising the Heart Rate service. With
/// neither, nothing is, so a neighbour's strap is never recorded unless one of these says so.
public struct StrapAdmission: Sendable, Hashable {
    public var listed: Set<BluetoothAddress>
    public var anyStrap: Bool

    public init(listed: some Sequence<BluetoothAddress>, anyStrap: Bool) {
        self.listed = Set(listed)
        self.anyStrap = anyStrap
    }

    /// Whether the advertiser of `report` may be connected and recorded.
    public func admits(_ report: AdvertisingReport) -> Bool {
        listed.contains(report.address) || anyStrap && report.data.offersHeartRate
    }

    /// Whether nothing can ever be admitted (no list, no `anyStrap`).
    public var admitsNothing: Bool { listed.isEmpty && !anyStrap }

    /// What the backend says while nothing can be admitted.
    public static let nothingAdmitted =
        "no strap is admitted: list each one with --sensor ble:AA:BB:CC:DD:EE:FF (sensor = ble:… in the configuration),"
        + " or use --any-strap"
}

/// Where one admitted strap's connection stands, as scanning cares.
enum StrapPhase: Sendable, Hashable {
    /// Waiting to hear it advertise.
    case searching
    /// Its connection is being made (the kernel may be scanning for it itself).
    case connecting
    /// Its link is up.
    case linked
    /// Between a link and the next attempt (backing off).
    case resting
}

/// What the adapter's LE scanning should do.
enum ScanDemand: Sendable, Hashable {
    /// Scan: a wanted strap is missing.
    case scan
    /// Do not scan: every wanted strap is linked (or none is wanted).
    case idle
    /// A connection is being made: leave the radio to it (some controllers cannot scan and
    /// initiate at once, and the kernel scans for the strap itself).
    case holdForConnection

    /// The demand of straps in `phases`: hold while one connects, scan while one is searched
    /// for, and with `anyStrap`, scan until one is linked (BlueZ's rule for discovery).
    init(phases: some Sequence<StrapPhase>, anyStrap: Bool) {
        let phases = Set(phases)
        if phases.contains(.connecting) {
            self = .holdForConnection
        } else if phases.contains(.searching) || anyStrap && !phases.contains(.linked) {
            self = .scan
        } else {
            self = .idle
        }
    }
}
