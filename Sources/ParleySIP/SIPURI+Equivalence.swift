extension SIPURI {
    /// Whether two URIs are equivalent by RFC 3261 §19.1.4:
    ///
    /// - the schemes match, and a `sip:` URI never equals a `sips:` one;
    /// - user and password compare case-sensitively, the host case-insensitively (an
    ///   address by value); escapes of characters outside the reserved set equal the
    ///   characters (`%61lice` is `alice`, `%3B` is not `;`);
    /// - a port, and the `user`, `ttl`, `method` and `maddr` parameters, must be present
    ///   in both or neither (so `sip:bob@x` is not `sip:bob@x:5060`), as must `transport`;
    /// - other parameters are compared only when both URIs have them;
    /// - headers are never ignored: both URIs must hold the same set.
    ///
    /// Parameter names and values compare case-insensitively. `tel:` URIs compare their
    /// numbers without visual separators (RFC 3966 §4) and every parameter; other schemes
    /// compare their text with escapes normalized.
    public func isEquivalent(to other: SIPURI) -> Bool {
        switch (scheme, other.scheme) {
        case (.sip, .sip), (.sips, .sips):
            return sipEquivalent(to: other)
        case (.tel, .tel):
            return telephoneKey(escapedUser) == telephoneKey(other.escapedUser)
                && Self.parameterSet(parameters) == Self.parameterSet(other.parameters)
        case (.other(let a), .other(let b)):
            return SIPGrammar.equalsIgnoringCase(a, b)
                && SIPGrammar.comparisonForm(opaquePart ?? "", caseInsensitive: false)
                == SIPGrammar.comparisonForm(other.opaquePart ?? "", caseInsensitive: false)
        default:
            return false
        }
    }

    private func sipEquivalent(to other: SIPURI) -> Bool {
        guard Self.userinfoKey(escapedUser) == Self.userinfoKey(other.escapedUser),
              Self.userinfoKey(escapedPassword) == Self.userinfoKey(other.escapedPassword),
              let host, let otherHost = other.host, host.isEquivalent(to: otherHost),
              port == other.port else { return false }
        let mine = Self.parameterMap(parameters)
        let theirs = Self.parameterMap(other.parameters)
        for name in Self.mustMatchParameters.map({ Array($0.utf8) }) where mine[name] != theirs[name] { return false }
        for (name, value) in mine where theirs[name] != nil && theirs[name] != value { return false }
        return Self.headerSet(headers) == Self.headerSet(other.headers)
    }

    /// The parameters that must be present in both URIs or neither (§19.1.4).
    private static let mustMatchParameters = ["user", "ttl", "method", "maddr", "transport"]

    private static func userinfoKey(_ text: String?) -> [UInt8]? {
        text.map { SIPGrammar.comparisonForm($0, caseInsensitive: false) }
    }

    /// Lowercased names to comparison-form values (an absent value as an empty array);
    /// the first of several same-named parameters counts.
    private static func parameterMap(_ parameters: [Parameter]) -> [[UInt8]: [UInt8]?] {
        var map: [[UInt8]: [UInt8]?] = [:]
        for parameter in parameters {
            let name = SIPGrammar.comparisonForm(parameter.escapedName, caseInsensitive: true)
            if map[name] == nil {
                map[name] = .some(parameter.escapedValue.map { SIPGrammar.comparisonForm($0, caseInsensitive: true) })
            }
        }
        return map
    }

    private static func parameterSet(_ parameters: [Parameter]) -> Set<[UInt8]> {
        Set(parameters.map { parameter in
            var key = SIPGrammar.comparisonForm(parameter.escapedName, caseInsensitive: true)
            if let value = parameter.escapedValue {
                key.append(UInt8(ascii: "="))
                key += SIPGrammar.comparisonForm(value, caseInsensitive: true)
            }
            return key
        })
    }

    private static func headerSet(_ headers: [Header]) -> Set<[UInt8]> {
        Set(headers.map { header in
            SIPGrammar.comparisonForm(header.escapedName, caseInsensitive: true) + [UInt8(ascii: "=")]
                + SIPGrammar.comparisonForm(header.escapedValue, caseInsensitive: false)
        })
    }

    private func telephoneKey(_ number: String?) -> [UInt8] {
        (number ?? "").utf8.filter { ![UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "("), UInt8(ascii: ")")].contains($0) }
            .map(SIPGrammar.lowercase)
    }
}
