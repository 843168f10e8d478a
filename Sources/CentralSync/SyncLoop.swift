import CentralStore
import Foundation
import HealthModel
import HealthStore
import Logging
import PostgresClient

/// The sync's work, on a thread of its own (libpq blocks): connect, and for each type the
/// source `hrmd/sync` may read, send the local changes after the central cursor in batches,
/// each applied with its cursor in one transaction. Failures close the connection and retry
/// with back-off; the local store keeps everything meanwhile, so nothing is lost, and the
/// cursor makes sure nothing is sent twice.
final class SyncLoop: @unchecked Sendable {
    private let settings: SyncSettings
    private let store: HealthStore
    private let logger: Logger
    let wakeup = SyncWakeup()

    private var gateway: CentralGateway?
    /// Central cursors by type, as last committed or read.
    private var cursors: [SampleType: Int64] = [:]
    private var readable: [SampleType: Bool] = [:]
    private var link = LinkState.starting
    /// Whether `connected…` was said since the last warning: a server that takes connections
    /// but fails every batch (a full disk) is not announced again at each retry.
    private var announced = false
    private var backoff: Duration = .zero
    private var totals = SyncOutcome()
    private var workoutTotals = WorkoutSyncOutcome()
    /// Event saves sent, and events deleted centrally.
    private var eventsSent = 0
    private var eventsDeleted = 0
    private var batches = 0
    /// Since when the sync has been catching up (a pass left changes unsent, or the first pass
    /// after an outage succeeded), for the caught-up line, and what it sent meanwhile.
    private var catchingUpSince: ContinuousClock.Instant?
    private var caughtUpStored = 0

    private enum LinkState: Equatable {
        case starting, connected, failing(String)

        var isFailing: Bool {
            if case .failing = self { true } else { false }
        }
    }

    init(settings: SyncSettings, store: HealthStore, logger: Logger) {
        self.settings = settings
        self.store = store
        self.logger = logger
    }

    /// Runs until `wakeup.stop()`.
    func run() {
        while !wakeup.isStopped {
            guard let gateway = connected() else { continue }
            do {
                let storedBefore = totals.stored
                let passStarted = ContinuousClock.now
                let more = try pass(gateway)
                backoff = .zero
                if catchingUpSince == nil, more || link.isFailing {
                    catchingUpSince = passStarted
                    caughtUpStored = 0
                }
                if catchingUpSince != nil { caughtUpStored += totals.stored - storedBefore }
                if more {
                    wakeup.pause(for: settings.catchUpPause)
                } else {
                    // Caught up: an outage ends here, not at the first pass that succeeds (a
                    // full disk takes a batch into freed page space now and then).
                    if let since = catchingUpSince {
                        logger.info("sync: caught up: \(caughtUpStored) samples sent in \(since.duration(to: .now).formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1))))")
                        catchingUpSince = nil
                    }
                    link = .connected
                    wakeup.wait(upTo: .seconds(1))
                }
            } catch let error as CentralStoreError {
                if case .cursorMoved = error {
                    logger.notice("sync: \(error)")
                    cursors = [:]
                    continue
                }
                failed(error.description, transient: error.isTransient)
            } catch {
                logger.error("sync: cannot read the local store: \(error)")
                wakeup.pause(for: .seconds(5))
            }
        }
        finalPass()
        gateway?.close()
        logger.info(
            "sync: stopped: \(batches) batches, \(totals.stored) samples sent, \(totals.duplicates) already there, \(totals.deleted) deleted, \(workoutTotals.stored) workouts sent, \(workoutTotals.deleted) deleted, \(eventsSent) event saves sent, \(eventsDeleted) deleted")
    }

    /// At shutdown, once the recording has stopped and flushed: what it flushed last goes out
    /// too when the central store is reachable (else it goes at the next start).
    private func finalPass() {
        guard let gateway else { return }
        for _ in 0..<100 {
            guard (try? pass(gateway)) == true else { return }
        }
    }

    /// The gateway, connecting first if needed; nil after a failed attempt (already waited).
    private func connected() -> CentralGateway? {
        if let gateway { return gateway }
        do {
            let connection = try PostgresConnection(conninfo: settings.connectionString.revealed, timeout: settings.timeout)
            let gateway = try CentralGateway(connection: connection, name: settings.gateway)
            self.gateway = gateway
            cursors = [:]
            // The link counts as up once the sync has caught up (`run`); until then a failure
            // is the same outage going on.
            if !announced {
                logger.info("sync: connected to \(connection.database) as \(connection.user), gateway \(settings.gateway)")
                announced = true
            }
            return gateway
        } catch let error as CentralStoreError {
            failed(error.description, transient: error.isTransient)
        } catch let error as PostgresError {
            failed(CentralStoreError.postgres(error).description, transient: error.isTransient)
        } catch {
            failed("central store: \(error)", transient: true)
        }
        return nil
    }

