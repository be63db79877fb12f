from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    initial = True

    operations = [
        ops.CreateModel(
            name='Game',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('guild_id', fields.BigIntField(db_index=True)),
                ('channel_id', fields.BigIntField(db_index=True)),
                ('active_channel_id', fields.BigIntField(null=True, unique=True)),
                ('master_id', fields.BigIntField()),
                ('title', fields.CharField(max_length=200)),
                ('plot', fields.TextField(default='', unique=False)),
                ('options', fields.TextField(unique=False)),
                ('seed', fields.BigIntField()),
                ('state', fields.TextField(unique=False)),
                ('phase', fields.CharField(db_index=True, max_length=16)),
                ('active', fields.BooleanField(default=True, db_index=True)),
                ('deadline', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('seq', fields.IntField(default=0)),
                ('outbox_seq', fields.IntField(default=0)),
                ('language', fields.CharField(default='ru', max_length=16)),
                ('signup_message_id', fields.BigIntField(null=True)),
                ('category_id', fields.BigIntField(null=True)),
                ('private_channels', fields.TextField(default='{}', unique=False)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
                ('updated_at', fields.DatetimeField(auto_now=True, auto_now_add=False)),
            ],
            options={'table': 'game', 'app': 'models', 'pk_attr': 'id', 'table_description': 'One game: its current state (JSON text) plus the columns the bot queries by.'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='EventLog',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('game', fields.ForeignKeyField('models.Game', source_field='game_id', db_constraint=True, to_field='id', related_name='log', on_delete=OnDelete.CASCADE)),
                ('seq', fields.IntField()),
                ('command', fields.TextField(unique=False)),
                ('events', fields.TextField(unique=False)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
            ],
            options={'table': 'event_log', 'app': 'models', 'unique_together': (('game', 'seq'),), 'pk_attr': 'id', 'table_description': 'Append-only: every accepted command (verbatim) and the events it produced.'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='GamePlayer',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('game', fields.ForeignKeyField('models.Game', source_field='game_id', db_constraint=True, to_field='id', related_name='seats', on_delete=OnDelete.CASCADE)),
                ('guild_id', fields.BigIntField()),
                ('user_id', fields.BigIntField()),
                ('seat', fields.IntField()),
            ],
            options={'table': 'game_player', 'app': 'models', 'unique_together': (('game', 'user_id'),), 'indexes': [Index(fields=['guild_id', 'user_id']), Index(fields=['user_id'])], 'pk_attr': 'id', 'table_description': 'Who sits in which game: answers "which games is this user in" by index.'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='GuildSettings',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('guild_id', fields.BigIntField(unique=True)),
                ('language', fields.CharField(default='ru', max_length=16)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
                ('updated_at', fields.DatetimeField(auto_now=True, auto_now_add=False)),
            ],
            options={'table': 'guild_settings', 'app': 'models', 'pk_attr': 'id', 'table_description': 'Per-guild preferences the bot keeps between games.'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='Ledger',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('guild_id', fields.BigIntField()),
                ('user_id', fields.BigIntField()),
                ('game', fields.ForeignKeyField('models.Game', source_field='game_id', null=True, db_constraint=True, to_field='id', related_name='ledger', on_delete=OnDelete.SET_NULL)),
                ('amount', fields.BigIntField()),
                ('reason', fields.CharField(max_length=64)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
            ],
            options={'table': 'ledger', 'app': 'models', 'indexes': [Index(fields=['guild_id', 'user_id'])], 'pk_attr': 'id', 'table_description': 'Currency module: every balance change with its reason (append-only).'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='Outbox',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('game', fields.ForeignKeyField('models.Game', source_field='game_id', db_constraint=True, to_field='id', related_name='outbox', on_delete=OnDelete.CASCADE)),
                ('ordinal', fields.IntField()),
                ('kind', fields.CharField(max_length=64)),
                ('payload', fields.TextField(unique=False)),
                ('status', fields.CharField(default='pending', max_length=16)),
                ('attempts', fields.IntField(default=0)),
                ('next_attempt_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('last_error', fields.TextField(null=True, unique=False)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
                ('delivered_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'outbox', 'app': 'models', 'unique_together': (('game', 'ordinal'),), 'indexes': [Index(fields=['status', 'next_attempt_at'])], 'pk_attr': 'id', 'table_description': 'Messages to deliver to Discord, written in the same transaction as the change.'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='UserStats',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('guild_id', fields.BigIntField()),
                ('user_id', fields.BigIntField()),
                ('games', fields.IntField(default=0)),
                ('wins', fields.IntField(default=0)),
                ('wins_by_side', fields.TextField(default='{}', unique=False)),
                ('updated_at', fields.DatetimeField(auto_now=True, auto_now_add=False)),
            ],
            options={'table': 'user_stats', 'app': 'models', 'unique_together': (('guild_id', 'user_id'),), 'pk_attr': 'id', 'table_description': 'Finished games and wins per member, updated when a game ends.'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='Wallet',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('guild_id', fields.BigIntField()),
                ('user_id', fields.BigIntField()),
                ('balance', fields.BigIntField(default=0)),
                ('updated_at', fields.DatetimeField(auto_now=True, auto_now_add=False)),
            ],
            options={'table': 'wallet', 'app': 'models', 'unique_together': (('guild_id', 'user_id'),), 'pk_attr': 'id', 'table_description': 'Currency module: one balance per member per guild.'},
            bases=['Model'],
        ),
    ]
