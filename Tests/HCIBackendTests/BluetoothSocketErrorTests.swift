import Glibc
import HCIBackend
import Testing

@Suite struct BluetoothSocketErrorTests {
    @Test func namesTheCallAndTheErrno() {
        let error = BluetoothSocketError(call: "socket(AF_BLUETOOTH)", errno: EAFNOSUPPORT)
        #expect(error.description == "socket(AF_BLUETOOTH): Address family not supported by protocol")
    }
}
