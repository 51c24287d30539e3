// `parley`: the command-line softphone and admin tool.
// `call`, `listen` and `token` are the softphone (docs/softphone.md); `inspect` decodes
// wire messages (docs/inspect.md).
import Foundation

let usage = """
    usage: parley <command> [options]

    commands:
      call USER --server URL --app KEY (--secret SECRET | --token JWT) --as USER [options]
                  place a call to USER and report its events, statistics and end
      conference ROOM --server URL --app KEY (--secret SECRET | --token JWT) --as USER [options]
                  join conference room ROOM (its own options: parley conference --help)
      listen --server URL --app KEY (--secret SECRET | --token JWT) --as USER [options]
                  take incoming calls (Enter answers, d+Enter declines; or --answer/--decline)
      token --app KEY --secret SECRET --as USER [--ttl SECONDS]
                  mint a user token and print it
      inspect stun|rtp|rtcp|sdp|ws|signaling [FILE] [--hex] [--password PW]
                  decode one message from FILE (or standard input) and print it as JSON
      help        show this text

    """

var arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
arguments.removeFirst()

switch command {
case "inspect":
    exit(InspectCommand.main(arguments))
case "token":
    exit(TokenCommand.main(arguments))
case "call", "listen", "conference":
    exit(SoftphoneCommand.main(command: command, arguments))
case "help", "--help", "-h":
    print(usage, terminator: "")
    exit(0)
default:
    FileHandle.standardError.write(Data("parley: unknown command '\(command)' (try 'parley help')\n".utf8))
    exit(2)
}
