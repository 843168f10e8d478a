import BluetoothWire
import SensorFrames
import Timestamps

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
