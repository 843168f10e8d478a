import ArgumentParser
import CommandSupport
import HealthModel
import HealthRequests
import JSONLines
import Timestamps

/// `hrmctl auth token`: the bearer tokens of hrmd's HTTP front, each acting as one source.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Make, list and revoke the tokens of hrmd's HTTP front.",
        discussion: """
            A token lets a browser page, a script or a stream overlay use hrmd's HTTP
            front (hrmd --http) as one source, USER/APP, with exactly that source's
            authorization: what "hrmctl auth grant USER/APP TYPE --read" allows it
            reads, else only its own samples. A grant or revoke applies from its next
            request. The token is printed once, as the last line; the store keeps only a
            digest of it. Through the store service, tokens need a manager of the store.
            """,
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Make a token acting as a source; prints it once, as the last line.",
            discussion: """
                Examples:
                  hrmctl auth token create mary/dashboard
                  hrmctl auth token create mary/overlay --expires 30d
                  hrmctl auth grant mary/dashboard heart-rate --read
                """)
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: ArgumentHelp("The source the token acts as.", valueName: "USER/APP")) var source: String
        @Option(help: ArgumentHelp("Expire after this long (60s…10y as 90s, 15m, 2h, 30d, 8w; default never).", valueName: "duration"))
        var expires: String?
        @Flag(help: "Also let the token make a manager's requests (list and answer authorization requests).") var manager = false

        func validate() throws {
            guard source != HealthSource.daemonName, SourceNames.isValid(source) else {
                throw ValidationError("bad source '\(source)': a token acts as USER/APP, with APP matching [a-z0-9][a-z0-9._-]{0,63}")
            }
            _ = try lifetime()
        }

        func lifetime() throws(ValidationError) -> Int64? {
            guard let expires else { return nil }
            guard let seconds = TimeExpression.seconds(in: expires), seconds >= 60, seconds <= Double(CreateAccessToken.longestLifetime) else {
                throw ValidationError("--expires takes 60s to 10 years, such as 90m, 12h, 30d or 8w")
            }
            return Int64(seconds.rounded())
        }

        func run() async throws {
            try await reportingFailures {
                let issued = try await storeOptions.access(.createIfMissing).issueAccessToken(
                    source: source, manager: manager, lifetime: try lifetime())
                let until = issued.record.expires.map { "until \(RFC3339.string(from: $0))" } ?? "without expiry"
                print("token \(issued.record.id) acts as \(source)\(manager ? " (manager)" : "") \(until); it is shown only now:")
                print(issued.token)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the tokens (never their secrets).")
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table

        func run() async throws {
            try await reportingFailures {
                let tokens = try await storeOptions.access().accessTokens()
                let now = Timestamp.now()
                func state(_ token: AccessTokenRecord) -> String {
                    token.revoked != nil ? "revoked" : token.isValid(at: now) ? "valid" : "expired"
                }
                func time(_ stamp: Timestamp?) -> String { stamp.map { RFC3339.string(from: $0) } ?? "" }
                switch output {
                case .json:
                    for token in tokens {
                        printJSONLine(.object([
                            ("id", .string(token.id)), ("source", .string(token.source)), ("manager", .bool(token.manager)),
                            ("created", .string(RFC3339.string(from: token.created))), ("expires", .optional(token.expires.map { RFC3339.string(from: $0) })),
                            ("revoked", .optional(token.revoked.map { RFC3339.string(from: $0) })), ("state", .string(state(token))),
                        ]))
                    }
                case .csv:
                    print("id,source,manager,created,expires,revoked,state")
                    for token in tokens {
                        print(csvRow([
                            token.id, token.source, token.manager ? "yes" : "no", RFC3339.string(from: token.created), time(token.expires),
                            time(token.revoked), state(token),
                        ]))
                    }
                case .table:
                    guard !tokens.isEmpty else { print("no access tokens"); return }
                    printTable(
                        header: ["ID", "SOURCE", "MANAGER", "CREATED", "EXPIRES", "STATE"],
                        rows: tokens.map {
                            [$0.id, $0.source, $0.manager ? "yes" : "no", RFC3339.string(from: $0.created), time($0.expires).isEmpty ? "never" : time($0.expires), state($0)]
                        })
                }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke",
            abstract: "Revoke a token by its id, or every token of a source.",
            discussion: "Examples: hrmctl auth token revoke 3k2m9q7x4b2a; hrmctl auth token revoke mary/overlay")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: ArgumentHelp("A token's id (from list) or a source.", valueName: "ID|SOURCE")) var token: String

        func run() async throws {
            try await reportingFailures {
                let revoked = try await storeOptions.access(.existingOnly).revokeAccessTokens(matching: token)
                guard revoked > 0 else { throw CommandFailure("no valid token has the id or source '\(token)'", status: .usage) }
                print("revoked \(revoked) token\(revoked == 1 ? "" : "s")")
            }
        }
    }
}
