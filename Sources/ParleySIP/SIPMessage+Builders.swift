/// Building requests and responses for the transaction and dialog layers.
extension SIPMessage {
    /// A request with the header fields RFC 3261 §8.1.1 requires, in its order: Via,
    /// Max-Forwards, To, From, Call-ID, CSeq (numbered `cseq`, the request's method), then
    /// Contact and Content-Type when given. More fields go through `headers` afterwards.
    public static func request(method: SIPMethod, uri: SIPURI, via: SIPVia, from: SIPNameAddress, to: SIPNameAddress,
                               callID: String, cseq: UInt32, maxForwards: Int = 70, contact: SIPNameAddress? = nil,
                               contentType: SIPContentType? = nil, body: [UInt8] = []) throws(SIPError) -> SIPMessage {
        guard isCallID(callID) else { throw SIPError(.invalidArgument, "Call-ID \(SIPGrammar.quote(callID)) is not word[@word]") }
        guard (0...255).contains(maxForwards) else { throw SIPError(.invalidArgument, "Max-Forwards \(maxForwards) is not 0-255") }
        var headers = SIPHeaders()
        headers.appendUnchecked(name: "Via", value: via.description)
        headers.appendUnchecked(name: "Max-Forwards", value: String(maxForwards))
        headers.appendUnchecked(name: "To", value: to.description)
        headers.appendUnchecked(name: "From", value: from.description)
        headers.appendUnchecked(name: "Call-ID", value: callID)
        headers.appendUnchecked(name: "CSeq", value: SIPCSeq(sequence: cseq, method: method).description)
        if let contact { headers.appendUnchecked(name: "Contact", value: contact.description) }
        if let contentType { headers.appendUnchecked(name: "Content-Type", value: contentType.description) }
        return try SIPMessage(request: method, uri: uri, headers: headers, body: body)
    }

    /// A response to this request as RFC 3261 §8.2.6 builds it: Via (every value, in
    /// order), From, To, Call-ID and CSeq copied, Timestamp too for a 100 (§8.2.6.1), and
    /// `toTag` added to a To that has no tag (a UAS must, except on 100, §8.2.6.2). The
    /// reason phrase defaults to RFC 3261's. Other fields (Contact, Record-Route for a
    /// dialog, Allow, Unsupported...) are the caller's to add.
    public func makeResponse(statusCode: Int, reasonPhrase: String? = nil, toTag: String? = nil) throws(SIPError) -> SIPMessage {
        guard isRequest else { throw SIPError(.invalidArgument, "only a request can be answered") }
        if let toTag, !SIPGrammar.isToken(toTag) { throw SIPError(.invalidArgument, "To tag \(SIPGrammar.quote(toTag)) is not a token") }
        var response = try SIPMessage(response: statusCode, reasonPhrase: reasonPhrase)
        response.headers = Self.responseHeaders(copying: headers, statusCode: statusCode, toTag: toTag)
        return response
    }

    /// The answer a `SIPError` suggests, from the fields of the request that were read.
    static func response(statusCode: Int, reasonPhrase: String, copying request: SIPHeaders, toTag: String?) -> SIPMessage {
        SIPMessage(startLine: .response(statusCode: statusCode, reasonPhrase: reasonPhrase), version: .sip20,
                   headers: responseHeaders(copying: request, statusCode: statusCode, toTag: toTag), body: [])
    }

    private static func responseHeaders(copying request: SIPHeaders, statusCode: Int, toTag: String?) -> SIPHeaders {
        var copied = SIPHeaders()
        for field in request.fields {
            switch field.canonicalName {
            case "via", "from", "call-id", "cseq":
                copied.appendUnchecked(name: field.name, value: field.value)
            case "timestamp" where statusCode == 100:
                copied.appendUnchecked(name: field.name, value: field.value)
            case "to":
                var value = field.value
                if let toTag, let to = try? SIPNameAddress.parse(Array(value.utf8)[...], requireAngleBrackets: false), to.tag == nil {
                    value += ";tag=" + toTag
                }
                copied.appendUnchecked(name: field.name, value: value)
            default:
                break
            }
        }
        return copied
    }

    /// The reason phrase RFC 3261 §21 (and RFC 3262, 3265, 3329, 4028, 6086) gives a code;
    /// for another code, the class's name (`Success`, `Client Error`...).
    public static func reasonPhrase(for statusCode: Int) -> String {
        switch statusCode {
        case 100: "Trying"
        case 180: "Ringing"
        case 181: "Call Is Being Forwarded"
        case 182: "Queued"
        case 183: "Session Progress"
        case 199: "Early Dialog Terminated"
        case 200: "OK"
        case 202: "Accepted"
        case 204: "No Notification"
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Moved Temporarily"
        case 305: "Use Proxy"
        case 380: "Alternative Service"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 402: "Payment Required"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 410: "Gone"
        case 413: "Request Entity Too Large"
        case 414: "Request-URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Unsupported URI Scheme"
        case 420: "Bad Extension"
        case 421: "Extension Required"
        case 422: "Session Interval Too Small"
        case 423: "Interval Too Brief"
        case 469: "Bad Info Package"
        case 480: "Temporarily Unavailable"
        case 481: "Call/Transaction Does Not Exist"
        case 482: "Loop Detected"
        case 483: "Too Many Hops"
        case 484: "Address Incomplete"
        case 485: "Ambiguous"
        case 486: "Busy Here"
        case 487: "Request Terminated"
        case 488: "Not Acceptable Here"
        case 489: "Bad Event"
        case 491: "Request Pending"
        case 493: "Undecipherable"
        case 494: "Security Agreement Required"
        case 500: "Server Internal Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Server Time-out"
        case 505: "Version Not Supported"
        case 513: "Message Too Large"
        case 580: "Precondition Failure"
        case 600: "Busy Everywhere"
        case 603: "Decline"
        case 604: "Does Not Exist Anywhere"
        case 606: "Not Acceptable"
        case 100..<200: "Provisional"
        case 200..<300: "Success"
        case 300..<400: "Redirection"
        case 400..<500: "Client Error"
        case 500..<600: "Server Error"
        default: "Global Failure"
        }
    }
}
