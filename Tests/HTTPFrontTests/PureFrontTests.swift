import Foundation
import HealthModel
import HealthRequests
import Hummingbird
import JSONLines
import LiveFeed
import NIOCore
import Testing
import Timestamps

@testable import HTTPFront

@Suite("Query parameters")
struct APIParametersTests {
    static let now = Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000)

    static func request(_ query: String) -> Request {
        Request(head: HTTPRequest(method: .get, scheme: "http", authority: "localhost", path: "/api/v1/samples" + query), body: RequestBody(buffer: ByteBuffer()))
    }

    static func parameters(_ query: String, known: [String] = ["type", "since", "until", "limit", "max", "device"]) throws(RequestFailure) -> APIParameters {
        try APIParameters(request(query), known: known, now: now)
    }

    /// The 400 a query gets, or nil when it passes.
    static func refusal(_ query: String, known: [String] = ["type", "since", "until", "limit", "max", "device"]) -> RequestFailure? {
        do throws(RequestFailure) {
            let read = try parameters(query, known: known)
            _ = try read.time("since")
            _ = try read.time("until")
            _ = try read.unsigned("limit")
            _ = try read.number("max")
            return nil
        } catch {
            return error
        }
    }

    @Test("known parameters are read typed, absent ones are nil, the type defaults to heart rate")
    func typed() throws {
        let read = try Self.parameters("?since=2026-11-20T10:00:00Z&until=15m&limit=20&max=185.5&device=mock%2D1")
        #expect(try read.time("since") == RFC3339.parse("2026-11-20T10:00:00Z"))
        #expect(try read.time("until") == Self.now.advanced(bySeconds: -900))
        #expect(try read.unsigned("limit") == 20)
        #expect(try read.number("max") == 185.5)
        #expect(read.string("device") == "mock-1")
        #expect(read.type() == "heart-rate")
        let empty = try Self.parameters("")
        #expect(try empty.time("since") == nil && empty.unsigned("limit") == nil && empty.string("device") == nil)
    }

    @Test("each mistake is an invalid-arguments failure that names the parameter", arguments: [
        ("?colour=red", "colour"),
        ("?type=heart-rate&type=rr-interval", "type"),
        ("?since=yesterday", "since"),
        ("?since=", "since"),
        ("?until=2026-13-01T00:00:00Z", "until"),
        ("?limit=-1", "limit"),
        ("?limit=ten", "limit"),
        ("?limit=4294967296", "limit"),
        ("?max=nan", "max"),
        ("?max=inf", "max"),
        ("?max=1e999", "max"),
        ("?device=" + String(repeating: "d", count: 513), "device"),
        ("?%74ype=heart-rate", "%74ype"),
    ])
    func mistakes(query: String, named: String) {
        let failure = Self.refusal(query)
        #expect(failure?.kind == .invalidArguments, "\(query) passed")
        #expect(failure?.message.contains(named) == true, "\(failure?.message ?? "") does not name \(named)")
        #expect(failure?.message.contains("\n") == false)
        #expect(APIResponses.status(of: failure?.kind ?? .failed) == .badRequest)
    }

    @Test("a route without parameters refuses any")
    func none() {
        #expect(Self.refusal("?type=heart-rate", known: [])?.message == "this route takes no query parameters")
        #expect(Self.refusal("", known: []) == nil)
    }

    @Test("each request failure has its status")
    func statuses() {
        #expect(APIResponses.status(of: .accessDenied) == .forbidden)
        #expect(APIResponses.status(of: .limitsExceeded) == .tooManyRequests)
        #expect(APIResponses.status(of: .unknownRequest) == .notFound)
        #expect(APIResponses.status(of: .failed) == .internalServerError)
    }
}

