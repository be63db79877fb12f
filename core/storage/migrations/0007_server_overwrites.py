from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0006_outbox_progress')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Game',
            name='server_overwrites',
            field=fields.TextField(null=True, default='{}', unique=False),
        ),
    ]
