import ArgumentParser
@preconcurrency import Glibc

/// The entry point both programs share: parses the command line, runs the command, and keeps
/// errors to one line on stderr (`hrmctl: …`) with the documented exit statuses — usage
/// errors exit 64 without the usage dump; `--help` and `--version` print and exit 0.
public enum CommandEntry {
    /// Parses and runs a synchronous command tree, then exits.
    public static func main<Root: ParsableCommand>(_ root: Root.Type, program: String) -> Never {
        do {
            var command = try root.parseAsRoot()
            try command.run()
            exit(0)
        } catch {
            fail(root, program: program, error: error)
        }
    }

    /// Parses and runs a command tree whose commands may be asynchronous, then exits.
    public static func main<Root: ParsableCommand>(async root: Root.Type, program: String) async -> Never {
        do {
            var command = try root.parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            exit(0)
        } catch {
            fail(root, program: program, error: error)
        }
    }

    private static func fail<Root: ParsableCommand>(_ root: Root.Type, program: String, error: any Error) -> Never {
        let code = root.exitCode(for: error)
        if code == .success {
            // --help, --version: the full text, on stdout.
            print(root.fullMessage(for: error))
            exit(0)
        }
        let message = root.message(for: error)
        if !message.isEmpty {
            let hint = code == .validationFailure ? " (see '\(program) --help')" : ""
            printError(message + hint, program: program)
        }
        exit(code.rawValue)
    }
}
