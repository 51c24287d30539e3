public import ParleyCrypto
internal import Foundation
internal import ParleyWireCore

/// An application's APNs token-based authentication key: the `.p8` signing key Apple
/// issued, its 10-character key id and the team id.
public struct APNsCredentials: Sendable {
    /// The Apple Developer team id (the JWT's `iss`).
    public let teamID: String
    /// The key id (the JWT header's `kid`).
    public let keyID: String
    /// The `.p8` file's PEM text as given.
    public let privateKeyPEM: String
    /// The loaded key.
    public let key: ES256Key

    /// Loads the key; throws ``PushError/Kind/credentialsInvalid`` when the PEM is not a
    /// P-256 private key or an id is empty or not printable ASCII.
    public init(teamID: String, keyID: String, privateKeyPEM: String) throws(PushError) {
        guard Self.isPlainID(teamID), Self.isPlainID(keyID) else {
            throw PushError(.credentialsInvalid, "team id and key id must be 1-64 letters or digits")
        }
        do { key = try ES256Key(privateKeyPEM: privateKeyPEM) } catch {
            throw PushError(.credentialsInvalid, "the .p8 key: \(error)")
        }
        self.teamID = teamID
        self.keyID = keyID
        self.privateKeyPEM = privateKeyPEM
    }

    /// Reads the stored form, `{"teamId":...,"keyId":...,"privateKeyPem":...}`.
    public init(settingsJSON: String) throws(PushError) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(settingsJSON.utf8))) as? [String: Any],
              let teamID = object["teamId"] as? String, let keyID = object["keyId"] as? String,
              let pem = object["privateKeyPem"] as? String
        else { throw PushError(.credentialsInvalid, "APNs settings need teamId, keyId and privateKeyPem") }
        try self.init(teamID: teamID, keyID: keyID, privateKeyPEM: pem)
    }

    /// The stored form (see ``init(settingsJSON:)``).
    public var settingsJSON: String {
        var json = JSONObject()
        json.append("teamId", teamID)
        json.append("keyId", keyID)
        json.append("privateKeyPem", privateKeyPEM)
        return JSONWriter.string(json)
    }

    static func isPlainID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) }
    }
}
