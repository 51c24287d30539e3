/// One SQLite value: the five storage classes of SQLite 3.
///
/// Literals work where a value is expected: `42`, `1.5`, `"alice"`, `nil`.
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// `.integer`, or `.null` for nil.
    public init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }
    /// `.integer`, or `.null` for nil.
    public init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    /// `.real`, or `.null` for nil.
    public init(_ value: Double?) { self = value.map { .real($0) } ?? .null }
    /// `.text`, or `.null` for nil.
    public init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    /// `.blob`, or `.null` for nil.
    public init(_ value: [UInt8]?) { self = value.map { .blob($0) } ?? .null }
    /// `.integer(1)` or `.integer(0)` (SQLite has no boolean type), or `.null` for nil.
    public init(_ value: Bool?) { self = value.map { .integer($0 ? 1 : 0) } ?? .null }
}

extension SQLiteValue: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByNilLiteral
{
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(nilLiteral: ()) { self = .null }
}
