import ParleySDP

extension InspectFormat {
    /// A session description, every line and attribute, with typed attributes decoded
    /// beside their raw text (or the reason they do not decode).
    func inspectSDP(_ input: [UInt8]) throws(InspectCommand.Failure) -> String {
        let description: SessionDescription
        do { description = try SessionDescription(parsing: input) } catch { throw .invalid(.sdp, error) }
        return try InspectCommand.json(description)
    }
}
