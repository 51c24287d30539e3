import ParleyCallCore
import ParleyCallModel
import ParleyVoiceAPI

/// Where a backend's `connectPstn` or `connectSip`, answered to the ICE of a call in over
/// SIP, bridges that call (docs/backend.md, "Calls in to a phone number or SIP address"):
/// the call out's address, the CLI it presents, the headers its INVITE carries and the
/// most it may last.
struct SVAMLBridgeRoute: Sendable, Hashable {
    /// The phone number or SIP address called out.
    var target: PartyAddress
    /// `connectPstn`'s or `connectSip`'s `cli`, E.164 (nil: the caller's number, else the
    /// application's default CLI).
    var cli: String?
    /// The call in's `x-` headers with the action's `callHeaders` over them.
    var headers: [String: String]
    /// The action's `maxDuration`, when it gave one above zero.
    var maximumLength: Duration?
    /// `connectPstn`'s `dialTimeout`, when it gave one above zero: how long the call out may ring.
    var ringTimeout: Duration?
    /// The callback's `to` for the DiCE.
    var destination: Destination

    /// The route of `action` for a call in with `headers`, or why it cannot be carried out
    /// (one line, for the log and the caller's refusal). Nil for any other action.
    init?(_ action: SVAMLAction, headers: [String: String]) throws(Refusal) {
        var headers = headers
        switch action {
        case .connectPstn(let connect):
            guard let number = connect.number else {
                throw Refusal("connectPstn for a call in needs a number to call")
            }
            target = .phone(number.e164)
            cli = connect.cli?.e164
            maximumLength = Self.seconds(connect.maxDurationSeconds)
            ringTimeout = Self.seconds(connect.dialTimeoutSeconds)
            destination = Destination(kind: .number, endpoint: number.e164)
        case .connectSip(let connect):
            var address = connect.destination.endpoint
            for scheme in ["sip:", "sips:"] where address.lowercased().hasPrefix(scheme) {
                address = String(address.dropFirst(scheme.count))
            }
            guard !address.isEmpty else { throw Refusal("connectSip needs a destination endpoint") }
            if let cli = connect.cli {
                guard let number = NumberRoute.e164(cli) else { throw Refusal("connectSip's cli is not a phone number") }
                self.cli = number
            } else {
                cli = nil
            }
            for header in connect.callHeaders {
                guard header.key.lowercased().hasPrefix("x-") else {
                    throw Refusal("connectSip's callHeaders are private SIP headers: \(header.key.prefix(64)) is not named x-...")
                }
                headers[header.key] = header.value
            }
            target = .sip(address)
            maximumLength = Self.seconds(connect.maxDurationSeconds)
            ringTimeout = nil
            destination = Destination(kind: .sip, endpoint: address)
        default:
            return nil
        }
        self.headers = headers
    }

    private static func seconds(_ value: Int64?) -> Duration? {
        guard let value, value > 0 else { return nil }
        return .seconds(min(value, 86_400))
    }

    /// Why an action cannot bridge the call.
    struct Refusal: Error, Sendable, Hashable {
        var message: String
        init(_ message: String) { self.message = message }
    }
}
