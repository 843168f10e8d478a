import HealthModel
import CommandSupport
import HealthStore

/// Runs a store call, turning its error into a one-line failure.
func storeFailure<T>(_ body: () throws -> T) throws(CommandFailure) -> T {
    do {
        return try body()
    } catch let failure as CommandFailure {
        throw failure
    } catch let error as HealthStoreError {
        switch error {
        case .unknownType, .incompatibleUnit: throw CommandFailure("\(error)", status: .usage)
        case .missing: throw CommandFailure("\(error)", status: .noInput)
        case .permissionDenied: throw CommandFailure("\(error)", status: .permissionDenied)
        default: throw CommandFailure("\(error)", status: .failure)
        }
    } catch {
        throw CommandFailure("\(error)", status: .failure)
    }
}
