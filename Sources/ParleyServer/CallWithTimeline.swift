import ParleyStore

/// The body of `GET /v1/calls/{id}` (docs/rest.md): the call record's members, then
/// `timeline`, the call's events in recorded order.
struct CallWithTimeline: Sendable, Encodable {
    let call: StoredCall
    let timeline: [CallEvent]

    private enum Key: String, CodingKey { case timeline }

    func encode(to encoder: any Encoder) throws {
        // One JSON object: the record's keyed members and `timeline` side by side.
        try call.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(timeline, forKey: .timeline)
    }
}
