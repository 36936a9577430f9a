"""
A web workbench for builders: every assistant, and each one's conversation, memory, context,
sleep and settings, seen and corrected from the game's website.

Add it to a game with one line in `web/website/urls.py`:
`path("assistants/", include("ai_assistant.web.urls"))` (README, "Installing into your game"),
and, to link builders to it from every page of the site, one line in the game's settings:
`from ai_assistant.web.menu import add_menu_link; add_menu_link(TEMPLATES)`.

"""
