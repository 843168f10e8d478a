import HealthRequests
import SDBus

extension DBusValue {
    /// An anchor as it travels (`t`): the store's number, or an application's opaque token,
    /// whose 64 bits are kept in an Int64 as they are.
    public var anchor: Int64? {
        if case .uint64(let bits) = unwrapped { return Int64(bitPattern: bits) }
        return integer
    }
}
