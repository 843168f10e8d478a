// libFuzzer target: a btsnoop capture (H4, HCI UART, Linux monitor) read as `hrmctl replay`
// reads it: records, HCI events, ACL reassembly, ATT and the GATT discovery that finds the
// heart-rate handle.
import Recordings

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBTSnoop(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for options in [BTSnoopOptions(), BTSnoopOptions(measurementHandle: 0x0010)] {
        guard var recording = try? BTSnoopRecording(bytes: bytes, name: "fuzz.btsnoop", options: options) else { continue }
        while recording.next() != nil {}
    }
    return 0
}
