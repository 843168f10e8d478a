import CLISupport

CommandEntry.main(HRMCtl.self, program: "hrmctl")
