import Synchronization
import SensorBackend
import SensorFrames

/// Where one link's Heart Rate Measurement notifications go: into the sink once the gate
/// is open, held (each stamped when it arrived) until then. A strap is subscribed while its
/// location and device information are still being read, so that it streams one round trip
/// after its services are known instead of one per read; what it sends meanwhile waits here
/// and follows the read frames, so every sample carries what the reads said.
///
/// Delivery happens under the gate's lock, so the held notifications and those arriving as it
/// opens keep their order.
final class NotificationGate: Sendable {
    private struct State {
        var open = false
        var held: [SensorFrame] = []
    }

    private let state = Mutex(State())
    private let sink: FrameSink
    private let device: SensorID

    init(sink: FrameSink, device: SensorID) {
        self.sink = sink
        self.device = device
    }

    /// One notification, from the bus's loop thread: to the sink, or held while the gate is shut.
    func deliver(_ value: [UInt8]) {
        let frame = SensorFrame(time: .now(), transport: .ble, device: device, kind: .notify, characteristic: .heartRateMeasurement, value: value)
        state.withLock { state in
            if state.open { sink.send(frame) } else { state.held.append(frame) }
        }
    }

    /// Sends what was held, in order, and lets every later notification straight through.
    /// Opening an open gate does nothing.
    func open() {
        state.withLock { state in
            guard !state.open else { return }
            state.open = true
            for frame in state.held { sink.send(frame) }
            state.held = []
        }
    }
}
