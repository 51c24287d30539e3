import ParleySIP

extension SIPHeaders {
    /// Replaces the first Via value with `via`, keeping the place of the field and any
    /// further values of it.
    mutating func replaceTopVia(with via: SIPVia) {
        guard let index = fields.firstIndex(where: { $0.canonicalName == "via" }) else { return }
        let name = fields[index].name
        removeFirstValue(name: "via")
        try? insert(name: name, value: via.description, at: index)
    }
}
