import ParleyCallModel
import ParleyVoiceAPI
import ParleyWireCore

/// Reading `ttsCallout` and `customCallout` requests (docs/rest.md, "Callouts"), in the
/// Sinch Voice API's shape: everything is checked here, so a request the server cannot
/// carry out is refused at once (400 for a malformed one, 501 for what is not built) and
/// nothing is dialled.
extension RESTAPI {
    /// The server callout a body asks for, or why it cannot be placed.
    static func serverCallout(from body: [UInt8]) -> Result<ServerCalloutRequest, CalloutRefusal> {
        do throws(CalloutRefusal) {
            guard case .object(let object)? = try? StrictJSONParser.parse(body, maxDepth: 16) else {
                throw CalloutRefusal(400, 40000, "the body must be a JSON object")
            }
            guard case .string(let method)? = object["method"] else {
                throw CalloutRefusal(400, 40000, #"the body must name a "method" (ttsCallout, customCallout, conferenceCallout)"#)
            }
            switch method.lowercased() {
            case "ttscallout":
                guard case .object(let details)? = object["ttsCallout"] else {
                    throw CalloutRefusal(400, 40000, #"a ttsCallout needs a "ttsCallout" object"#)
                }
                return .success(try ttsCallout(details))
            case "customcallout":
                guard case .object(let details)? = object["customCallout"] else {
                    throw CalloutRefusal(400, 40000, #"a customCallout needs a "customCallout" object"#)
                }
                return .success(try customCallout(details))
            default:
                throw CalloutRefusal(400, 40000, "unknown callout method \(printable(method))")
            }
        } catch {
            return .failure(error)
        }
    }

    /// `ttsCallout`: `destination`, `cli`, `custom`, `locale`, `text` and/or `prompts`,
    /// `dtmf`, `domain`, `enableAce`, `enableDice`, `enablePie`.
    private static func ttsCallout(_ details: JSONObject) throws(CalloutRefusal) -> ServerCalloutRequest {
        guard let destination = try calloutDestination(details["destination"], method: "ttsCallout") else {
            throw CalloutRefusal(400, 40000, #"a ttsCallout needs a "destination" with "type" and "endpoint" strings"#)
        }
        let locale = try string(details, "locale", maxBytes: 64)
        let text = try string(details, "text", maxBytes: 4 * PromptLibrary.maximumTextCharacters)
        let prompts = try string(details, "prompts", maxBytes: 4096)
        var steps: [ServerCalloutRequest.Step] = []
        if let tones = try string(details, "dtmf", maxBytes: 64) { steps.append(.sendDTMF(try dtmf(tones, field: "dtmf"))) }
        if let text, !text.isEmpty {
            guard text.count <= PromptLibrary.maximumTextCharacters else {
                throw CalloutRefusal(400, 40000, #""text" is over \#(PromptLibrary.maximumTextCharacters) characters"#)
            }
            steps.append(.say(text: text, locale: locale))
        }
        if let prompts, !prompts.isEmpty {
            do throws(PromptLibrary.Failure) { _ = try PromptLibrary.parts(ofPrompt: prompts, locale: locale) } catch {
                throw CalloutRefusal(400, 40000, #""prompts" cannot be played: \#(error.description)"#)
            }
            steps.append(.prompt(prompts, locale: locale))
        }
        guard steps.contains(where: { if case .sendDTMF = $0 { false } else { true } }) else {
            throw CalloutRefusal(400, 40000, #"a ttsCallout needs "text" or "prompts" to play"#)
        }
        if let domain = try string(details, "domain", maxBytes: 16), !["pstn", "mxp"].contains(domain.lowercased()) {
            throw CalloutRefusal(400, 40000, #""domain" must be pstn or mxp"#)
        }
        _ = try flag(details, "enablePie")  // no menus in a ttsCallout: nothing asks for a PIE
        return ServerCalloutRequest(
            method: .ttsCallout, destination: destination, cli: try cli(details), custom: try string(details, "custom", maxBytes: 1024),
            steps: steps, ending: .hangup, sendsACE: try flag(details, "enableAce"), sendsDiCE: try flag(details, "enableDice"))
    }

    /// `customCallout`: `ice` (SVAML whose `connectPstn` or `connectSip` places the call and
    /// whose instructions run when it is answered), `ace` (SVAML run next: instructions,
    /// then `hangup` or `continue`; without it the backend gets an ACE), `pie` (refused:
    /// no menus), `dice` (accepted, unused: a DiCE has no answer), `destination`, `cli`,
    /// `custom`, `dtmf`, `maxDuration`.
    private static func customCallout(_ details: JSONObject) throws(CalloutRefusal) -> ServerCalloutRequest {
        guard let iceText = try string(details, "ice", maxBytes: Self.maximumCalloutBytes), !iceText.isEmpty else {
            throw CalloutRefusal(400, 40000, #"a customCallout needs "ice": SVAML whose connectPstn or connectSip places the call"#)
        }
        let ice = try svaml(iceText, field: "ice", answering: .ice)
        let destination = try calloutDestination(details["destination"], method: "customCallout")
        var steps: [ServerCalloutRequest.Step] = []
        var headers: [String: String] = [:]
        var target: PartyAddress
        var cli = try cli(details)
        var maximumLength: Duration?
        var ringTimeout: Duration?
        switch ice.action {
        case .connectPstn(var connect):
            if connect.number == nil, case .phone(let number)? = destination { connect.number = try? PhoneNumber(normalizing: number) }
            let route: SVAMLBridgeRoute
            do throws(SVAMLBridgeRoute.Refusal) {
                guard let made = try SVAMLBridgeRoute(.connectPstn(connect), headers: [:]) else { throw .init("connectPstn") }
                route = made
            } catch {
                throw CalloutRefusal(400, 40000, "ice: \(error.message) (or a destination of type number)")
            }
            target = route.target
            cli = route.cli ?? cli
            maximumLength = route.maximumLength
            ringTimeout = route.ringTimeout
            if let tones = connect.dtmf, !tones.isEmpty { steps.append(.sendDTMF(try dtmf(tones, field: "ice: connectPstn's dtmf"))) }
        case .connectSip:
            do throws(SVAMLBridgeRoute.Refusal) {
                guard let route = try SVAMLBridgeRoute(ice.action, headers: [:]) else { throw .init("connectSip") }
                target = route.target
                cli = route.cli ?? cli
                headers = route.headers
                maximumLength = route.maximumLength
            } catch {
                throw CalloutRefusal(400, 40000, "ice: \(error.message)")
            }
        default:
            throw CalloutRefusal(501, 50100, "ice: a customCallout is placed by connectPstn or connectSip; \(ice.action.name.rawValue) is not supported in a callout yet")
        }
        if let tones = try string(details, "dtmf", maxBytes: 64) { steps.append(.sendDTMF(try dtmf(tones, field: "dtmf"))) }
        steps += try calloutSteps(ice.instructions, field: "ice")
        var ending = ServerCalloutRequest.Ending.continue
        let aceText = try string(details, "ace", maxBytes: Self.maximumCalloutBytes)
        if let aceText, !aceText.isEmpty {
            let ace = try svaml(aceText, field: "ace", answering: .ace)
            steps += try calloutSteps(ace.instructions, field: "ace")
            switch ace.action {
            case .hangup: ending = .hangup
            case .continue: ending = .continue
            default:
                throw CalloutRefusal(501, 50100, "ace: \(ace.action.name.rawValue) is not supported in a callout yet; hangup and continue are")
            }
        }
        if let pie = try string(details, "pie", maxBytes: Self.maximumCalloutBytes), !pie.isEmpty {
            throw CalloutRefusal(501, 50100, "pie: menus (runMenu) are not supported in a callout yet, so a callout has no PIE")
        }
        _ = try string(details, "dice", maxBytes: Self.maximumCalloutBytes)
        if let value = details["maxDuration"], value != .null {
            guard case .number(let literal) = value, let seconds = Int64(literal), seconds > 0 else {
                throw CalloutRefusal(400, 40000, #""maxDuration" must be a whole number of seconds above 0"#)
            }
            let limit = Duration.seconds(min(seconds, 86_400))
            maximumLength = maximumLength.map { min($0, limit) } ?? limit
        }
        return ServerCalloutRequest(
            method: .customCallout, destination: target, cli: cli, custom: try string(details, "custom", maxBytes: 1024),
            headers: headers, maximumLength: maximumLength, ringTimeout: ringTimeout, steps: steps, ending: ending,
            sendsACE: aceText?.isEmpty ?? true, sendsDiCE: true)
    }

    // MARK: Fields

    /// `destination` `{type, endpoint}`: a number (normalised to E.164) or a SIP address;
    /// nil when absent. An app user is 501: playing into an app's WebRTC leg is not built.
    private static func calloutDestination(_ value: JSONValue?, method: String) throws(CalloutRefusal) -> PartyAddress? {
        guard let value, value != .null else { return nil }
        guard case .object(let destination) = value, case .string(let type)? = destination["type"],
              case .string(let endpoint)? = destination["endpoint"] else {
            throw CalloutRefusal(400, 40000, #""destination" needs "type" and "endpoint" strings"#)
        }
        switch type.lowercased() {
        case "number":
            do throws(VoiceAPIError) { return .phone(try PhoneNumber(normalizing: endpoint).e164) } catch {
                throw CalloutRefusal(400, 40000, "destination number \(printable(endpoint)) is not a phone number")
            }
        case "sip":
            var address = endpoint
            for scheme in ["sip:", "sips:"] where address.lowercased().hasPrefix(scheme) { address = String(address.dropFirst(scheme.count)) }
            if let problem = PartyAddress.sip(address).formatProblem {
                throw CalloutRefusal(400, 40000, "destination SIP address \(printable(endpoint)) is not valid: \(problem)")
            }
            return .sip(address)
        case "username":
            throw CalloutRefusal(501, 50100, "a \(method) to an app user (username) is not supported: parleyd has no prompt player on an app's WebRTC leg yet; number and sip are")
        default:
            throw CalloutRefusal(400, 40000, "unknown destination type \(printable(type)); number, sip or username")
        }
    }

    private static func cli(_ details: JSONObject) throws(CalloutRefusal) -> String? {
        guard let text = try string(details, "cli", maxBytes: 64), !text.isEmpty else { return nil }
        do throws(VoiceAPIError) { return try PhoneNumber(normalizing: text).e164 } catch {
            throw CalloutRefusal(400, 40000, #""cli" \#(printable(text)) is not a phone number"#)
        }
    }

    private static func string(_ details: JSONObject, _ key: String, maxBytes: Int) throws(CalloutRefusal) -> String? {
        guard let value = details[key], value != .null else { return nil }
        guard case .string(let text) = value, text.utf8.count <= maxBytes else {
            throw CalloutRefusal(400, 40000, #""\#(key)" must be a string of at most \#(maxBytes) bytes"#)
        }
        return text
    }

    private static func flag(_ details: JSONObject, _ key: String) throws(CalloutRefusal) -> Bool {
        guard let value = details[key], value != .null else { return false }
        guard case .bool(let flag) = value else {
            throw CalloutRefusal(400, 40000, #""\#(key)" must be true or false"#)
        }
        return flag
    }

    /// DTMF as Sinch takes it: `0`-`9`, `*`, `#`, `A`-`D` and `w` (half a second of pause).
    private static func dtmf(_ tones: String, field: String) throws(CalloutRefusal) -> String {
        guard !tones.isEmpty, tones.count <= 64, tones.allSatisfy({ "0123456789*#ABCDwW".contains($0) }) else {
            throw CalloutRefusal(400, 40000, "\(field) must be 1-64 of 0-9 * # A-D and w")
        }
        return tones
    }

    private static func svaml(_ text: String, field: String, answering context: SVAMLContext) throws(CalloutRefusal) -> SVAMLResponse {
        do throws(VoiceAPIError) { return try SVAMLResponse.decode(Array(text.utf8), answering: context) } catch {
            throw CalloutRefusal(400, 40000, "\(field) is not SVAML a callout can run: \(error.description)")
        }
    }

    /// SVAML instructions as callout steps: `say`, `playFiles` (their files must exist),
    /// `sendDtmf`, `setCookie`; `answer` is the callee's own; recording is not built.
    private static func calloutSteps(_ instructions: [SVAMLInstruction], field: String) throws(CalloutRefusal) -> [ServerCalloutRequest.Step] {
        var steps: [ServerCalloutRequest.Step] = []
        for instruction in instructions {
            switch instruction {
            case .say(let text, let locale):
                steps.append(.say(text: text, locale: locale))
            case .playFiles(let ids, let locale):
                do throws(PromptLibrary.Failure) { _ = try PromptLibrary.parts(ofFiles: ids, locale: locale) } catch {
                    throw CalloutRefusal(400, 40000, "\(field): playFiles cannot be played: \(error.description)")
                }
                steps.append(.playFiles(ids, locale: locale))
            case .sendDtmf(let tones):
                steps.append(.sendDTMF(tones))
            case .setCookie(let key, let value):
                steps.append(.setCookie(key: key, value: value))
            case .answer:
                break
            case .startRecording, .stopRecording:
                throw CalloutRefusal(501, 50100, "\(field): \(instruction.name.rawValue) is not supported yet")
            }
        }
        return steps
    }
}
