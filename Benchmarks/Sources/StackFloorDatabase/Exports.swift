// GRDB for stack-floor. An executable target that depends on GRDB's product directly
// makes a release build also link GRDB's dynamic library product, which cannot link against
// the static Swift runtime; through a library target, as hrmctl reaches GRDB, it does not.
@_exported import GRDB
