import Foundation
@testable import HealthService
import SDBus
import Testing

@Suite("The served interface")
struct InterfaceTests {
    /// (method → (in signature, out signature, argument names)) of the XML in the repository.
    static func methodsOfXML() throws -> [String: (String, String, [String])] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("dbus/org.hrmd.Health1.xml")
        let text = try String(contentsOf: url, encoding: .utf8)
        var methods: [String: (String, String, [String])] = [:]
        let method = try Regex(#"<method name="([A-Za-z]+)">(.*?)</method>|<method name="([A-Za-z]+)"/>"#).dotMatchesNewlines()
        let argument = try Regex(#"<arg name="([A-Za-z]+)" type="([^"]+)" direction="(in|out)"/>"#)
        for match in text.matches(of: method) {
            let name = String((match.output[1].substring ?? match.output[3].substring)!)
            var inputs = "", outputs = "", names: [String] = []
            if let body = match.output[2].substring {
                for arg in body.matches(of: argument) {
                    names.append(String(arg.output[1].substring!))
                    if arg.output[3].substring == "in" { inputs += arg.output[2].substring! } else { outputs += arg.output[2].substring! }
                }
            }
            methods[name] = (inputs, outputs, names)
        }
        return methods
    }

    @Test("the vtable declares exactly the methods of dbus/org.hrmd.Health1.xml, with their signatures and names")
    func matchesXML() throws {
        let xml = try Self.methodsOfXML()
        let served = HealthInterface.description(version: "test")
        #expect(Set(served.methods.map(\.name)) == Set(xml.keys))
        for method in served.methods {
            guard let expected = xml[method.name] else { continue }
            #expect(method.inputSignature == expected.0, "\(method.name) in")
            #expect(method.outputSignature == expected.1, "\(method.name) out")
            #expect((method.inputs + method.outputs).map(\.name) == expected.2, "\(method.name) names")
        }
        #expect(served.signals.map(\.name) == ["SamplesChanged"] && served.signals.first?.signature == "st")
    }

    @Test("sources a manager may name")
    func sourceNames() {
        #expect(HealthRequests.isSourceName("hrmd"))
        #expect(HealthRequests.isSourceName("mary/runner"))
        #expect(HealthRequests.isSourceName("uid-1001/x"))
        #expect(!HealthRequests.isSourceName("mary"))
        #expect(!HealthRequests.isSourceName("mary/Runner"))
        #expect(!HealthRequests.isSourceName("/runner"))
        #expect(!HealthRequests.isSourceName("a/b/c"))
    }
}
