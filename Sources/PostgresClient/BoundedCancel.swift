import CPostgreSQL
import Glibc

/// A cancel request for what a connection runs, given up after a bound.
///
/// libpq's PQcancel connects, sends the request and then waits, without a timeout, for the
/// server to close the socket: against a peer that accepts and never answers (a blackholed
/// proxy) it never returns. PQcancel is async-signal-safe by design, so it runs here in a
/// forked child, which is killed when the bound passes: nothing is left behind either way.
enum BoundedCancel {
    static func cancel(_ connection: OpaquePointer, pq: LibPQ, within bound: Duration) {
        guard let token = pq.getCancel(connection) else { return }
        defer { pq.freeCancel(token) }
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: 256)
        defer { errorBuffer.deallocate() }
        let child = fork()
        if child == 0 {
            let sent = pq.cancel(token, errorBuffer, 256)
            _exit(sent == 1 ? 0 : 1)
        }
        guard child > 0 else { return }
        let deadline = ContinuousClock.now.advanced(by: bound)
        var status: Int32 = 0
        while true {
            let reaped = waitpid(child, &status, WNOHANG)
            if reaped == child || (reaped < 0 && errno != EINTR) { return }
            if ContinuousClock.now >= deadline { break }
            usleep(5_000)
        }
        kill(child, SIGKILL)
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
    }
}
