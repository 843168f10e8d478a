/// Which BLE devices the ble backend may connect and record. Listed addresses
/// (`--sensor ble:ADDRESS`) are always admitted; with no list, only straps the user trusted or
/// paired in BlueZ (`--sensor ble`); `anyStrap` also admits any device offering the Heart Rate
/// service. A neighbour's strap is never recorded unless one of these says so.
public struct StrapAdmission: Sendable, Hashable {
    /// Upper-case addresses; empty means "trusted or paired".
    public var listed: Set<String>
    public var anyStrap: Bool

    public init(listed: some Sequence<String>, anyStrap: Bool) {
        self.listed = Set(listed.map { $0.uppercased() })
        self.anyStrap = anyStrap
    }

    /// Whether `device` may be connected and recorded.
    public func admits(_ device: Device) -> Bool {
        if listed.contains(device.address) { return true }
        if listed.isEmpty, device.trusted || device.paired, device.isHeartRateStrap { return true }
        return anyStrap && device.isHeartRateStrap
    }

    /// The admitted devices in `cache`, by address.
    public func admitted(in cache: BlueZObjectCache) -> [Device] {
        cache.devices.filter(admits)
    }

    /// Whether a wanted strap is still missing, so discovery should run: a listed address
    /// bluetoothd does not know yet, no trusted strap known at all (trusted mode), or — with
    /// `anyStrap` — no admitted strap connected.
    public func isStrapMissing(in cache: BlueZObjectCache) -> Bool {
        let known = Set(cache.devices.map(\.address))
        if !listed.isSubset(of: known) { return true }
        let admitted = admitted(in: cache)
        if listed.isEmpty && admitted.isEmpty { return true }
        if anyStrap && !admitted.contains(where: \.connected) { return true }
        return false
    }
}
