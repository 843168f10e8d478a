import Logging
import SDBus
import SensorFrames

/// Lets a strap go when hrmd stops: one `Device1.Disconnect`, sent although the strap's task is
/// cancelled (that is how a stop reaches it), its answer awaited for ``budget`` at most, and one
/// line in the log saying how it went. Each strap's connection tells its own strap, so all of
/// them are told at the same time and a stop costs one budget whatever their number.
///
/// The call is awaited, not sent with no reply expected: the answer is what the log reports,
/// and awaiting it keeps the bus connection open until the request has left hrmd (a connection
/// closed as the process exits might drop it unsent). When the budget is over, hrmd goes on
/// stopping; bluetoothd carries out a Disconnect it received whether its caller is still there
/// or not.
struct StopDisconnect {
    /// How long a stopping hrmd waits for bluetoothd's answer to Disconnect: 1.5 s.
    ///
    /// bluetoothd answers Disconnect only once the link is down, and it starts taking the link
    /// down 2 s after the request (`DISCONNECT_TIMER` in its src/device.c, time for profiles to
    /// let go), then waits for the strap to acknowledge the end of the link, which a strap out
    /// of range never does (the link then ends at its supervision timeout). Waiting for that
    /// answer with sd-bus's default 25 s timeout is what made a stop take 22-25 s. The answer
    /// adds nothing to what the request does, so the budget only has to cover bluetoothd
    /// answering at once (a strap whose link is already down, or the fake bluetoothd of the
    /// tests) and keeps SIGTERM-to-exit under 3 s, the most of the recording a `systemctl
    /// restart` may miss, with room for the final write of the pending samples.
    static let budget: Duration = .milliseconds(1500)

    let bus: DBusConnection
    let logger: Logger

    /// Asks bluetoothd to disconnect `device` (the strap `id`) and logs the outcome at info.
    func tell(_ device: Device, id: SensorID) async {
        do throws(DBusError) {
            _ = try await bus.callDespiteCancellation(
                destination: BlueZ.service, path: device.path, interface: BlueZ.deviceInterface, member: "Disconnect",
                timeout: Self.budget)
            logger.info("\(id): disconnected at stop")
        } catch where error.isNoReply {
            logger.info("\(id): no answer to Disconnect within \(Self.budgetInWords); leaving it to bluetoothd")
        } catch {
            logger.info("\(id): Disconnect at stop failed (\(BlueZFailure(error).reason)); leaving it to bluetoothd")
        }
    }

    /// ``budget`` as the log says it ("1.5 s").
    static var budgetInWords: String {
        let (seconds, attoseconds) = budget.components
        return "\(Double(seconds) + Double(attoseconds) / 1e18) s"
    }
}
