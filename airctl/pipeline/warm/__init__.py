"""airctl's one fork server: a warm process that has imported torch and TorchAir forks each command
(the console's warm commands, :mod:`airctl.cli.warm`) or each rank (:mod:`airctl.pipeline.ranks.forks`)
fresh, with its caller's stdio, folder, environment and signals (docs/warm.md).

``client`` hands a command over and stands in for it; ``server`` is the loop; ``child`` what a
forked child takes and gives up; ``place`` the private folder and the install's key; ``daemon``
one warm process's life in that folder. ``client`` imports only the standard library: torchrun
runs it as a file for every rank."""
