"""
A throwaway PostgreSQL server, for the tests and the benchmarks on PostgreSQL.

It runs PostgreSQL's own programs (`initdb`, `pg_ctl`): a new cluster in a temporary folder,
listening on a free port on 127.0.0.1 only, with trust authentication, gone when it stops.
The programs are looked for in `POSTGRES_BINDIR`, then on PATH, then where Debian and Ubuntu
install them (`/usr/lib/postgresql/<version>/bin`, package `postgresql`).

PostgreSQL refuses to run as root. Run as root (as in CI), the server runs as the `postgres`
user (which the Debian package creates), or as `nobody` when there is none, through `runuser`.
pytest-postgresql cannot do that (dbfixtures/pytest-postgresql#341), hence this module.

From the command line:

    python -m tests.postgres_server check [--required]   # can one start here? says how if not
    python -m tests.postgres_server run -- COMMAND ...   # COMMAND with a fresh database

`run` exports `AI_ASSISTANT_DEMO_DATABASE_URL` to the command, which the demo game's settings
(and so `make bench`) honour. Nothing here is needed by the contrib itself.

"""

import argparse
import atexit
import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

# the environment variable the demo game's settings read (server/conf/settings.py)
DATABASE_URL_VARIABLE = "AI_ASSISTANT_DEMO_DATABASE_URL"
SUPERUSER = "postgres"
HOW_TO_ENABLE = (
    "To run them, install PostgreSQL's server programs (Debian/Ubuntu: apt-get install "
    "postgresql; macOS: brew install postgresql) or point POSTGRES_BINDIR at the folder that "
    "holds initdb and pg_ctl."
)
# for tests only: durability is of no use in a cluster deleted at the end of the run
FAST_UNSAFE = ("-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off")


class PostgresUnavailable(RuntimeError):
    """PostgreSQL's server programs are missing, or the server did not start."""


def find_bindir() -> Path:
    """The folder holding `initdb` and `pg_ctl`.

    Raises:
        PostgresUnavailable: When none is found.

    """
    candidates = []
    if os.environ.get("POSTGRES_BINDIR"):
        candidates.append(os.environ["POSTGRES_BINDIR"])
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(os.path.dirname(os.path.realpath(on_path)))
    # Debian keeps the server programs off PATH; the newest version first
    versions = glob.glob("/usr/lib/postgresql/*/bin")
    candidates += sorted(versions, key=lambda path: int(Path(path).parent.name), reverse=True)
    for folder in candidates:
        if all(os.access(os.path.join(folder, name), os.X_OK) for name in ("initdb", "pg_ctl")):
            return Path(folder)
    raise PostgresUnavailable(f"PostgreSQL's initdb and pg_ctl were not found. {HOW_TO_ENABLE}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _server_user() -> str | None:
    """Who runs the server: None for the current user, unless that is root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    raise PostgresUnavailable("Running as root and no unprivileged user to run PostgreSQL as")


class TemporaryPostgres:
    """A PostgreSQL cluster of its own, on 127.0.0.1, deleted when stopped.

    Args:
        fast_unsafe (bool): Turn off durability (fsync and the like), for tests. The
            benchmarks keep PostgreSQL's defaults, as a game's server would.

    """

    def __init__(self, fast_unsafe: bool = False):
        self.bindir = find_bindir()
        self.fast_unsafe = fast_unsafe
        self.user = _server_user()
        self.folder: Path | None = None
        self.port: int | None = None

    @property
    def version(self) -> str:
        done = subprocess.run(
            [self.bindir / "pg_ctl", "--version"], capture_output=True, text=True, check=True
        )
        # "pg_ctl (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
        return done.stdout.split("(PostgreSQL)", 1)[-1].split()[0]

    def _command(self, *args: str | Path) -> list[str]:
        command = [str(arg) for arg in args]
        return ["runuser", "-u", self.user, "--", *command] if self.user else command

    def _run(self, *args: str | Path, timeout: float = 120) -> None:
        command = self._command(*args)
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise PostgresUnavailable(
                f"{' '.join(command)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
                + self._log_tail()
            )

    def _log_tail(self) -> str:
        log = self.folder / "server.log" if self.folder else None
        if log is None or not log.exists():
            return ""
        return f"\nserver log:\n{log.read_text()[-2000:]}"

    def start(self) -> "TemporaryPostgres":
        self.folder = Path(tempfile.mkdtemp(prefix="ai-assistant-postgres-"))
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        atexit.register(self.stop)
        return self

    def _start(self) -> None:
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)
        data = self.folder / "data"
        self._run(
            self.bindir / "initdb",
            *("--pgdata", data, "--username", SUPERUSER, "--auth", "trust"),
            *("--encoding", "UTF8", "--no-locale", "--no-sync"),
        )
        options = ["-c listen_addresses=127.0.0.1", f"-k {self.folder}"]
        if self.fast_unsafe:
            options += FAST_UNSAFE
        for attempt in range(3):
            # the free port may be taken between choosing and binding it: choose again
            self.port = _free_port()
            try:
                self._run(
                    self.bindir / "pg_ctl",
                    *("start", "--pgdata", data, "--log", self.folder / "server.log"),
                    *("--wait", "--timeout", "60", "-o", " ".join([f"-p {self.port}", *options])),
                )
                return
            except PostgresUnavailable:
                if attempt == 2:
                    raise

    def stop(self) -> None:
        """Stop the server and delete its folder. Safe to call twice."""
        if self.folder is None:
            return
        folder, self.folder = self.folder, None
        try:
            if (folder / "data" / "postmaster.pid").exists():
                stop = ("stop", "--pgdata", folder / "data", "--mode", "fast", "--wait")
                subprocess.run(self._command(self.bindir / "pg_ctl", *stop), capture_output=True)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def __enter__(self) -> "TemporaryPostgres":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def create_database(self, name: str) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))

    def url(self, database: str) -> str:
        return f"postgres://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def django_database(self, database: str) -> dict:
        """A `DATABASES` entry for Django (the test runner creates `test_<database>`)."""
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": database,
            "USER": SUPERUSER,
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
        }


_shared: TemporaryPostgres | None = None


def shared_server() -> TemporaryPostgres:
    """One test server per process, started on first use and stopped at exit."""
    global _shared
    if _shared is None:
        _shared = TemporaryPostgres(fast_unsafe=True).start()
    return _shared


def _check(required: bool) -> int:
    try:
        bindir = find_bindir()
    except PostgresUnavailable as err:
        kind = "FAILED" if required else "SKIPPED"
        print(f"\n*** PostgreSQL tests {kind}: {err}\n", file=sys.stderr)
        return 1 if required else 3
    print(f"PostgreSQL: the server programs in {bindir}", file=sys.stderr)
    return 0


def _run_with_database(command: list[str]) -> int:
    with TemporaryPostgres() as server:
        server.create_database("evennia")
        print(
            f"PostgreSQL {server.version} on 127.0.0.1:{server.port} (fresh database 'evennia')",
            file=sys.stderr,
        )
        env = {**os.environ, DATABASE_URL_VARIABLE: server.url("evennia")}
        return subprocess.run(command, env=env).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.postgres_server")
    commands = parser.add_subparsers(dest="action", required=True)
    check = commands.add_parser("check", help="exit 0 if PostgreSQL can be run, else say how")
    check.add_argument("--required", action="store_true", help="missing is an error (exit 1)")
    run = commands.add_parser("run", help="run a command with a fresh PostgreSQL database")
    run.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.action == "check":
        return _check(args.required)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("run: no command given")
    return _run_with_database(command)


if __name__ == "__main__":
    sys.exit(main())
