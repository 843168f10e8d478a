import CommandSupport

await CommandEntry.main(async: HRMDaemon.self, program: "hrmd")
