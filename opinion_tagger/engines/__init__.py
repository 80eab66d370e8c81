"""Engines that tag large inputs beyond one process.

``local``: ``opinion-tagger tag`` on this machine, in one process or a worker process per core.
``partitions``: cutting inputs into partitions, tagging one partition into one
output file (atomic, with a ``.done.json`` record) and restarting; no engine.
``ray_engine``: runs the partitions on a Ray cluster (Ray Data, a pool of actors
that each load the model once).  Nothing here is imported by the local engine
(``opinion-tagger tag`` without ``--engine``).
"""
