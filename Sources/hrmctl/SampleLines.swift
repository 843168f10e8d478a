@preconcurrency import Glibc
import Foundation
import HealthStore
import HealthUnits
import JSONLines
import Timestamps

/// The JSON and CSV lines of `samples` and `export` (UTC, milliseconds), written as bytes. A
/// week is 600,000 lines, so what consecutive samples share (unit, source, device, metadata:
/// the samples of one stored chunk) is rendered once, through `SampleJSON` and `csvRow`, and
/// reused while it does not change; times and whole values are appended digit by digit, as
/// `RFC3339` and `DisplayNumber` print them.
struct SampleLineFormatter {
    enum Shape {
        /// One JSON object per line, CONTRACT.md's shape.
        case json
        /// The CSV rows of `samples --output csv` and `export --format csv`.
        case csv
    }

    let shape: Shape
    let unit: HealthUnit
    /// What the previous sample shared with its neighbours, rendered.
    private var context: (source: String, device: HealthDevice?, metadata: SampleMetadata, rendered: [UInt8])?
    private var typeName: (type: SampleType, rendered: [UInt8])?

    init(_ shape: Shape, unit: HealthUnit) {
        self.shape = shape
        self.unit = unit
    }

    /// Appends the line of `stored`, newline included.
    mutating func append(_ stored: StoredSample, to line: inout [UInt8]) {
        let sample = stored.sample
        let value = (try? sample.quantity.doubleValue(for: unit)) ?? .nan
        switch shape {
        case .json:
            line.append(contentsOf: #"{"type":"#.utf8)
            line.append(contentsOf: renderedType(sample.type))
            line.append(contentsOf: #","start":""#.utf8)
            RFC3339.append(sample.start, to: &line)
            line.append(contentsOf: #"","end":""#.utf8)
            RFC3339.append(sample.end, to: &line)
            line.append(contentsOf: #"","value":"#.utf8)
            if !Self.appendWhole(value, to: &line) { line.append(contentsOf: DisplayNumber(value: value).json.serialized.utf8) }
        case .csv:
            line.append(contentsOf: renderedType(sample.type))
            line.append(UInt8(ascii: ","))
            RFC3339.append(sample.start, to: &line)
            line.append(UInt8(ascii: ","))
            RFC3339.append(sample.end, to: &line)
            line.append(UInt8(ascii: ","))
            if !Self.appendWhole(value, to: &line) { line.append(contentsOf: DisplayNumber(value: value).description.utf8) }
        }
        line.append(contentsOf: renderedContext(stored))
        line.append(UInt8(ascii: "\n"))
    }

    private mutating func renderedType(_ type: SampleType) -> [UInt8] {
        if let typeName, typeName.type == type { return typeName.rendered }
        let rendered: [UInt8] = switch shape {
        case .json: Array(JSONValue.string(type.identifier).serialized.utf8)
        case .csv: Array(csvRow([type.identifier]).utf8)
        }
        typeName = (type, rendered)
        return rendered
    }

    /// `,` and the fields after the value.
    private mutating func renderedContext(_ stored: StoredSample) -> [UInt8] {
        let sample = stored.sample
        if let context, context.source == stored.source.name, context.device == sample.device, context.metadata == sample.metadata {
            return context.rendered
        }
        var rendered: [UInt8] = [UInt8(ascii: ",")]
        switch shape {
        case .json:
            // `{"unit":…,"metadata":{…}}` less its opening brace.
            rendered += JSONValue.object(SampleJSON.context(of: stored, unit: unit)).serialized.utf8.dropFirst()
        case .csv:
            rendered += csvRow([
                unit.unitString, stored.source.name, sample.device?.localIdentifier ?? "", sample.device?.name ?? "",
                sample.metadata.sensorLocation?.name ?? "",
            ]).utf8
        }
        context = (stored.source.name, sample.device, sample.metadata, rendered)
        return rendered
    }

    /// Appends a whole number below 10⁹ as `DisplayNumber` prints it (the digits alone);
    /// false for any other value.
    private static func appendWhole(_ value: Double, to line: inout [UInt8]) -> Bool {
        guard value == value.rounded(), abs(value) < 1e9 else { return false }
        line.append(contentsOf: String(Int64(value)).utf8)
        return true
    }
}

/// Lines gathered in memory and written to a C stream in blocks.
struct LineBuffer {
    /// The lines not written yet: append to them.
    var bytes: [UInt8] = []
    private let blockSize = 1 << 16

    init() { bytes.reserveCapacity(blockSize + 4096) }

    /// Writes the gathered lines to `file` once a block is full.
    mutating func writeIfFull(to file: UnsafeMutablePointer<FILE>) {
        if bytes.count >= blockSize { write(to: file) }
    }

    /// Writes whatever is gathered to `file`.
    mutating func write(to file: UnsafeMutablePointer<FILE>) {
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeBufferPointer { _ = fwrite($0.baseAddress, 1, $0.count, file) }
        bytes.removeAll(keepingCapacity: true)
    }
}
