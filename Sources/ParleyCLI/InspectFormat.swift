/// The message formats `parley inspect` decodes.
enum InspectFormat: String, CaseIterable {
    case stun, rtp, rtcp, sdp, ws

    /// Decodes `input` and returns the JSON text to print, or throws a one-line failure.
    func inspect(_ input: [UInt8], options: InspectCommand.Options) throws(InspectCommand.Failure) -> String {
        throw InspectCommand.Failure(message: "\(rawValue) is not decodable yet")
    }
}
