"""What a reader may see, as pure functions of the game: one person's view
(visibility, views, vocabulary), what he may do now (legal, guide), the master's
desk, the private places, the live count (tallies), the vote timeline, events as
text (narrate) and the after-game record (record). Reads core.game, never changes it."""
