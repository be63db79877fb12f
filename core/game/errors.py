"""Typed refusals: every rejected command raises one, the state stays as it was.

`code` is stable (it is the message-catalogue key suffix `error.<code>`);
`params` carry what a localized message needs.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Why a command was refused: the message-catalogue key `error.<value>`, so a value
    never changes once released."""

    ALREADY_CHECKED_IN = "already_checked_in"
    ALREADY_COVERED = "already_covered"
    ALREADY_EXCLUDED = "already_excluded"
    ALREADY_JOINED = "already_joined"
    ALREADY_SIGNED_UP = "already_signed_up"
    ALREADY_SPECTATING = "already_spectating"
    ALREADY_STARTED = "already_started"
    ALREADY_THANKED = "already_thanked"
    ALREADY_VOTED = "already_voted"
    ALREADY_VOTED_FOR = "already_voted_for"
    AWAY_UNTIL_PAST = "away_until_past"
    BAD_OPTION = "bad_option"
    BALANCE_LOPSIDED = "balance_lopsided"
    BALANCE_RUNNING = "balance_running"
    BLANK_TEXT = "blank_text"
    BOT_CANNOT_PLAY = "bot_cannot_play"
    BOT_MISSING_PERMISSIONS = "bot_missing_permissions"
    CHANNEL_HAS_GAME = "channel_has_game"
    CHECKIN_DAY_ZERO_ONLY = "checkin_day_zero_only"
    CONDITION_DAY_ONLY = "condition_day_only"
    CREATE_HERE_GAME_CHANNEL = "create_here_game_channel"
    CREATE_HERE_NOT_TEXT = "create_here_not_text"
    DEADLINE_NOT_REACHED = "deadline_not_reached"
    DESTRUCTION_ROLE = "destruction_role"
    DM_WHICH_GAME = "dm_which_game"
    FALLBACK_SAME = "fallback_same"
    GAME_FULL = "game_full"
    GAME_NOT_FOUND = "game_not_found"
    GAME_OVER = "game_over"
    HELP_UNKNOWN_TOPIC = "help_unknown_topic"
    HOST_CANNOT_PLAY = "host_cannot_play"
    HOST_CANNOT_SIT = "host_cannot_sit"
    HELPLESS = "helpless"
    HELPLESS_NIGHT = "helpless_night"
    INTERNAL_ERROR = "internal_error"
    MASTER_CANNOT_PLAY = "master_cannot_play"
    MENU_EXPIRED = "menu_expired"
    MODULE_OFF = "module_off"
    NO_GAME_FOR_YOU = "no_game_for_you"
    NO_GAME_HERE = "no_game_here"
    NO_MOVE_TONIGHT = "no_move_tonight"
    NO_NIGHT_ACTION = "no_night_action"
    NO_SELF_TARGET = "no_self_target"
    NO_SERGEANT = "no_sergeant"
    NO_TARGET_NEEDED = "no_target_needed"
    NO_VOTE_TO_WITHDRAW = "no_vote_to_withdraw"
    NOT_A_PLAYER = "not_a_player"
    NOT_A_PLAYER_TARGET = "not_a_player_target"
    NOT_ALLOWED = "not_allowed"
    NOT_ENOUGH_LIRA = "not_enough_lira"
    NOT_MASTER = "not_master"
    NOT_STARTED = "not_started"
    NOT_VOTING_TIME = "not_voting_time"
    NOT_YOUR_TURN = "not_your_turn"
    NOTHING_TO_REMIND = "nothing_to_remind"
    NOTHING_TO_REVEAL = "nothing_to_reveal"
    ONE_CONDITION = "one_condition"
    OWN_CLAN_TARGET = "own_clan_target"
    PHASE_ENDED = "phase_ended"
    PLAYER_CANNOT_MASTER = "player_cannot_master"
    POST_LIMIT = "post_limit"
    POST_TOO_SOON = "post_too_soon"
    PUBLIC_MOVES_OFF = "public_moves_off"
    REMINDER_NOT_DUE = "reminder_not_due"
    SEES_PLACES = "sees_places"
    SEES_PLACES_SIT = "sees_places_sit"
    SELF_ONLY = "self_only"
    SETUP_ALREADY_WON = "setup_already_won"
    SETUP_BAD_COUNT = "setup_bad_count"
    SETUP_CLAN_WITHOUT_MAFIOSO = "setup_clan_without_mafioso"
    SETUP_EMPTY = "setup_empty"
    SETUP_LOPSIDED = "setup_lopsided"
    SETUP_NEEDS_EXTRA_ROLES = "setup_needs_extra_roles"
    SETUP_NEEDS_INVESTIGATOR = "setup_needs_investigator"
    SETUP_NEEDS_ROLE = "setup_needs_role"
    SETUP_NO_MAFIA = "setup_no_mafia"
    SETUP_NOT_CLAN_ROLE = "setup_not_clan_role"
    SETUP_PLAYER_COUNT = "setup_player_count"
    SETUP_TOO_MANY_ROLES = "setup_too_many_roles"
    SETUP_UNIQUE_ROLE = "setup_unique_role"
    SETUP_UNKNOWN_ROLE = "setup_unknown_role"
    SETUP_UNREADABLE = "setup_unreadable"
    SHOP_NEEDS_CURRENCY = "shop_needs_currency"
    SHOUT_NEEDS_SHOP = "shout_needs_shop"
    SIGHT_UNCONFIRMED = "sight_unconfirmed"
    SIGNUP_CLOSED = "signup_closed"
    SPELL_LIMIT = "spell_limit"
    SPELL_TURN_LIMIT = "spell_turn_limit"
    SPENDING_CAP = "spending_cap"
    STANDBY_EMPTY = "standby_empty"
    STANDBY_FULL = "standby_full"
    TARGET_ALIVE = "target_alive"
    TARGET_DEAD = "target_dead"
    TARGET_NO_VOTE = "target_no_vote"
    THANK_AFTER_GAME = "thank_after_game"
    TOO_MANY_GAMES_GUILD = "too_many_games_guild"
    TOO_MANY_GAMES_MEMBER = "too_many_games_member"
    UNKNOWN_ITEM = "unknown_item"
    UNKNOWN_OPTION = "unknown_option"
    UNKNOWN_PLAYER = "unknown_player"
    UNKNOWN_PROTECTION = "unknown_protection"
    UNKNOWN_ROLE = "unknown_role"
    UNKNOWN_SPELL = "unknown_spell"
    VOTE_COOLDOWN = "vote_cooldown"
    VOTES_FINAL = "votes_final"
    WRONG_PHASE = "wrong_phase"
    WRONG_ROLE = "wrong_role"
    YOU_ARE_DEAD = "you_are_dead"
    MASTER_CANNOT_SPECTATE = "master_cannot_spectate"
    PLAYER_CANNOT_SPECTATE = "player_cannot_spectate"
    SPECTATOR_CANNOT_PLAY = "spectator_cannot_play"


class RuleError(Exception):
    """A command the rules (or the lobby) do not allow right now."""

    def __init__(self, code: ErrorCode, **params: Any) -> None:
        code = ErrorCode(code)  # a bare string from outside core/ must still be a known code
        super().__init__(code)
        self.code = code
        self.params: dict[str, Any] = params

    def __repr__(self) -> str:
        return f"RuleError({self.code.value!r}, {self.params!r})"


class SetupError(RuleError):
    """An impossible or unreadable role composition."""
