import HealthRequests
import JSONLines
import ArgumentParser
import StoreTransport
import CommandSupport
import Foundation
import HealthClient
import HealthModel
import HealthStore
import HealthWire

/// `hrmctl auth`: the user's answer to which source may write which type.
struct AuthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auth",
        abstract: "Grant, revoke and list which sources may store which types.",
        discussion: """
            As in HealthKit, each source (a program such as "hrmd") needs the user's
            permission for each type it writes. A source that asked shows as
            notDetermined until answered. A grant or revoke applies from the source's
            next write; revoking keeps what is stored. With --read, the answer is about
            reading instead: a program that reads the store as a source needs it (the
            user's own hrmctl reads everything).

            Through the store service (the default), answering and listing need a
            manager of the store: root, a member of group hrmd, or whom polkit allows
            org.hrmd.health.manage. "hrmctl auth requests" shows what programs asked for
            and the command that answers each, like HealthKit's permission sheet.
            """,
        subcommands: [Grant.self, Revoke.self, List.self, Requests.self, TokenCommand.self]
    )

    struct Grant: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "grant",
            abstract: "Allow a source to store types (creates the store if needed).",
            discussion: "Example: hrmctl auth grant hrmd heart-rate rr-interval")
        @OptionGroup var answer: AuthAnswer

        func validate() throws { _ = try answer.sampleTypes() }

        func run() async throws {
            try await answer.apply(.sharingAuthorized, opening: .createIfMissing, saying: "may now")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke",
            abstract: "Stop a source from storing types; what it stored is kept.",
            discussion: "Example: hrmctl auth revoke hrmd heart-rate")
        @OptionGroup var answer: AuthAnswer

        func validate() throws { _ = try answer.sampleTypes() }

        func run() async throws {
            try await answer.apply(.sharingDenied, opening: .existingOnly, saying: "may no longer")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List every source's requests and answers.")
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table

        func run() async throws {
            try await reportingFailures {
                let entries = try await storeOptions.access().authorizations()
                switch output {
                case .json:
                    for entry in entries {
                        printJSONLine(.object([
                            ("source", .string(entry.source)), ("type", .string(entry.type.identifier)),
                            ("share", .string(entry.share.description)), ("read", .string(entry.read.description)),
                            ("verified", .bool(VerifiedApp.isVerified(source: entry.source))),
                        ]))
                    }
                case .csv:
                    print("source,type,share,read")
                    for entry in entries {
                        print(csvRow([entry.source, entry.type.identifier, entry.share.description, entry.read.description]))
                    }
                case .table:
                    guard !entries.isEmpty else { print("no authorization requests yet"); return }
                    printTable(
                        header: ["SOURCE", "TYPE", "SHARE", "READ"],
                        rows: entries.map { [markedSource($0.source), $0.type.identifier, $0.share.description, $0.read.description] })
                    printVerifiedNote(entries.map(\.source))
                }
            }
        }
    }

    struct Requests: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "requests",
            abstract: "List the requests nobody has answered yet, with the command that answers each.",
            discussion: """
                One row per source, type and access (share: to store the type; read: to
                read it) that a program asked for and the user has not answered: the
                permission sheet of HealthKit, as commands. The same from the service
                and from a store file (--store).
                """)
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "table, json (one object per line) or csv.") var output: OutputFormat = .table

        func run() async throws {
            try await reportingFailures {
                let requests = try await storeOptions.access().pendingRequests()
                func answer(_ verb: String, _ request: AuthorizationRequest) -> String {
                    (["hrmctl", "auth", verb, shellWord(request.source), request.type.identifier] + (request.access == .read ? ["--read"] : []))
                        .joined(separator: " ")
                }
                switch output {
                case .json:
                    for request in requests {
                        printJSONLine(.object([
                            ("source", .string(request.source)), ("type", .string(request.type.identifier)),
                            ("access", .string(request.access.rawValue)), ("grant", .string(answer("grant", request))),
                            ("deny", .string(answer("revoke", request))),
                            ("verified", .bool(VerifiedApp.isVerified(source: request.source))),
                        ]))
                    }
                case .csv:
                    print("source,type,access,grant,deny")
                    for request in requests {
                        print(csvRow([
                            request.source, request.type.identifier, request.access.rawValue, answer("grant", request), answer("revoke", request),
                        ]))
                    }
                case .table:
                    guard !requests.isEmpty else { print("no pending authorization requests"); return }
                    printTable(
                        header: ["SOURCE", "TYPE", "ACCESS", "ALLOW WITH", "DENY WITH"],
                        rows: requests.map {
                            [markedSource($0.source), $0.type.identifier, $0.access.rawValue, answer("grant", $0), answer("revoke", $0)]
                        })
                    printVerifiedNote(requests.map(\.source))
                }
            }
        }
    }
}

/// A source as the tables show it: a verified one (its application named by a label the
/// caller cannot choose: Flatpak, snap, systemd unit) marked with `*`.
func markedSource(_ source: String) -> String {
    VerifiedApp.isVerified(source: source) ? source + " *" : source
}

/// The tables' footnote on `*`, when a source carries it.
func printVerifiedNote(_ sources: [String]) {
    if sources.contains(where: VerifiedApp.isVerified(source:)) {
        print("* verified: the application is named by its Flatpak app id, snap or systemd unit, not by itself")
    }
}

/// `text` as one shell word: as is when it is plain, else in single quotes.
func shellWord(_ text: String) -> String {
    let plain = !text.isEmpty && text.unicodeScalars.allSatisfy {
        ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "/._-:@+=,".unicodeScalars.contains($0)
    }
    return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// What grant and revoke share: the source, the types, and whether the answer is about
/// reading.
struct AuthAnswer: ParsableArguments {
    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "The source, such as hrmd.") var source: String
    @Argument(help: "Types, or 'all' (see hrmctl types).") var types: [String]
    @Flag(help: "Answer for reading the types instead of storing them.") var read = false

    func sampleTypes() throws(ValidationError) -> [SampleType] {
        // Events are hrmd's alone to store: 'all' leaves them out of another source's share.
        if types == ["all"] { return SampleType.all.filter { read || $0.mayBeShared(by: source) } }
        return try types.map { name throws(ValidationError) in
            guard let type = SampleType(identifier: name) else {
                throw ValidationError("unknown type '\(name)' (known: \(SampleType.all.map(\.identifier).joined(separator: ", ")), all)")
            }
            return type
        }
    }

    /// Records `status` for every type and says so, one line per type.
    func apply(_ status: AuthorizationStatus, opening mode: HealthStore.OpenMode, saying verb: String) async throws {
        try await reportingFailures {
            guard !source.isEmpty else { throw CommandFailure("the source name is empty", status: .usage) }
            let store = try storeOptions.access(mode)
            for type in try sampleTypes() {
                try await store.setAuthorization(status, source: source, type: type, access: read ? .read : .share)
                print("\(source) \(verb) \(read ? "read" : "store") \(type.identifier)")
            }
        }
    }
}
