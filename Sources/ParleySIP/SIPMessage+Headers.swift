/// Typed reads of the common header fields. Each parses on demand and throws a
/// `SIPError` (placed: it says whether to answer or drop) when the field is malformed, or
/// when a field that may appear once appears twice; an absent field reads as nil or
/// empty. Any other header is read raw through `headers`.
extension SIPMessage {
    /// Every Via value in order, across lines and commas (RFC 3261 §20.42).
    public func vias() throws(SIPError) -> [SIPVia] {
        try read("via") { () throws(SIPError) in try SIPVia.parseList(headers.listElements(canonical: "via")) }
    }

    /// The first Via value: where a response goes (§18.2.2).
    public func topVia() throws(SIPError) -> SIPVia? {
        guard let element = headers.listElements(canonical: "via").first else { return nil }
        return try read("via") { () throws(SIPError) in try SIPVia(parsing: element) }
    }

    /// From (§20.20).
    public func from() throws(SIPError) -> SIPNameAddress? { try nameAddress("from") }

    /// To (§20.39).
    public func to() throws(SIPError) -> SIPNameAddress? { try nameAddress("to") }

    /// Call-ID (§20.8): `word [ "@" word ]`.
    public func callID() throws(SIPError) -> String? {
        guard let value = try single("call-id") else { return nil }
        return try read("call-id") { () throws(SIPError) in
            guard Self.isCallID(value) else { throw SIPError(.malformedHeader, "\(SIPGrammar.quote(value)) is not word[@word]") }
            return value
        }
    }

    /// CSeq (§20.16).
    public func cseq() throws(SIPError) -> SIPCSeq? {
        guard let value = try single("cseq") else { return nil }
        return try read("cseq") { () throws(SIPError) in try SIPCSeq(parsing: value) }
    }

    /// Max-Forwards (§20.22): 0-255.
    public func maxForwards() throws(SIPError) -> Int? {
        guard let value = try single("max-forwards") else { return nil }
        return try read("max-forwards") { () throws(SIPError) in
            guard let number = SIPGrammar.decimal(value, as: UInt8.self, maxDigits: 10) else {
                throw SIPError(.malformedHeader, "Max-Forwards \(SIPGrammar.quote(value)) is not 0-255")
            }
            return Int(number)
        }
    }

    /// Contact (§20.10): nil when absent.
    public func contacts() throws(SIPError) -> SIPContacts? {
        let elements = headers.listElements(canonical: "contact")
        guard !elements.isEmpty else { return nil }
        return try read("contact") { () throws(SIPError) in try SIPContacts.parse(elements) }
    }

    /// Route (§20.34), in order; only the bracketed form.
    public func routes() throws(SIPError) -> [SIPNameAddress] { try nameAddressList("route", requireAngleBrackets: true) }

    /// Record-Route (§20.30), in order; only the bracketed form.
    public func recordRoutes() throws(SIPError) -> [SIPNameAddress] { try nameAddressList("record-route", requireAngleBrackets: true) }

    /// P-Asserted-Identity (RFC 3325 §9.1), in order.
    public func assertedIdentities() throws(SIPError) -> [SIPNameAddress] {
        try nameAddressList("p-asserted-identity", requireAngleBrackets: false)
    }

    /// Content-Type (§20.15).
    public func contentType() throws(SIPError) -> SIPContentType? {
        guard let value = try single("content-type") else { return nil }
        return try read("content-type") { () throws(SIPError) in try SIPContentType(parsing: value) }
    }

    /// Content-Length (§20.14) as written; `serialized()` writes the body's length instead.
    public func contentLength() throws(SIPError) -> Int? {
        guard let value = try single("content-length") else { return nil }
        return try read("content-length") { () throws(SIPError) in
            guard let length = SIPGrammar.decimal(value, as: UInt32.self, maxDigits: 10) else {
                throw SIPError(.invalidContentLength, "Content-Length \(SIPGrammar.quote(value)) is not a number")
            }
            return Int(length)
        }
    }

    /// Allow (§20.5): nil when absent, empty for an empty Allow.
    public func allow() throws(SIPError) -> [SIPMethod]? {
        guard headers.contains("allow") else { return nil }
        return try tokens("allow").map(SIPMethod.init(token:))
    }

    /// Supported option tags (§20.37).
    public func supported() throws(SIPError) -> [String] { try tokens("supported") }

    /// Require option tags (§20.32).
    public func require() throws(SIPError) -> [String] { try tokens("require") }

