import Foundation
import HealthModel
import HealthStore
import HealthWire
import SDBus

extension HealthRequests {
    func saveSamples(_ caller: Caller, _ arguments: inout CallArguments) async throws(ServiceFailure) -> [DBusValue] {
        let source = try caller.source(app: try arguments.string("app"))
        let values = try arguments.array("samples")
        guard values.count <= HealthBusLimits.samplesPerSave else {
            throw .invalidArguments("a save takes at most \(HealthBusLimits.samplesPerSave) samples, not \(values.count); split the batch")
        }
        var samples: [QuantitySample] = []
        samples.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            do { samples.append(try SampleSubmission.sample(from: value, index: index)) } catch { throw error.failure }
        }
        let batch = samples
        let report = try await onStore { store throws(HealthStoreError) in
            try store.save(batch, from: HealthSource(name: source), policy: .refuseUnauthorized)
        }
        return [.uint32(UInt32(clamping: report.stored + report.replaced)), .uint32(UInt32(clamping: report.unchanged))]
    }

    func querySamples(_ caller: Caller, _ arguments: inout CallArguments) async throws(ServiceFailure) -> [DBusValue] {
        let source = try caller.source(app: try arguments.string("app"))
        let type = try arguments.sampleType()
        let range = try arguments.range()
        let limit = try arguments.limit(maximum: HealthBusLimits.samplesPerQuery)
        let view = try await view(for: caller, source: source)
        let query = SampleQuery(type: type, since: range.since, until: range.until, limit: limit, reader: view.reader)
        let samples = try await onStore { store throws(HealthStoreError) in try store.samples(query) }
        return [.array(element: "a{sv}", samples.map { view.record($0).wireValue })]
    }

    func querySamplesToFile(_ caller: Caller, _ arguments: inout CallArguments) async throws(ServiceFailure) -> [DBusValue] {
        let source = try caller.source(app: try arguments.string("app"))
        let type = try arguments.sampleType()
        let range = try arguments.range()
        let options = try arguments.dictionary("options")
        let output = try arguments.fileDescriptor("output")
        let view = try await view(for: caller, source: source)
        var query = SampleQuery(type: type, since: range.since, until: range.until, reader: view.reader)
        do {
            query.source = try options.string("source")
            query.device = try options.string("device")
            if let limit = try options.integer("limit"), limit > 0 { query.limit = Int(clamping: limit) }
            query.newestFirst = try options.bool("newestFirst") ?? false
        } catch {
            throw error.failure
        }
        let finalQuery = query
        let count = try await workers.run { [store] () throws(ServiceFailure) -> Int in
            var writer: PipeWriter
            do { writer = try PipeWriter(descriptor: output.rawValue) } catch { throw .invalidArguments("the output descriptor: \(error)") }
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            var written = 0
            var failure: PipeWriter.Failure?
            do throws(HealthStoreError) {
                try store.enumerateSamples(finalQuery) { stored in
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
            if let failure { throw ServiceFailure(name: HealthBusError.failed, message: "writing the samples: \(failure)") }
            return written
        }
        return [.uint32(UInt32(clamping: count))]
    }

    func statistics(_ caller: Caller, _ arguments: inout CallArguments) async throws(ServiceFailure) -> [DBusValue] {
        let source = try caller.source(app: try arguments.string("app"))
        let type = try arguments.sampleType()
        let bucketName = try arguments.string("bucket")
        let range = try arguments.range()
        let options = try arguments.dictionary("options")
        let name: StatisticsBucketName
        let zoneName: String?
        do {
            name = try StatisticsBucketName.parse(bucketName)
            zoneName = try options.string("timeZone")
        } catch {
            throw error.failure
        }
        var timeZone = TimeZone(identifier: "UTC")!
        if let zoneName {
            guard let named = TimeZone(identifier: zoneName) else { throw .invalidArguments("unknown time zone \(zoneName.quoted)") }
            timeZone = named
        }
        let bucket = name.bucket(timeZone: timeZone)
        let reader = try await reader(for: caller, source: source)
        let buckets = try await onStore { store throws(HealthStoreError) in
            try store.statistics(of: type, by: bucket, since: range.since, until: range.until, reader: reader)
        }
        return [.array(element: StatisticsBucketValue.wireSignature, buckets.map(\.wireValue))]
    }

    func heartRateVariability(_ caller: Caller, _ arguments: inout CallArguments) async throws(ServiceFailure) -> [DBusValue] {
        let source = try caller.source(app: try arguments.string("app"))
        let range = try arguments.range()
        let query = SampleQuery(type: .rrInterval, since: range.since, until: range.until, reader: try await reader(for: caller, source: source))
        let variability = try await onStore { store throws(HealthStoreError) in
            try store.heartRateVariability(query)
        }
        return [variability?.wireValue ?? WireDictionary.value([])]
    }

    func heartRateZones(_ caller: Caller, _ arguments: inout CallArguments) async throws(ServiceFailure) -> [DBusValue] {
        let source = try caller.source(app: try arguments.string("app"))
        let range = try arguments.range()
        let maximum = try arguments.double("maxHeartRate")
        guard (100...250).contains(maximum) else { throw .invalidArguments("maxHeartRate must be 100…250 count/min, not \(maximum)") }
        let query = SampleQuery(type: .heartRate, since: range.since, until: range.until, reader: try await reader(for: caller, source: source))
        let zones = try await onStore { store throws(HealthStoreError) -> [HeartRateZones.Zone] in
            let samples = try store.samples(query).map(\.sample)
            return samples.isEmpty ? [] : HeartRateZones(samples: samples, maximumHeartRate: maximum).zones
        }
        return [.array(element: HeartRateZones.Zone.wireSignature, zones.map(\.wireValue))]
    }

    func changes(_ caller: Caller, _ arguments: inout CallArguments) async throws(ServiceFailure) -> [DBusValue] {
        let source = try caller.source(app: try arguments.string("app"))
        let type = try arguments.sampleType()
        let shownAnchor = try arguments.uint64("anchor")
        let limit = try arguments.limit(maximum: HealthBusLimits.samplesPerQuery)
        let view = try await view(for: caller, source: source)
        let anchor = try view.plainAnchor(shownAnchor)
        let changes = try await onStore { store throws(HealthStoreError) in
            try store.changes(of: type, since: anchor, limit: limit, reader: view.reader)
        }
        return [
            .array(element: "a{sv}", changes.added.map { view.record($0).wireValue }),
            .array(element: DeletedSample.wireSignature, changes.deleted.map { view.deleted($0).wireValue }),
            .uint64(changes.anchor == anchor ? shownAnchor : view.anchor(changes.anchor)),
        ]
    }

    /// The store's anchor now, over every source and type: a manager's, since the anchor
    /// moves with every stored sample (an application asks `Anchor` for its own view).
    func currentAnchor(_ caller: Caller) async throws(ServiceFailure) -> [DBusValue] {
        try await authority.requireManager(caller, for: "CurrentAnchor (applications ask Anchor(app, type))")
        let anchor = try await onStore { store throws(HealthStoreError) in try store.currentAnchor() }
        return [.uint64(UInt64(max(0, anchor)))]
    }

    /// The anchor of the newest change of a type the caller may see, as this caller is shown
    /// anchors: where it starts following changes from.
    func anchor(_ caller: Caller, _ arguments: inout CallArguments) async throws(ServiceFailure) -> [DBusValue] {
        let source = try caller.source(app: try arguments.string("app"))
        let type = try arguments.sampleType()
        let view = try await view(for: caller, source: source)
        let anchor = try await onStore { store throws(HealthStoreError) in try store.latestAnchor(of: type, reader: view.reader) }
        return [.uint64(view.anchor(anchor))]
    }

    func deleteSamples(_ caller: Caller, _ arguments: inout CallArguments) async throws(ServiceFailure) -> [DBusValue] {
        let own = try caller.source(app: try arguments.string("app"))
        let type = try arguments.sampleType()
        let named = try arguments.string("source")
        let range = try arguments.range()
        let source = named.isEmpty ? own : named
        if source != own {
            try await authority.requireManager(caller, for: "deleting another source's samples")
        }
        let deleted = try await onStore { store throws(HealthStoreError) in
            try store.deleteSamples(of: type, source: source, since: range.since, until: range.until)
        }
        if deleted > 0 { logger.notice("\(caller.user) deleted \(deleted) \(type.identifier) samples of \(source)") }
        return [.uint32(UInt32(clamping: deleted))]
    }
}
