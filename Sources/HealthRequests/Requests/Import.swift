import HealthModel

/// A manager replays a recording (an hrmd trace, a FIT file or a btsnoop capture) it hands
/// over as a file, through the daemon's own path, as the daemon's source.
public struct Import: HealthRequest {
    public static let name = "Import"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .streamed

    public var file: PassedFile
    public var options: ImportOptions

    public init(file: PassedFile, options: ImportOptions) {
        self.file = file
        self.options = options
    }

    public struct Response: Codable, Sendable {
        public var summary: RecordingImportSummary
        /// Lines to show (at most a hundred; the counts are always complete).
        public var messages: [String]
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        if let handle = options.measurementHandle, !(1...0xFFFF).contains(handle) {
            throw .invalidArguments("measurementHandle must be 0x0001…0xffff")
        }
        if let speed = options.speed, !(speed > 0 && speed.isFinite) { throw .invalidArguments("speed must be a positive number") }
        context.log(.notice, "importing a recording", ["file": options.fileName])
        let result = try await context.front.importRecording(options, from: file)
        return Response(summary: result.summary, messages: result.messages)
    }
}

/// How to import a recording.
public struct ImportOptions: Codable, Sendable, Hashable {
    /// The file's name, for messages.
    public var name: String?
    /// Import what can be read of a damaged file.
    public var acceptDamaged: Bool?
    /// Replay at this multiple of the recorded pace; none: as fast as possible.
    public var speed: Double?
    /// The Heart Rate Measurement handle of a capture without its discovery (0x0001…0xffff).
    public var measurementHandle: Int64?

    /// The name messages give the file: its name, or "recording".
    public var fileName: String { name ?? "recording" }

    public init(name: String? = nil, acceptDamaged: Bool? = nil, speed: Double? = nil, measurementHandle: Int64? = nil) {
        self.name = name
        self.acceptDamaged = acceptDamaged
        self.speed = speed
        self.measurementHandle = measurementHandle
    }
}

/// What an import did, and the lines to show.
public struct ImportResult: Sendable, Equatable {
    public var summary: RecordingImportSummary
    public var messages: [String]

    public init(summary: RecordingImportSummary, messages: [String]) {
        self.summary = summary
        self.messages = messages
    }
}
