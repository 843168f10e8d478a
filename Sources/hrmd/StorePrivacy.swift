@preconcurrency import Glibc
import Logging

/// Keeps the served store's files private to the service's user: a store created by an
/// older hrmd (whose directory was group-writable) is tightened to 0600 when served.
enum StorePrivacy {
    static func tighten(storePath: String, logger: Logger) {
        for path in [storePath, storePath + "-wal", storePath + "-shm"] {
            var status = stat()
            guard stat(path, &status) == 0, status.st_mode & 0o077 != 0 else { continue }
            if chmod(path, 0o600) == 0 {
                logger.notice("made \(path) private to the service's user (mode 0600)")
            } else {
                logger.warning("cannot make \(path) private (chmod: \(String(cString: strerror(errno)))); other users may open it")
            }
        }
    }
}
