import ANTDecoding
import Foundation
@preconcurrency import Glibc

/// An ANT USB stick with heart-rate straps in range, on the master side of a pty: it answers
/// the reset with a startup message and every set-up command with RESPONSE_NO_ERROR, and once
/// a channel is opened it gives that channel the next strap not yet on one and broadcasts its
/// pages `hz` times a second, with extended data naming the strap. Each strap beats at a
/// fixed RR interval; its pages cycle through 4 (previous beat time) with the toggle bit
/// flipping every four messages, and now and then pages 2, 3 and 7 describe it.
public final class FakeANTStick: @unchecked Sendable {
    /// One simulated strap.
    public struct Strap: Sendable, Hashable {
        public var deviceNumber: UInt16
        /// Time between beats, 1/1024 s.
        public var rrTicks: UInt16
        public var manufacturerID: UInt8 = 123
        public var serialHigh: UInt16 = 0x0102
        public var hardware: UInt8 = 5
        public var software: UInt8 = 7
        public var model: UInt8 = 9
        public var battery: UInt8 = 88

        public init(deviceNumber: UInt16, rrTicks: UInt16) {
            self.deviceNumber = deviceNumber
            self.rrTicks = rrTicks
        }

        /// The heart rate the strap computes, beats per minute.
        public var heartRate: UInt8 { UInt8((60 * 1024 + Int(rrTicks) / 2) / Int(rrTicks)) }
    }

    private let terminal: PseudoTerminal
    private let straps: [Strap]
    private let hz: Double
    private let garbageEvery: Int?
    private let lock = NSLock()
    private var thread: Thread?
    /// Signalled once when the thread ends.
    private let ended = DispatchSemaphore(value: 0)
    private var stopping = false
    private var _broadcasts = 0
    private var _commands: [ANTMessage] = []

    /// A stick on `terminal` with `straps` in range, each broadcasting `hz` times a second.
    /// With `garbageEvery`, every that many broadcasts a burst of stray bytes and a frame
    /// with a bad checksum go out first (the reader must resynchronise).
    public init(terminal: PseudoTerminal, straps: [Strap], hz: Double = 4, garbageEvery: Int? = nil) {
        self.terminal = terminal
        self.straps = straps
        self.hz = hz
        self.garbageEvery = garbageEvery
    }

    /// Broadcasts sent so far.
    public var broadcasts: Int { lock.withLock { _broadcasts } }
    /// The commands received so far, in order.
    public var commands: [ANTMessage] { lock.withLock { _commands } }

    public func start() {
        let thread = Thread { [self] in
            run()
            ended.signal()
        }
        thread.name = "fake ANT stick"
        self.thread = thread
        thread.start()
    }

    public func stop() {
        lock.withLock { stopping = true }
        guard thread != nil else { return }
        // The thread ends at its next read, bounded by the port's poll; the hang bound only keeps
        // a broken one from holding the test for ever.
        _ = ended.wait(timeout: .now() + .seconds(Int(HangBound.duration.components.seconds)))
        thread = nil
    }

    private struct OpenChannel {
        var channel: UInt8
        var strap: Strap
        var messages = 0
        var nextAt: Double
    }

    private func run() {
        var decoder = ANTFrameDecoder()
        var open: [OpenChannel] = []
        let start = Date()
        while !lock.withLock({ stopping }) {
            let now = Date().timeIntervalSince(start)
            let wait = open.map(\.nextAt).min().map { max(0, $0 - now) } ?? 0.05
            let bytes = terminal.read(waitingUpTo: Int32(min(wait, 0.05) * 1000))
            for message in decoder.feed(bytes) {
                lock.withLock { _commands.append(message) }
                for reply in answer(message, open: &open, now: Date().timeIntervalSince(start)) { terminal.write(reply.encoded()) }
            }
            let time = Date().timeIntervalSince(start)
            for index in open.indices where open[index].nextAt <= time {
                broadcast(&open[index], at: time)
            }
        }
    }

    private func answer(_ command: ANTMessage, open: inout [OpenChannel], now: Double) -> [ANTMessage] {
        let first = command.payload.first ?? 0
        switch command.id {
        case ANTMessageID.reset:
            open.removeAll()
            return [ANTMessage(id: ANTMessageID.startup, payload: [0x20])]
        case ANTMessageID.openChannel:
            // A channel opened again (the backend sent the command twice because the first
            // answer was late) is refused as a real stick refuses it, and hears no second strap.
            if open.contains(where: { $0.channel == first }) {
                return [ChannelResponse(channel: first, messageID: command.id, code: .channelInWrongState).message]
            }
            let taken = Set(open.map(\.strap.deviceNumber))
            if let strap = straps.first(where: { !taken.contains($0.deviceNumber) }) {
                open.append(OpenChannel(channel: first, strap: strap, nextAt: now + 1 / hz))
            }
            return [ChannelResponse(channel: first, messageID: command.id, code: .noError).message]
        case ANTMessageID.closeChannel:
            open.removeAll { $0.channel == first }
            return [
                ChannelResponse(channel: first, messageID: command.id, code: .noError).message,
                ChannelResponse(channel: first, messageID: ANTMessageID.rfEvent, code: .channelClosed).message,
            ]
        case ANTMessageID.requestMessage:
            return []
        default:
            return [ChannelResponse(channel: first, messageID: command.id, code: .noError).message]
        }
    }

    private func broadcast(_ channel: inout OpenChannel, at time: Double) {
        let strap = channel.strap
        let n = channel.messages
        channel.messages += 1
        channel.nextAt += 1 / hz
        // The beat count and time of the last beat before this message.
        let elapsedTicks = Int(Double(n) / hz * 1024)
        let beats = elapsedTicks / Int(strap.rrTicks)
        let beatTime = UInt16(truncatingIfNeeded: beats * Int(strap.rrTicks))
        let previous = beatTime &- strap.rrTicks
        let toggle: UInt8 = (n / 4) % 2 == 1 ? 0x80 : 0
        var data: [UInt8]
        switch n % 16 {
        case 5: data = [2, strap.manufacturerID, UInt8(strap.serialHigh & 0xFF), UInt8(strap.serialHigh >> 8)]
        case 9: data = [3, strap.hardware, strap.software, strap.model]
        case 13: data = [7, strap.battery, 0x80, 0x23]
        default: data = [4, 0xFF, UInt8(previous & 0xFF), UInt8(previous >> 8)]
        }
        data[0] |= toggle
        data += [UInt8(beatTime & 0xFF), UInt8(beatTime >> 8), UInt8(truncatingIfNeeded: beats), strap.heartRate]
        let payload = [channel.channel] + data + [0x80, UInt8(strap.deviceNumber & 0xFF), UInt8(strap.deviceNumber >> 8), 120, 1]
        let count = lock.withLock { () -> Int in
            _broadcasts += 1
            return _broadcasts
        }
        if let garbageEvery, count % garbageEvery == 0 {
            var bad = ANTMessage(id: ANTMessageID.broadcastData, payload: payload).encoded()
            bad[bad.count - 1] ^= 0x5A
            terminal.write([0x00, 0x13, 0xA4, 0xFF] + bad)
        }
        terminal.write(ANTMessage(id: ANTMessageID.broadcastData, payload: payload).encoded())
    }
}
