from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields
from typing import Any


async def fill_reminders(apps: Any, schema_editor: Any) -> None:
    """Running games keep their due reminder: computed once from the stored state."""
    from core.game.rules.owing import reminder_at
    from core.game.state import GameState
    from core.storage import statements

    conn = schema_editor.client
    rows = await conn.execute_query_dict(
        'SELECT "id", "state" FROM "game" WHERE "active" AND "deadline" IS NOT NULL')
    for row in rows:
        due = reminder_at(GameState.model_validate_json(row["state"]))
        if due is not None:
            await statements.update_game(conn, int(row["id"]), {"reminder_at": due})


class Migration(migrations.Migration):
    dependencies = [('models', '0002_live_messages')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Game',
            name='reminder_at',
            field=fields.DatetimeField(null=True, auto_now=False, auto_now_add=False),
        ),
        ops.RunPython(fill_reminders, ops.RunPython.noop),
    ]
