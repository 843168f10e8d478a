import Glibc
import HTTPTypes
import Hummingbird

/// Who may address the front, by the request's `Host` and `Origin`: on a loopback-bound server
/// only loopback names (`localhost`, 127.0.0.0/8, `::1`) are answered, so a page that rebinds
/// its own DNS name to 127.0.0.1 reaches nothing; and a request that names an `Origin` (as
/// browsers do on WebSockets and cross-site requests) must come from this server's own origin:
/// its scheme (`https` when the server speaks TLS, `http` otherwise), host and port.
struct OriginCheck: Sendable {
    /// Whether the server listens on loopback only, so that `Host` must be a loopback name.
    let loopbackOnly: Bool
    /// Whether the server speaks TLS: its own origin's scheme is then `https`.
    let secure: Bool

    /// Why `request` is refused, or nil when it may go on.
    func refusal(of request: Request) -> String? {
        refusal(host: request.head.authority, origin: request.headers[.origin])
    }

    /// Why a request with these `Host` and `Origin` values is refused, or nil.
    func refusal(host: String?, origin: String?) -> String? {
        if loopbackOnly, let host, !LoopbackAddress.isLoopback(Authority.host(of: host)) {
            return "this server answers loopback names only (Host: localhost, 127.0.0.1 or [::1])"
        }
        if let origin {
            guard let host, let originAuthority = Authority.of(origin: origin), originAuthority.secure == secure,
                Authority.normalized(host, defaultPort: originAuthority.defaultPort) == originAuthority.authority
            else { return "cross-origin requests are refused (Origin: \(origin.prefix(100)))" }
        }
        return nil
    }
}

/// Refuses, with 403, requests ``OriginCheck`` refuses.
struct OriginCheckMiddleware: RouterMiddleware {
    typealias Context = FrontContext
    let check: OriginCheck

    func handle(_ request: Request, context: FrontContext, next: (Request, FrontContext) async throws -> Response) async throws -> Response {
        if let refusal = check.refusal(of: request) { throw RequestFailureResponse(status: .forbidden, message: refusal) }
        return try await next(request, context)
    }
}

/// Whether an address is one only this machine reaches, decided by parsing it.
enum LoopbackAddress {
    /// `localhost`, an IPv4 address in 127.0.0.0/8, or `::1` (bracketed or not); any other name or
    /// address (`127.example.com` included) is not.
    static func isLoopback(_ host: String) -> Bool {
        var name = host
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.lowercased() == "localhost" || name.lowercased() == "localhost." { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, name, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1 }
        }
        return false
    }
}

/// `host[:port]` as HTTP writes it in `Host` and in an origin.
enum Authority {
    /// The host of `authority`: `[::1]:8080` → `[::1]`, `localhost:80` → `localhost`.
    static func host(of authority: String) -> String {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") { return String(authority[...close]) }
        if let colon = authority.firstIndex(of: ":") { return String(authority[..<colon]) }
        return authority
    }

    /// `authority` in lower case, with `defaultPort` written out when it has no port.
    static func normalized(_ authority: String, defaultPort: Int) -> String {
        let lowered = authority.lowercased()
        let host = host(of: lowered)
        return lowered.count > host.count ? lowered : "\(host):\(defaultPort)"
    }

    /// The normalized authority of an origin (`scheme://host[:port]`), its scheme's default
    /// port and whether the scheme is `https`; nil for an opaque origin (`null`) or another scheme.
    static func of(origin: String) -> (authority: String, defaultPort: Int, secure: Bool)? {
        let lowered = origin.lowercased()
        let defaultPort: Int
        let rest: Substring
        let secure: Bool
        if lowered.hasPrefix("http://") {
            (defaultPort, rest, secure) = (80, lowered.dropFirst(7), false)
        } else if lowered.hasPrefix("https://") {
            (defaultPort, rest, secure) = (443, lowered.dropFirst(8), true)
        } else {
            return nil
        }
        guard !rest.isEmpty, !rest.contains("/") else { return nil }
        return (normalized(String(rest), defaultPort: defaultPort), defaultPort, secure)
    }
}
