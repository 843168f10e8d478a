import BluetoothWire
import ByteSources
import SensorFrames

/// A btsnoop capture of the Bluetooth host interface as a recording (datalinks 1001, 1002 as
/// Android writes `btsnoop_hci.log`, and 2001 as `btmon -w` writes): the LE links are followed
/// from their connection complete events, ACL packets are put back together into L2CAP frames,
/// the ATT handles of 0x2A37, 0x2A38, 0x2A19 and the Device Information strings are learned
/// from the discovery the capture holds, and each strap's session becomes frames (transport
/// `ble`, device the peer's address) at the capture's times, as if received live.
///
/// When a capture holds no discovery of a link (it began later, or the host had the strap's
/// attributes cached), the Heart Rate Measurement handle is the one `measurementHandle` names,
/// else the one handle whose notifications all decode as heart-rate measurements, which a
/// notice says. A link open before the capture began has no known peer address: its device
/// is named `hci-conn-0x0040` (`hci1-conn-0x0040` on controller 1 of a monitor capture), which
/// a notice says too. Records that cannot be read or followed are bad records, by number.
///
/// The capture is read in two passes, in bounded memory whatever its size: the first learns
/// what each link shows by its end (whether it carries heart rate, what its undiscovered
/// handles are), the second hands out each frame as its record comes. `bytesRead` follows
/// the second.
public struct BTSnoopRecording: Sequence, RecordingReader {
    /// How to read a capture.
    public typealias Options = BTSnoopOptions

    private var walk: CaptureWalk

    /// Reads the capture in `source`; `name` stands for it in messages.
    public init(source: ByteSource, name: String, options: Options = Options()) throws(RecordingError) {
        let reader: BTSnoopReader
        do {
            reader = try BTSnoopReader(source)
        } catch {
            throw .damaged(path: name, reason: error.description)
        }
        var learning = CaptureWalk(reader: reader, options: options, foresight: nil)
        while learning.next() != nil {}
        walk = CaptureWalk(reader: reader, options: options, foresight: learning.learned)
    }

    /// Bytes of the capture read so far (for progress).
    public var bytesRead: Int { walk.bytesRead }

    /// The datalink of the capture.
    public var datalink: BTSnoopDatalink { walk.datalink }

    public mutating func next() -> RecordingEntry? { walk.next() }
}

extension BTSnoopRecording {
    /// Reads the capture at `path`, a window at a time.
    public init(path: String, options: Options = Options()) throws(RecordingError) {
        try self.init(source: FileBytes.open(path: path), name: path, options: options)
    }

    /// Reads the capture open as `descriptor` (its offset does not move, and the caller still
    /// owns and closes it). `name` stands for the file in messages.
    public init(descriptor: Int32, name: String, options: Options = Options()) throws(RecordingError) {
        try self.init(source: FileBytes.open(descriptor: descriptor, name: name), name: name, options: options)
    }

    /// Reads the capture held in `bytes`; `name` stands for it in messages.
    public init(bytes: [UInt8], name: String, options: Options = Options()) throws(RecordingError) {
        try self.init(source: ByteSource(bytes), name: name, options: options)
    }
}

/// How to read a capture.
public struct BTSnoopOptions: Sendable, Hashable {
    /// The ATT handle of the Heart Rate Measurement characteristic, for captures without
    /// its discovery; it applies to every link and wins over discovery.
    public var measurementHandle: UInt16?

    public init(measurementHandle: UInt16? = nil) {
        self.measurementHandle = measurementHandle
    }
}

extension LinkID {
    /// The device a capture's link is stored under when the capture does not give its peer's
    /// address: `hci-conn-0x0040` (`hci1-conn-0x0040` on controller 1 of a monitor capture).
    public var unannouncedDevice: SensorID {
        let connection = "conn-" + hexCode(handle)
        return SensorID(controller.map { "hci\($0)-\(connection)" } ?? "hci-\(connection)")
    }
}
