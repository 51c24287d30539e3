import ParleyWebSocket

extension InspectFormat {
    /// An optional HTTP upgrade head followed by frames, masked or not.
    func inspectWebSocket(_ input: [UInt8]) throws(InspectCommand.Failure) -> String {
        let inspection: WebSocketInspection
        do { inspection = try WebSocketInspection.inspect(input) } catch { throw .invalid(.ws, error) }
        return try InspectCommand.json(inspection)
    }
}
