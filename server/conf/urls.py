"""
The demo game's URLs: Evennia's website and webclient, its admin site, and the assistant
dashboard under /assistants/ (the demo has no web/ folder of its own; a game with one adds the
same `path` line to its web/website/urls.py).

The admin is here as in every game Evennia makes (`evennia --init`): the website's menu links
staff accounts to it, so without it every page that shows the menu, Evennia's own 404 page
included, fails for the superuser.

"""

from django.urls import include, path

from evennia.web.urls import urlpatterns as evennia_urlpatterns

urlpatterns = [
    path("assistants/", include("ai_assistant.web.urls")),
    path("admin/", include("evennia.web.admin.urls")),
    *evennia_urlpatterns,
]
