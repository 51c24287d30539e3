public import ParleyCrypto
internal import Foundation

/// An application's Firebase service account: what the FCM HTTP v1 API needs to mint an
/// OAuth access token (RFC 7523 JWT bearer grant, RS256).
public struct FCMCredentials: Sendable {
    /// The Firebase project id (the path of `messages:send`).
    public let projectID: String
    /// The service account's e-mail (the JWT's `iss`).
    public let clientEmail: String
    /// The key id (the JWT header's `kid`), when the file has one.
    public let privateKeyID: String?
    /// The OAuth token endpoint (the JWT's `aud` and where it is exchanged).
    public let tokenURI: String
    /// The service account JSON as given, kept to store and show it.
    public let serviceAccountJSON: String
    /// The loaded RSA key.
    public let key: RS256Key

    /// Reads a service-account JSON file (`type` `service_account`, `project_id`,
    /// `client_email`, `private_key`, optional `private_key_id` and `token_uri`).
    /// `tokenURIOverride` replaces the file's `token_uri` (tests use the emulator's).
    public init(serviceAccountJSON: String, tokenURIOverride: String? = nil) throws(PushError) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(serviceAccountJSON.utf8))) as? [String: Any] else {
            throw PushError(.credentialsInvalid, "the service account file is not a JSON object")
        }
        guard (object["type"] as? String) == "service_account" else {
            throw PushError(.credentialsInvalid, "the file's type is not service_account")
        }
        guard let projectID = object["project_id"] as? String, !projectID.isEmpty,
              projectID.utf8.allSatisfy({ $0 == 0x2D || ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) })
        else { throw PushError(.credentialsInvalid, "project_id is missing or not lowercase letters, digits and '-'") }
        guard let clientEmail = object["client_email"] as? String, clientEmail.contains("@") else {
            throw PushError(.credentialsInvalid, "client_email is missing")
        }
        guard let pem = object["private_key"] as? String else { throw PushError(.credentialsInvalid, "private_key is missing") }
        let tokenURI = tokenURIOverride ?? (object["token_uri"] as? String) ?? "https://oauth2.googleapis.com/token"
        guard tokenURI.hasPrefix("https://") || tokenURI.hasPrefix("http://") else {
            throw PushError(.credentialsInvalid, "token_uri is not an http(s) URL")
        }
        do { key = try RS256Key(privateKeyPEM: pem) } catch { throw PushError(.credentialsInvalid, "private_key: \(error)") }
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKeyID = object["private_key_id"] as? String
        self.tokenURI = tokenURI
        self.serviceAccountJSON = serviceAccountJSON
    }
}
