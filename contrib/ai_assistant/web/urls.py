"""URLs of the assistant dashboard, included under a prefix such as `assistants/`."""

from django.urls import path

from . import views

app_name = "ai_assistant"

urlpatterns = [
    path("", views.assistant_list, name="list"),
    path("<int:dbid>/", views.assistant_detail, name="detail"),
    path("<int:dbid>/action/", views.assistant_action, name="action"),
]
