"""
The Evennia shell: what connects the pure core to a running game (Attributes, the ticker's
work, the reactor, the characters' hooks, the builders' command parts). Only this package, the
public modules at the top (`characters`, `commands`, `handler`, `scripts`, `transport`,
`sqlite_pragmas`) and `web/` import Evennia; nothing in the core imports them.

"""
