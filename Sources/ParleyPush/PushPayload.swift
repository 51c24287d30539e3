public import ParleySignaling
internal import ParleyCrypto
internal import ParleyWireCore

/// The signed payload of a call push: the value of the push data's `parley` key, a
/// compact JWS (HS256, `typ` `parley-push`) keyed with the device's `pushKey`.
///
/// A device verifies it before it has any connection (so a forged or stale push is
/// dropped), and hands it back in `push.relay`, where the server verifies it again with
/// the key it stored for that device. See docs/push.md for the exact format.
public struct PushPayload: Sendable, Hashable {
    /// The payload format version (1).
    public var version: Int
    /// The call's id.
    public var callID: String
    /// The application key the call belongs to.
    public var appKey: String
    /// The device the push was sent to.
    public var deviceID: String
    /// The caller.
    public var from: SignalingMessage.Address
    /// Whether the caller offered video.
    public var video: Bool
    /// The caller's custom headers.
    public var headers: [String: String]
    /// When the push was made, milliseconds since the Unix epoch.
    public var issuedAt: Int64
    /// When the call stops ringing (issuedAt + ring timeout), milliseconds since the epoch.
    public var expiresAt: Int64
    /// The caller's display name (claim `name`), when the caller set one: what the callee's
    /// system call screen shows before any connection exists.
    public var callerDisplayName: String?

    public init(
        callID: String, appKey: String, deviceID: String, from: SignalingMessage.Address, video: Bool = false,
        headers: [String: String] = [:], issuedAt: Int64, expiresAt: Int64, callerDisplayName: String? = nil
    ) {
        self.version = 1
        self.callID = callID
        self.appKey = appKey
        self.deviceID = deviceID
        self.from = from
        self.video = video
        self.headers = headers
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.callerDisplayName = callerDisplayName
    }

    static let headerJSON = #"{"alg":"HS256","typ":"parley-push"}"#

    /// The claims JSON: compact, no duplicate keys, members in the documented order.
    public var claimsJSON: String {
        var from = JSONObject()
        from.append("kind", self.from.kind.rawValue)
        from.append("address", self.from.address)
        // Keys sorted, so equal maps serialize equally.
        var headers = JSONObject()
        for key in self.headers.keys.sorted() { headers.append(key, self.headers[key]!) }
        var json = JSONObject()
        json.append("v", Int64(version))
        json.append("callId", callID)
        json.append("appKey", appKey)
        json.append("deviceId", deviceID)
        json.append("from", .object(from))
        json.append("video", video)
        json.append("headers", .object(headers))
        json.append("iat", issuedAt)
        json.append("exp", expiresAt)
        if let callerDisplayName { json.append("name", callerDisplayName) }
        return JSONWriter.string(json)
    }

    /// Signs the payload with a device's push key and returns the compact JWS.
    public func signed(pushKey: [UInt8]) throws(PushError) -> String {
        let input = Base64.encodeURL(Array(Self.headerJSON.utf8)) + "." + Base64.encodeURL(Array(claimsJSON.utf8))
        do {
            let mac = try Digest.hmac(.sha256, key: pushKey, Array(input.utf8))
            return input + "." + Base64.encodeURL(mac)
        } catch {
            throw PushError(.crypto, "signing the push payload: \(error)")
        }
    }

    /// Reads the claims of a JWS without checking anything, e.g. to find which device's
    /// key to verify it with. Never trust the result before ``verified(_:pushKey:now:)``.
    public static func unverifiedClaims(_ jws: String) throws(PushError) -> PushPayload {
        let parts = try split(jws)
        return try decodeClaims(parts.claims)
    }

