import ParleyWireCore
import ParleySignaling

/// Reads and checks a Parley push payload, sans-I/O: the push's data, the stored
/// registration and the time in; a `ParleyNotificationResult` out.
///
/// The payload's `parley` member is a compact JWS, HS256 under the registration's push
/// key, with header `{"alg":"HS256","typ":"parley-push"}` and claims `v` (1), `callId`,
/// `appKey`, `deviceId`, `from` (`{kind, address}`), `video`, `headers`, `iat`, `exp`
/// (ms since the epoch), and `name` (the caller's display name) when the caller set one.
/// See docs/push-and-callkit.md.
struct PushPayloadVerifier: Sendable {
    /// The data member that carries the JWS.
    static let payloadKey = "parley"
    /// The largest JWS accepted (as `push.relay`'s `payload`).
    static let maxLength = 4096
    /// The deepest nesting the header or claims may have.
    static let maxJSONDepth = 16

    let applicationKey: String
    let userID: String
    let deviceID: String
    /// The platform's HMAC-SHA256 (`ParleyEngines.hmacSHA256`).
    let hmacSHA256: @Sendable (_ key: [UInt8], _ message: [UInt8]) -> [UInt8]?

    /// A checked payload: the claims, whether every check passed, and the JWS to relay.
    struct Verdict: Sendable, Hashable {
        var result: ParleyNotificationResult
        /// The JWS as received, for `push.relay`.
        var token: String?
        /// Why it is not valid, for errors and logs.
        var problem: String?
    }

    /// The JWS in a push's data, if it has one: `parley` as a string (APNs, FCM data).
    static func token(in payload: [AnyHashable: Any]) -> String? {
        payload[AnyHashable(payloadKey)] as? String
    }

    func verify(_ payload: [AnyHashable: Any], registration: ParleyPushRegistration?, nowMilliseconds: Int64) -> Verdict {
        guard let token = Self.token(in: payload) else {
            return Verdict(result: .init(isCall: false, isValid: false, callResult: nil), token: nil, problem: "no \"\(Self.payloadKey)\" string in the payload")
        }
        return verify(token: token, registration: registration, nowMilliseconds: nowMilliseconds)
    }

