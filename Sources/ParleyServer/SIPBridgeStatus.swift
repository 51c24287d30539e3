/// The final status a bridged call's SIP caller gets when its call out failed with a SIP
/// status (docs/sip.md, "Bridged calls"): a back-to-back user agent passes the far side's
/// answer on, except what only meant something on the call out's own hop.
///
/// Busy, decline, no answer and cancel never get here: the call core ends those with their
/// causes (`denied`, `noAnswer`, `canceled`), which `SIPInboundAgent.status(for:error:)`
/// maps to 486, 480 and 487.
enum SIPBridgeStatus {
    /// The status and reason phrase for the caller when the call out ended with
    /// `calleeStatus`:
    /// - 3xx: 480. The call out does not follow redirects, and the caller cannot reach the
    ///   Contact we were given through us.
    /// - 401, 407: 503. Our trunk refused our credentials; the caller has nothing to answer.
    /// - 420, 421, 422, 423, 481, 491: 500. Each is about our INVITE or the call out's dialog
    ///   (extensions, session interval, glare), not the caller's.
    /// - 503: 500, as RFC 3261 §16.7 has a proxy do, so the caller's carrier does not take
    ///   this server for unavailable and stop routing to it.
    /// - Any other 4xx-6xx: the same status.
    static func forCaller(calleeStatus status: Int) -> (Int, String) {
        switch status {
        case 300...399: return (480, "Temporarily Unavailable")
        case 401, 407: return (503, "Service Unavailable")
        case 420, 421, 422, 423, 481, 491, 503: return (500, "Server Internal Error")
        case 400...699: return (status, reasonPhrase(status))
        default: return (500, "Server Internal Error")
        }
    }

    /// RFC 3261 §21's reason phrase for the statuses a far side sends most, else a phrase
    /// for the status's class. The far side's own phrase is not copied: it is text from
    /// outside, and a caller acts on the code.
    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 402: "Payment Required"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 408: "Request Timeout"
        case 410: "Gone"
        case 413: "Request Entity Too Large"
        case 414: "Request-URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Unsupported URI Scheme"
        case 480: "Temporarily Unavailable"
        case 482: "Loop Detected"
        case 483: "Too Many Hops"
        case 484: "Address Incomplete"
        case 485: "Ambiguous"
        case 486: "Busy Here"
        case 487: "Request Terminated"
        case 488: "Not Acceptable Here"
        case 500: "Server Internal Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 504: "Server Time-out"
        case 505: "Version Not Supported"
        case 513: "Message Too Large"
        case 600: "Busy Everywhere"
        case 603: "Decline"
        case 604: "Does Not Exist Anywhere"
        case 606: "Not Acceptable"
        case 400...499: "Request Failed"
        case 500...599: "Server Failure"
        default: "Global Failure"
        }
    }
}
