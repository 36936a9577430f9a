"""
An in-process model client that answers from a script, for fast tests of the pure core.

`ScriptedModel` stands where the `openai` client would: it answers `complete` with the next
scripted `ChatReply` (or raises the next scripted `LLMError`), and `embed` with deterministic
bag-of-words vectors. Calling it returns itself, so it also serves as a brain's
`client_factory`. It fails loudly: a call beyond the script raises `ScriptError`, and `verify()`
raises it for scripted answers nobody asked for.

"""

from .server import ScriptError, bag_of_words_embedding

__all__ = ["ScriptError", "ScriptedModel"]


class ScriptedModel:
    """A model that answers from a script and records every request.

    Args:
        *answers: `ChatReply` objects to return, or `LLMError` objects to raise, in order.

    Attributes:
        requests (list): Every `ChatRequest` received.
        embedded (list): Every list of texts embedded.
        input_types (list): The `input_type` of each `embed` call (None when none was sent).
        embed_errors (list): `LLMError`s for the next `embed` calls to raise, in order.
        instances (list): Class attribute: every ScriptedModel made, so a test runner can
            `verify_all()` after each test.

    """

    instances: list = []

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests = []
        self.embedded: list[list[str]] = []
        self.input_types: list[str | None] = []
        self.embed_errors: list[Exception] = []
        ScriptedModel.instances.append(self)

    def __call__(self):
        return self

    def complete(self, request):
        """Record the request and give the next scripted answer.

        Args:
            request (ChatRequest): The request.

        Returns:
            ChatReply: The next scripted reply.

        Raises:
            LLMError: When the next scripted answer is an error (it is raised as it is).
            ScriptError: When no answer is left.

        """
        self.requests.append(request)
        if not self.answers:
            last = (request.messages or [{}])[-1].get("content")
            raise ScriptError(
                f"call {len(self.requests)} is beyond the script; it ended with {str(last)[:200]!r}"
            )
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def embed(self, model, texts, input_type=None):
        """Record the texts and embed them with `bag_of_words_embedding` (or raise the next of
        `embed_errors`).

        Args:
            model (str): Ignored.
            texts (list): The texts.
            input_type (str, optional): Recorded in `input_types`.

        Returns:
            list: One vector per text.

        Raises:
            LLMError: The next of `embed_errors`, if any.

        """
        if self.embed_errors:
            raise self.embed_errors.pop(0)
        self.embedded.append(list(texts))
        self.input_types.append(input_type)
        return [bag_of_words_embedding(text) for text in texts]

    def verify(self) -> None:
        """Raise `ScriptError` when scripted answers were left unused."""
        if self.answers:
            raise ScriptError(f"{len(self.answers)} scripted answer(s) never asked for")

    @classmethod
    def verify_all(cls) -> None:
        """Verify every ScriptedModel made since the last call, and forget them."""
        made, cls.instances = cls.instances, []
        for model in made:
            model.verify()
