import BluetoothWire
import ByteSources
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

/// One pass over a capture: records followed into links, links into entries. The first pass
/// (no foresight) hands out no frame and learns each link's `LinkForesight`, by the order the
/// links appear; the second delivers with what the first learned.
struct CaptureWalk {
    private var reader: BTSnoopReader
    private let options: BTSnoopOptions
    /// What the first pass learned, by link in order of appearance; nil in the first pass.
    private let foresight: [CapturedLink.LinkForesight]?
    /// What this pass learned (the first pass's product).
    private(set) var learned: [CapturedLink.LinkForesight] = []
    private var follower = HCILinkFollower()
    /// The open links, with their number in order of appearance.
    private var links: [LinkID: (number: Int, link: CapturedLink)] = [:]
    private var linksOpened = 0
    /// Entries ready to be returned, from `nextReady` on.
    private var ready: [RecordingEntry] = []
    private var nextReady = 0
    private var ended = false
    private var cutPackets = 0
    private var drops: UInt32 = 0
    private var measurements = 0

    init(reader: BTSnoopReader, options: BTSnoopOptions, foresight: [CapturedLink.LinkForesight]?) {
        self.reader = reader
        self.options = options
        self.foresight = foresight
    }

    var bytesRead: Int { reader.offset }
    var datalink: BTSnoopDatalink { reader.datalink }

    mutating func next() -> RecordingEntry? {
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
            open(id, device: SensorID(complete.peer.description), announced: true)
            links[id]!.link.connected(at: time, record: record.number, into: &ready)
        case .disconnected(let id, _):
            close(id, disconnection: (time, record.number))
        case .att(let id, let pdu, let sender):
            if links[id] == nil { open(id, device: id.unannouncedDevice, announced: false) }
            links[id]!.link.take(pdu, from: sender, at: time, record: record.number, into: &ready)
        }
    }

    private mutating func open(_ id: LinkID, device: SensorID, announced: Bool) {
        let number = linksOpened
        linksOpened += 1
        let pass: CapturedLink.Pass = foresight.map { .delivering(number < $0.count ? $0[number] : .init()) } ?? .learning
        let link = CapturedLink(id: id, device: device, announced: announced, measurementHandle: options.measurementHandle, pass: pass)
        link.opened(into: &ready)
        links[id] = (number, link)
    }

    private mutating func close(_ id: LinkID, disconnection: (time: Timestamp, record: Int)?) {
        guard let (number, open) = links.removeValue(forKey: id) else { return }
        var link = open
        link.close(disconnection: disconnection, into: &ready)
        measurements += link.measurementCount
        if foresight == nil {
            if learned.count <= number { learned += Array(repeating: .init(), count: number + 1 - learned.count) }
            learned[number] = link.foresight
        }
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
