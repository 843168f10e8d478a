import BluetoothWire
import HCIBackend
import SensorFrames
import TestSupport
import Testing

/// A strap's whole link over ATT: discovery, reads, subscription, streaming, and every way it ends.
@Suite(.timeLimit(.minutes(HangBound.suiteMinutes))) struct StrapLinkTests {
    let strap = GATTTable(GATTTable.strapServices())

    /// On the 2a37 CCCD write: answer, then send `values` as 2a37 notifications (and a battery
    /// level), then hang up.
    private func streams(_ values: [[UInt8]], battery: UInt8? = nil, in table: GATTTable) -> ScriptedGATTServer.Cue {
        var steps: [ScriptedGATTServer.Cue.Step] = [.answer]
        steps += values.map { .send(notification(.heartRateMeasurement, in: table, $0)) }
        if let battery { steps.append(.send(notification(.batteryLevel, in: table, [battery]))) }
        steps.append(.hangUp)
        return ScriptedGATTServer.Cue(ATTPDU.Opcode.writeRequest, handle: table.cccdHandle(of: .heartRateMeasurement), steps)
    }

    @Test func discoversReadsSubscribesAndStreamsAsTheBlueZBackendDoes() async throws {
        let run = try await LinkRun(table: strap, cues: [streams([[0x16, 72], [0x16, 73]], battery: 86, in: strap)])
        #expect(run.end == .ended(reason: "the strap closed the link", streamed: true))
        #expect(run.frames.summary == ["connected"] + strapReads() + ["notify 2a37 1648", "notify 2a37 1649", "read 2a19 56", "disconnected"])
        #expect(run.frames.all.allSatisfy { $0.transport == .ble && $0.device == LinkRun.device })
        #expect(run.frames.streamingCallCount == 1)
        let table = run.server.table
        for uuid in [BluetoothUUID.heartRateMeasurement, .batteryLevel] {
            #expect(table.attribute(try #require(table.cccdHandle(of: uuid)))?.value == [0x01, 0x00], "notifications of \(uuid) on")
        }
        // At ATT_MTU 247 a response lists every service of one UUID size: [1800, 180d], [the 128-bit
        // one], [180a, 180f], then Attribute Not Found.
        let serviceRequests = run.server.received.filter { $0.opcode == ATTPDU.Opcode.readByGroupTypeRequest }
        #expect(serviceRequests.count == 4)
        // The five 0x180A declarations come in one response; the next request finds nothing.
        let deviceInformation = try #require(table.attributes.first { $0.type == .primaryService && $0.value == [0x0A, 0x18] }).handle
        let characteristicRequests = run.server.received.filter { request in
            guard case .readByTypeRequest(let start, _, _) = request else { return false }
            return start >= deviceInformation && start <= deviceInformation + 10
        }
        #expect(characteristicRequests.count == 2)
    }

    @Test func atTheDefaultMTUResponsesSplitAndLongValuesAreReadWhole() async throws {
        let long = "Polar Electro Oy, Kempele, Finland (manufacturer)"
        let strings = [(UInt16(0x2A29), long)] + GATTTable.strapStrings.dropFirst()
        let table = GATTTable(GATTTable.strapServices(strings: strings))
        let run = try await LinkRun(table: table, mtu: nil, cues: [streams([[0x00, 61]], in: table)])
        #expect(run.end == .ended(reason: "the strap closed the link", streamed: true))
        #expect(run.frames.summary == ["connected"] + strapReads(strings: strings) + ["notify 2a37 003d", "disconnected"])
        let received = run.server.received
        // 0x180A declares five strings; at ATT_MTU 23 a response lists three 7-byte declarations:
        // from the service start, after the third declaration's value, then Attribute Not Found.
        let deviceInformation = try #require(table.attributes.first { $0.type == .primaryService && $0.value == [0x0A, 0x18] }).handle
        let starts = received.compactMap { request -> UInt16? in
            guard case .readByTypeRequest(let start, _, _) = request, (deviceInformation...deviceInformation + 10).contains(start)
            else { return nil }
            return start
        }
        #expect(starts == [deviceInformation, deviceInformation + 6, deviceInformation + 10])
        #expect(received.filter { if case .other(0x0C, _) = $0 { true } else { false } }.count == 2, "two Read Blobs for 49 bytes at 22 a part")
    }

    @Test func aNotificationBeforeDiscoveryEndsIsNotLost() async throws {
        let early = ScriptedGATTServer.Cue(
            ATTPDU.Opcode.readByGroupTypeRequest, [.answer, .send(notification(.heartRateMeasurement, in: strap, [0x00, 70]))])
        let run = try await LinkRun(table: strap, cues: [early, streams([[0x00, 71]], in: strap)])
        #expect(run.heartRateValues == ["0046", "0047"])
        #expect(run.end == .ended(reason: "the strap closed the link", streamed: true))
    }

    @Test func aReadThatNeedsPairingEndsTheLink() async throws {
        let table = GATTTable(GATTTable.strapServices(
            location: GATTTable.Characteristic(.bodySensorLocation, .read, [0x01], refusal: .insufficientAuthentication)))
        let run = try await LinkRun(table: table)
        guard case .ended(let reason, streamed: false) = run.end else {
            Issue.record("ended with \(String(describing: run.end))")
            return
        }
        #expect(reason.contains("the strap requires pairing (Insufficient Authentication (0x05) reading 2a38)"))
        #expect(reason.contains("pair the strap once with bluetoothctl, or use the ble backend"))
        #expect(run.frames.summary == ["connected", "disconnected"])
        #expect(run.frames.streamingCallCount == 0)
    }

    @Test func aCCCDWriteThatNeedsEncryptionEndsTheLink() async throws {
        let table = GATTTable(GATTTable.strapServices(
            measurement: GATTTable.Characteristic(.heartRateMeasurement, .notify, cccdRefusal: .insufficientEncryption)))
        let run = try await LinkRun(table: table)
        guard case .ended(let reason, streamed: false) = run.end else {
            Issue.record("ended with \(String(describing: run.end))")
            return
        }
        #expect(reason.hasPrefix("the strap requires pairing (Insufficient Encryption (0x0f) enabling 2a37 notifications)"))
        #expect(run.frames.summary == ["connected"] + strapReads() + ["disconnected"])
    }

    @Test func aRefusedReadIsSkipped() async throws {
        let hardware = try #require(strap.valueHandle(of: BluetoothUUID(0x2A27)))
        let refuse = ScriptedGATTServer.Cue(ATTPDU.Opcode.readRequest, handle: hardware, [.refuse(.readNotPermitted)])
        let run = try await LinkRun(table: strap, cues: [refuse, streams([[0x00, 62]], in: strap)])
        #expect(run.frames.summary == ["connected"] + strapReads().filter { !$0.hasPrefix("read 2a27") } + ["notify 2a37 003e", "disconnected"])
    }

    @Test func indicationsAreUsedWhenTheMeasurementOnlyIndicates() async throws {
        let table = GATTTable(GATTTable.strapServices(measurement: GATTTable.Characteristic(.heartRateMeasurement, .indicate)))
        let indication = ATTPDU.handleValueIndication(handle: try #require(table.valueHandle(of: .heartRateMeasurement)), value: [0x00, 63])
        let cue = ScriptedGATTServer.Cue(
            ATTPDU.Opcode.writeRequest, handle: table.cccdHandle(of: .heartRateMeasurement),
            [.answer, .send(indication.encoded)])
        let hangUpWhenConfirmed = ScriptedGATTServer.Cue(ATTPDU.Opcode.handleValueConfirmation, [.hangUp])
        let run = try await LinkRun(table: table, cues: [cue, hangUpWhenConfirmed])
        #expect(run.heartRateValues == ["003f"])
        #expect(run.server.table.attribute(try #require(table.cccdHandle(of: .heartRateMeasurement)))?.value == [0x02, 0x00])
        #expect(run.server.received.contains(.handleValueConfirmation))
    }

    @Test func aSilentStrapTimesOutDuringDiscovery() async throws {
        let silence = ScriptedGATTServer.Cue(ATTPDU.Opcode.readByTypeRequest, [])
        let run = try await LinkRun(table: strap, cues: [silence], timeout: .milliseconds(200))
        #expect(run.end == .ended(
            reason: "no response to the Read By Type Request (0x08) within the transaction timeout (service discovery)", streamed: false))
        #expect(run.frames.summary.isEmpty)
    }

    @Test func aStrapThatClosesDuringDiscoveryEndsTheLink() async throws {
        let close = ScriptedGATTServer.Cue(ATTPDU.Opcode.findInformationRequest, [.hangUp])
        let run = try await LinkRun(table: strap, cues: [close])
        #expect(run.end == .ended(reason: "the strap closed the link (finding the descriptors of 2a19)", streamed: false))
        #expect(run.frames.summary == ["connected"] + strapReads() + ["disconnected"])
    }

    @Test func aStrapWithoutHeartRateMeasurementEndsTheLink() async throws {
        var services = GATTTable.strapServices()
        services[1].characteristics.removeFirst()
        let run = try await LinkRun(table: GATTTable(services))
        #expect(run.end == .ended(reason: "the strap has no Heart Rate Measurement characteristic", streamed: false))
        #expect(run.frames.summary == ["connected"] + strapReads() + ["disconnected"])
    }

    @Test func cancellingEndsTheLinkAtOnce() async throws {
        let stayOpen = ScriptedGATTServer.Cue(
            ATTPDU.Opcode.writeRequest, handle: strap.cccdHandle(of: .heartRateMeasurement),
            [.answer, .send(notification(.heartRateMeasurement, in: strap, [0x00, 64]))])
        let table = strap
        let outcome = try await withinHangBound("the cancelled link's end") {
            await withTaskGroup(of: StrapLinkEnd?.self) { group in
                let (streaming, started) = AsyncStream<Void>.makeStream()
                group.addTask {
                    let run = try? await LinkRun(table: table, cues: [stayOpen]) { started.yield() }
                    started.finish()
                    return run?.end
                }
                for await _ in streaming { break }
                group.cancelAll()
                return await group.next() ?? nil
            }
        }
        #expect(outcome == .cancelled)
    }
}
