import CLISupport

await CommandEntry.main(async: HRMCtl.self, program: "hrmctl")
