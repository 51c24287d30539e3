extension SIPMessage {
    /// Checks what a receiver needs before processing the message, and throws a `SIPError`
    /// saying how to refuse it.
    ///
    /// A request must be SIP/2.0 (else 505); have Via, From, To, Call-ID and CSeq (§8.1.1;
    /// else 400, or dropped without a usable Via), each of the last four once (RFC 4475
    /// §3.3.8), all well-formed, and a CSeq method equal to the request's (400, or 501 for
    /// a method we do not know, §3.1.2.17-18); a Max-Forwards, Content-Type, Contact,
    /// Route and Record-Route, when present, must be well-formed. A missing Max-Forwards,
    /// From tag or Via branch is accepted (RFC 2543 senders, RFC 4475 §3.4.1). A
    /// Request-URI must be sip, sips or tel (else 416) and a SIP one may not carry headers
    /// (§3.1.2.11). A response is held to the same rules and dropped on any failure.
    ///
    /// Left to the layers above: Require (see `unsupportedRequirements(supported:)`),
    /// Content-Type support, Max-Forwards of 0, Expires values, Date (RFC 4475 §3.1.2.12
    /// allows ignoring a bad Date that is not used).
    public func validate() throws(SIPError) {
        if isRequest {
            guard version == .sip20 else {
                throw place(SIPError(.unsupportedVersion, "\(version) is not SIP/2.0"))
            }
        } else if version != .sip20 {
            throw place(SIPError(.unsupportedVersion, "\(version) is not SIP/2.0"))
        }
        guard headers.contains("via") else { throw place(SIPError(.missingHeader, header: "via", "no Via")) }
        _ = try vias()
        if case .request(let method, let uri) = startLine {
            switch uri.scheme {
            case .sip, .sips:
                guard uri.headers.isEmpty else {
                    throw place(SIPError(.malformedURI, "a Request-URI may not carry headers (RFC 3261 §19.1.5)"))
                }
            case .tel:
                break
            case .other(let scheme):
                throw place(SIPError(.unsupportedURIScheme, "Request-URI scheme \(SIPGrammar.quote(scheme)) is not served"))
            }
            try requireOnce(["from", "to", "call-id", "cseq"])
            _ = try from()
            _ = try to()
            _ = try callID()
            if let cseq = try cseq(), cseq.method != method {
                let detail = "CSeq method \(cseq.method) differs from the request's \(method)"
                if case .extension = method {
                    throw place(SIPError(.methodMismatch, status: (501, "Not Implemented"), detail))
                }
                throw place(SIPError(.methodMismatch, detail))
            }
            _ = try maxForwards()
            _ = try routes()
        } else {
            try requireOnce(["from", "to", "call-id", "cseq"])
            _ = try from()
            _ = try to()
            _ = try callID()
            _ = try cseq()
        }
        _ = try contentType()
        _ = try contacts()
        _ = try recordRoutes()
    }

    /// Each header present exactly once.
    private func requireOnce(_ names: [String]) throws(SIPError) {
        for name in names {
            let count = headers.count(of: name)
            if count == 0 {
                throw place(SIPError(.missingHeader, header: name, "no \(SIPHeaderName.display(name))"))
            }
            if count > 1 {
                throw place(SIPError(.duplicateHeader, header: name, "\(SIPHeaderName.display(name)) appears \(count) times"))
            }
        }
    }
}
