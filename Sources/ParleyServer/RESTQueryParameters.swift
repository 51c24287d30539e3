import ParleyStore

/// The query string of `GET /v1/calls` (`user`, `since`, `limit`, `cursor`), decoded as
/// `application/x-www-form-urlencoded` and checked strictly: an unknown or repeated
/// parameter, bad percent-encoding or a value out of range is a 400, never ignored.
enum RESTQueryParameters {
    struct Failure: Error, Hashable {
        let message: String
    }

    static let known: Set<String> = ["user", "since", "limit", "cursor"]
    /// Longest user id (docs/protocol.md "Field formats").
    static let maximumUserLength = 255

    static func callQuery(from query: String?, applicationKey: String) -> Result<CallQuery, Failure> {
        var result = CallQuery(applicationKey: applicationKey)
        let pairs: [(String, String)]
        switch decode(query ?? "") {
        case .success(let decoded): pairs = decoded
        case .failure(let failure): return .failure(failure)
        }
        var seen: Set<String> = []
        for (name, value) in pairs {
            guard known.contains(name) else {
                return .failure(Failure(message: "unknown query parameter \"\(RESTAPI.printable(name))\" (known: cursor, limit, since, user)"))
            }
            guard seen.insert(name).inserted else {
                return .failure(Failure(message: "query parameter \"\(name)\" is given more than once"))
            }
            switch name {
            case "user":
                guard !value.isEmpty, value.utf8.count <= maximumUserLength else {
                    return .failure(Failure(message: "user must be 1-\(maximumUserLength) bytes"))
                }
                result.user = value
            case "since":
                guard let since = decimal(value, maximum: Int64.max) else {
                    return .failure(Failure(message: "since must be a time in Unix milliseconds (a non-negative integer), not \"\(RESTAPI.printable(value))\""))
                }
                result.since = since
            case "limit":
                guard let limit = decimal(value, maximum: Int64(CallQuery.maximumLimit)), limit >= 1 else {
                    return .failure(Failure(message: "limit must be an integer in 1...\(CallQuery.maximumLimit), not \"\(RESTAPI.printable(value))\""))
                }
                result.limit = Int(limit)
            default:
                guard !value.isEmpty else { return .failure(Failure(message: "cursor must not be empty")) }
                result.cursor = value
            }
        }
        return .success(result)
    }

    /// Digits only (no sign, no spaces), at most `maximum`.
    static func decimal(_ text: String, maximum: Int64) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let value = Int64(text), value <= maximum else { return nil }
        return value
    }

    /// `a=1&b=x%20y` into its pairs; empty segments (`a=1&&b=2`) are skipped.
    static func decode(_ query: String) -> Result<[(String, String)], Failure> {
        var pairs: [(String, String)] = []
        for segment in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = segment.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = percentDecoded(parts[0]), let value = percentDecoded(parts.count > 1 ? parts[1] : "") else {
                return .failure(Failure(message: "the query string has bad percent-encoding or is not UTF-8"))
            }
            pairs.append((name, value))
        }
        return .success(pairs)
    }

    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(0x20)
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
