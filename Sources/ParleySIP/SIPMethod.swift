/// A SIP request method (RFC 3261 §7.1, §27.4). Methods are case-sensitive tokens; the ones
/// Parley acts on are named, any other token is carried as `.extension` so a request with
/// a method we do not know still parses and can be answered 405 or 501.
public enum SIPMethod: Sendable, Hashable, CustomStringConvertible {
    case invite, ack, bye, cancel, options, register, info, update, prack, refer, notify, subscribe, message
    case `extension`(String)

    /// The method for a token as it appears on the wire (case-sensitive, RFC 3261 §7.1).
    public init(token: String) {
        switch token {
        case "INVITE": self = .invite
        case "ACK": self = .ack
        case "BYE": self = .bye
        case "CANCEL": self = .cancel
        case "OPTIONS": self = .options
        case "REGISTER": self = .register
        case "INFO": self = .info
        case "UPDATE": self = .update
        case "PRACK": self = .prack
        case "REFER": self = .refer
        case "NOTIFY": self = .notify
        case "SUBSCRIBE": self = .subscribe
        case "MESSAGE": self = .message
        default: self = .extension(token)
        }
    }

    /// The token written on the wire.
    public var token: String {
        switch self {
        case .invite: "INVITE"
        case .ack: "ACK"
        case .bye: "BYE"
        case .cancel: "CANCEL"
        case .options: "OPTIONS"
        case .register: "REGISTER"
        case .info: "INFO"
        case .update: "UPDATE"
        case .prack: "PRACK"
        case .refer: "REFER"
        case .notify: "NOTIFY"
        case .subscribe: "SUBSCRIBE"
        case .message: "MESSAGE"
        case .extension(let token): token
        }
    }

    public var description: String { token }
}
