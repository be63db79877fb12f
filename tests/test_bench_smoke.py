"""The benchmark in smoke mode (tiny sizes): every section still runs end to end.

No timing is asserted; the figures of a smoke run mean nothing. The full run is
`python -m bench.run` (README, Performance). The run is tested in its two halves
(`--older`, `--issue30`), each well within the suite's per-test timeout on a loaded
machine.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from bench.run import SMOKE, main


def _smoke(tmp_path: Path, capsys: pytest.CaptureFixture[str], half: str
           ) -> tuple[str, dict[str, Any]]:
    out_file = tmp_path / "bench.json"
    assert main(["--smoke", half, "--json", str(out_file), "--workdir",
                 str(tmp_path / "w")]) == 0
    return capsys.readouterr().out, json.loads(out_file.read_text())


@pytest.mark.timeout(900)  # subprocesses and real waits: minutes on a loaded machine
def test_bench_smoke_older_sections(tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    printed, out = _smoke(tmp_path, capsys, "--older")

    for section in ("ENGINE", "DISCORD", "REST", "MEMORY", "RESTART", "ARCHIVE", "TARGETS"):
        assert section in printed
    assert [g["players"] for g in out["engine_games"]] == SMOKE.engine_players
    assert all(g["games"] >= 1 and g["games_per_s"] > 0 for g in out["engine_games"])
    assert [r["players"] for r in out["engine_night"]["sizes"]] == SMOKE.night_players

    # every measured command was answered through the harness, and the rules accepted them
    scenarios = out["discord"]["scenarios"]
    assert [s["games"] for s in scenarios] == SMOKE.e2e_games
    for s, size in zip(scenarios, SMOKE.e2e_games, strict=True):
        assert s["commands"] == SMOKE.e2e_samples[size]
        assert s["refused"] == 0
        for kind in ("vote", "night", "role"):
            assert s[kind]["n"] >= 1 and math.isfinite(s[kind]["p99_ms"])
    assert out["discord"]["saturated"]["commands"] == SMOKE.saturated_samples
    assert out["floor"]["commits"] == SMOKE.floor_commits
    assert out["floor_ratio"]["ratio"] > 0
    # the GameService's own durable stream, over the floor measured beside it
    stream = out["stream"]
    assert stream["commands"] + stream["refused"] == SMOKE.stream_samples
    assert stream["commands"] > 0 and stream["ratio"] > 0
    assert "one process's durable stream, the service alone" in printed

    # K shard processes on one SQLite file: each ran its own games, the loops overlapped
    many = out["processes"]
    assert many["processes"] == SMOKE.processes == len(many["per_process"])
    assert sorted(p["shard"] for p in many["per_process"]) == list(range(SMOKE.processes))
    for p in many["per_process"]:
        assert p["games"] == SMOKE.process_games and p["refused"] == 0
        assert p["commands"] == SMOKE.process_samples
    assert many["commands"] == SMOKE.processes * SMOKE.process_samples == many["all"]["n"]
    # (whether 6 commands a child overlap in time depends on the machine's load: not
    # asserted, as no timing is)
    assert math.isfinite(many["overlap_s"]) and many["throughput_per_s"] > 0
    assert out["floor_ratio"]["processes_ratio"] > 0
    assert "processes (shards) on one SQLite file" in printed

    # a whole game was played through Discord and its calls counted against the bound
    rest = out["rest"]
    assert rest["winners"] or rest["draw"]
    assert rest["responses"] >= rest["interactions"]
    assert rest["lower_bound"] == rest["interactions"] + 1 + rest["public_actions"] \
        + rest["phases"] + 1 + rest["teams"] + 1 + rest["places_bound"] \
        + rest["tally_entries"]
    assert rest["places_bound"] > 0 and rest["places_calls"] >= rest["places_bound"]
    # one live count per day with a vote, and day 0's check-in list
    assert rest["tally_posts"] == rest["voting_days"]
    assert rest["dm_channels_opened"] == 0
    # the busiest channel's messages per 5 s: counted from the messages the fake accepted
    peak = rest["channel_peak"]
    assert peak["messages"] >= rest["phases"] and 1 <= peak["peak"] <= peak["messages"]
    assert "busiest channel:" in printed

    # the restarted bot found every live game and re-armed every deadline
    assert out["restart"]["games"] == SMOKE.live_games
    assert out["restart"]["deadlines"] == SMOKE.live_games
    assert out["memory"]["games"] == SMOKE.live_games
    assert set(out["targets"]) == {"p99_ms_at_max_games", "throughput_over_floor",
                                   "service_stream_over_floor",
                                   "rest_over_bound", "night_growth_linear", "archive_build_s",
                                   "balance_estimate_s", "estimate_command_p99_ms",
                                   "scale_p99_ms",
                                   "scale_kib_per_game", "scale_restart_ready_s"}
    assert all({"value", "target", "met"} <= set(t) for t in out["targets"].values())
    assert "TARGETS (smoke mode" in printed
    assert "Wall time of this smoke run" in printed
    # the estimates under load: every /game setup answered, both streams measured
    est = out["estimates"]
    assert sum(est["asked"].values()) == SMOKE.estimates_count and est["asked"]["now"] >= 1
    assert est["with"]["n"] == est["without"]["n"] == SMOKE.estimates_samples
    assert "ESTIMATES UNDER LOAD" in printed
    # the archive of a short scripted game was built, sized and timed
    arc = out["archive"]
    assert arc["days"] == SMOKE.archive_days and arc["players"] == SMOKE.archive_players
    assert 0 < arc["html_bytes"] < 1_000_000 and arc["total_s"] > 0 and arc["samples"] > 0

    # many games in one process: the copies of the built guild play like the built games
    scale = out["scale"]
    assert scale["games"] == SMOKE.scale_games and scale["templates"] == SMOKE.scale_templates
    assert scale["latency"]["commands"] == SMOKE.scale_samples
    assert scale["latency"]["refused"] == 0
    assert scale["health"]["failed"] == scale["health"]["parked"] == 0
    assert scale["health"]["channels_created"] == 0
    assert scale["restart"]["games"] == scale["restart"]["deadlines"] == SMOKE.scale_games
    assert "SCALE" in printed


def test_scaleout_window_is_one_global_limit(tmp_path: Path) -> None:
    """Two processes' fakes (two limiters on one mapped window) share Discord's 50/s:
    the 51st request in the second, whichever fake it reaches, is a global 429."""
    from bench.scaleout import SharedRateLimits, make_window, read_window

    window = tmp_path / "window"
    make_window(window)
    one, two = SharedRateLimits(path=window), SharedRateLimits(path=window)
    route = "GET /channels/{channel_id}"
    for i in range(25):
        assert one.check("GET", route, {"channel_id": i}, None, counts_globally=True)[0] \
            is None
        assert two.check("GET", route, {"channel_id": 100 + i}, None,
                         counts_globally=True)[0] is None
    refused, _ = two.check("GET", route, {"channel_id": 999}, None, counts_globally=True)
    assert refused is not None and refused[0]["global"] is True
    assert one.limited == 0 and two.limited == 1 and one.counted == two.counted == 25
    assert read_window(window) == {"counted": 50, "global_429": 1}
    # a request that does not count globally (an interaction callback) is not refused
    assert one.check("GET", route, {"channel_id": 1000}, None,
                     counts_globally=False)[0] is None


@pytest.mark.timeout(900)
def test_bench_smoke_issue30(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    printed, out = _smoke(tmp_path, capsys, "--issue30")
    assert set(out["targets"]) == {"rest_per_command", "rest_per_game_night_end",
                                   "rest_per_game_lynch", "storm_announce_s", "storm_all_s",
                                   "storm_429", "durable_p99_ms", "outbox_lag_p99_s",
                                   "memory_kib_per_game", "stream_over_same_work_floor",
                                   "scaleout_games", "scaleout_429", "busiest_channel_per_5s"}
    assert all({"value", "target", "met"} <= set(t) for t in out["targets"].values())
    assert "strict bound" in printed and "TARGETS (smoke mode" in printed
    stream = out["stream"]
    # issue 30's real-time rows: steady play counted, the storm fired real phase changes
    run = out["targets_run"]
    assert run["steady"]["commands"] > 0 and run["steady"]["durable"] > 0
    assert run["storm"]["announced_games"] == run["storm"]["games"] == SMOKE.targets.storm_games
    assert run["storm"]["rest_night_end"] > 0 and run["storm"]["rest_lynch"] > 0
    assert run["storm"]["lynched_per_day_end"] >= 1
    assert stream["same_work"]["rows_per_command"]["event_log"] > 0
    # the storm's busiest channel, from the messages the fake accepted
    peak = run["storm"]["channel_peak"]
    assert 1 <= peak["peak"] <= peak["messages"]

    # K shard processes on PostgreSQL, one global limit (when a server is there)
    so = out["scaleout"]
    if "missing" not in so:
        assert so["processes"] == SMOKE.scaleout_processes == len(so["per_process"])
        assert so["games"] == SMOKE.scaleout_processes * SMOKE.scaleout_games
        assert so["commands"] > 0 and so["durable"] > 0
        # every request a child counted went through the one shared window (which also
        # saw what the children sent after their count, while shutting down)
        assert so["window_counted"] >= so["rest"] > 0
        assert so["limited"] == 0 and so["undelivered"] == 0
        assert out["targets"]["scaleout_429"]["value"] == 0
        assert "scale-out:" in printed
    else:
        assert "scale-out: not measured" in printed
    assert "Wall time of this smoke run" in printed
    # memory: a fresh process held every live state; discord.py's guild cache was sized
    mem = run["memory"]
    assert mem["fresh_games"] == mem["games"] and mem["guild_cache_kib_per_game"] > 0
