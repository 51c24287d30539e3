import ParleySignaling

extension InspectFormat {
    /// A signaling frame is validated as the receiver would (either direction), then
    /// printed in its canonical wire form.
    func inspectSignaling(_ input: [UInt8]) throws(InspectCommand.Failure) -> String {
        let message: SignalingMessage
        do { message = try SignalingCodec.decode(input) } catch { throw .invalid(.signaling, error) }
        return try InspectCommand.json(message)
    }
}
