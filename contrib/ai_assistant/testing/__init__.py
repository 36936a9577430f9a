"""
Model doubles for tests, usable in a game's own tests.

- `server.LocalModelServer`: an OpenAI-compatible server on 127.0.0.1, so calls go through the
  real `openai` SDK; `server.ScriptedResponder` answers it from a script the test writes (the
  demo serves the offline rehearsal model with it too: `ai_assistant.offline`).
- `scripted.ScriptedModel`: an in-process scripted client for pure-core tests.

"""
