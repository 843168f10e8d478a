import HRMConfiguration
import Testing

@Suite("Gateway names")
struct GatewayNameTests {
    @Test("host names as gateway names", arguments: [
        ("kitchen-pc", "kitchen-pc"), ("Kitchen-PC.local", "kitchen-pc"), ("my host", "my-host"), ("", "hrmd"), ("-x", "x"),
    ])
    func gatewayNames(host: String, gateway: String) {
        #expect(GatewayName.from(hostName: host) == gateway)
    }
}
