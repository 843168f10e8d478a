@preconcurrency import Glibc
import Logging
import SensorFrames
import Synchronization
import Timestamps
import TraceFormat

/// Writes every frame it is given to hrmd-trace files in a directory (`hrmd --record DIR`),
/// rotating by size. Crash-safe: each line goes out in one `write` to an O_APPEND file, and a
/// short write (a full disk) is cut back so a line is whole or absent. Recording never slows
/// ingest: frames are queued, and what cannot be written is counted and logged, not retried.
public final class TraceRecorder: Sendable {
    /// What the recorder has done.
    public struct Counters: Sendable, Equatable {
        public var written = 0
        public var dropped = 0
        public var files = 0
    }

    private let directory: String
    private let maxFileBytes: Int
    private let logger: Logger
    private let queue: AsyncStream<SensorFrame>
    private let continuation: AsyncStream<SensorFrame>.Continuation
    private let counters = Mutex(Counters())

    /// A recorder into `directory` (which must exist), starting a new file past `maxFileBytes`.
    public init(directory: String, maxFileBytes: Int = 64 << 20, logger: Logger) {
        self.directory = directory
        self.maxFileBytes = maxFileBytes
        self.logger = logger
        (queue, continuation) = AsyncStream.makeStream(of: SensorFrame.self, bufferingPolicy: .bufferingOldest(65_536))
    }

    public var snapshot: Counters { counters.withLock { $0 } }

    /// Queues a frame for writing; never blocks.
    public func record(_ frame: SensorFrame) {
        if case .dropped = continuation.yield(frame) { counters.withLock { $0.dropped += 1 } }
    }

    /// Ends the queue: `run` writes what is queued and returns.
    public func finish() { continuation.finish() }

    /// Checks that `directory` can take recordings; the error says why not.
    public static func checkDirectory(_ directory: String) -> String? {
        var info = stat()
        guard stat(directory, &info) == 0 else { return "\(directory): \(String(cString: strerror(errno)))" }
        guard info.st_mode & S_IFMT == S_IFDIR else { return "\(directory) is not a directory" }
        guard access(directory, W_OK | X_OK) == 0 else { return "\(directory): \(String(cString: strerror(errno)))" }
        return nil
    }

    /// Writes queued frames until `finish`.
    public func run() async {
        var file: TraceFile?
        var failing = false
        for await frame in queue {
            let line = Array((TraceLine.encode(frame) + "\n").utf8)
            do {
                if file == nil || file!.size + line.count > maxFileBytes {
                    file?.close()
                    file = nil
                    file = try TraceFile(directory: directory, startingAt: frame.time)
                    counters.withLock { $0.files += 1 }
                    logger.info("recording to \(file!.path)")
                }
                try file!.append(line)
                counters.withLock { $0.written += 1 }
                if failing {
                    failing = false
                    logger.notice("recording resumed")
                }
            } catch {
                counters.withLock { $0.dropped += 1 }
                if !failing {
                    failing = true
                    logger.error("cannot record frames (ingest goes on; frames are counted as not recorded): \(error)")
                }
            }
        }
        file?.close()
        let final = snapshot
        if final.written > 0 || final.dropped > 0 {
            logger.info("recorded \(final.written) frames in \(final.files) file(s), \(final.dropped) not recorded")
        }
    }
}

/// One trace file being written.
private struct TraceFile {
    struct Failure: Error, CustomStringConvertible {
        var path: String
        var operation: String
        var errno: Int32
        var description: String { "\(operation) \(path): \(String(cString: strerror(errno)))" }
    }

    let path: String
    private let fd: Int32
    private(set) var size = 0

    init(directory: String, startingAt time: Timestamp) throws(Failure) {
        let stamp = RFC3339.string(from: time, fractionDigits: 3).filter { $0 != "-" && $0 != ":" }
        var path = "\(directory)/hrmd-\(stamp).trace.jsonl"
        var fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0o644)
        var attempt = 1
        while fd < 0, errno == EEXIST, attempt < 100 {
            attempt += 1
            path = "\(directory)/hrmd-\(stamp)-\(attempt).trace.jsonl"
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { throw Failure(path: path, operation: "create", errno: errno) }
        self.path = path
        self.fd = fd
        try append(Array((TraceLine.header(details: [("recorder", "hrmd")]) + "\n").utf8))
    }

    /// Appends `line` whole, or not at all.
    mutating func append(_ line: [UInt8]) throws(Failure) {
        var written = 0
        while written < line.count {
            let result = line.withUnsafeBytes { write(fd, $0.baseAddress! + written, line.count - written) }
            if result < 0 {
                if errno == EINTR { continue }
                let error = errno
                if written > 0 { _ = ftruncate(fd, off_t(size)) }
                throw Failure(path: path, operation: "write", errno: error)
            }
            written += result
        }
        size += line.count
    }

    func close() {
        _ = fsync(fd)
        _ = Glibc.close(fd)
    }
}
