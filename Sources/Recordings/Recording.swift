import BluetoothWire
import Glibc
import SensorFrames
import TraceFormat

/// One entry of a recording, read in order.
public enum RecordingEntry: Sendable {
    /// A frame, with the line (or capture record) it came from; 0 when it has none.
    case frame(SensorFrame, line: Int)
    /// A line that could not be read; the rest of the recording goes on.
    case badLine(line: Int, reason: String)
    /// A record of a capture that could not be read or followed, by its number from 1.
    case badRecord(record: Int, reason: String)
    /// Part of the recording that cannot be used, and why (FIT records without an absolute
    /// time, say).
    case unusable(reason: String)
    /// What was assumed to read the recording (a capture that begins after its GATT
    /// discovery, say); the frames are good, the user should know.
    case notice(String)
}

/// A recording read front to back: its entries in order, and how far into its file it is.
public protocol RecordingReader: IteratorProtocol<RecordingEntry> {
    /// Bytes of the file read so far (for progress).
    var bytesRead: Int { get }
}

/// What a recording file holds, told apart by content.
public enum RecordingKind: Sendable, Equatable {
    case trace
    case fit
    /// A btsnoop capture of the Bluetooth host interface (`btmon -w`, Android's `btsnoop_hci.log`).
    case btsnoop
}

/// Why a recording cannot be read at all.
public enum RecordingError: Error, Sendable, CustomStringConvertible {
    /// The file does not exist or cannot be opened (with errno).
    case unreadable(path: String, reason: String, missing: Bool)
    /// The content is not an hrmd trace, a FIT file or a btsnoop capture.
    case unknownFormat(path: String)
    /// The header or structure is damaged beyond reading.
    case damaged(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason, _): "cannot read \(path): \(reason)"
        case .unknownFormat(let path): "\(path) is not an hrmd trace, a FIT file or a btsnoop capture"
        case .damaged(let path, let reason): "\(path): \(reason)"
        }
    }
}

/// Reads an hrmd trace as a sequence of entries: the header is checked, each later line is a
/// frame or a bad line with its number; unknown kinds pass through for the pipeline to ignore.
public struct TraceRecording: Sequence, RecordingReader {
    private let reader: LineReader
    private var decoder = TraceDecoder()
    private var failed = false

    /// Opens `path` and checks its header line.
    public init(path: String) throws(RecordingError) {
        reader = try Self.open(name: path) { () throws(LineReader.Failure) in try LineReader(path: path) }
    }

    /// Reads the trace open as `descriptor`, from its start, and checks its header line. The
    /// descriptor must be seekable (a regular file); it is read through a duplicate, so the
    /// caller still owns and closes it (the file offset they share moves). `name` stands for
    /// the file in messages.
    public init(descriptor: Int32, name: String) throws(RecordingError) {
        reader = try Self.open(name: name) { () throws(LineReader.Failure) in try LineReader(descriptor: descriptor, name: name) }
    }

    private static func open(name: String, _ makeReader: () throws(LineReader.Failure) -> LineReader) throws(RecordingError)
        -> LineReader
    {
        do {
            let reader = try makeReader()
            guard let header = try reader.next() else { throw RecordingError.damaged(path: name, reason: "empty file") }
            try TraceLine.decodeHeader(header)
            return reader
        } catch let failure as LineReader.Failure {
            throw .unreadable(path: name, reason: failure.description, missing: failure.errno == ENOENT)
        } catch let error as TraceError {
            throw .damaged(path: name, reason: "line 1: \(error)")
        } catch let error as RecordingError {
            throw error
        } catch {
            throw .damaged(path: name, reason: "\(error)")
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
        try kind(name: path) { () throws(LineReader.Failure) in try LineReader.prefix(of: path, count: 200) }
    }

    /// Which kind of recording the file open as `descriptor` holds, from its first bytes (read
    /// at offset 0; the descriptor's offset does not move). `name` stands for the file in
    /// messages.
    public static func kind(ofDescriptor descriptor: Int32, name: String) throws(RecordingError) -> RecordingKind {
        try kind(name: name) { () throws(LineReader.Failure) in
            try LineReader.prefix(ofDescriptor: descriptor, name: name, count: 200)
        }
    }

    private static func kind(name: String, _ readPrefix: () throws(LineReader.Failure) -> [UInt8]) throws(RecordingError)
        -> RecordingKind
    {
        let prefix: [UInt8]
        do {
            prefix = try readPrefix()
        } catch {
            throw .unreadable(path: name, reason: error.description, missing: error.errno == ENOENT)
        }
        if TraceLine.looksLikeTrace(prefix) { return .trace }
        if prefix.count >= 12, Array(prefix[8..<12]) == Array(".FIT".utf8) { return .fit }
        if BTSnoop.looksLikeCapture(prefix) { return .btsnoop }
        throw .unknownFormat(path: name)
    }
}
