import ANTDecoding
import SensorFrames
import Testing
import Timestamps

@testable import ANTBackend

@Suite("ANT stick controller")
struct ANTStickControllerTests {
    let t0 = Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000)
    let stick = SensorID("ant:/dev/ttyUSB0")

    func writes(_ actions: [ANTStickController.Action]) -> [ANTMessage] {
        actions.compactMap { if case .write(let message) = $0 { message } else { nil } }
    }

    func ok(_ command: ANTMessage) -> ANTMessage {
        ChannelResponse(channel: command.payload.first ?? 0, messageID: command.id, code: .noError).message
    }

    func broadcast(channel: UInt8, device: UInt16, count: UInt8 = 0) -> ANTMessage {
        ANTMessage(
            id: ANTMessageID.broadcastData,
            payload: [channel, 4, 0xFF, 0, 0, 0, 0, count, 70, 0x80, UInt8(device & 0xFF), UInt8(device >> 8), 120, 1])
    }

    /// Answers every command until the channel is open; returns all commands written.
    func answerUntilIdle(_ controller: inout ANTStickController, first: [ANTMessage]) throws -> [ANTMessage] {
        var all = first
        var next = first
        while let command = next.last {
            let reply = command.id == ANTMessageID.reset ? ANTMessage(id: ANTMessageID.startup, payload: [0x20]) : ok(command)
            next = writes(try controller.receive(reply, at: t0))
            all += next
        }
        return all
    }

    @Test("reset, then the whole receive-channel set-up on channel 0, one command at a time")
    func setUp() throws {
        var controller = ANTStickController(stickID: stick)
        let first = writes(controller.start(at: t0))
        #expect(first == [.reset])
        let commands = try answerUntilIdle(&controller, first: first)
        #expect(commands.map(\.id) == [0x4A, 0x46, 0x42, 0x51, 0x43, 0x45, 0x66, 0x4B])
        #expect(commands[1] == .setNetworkKey(ANTChannelSetup.antPlusNetworkKey))
        #expect(controller.channels[0] == .searching(lost: nil))
    }

    @Test("a found strap streams, and the next channel opens with it excluded")
    func pairing() throws {
        var controller = ANTStickController(stickID: stick)
        _ = try answerUntilIdle(&controller, first: writes(controller.start(at: t0)))
        let actions = try controller.receive(broadcast(channel: 0, device: 4242), at: t0)
        let frames = actions.compactMap { if case .frame(let frame) = $0 { frame } else { nil } }
        #expect(frames.map(\.kind) == [.connected, .notify])
        #expect(frames.allSatisfy { $0.device == "ant-4242" && $0.transport == .ant })
        #expect(frames[1].value == broadcast(channel: 0, device: 4242).encoded())
        #expect(actions.contains(.status("ant-4242", .streaming)))
        #expect(controller.channels[0] == .tracking(deviceNumber: 4242))
        let next = try answerUntilIdle(&controller, first: writes(actions))
        #expect(next.map(\.id) == [0x42, 0x51, 0x43, 0x45, 0x59, 0x5A, 0x4B])
        #expect(next[4].payload == [1, 0x92, 0x10, 120, 0, 0])
        #expect(controller.channels[1] == .searching(lost: nil))
    }

    @Test("a strap another channel tracks is not taken twice: the channel closes and searches again")
    func duplicate() throws {
        var controller = ANTStickController(stickID: stick)
        _ = try answerUntilIdle(&controller, first: writes(controller.start(at: t0)))
        _ = try answerUntilIdle(&controller, first: writes(try controller.receive(broadcast(channel: 0, device: 7), at: t0)))
        let actions = try controller.receive(broadcast(channel: 1, device: 7), at: t0)
        #expect(!actions.contains { if case .frame = $0 { true } else { false } })
        #expect(writes(actions) == [.closeChannel(1)])
        _ = try controller.receive(ok(.closeChannel(1)), at: t0)
        let reopen = writes(try controller.receive(ChannelResponse(channel: 1, messageID: 1, code: .channelClosed).message, at: t0))
        let all = try answerUntilIdle(&controller, first: reopen)
        #expect(all.map(\.id) == [0x51, 0x59, 0x5A, 0x4B])
        #expect(controller.channels[1] == .searching(lost: nil))
    }

    @Test("a strap gone quiet is disconnected and searched for; a search timeout sets the channel up afresh")
    func goneQuiet() throws {
        var controller = ANTStickController(stickID: stick, settings: .init(channels: 1))
        _ = try answerUntilIdle(&controller, first: writes(controller.start(at: t0)))
        _ = try controller.receive(broadcast(channel: 0, device: 9), at: t0)
        let lost = try controller.receive(ChannelResponse(channel: 0, messageID: 1, code: .rxFailGoToSearch).message, at: t0)
        #expect(lost.contains { if case .frame(let frame) = $0 { frame.kind == .disconnected && frame.device == "ant-9" } else { false } })
        #expect(controller.channels[0] == .searching(lost: 9))
        // Heard again: the same strap streams on.
        let back = try controller.receive(broadcast(channel: 0, device: 9, count: 1), at: t0)
        #expect(back.contains { if case .frame(let frame) = $0 { frame.kind == .connected } else { false } })
        _ = try controller.receive(ChannelResponse(channel: 0, messageID: 1, code: .rxFailGoToSearch).message, at: t0)
        let closed = try controller.receive(ChannelResponse(channel: 0, messageID: 1, code: .channelClosed).message, at: t0)
        #expect(writes(closed).first?.id == 0x51)
        #expect(closed.contains(.status("ant-9", .stopped(reason: "not heard for a whole search"))))
    }

    @Test("an unanswered command is sent again, and the session fails after the last try")
    func timeouts() throws {
        var controller = ANTStickController(stickID: stick, settings: .init(responseTimeout: 1, attempts: 3))
        #expect(writes(controller.start(at: t0)) == [.reset])
        #expect(try controller.tick(at: t0.advanced(bySeconds: 0.5)).isEmpty)
        #expect(writes(try controller.tick(at: t0.advanced(bySeconds: 1))) == [.reset])
        #expect(writes(try controller.tick(at: t0.advanced(bySeconds: 2))) == [.reset])
        #expect(throws: ANTStickController.Failure.noAnswer(command: .reset, attempts: 3)) {
            _ = try controller.tick(at: t0.advanced(bySeconds: 3))
        }
    }

    @Test("a command the stick refuses fails the session with the stick's code")
    func refused() throws {
        var controller = ANTStickController(stickID: stick)
        _ = controller.start(at: t0)
        let key = writes(try controller.receive(ANTMessage(id: ANTMessageID.startup, payload: [0]), at: t0))
        #expect(key.first?.id == ANTMessageID.networkKey)
        let refusal = ChannelResponse(channel: 0, messageID: ANTMessageID.networkKey, code: .init(rawValue: 0x28)).message
        #expect(throws: ANTStickController.Failure.self) { _ = try controller.receive(refusal, at: t0) }
    }
}
