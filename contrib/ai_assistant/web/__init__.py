"""
A web dashboard for builders: every assistant, and one assistant's state, memory and usage.

Add it to a game with one line in `web/website/urls.py`:
`path("assistants/", include("ai_assistant.web.urls"))`.

"""
