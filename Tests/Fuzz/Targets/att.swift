// libFuzzer target: single ATT PDUs, HCI events and advertising data as the hci backend
// receives them from the kernel; a GATT observer follows a run of PDUs from both sides.
import BluetoothWire

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzATT(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch data[0] % 4 {
    case 0: _ = try? HCIEvent(decoding: bytes)
    case 1: _ = try? AdvertisingData(decoding: bytes)
    default:
        // Length-prefixed PDUs, alternately from each side of the link.
        var observer = GATTObserver()
        var offset = 0
        var side = LinkSide.local
        while offset < bytes.count {
            let length = Int(bytes[offset])
            let end = min(bytes.count, offset + 1 + length)
            if let pdu = try? ATTPDU(decoding: bytes[(offset + 1)..<end]) { _ = observer.observe(pdu, from: side) }
            side = side == .local ? .remote : .local
            offset = end
        }
    }
    return 0
}
