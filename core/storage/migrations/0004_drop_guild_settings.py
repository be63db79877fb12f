from tortoise import migrations
from tortoise.migrations import operations as ops

class Migration(migrations.Migration):
    dependencies = [('models', '0003_reminder_at')]

    initial = False

    operations = [
        ops.DeleteModel(name='GuildSettings'),
    ]
