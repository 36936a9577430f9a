"""URLs of the assistant dashboard, included under a prefix such as `assistants/`."""

from django.urls import path, re_path

from . import views

app_name = "ai_assistant"

urlpatterns = [
    path("", views.assistant_list, name="list"),
    path("<int:dbid>/", views.assistant_detail, name="detail"),
    path("<int:dbid>/person/", views.assistant_person, name="person"),
    path("<int:dbid>/action/", views.assistant_action, name="action"),
    # anything else under the dashboard is its own 404 page, not the game's (see
    # views.dashboard_view); it adds a missing final slash to a real address, as Django would
    re_path(r"^(?P<rest>.+)$", views.not_found, name="not_found"),
]
