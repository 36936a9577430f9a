"""
One assistant's mind: its `Brain` (its parts, its requests and their audience, its model calls,
its budget) and the one ReAct loop every tool-using talk runs (`react`). The awake turn, sleep
and context compaction work on a brain; the brain works on memory, tools and the model client.

"""
