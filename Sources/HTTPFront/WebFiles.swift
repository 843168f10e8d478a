import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The dashboard's pages and files: `/` (the dashboard and, with `?view=group`, the group
/// view), `/overlay`, `/day`, `/workout`, `/static/…` from the web directory, and `/javascript/…` from
/// Debian's browser libraries. Nothing else of the file system is reachable: paths are
/// checked before a file is opened, and only regular files are served.
struct WebFiles: RouterMiddleware {
    typealias Context = FrontContext

    let webDirectory: String?
    let javascriptDirectory: String

    private static let pages = ["/": "index.html", "/overlay": "overlay.html", "/day": "day.html", "/workout": "workout.html"]
    /// Files served at most this large.
    private static let maxFileBytes = 8 << 20

    func handle(_ request: Request, context: FrontContext, next: (Request, FrontContext) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head else { return try await next(request, context) }
        let path = request.uri.path
        if let page = Self.pages[path] {
            guard let webDirectory else { return APIResponses.error(.notFound, "hrmd has no web directory (see [http] web in hrmd.conf)") }
            return try file(webDirectory + "/" + page, name: page)
        }
        if path.hasPrefix("/static/"), let webDirectory {
            return try file(webDirectory + "/static/" + Self.checked(path.dropFirst("/static/".count)), name: path)
        }
        if path.hasPrefix("/javascript/") {
            return try file(javascriptDirectory + "/" + Self.checked(path.dropFirst("/javascript/".count)), name: path)
        }
        return try await next(request, context)
    }

    /// A relative path without `..`, `.` or empty parts, of safe characters only.
    static func checked(_ relative: Substring) throws -> String {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.isEmpty, parts.allSatisfy({ part in
            !part.isEmpty && part != "." && part != ".." && !part.hasPrefix(".")
                && part.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-+@".unicodeScalars.contains($0)) }
        }) else { throw HTTPError(.notFound) }
        return parts.joined(separator: "/")
    }

    private func file(_ path: String, name: String) throws -> Response {
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, Int(status.st_size) <= Self.maxFileBytes,
              let contents = FileManager.default.contents(atPath: path)
        else { throw HTTPError(.notFound) }
        var headers: HTTPFields = [
            .contentType: Self.contentType(of: path), .cacheControl: "no-cache", HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            HTTPField.Name("Referrer-Policy")!: "no-referrer",
        ]
        if path.hasSuffix(".html") {
            headers[HTTPField.Name("Content-Security-Policy")!] =
                "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'"
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: contents)))
    }

    private static func contentType(of path: String) -> String {
        switch (path as NSString).pathExtension {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "json": "application/json"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "ico": "image/x-icon"
        default: "application/octet-stream"
        }
    }
}
