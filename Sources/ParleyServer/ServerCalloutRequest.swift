public import ParleyCallModel

/// A callout the server places itself and plays to (`POST /calling/v1/callouts` with
/// `ttsCallout` or `customCallout`; docs/rest.md, "Callouts"): whom to call, what the
/// call presents, and what the callee hears once it answers, then whether the server
/// hangs up. Read and checked from the request by `RESTAPI.serverCallout(from:)`.
public struct ServerCalloutRequest: Sendable, Hashable {
    /// Which callout method asked for it (for logs and docs; both run the same way).
    public enum Method: String, Sendable, Hashable {
        case ttsCallout, customCallout
    }

    /// One thing the callee hears or the call does once answered, in order.
    public enum Step: Sendable, Hashable {
        /// Text spoken by espeak-ng (`say`, or a ttsCallout's `text`).
        case say(text: String, locale: String?)
        /// A Sinch prompt string (a ttsCallout's `prompts`: `#tts[...]`, `#ssml[...]`,
        /// file ids, separated by `;`).
        case prompt(String, locale: String?)
        /// Files of the prompt directory (`playFiles`).
        case playFiles([String], locale: String?)
        /// RFC 4733 digits, `w` half a second of pause (`sendDtmf`, a callout's `dtmf`).
        case sendDTMF(String)
        /// A value later callbacks carry in `custom` (`setCookie`).
        case setCookie(key: String, value: String)
    }

    /// What the server does once every step ran.
    public enum Ending: String, Sendable, Hashable {
        /// Hangs up (BYE): a ttsCallout, or an `ace` whose action is `hangup`.
        case hangup
        /// Leaves the call up until the callee hangs up or its maximum length passes
        /// (an `ace` whose action is `continue`).
        case `continue`
    }

    public var method: Method
    /// A phone number (through the trunk) or a SIP address.
    public var destination: PartyAddress
    /// The CLI presented (E.164); nil: the application's default CLI.
    public var cli: String?
    /// The request's `custom`, echoed in its callbacks.
    public var custom: String?
    /// `x-` headers the INVITE carries (a customCallout's `connectSip` `callHeaders`).
    public var headers: [String: String]
    /// The most the call may last once answered (`maxDuration`); nil: the server's limit.
    public var maximumLength: Duration?
    /// How long it may ring (`connectPstn`'s `dialTimeout`); nil: the server's ring timeout.
    public var ringTimeout: Duration?
    public var steps: [Step]
    public var ending: Ending
    /// Whether the application's backend is sent an ACE when the callee answers, whose
    /// SVAML answer runs before `steps` (`enableAce`; a customCallout without `ace`).
    public var sendsACE: Bool
    /// Whether the application's backend is sent a DiCE when the call ends (`enableDice`;
    /// always for a customCallout).
    public var sendsDiCE: Bool

    public init(method: Method, destination: PartyAddress, cli: String? = nil, custom: String? = nil, headers: [String: String] = [:],
                maximumLength: Duration? = nil, ringTimeout: Duration? = nil, steps: [Step], ending: Ending = .hangup,
                sendsACE: Bool = false, sendsDiCE: Bool = false) {
        self.method = method
        self.destination = destination
        self.cli = cli
        self.custom = custom
        self.headers = headers
        self.maximumLength = maximumLength
        self.ringTimeout = ringTimeout
        self.steps = steps
        self.ending = ending
        self.sendsACE = sendsACE
        self.sendsDiCE = sendsDiCE
    }
}
