"""
The demo game's URLs: Evennia's website and webclient, and the assistant dashboard under
/assistants/ (the demo has no web/ folder of its own; a game with one adds the same `path` line to
its web/website/urls.py).

"""

from django.urls import include, path

from evennia.web.urls import urlpatterns as evennia_urlpatterns

urlpatterns = [
    path("assistants/", include("ai_assistant.web.urls")),
    *evennia_urlpatterns,
]
