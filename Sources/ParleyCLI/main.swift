// `parley`: the command-line softphone and admin tool. Placeholder until `inspect` lands.
print("parley: no commands yet")
