import CLISupport

await CommandEntry.main(async: HRMDaemon.self, program: "hrmd")
