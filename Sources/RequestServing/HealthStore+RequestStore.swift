import HealthRequests
import HealthStore

/// The SQLite store serves the requests of every front (D-Bus, HTTP): it has each operation
/// `RequestStore` names, in the model's types. Declared once here, where the store and the
/// request layer meet, so that neither knows the other.
extension HealthStore: RequestStore {}