    func verify(token: String, registration: ParleyPushRegistration?, nowMilliseconds: Int64) -> Verdict {
        func invalid(_ problem: String) -> Verdict {
            Verdict(result: .init(isCall: true, isValid: false, callResult: nil), token: token, problem: problem)
        }
        let bytes = Array(token.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maxLength else { return invalid("a payload of \(bytes.count) bytes (1-\(Self.maxLength) allowed)") }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else { return invalid("not a compact JWS (three non-empty parts)") }
        guard let registration else { return invalid("no push registration on this device: nothing to verify with") }
        guard registration.userId == userID, registration.deviceId == deviceID else {
            return invalid("the stored registration is for another user or device")
        }
        let key: [UInt8], header: [UInt8], claimsBytes: [UInt8], signature: [UInt8]
        do {
            key = try Base64.decodeURL(registration.pushKey)
            header = try Base64.decode(parts[0], url: true)
            claimsBytes = try Base64.decode(parts[1], url: true)
            signature = try Base64.decode(parts[2], url: true)
        } catch {
            return invalid("\(error)")
        }
        guard key.count == 32 else { return invalid("the stored push key is not 32 bytes") }
        // The signature first: nothing in an unsigned payload is worth reading.
        let signingInput = Array(bytes[0..<(parts[0].count + 1 + parts[1].count)])
        guard let expected = hmacSHA256(key, signingInput), signature.count == 32,
              Self.constantTimeEqual(expected, signature) else {
            return invalid("the signature does not match this device's push key")
        }
        let headerJSON: JSONValue, claims: JSONValue
        do {
            headerJSON = try StrictJSONParser.parse(header, maxDepth: Self.maxJSONDepth)
            claims = try StrictJSONParser.parse(claimsBytes, maxDepth: Self.maxJSONDepth)
        } catch {
            return invalid("invalid JSON at byte \(error.offset): \(error.reason)")
        }
        guard headerJSON["alg"]?.stringValue == "HS256", headerJSON["typ"]?.stringValue == "parley-push",
              headerJSON["crit"] == nil else {
            return invalid("the header is not {\"alg\":\"HS256\",\"typ\":\"parley-push\"}")
        }
        guard claims["v"]?.integerValue == 1 else { return invalid("claim v is not 1") }
        guard let callID = claims["callId"]?.stringValue, Self.isCallID(callID) else { return invalid("claim callId is not a lower-case UUID") }
        guard let from = claims["from"], let kind = from["kind"]?.stringValue.flatMap(SignalingMessage.Address.Kind.init(rawValue:)),
              let caller = from["address"]?.stringValue, !caller.isEmpty else {
            return invalid("claim from is not {\"kind\":\"user\"|\"phone\"|\"sip\"|\"conference\",\"address\":...}")
        }
        guard let video = claims["video"]?.boolValue else { return invalid("claim video is not a boolean") }
        var headers: [String: String] = [:]
        if let member = claims["headers"] {
            guard case .object(let values) = member else { return invalid("claim headers is not an object") }
            for header in values.members {
                guard let text = header.value.stringValue else { return invalid("header \(header.key) is not a string") }
                headers[header.key] = text
            }
        }
        var displayName: String?
        if let member = claims["name"] {
            // The server never signs more than 255 bytes; a longer one is not Parley's.
            guard let text = member.stringValue, text.utf8.count <= 255 else { return invalid("claim name is not a string of at most 255 bytes") }
            displayName = text
        }
        guard let issued = claims["iat"]?.integerValue, let expires = claims["exp"]?.integerValue, expires >= issued else {
            return invalid("claims iat and exp are not times (ms) with exp >= iat")
        }
        let timedOut = nowMilliseconds >= expires
        let call = ParleyCallNotificationResult(callId: callID, remoteUserId: caller, isVideoOffered: video,
                                                isTimedOut: timedOut, headers: headers, displayName: displayName,
                                                remoteKind: ParleyCallRemoteKind(kind))
        guard claims["appKey"]?.stringValue == applicationKey else {
            return invalid("the push is for another application")
        }
        guard claims["deviceId"]?.stringValue == deviceID else {
            return invalid("the push is for another device")
        }
        if timedOut {
            // Genuine but stale: report the call so the app can show it as missed.
            return Verdict(result: .init(isCall: true, isValid: false, callResult: call), token: token,
                           problem: "the push expired \(nowMilliseconds - expires) ms ago")
        }
        return Verdict(result: .init(isCall: true, isValid: true, callResult: call), token: token, problem: nil)
    }

    /// Whether `a` and `b` are equal, in a time that depends only on their lengths (a
    /// signature compared byte by byte with an early exit leaks how much of it matched).
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// Whom a JWS says it is for (its `appKey` and `deviceId` claims), read WITHOUT
    /// verifying it: only to find the registration to verify it with. Nil if the claims
    /// cannot be read.
    static func addressee(of token: String) -> (applicationKey: String, deviceID: String)? {
        let parts = Array(token.utf8).split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, token.utf8.count <= maxLength,
              let claimsBytes = try? Base64.decode(parts[1], url: true),
              let claims = try? StrictJSONParser.parse(claimsBytes, maxDepth: maxJSONDepth),
              let applicationKey = claims["appKey"]?.stringValue, let deviceID = claims["deviceId"]?.stringValue,
              !deviceID.isEmpty, deviceID.utf8.count <= 128, !deviceID.contains("/") else { return nil }
        return (applicationKey, deviceID)
    }

    static func isCallID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) else { return false }
            }
        }
        return true
    }
}
