import ParleyCallCore
import ParleyServer

/// `parleyd serve`'s static number routing (issue 12; docs/operations.md, "Callbacks and
/// numbers"): `--sip-number NUMBER=KEY[:user:ID|:conference:ID|:number:+E164|:sip:USER@DOMAIN]`, repeatable, the same as
/// an array of strings under `sipNumber` in the JSON file and comma-separated in
/// `PARLEY_SIP_NUMBER`. Calls reach numbers over SIP, so rules need `--sip-listen`.
enum NumberRouteSettings {
    /// The options, in the order `--help` lists them (after the SIP gateway's).
    static let options: [ConfigurationOption] = [
        .init(name: "sip-number", kind: .list, valueName: "NUMBER=KEY[:user:ID|:conference:ID|:number:+E164|:sip:USER@DOMAIN]", defaultText: "none",
              help: "a phone number's application and, without its backend, the user, room, number or SIP address calls to it reach; repeatable; environment: comma-separated"),
    ]

    /// The rules of the settings, into `configuration` (after `--sip-listen` is read).
    /// - Throws: `DaemonUsageError` naming the setting and the rule, for a rule that does
    ///   not parse, a number with two rules, or rules without `--sip-listen`.
    static func apply(_ settings: DaemonCommandLine.SettingValues, to configuration: inout ServerConfiguration) throws {
        guard let setting = settings["sip-number"] else { return }
        var routes: [NumberRoute] = []
        for text in setting.values {
            do {
                routes.append(try NumberRoute(parsing: text))
            } catch {
                throw DaemonUsageError("\(setting.source): \(error)")
            }
        }
        do {
            configuration.numberRoutes = try NumberRouteTable(routes)
        } catch {
            throw DaemonUsageError("\(setting.source): \(error)")
        }
        if !routes.isEmpty, configuration.sipListenAddress == nil {
            throw DaemonUsageError("\(setting.source) needs --sip-listen (calls reach numbers over SIP)")
        }
    }
}
