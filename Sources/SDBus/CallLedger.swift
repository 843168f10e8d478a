/// The calls an exported object's callers have waiting for answers, per uid and in all, with
/// what their decoded arguments cost: what the loop checks before it decodes another call, so
/// that one user's flood is refused while the others' calls go on. Loop-thread state.
struct CallLedger {
    private struct Account {
        var calls = 0
        var bytes = 0
        var descriptors = 0
    }

    private var accounts: [UInt32: Account] = [:]
    private(set) var bytesInAll = 0
    private(set) var descriptorsInAll = 0

    /// Why a call of `uid` may not be taken now, or nil when it may.
    func refusal(of uid: UInt32, under limits: DBusCallLimits, interface: String) -> String? {
        let account = accounts[uid] ?? Account()
        if account.calls >= limits.callsPerUser {
            return "uid \(uid) has \(account.calls) calls to \(interface) waiting for answers, the most one user may have; wait for them"
        }
        if account.bytes >= limits.argumentBytesPerUser {
            return "the calls uid \(uid) has waiting hold about \(account.bytes) bytes of arguments, the most one user may have; wait for them"
        }
        if bytesInAll >= limits.argumentBytesInAll {
            return "the calls waiting hold about \(bytesInAll) bytes of arguments, the most the service keeps; try again"
        }
        if account.descriptors >= limits.descriptorsPerUser {
            return "the calls uid \(uid) has waiting hold \(account.descriptors) file descriptors, the most one user may have; wait for them"
        }
        if descriptorsInAll >= limits.descriptorsInAll {
            return "the calls waiting hold \(descriptorsInAll) file descriptors, the most the service keeps; try again"
        }
        return nil
    }

    /// A call of `uid` whose arguments cost `bytes` and hold `descriptors` was taken.
    mutating func take(_ uid: UInt32, bytes: Int, descriptors: Int) {
        accounts[uid, default: Account()].calls += 1
        accounts[uid, default: Account()].bytes += bytes
        accounts[uid, default: Account()].descriptors += descriptors
        bytesInAll += bytes
        descriptorsInAll += descriptors
    }

    /// A call of `uid` costing `bytes` and holding `descriptors` was answered.
    mutating func release(_ uid: UInt32, bytes: Int, descriptors: Int) {
        guard var account = accounts[uid] else { return }
        account.calls -= 1
        account.bytes -= bytes
        account.descriptors -= descriptors
        bytesInAll -= bytes
        descriptorsInAll -= descriptors
        accounts[uid] = account.calls > 0 ? account : nil
    }

    mutating func removeAll() {
        accounts.removeAll()
        bytesInAll = 0
        descriptorsInAll = 0
    }
}
