import Foundation
import Hummingbird
import Testing

@testable import HTTPFront

/// `web/openapi.json` and the front's routes say the same: every (method, path, query
/// parameters) of ``APIRoute/all``, the live stream and the document itself is described, and
/// nothing else is. One line per difference.
@Suite("The OpenAPI document")
struct OpenAPIDocumentTests {
    static let documentPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("web/openapi.json").path

    /// An operation as a line: `GET /api/v1/samples ?cursor,device,limit`.
    struct Operation: Hashable, Comparable, CustomStringConvertible {
        var method: String
        var path: String
        var parameters: [String]

        init(_ method: String, _ path: String, _ parameters: [String]) {
            self.method = method.uppercased()
            self.path = path
            self.parameters = parameters.sorted()
        }

        var description: String { "\(method) \(path)" + (parameters.isEmpty ? "" : " ?" + parameters.joined(separator: ",")) }
        static func < (a: Operation, b: Operation) -> Bool { a.description < b.description }
    }

    static func document() throws -> [String: Any] {
        let data = try #require(FileManager.default.contents(atPath: documentPath), "no \(documentPath)")
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(documentPath) is not a JSON object")
    }

    /// Follows a local `$ref` (`#/components/...`).
    static func resolve(_ value: Any, in document: [String: Any]) -> [String: Any]? {
        guard var object = value as? [String: Any] else { return nil }
        var seen = 0
        while let reference = object["$ref"] as? String, seen < 8 {
            guard reference.hasPrefix("#/") else { return nil }
            var target: Any? = document
            for part in reference.dropFirst(2).split(separator: "/") { target = (target as? [String: Any])?[String(part)] }
            guard let next = target as? [String: Any] else { return nil }
            object = next
            seen += 1
        }
        return object
    }

    static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// Every operation of the document, with what it says it serves (`x-hrmd-request`).
    static func documented(_ document: [String: Any]) -> [Operation: String?] {
        var operations: [Operation: String?] = [:]
        for (path, item) in (document["paths"] as? [String: Any]) ?? [:] {
            guard let item = item as? [String: Any] else { continue }
            let shared = (item["parameters"] as? [Any]) ?? []
            for method in methods {
                guard let operation = item[method] as? [String: Any] else { continue }
                let parameters = (shared + ((operation["parameters"] as? [Any]) ?? [])).compactMap { resolve($0, in: document) }
                let query = parameters.filter { $0["in"] as? String == "query" }.compactMap { $0["name"] as? String }
                operations[Operation(method, path, query)] = operation["x-hrmd-request"] as? String
            }
        }
        return operations
    }

    /// Every operation the front serves, with the request it serves.
    static func served() -> [Operation: String?] {
        var operations: [Operation: String?] = [:]
        for route in APIRoute.all {
            operations[Operation(route.method.rawValue, APIRoute.prefix + "/" + route.path, route.parameters)] = route.serves
        }
        operations[Operation("GET", APIRoute.prefix + "/" + APIRoute.livePath, [])] = .some(nil)
        operations[Operation("GET", APIRoute.prefix + "/" + APIRoute.documentPath, [])] = .some(nil)
        return operations
    }

    @Test("every route is described, and every description is a route, with the same query parameters")
    func routesAgree() throws {
        let documented = Self.documented(try Self.document())
        let served = Self.served()
        func route(_ operation: Operation) -> String { "\(operation.method) \(operation.path)" }
        let documentedRoutes = Dictionary(documented.keys.map { (route($0), $0) }, uniquingKeysWith: { a, _ in a })
        let servedRoutes = Dictionary(served.keys.map { (route($0), $0) }, uniquingKeysWith: { a, _ in a })
        for operation in Set(served.keys).subtracting(documented.keys).sorted() {
            if let described = documentedRoutes[route(operation)] {
                Issue.record(
                    "\(route(operation)): served with query parameters [\(operation.parameters.joined(separator: ", "))], web/openapi.json lists [\(described.parameters.joined(separator: ", "))]")
            } else {
                Issue.record("\(operation): served, not in web/openapi.json")
            }
        }
        for operation in Set(documented.keys).subtracting(served.keys).sorted() where servedRoutes[route(operation)] == nil {
            Issue.record("\(operation): in web/openapi.json, not served")
        }
        for (operation, serves) in served.sorted(by: { $0.key < $1.key }) {
            guard let described = documented[operation], described != serves else { continue }
            Issue.record("\(operation): serves \(serves ?? "no request"), web/openapi.json says x-hrmd-request \(described ?? "(none)")")
        }
    }

    @Test("every operation answers 200 and the one-line error for 400, 401, 403, 404 and 429; every reference resolves")
    func responsesAndReferences() throws {
        let document = try Self.document()
        #expect(document["openapi"] as? String == "3.1.0")
        let schemes = (document["components"] as? [String: Any])?["securitySchemes"] as? [String: Any]
        let bearer = schemes?["bearer"] as? [String: Any]
        #expect(bearer?["type"] as? String == "http" && bearer?["scheme"] as? String == "bearer", "no bearer security scheme")
        for (path, item) in (document["paths"] as? [String: Any]) ?? [:] {
            for method in Self.methods {
                guard let operation = (item as? [String: Any])?[method] as? [String: Any] else { continue }
                let responses = (operation["responses"] as? [String: Any]) ?? [:]
                let codes = path.hasSuffix("/" + APIRoute.documentPath) ? ["200", "404"] : ["200", "400", "401", "403", "404", "429"]
                for code in codes where responses[code] == nil {
                    Issue.record("\(method.uppercased()) \(path): no \(code) response")
                }
                for code in codes where code != "200" {
                    let response = responses[code].flatMap { Self.resolve($0, in: document) }
                    let schema = ((response?["content"] as? [String: Any])?["application/json"] as? [String: Any])?["schema"]
                    let resolved = schema.flatMap { Self.resolve($0, in: document) }
                    if (resolved?["required"] as? [String]) != ["error"] {
                        Issue.record("\(method.uppercased()) \(path): the \(code) response is not the error shape")
                    }
                }
            }
        }
        var unresolved: Set<String> = []
        func walk(_ value: Any) {
            if let object = value as? [String: Any] {
                if let reference = object["$ref"] as? String, Self.resolve(object, in: document) == nil { unresolved.insert(reference) }
                object.values.forEach(walk)
            } else if let array = value as? [Any] {
                array.forEach(walk)
            }
        }
        walk(document)
        for reference in unresolved.sorted() { Issue.record("\(reference) does not resolve") }
    }

    @Test("the sample schema has the keys of a sample, in order")
    func sampleSchema() throws {
        let document = try Self.document()
        let sample = try #require(Self.resolve(["$ref": "#/components/schemas/Sample"], in: document))
        #expect(sample["required"] as? [String] == ["type", "start", "end", "value", "unit", "source", "device", "metadata"])
    }
}
