"""Wiring only: the Chalice app, its blueprints and its middleware."""

from chalice import Chalice

from chalicelib.api import collaborators, health, projects, roles, users
from chalicelib.api.http import error_bodies

app = Chalice(app_name="conveyor")
app.register_middleware(error_bodies, "http")
app.register_blueprint(health.blueprint)
for resource in (users, collaborators, roles, projects):
    app.register_blueprint(resource.api.blueprint)
