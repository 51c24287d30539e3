import Foundation
import ParleyAuth

/// `parley token --app KEY --secret SECRET --as USER [--ttl SECONDS]`: mints a user token
/// the way an application backend does (docs/auth.md) and prints it. Needs no server.
enum TokenCommand {
    struct Options: Equatable {
        var applicationKey: String
        var secret: String
        var userID: String
        var lifetime: Int64 = SoftphoneOptions.defaultTokenLifetime
    }

    static let help = """
        usage: parley token --app KEY --secret SECRET --as USER [--ttl SECONDS]

        Mints a user token (HS256 JWT, docs/auth.md) for USER of application KEY, signed
        with a key derived from SECRET, and prints it on one line. Works without a server.

          --ttl SECONDS   lifetime, 1-86400 (default 600)

        """

    static func main(_ arguments: [String], now: Int64 = Int64(Date().timeIntervalSince1970)) -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            print(help, terminator: "")
            return 0
        }
        do throws(SoftphoneUsageError) {
            let options = try parse(arguments)
            let token = try mint(options, now: now)
            FileHandle.standardOutput.write(Data((token + "\n").utf8))
            return 0
        } catch {
            FileHandle.standardError.write(Data("parley token: \(error.message)\n".utf8))
            return SoftphoneExitCode.usage.rawValue
        }
    }

    static func parse(_ arguments: [String]) throws(SoftphoneUsageError) -> Options {
        var reader = ArgumentReader(arguments)
        var app: String?, secret: String?, user: String?, ttl: Int64?
        while let argument = reader.next() {
            var flag = argument, inline: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                flag = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            func once<T>(_ current: T?, _ value: T) throws(SoftphoneUsageError) -> T {
                guard current == nil else { throw SoftphoneUsageError("\(flag) given twice") }
                return value
            }
            switch flag {
            case "--app": app = try once(app, reader.value(for: flag, inline: inline))
            case "--secret": secret = try once(secret, reader.value(for: flag, inline: inline))
            case "--as": user = try once(user, reader.value(for: flag, inline: inline))
            case "--ttl": ttl = try once(ttl, SoftphoneOptions.parseTokenLifetime(reader.value(for: flag, inline: inline)))
            default:
                throw SoftphoneUsageError(flag.hasPrefix("-") ? "unknown option '\(flag)'" : "unexpected argument '\(flag)'")
            }
        }
        guard let app else { throw SoftphoneUsageError("missing --app KEY") }
        guard let secret else { throw SoftphoneUsageError("missing --secret SECRET") }
        guard let user else { throw SoftphoneUsageError("missing --as USER") }
        return Options(applicationKey: app, secret: secret, userID: user, lifetime: ttl ?? SoftphoneOptions.defaultTokenLifetime)
    }

    /// A fresh token with a random nonce, issued at `now` (Unix seconds).
    static func mint(_ options: Options, now: Int64) throws(SoftphoneUsageError) -> String {
        do {
            return try UserToken.mint(
                applicationKey: options.applicationKey, secret: options.secret, userID: options.userID,
                issuedAt: now, lifetime: options.lifetime, nonce: UserToken.randomNonce())
        } catch {
            throw SoftphoneUsageError("cannot mint a token: \(error.description)")
        }
    }
}