@Suite("The API's JSON shapes")
struct APIShapesTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func record(device: HealthDevice?, metadata: SampleRecord.Metadata, value: Double = 72) -> SampleRecord {
        let start = RFC3339.parse("2026-11-20T10:00:00Z")!.microsecondsSinceEpoch
        return SampleRecord(
            id: 7, type: "heart-rate", start: start, end: start, value: value, unit: "count/min", source: "hrmd", device: device, metadata: metadata)
    }

    /// The documented line of `hrmctl samples --output json` (docs/interface.md, "A sample").
    static func documentedSampleLine() throws -> String {
        let text = try String(contentsOfFile: repository.appendingPathComponent("docs/interface.md").path, encoding: .utf8)
        return try #require(text.split(separator: "\n").first { $0.hasPrefix(#"{"type":"heart-rate","start":"#) }.map(String.init))
    }

    @Test("a sample is the line hrmctl samples --output json prints, keys in its order")
    func sampleLikeHrmctl() throws {
        let record = Self.record(
            device: .init(localIdentifier: "AA:BB:CC:DD:EE:FF", name: "Polar H10 1234", manufacturer: "Polar Electro Oy"),
            metadata: .init(sensorLocation: "chest", sensorContact: true, syncIdentifier: nil, syncVersion: nil, extra: [:]))
        #expect(APIShapes.sample(record).serialized == (try Self.documentedSampleLine()))
    }

    @Test("the README's hrmctl line: every device detail in hrmctl's order")
    func readmeLine() {
        let record = SampleRecord(
            id: 1, type: "heart-rate", start: 1_795_000_000_000_000, end: 1_795_000_000_000_000, value: 76, unit: "count/min", source: "hrmd",
            device: .init(localIdentifier: "mock-2", name: "hrmd mock strap mock-2", manufacturer: "hrmd", model: "mock", firmwareVersion: "1.0"),
            metadata: .init(sensorLocation: "wrist", sensorContact: true, syncIdentifier: nil, syncVersion: nil, extra: [:]))
        let line = APIShapes.sample(record).serialized
        #expect(line.hasSuffix(
            #","value":76,"unit":"count/min","source":"hrmd","device":{"name":"hrmd mock strap mock-2","identifier":"mock-2","manufacturer":"hrmd","model":"mock","firmwareVersion":"1.0"},"metadata":{"sensorLocation":"wrist","sensorContact":"detected"}}"#))
    }

    @Test("without a device, device is null; sync metadata and other keys follow, sorted; ids are never shown")
    func sparse() {
        let record = Self.record(
            device: nil, metadata: .init(sensorLocation: nil, sensorContact: false, syncIdentifier: "s-1", syncVersion: 3, extra: ["z": "1", "a": "2"]),
            value: 61.5)
        #expect(APIShapes.sample(record).serialized
            == #"{"type":"heart-rate","start":"2026-11-20T10:00:00.000Z","end":"2026-11-20T10:00:00.000Z","value":61.5,"unit":"count/min","source":"hrmd","device":null,"metadata":{"sensorContact":"notDetected","syncIdentifier":"s-1","syncVersion":3,"a":"2","z":"1"}}"#)
    }

    @Test("live events: SSE and WebSocket carry the same sample, and an error is one JSON line")
    func liveEvents() {
        func sse(_ event: LiveEvent) -> String {
            var buffer = ByteBuffer()
            LiveStreams.appendServerSentEvent(event, to: &buffer, namingPeople: false)
            return String(buffer: buffer)
        }
        #expect(sse(.gap(missed: 12)) == "event: gap\ndata: {\"missed\":12}\n\n")
        #expect(sse(.ended(reason: "the token was \"revoked\"")) == "event: error\ndata: {\"error\":\"the token was \\\"revoked\\\"\"}\n\n")
        #expect(String(buffer: LiveStreams.webSocketMessage(.ended(reason: "bye"), namingPeople: false)) == #"{"kind":"error","error":"bye"}"#)
        #expect(String(buffer: LiveStreams.webSocketMessage(.gap(missed: 0), namingPeople: false)) == #"{"kind":"gap","missed":0}"#)
    }
}

@Suite("Web files' paths")
struct WebFilesTests {
    @Test("plain relative paths pass", arguments: ["app.js", "css/site.css", "chart.js/chart.umd.min.js", "a-b_c+d@2.png"])
    func allowed(path: String) throws {
        #expect(try WebFiles.checked(path[...]) == path)
    }

    @Test("anything that could leave the directory, hide or encode is refused", arguments: [
        "", "/", "../etc/passwd", "a/../../b", "./a", "a/./b", "a//b", "a/", ".hidden", "a/.git/config", "%2e%2e/x", "a\\b", "é.js",
        "a b.js", "a\u{0}b",
    ])
    func refused(path: String) {
        #expect(throws: (any Error).self) { try WebFiles.checked(path[...]) }
    }

    @Test("the default web directory is found by its OpenAPI document when there is no dashboard")
    func defaultDirectory() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hrmd-web-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let bin = root.appendingPathComponent(".build/debug")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        #expect(HTTPSettings.defaultWebDirectory(executable: bin.appendingPathComponent("hrmd").path) == nil)
        try FileManager.default.createDirectory(at: root.appendingPathComponent("web"), withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: root.appendingPathComponent("web/openapi.json"))
        #expect(HTTPSettings.defaultWebDirectory(executable: bin.appendingPathComponent("hrmd").path) == root.appendingPathComponent("web").path)
    }
}
