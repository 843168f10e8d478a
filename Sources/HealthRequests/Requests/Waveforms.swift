import HealthModel
import Timestamps

/// The waveform recordings (ECG, acceleration) that overlap [since, until) the caller may read
/// (its source's, and with read authorization of a waveform type every source's recordings of
/// it), newest start first, of one type or strap when named.
public struct Waveforms: HealthRequest {
    public static let name = "Waveforms"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .answer(WaveformQuery.answerLimit, of: "recording")

    public var app: String
    public var since: Int64
    public var until: Int64
    /// A waveform type's identifier; "": every waveform type.
    public var type: String
    public var device: String
    /// 1…``WaveformQuery/answerLimit``.
    public var limit: UInt32

    public init(app: String, since: Timestamp?, until: Timestamp?, type: SampleType?, device: String?, limit: Int) {
        self.app = app
        self.since = WireTime.since(since)
        self.until = WireTime.until(until)
        self.type = type?.identifier ?? ""
        self.device = device ?? ""
        self.limit = UInt32(clamping: limit)
    }

    public struct Response: Codable, Sendable {
        public var recordings: [WaveformRecording]

        public init(recordings: [WaveformRecording]) { self.recordings = recordings }
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let view = try await context.view(of: source)
        let range = try WireTime.checked(since: since, until: until)
        guard (1...UInt32(WaveformQuery.answerLimit)).contains(limit) else {
            throw .invalidArguments("limit must be 1…\(WaveformQuery.answerLimit), not \(limit)")
        }
        var types: [SampleType] = []
        if !type.isEmpty {
            guard let named = SampleType(identifier: type), named.kind == .waveform else {
                throw .invalidArguments(
                    "\(type.quoted) is not a waveform type (known: \(SampleType.waveformTypes.map(\.identifier).joined(separator: ", ")))")
            }
            types = [named]
        }
        let query = WaveformQuery(
            types: types, device: device.isEmpty ? nil : device, since: range.since, until: range.until, reader: view.reader,
            limit: Int(limit))
        return Response(recordings: try await context.onStore { store throws(HealthStoreError) in try store.waveforms(query) })
    }
}

/// One recording's samples from `since` to before `until`, as segments without gaps (a gap
/// lies between two segments), at most ``WaveformLimits/instantsPerAnswer`` instants: when
/// the stretch holds more, `next` says where the rest starts (ask again with it as `since`).
public struct WaveformSamples: HealthRequest {
    public static let name = "WaveformSamples"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .answer(WaveformLimits.instantsPerAnswer, of: "instant")

    public var app: String
    public var id: String
    public var since: Int64
    public var until: Int64

    public init(app: String, id: String, since: Timestamp? = nil, until: Timestamp? = nil) {
        self.app = app
        self.id = id
        self.since = WireTime.since(since)
        self.until = WireTime.until(until)
    }

    public struct Response: Codable, Sendable {
        public var recording: WaveformRecording
        public var segments: [WaveformSegment]
        /// Where the samples not in this answer start (µs since the epoch); 0 when the answer
        /// holds every one of the stretch.
        public var next: Int64

        public init(recording: WaveformRecording, segments: [WaveformSegment], next: Int64) {
            self.recording = recording
            self.segments = segments
            self.next = next
        }
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let view = try await context.view(of: source)
        let range = try WireTime.checked(since: since, until: until)
        let id = self.id
        let answer = try await context.onStore { store throws(HealthStoreError) in
            try Self.read(id, since: range.since, until: range.until, reader: view.reader, from: store)
        }
        guard let answer else { throw .invalidArguments("no recording \(id.quoted) the caller may read") }
        return answer
    }

    /// The answer from `store`: pieces joined into segments until the budget is spent.
    static func read(_ id: String, since: Timestamp?, until: Timestamp?, reader: String?, from store: some RequestStore)
        throws(HealthStoreError) -> Response?
    {
        var segments: [WaveformSegment] = []
        var instants = 0
        var next: Int64 = 0
        let recording = try store.readWaveform(id, since: since, until: until, reader: reader) { recording, piece in
            if instants >= WaveformLimits.instantsPerAnswer {
                next = piece.start.microsecondsSinceEpoch
                return false
            }
            let channels = recording.channels.count
            segments.append(joining: piece, frequency: recording.frequency, channels: channels)
            instants += piece.instantCount(channels: channels)
            return true
        }
        return recording.map { Response(recording: $0, segments: segments, next: next) }
    }
}

/// Deletes a waveform recording and its samples, leaving a tombstone. Only a manager of the
/// store deletes recordings.
public struct DeleteWaveform: HealthRequest {
    public static let name = "DeleteWaveform"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .constant

    public var app: String
    public var id: String

    public init(app: String, id: String) {
        self.app = app
        self.id = id
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> NoResponse {
        _ = try context.source(app: app)
        let id = self.id
        let recording = try await context.onStore { store throws(HealthStoreError) in try store.deleteWaveform(id) }
        context.log(.notice, "deleted a recording", ["recording": id, "type": recording.type.identifier])
        return NoResponse()
    }
}
