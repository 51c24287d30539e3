/// The times of a call, in milliseconds since the Unix epoch, named as in `call.ended`'s
/// `details`. Each is the first time the call reached that point; nil if it never did.
public struct CallTimes: Sendable, Hashable, Codable {
    public var startedTime: Int64
    public var progressedTime: Int64?
    public var rungTime: Int64?
    public var answeredTime: Int64?
    public var establishedTime: Int64?
    public var endedTime: Int64?

    public init(
        startedTime: Int64, progressedTime: Int64? = nil, rungTime: Int64? = nil, answeredTime: Int64? = nil,
        establishedTime: Int64? = nil, endedTime: Int64? = nil
    ) {
        self.startedTime = startedTime
        self.progressedTime = progressedTime
        self.rungTime = rungTime
        self.answeredTime = answeredTime
        self.establishedTime = establishedTime
        self.endedTime = endedTime
    }
}
