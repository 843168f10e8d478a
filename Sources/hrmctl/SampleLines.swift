@preconcurrency import Glibc
import Foundation
import HealthModel
import HealthRequests
import HealthStore
import HealthUnits
import JSONLines
import Timestamps

/// The JSON and CSV lines of `samples` and `export` (UTC, milliseconds), written as bytes. A
/// week is 600,000 lines, so what samples share (type, unit, source, device, metadata: their
/// `SampleContext`) is rendered once per context, through `SampleJSON` and `csvRow`; times
/// are written with the hour formatted once per hour, and whole values digit by digit, as
/// `RFC3339` and `DisplayNumber` print them.
struct SampleLineFormatter {
    enum Shape {
        /// One JSON object per line, the documented shape.
        case json
        /// The CSV rows of `samples --output csv` and `export --format csv`.
        case csv
    }

    let shape: Shape
    let type: SampleType
    let unit: HealthUnit
    /// Whether values are printed in another unit than the type's canonical one, the one
    /// the store keeps.
    private let converts: Bool
    /// `{"type":"heart-rate","start":"` or `heart-rate,`.
    private let lead: [UInt8]
    /// `","end":"` or `,`.
    private let beforeEnd: [UInt8]
    /// `","value":` or `,`.
    private let beforeValue: [UInt8]
    /// `,` and the fields after the value, by context number (in JSON without the closing brace,
    /// so that a sample's person may follow).
    private var renderedContexts: [[UInt8]?] = []
    private var times = RFC3339MillisecondWriter()
    /// Whose each sample is, for JSON's `person` (nil: no key at all).
    private var people: PersonLookup?
    /// `,"person":"NAME"`, by name.
    private var renderedPeople: [String: [UInt8]] = [:]

    /// The CSV header; with a gateway column last for the central store's samples.
    static func csvHeader(showsGateway: Bool) -> String {
        "type,start,end,value,unit,source,device,device_name,sensorLocation" + (showsGateway ? ",gateway" : "")
    }

