import SensorBackend
import SensorFrames
import Synchronization
import Testing

@testable import BlueZBackend

@Suite("A session's notification gate")
struct NotificationGateTests {
    @Test("notifications are held while the gate is shut, then sent in order, and straight through once it is open")
    func heldThenInOrder() {
        let sent = Mutex<[SensorFrame]>([])
        let gate = NotificationGate(sink: FrameSink { frame in sent.withLock { $0.append(frame) } }, device: SensorID("AA:BB:CC:DD:EE:01"))
        gate.deliver([0x06, 0x40])
        gate.deliver([0x06, 0x41])
        #expect(sent.withLock { $0 }.isEmpty)
        gate.open()
        gate.deliver([0x06, 0x42])
        gate.open()  // a second opening (the session's end) sends nothing twice
        let frames = sent.withLock { $0 }
        #expect(frames.map(\.value) == [[0x06, 0x40], [0x06, 0x41], [0x06, 0x42]])
        #expect(frames.allSatisfy { $0.kind == .notify && $0.characteristic == .heartRateMeasurement && $0.device.rawValue == "AA:BB:CC:DD:EE:01" })
        #expect(frames[0].time <= frames[2].time, "each is stamped when it arrived")
    }
}
