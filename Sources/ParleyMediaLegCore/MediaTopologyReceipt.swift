public import ParleyICECore

/// What a topology did with a datagram it was handed in its owner's receive buffer
/// (`MediaTopology.receive(buffer:length:from:on:local:now:)`).
public struct MediaTopologyReceipt<LegID: Hashable & Sendable>: Sendable {
    /// A packet relayed in place: send the first `length` bytes of the owner's buffer on
    /// `leg`'s socket, from `from` to `to`, before the buffer is used again.
    public struct InPlaceSend: Sendable, Hashable {
        public var leg: LegID
        public var length: Int
        public var from: ICETransportAddress
        public var to: ICETransportAddress

        public init(leg: LegID, length: Int, from: ICETransportAddress, to: ICETransportAddress) {
            self.leg = leg
            self.length = length
            self.from = from
            self.to = to
        }
    }

    /// Everything else to carry out, in order.
    public var actions: [MediaTopologyAction<LegID>]
    /// The packet to send from the buffer, if one was relayed in place.
    public var send: InPlaceSend?

    public init(actions: [MediaTopologyAction<LegID>], send: InPlaceSend? = nil) {
        self.actions = actions
        self.send = send
    }
}
