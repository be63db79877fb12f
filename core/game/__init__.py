"""The game: commands, state, events, refusals, roles and teams, who may act (access,
guards), the engine and the rules (rules/, one file per part of RULES.md). Pure
and deterministic from the game's seed; imports only core.text."""
