import BluetoothWire
import HCIBackend
import SensorBackend
import SensorFrames
import Synchronization
import TestSupport
import Testing

/// The frames a link sent, in order, and how often it said it was streaming.
final class SentFrames: Sendable {
    private let frames = Mutex<[SensorFrame]>([])
    private let streamingCalls = Mutex(0)

    func streaming() { streamingCalls.withLock { $0 += 1 } }
    var streamingCallCount: Int { streamingCalls.withLock { $0 } }

    var sink: FrameSink { FrameSink { frame in self.frames.withLock { $0.append(frame) } } }
    var all: [SensorFrame] { frames.withLock { $0 } }

    /// `kind characteristic value` per frame, e.g. `read 2a38 01`, `connected`.
    var summary: [String] {
        all.map { frame in
            [frame.kind.name, frame.characteristic?.description, frame.value.isEmpty ? nil : HexBytes.string(frame.value)]
                .compactMap { $0 }.joined(separator: " ")
        }
    }
}

/// One strap link against a scripted GATT server, run to its end (bounded).
final class LinkRun: Sendable {
    static let device = SensorID("C0:FF:EE:00:00:01")

    let server: ScriptedGATTServer
    let frames = SentFrames()
    let end: StrapLinkEnd

    /// Runs a link over a server with `table`; `timeout` is the client's transaction timeout (by
    /// default the hang bound: only tests of silence wait for it).
    init(
        table: GATTTable, mtu: UInt16? = 247, cues: [ScriptedGATTServer.Cue] = [], timeout: Duration = HangBound.duration,
        whileStreaming: (@Sendable () -> Void)? = nil
    ) async throws {
        server = try ScriptedGATTServer(table: table, mtu: mtu, cues: cues)
        let client = try ATTClient(descriptor: server.clientDescriptor, transactionTimeout: timeout)
        let link = StrapLink(client: client, device: Self.device, sink: frames.sink)
        let frames = frames
        end = try await withinHangBound("the link's end") {
            await link.run {
                frames.streaming()
                whileStreaming?()
            }
        }
    }

    /// The notifications 2a37 as hex.
    var heartRateValues: [String] {
        frames.all.filter { $0.kind == .notify && $0.characteristic == .heartRateMeasurement }.map { HexBytes.string($0.value) }
    }
}

/// The frames a strap with `GATTTable.strapStrings` sends for its reads: 2a38, the strings, 2a19.
func strapReads(battery: String = "57", strings: [(UInt16, String)] = GATTTable.strapStrings) -> [String] {
    ["read 2a38 01"]
        + strings.map { "read \(CharacteristicID(rawValue: $0.0)) \(HexBytes.string(Array($0.1.utf8)))" }
        + ["read 2a19 \(battery)"]
}

/// A notification of `uuid`'s value in `table`.
func notification(_ uuid: BluetoothUUID, in table: GATTTable, _ value: [UInt8]) -> [UInt8] {
    ATTPDU.handleValueNotification(handle: table.valueHandle(of: uuid) ?? 0, value: value).encoded
}
