"""
Model doubles for tests and demos, usable in a game's own tests.

- `server.LocalModelServer`: an OpenAI-compatible server on 127.0.0.1, so calls go through the
  real `openai` SDK; `server.ScriptedResponder` answers it from a script the test writes.
- `rehearsal.RehearsalResponder`: deterministic rules that stand in for a model in demos.

"""
