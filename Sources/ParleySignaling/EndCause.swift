public import ParleyCallModel

extension SignalingMessage {
    /// Why a call ended (`call.ended`'s `cause`): the call model's `CallEndCause`, which
    /// the store records too. The protocol's name is kept so readers of a frame find it here.
    public typealias EndCause = CallEndCause
}
