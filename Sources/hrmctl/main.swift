import CommandSupport

await CommandEntry.main(async: HRMCtl.self, program: "hrmctl")
