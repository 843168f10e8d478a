import BluetoothWire
import Logging
import SensorBackend
import SensorFrames
import Synchronization

/// One adapter from opening to closing: follows the listed straps (and, with `anyStrap`, each
/// heart-rate strap as it is heard), keeps scanning in line with what is missing, answers the
/// straps' connection-parameter requests, and runs one ``StrapConnection`` per strap in a
/// task group, so a slow or broken strap never holds up the others.
struct AdapterLifetime: Sendable {
    let adapter: OpenAdapter
    let backendName: String
    let parts: BackendParts

    private var controller: any ControllerChannel { adapter.controller }
    private var adapterName: String { adapter.info.name }
    private var logger: Logger { parts.logger }

    /// Runs until the controller closes, or the task is cancelled (then nil); returns why the
    /// adapter is gone.
    func run() async -> HCIProblem? {
        let roster = StrapRoster(admission: parts.settings.admission)
        let ending = LifetimeEnding(controller: controller, adapter: adapter.info.index)
        let scan = ScanSwitch(controller: controller, roster: roster, adapter: adapterName, logger: logger) { ending.fail($0) }
        let context = ConnectionContext(adapter: adapter.info, roster: roster, scan: scan, parts: parts)
        await withDiscardingTaskGroup { group in
            for (address, sightings) in roster.followListed() {
                group.addTask { await StrapConnection(address: address, sightings: sightings, context: context).run() }
            }
            group.addTask {
                // Scanning again after a refusal, or after the kernel turned it off unseen.
                repeat { await scan.update() } while (try? await Task.sleep(for: .seconds(10))) != nil
            }
            if roster.isEmpty {
                let idle: SensorState = roster.admission.admitsNothing ? .waiting(reason: StrapAdmission.nothingAdmitted) : .searching
                parts.board.report(SensorID(backendName), idle)
            }
            for await event in controller.events {
                handle(event, context: context, ending: ending, group: &group)
            }
            group.cancelAll()
        }
        await scan.stopNow()
        controller.close()
        roster.end()
        if Task.isCancelled { return nil }
        return ending.problem ?? controller.failure.map(ending.problem(of:)) ?? .adapterGone(adapter: adapterName)
    }

    private func handle(_ event: HCIEvent, context: ConnectionContext, ending: LifetimeEnding, group: inout DiscardingTaskGroup) {
        switch event {
        case .leAdvertisingReports(let reports):
            for report in reports {
                switch context.roster.heard(report) {
                case .admitted(let address, let sightings):
                    logger.info("\(address): a heart-rate strap\(Self.named(report.data.localName)), admitted by --any-strap")
                    group.addTask { await StrapConnection(address: address, sightings: sightings, context: context).run() }
                case .refused(let address, let name):
                    logger.info("\(address): a heart-rate strap\(Self.named(name)) that is not admitted (--sensor ble:\(address) records it)")
                case .followed, .ignored:
                    break
                }
            }
        case .leRemoteConnectionParameterRequest(let handle, let requested):
            group.addTask { await answer(handle, requested, roster: context.roster, ending: ending) }
        case .leConnectionComplete(let complete):
            logger.debug("\(complete.peer): LE link \(complete.handle) \(complete.status == 0 ? "up" : "failed: \(HCIStatus.describe(complete.status))")")
            // A link that came up after its strap's attempt gave up (the kernel's connect
            // timed out as the controller completed it) is used by no one and kept by the
            // kernel; the strap, connected, stops advertising and is never heard again. It is
            // ended, so the strap advertises and the next attempt finds it.
            if complete.status == 0, let phase = context.roster.phase(of: complete.peer), phase == .searching || phase == .resting {
                logger.info("\(complete.peer): an LE link came up after the attempt gave up; disconnecting it")
                let controller = controller, handle = complete.handle
                group.addTask { _ = try? await controller.execute(.disconnect(handle: handle)) }
            }
        case .disconnectionComplete(_, let handle, let reason):
            let whose = context.roster.address(of: handle).map(\.description) ?? adapterName
            logger.debug("\(whose): LE link \(handle) closed: \(HCIStatus.describe(reason))")
        case .commandComplete(let opcode, _) where ScanSwitch.opcodes.contains(opcode),
            .commandStatus(_, let opcode) where ScanSwitch.opcodes.contains(opcode):
            let scan = context.scan
            group.addTask {
                await scan.forget()
                await scan.update()
            }
        default:
            break
        }
    }

    /// Answers a strap's LE Remote Connection Parameter Request: whatever the spec allows is
    /// accepted as asked (a strap refused drops the link about 30 s later). The kernel
    /// answers such requests too; when it answered first, the controller refuses hrmd's
    /// answer (Unknown Connection Identifier or Command Disallowed), which is harmless.
    private func answer(_ handle: UInt16, _ requested: ConnectionParameters, roster: StrapRoster, ending: LifetimeEnding) async {
        let whose = roster.address(of: handle).map(\.description) ?? "LE link \(handle)"
        let verdict = requested.isValid ? "accepted" : "refused (outside what the spec allows)"
        do {
            _ = try await controller.execute(ConnectionParameterAnswer.command(answering: handle, requested: requested))
            logger.debug("\(whose) asked for \(requested): \(verdict)")
        } catch {
            if case .io(let failure) = error {
                ending.fail(failure)
            } else {
                logger.debug("\(whose) asked for \(requested); the controller did not take hrmd's answer (\(error)): the kernel answered first")
            }
        }
    }

    private static func named(_ name: String?) -> String {
        name.map { " (\($0))" } ?? ""
    }
}

/// Why an adapter lifetime ended early: the socket refused a command (EPERM, ENETDOWN, …).
/// The first failure wins and closes the controller, which ends the lifetime's event loop.
final class LifetimeEnding: Sendable {
    private let controller: any ControllerChannel
    private let adapter: UInt16
    private let first = Mutex<HCIProblem?>(nil)

    init(controller: any ControllerChannel, adapter: UInt16) {
        self.controller = controller
        self.adapter = adapter
    }

    var problem: HCIProblem? { first.withLock { $0 } }

    func fail(_ error: BluetoothSocketError) {
        let meaning = problem(of: error)
        first.withLock { $0 = $0 ?? meaning }
        controller.close()
    }

    /// What `error` means on this lifetime's adapter.
    func problem(of error: BluetoothSocketError) -> HCIProblem {
        HCIProblem(error, adapter: .index(adapter), .current)
    }
}
