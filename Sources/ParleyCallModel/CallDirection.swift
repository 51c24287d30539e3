/// Where a call goes. Only app-to-app calls exist so far; phone, SIP and conference
/// calls add cases with their issues.
public enum CallDirection: String, Sendable, Hashable, CaseIterable, Codable {
    /// From one user of an application to another (both on the SDK).
    case appToApp
}
