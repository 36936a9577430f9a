"""
The offline model: an assistant that runs without a model endpoint.

- `rehearsal.RehearsalResponder`: deterministic rules that stand in for a model (any game with
  `AI_ASSISTANT_REHEARSAL = True` in its settings, through `rehearsal.rehearsal_client`; the
  demo; `AssistantMemory` when it is given no model). Not intelligence: its lines end with
  "(rehearsal)".
- `replies`: answers in the OpenAI wire format, made in process, and `ResponderClient`, a
  `ChatClient` that answers with a responder without HTTP.

The test doubles (a scripted model, an OpenAI-compatible server on 127.0.0.1) are in
`ai_assistant.testing`.

"""
