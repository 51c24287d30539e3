import ParleySignaling

/// A static routing rule for one phone number (issue 12): the application the number
/// belongs to, and where a call to it goes when no backend answers for it. Given to
/// parleyd as `--sip-number NUMBER=KEY:user:ID`, `NUMBER=KEY:conference:ID`,
/// `NUMBER=KEY:number:+E164` or `NUMBER=KEY:sip:USER@DOMAIN` (bridged to a call out), or
/// `NUMBER=KEY` (the application's backend routes it), and looked up in a
/// `NumberRouteTable` when a call arrives from a SIP trunk or peer.
///
/// The number is kept in E.164 (`+` then 2 to 15 digits, the first not 0); a rule may
/// write it with or without the `+`, since trunks and backends spell numbers both ways.
public struct NumberRoute: Sendable, Hashable, CustomStringConvertible {
    /// Where a call to the number goes.
    public enum Target: Sendable, Hashable {
        /// The application's user with this id (rung on every device, pushed when offline).
        case user(String)
        /// The application's conference room with this id.
        case conference(String)
        /// Wherever the application's backend says (its ICE callback's answer).
        case backend
        /// This phone number (E.164), called out through the trunk and bridged.
        case phone(String)
        /// This SIP address (`user@domain`), called out and bridged.
        case sip(String)
    }

    /// Why a rule cannot be used: one line naming the rule's text and what is wrong with it.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
        init(_ rule: String, _ problem: String) {
            description = "\"\(NumberRoute.printable(rule))\" \(problem)"
        }
    }

    /// The number, E.164 with its `+`.
    public var number: String
    /// The key of the application the number belongs to.
    public var applicationKey: String
    public var target: Target

    /// A rule from its parts, unchecked (use `init(parsing:)` for text from outside).
    public init(number: String, applicationKey: String, target: Target) {
        self.number = number
        self.applicationKey = applicationKey
        self.target = target
    }

    /// Parses `NUMBER=KEY`, `NUMBER=KEY:user:ID`, `NUMBER=KEY:conference:ID`,
    /// `NUMBER=KEY:number:NUMBER` or `NUMBER=KEY:sip:ADDRESS`. Numbers may come with or
    /// without their `+`; the key is 1-64 bytes of `A-Z a-z 0-9 - _`, a user id 1-255 and a
    /// conference id 1-64 bytes of `A-Z a-z 0-9 - _ =`, a SIP address `user@domain` as
    /// `call.start` takes one (the protocol's rules).
    public init(parsing text: String) throws(ParseError) {
        guard text.utf8.count <= Self.maxRuleBytes else {
            throw ParseError(text, "is longer than \(Self.maxRuleBytes) bytes")
        }
        guard let equals = text.firstIndex(of: "=") else {
            throw ParseError(text, "is not NUMBER=KEY, NUMBER=KEY:user:ID, NUMBER=KEY:conference:ID, NUMBER=KEY:number:NUMBER or NUMBER=KEY:sip:ADDRESS")
        }
        let numberText = String(text[..<equals])
        guard let number = Self.e164(numberText) else {
            throw ParseError(text, "has \"\(Self.printable(numberText))\", which is not a phone number: 2 to 15 digits, the first not 0, with or without a leading +")
        }
        let parts = text[text.index(after: equals)...].split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        let key = String(parts[0])
        guard Self.isIdentifier(key, maxBytes: SignalingLimits.maxIdentifierBytes, allowingEquals: false) else {
            throw ParseError(text, "has application key \"\(Self.printable(key))\", which is not 1-64 bytes of A-Z a-z 0-9 - _")
        }
        let target: Target
        switch parts.count {
        case 1:
            target = .backend
        case 3 where parts[1] == "user":
            let id = String(parts[2])
            guard Self.isIdentifier(id, maxBytes: SignalingLimits.maxUserIDBytes, allowingEquals: true) else {
                throw ParseError(text, "has user id \"\(Self.printable(id))\", which is not 1-255 bytes of A-Z a-z 0-9 - _ =")
            }
            target = .user(id)
        case 3 where parts[1] == "conference":
            let id = String(parts[2])
            guard Self.isIdentifier(id, maxBytes: SignalingLimits.maxIdentifierBytes, allowingEquals: true) else {
                throw ParseError(text, "has conference id \"\(Self.printable(id))\", which is not 1-64 bytes of A-Z a-z 0-9 - _ =")
            }
            target = .conference(id)
        case 3 where parts[1] == "number":
            let numberText = String(parts[2])
            guard let destination = Self.e164(numberText) else {
                throw ParseError(text, "has \"\(Self.printable(numberText))\" to call, which is not a phone number: 2 to 15 digits, the first not 0, with or without a leading +")
            }
            target = .phone(destination)
        case 3 where parts[1] == "sip":
            let address = String(parts[2])
            if let problem = SignalingMessage.Address.sip(address).formatProblem {
                throw ParseError(text, "has SIP address \"\(Self.printable(address))\", which \(problem)")
            }
            target = .sip(address)
        default:
            throw ParseError(text, "does not end in KEY, KEY:user:ID, KEY:conference:ID, KEY:number:NUMBER or KEY:sip:ADDRESS")
        }
        self.init(number: number, applicationKey: key, target: target)
    }

    /// The rule as `--sip-number` takes it, with the number in E.164.
    public var description: String {
        switch target {
        case .backend: "\(number)=\(applicationKey)"
        case .user(let id): "\(number)=\(applicationKey):user:\(id)"
        case .conference(let id): "\(number)=\(applicationKey):conference:\(id)"
        case .phone(let destination): "\(number)=\(applicationKey):number:\(destination)"
        case .sip(let address): "\(number)=\(applicationKey):sip:\(address)"
        }
    }

    /// The longest rule text parsed, in bytes: a number, a key and the longest user id fit.
    public static let maxRuleBytes = 512

    /// `text` as E.164 (`+4615550101` from `+4615550101` or `4615550101`), or nil when it is
    /// not 2 to 15 digits, the first not 0, after an optional `+`.
    public static func e164(_ text: some StringProtocol) -> String? {
        let digits = text.utf8.first == UInt8(ascii: "+") ? text.utf8.dropFirst() : text.utf8[...]
        guard (2...15).contains(digits.count), digits.first != UInt8(ascii: "0"),
              digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return "+" + String(decoding: digits, as: UTF8.self)
    }

    private static func isIdentifier(_ text: String, maxBytes: Int, allowingEquals: Bool) -> Bool {
        (1...maxBytes).contains(text.utf8.count) && text.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "_") || (allowingEquals && byte == UInt8(ascii: "="))
        }
    }

    /// Text from a command line or file in a message: at most 80 characters, controls as `?`.
    static func printable(_ text: some StringProtocol) -> String {
        String(text.prefix(80).map { $0.isASCII && (($0.asciiValue ?? 0) < 0x20 || $0.asciiValue == 0x7F) ? "?" : $0 })
    }
}
