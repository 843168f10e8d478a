import SDBus
import Testing

@Suite("Connection credentials")
struct ConnectionCredentialsTests {
    @Test("GetConnectionCredentials' reply: uid, pid and the label without its NUL")
    func reply() throws {
        let label = Array("snap.pulse.pulse (enforce)".utf8) + [0]
        let reply = DBusValue.properties([
            ("UnixUserID", .uint32(1000)), ("UnixGroupIDs", .array(element: "u", [.uint32(1000)])), ("ProcessID", .uint32(4242)),
            ("LinuxSecurityLabel", .bytes(label)),
        ])
        let credentials = try DBusConnectionCredentials(reply: reply)
        #expect(credentials == DBusConnectionCredentials(unixUserID: 1000, processID: 4242, securityLabel: "snap.pulse.pulse (enforce)"))
        #expect(try DBusConnectionCredentials(reply: .properties([])) == DBusConnectionCredentials())
        #expect(throws: DBusError.self) { try DBusConnectionCredentials(reply: .string("no")) }
    }
}
