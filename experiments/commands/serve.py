"""``mus serve``: play, replay and inspect Mus in the browser (:mod:`experiments.web`; the ``web`` extra)."""

from __future__ import annotations

import sys
from types import FrameType

import uvicorn
from starlette.applications import Starlette

from experiments.commands.options import ArgumentParser, check_agent_specs, int_in
from experiments.web.app import create_app

__all__ = ["main", "run_server", "LOCAL_HOSTS"]

#: Hosts that only this machine reaches.
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def main(argv: list[str] | None = None) -> None:
    """Run ``mus serve`` with ``argv`` (default: the process's arguments)."""
    p = ArgumentParser(prog="mus serve",
                       description="Start a local web server: play against three bots at a drawn table, or open a "
                                   "table for people and bots (one private link per person's seat), replay "
                                   "game records step by step with what the agents thought, and open tournament "
                                   "and training run folders. Games played in the browser are saved as records "
                                   "(RECORDS/games) after every move and continue after a restart.")
    p.add_argument("--records", default="runs/serve",
                   help="folder of game records to replay; browser games are saved in its games/ subfolder")
    p.add_argument("--runs", default="runs", help="folder of tournament, training and exploit runs to show (their "
                                                  "*.pt policies may also sit at the table)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (another than 127.0.0.1 opens the "
                                                       "server to the network)")
    p.add_argument("--port", type=int_in(1, 65535), default=8000, help="port to listen on")
    p.add_argument("--agent", action="append", default=[], metavar="SPEC",
                   help="an extra agent spec the pages may seat (any make_agent spec: a *.pt, a *.zip, "
                        "my_bot.py:MyBot); repeat for several")
    p.add_argument("--bots", default="ppo,ppo,ppo", help="the bots a new game offers first: partner, rival, rival")
    args = p.parse_args(argv)
    check_agent_specs(p, "--agent", args.agent)
    bots = tuple(b.strip() for b in args.bots.split(","))
    if len(bots) != 3:
        p.error(f"argument --bots: give three specs (partner, rival, rival), got {args.bots!r}")
    if args.host not in LOCAL_HOSTS:
        print(f"mus serve: warning: listening on {args.host}: anybody who reaches this machine can start games and "
              "tables, replay the finished records, read the runs and seat their policies; a game in progress "
              "opens only by its own link. Use --host 127.0.0.1 to keep it local", file=sys.stderr)
    app = create_app(records=args.records, runs=args.runs, agents=tuple(args.agent), default_bots=bots)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    for link in app.state.old_games:                    # keyed now: their only link is here, on the console
        print(f"mus serve: a game in progress saved before games had keys continues at "
              f"http://{shown}:{args.port}{link}", flush=True)
    print(f"mus serve: open http://{shown}:{args.port}/ (records: {args.records}, runs: {args.runs}; Ctrl-C stops)",
          flush=True)
    run_server(app, host=args.host, port=args.port)


def run_server(app: Starlette, host: str, port: int) -> None:
    """Serve ``app`` with uvicorn until Ctrl-C. The shared tables' event streams never end by themselves: the stop
    ends them first (``app.state.listeners.close``), so it does not wait for the pages to go."""

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            app.state.listeners.close()
            super().handle_exit(sig, frame)

    Server(uvicorn.Config(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=5)).run()


if __name__ == "__main__":
    main()
