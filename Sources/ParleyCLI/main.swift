// `parley`: the command-line softphone and admin tool.
// Today it has one command, `inspect`; calling commands arrive with the calling issue.
import Foundation

let usage = """
    usage: parley <command> [options]

    commands:
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
case "help", "--help", "-h":
    print(usage, terminator: "")
    exit(0)
default:
    FileHandle.standardError.write(Data("parley: unknown command '\(command)' (try 'parley help')\n".utf8))
    exit(2)
}
