import Foundation
import HealthModel
import HealthRequests
import HealthStore
import HealthWire
import Logging
import SDBus

/// One call's context: the caller as the bus daemon and polkit say, the store on the store
/// workers, and what this front does with passed files and observations.
struct CallContext: RequestContext, RequestFront {
    let caller: Caller
    let dispatch: RequestDispatch

    var user: String { caller.user }
    var uid: UInt32 { caller.uid }
    var logger: Logger { dispatch.logger }

    func log(_ level: RequestLogLevel, _ message: String, _ fields: [String: String]) {
        var metadata = fields.mapValues { Logger.MetadataValue.string($0) }
        metadata["user"] = .string(caller.user)
        switch level {
        case .info: logger.info("\(message)", metadata: metadata)
        case .notice: logger.notice("\(message)", metadata: metadata)
        }
    }
    var tokens: AnchorTokens { dispatch.tokens }
    var front: any RequestFront { self }

    func source(app: String) throws(RequestFailure) -> String { try caller.source(app: app) }

    func isManager() async throws(RequestFailure) -> Bool { try await dispatch.authority.isManager(caller, interactive: false) }

    func requireManager(for what: String) async throws(RequestFailure) { try await dispatch.authority.requireManager(caller, for: what) }

    func onStore<T: Sendable>(_ body: @escaping @Sendable (any RequestStore) throws(HealthStoreError) -> T) async throws(RequestFailure) -> T {
        try await dispatch.onStore { store throws(HealthStoreError) in try body(store) }
    }

    func writeSamples(_ query: SampleQuery, view: CallerView, to output: PassedFile) async throws(RequestFailure) -> Int {
        try await dispatch.workers.run { [store = dispatch.store] () throws(RequestFailure) -> Int in
            var writer: PipeWriter
            do { writer = try PipeWriter(descriptor: output.descriptor) } catch { throw .invalidArguments("the output descriptor: \(error)") }
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            var written = 0
            var failure: PipeWriter.Failure?
            do throws(HealthStoreError) {
                try store.enumerateSamples(query) { stored in
                    guard failure == nil else { return }
                    let line = (try? encoder.encode(view.record(stored))) ?? Data("{}".utf8)
                    do throws(PipeWriter.Failure) { try writer.writeLine(line) } catch { failure = error }
                    written += 1
                }
            } catch {
                throw .store(error)
            }
            if failure == nil {
                do throws(PipeWriter.Failure) { try writer.flush() } catch { failure = error }
            }
            if let failure { throw RequestFailure(.failed, "writing the samples: \(failure)") }
            return written
        }
    }

    func importRecording(_ options: ImportOptions, from file: PassedFile) async throws(RequestFailure) -> ImportResult {
        try await dispatch.importer.run(options, from: file.descriptor, uid: caller.uid)
    }

    func observe(source: String, type: SampleType, isManager: Bool) throws(RequestFailure) {
        try dispatch.observers.add(.init(busName: caller.busName, uid: caller.uid, source: source, type: type, isManager: isManager))
        logger.debug("observes \(type.identifier)", metadata: ["source": .string(source), "bus_name": .string(caller.busName)])
    }

    func unobserve(source: String, type: SampleType) {
        dispatch.observers.remove(busName: caller.busName, source: source, type: type)
    }
}
