/// One value of the configuration file, as JSON typed it (so `"60"` for a number of
/// seconds, or `1` for a boolean, is refused rather than guessed at).
enum JSONValue: Decodable, Equatable {
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// The value as the option's text values (what a flag would have given), or an error
    /// naming `source` when its JSON type does not fit the option.
    func optionValues(for option: ConfigurationOption, source: String) throws -> [String] {
        switch (option.kind, self) {
        case (.text, .string(let text)):
            return [text]
        case (.list, .string(let text)):
            return [text]
        case (.list, .array(let items)):
            return try items.map { item in
                guard case .string(let text) = item else { throw DaemonUsageError("\(source): expected an array of strings") }
                return text
            }
        case (.seconds, .number(let value)), (.integer, .number(let value)), (.portRange, .number(let value)):
            // Whole numbers print without a fraction, so the integer checks apply as to flags.
            if value.rounded() == value, abs(value) < 1e15 { return [String(Int64(value))] }
            return [String(value)]
        case (.portRange, .string(let text)):
            return [text]
        case (.switchOn, .bool(let value)):
            return [value ? "true" : "false"]
        default:
            throw DaemonUsageError("\(source): expected \(option.jsonTypeDescription)")
        }
    }
}

extension ConfigurationOption {
    var jsonTypeDescription: String {
        switch kind {
        case .text: "a string"
        case .list: "a string or an array of strings"
        case .seconds: "a number of seconds"
        case .integer: "a whole number"
        case .portRange: "a port number or a string \"LO-HI\""
        case .switchOn: "true or false"
        }
    }
}