    /// Proxy-Require option tags (§20.29).
    public func proxyRequire() throws(SIPError) -> [String] { try tokens("proxy-require") }

    /// Unsupported option tags (§20.40).
    public func unsupported() throws(SIPError) -> [String] { try tokens("unsupported") }

    /// The Require option tags not in `supported` (compared case-insensitively): what a
    /// UAS answers 420 Bad Extension with, listed in Unsupported (§8.2.2.3).
    public func unsupportedRequirements(supported: [String]) throws(SIPError) -> [String] {
        try require().filter { tag in !supported.contains { SIPGrammar.equalsIgnoringCase($0, tag) } }
    }

    /// Expires (§20.19): delta-seconds below 2^32.
    public func expires() throws(SIPError) -> UInt32? { try deltaSeconds("expires") }

    /// Min-Expires (§20.23).
    public func minExpires() throws(SIPError) -> UInt32? { try deltaSeconds("min-expires") }

    /// Session-Expires (RFC 4028 §4).
    public func sessionExpires() throws(SIPError) -> SIPSessionExpires? {
        guard let value = try single("session-expires") else { return nil }
        return try read("session-expires") { () throws(SIPError) in try SIPSessionExpires(parsing: value) }
    }

    /// Min-SE (RFC 4028 §5): delta-seconds, parameters ignored.
    public func minSE() throws(SIPError) -> UInt32? {
        guard let value = try single("min-se") else { return nil }
        return try read("min-se") { () throws(SIPError) in
            var scanner = SIPValueScanner(value)
            let seconds = try SIPSessionExpires.deltaSeconds(&scanner)
            _ = try scanner.parameters()
            try scanner.expectEnd("Min-SE")
            return seconds
        }
    }

    // MARK: Helpers

    /// Runs a parse of header `name`, placing its error in this message.
    func read<T>(_ name: String, _ parse: () throws(SIPError) -> T) throws(SIPError) -> T {
        do throws(SIPError) {
            return try parse()
        } catch {
            throw place(error.about(header: name))
        }
    }

    /// The error as it concerns this message (answer or drop).
    func place(_ error: SIPError) -> SIPError {
        error.placed(isResponse: !isRequest, headers: headers)
    }

    /// The one value of a single-valued header; throws when it appears twice.
    func single(_ name: String) throws(SIPError) -> String? {
        let fields = headers.fields(canonical: name)
        guard fields.count <= 1 else {
            throw place(SIPError(.duplicateHeader, header: name, "\(SIPHeaderName.display(name)) appears \(fields.count) times"))
        }
        return fields.first?.value
    }

    private func nameAddress(_ name: String) throws(SIPError) -> SIPNameAddress? {
        guard let value = try single(name) else { return nil }
        return try read(name) { () throws(SIPError) in try SIPNameAddress.parse(Array(value.utf8)[...], requireAngleBrackets: false) }
    }

    private func nameAddressList(_ name: String, requireAngleBrackets: Bool) throws(SIPError) -> [SIPNameAddress] {
        let elements = headers.listElements(canonical: name)
        return try read(name) { () throws(SIPError) in try SIPNameAddress.parseList(elements, requireAngleBrackets: requireAngleBrackets) }
    }

    /// A comma-separated list of tokens; an empty field is an empty list.
    private func tokens(_ name: String) throws(SIPError) -> [String] {
        var result: [String] = []
        for field in headers.fields(canonical: name) where !SIPHeaders.trimmedWhitespace(Substring(field.value)).isEmpty {
            for element in SIPHeaders.splitList(field.value) {
                guard SIPGrammar.isToken(element) else {
                    throw place(SIPError(.malformedHeader, header: name, "\(SIPGrammar.quote(element)) is not a token"))
                }
                result.append(String(element))
            }
        }
        return result
    }

    private func deltaSeconds(_ name: String) throws(SIPError) -> UInt32? {
        guard let value = try single(name) else { return nil }
        return try read(name) { () throws(SIPError) in
            guard let seconds = SIPGrammar.decimal(value, as: UInt32.self) else {
                throw SIPError(.malformedHeader, "\(SIPGrammar.quote(value)) is not delta-seconds below 2^32")
            }
            return seconds
        }
    }

    /// `callid = word [ "@" word ]`.
    static func isCallID(_ value: some StringProtocol) -> Bool {
        let parts = Array(value.utf8).split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2 else { return false }
        return parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(SIPGrammar.isWordByte) }
    }
}
