# The project's commands. Each one works on a fresh machine: when no virtual environment is
# active it creates .venv and installs the project (with its test extras) into it first.

PYTHON ?= python3

ifdef VIRTUAL_ENV
ENV_DIR := $(VIRTUAL_ENV)
else
ENV_DIR := $(CURDIR)/.venv
endif
PY := $(ENV_DIR)/bin/python
EVENNIA := $(ENV_DIR)/bin/evennia
STAMP := $(ENV_DIR)/.ai-assistant-installed
# evennia starts twistd by name: the environment's bin must be on PATH
export PATH := $(ENV_DIR)/bin:$(PATH)

.PHONY: install test demo serve stop bench format clean

$(PY):
	$(PYTHON) -m venv $(ENV_DIR)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q

demo: $(STAMP)
	$(PY) -m world.demo_scene

serve: $(STAMP)
	@if [ ! -f server/evennia.db3 ] && { [ -z "$$EVENNIA_SUPERUSER_USERNAME" ] || [ -z "$$EVENNIA_SUPERUSER_PASSWORD" ]; }; then \
		echo "First start: set EVENNIA_SUPERUSER_USERNAME and EVENNIA_SUPERUSER_PASSWORD (the admin"; \
		echo "account to create), e.g.  EVENNIA_SUPERUSER_USERNAME=admin EVENNIA_SUPERUSER_PASSWORD=secret make serve"; \
		exit 2; \
	fi
	mkdir -p server/logs
	$(EVENNIA) migrate
	$(EVENNIA) start
	@echo "Connect with a MUD client to localhost:4000 or a browser to http://localhost:4001"
	@echo "The demo world (built on first start) has the assistant Aria in the Reading Room."
	@echo "'make stop' stops the server."

stop: $(STAMP)
	$(EVENNIA) stop

bench: $(STAMP)
	$(PY) -m bench

format: $(STAMP)
	$(PY) -m pip install --quiet -e ".[dev]"
	$(PY) -m black contrib tests world typeclasses commands server

clean:
	rm -rf .demo server/logs/*.log
