from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0007_server_overwrites')]

    initial = False

    operations = [
        ops.CreateModel(
            name='Achievement',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('guild_id', fields.BigIntField()),
                ('user_id', fields.BigIntField()),
                ('mark', fields.CharField(max_length=32)),
                ('game_id', fields.IntField(null=True)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
            ],
            options={'table': 'achievement', 'app': 'models', 'unique_together': (('guild_id', 'user_id', 'mark'),), 'pk_attr': 'id', 'table_description': 'An achievement a member earned in a guild (core/sight/achievements.py): the first'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='Rating',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('guild_id', fields.BigIntField()),
                ('user_id', fields.BigIntField()),
                ('mu', fields.FloatField()),
                ('sigma', fields.FloatField()),
                ('rated', fields.IntField(default=0)),
                ('updated_at', fields.DatetimeField(auto_now=True, auto_now_add=False)),
            ],
            options={'table': 'rating', 'app': 'models', 'unique_together': (('guild_id', 'user_id'),), 'pk_attr': 'id', 'table_description': "A member's rating in a guild (core/sight/ratings.py), moved when a game ends."},
            bases=['Model'],
        ),
    ]
