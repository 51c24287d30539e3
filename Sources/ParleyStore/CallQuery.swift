/// A search of an application's calls, for `GET /v1/calls?user=&since=`.
///
/// Results come in a stable order, oldest first: by start time, then by insertion order
/// for calls started in the same millisecond. A page that is not the last carries a
/// `nextCursor`; pass it back as `cursor` (with the same other members) for the next page.
/// Calls created after the first page appear on later pages, never shifting earlier ones.
public struct CallQuery: Sendable, Hashable {
    /// The largest `limit` accepted.
    public static let maximumLimit = 1000

    /// Only calls of this application.
    public var applicationKey: String
    /// Only calls where this user is the caller or the callee; nil for all.
    public var user: String?
    /// Only calls started at or after this time (Unix ms).
    public var since: Int64
    /// At most this many calls per page, 1...1000.
    public var limit: Int
    /// Where the previous page ended (its `nextCursor`), nil for the first page.
    public var cursor: String?

    public init(applicationKey: String, user: String? = nil, since: Int64 = 0, limit: Int = 50, cursor: String? = nil) {
        self.applicationKey = applicationKey
        self.user = user
        self.since = since
        self.limit = limit
        self.cursor = cursor
    }
}

/// One page of a `CallQuery`.
///
/// JSON (`Encodable`, the body of `GET /v1/calls`): `{"calls":[...],"nextCursor":"..."}`,
/// `nextCursor` omitted on the last page.
public struct CallPage: Sendable, Hashable, Codable {
    public var calls: [StoredCall]
    /// Present when more calls may follow.
    public var nextCursor: String?

    public init(calls: [StoredCall], nextCursor: String? = nil) {
        self.calls = calls
        self.nextCursor = nextCursor
    }
}

/// The position after a call in query order: its start time and its row number. Written
/// as `<startedTime>.<row>` in decimal; opaque to clients.
struct CallCursor: Hashable {
    var startedTime: Int64
    var row: Int64

    var text: String { "\(startedTime).\(row)" }

    init(startedTime: Int64, row: Int64) {
        self.startedTime = startedTime
        self.row = row
    }

    /// Parses `text`, refusing anything but two non-negative decimal integers.
    init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.count <= 19 && $0.allSatisfy(\.isASCIIDigit) }),
            let time = Int64(parts[0]), let row = Int64(parts[1])
        else { return nil }
        startedTime = time
        self.row = row
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) && isASCII }
}
