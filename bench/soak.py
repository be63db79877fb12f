"""The soak (simulated games played through GameService) moved to core.storage.soak, so
that `mafia-bot simulate --db` runs from an installed wheel, which does not ship bench/.
Benchmarks and tests may keep importing it from here."""

from core.storage.soak import (
    SIM_GUILD,
    SoakReport,
    StoredTable,
    create_sim_game,
    play_stored,
    simulate_stored,
)

__all__ = ["SIM_GUILD", "SoakReport", "StoredTable", "create_sim_game", "play_stored",
           "simulate_stored"]
