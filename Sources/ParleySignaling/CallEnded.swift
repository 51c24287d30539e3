public import ParleyCallModel
import ParleyWireCore

extension SignalingMessage {
    /// `call.ended` (server to device): the call is over for this device. The last event
    /// of every call, sent exactly once per call and device.
    public struct CallEnded: Sendable, Hashable {
        /// The call's id.
        public var callID: String
        /// Why it ended.
        public var cause: EndCause
        /// What failed: present exactly when `cause` is `error`.
        public var error: CallError?
        /// The call's times; `endedTime` is always set.
        public var details: CallDetails

        public init(callID: String, cause: EndCause, error: CallError? = nil, details: CallDetails) {
            precondition(details.endedTime != nil, "call.ended \(callID): details without an endedTime")
            self.callID = callID
            self.cause = cause
            self.error = error
            self.details = details
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            callID = try reader.callIDField()
            cause = try reader.enumeration("cause", as: EndCause.self)
            error = try reader.optionalObject("error").map { reader throws(SignalingError) in try CallError(reader) }
            if cause == .error, error == nil {
                throw reader.failure("error", "is required when cause is error")
            }
            if cause != .error, error != nil {
                throw reader.failure("error", "is only allowed when cause is error, not \(cause.rawValue)")
            }
            details = try CallDetails(try reader.object("details"))
        }

        func append(to object: inout JSONObject) {
            object.append("callId", callID)
            object.append("cause", cause.rawValue)
            if let error { object.append("error", error.json) }
            object.append("details", details.json)
        }
    }

    /// Why a call failed: a machine-readable code and a line for humans, such as
    /// `destination_not_found` / `destination user not found`.
    public struct CallError: Sendable, Hashable {
        public var code: SignalingErrorCode
        public var message: String

        public init(code: SignalingErrorCode, message: String) {
            self.code = code
            self.message = message
        }

        /// The wire form of a record's error.
        public init(_ error: ParleyCallModel.CallError) {
            self.init(code: SignalingErrorCode(rawValue: error.code), message: error.message)
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            code = SignalingErrorCode(rawValue: try reader.string("code", .errorCode))
            message = try reader.string("message", .message)
        }

        var json: JSONValue {
            var object = JSONObject()
            object.append("code", code.rawValue)
            object.append("message", message)
            return .object(object)
        }
    }
}

extension CallError {
    /// A record's form of the error `call.ended` carries.
    public init(_ error: SignalingMessage.CallError) {
        self.init(code: error.code.rawValue, message: error.message)
    }
}
