import SensorFrames
import Timestamps

/// Decodes trace event lines into frames, straight from their UTF-8 bytes. It remembers the
/// last device name, so a long recording of one strap does not build the same string for
/// every line.
public struct TraceDecoder {
    private var lastDevice: SensorID?

    public init() {}

    /// The frame the event line `utf8` holds.
    public mutating func decode(utf8 line: UnsafeBufferPointer<UInt8>) throws(TraceError) -> SensorFrame {
        try TraceFields.withFields(of: line) { fields throws(TraceError) in
            guard let fields else { throw .malformedJSON }
            return try decode(fields)
        }
    }

    private mutating func decode(_ fields: TraceFields) throws(TraceError) -> SensorFrame {
        func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
        guard let timeBytes = fields[.t] else { throw .missingKey("t") }
        guard let time = RFC3339.parse(utf8: timeBytes) else { throw .invalidValue(key: "t", value: text(timeBytes)) }
        guard let transportBytes = fields[.transport] else { throw .missingKey("transport") }
        guard let transport = SensorTransport.allCases.first(where: { $0.rawValue.utf8.elementsEqual(transportBytes) }) else {
            throw .invalidValue(key: "transport", value: text(transportBytes))
        }
        guard let deviceBytes = fields[.device] else { throw .missingKey("device") }
        guard !deviceBytes.isEmpty else { throw .invalidValue(key: "device", value: "") }
        let device: SensorID
        if let lastDevice, lastDevice.rawValue.utf8.elementsEqual(deviceBytes) {
            device = lastDevice
        } else {
            device = SensorID(text(deviceBytes))
            lastDevice = device
        }
        guard let kindBytes = fields[.kind] else { throw .missingKey("kind") }
        let kind = Self.kind(kindBytes)
        var characteristic: CharacteristicID?
        if let bytes = fields[.characteristic] {
            guard let parsed = CharacteristicID(hexUTF8: bytes) else { throw .invalidValue(key: "characteristic", value: text(bytes)) }
            characteristic = parsed
        }
        var value: [UInt8] = []
        if let bytes = fields[.value] {
            do { value = try HexBytes.parse(utf8: bytes) } catch { throw .invalidValue(key: "value", value: text(bytes)) }
        } else if kind == .notify || kind == .read {
            throw .missingKey("value")
        }
        return SensorFrame(time: time, transport: transport, device: device, kind: kind, characteristic: characteristic, value: value)
    }

    private static let knownKinds: [FrameKind] = [.notify, .read, .connected, .disconnected]

    private static func kind(_ bytes: UnsafeBufferPointer<UInt8>) -> FrameKind {
        knownKinds.first { $0.name.utf8.elementsEqual(bytes) } ?? FrameKind(name: String(decoding: bytes, as: UTF8.self))
    }
}
