import PostgresClient
import Secrets
import Testing

@Suite("Connection strings read as libpq reads them")
struct ConnectionStringTests {
    @Test("a password is found however it is spelled", arguments: [
        "host=db password=pw", "host=db password = pw", "host=db\tpassword=pw", "password='p w' host=db",
        "postgresql://gw:pw@db/hrmd", "postgresql://gw@db/hrmd?password=pw", "postgresql://gw@db/hrmd?passw%6Frd=pw",
        "postgres://db/hrmd?sslmode=require&password=pw",
    ])
    func password(conninfo: String) throws {
        let parsed = try ConnectionString(Secret(conninfo))
        #expect(parsed.holdsPassword)
        #expect(!parsed.redacted.contains("pw"))
    }

    @Test("strings without a password pass, and show what they name")
    func noPassword() throws {
        let uri = try ConnectionString(Secret("postgresql://gw_room1@db.lan:5433/hrmd?sslmode=verify-full"))
        #expect(!uri.holdsPassword)
        #expect(uri.redacted == "host=db.lan port=5433 dbname=hrmd user=gw_room1")
        #expect(try !ConnectionString(Secret("service=hrmd")).holdsPassword)
    }

    @Test("what libpq cannot read is refused without repeating it")
    func unreadable() {
        for conninfo in ["host=db passwordpw", "postgresql://[db/x", "host='db"] {
            #expect(throws: ConnectionStringError.unreadable) { try ConnectionString(Secret(conninfo)) }
            #expect(!"\(ConnectionStringError.unreadable)".contains("pw"))
        }
    }

    @Test("a secret prints as redacted, alone or inside a value")
    func redaction() {
        struct Holder { var name = "x"; var password = Secret("hunter2") }
        let secret = Secret("hunter2")
        for text in ["\(secret)", String(describing: secret), String(reflecting: secret), "\(Holder())", String(reflecting: Holder())] {
            #expect(!text.contains("hunter2"), "\(text)")
        }
        #expect(secret.revealed == "hunter2")
    }
}
