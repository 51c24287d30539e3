/// Why a callback, an SVAML answer, a phone number or a signed request was refused.
///
/// Compare ``kind`` to tell errors apart (`error.kind == .unknownAction`); log
/// ``description``, one line such as
/// `SVAML refused (unknown action) at action.name: "transfer" is not an action`.
/// A call engine that asked a backend for SVAML ends the call with ``diceReason``.
public struct VoiceAPIError: Error, Sendable, Hashable, CustomStringConvertible {
    fileprivate enum Code: Hashable, Sendable {
        case tooLarge, malformedJSON, invalidField, missingAction, unknownAction, unknownInstruction, unknownEvent
        case invalidPhoneNumber, invalidTimestamp, invalidValue
        case malformedAuthorization, unknownApplication, badSignature, bodyDigestMismatch, missingTimestamp
        case staleTimestamp, cryptoFailure
    }

    /// What went wrong, without the details; compare with the static members.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        fileprivate let code: Code

        /// The body is larger than the limit (``VoiceAPILimits/maxBodyBytes``).
        public static let tooLarge = Kind(code: .tooLarge)
        /// The body is not one strict JSON object (RFC 8259, no duplicate keys, valid UTF-8).
        public static let malformedJSON = Kind(code: .malformedJSON)
        /// A field is missing, of the wrong type, out of range or too long.
        public static let invalidField = Kind(code: .invalidField)
        /// An SVAML answer without an `action` object.
        public static let missingAction = Kind(code: .missingAction)
        /// An SVAML `action.name` that is not one of the actions Parley carries out.
        public static let unknownAction = Kind(code: .unknownAction)
        /// An SVAML instruction `name` that is not one of the instructions Parley carries out.
        public static let unknownInstruction = Kind(code: .unknownInstruction)
        /// A callback whose `event` is not ice, ace, dice, pie or notify.
        public static let unknownEvent = Kind(code: .unknownEvent)
        /// Text that is not a phone number Parley can write in E.164.
        public static let invalidPhoneNumber = Kind(code: .invalidPhoneNumber)
        /// Text that is not an ISO 8601 date and time with a zone (`2014-09-24T10:59:41Z`).
        public static let invalidTimestamp = Kind(code: .invalidTimestamp)
        /// A value given to this module by its caller (a key, a secret, a method) breaks its
        /// format: the caller's mistake, not a peer's.
        public static let invalidValue = Kind(code: .invalidValue)
        /// An `Authorization` header that is not `Application {key}:{Base64 signature}`.
        public static let malformedAuthorization = Kind(code: .malformedAuthorization)
        /// The `Authorization` header names an application key the verifier does not know.
        public static let unknownApplication = Kind(code: .unknownApplication)
        /// The signature does not match the request signed with the application's secret.
        public static let badSignature = Kind(code: .badSignature)
        /// The `Content-MD5` header is not the Base64 MD5 of the body received.
        public static let bodyDigestMismatch = Kind(code: .bodyDigestMismatch)
        /// A signed request without an `x-timestamp` header.
        public static let missingTimestamp = Kind(code: .missingTimestamp)
        /// The `x-timestamp` is further from now than the verifier's replay window.
        public static let staleTimestamp = Kind(code: .staleTimestamp)
        /// OpenSSL failed to compute a digest.
        public static let cryptoFailure = Kind(code: .cryptoFailure)

        public var description: String {
            switch code {
            case .tooLarge: "too large"
            case .malformedJSON: "malformed JSON"
            case .invalidField: "invalid field"
            case .missingAction: "missing action"
            case .unknownAction: "unknown action"
            case .unknownInstruction: "unknown instruction"
            case .unknownEvent: "unknown event"
            case .invalidPhoneNumber: "invalid phone number"
            case .invalidTimestamp: "invalid timestamp"
            case .invalidValue: "invalid value"
            case .malformedAuthorization: "malformed authorization"
            case .unknownApplication: "unknown application"
            case .badSignature: "bad signature"
            case .bodyDigestMismatch: "body digest mismatch"
            case .missingTimestamp: "missing timestamp"
            case .staleTimestamp: "stale timestamp"
            case .cryptoFailure: "crypto failure"
            }
        }
    }

    /// What went wrong.
    public let kind: Kind
    /// The path of the offending field from the top of the document (`action.menus[1].id`),
    /// or the header's name; empty when the problem is the whole input.
    public let field: String
    /// What is wrong there, in words.
    public let reason: String

    /// An error of `kind` at `field`.
    public init(_ kind: Kind, field: String = "", _ reason: String) {
        self.kind = kind
        self.field = field
        self.reason = reason
    }

    /// The DiCE reason a call ends with when a backend's SVAML answer fails to decode:
    /// an answer that is JSON but not valid SVAML is `INVALIDSVAMLACTION`; one that is too
    /// large or not JSON at all is `CALLBACKERROR`, as a failed callback is.
    public var diceReason: DisconnectReason {
        switch kind.code {
        case .missingAction, .unknownAction, .unknownInstruction, .invalidField, .invalidPhoneNumber: .invalidSVAMLAction
        default: .callbackError
        }
    }

    public var description: String {
        let place = field.isEmpty ? "" : " at \(field)"
        return "voice API input refused (\(kind))\(place): \(reason)"
    }
}