    /// `people`: whose samples are whose, for JSON lines (`person`, after the other keys).
    init(_ shape: Shape, type: SampleType, unit: HealthUnit, people: PersonLookup? = nil) {
        self.shape = shape
        self.people = people.flatMap { $0.isEmpty ? nil : $0 }
        self.type = type
        self.unit = unit
        converts = unit != type.canonicalUnit
        switch shape {
        case .json:
            lead = Array(#"{"type":\#(JSONValue.string(type.identifier).serialized),"start":""#.utf8)
            beforeEnd = Array(#"","end":""#.utf8)
            beforeValue = Array(#"","value":"#.utf8)
        case .csv:
            lead = Array((csvRow([type.identifier]) + ",").utf8)
            beforeEnd = [UInt8(ascii: ",")]
            beforeValue = [UInt8(ascii: ",")]
        }
    }

    /// Appends the line of `point` (a sample of this formatter's type), newline included.
    mutating func append(_ point: StoredPoint, contexts: SampleContexts, to buffer: LineBuffer) {
        let value = converts
            ? (try? Quantity(unit: type.canonicalUnit, doubleValue: point.value).doubleValue(for: unit)) ?? .nan : point.value
        buffer.append(lead)
        let start = buffer.position
        let startLength = times.write(point.start, to: buffer.reserve(RFC3339MillisecondWriter.maximumLength))
        buffer.commit(startLength)
        buffer.append(beforeEnd)
        if point.end == point.start {
            buffer.appendCopy(at: start, count: startLength)
        } else {
            buffer.commit(times.write(point.end, to: buffer.reserve(RFC3339MillisecondWriter.maximumLength)))
        }
        buffer.append(beforeValue)
        if !buffer.appendWhole(value) {
            switch shape {
            case .json: buffer.append(Array(DisplayNumber(value: value).json.serialized.utf8))
            case .csv: buffer.append(Array(DisplayNumber(value: value).description.utf8))
            }
        }
        buffer.append(renderedContext(point.context, contexts))
        if shape == .json {
            if people != nil, let person = people?.person(device: contexts[point.context].device?.localIdentifier, at: point.start) {
                buffer.append(renderedPerson(person))
            }
            buffer.append(UInt8(ascii: "}"))
        }
        buffer.append(UInt8(ascii: "\n"))
    }

    /// `,` and the fields after the value that the samples of context `number` share.
    private mutating func renderedContext(_ number: Int, _ contexts: SampleContexts) -> [UInt8] {
        if number < renderedContexts.count, let rendered = renderedContexts[number] { return rendered }
        let context = contexts[number]
        var rendered: [UInt8] = [UInt8(ascii: ",")]
        switch shape {
        case .json:
            // `{"unit":…,"metadata":{…}}` less its opening and closing braces.
            rendered += JSONValue.object(SampleJSON.context(of: context, unit: unit)).serialized.utf8.dropFirst().dropLast()
        case .csv:
            var fields = [
                unit.unitString, context.source.name, context.device?.localIdentifier ?? "", context.device?.name ?? "",
                context.metadata.sensorLocation?.name ?? "",
            ]
            // Only central samples have a gateway, and only their header names the column.
            if let gateway = context.gateway { fields.append(gateway) }
            rendered += csvRow(fields).utf8
        }
        if renderedContexts.count <= number { renderedContexts += repeatElement(nil, count: number + 1 - renderedContexts.count) }
        renderedContexts[number] = rendered
        return rendered
    }

    /// `,"person":"NAME"`.
    private mutating func renderedPerson(_ name: String) -> [UInt8] {
        if let rendered = renderedPeople[name] { return rendered }
        let rendered = Array(#","person":"#.utf8) + Array(JSONValue.string(name).serialized.utf8)
        renderedPeople[name] = rendered
        return rendered
    }
}

/// Lines gathered in memory and written to a C stream in blocks of 64 KiB.
final class LineBuffer {
    private static let blockSize = 1 << 16
    /// Room for a block and one more line of any length `reserve` is asked for.
    private var capacity = 2 << 16
    private var storage: UnsafeMutablePointer<UInt8>
    private var count = 0

    init() { storage = .allocate(capacity: capacity) }
    deinit { storage.deallocate() }

    /// Appends `bytes`.
    @inline(__always)
    func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// Appends `bytes`.
    @inline(__always)
    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        reserve(bytes.count).update(from: base, count: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        reserve(1).pointee = byte
        count += 1
    }

    /// Room for `length` bytes after those gathered: write there, then `commit` what was written.
    @inline(__always)
    func reserve(_ length: Int) -> UnsafeMutablePointer<UInt8> {
        if count + length > capacity { grow(to: count + length) }
        return storage + count
    }

    /// Where the next byte goes.
    var position: Int { count }

    /// Appends a copy of the `length` bytes gathered at `offset`.
    @inline(__always)
    func appendCopy(at offset: Int, count length: Int) {
        let destination = reserve(length)
        destination.update(from: storage + offset, count: length)
        count += length
    }

    /// Counts `length` bytes written into the room `reserve` gave.
    @inline(__always)
    func commit(_ length: Int) { count += length }

    /// Appends a whole number below 10⁹ as `DisplayNumber` prints it (the digits alone); false
    /// for any other value, and nothing appended.
    @inline(__always)
    func appendWhole(_ value: Double) -> Bool {
        guard value == value.rounded(), abs(value) < 1e9 else { return false }
        var number = Int64(value)
        let at = reserve(11)
        var length = 0
        if number < 0 {
            at[0] = UInt8(ascii: "-")
            length = 1
            number = -number
        }
        var digits = 1
        var rest = number / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var index = length + digits
        repeat {
            index -= 1
            at[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: number % 10)
            number /= 10
        } while number > 0
        count += length + digits
        return true
    }

    private func grow(to needed: Int) {
        let larger = max(capacity * 2, needed)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.update(from: storage, count: count)
        storage.deallocate()
        storage = moved
        capacity = larger
    }

    /// Writes the gathered lines to `file` once a block is full.
    @inline(__always)
    func writeIfFull(to file: UnsafeMutablePointer<FILE>) {
        if count >= Self.blockSize { write(to: file) }
    }

    /// Writes whatever is gathered to `file`.
    func write(to file: UnsafeMutablePointer<FILE>) {
        guard count > 0 else { return }
        _ = fwrite(storage, 1, count, file)
        count = 0
    }
}
