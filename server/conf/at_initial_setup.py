"""
Runs once, the first time the server starts: builds the demo world.

"""


def at_initial_setup():
    from world.build import build_demo_world

    build_demo_world()
