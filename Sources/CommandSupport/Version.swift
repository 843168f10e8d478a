/// The version both programs report (`--version`) and record as the source version.
public enum HRMVersion {
    public static let current = "0.1.0"
}
