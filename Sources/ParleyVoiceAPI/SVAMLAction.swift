public import ParleyWireCore

/// The one action of an SVAML answer: what happens to the call after the instructions.
public enum SVAMLAction: Sendable, Hashable {
    case connectMxp(ConnectMxpAction)
    case connectPstn(ConnectPstnAction)
    case connectSip(ConnectSipAction)
    case connectConf(ConnectConfAction)
    /// Ends the call.
    case hangup
    /// Goes on with the call as it was set up (answers ACE and PIE).
    case `continue`
    case park(ParkAction)
    case runMenu(RunMenuAction)

    /// The `name` member of each action, as Parley writes it; read in any case
    /// (`connectMXP`, `ConnectPstn`, `RunMenu` all appear in Sinch's pages).
    public enum Name: String, Sendable, Hashable, CaseIterable {
        case connectMxp, connectPstn, connectSip, connectConf, hangup, `continue`, park, runMenu
    }

    public var name: Name {
        switch self {
        case .connectMxp: .connectMxp
        case .connectPstn: .connectPstn
        case .connectSip: .connectSip
        case .connectConf: .connectConf
        case .hangup: .hangup
        case .continue: .continue
        case .park: .park
        case .runMenu: .runMenu
        }
    }

    /// The JSON form: `name` first, then the action's fields.
    public var json: JSONValue {
        var object = JSONObject()
        object.append("name", name.rawValue)
        switch self {
        case .connectMxp(let action): action.write(into: &object)
        case .connectPstn(let action): action.write(into: &object)
        case .connectSip(let action): action.write(into: &object)
        case .connectConf(let action): action.write(into: &object)
        case .park(let action): action.write(into: &object)
        case .runMenu(let action): action.write(into: &object)
        case .hangup, .continue: break
        }
        return .object(object)
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> SVAMLAction {
        let text = try reader.string("name", maxBytes: 64)
        guard let name = Name.allCases.first(where: { ASCIICase.equal($0.rawValue, text) }) else {
            let known = Name.allCases.map(\.rawValue).joined(separator: ", ")
            throw reader.failure("name", "\(FieldReader.quoted(text)) is not an action (known: \(known))", kind: .unknownAction)
        }
        switch name {
        case .connectMxp: return .connectMxp(try ConnectMxpAction.read(reader))
        case .connectPstn: return .connectPstn(try ConnectPstnAction.read(reader))
        case .connectSip: return .connectSip(try ConnectSipAction.read(reader))
        case .connectConf: return .connectConf(try ConnectConfAction.read(reader))
        case .hangup: return .hangup
        case .continue: return .continue
        case .park: return .park(try ParkAction.read(reader))
        case .runMenu: return .runMenu(try RunMenuAction.read(reader))
        }
    }
}
