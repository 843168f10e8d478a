import Foundation
import JSONLines
import Testing

@Suite("JSON values")
struct JSONValueTests {
    @Test("keys keep their order; numbers print as integers when whole")
    func ordering() {
        let value = JSONValue.object([("z", .number(72)), ("a", .number(1.2)), ("m", .null), ("b", .bool(true)), ("l", .array([.number(0.0322265625)]))])
        #expect(value.serialized == #"{"z":72,"a":1.2,"m":null,"b":true,"l":[0.0322265625]}"#)
        #expect(JSONValue.number(.nan).serialized == "null")
    }

    @Test("strings are escaped as JSON requires, and read back the same", arguments: [
        "plain", "quote \" inside", "back\\slash", "new\nline", "tab\there", "bell \u{07}", "é and ♥", "",
    ])
    func escaping(text: String) throws {
        let line = JSONValue.object([("s", .string(text))]).serialized
        let decoded = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
        #expect(decoded?["s"] == text)
        #expect(!line.contains("\n"))
    }
}
