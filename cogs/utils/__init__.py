"""Discord helpers the cogs, the delivery and bot.py share; they never import bot.py
or a cog extension at run time."""
