import Glibc
import SensorDecoding
import TraceFormat

/// One entry of a recording, read in order.
public enum RecordingEntry: Sendable {
    /// A frame, with the line it came from.
    case frame(SensorFrame, line: Int)
    /// A line that could not be read; the rest of the recording goes on.
    case badLine(line: Int, reason: String)
    /// Part of the recording that cannot be used, and why (FIT records without an absolute
    /// time, say).
    case unusable(reason: String)
}

/// What a recording file holds, told apart by content.
public enum RecordingKind: Sendable, Equatable {
    case trace
    case fit
}

/// Why a recording cannot be read at all.
public enum RecordingError: Error, Sendable, CustomStringConvertible {
    /// The file does not exist or cannot be opened (with errno).
    case unreadable(path: String, reason: String, missing: Bool)
    /// The content is neither an hrmd trace nor a FIT file.
    case unknownFormat(path: String)
    /// The header or structure is damaged beyond reading.
    case damaged(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason, _): "cannot read \(path): \(reason)"
        case .unknownFormat(let path): "\(path) is neither an hrmd trace nor a FIT file"
        case .damaged(let path, let reason): "\(path): \(reason)"
        }
    }
}

/// Reads an hrmd trace as a sequence of entries: the header is checked, each later line is a
/// frame or a bad line with its number; unknown kinds pass through for the pipeline to ignore.
public struct TraceRecording: Sequence, IteratorProtocol {
    private let reader: LineReader
    private var decoder = TraceDecoder()
    private var failed = false

    /// Opens `path` and checks its header line.
    public init(path: String) throws(RecordingError) {
        do {
            reader = try LineReader(path: path)
            guard let header = try reader.next() else { throw RecordingError.damaged(path: path, reason: "empty file") }
            try TraceLine.decodeHeader(header)
        } catch let failure as LineReader.Failure {
            throw .unreadable(path: path, reason: failure.description, missing: failure.errno == ENOENT)
        } catch let error as TraceError {
            throw .damaged(path: path, reason: "line 1: \(error)")
        } catch let error as RecordingError {
            throw error
        } catch {
            throw .damaged(path: path, reason: "\(error)")
        }
    }

    /// Bytes of the file read so far (for progress).
    public var bytesRead: Int { reader.bytesRead }

    public mutating func next() -> RecordingEntry? {
        guard !failed else { return nil }
        while true {
            let line: UnsafeBufferPointer<UInt8>?
            do {
                line = try reader.nextBytes()
            } catch {
                failed = true
                return .badLine(line: reader.lineNumber + 1, reason: "read error: \(error)")
            }
            guard let line else { return nil }
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            do {
                return .frame(try decoder.decode(utf8: line), line: reader.lineNumber)
            } catch {
                return .badLine(line: reader.lineNumber, reason: error.description)
            }
        }
    }

    /// Which kind of recording `path` holds.
    public static func kind(of path: String) throws(RecordingError) -> RecordingKind {
        let prefix: [UInt8]
        do {
            prefix = try LineReader.prefix(of: path, count: 200)
        } catch {
            throw .unreadable(path: path, reason: error.description, missing: error.errno == ENOENT)
        }
        if TraceLine.looksLikeTrace(prefix) { return .trace }
        if prefix.count >= 12, Array(prefix[8..<12]) == Array(".FIT".utf8) { return .fit }
        throw .unknownFormat(path: path)
    }
}