    /// One pass over the types: at most one batch each. True when some type had more.
    private func pass(_ gateway: CentralGateway) throws -> Bool {
        var more = false
        for type in SampleType.quantityTypes {
            guard try mayRead(type) else { continue }
            let cursor = try cursors[type] ?? gateway.cursor(of: type)
            cursors[type] = cursor
            let changes = try store.changes(of: type, since: cursor, limit: settings.batchSize, reader: SyncService.source)
            guard !changes.added.isEmpty || !changes.deleted.isEmpty else { continue }
            let batch = SyncBatch(type: type, from: cursor, to: changes.anchor, added: changes.added, deleted: changes.deleted)
            let outcome = try gateway.apply(batch)
            cursors[type] = changes.anchor
            batches += 1
            totals.stored += outcome.stored
            totals.duplicates += outcome.duplicates
            totals.deleted += outcome.deleted
            logger.trace("sync: \(type) \(cursor)→\(changes.anchor): \(outcome.stored) stored, \(outcome.duplicates) already there, \(outcome.deleted) deleted")
            if changes.added.count + changes.deleted.count >= settings.batchSize { more = true }
        }
        if try passWorkouts(gateway) { more = true }
        if try passEvents(gateway) { more = true }
        return more
    }

    /// One batch of each event type's saves that `hrmd/sync` may read. True when some type
    /// has more.
    private func passEvents(_ gateway: CentralGateway) throws -> Bool {
        var more = false
        for type in SampleType.eventTypes {
            guard try mayRead(type) else { continue }
            let cursor = try cursors[type] ?? gateway.cursor(of: type)
            cursors[type] = cursor
            let changes = try store.eventChanges(of: type, since: cursor, limit: settings.batchSize)
            guard changes.anchor != cursor else { continue }
            let outcome = try gateway.apply(
                EventSyncBatch(type: type, from: cursor, to: changes.anchor, events: changes.events, deleted: changes.deleted.map(\.id)))
            cursors[type] = changes.anchor
            batches += 1
            eventsSent += outcome.stored
            eventsDeleted += outcome.deleted
            logger.trace("sync: \(type) \(cursor)→\(changes.anchor): \(outcome.stored) events, \(outcome.deleted) deleted")
            if changes.events.count + changes.deleted.count >= settings.batchSize { more = true }
        }
        return more
    }

    /// One batch of workout changes, when `hrmd/sync` may read workouts. True when there are more.
    private func passWorkouts(_ gateway: CentralGateway) throws -> Bool {
        guard try mayRead(.workout) else { return false }
        let cursor = try cursors[.workout] ?? gateway.cursor(of: .workout)
        cursors[.workout] = cursor
        let changes = try store.workoutChanges(since: cursor, limit: settings.batchSize, reader: SyncService.source)
        guard changes.anchor != cursor else { return false }
        let outcome = try gateway.apply(WorkoutSyncBatch(from: cursor, to: changes.anchor, changed: changes.workouts, deleted: changes.deleted))
        cursors[.workout] = changes.anchor
        batches += 1
        workoutTotals.stored += outcome.stored
        workoutTotals.deleted += outcome.deleted
        logger.trace("sync: workout \(cursor)→\(changes.anchor): \(outcome.stored) stored, \(outcome.deleted) deleted")
        return changes.workouts.count + changes.deleted.count >= settings.batchSize
    }

    /// Whether `hrmd/sync` may read `type` now; says so in the log when that changes.
    private func mayRead(_ type: SampleType) throws -> Bool {
        let allowed = try store.readStatus(source: SyncService.source, type: type) == .sharingAuthorized
        if readable[type] != allowed {
            if allowed {
                logger.info("sync: \(SyncService.source) may read \(type): sending it")
            } else if readable[type] == true {
                logger.notice("sync: \(SyncService.source) may no longer read \(type): its samples stay on this machine")
            } else {
                logger.notice("sync: \(type) stays on this machine until the user allows it: hrmctl auth grant \(SyncService.source) \(type) --read")
            }
            readable[type] = allowed
        }
        return allowed
    }

    /// Closes the connection, says why once per outage (and again when a person must fix a
    /// new cause), and waits before the next attempt. One outage shows several transient
    /// reasons in turn (the connection lost, then refused while the server restarts, then a
    /// connect timing out): only the first is a warning, the others are debug lines.
    private func failed(_ reason: String, transient: Bool) {
        gateway?.close()
        gateway = nil
        if link != .failing(reason) {
            if case .failing = link, transient {
                logger.debug("sync: \(reason); still retrying")
            } else {
                logger.warning("sync: \(reason); recording goes on locally\(transient ? ", retrying" : ", retrying slowly")")
                announced = false
            }
            link = .failing(reason)
        }
        let floor: Duration = transient ? .milliseconds(500) : .seconds(5)
        backoff = min(max(floor, backoff * 2), settings.retryMaximum)
        wakeup.pause(for: backoff)
    }
}
