"""The Discord half of delivery, one package (issue 40): what the outbox's rows become on
Discord, and the request budget they spend.

- `catalogue`: each outbox kind's lane and deliverer (core's half: core/storage/kinds.py)
- `deliverer`: `Delivery`, the batch hook and the game channel's and team channels' posts
- `places`, `desk`, `tally`, `silence`, `pictures`: one destination's deliverer each (a
  seat's place and the ping role, the master's desk, the live count, the dead's silence,
  an announcement's files)
- `gathering`: which desk and team lines wait for their window
- `overwrites`: the one writer of channel permission overwrites
- `posting`: the one poster (Discord's limits, nonces, explicit mentions)
- `budget`, `ratelimits`, `sharedbudget`: Discord's request budget, its route keys, and
  its share across processes
- `outbox`: the extension that wires the worker, the budget and the deliverer

docs/delivery.md reads them in order.
"""
