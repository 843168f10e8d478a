import BluetoothWire
import Timestamps
import ReaderThreads
@preconcurrency import Glibc

/// The client's reading thread: it waits for PDUs, at most until the outstanding request's
/// deadline, and hands each one on: responses to the waiting request, notifications and
/// indications to the stream; the peer's own requests get an MTU exchange or Request Not Supported.
extension ATTClient {
    /// Datagrams read per wake-up before the deadline and the wake-up pipe are looked at again.
    private static let readsPerWakeUp = 64

    func startReading() throws(BluetoothSocketError) {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            let client = Unmanaged<ATTClient>.fromOpaque(context!).takeRetainedValue()
            client.readUntilTheEnd()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<ATTClient>.fromOpaque(context).release()
            throw BluetoothSocketError(call: "pthread_create", errno: created)
        }
        pthread_detach(thread)
    }

    private func readUntilTheEnd() {
        defer { feed.finish() }
        var buffer = [UInt8](repeating: 0, count: maximumPDU)
        var batch: [ATTNotification] = []
        while let timeout = nextWait() {
            let readiness: WakeUpPipe.Readiness
            do {
                readiness = try wakeUp.wait(for: descriptor, timeoutMilliseconds: timeout)
            } catch {
                end(.io(BluetoothSocketError(error)))
                return
            }
            switch readiness {
            case .wokenUp: return
            case .readable: readPending(into: &buffer, notifications: &batch, hungUp: false)
            case .hungUp: readPending(into: &buffer, notifications: &batch, hungUp: true)
            case .timedOut: break
            }
            pass(&batch)
            endIfOverdue()
        }
    }

    /// How long to wait: until the outstanding request's deadline, else one transaction timeout
    /// (so a request sent during the wait is never looked at after its deadline); nil once ended.
    private func nextWait() -> Int32? {
        state.withLock { state in
            guard state.end == nil else { return nil }
            guard let transaction = state.outstanding else { return transactionTimeout.milliseconds }
            let left = ContinuousClock.now.duration(to: transaction.deadline)
            return left <= .zero ? 0 : left.milliseconds + 1
        }
    }

    private func endIfOverdue() {
        let overdue = state.withLock { state in
            state.outstanding.flatMap { ContinuousClock.now >= $0.deadline ? $0.request.opcode : nil }
        }
        if let overdue { end(.timeout(request: overdue)) }
    }

    /// Reads the datagrams waiting (a bounded number), collecting their notifications; end of
    /// file or a reset ends the bearer.
    private func readPending(into buffer: inout [UInt8], notifications: inout [ATTNotification], hungUp: Bool) {
        for _ in 0..<Self.readsPerWakeUp {
            let length = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_TRUNC)) }
            let failure = errno
            if length > 0 {
                let datagram = buffer[..<min(length, buffer.count)]
                guard receive(datagram, length: length, at: .now(), notifications: &notifications) else { return }
                continue
            }
            if length < 0, failure == EINTR { continue }
            if length < 0, failure == EAGAIN || failure == EWOULDBLOCK {
                if hungUp { end(.closed) }  // hung up with nothing left to read
                return
            }
            if length == 0 || failure == ECONNRESET {
                end(.closed)
            } else {
                end(.io(BluetoothSocketError(call: "recv", errno: failure)))
            }
            return
        }
    }

    /// Hands on one datagram of `length` bytes (only the first `bytes.count` were kept when it
    /// is longer than the buffer); false once the bearer has ended.
    private func receive(
        _ bytes: ArraySlice<UInt8>, length: Int, at time: Timestamp, notifications: inout [ATTNotification]
    ) -> Bool {
        let mtu = state.withLock { $0.mtu }
        guard length <= mtu else {
            refuse(opcode: bytes.first, .malformed(what: "ATT PDU", reason: "\(length) bytes, above the ATT_MTU of \(mtu)"))
            return true
        }
        let pdu: ATTPDU
        do {
            pdu = try ATTPDU(decoding: bytes)
        } catch {
            refuse(opcode: bytes.first, error)
            return true
        }
        switch pdu {
        case .handleValueNotification(let handle, let value):
            notifications.append(ATTNotification(handle: handle, value: value, time: time))
        case .handleValueIndication(let handle, let value):
            answer(.handleValueConfirmation)
            notifications.append(ATTNotification(handle: handle, value: value, time: time))
        case .exchangeMTURequest(let peerMTU):
            state.withLock { $0.mtu = settledMTU(peerMTU) }
            answer(.exchangeMTUResponse(mtu: UInt16(maximumPDU)))
        case _ where pdu.answeredRequest != nil:
            settle(with: pdu)
        case _ where pdu.isRequest:
            answer(.errorResponse(request: pdu.opcode, handle: 0, error: .requestNotSupported))
        default:
            discard("a \(ATTOpcodeName.of(pdu.opcode)), which a client does not take")
        }
        return state.withLock { $0.end == nil }
    }

    /// The ATT_MTU an exchange settles on when the smaller of the two sides' is `mtu`: never
    /// below 23, never above what this client reads.
    private func settledMTU(_ mtu: UInt16) -> Int {
        min(max(Int(mtu), Self.defaultMTU), maximumPDU)
    }

    /// Answers a request of the peer's (which may be a GATT client too).
    private func answer(_ response: ATTPDU) {
        if let failure = send(response.encoded) { end(.io(failure)) }
    }

    /// Passes on the notifications read in one wake-up, as one batch.
    private func pass(_ batch: inout [ATTNotification]) {
        guard !batch.isEmpty else { return }
        if case .dropped(let dropped) = feed.yield(batch) {
            discard("\(dropped.count) notifications: \(Self.notificationBuffer) batches wait already", count: dropped.count)
        }
        batch.removeAll(keepingCapacity: true)
    }

    /// Answers the outstanding request with `response`: its value, its Error Response, or the
    /// failure of having been answered by a response to another request.
    private func settle(with response: ATTPDU) {
        let settled = state.withLock { state -> (Transaction, Result<ATTPDU, ATTClientError>)? in
            guard let transaction = state.outstanding else { return nil }
            state.outstanding = nil
            guard response.answeredRequest == transaction.request.opcode else { return (transaction, .failure(.unexpected(response))) }
            switch (transaction.request, response) {
            case (_, .errorResponse(let request, let handle, let error)):
                return (transaction, .failure(.errorResponse(request: request, handle: handle, error: error)))
            case (.exchangeMTURequest(let asked), .exchangeMTUResponse(let offered)):
                state.mtu = settledMTU(min(asked, offered))
            default:
                break
            }
            return (transaction, .success(response))
        }
        guard let (transaction, result) = settled else {
            discard("a \(ATTOpcodeName.of(response.opcode)) with no request outstanding")
            return
        }
        transaction.continuation.resume(returning: result)
    }

    /// A PDU that does not decode or is too long: the outstanding request's failure when it is
    /// that request's response (or an Error Response), else discarded.
    private func refuse(opcode: UInt8?, _ error: BluetoothWireError) {
        let transaction = state.withLock { state -> Transaction? in
            guard let transaction = state.outstanding, let opcode,
                opcode == ATTPDU.Opcode.errorResponse || opcode == transaction.request.opcode &+ 1
            else { return nil }
            state.outstanding = nil
            return transaction
        }
        if let transaction {
            transaction.continuation.resume(returning: .failure(.malformed(error)))
        } else {
            discard(error.description)
        }
    }

    private func discard(_ what: String, count: Int = 1) {
        state.withLock { $0.discarded += count }
        logger.debug("ATT: discarded \(what)")
    }
}
