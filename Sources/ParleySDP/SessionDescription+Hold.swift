extension SessionDescription {
    /// Our offer putting the far side on hold (RFC 3264 §8.4), made from our current
    /// session: every active media section `a=sendonly`, or `a=inactive` when the far side
    /// has us on hold already (`remoteHolds`: neither side sends then), and the `o=`
    /// version one higher, as every changed offer needs (§8). Codecs, ports and the rest
    /// stay as they were, so the far side changes nothing else.
    /// - Throws: `SDPError` (`.malformedLine`) when the `o=` version is not a number that
    ///   can grow.
    public func holding(remoteHolds: Bool = false) throws(SDPError) -> SessionDescription {
        try nextVersion(direction: remoteHolds ? .inactive : .sendonly)
    }

    /// Our offer resuming the session after hold: every active media section
    /// `a=sendrecv`, the `o=` version one higher (RFC 3264 §8.4, §8).
    /// - Throws: `SDPError` (`.malformedLine`) when the `o=` version cannot grow.
    public func resuming() throws(SDPError) -> SessionDescription {
        try nextVersion(direction: .sendrecv)
    }

    /// This session as the next version with `direction` on every media section that is
    /// not rejected (port 0 stays as it is, RFC 3264 §8.2). A session-level direction is
    /// dropped so that the sections' own direction is the one in force.
    func nextVersion(direction: MediaDirection) throws(SDPError) -> SessionDescription {
        guard let version = UInt64(origin.sessionVersion), version < UInt64.max else {
            throw SDPError(.malformedLine, line: nil, "o= version \"\(origin.sessionVersion)\" cannot be incremented")
        }
        let directions = Set(MediaDirection.allCases.map(\.rawValue))
        var next = self
        next.origin.sessionVersion = String(version + 1)
        next.attributes.removeAll { directions.contains($0.name) }
        for index in next.media.indices where next.media[index].port != 0 {
            next.media[index].attributes.removeAll { directions.contains($0.name) }
            next.media[index].attributes.append(direction.attribute)
        }
        return next
    }
}
