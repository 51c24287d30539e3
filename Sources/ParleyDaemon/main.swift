// `parleyd`: the Parley server. Parses its settings (DaemonCommandLine), then serves or
// runs an admin command. docs/operations.md describes every setting and command.
import Foundation

let parsed = DaemonCommandLine.parse(
    arguments: Array(CommandLine.arguments.dropFirst()),
    environment: ProcessInfo.processInfo.environment,
    readFile: { path in try String(contentsOfFile: path, encoding: .utf8) })

switch parsed {
case .failure(let error):
    standardError("parleyd: \(error.message)")
    exit(2)
case .success(.help):
    print(DaemonUsage.text, terminator: "")
    exit(0)
case .success(.version):
    print(DaemonUsage.version)
    exit(0)
case .success(.serve(let configuration)):
    exit(Serve.run(configuration))
case .success(let command):
    do {
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        print(try AdminCommands.run(command, now: now), terminator: "")
        exit(0)
    } catch {
        standardError("parleyd: \(error)")
        exit(1)
    }
}
