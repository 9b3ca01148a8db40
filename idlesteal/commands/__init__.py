"""The subcommands: each one's options, check after parsing and body, by
group (kernel, boot, bench, suite, scx, stress, asym), the option groups
and checks they share (opts, common), the argument checks (args) and the
optional-library checks (needs); cli.py puts them into one parser."""
