/// How many sources with authorization records one owner (the sources whose names start with
/// `owner`, such as `mary/`) and the whole store may have: what keeps a program that requests
/// under ever new names from growing the store and the lists a manager reads.
public struct RequestQuota: Sendable, Hashable {
    /// The prefix of the owner's source names (`mary/`), compared by characters.
    public var owner: String
    public var perOwner: Int
    public var inAll: Int

    public init(owner: String, perOwner: Int, inAll: Int) {
        self.owner = owner
        self.perOwner = perOwner
        self.inAll = inAll
    }
}
