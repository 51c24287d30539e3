import ParleyWireCore

/// Headers as a JSON object, names in byte order so that encoding is deterministic.
func headersJSON(_ headers: [String: String]) -> JSONValue {
    var object = JSONObject()
    for name in headers.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
        object.append(name, headers[name] ?? "")
    }
    return .object(object)
}
