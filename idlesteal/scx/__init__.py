"""sched_ext schedulers: scx_idlesteal (own.py) and the published peers."""
