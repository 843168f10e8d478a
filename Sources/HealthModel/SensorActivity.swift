import Timestamps

/// What one sensor is doing, as the daemon recording it last said: live state kept next to
/// the samples so that any reader of the store (`hrmctl devices`) can show it. The store
/// gives the words no meaning; they come from the recording daemon.
public struct SensorActivity: Codable, Sendable, Hashable {
    /// The device's local identifier (a BLE address, `ant-12345`, `mock-1`), or a backend's
    /// own name while it has found no sensor yet.
    public var identifier: String
    /// `ble`, `ant`, `serial`, `mock`, …
    public var transport: String
    /// One word: waiting, searching, connecting, streaming, backing-off, stopped.
    public var state: String
    /// Why, or when the next attempt is.
    public var detail: String?
    /// When the sensor entered this state.
    public var since: Timestamp
    /// Battery level in percent, when the sensor reported one.
    public var battery: Int?
    /// When the last frame arrived.
    public var lastFrame: Timestamp?
    /// Frames received and frames (or parts of frames) skipped during this run.
    public var frames: Int
    public var skipped: Int
    /// When the daemon last wrote this row.
    public var updatedAt: Timestamp

    public init(
        identifier: String, transport: String, state: String, detail: String? = nil, since: Timestamp,
        battery: Int? = nil, lastFrame: Timestamp? = nil, frames: Int = 0, skipped: Int = 0, updatedAt: Timestamp
    ) {
        self.identifier = identifier
        self.transport = transport
        self.state = state
        self.detail = detail
        self.since = since
        self.battery = battery
        self.lastFrame = lastFrame
        self.frames = frames
        self.skipped = skipped
        self.updatedAt = updatedAt
    }
}
