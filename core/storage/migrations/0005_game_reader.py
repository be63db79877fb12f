from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.fields.base import OnDelete
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0004_drop_guild_settings')]

    initial = False

    operations = [
        ops.CreateModel(
            name='Reader',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('game', fields.ForeignKeyField('models.Game', source_field='game_id', db_constraint=True, to_field='id', related_name='readers', on_delete=OnDelete.CASCADE)),
                ('user_id', fields.BigIntField()),
                ('language', fields.CharField(null=True, max_length=16)),
                ('desk_pings', fields.CharField(null=True, max_length=200)),
            ],
            options={'table': 'game_reader', 'app': 'models', 'unique_together': (('game', 'user_id'),), 'pk_attr': 'id', 'table_description': 'What one reader of a game chose for himself, kept beside the game (not in its'},
            bases=['Model'],
        ),
    ]
