public import ParleySIP

/// Says what to do with an INVITE that starts no known call (its Call-ID is new to the
/// dispatcher) before anything is built for it: take it (`accept`: make a
/// `SIPInboundCall`), hand it to the call it repeats (`retransmission`), answer it
/// statelessly, or drop it. Sans-I/O: a message, its source and the time in.
///
/// - A message that does not validate is answered as its `SIPError` says (400 naming the
///   header, 416, 505) or dropped (`SIPMessage.validate()`).
/// - A To tag means a dialog we do not have: 481 (§12.2.2). No Contact: 400, since no
///   dialog could be made.
/// - Max-Forwards 0: 483 Too Many Hops (§8.2.2, §16.3), so a loop through two
///   back-to-back user agents ends.
/// - A merged request (§8.2.2.2): the From tag, Call-ID and CSeq of an INVITE taken within
///   the last 64·T1, through another branch or sent-by (a fork that came back): 482 Loop
///   Detected. The same branch and sent-by is a retransmission of the taken INVITE.
///
/// What it remembers is bounded: at most `capacity` INVITEs, each for 64·T1; past the
/// capacity the oldest is forgotten (a flood costs at most that much memory, and real
/// callers are never refused for it).
public struct SIPInboundInviteFilter: Sendable {
    /// What to do with an INVITE.
    public enum Decision: Sendable, Hashable {
        /// A new call: build a `SIPInboundCall` from it (or refuse it by the owner's rules).
        case accept
        /// The INVITE of a call already taken, again: give it to that call.
        case retransmission
        /// Send `response` to `hop` and forget the INVITE; `reason` is for the log.
        case answer(SIPMessage, to: SIPHop, reason: String)
        /// Drop it unanswered (a response, a request that cannot be answered); `reason` is
        /// for the log.
        case drop(reason: String)
    }

    /// What §8.2.2.2 compares.
    private struct Key: Sendable, Hashable {
        var callID: String
        var fromTag: String
        var sequence: UInt32
    }

    /// The branch and sent-by an INVITE came through, and when it is forgotten.
    private struct Taken: Sendable, Hashable {
        var branch: String
        var sentBy: String
        var expires: ContinuousClock.Instant
    }

    /// How long a taken INVITE is remembered (64·T1).
    public let memory: Duration
    /// The most INVITEs remembered.
    public let capacity: Int
    private var taken: [Key: Taken] = [:]
    /// Keys in the order they were taken, for expiry and eviction; may hold keys already
    /// removed, which are skipped.
    private var order: [(key: Key, expires: ContinuousClock.Instant)] = []
    private var orderStart = 0
    private var random: any RandomNumberGenerator & Sendable

    /// A filter remembering INVITEs for `timers.transactionTimeout` (64·T1), at most
    /// `capacity` of them. `random` draws the To tags of its answers.
    public init(timers: SIPTimers = SIPTimers(), capacity: Int = 4096, random: some RandomNumberGenerator & Sendable) {
        self.memory = timers.transactionTimeout
        self.capacity = max(1, capacity)
        self.random = random
    }

    /// The INVITEs remembered now.
    public var count: Int { taken.count }

    /// What to do with `message`, received from `source` at `now`. An `accept` is
    /// remembered, so its copies through other paths get 482.
    public mutating func check(_ message: SIPMessage, from source: SIPHop, now: ContinuousClock.Instant) -> Decision {
        expire(now: now)
        do throws(SIPError) {
            try message.validate()
        } catch {
            // §17: an ACK is never answered, however broken.
            guard message.method != .ack,
                  let response = try? error.makeResponse(toTag: SIPIdentifier.tag(using: &random)) else {
                return .drop(reason: error.description)
            }
            return .answer(response, to: responseHop(response, source: source), reason: error.description)
        }
        guard message.method == .invite else { return .drop(reason: "not an INVITE") }
        guard let via = try? message.topVia(), let callID = try? message.callID(), let cseq = try? message.cseq() else {
            return .drop(reason: "no Via, Call-ID or CSeq")
        }
        if (try? message.to())??.tag != nil {
            return answer(message, 481, reason: "a To tag of a dialog we do not have", source: source)
        }
        guard (try? message.contacts())??.addresses.first != nil else {
            return answer(message, 400, phrase: "Missing Contact", reason: "no Contact", source: source)
        }
        if (try? message.maxForwards()) == 0 {
            return answer(message, 483, reason: "Max-Forwards is 0", source: source)
        }
        let key = Key(callID: callID, fromTag: (try? message.from())??.tag ?? "", sequence: cseq.sequence)
        let branch = via.branch ?? ""
        let sentBy = SIPText.lowercased(via.host.description) + ":" + String(via.port ?? 0)
        if let seen = taken[key] {
            if seen.branch == branch, seen.sentBy == sentBy { return .retransmission }
            return answer(message, 482, reason: "merged request: the INVITE came again through another branch", source: source)
        }
        remember(key, Taken(branch: branch, sentBy: sentBy, expires: now + memory))
        return .accept
    }

    /// Forgets the INVITE of `callID` before its time (its call ended).
    public mutating func forget(callID: String) {
        taken = taken.filter { $0.key.callID != callID }
    }

    private mutating func answer(_ request: SIPMessage, _ code: Int, phrase: String? = nil, reason: String,
                                 source: SIPHop) -> Decision {
        guard let response = try? request.makeResponse(statusCode: code, reasonPhrase: phrase,
                                                       toTag: SIPIdentifier.tag(using: &random)) else {
            return .drop(reason: reason)
        }
        return .answer(response, to: responseHop(response, source: source), reason: reason)
    }

    private func responseHop(_ response: SIPMessage, source: SIPHop) -> SIPHop {
        SIPTransactionLayer.responseHop(via: try? response.topVia(), source: source)
    }

    private mutating func remember(_ key: Key, _ value: Taken) {
        if taken.count >= capacity { evictOldest() }
        taken[key] = value
        order.append((key, value.expires))
    }

    private mutating func expire(now: ContinuousClock.Instant) {
        while orderStart < order.count, order[orderStart].expires <= now {
            let entry = order[orderStart]
            if let current = taken[entry.key], current.expires == entry.expires { taken[entry.key] = nil }
            orderStart += 1
        }
        compact()
    }

    private mutating func evictOldest() {
        while orderStart < order.count {
            let entry = order[orderStart]
            orderStart += 1
            if let current = taken[entry.key], current.expires == entry.expires {
                taken[entry.key] = nil
                break
            }
        }
        compact()
    }

    /// Drops the consumed front of `order` once it is most of the array, so it stays
    /// within twice the live entries.
    private mutating func compact() {
        if orderStart > 64, orderStart * 2 > order.count {
            order.removeFirst(orderStart)
            orderStart = 0
        }
    }
}
