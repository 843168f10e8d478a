import BluetoothWire
import SensorDecoding
import Timestamps

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
public struct BTSnoopRecording: Sequence, IteratorProtocol {
    /// How to read a capture.
    public struct Options: Sendable, Hashable {
        /// The ATT handle of the Heart Rate Measurement characteristic, for captures without
        /// its discovery; it applies to every link and wins over discovery.
        public var measurementHandle: UInt16?

        public init(measurementHandle: UInt16? = nil) {
            self.measurementHandle = measurementHandle
        }
    }

    private var reader: BTSnoopReader
    private let options: Options
    private var follower = HCILinkFollower()
    private var links: [LinkID: CapturedLink] = [:]
    /// Entries ready to be returned, from `nextReady` on.
    private var ready: [RecordingEntry] = []
    private var nextReady = 0
    private var ended = false
    private var cutPackets = 0
    private var drops: UInt32 = 0
    private var measurements = 0

    /// Reads the capture at `path`.
    public init(path: String, options: Options = Options()) throws(RecordingError) {
        try self.init(bytes: RecordingFile.bytes(ofPath: path), name: path, options: options)
    }

    /// Reads the capture open as `descriptor`, whole, from offset 0 (its offset does not move,
    /// and the caller still owns and closes it). `name` stands for the file in messages.
    public init(descriptor: Int32, name: String, options: Options = Options()) throws(RecordingError) {
        try self.init(bytes: RecordingFile.bytes(ofDescriptor: descriptor, name: name), name: name, options: options)
    }

    /// Reads the capture in `bytes`; `name` stands for it in messages.
    public init(bytes: [UInt8], name: String, options: Options = Options()) throws(RecordingError) {
        do {
            reader = try BTSnoopReader(bytes)
        } catch {
            throw .damaged(path: name, reason: error.description)
        }
        self.options = options
    }

    /// Bytes of the capture read so far (for progress).
    public var bytesRead: Int { reader.offset }

    /// The datalink of the capture.
    public var datalink: BTSnoopDatalink { reader.datalink }

    public mutating func next() -> RecordingEntry? {
        while nextReady == ready.count {
            ready.removeAll(keepingCapacity: true)
            nextReady = 0
            if let item = reader.next() {
                take(item)
            } else if !ended {
                ended = true
                finish()
            } else {
                return nil
            }
        }
        defer { nextReady += 1 }
        return ready[nextReady]
    }

    /// The device name of a link whose peer address the capture does not give.
    public static func device(ofUnannounced link: LinkID) -> SensorID {
        let handle = "conn-" + hexCode(link.handle)
        return SensorID(link.controller.map { "hci\($0)-\(handle)" } ?? "hci-\(handle)")
    }

    private mutating func take(_ item: BTSnoopItem) {
        let record: BTSnoopRecord
        switch item {
        case .damaged(let damage):
            ready.append(.badRecord(record: damage.record, reason: damage.problem.description))
            return
        case .record(let read):
            record = read
        }
        drops = Swift.max(drops, record.cumulativeDrops)
        let (event, problem) = follower.follow(record.packet, controller: record.controller, bytesLeftOut: record.bytesLeftOut)
        switch problem {
        case .cutACLPacket?: cutPackets += 1
        case let problem?: ready.append(.badRecord(record: record.number, reason: problem.description))
        case nil: break
        }
        guard let event else { return }
        let time = Timestamp(microsecondsSinceEpoch: record.unixMicroseconds)
        switch event {
        case .connected(let id, let complete):
            close(id, disconnection: nil)
            var link = CapturedLink(
                id: id, device: SensorID(complete.peer.description), announced: true, measurementHandle: options.measurementHandle)
            link.connected(at: time, record: record.number, into: &ready)
            links[id] = link
        case .disconnected(let id, _):
            close(id, disconnection: (time, record.number))
        case .att(let id, let pdu, let sender):
            links[id, default: CapturedLink(
                id: id, device: Self.device(ofUnannounced: id), announced: false, measurementHandle: options.measurementHandle)
            ].take(pdu, from: sender, at: time, record: record.number, into: &ready)
        }
    }

    private mutating func close(_ id: LinkID, disconnection: (time: Timestamp, record: Int)?) {
        guard var link = links.removeValue(forKey: id) else { return }
        link.close(disconnection: disconnection, into: &ready)
        measurements += link.measurementCount
    }

    /// The capture ended: settles the links still open and says what the capture lacked.
    private mutating func finish() {
        for id in links.keys.sorted(by: { ($0.controller ?? 0, $0.handle) < ($1.controller ?? 0, $1.handle) }) {
            close(id, disconnection: nil)
        }
        if cutPackets > 0 {
            ready.append(.notice("\(cutPackets) ACL packets were stored cut short by the capturing tool; the ATT PDUs they carried are lost"))
        }
        if drops > 0 { ready.append(.notice("the capturing tool lost \(drops) packets (cumulative drops)")) }
        if measurements == 0 { ready.append(.notice("the capture holds no heart-rate measurements")) }
    }
}
