internal import Foundation

/// One entry of a call's timeline (docs/store.md): what happened around the call outside
/// its state changes, such as each push attempt and the provider's answer.
///
/// JSON (in `GET /v1/calls/{id}`'s `timeline`): `{"time":1764421201250,"kind":"push.sent",
/// "detail":{"device":"bob-phone","type":"apnsVoip","attempt":"1"}}`.
public struct CallEvent: Sendable, Hashable, Codable {
    /// Milliseconds since the Unix epoch.
    public var time: Int64
    /// `push.sent`, `push.retry`, `push.answer`, `push.token_removed`, `push.relayed`.
    public var kind: String
    /// Flat string members; which ones depends on `kind`.
    public var detail: [String: String]

    public init(time: Int64, kind: String, detail: [String: String] = [:]) {
        self.time = time
        self.kind = kind
        self.detail = detail
    }

    /// The most events one call keeps; later ones are dropped (a bound for a call whose
    /// pushes keep failing on many devices).
    public static let maximumPerCall = 500

    /// `detail` as stored: a JSON object with sorted keys.
    var detailJSON: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(detail)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// Reads a stored `detail`; a value not of this shape reads as empty rather than failing
    /// the whole call record.
    static func detail(fromJSON text: String) -> [String: String] {
        (try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))) ?? [:]
    }
}