    /// Verifies the signature with `pushKey`, then the header, the format and the expiry
    /// at `now` (milliseconds since the epoch). Any failure is ``PushError/Kind/payloadInvalid``.
    public static func verified(_ jws: String, pushKey: [UInt8], now: Int64) throws(PushError) -> PushPayload {
        let parts = try split(jws)
        let input = jws.utf8.prefix(parts.signingInputLength)
        let expected: [UInt8]
        do { expected = try Digest.hmac(.sha256, key: pushKey, Array(input)) } catch {
            throw PushError(.crypto, "verifying the push payload: \(error)")
        }
        guard Digest.constantTimeEqual(expected, parts.signature) else { throw PushError(.payloadInvalid, "bad signature") }
        guard parts.header == Array(headerJSON.utf8) else { throw PushError(.payloadInvalid, "unexpected JWS header") }
        let payload = try decodeClaims(parts.claims)
        guard payload.version == 1 else { throw PushError(.payloadInvalid, "unknown payload version \(payload.version)") }
        guard now < payload.expiresAt else { throw PushError(.payloadInvalid, "expired") }
        return payload
    }

    private struct Parts {
        var header: [UInt8]
        var claims: [UInt8]
        var signature: [UInt8]
        var signingInputLength: Int
    }

    private static func split(_ jws: String) throws(PushError) -> Parts {
        guard jws.utf8.count <= SignalingLimits.maxPushPayloadBytes else { throw PushError(.payloadInvalid, "too large") }
        let pieces = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count == 3 else { throw PushError(.payloadInvalid, "not a compact JWS") }
        do {
            return Parts(
                header: try Base64.decodeURL(pieces[0]), claims: try Base64.decodeURL(pieces[1]),
                signature: try Base64.decodeURL(pieces[2]),
                signingInputLength: pieces[0].utf8.count + 1 + pieces[1].utf8.count)
        } catch {
            throw PushError(.payloadInvalid, "bad base64url: \(error)")
        }
    }

    /// The deepest nesting the claims may have.
    static let maxJSONDepth = 16

    private static func decodeClaims(_ bytes: [UInt8]) throws(PushError) -> PushPayload {
        let object: JSONValue
        do {
            object = try StrictJSONParser.parse(bytes, maxDepth: maxJSONDepth)
        } catch {
            throw PushError(.payloadInvalid, "claims are not strict JSON: \(error.reason) at byte \(error.offset)")
        }
        guard case .object = object else { throw PushError(.payloadInvalid, "claims are not a JSON object") }
        guard let version64 = object["v"]?.integerValue, let version = Int(exactly: version64),
              let callID = object["callId"]?.stringValue,
              let appKey = object["appKey"]?.stringValue, let deviceID = object["deviceId"]?.stringValue,
              let from = object["from"], let kind = from["kind"]?.stringValue,
              let address = from["address"]?.stringValue, let video = object["video"]?.boolValue,
              case .object(let headerMembers) = object["headers"],
              let issuedAt = object["iat"]?.integerValue, let expiresAt = object["exp"]?.integerValue
        else { throw PushError(.payloadInvalid, "claims miss a member or have a wrong type") }
        var displayName: String?
        if let name = object["name"] {
            guard let text = name.stringValue, text.utf8.count <= SignalingLimits.maxDisplayNameBytes else {
                throw PushError(.payloadInvalid, "claim name is not a string of at most \(SignalingLimits.maxDisplayNameBytes) bytes")
            }
            displayName = text
        }
        var headers: [String: String] = [:]
        for member in headerMembers.members {
            guard let text = member.value.stringValue else { throw PushError(.payloadInvalid, "claims miss a member or have a wrong type") }
            headers[member.key] = text
        }
        let caller: SignalingMessage.Address
        switch SignalingMessage.Address.Kind(rawValue: kind) {
        case .user: caller = .user(address)
        case .phone: caller = .phone(address)
        case .sip: caller = .sip(address)
        case .conference: caller = .conference(address)
        case nil: throw PushError(.payloadInvalid, "unknown caller kind")
        }
        var payload = PushPayload(
            callID: callID, appKey: appKey, deviceID: deviceID, from: caller, video: video, headers: headers,
            issuedAt: issuedAt, expiresAt: expiresAt, callerDisplayName: displayName)
        payload.version = version
        return payload
    }
}
