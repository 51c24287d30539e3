/// The `--help` text, built from `ConfigurationOption.all` so it lists every setting.
enum DaemonUsage {
    static let version = "parleyd 0.1.0 (Parley signaling protocol parley.v1)"

    static var text: String {
        var out = """
            usage: parleyd [serve] [options]
                   parleyd app create [--name NAME] [--data-dir DIR] [--json]
                   parleyd app list [--show-secrets] [--data-dir DIR] [--json]
                   parleyd app rotate-secret KEY [--grace SECONDS] [--data-dir DIR] [--json]
                   parleyd app push set-apns|set-fcm|show KEY ... [--data-dir DIR] [--json]
                   parleyd app show|set-cli|set-dialling KEY ... [--data-dir DIR] [--json]
                   parleyd app callback set|show|clear KEY ... [--data-dir DIR] [--json]
                   parleyd --help | --version

            serve (the default) runs the server: WebSocket signaling on /v1/ws and the REST API
            (/v1/calls, /healthz, /metrics) on each listen address, media on UDP.
            Settings, highest precedence first: flags, PARLEY_* environment variables, the JSON
            file of --config, defaults. Durations are in seconds (fractions allowed).

            serve options (environment variable; JSON key; default):

            """
        for option in ConfigurationOption.all {
            let flag = option.valueName.isEmpty ? option.flag : option.flag + " " + option.valueName
            out += "  " + flag.padded(to: 30) + option.help + "\n"
            let file = option.inFile ? option.jsonKey : "(not in the file)"
            out += "  " + "".padded(to: 30) + "\(option.environmentName); \(file); default \(option.defaultText)\n"
        }
        out += """

            app commands open the store in the data directory (--data-dir, PARLEY_DATA_DIR,
            the file's dataDir, default ./.parley) directly; they work while a server runs on it.
              app create          new application: prints its key and secret (keep the secret)
                --name NAME       a label (default "default")
              app list            key, name and times of each application, without secrets
                --show-secrets    with the current and previous secrets
              app rotate-secret KEY
                                  new secret for KEY; the old one stays valid for the grace period
                --grace SECONDS   grace period of the old secret (default 86400; 0 after a leak)
              --json              print JSON ({"key", "secret", ...}; list: an array)

            \(PushAdminCommands.usage)
            \(DiallingAdminCommands.usage)

            \(CallbackAdminCommands.usage)

            exit status: 0 success, 1 failure (store, network), 2 bad usage or configuration

            """
        return out
    }
}

extension String {
    fileprivate func padded(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
